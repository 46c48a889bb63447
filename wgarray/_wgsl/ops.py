"""The WGSL lowering of every elementwise op, by compute tag (see ``types``).

``lower(op, arg, src_tags, out_tag)`` returns one WGSL expression over ``{a}``, ``{b}``,
``{c}`` (the operands), from the op's templates in its declaration (``wgarray/_ops.py``).
A template is looked up under the out tag (or the tag of the operand named by the op's
``lower_by``), then its family, then ``any``. Helper functions the expression calls
(``f64_exp``, ``ei64_mul``, ...) come from the snippet libraries and are found by name.
"""
from __future__ import annotations

import re

from .._ops import OPS
from . import complexmath, intmath, realmath, specialmath
from .specialmath import TABLE as _SPECIAL_TABLE
from .types import WGSL_TYPE

FAMILIES = {
    "b": ("b",),
    "i32": ("sint", "int", "num"), "i64": ("sint", "int", "num"),
    "u32": ("uint", "int", "num"), "u64": ("uint", "int", "num"),
    "ei64": ("eint",), "eu64": ("eint",),
    "f32": ("float", "num"), "f64": ("float", "num"),
    "c64": ("cplx",), "c128": ("cplx",),
}

ZERO = {"b": "false", "i32": "0i", "u32": "0u", "i64": "0li", "u64": "0lu", "ei64": "vec2<u32>(0u)",
        "eu64": "vec2<u32>(0u)", "f32": "0.0f", "f64": "f64(0.0)", "c64": "vec2<f32>(0.0f)",
        "c128": "vec2<f64>(f64(0.0))"}
ONE = {"b": "true", "i32": "1i", "u32": "1u", "i64": "1li", "u64": "1lu", "ei64": "vec2<u32>(1u, 0u)",
       "eu64": "vec2<u32>(1u, 0u)", "f32": "1.0f", "f64": "f64(1.0)", "c64": "vec2<f32>(1.0f, 0.0f)",
       "c128": "vec2<f64>(f64(1.0), f64(0.0))"}

# The lowering of each op: its declaration's templates (wgarray/_ops.py), and those of
# wgarray.special's ops (declared with their library).
TABLE: dict[str, dict[str, str]] = {name: op.lowering for name, op in OPS.items() if op.lowering}
TABLE.update(_SPECIAL_TABLE)
_LOWER_BY = {name: op.lower_by for name, op in OPS.items() if op.lower_by is not None}

# Every helper function an op's template may call, by name.
LIBRARY = {**realmath.LIBRARY, **intmath.LIBRARY, **complexmath.LIBRARY, **specialmath.LIBRARY}
_CALL = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]+)\s*\(")


class LoweringError(TypeError):
    pass


def _lookup(op: str, t: str) -> str:
    table = TABLE[op]
    for key in (t,) + FAMILIES[t] + ("any",):
        if key in table:
            return table[key]
    raise LoweringError(f"{op} has no WGSL lowering for {t}")


def lower(op: str, arg, src_tags: tuple[str, ...], out_tag: str) -> str:
    """The WGSL expression template of one op (operands as {a}, {b}, {c})."""
    if op == "cast":
        return cast(src_tags[0], out_tag)
    # Ops whose result type differs from their operands' are lowered by an operand's type.
    by = _LOWER_BY.get(op)
    t = out_tag if by is None else src_tags[by]
    return _lookup(op, t).replace("{T}", t).replace("{Z}", ZERO[t]).replace("{O}", ONE[t])


def cast(src: str, dst: str) -> str:
    """Conversion between compute tags, as NumPy's ``astype`` does it."""
    if src == dst:
        return "{a}"
    if src == "b":
        return f"select({ZERO[dst]}, {ONE[dst]}, {{a}})"
    if dst == "b":
        if src in ("ei64", "eu64"):
            return "any({a} != vec2<u32>(0u))"
        # float32 truth on the bits: nonzero (NaN and subnormals included) is true
        if src == "f32":
            return "((bitcast<u32>({a}) & 0x7fffffffu) != 0u)"
        if src == "c64":
            return "any((bitcast<vec2<u32>>({a}) & vec2<u32>(0x7fffffffu)) != vec2<u32>(0u))"
        return f"(!all({{a}} == {ZERO[src]}))" if src in ("c64", "c128") else f"(!({{a}} == {ZERO[src]}))"
    if src in ("c64", "c128"):
        if dst in ("c64", "c128"):
            if src != dst:  # per part, so that subnormal parts convert exactly
                part = cast(src.replace("c64", "f32").replace("c128", "f64"), "f64" if dst == "c128" else "f32")
                return f"{WGSL_TYPE[dst]}({part.replace('{a}', '{a}.x')}, {part.replace('{a}', '{a}.y')})"
            return f"{WGSL_TYPE[dst]}({{a}})"
        return cast(src.replace("c64", "f32").replace("c128", "f64"), dst).replace("{a}", "{a}.x")
    if dst in ("c64", "c128"):
        real = "f32" if dst == "c64" else "f64"
        inner = cast(src, real)
        return f"{WGSL_TYPE[dst]}({inner}, {ZERO[real]})"
    if src in ("ei64", "eu64") and dst in ("ei64", "eu64"):
        return "{a}"
    if src in ("ei64", "eu64"):
        if dst in ("i32", "u32"):
            return f"{dst}({{a}}.x)"
        return f"{src}_to_{dst}({{a}})"
    if dst in ("ei64", "eu64"):
        return f"{dst}_from_{src}({{a}})"
    if dst in ("i64", "u64") and src in ("f32", "f64"):
        return f"{dst}_from_{src}({{a}})"
    if (src, dst) in (("f32", "f64"), ("f64", "f32")):
        return f"{src}_to_{dst}({{a}})"
    if src in ("i64", "u64") and dst in ("f32", "f64"):
        return f"{src}_to_{dst}({{a}})"
    if src in ("i32", "u32") and dst in ("i64", "u64") and src[0] != dst[0]:
        # naga extends a 32-bit int by the destination's signedness; widen by the source's
        return f"{WGSL_TYPE[dst]}({'i64' if src == 'i32' else 'u64'}({{a}}))"
    return f"{WGSL_TYPE[dst]}({{a}})"


def helpers_used(code: str) -> list[str]:
    """Names of library snippets that ``code`` calls."""
    return [m for m in dict.fromkeys(_CALL.findall(code)) if m in LIBRARY]
