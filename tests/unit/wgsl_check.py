"""A structural check of WGSL text, without a device.

wgpu compiles a shader module only on a device, and naga's validator is not reachable
from Python without one, so this checks what a renderer most easily gets wrong: brackets
balance, every function is defined once, every call names a function of the text or a
WGSL builtin, bindings are distinct, and a kernel has its entry point.
"""
from __future__ import annotations

import re

# WGSL's built-in functions and the value constructors of its types.
BUILTINS = frozenset("""
abs acos acosh all any arrayLength asin asinh atan atan2 atanh ceil clamp cos cosh
countLeadingZeros countOneBits countTrailingZeros cross degrees determinant distance dot
exp exp2 extractBits faceForward firstLeadingBit firstTrailingBit floor fma fract frexp
insertBits inverseSqrt ldexp length log log2 max min mix modf normalize pow
quantizeToF16 radians reflect refract reverseBits round saturate select sign sin sinh
smoothstep sqrt step tan tanh transpose trunc bitcast
pack4x8snorm pack4x8unorm pack2x16snorm pack2x16unorm pack2x16float
unpack4x8snorm unpack4x8unorm unpack2x16snorm unpack2x16unorm unpack2x16float
atomicLoad atomicStore atomicAdd atomicSub atomicMax atomicMin atomicAnd atomicOr atomicXor
atomicExchange atomicCompareExchangeWeak
storageBarrier workgroupBarrier workgroupUniformLoad
subgroupAdd subgroupMul subgroupMax subgroupMin subgroupAnd subgroupOr subgroupXor
subgroupAll subgroupAny subgroupBallot subgroupBroadcast subgroupBroadcastFirst
subgroupElect subgroupExclusiveAdd subgroupExclusiveMul subgroupInclusiveAdd
subgroupInclusiveMul subgroupShuffle subgroupShuffleDown subgroupShuffleUp subgroupShuffleXor
bool i32 u32 f32 f16 f64 i64 u64 vec2 vec3 vec4 mat2x2 mat3x3 mat4x4 array
""".split())

# Words that a parenthesis follows without a call.
_KEYWORDS = frozenset("if for while switch return loop else case default let var const fn".split())

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# A callee, with optional template arguments (vec4<f32>(, array<vec2<u32>, 4>(...)).
_CALL = re.compile(r"(?<![@\w.])([A-Za-z_]\w*)\s*(?:<[^;{}()]*?>)?\s*\(")
_FN = re.compile(r"\bfn\s+([A-Za-z_]\w*)\s*\(")
_TYPE = re.compile(r"\b(?:struct|alias)\s+([A-Za-z_]\w*)")
_BINDING = re.compile(r"@group\((\d+)\)\s*@binding\((\d+)\)")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def strip_comments(text: str) -> str:
    return _COMMENT.sub(" ", text)


def defined_functions(text: str) -> list[str]:
    """The names after ``fn``, in order, repeats kept."""
    return _FN.findall(strip_comments(text))


def called_functions(text: str) -> set[str]:
    """Every name called in ``text`` that is not a WGSL builtin or keyword."""
    code = strip_comments(text)
    fn_heads = {m.start(1) for m in _FN.finditer(code)}
    return {m.group(1) for m in _CALL.finditer(code)
            if m.start(1) not in fn_heads and m.group(1) not in BUILTINS and m.group(1) not in _KEYWORDS}


def problems(text: str, kernel: bool = True) -> list[str]:
    """What is wrong with ``text`` (empty when nothing is found). ``kernel``: a whole
    shader, which needs an entry point; else a library fragment."""
    code = strip_comments(text)
    found = []
    stack = []
    for i, ch in enumerate(code):
        if ch in "([{":
            stack.append((ch, i))
        elif ch in ")]}":
            if not stack or stack[-1][0] != _PAIRS[ch]:
                line = code.count("\n", 0, i) + 1
                found.append(f"unbalanced {ch!r} at line {line}")
                break
            stack.pop()
    if stack and not found:
        found.append(f"unclosed {stack[-1][0]!r} at line {code.count(chr(10), 0, stack[-1][1]) + 1}")
    fns = defined_functions(code)
    twice = sorted({f for f in fns if fns.count(f) > 1})
    if twice:
        found.append(f"defined more than once: {', '.join(twice)}")
    known = set(fns) | set(_TYPE.findall(code))
    missing = sorted(called_functions(code) - known)
    if missing:
        found.append(f"called but not defined: {', '.join(missing)}")
    bindings = _BINDING.findall(code)
    if len(set(bindings)) != len(bindings):
        found.append(f"a binding declared twice: {bindings}")
    if kernel and not re.search(r"@compute\s+@workgroup_size\([^)]*\)\s*fn\s+\w+", code):
        found.append("no @compute entry point")
    return found


def assert_wgsl(text: str, kernel: bool = True, what: str = "") -> None:
    bad = problems(text, kernel)
    assert not bad, f"{what}: " + "; ".join(bad)
