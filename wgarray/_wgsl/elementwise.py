"""Render a fused elementwise kernel: a pure function from a spec to WGSL text.

Each invocation computes 4 consecutive output elements (C order), so that a 32-bit
output is one vec4 store and an 8- or 16-bit output owns whole u32 words: no two
invocations ever write the same word.

Input leaves come in four layout classes (part of the cache key, never sizes):
    'v'  contiguous 32-bit data at a 4-aligned offset: one vec4 load per invocation
    'c'  contiguous: element e is at offset + e
    's'  broadcast scalar (every stride 0): loaded once per invocation
    'g'  general strided: e is unravelled over the shape, address = offset + sum(i*stride)
    'ic' / 'ig'  an index leaf (no buffer): its value is the address itself, as u32

Parameters are u32 words at ``P`` (the same bytes as f64 at ``PD`` when the kernel has
f64 scalars): n, the shape, the scalar constants, a zero word, then each leaf's offset
and (for 'g') strides. ``param_words`` packs them in exactly that order.

Fusion must not change a result: shader compilers simplify float expressions as if
NaN and inf did not exist (``x - x`` to 0), re-associate (``(a + b) - a`` to ``b``) and
contract ``a * b + c`` into an FMA, none of which the same ops run one kernel at a time
could do. So every floating-point value that one op hands to another goes through
``launder``: its bits xor a zero read from ``P`` (a word the compiler cannot know),
which is the value itself at one integer op, and no float identity reaches across it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .._runtime.launch import Binding, Field, Group, Launch
from . import ops, snippets
from . import types as ty

WORKGROUP = 256
PER_THREAD = 4


@dataclass(frozen=True)
class ElementwiseSpec:
    ndim: int
    int64_native: bool
    bindings: tuple[tuple[str, bool], ...]  # per input buffer: (dtype name, bound as vec4)
    leaves: tuple[tuple[str, int], ...]  # per leaf: (layout class, binding index)
    consts: tuple[str, ...]  # dtype name of each scalar parameter
    instrs: tuple[tuple[str, str, object, tuple], ...]  # (op, out dtype, arg, operand refs)
    outputs: tuple[tuple[tuple, str], ...]  # (value ref, dtype name)
    fma_fused: bool = False  # the device's fma rounds once: cheaper exact f32 division

    # Operand refs: ('L', i) leaf i, ('K', i) constant i, ('I', i) instruction i.

    @property
    def name(self) -> str:
        return "ew_" + "_".join(op for op, *_ in self.instrs)[:80]

    @property
    def has_f64_params(self) -> bool:
        return any(c in ("float64", "complex128") for c in self.consts)


def const_layout(spec: ElementwiseSpec) -> tuple[list[int], int]:
    """Word index of each constant, and the first word after them and the zero word."""
    word = 1 + spec.ndim
    where = []
    for name in spec.consts:
        size = ty.const_words(name)
        if size >= 2:
            word += word % 2
        where.append(word)
        word += size
    return where, word + 1


def zero_word(spec: ElementwiseSpec) -> int:
    """The word of ``P`` that holds 0 (``param_words`` leaves it so): the launder key."""
    return const_layout(spec)[1] - 1


# A value made opaque to the compiler at no change of bits: ``{z}`` is an expression of
# the zero word.  f64 has no bitcast to integers here (naga reads bitcast<vec2<u32>> of
# an f64 as a 64-bit one, and shader-int64 may be absent), so it selects on the unknown
# zero instead, with an unknown other arm (a constant arm could be folded into users).
_LAUNDER = {
    "f32": "bitcast<f32>(bitcast<u32>({v}) ^ {z})",
    "c64": "bitcast<vec2<f32>>(bitcast<vec2<u32>>({v}) ^ vec2<u32>({z}))",
    "f64": "select({v}, f64(bitcast<f32>({z})), {z} != 0u)",
    "c128": "select({v}, vec2<f64>(f64(bitcast<f32>({z}))), {z} != 0u)",
    "b": "({v} != ({z} != 0u))",
}
_FLOAT_TAGS = ("f32", "f64", "c64", "c128")
# float32 division on a device whose fma is fused: the short fma path (realmath's
# f32_divide_fma); sqrt keeps the fma-free correction, verified on every device so far
_FMA_CALL = re.compile(r"\bf32_(divide|reciprocal)\(")


def launder(expr: str, tag: str, salt: int) -> str:
    """``expr`` through the launder of its tag (see the module doc); ``salt`` makes two
    launders of one value differ, so that they cannot be merged and cancelled."""
    return _LAUNDER[tag].format(v=expr, z=f"(kz * {salt}u)" if salt > 1 else "kz")


def leaf_layout(spec: ElementwiseSpec) -> list[int]:
    _, word = const_layout(spec)
    where = []
    for cls, _ in spec.leaves:
        where.append(word)
        word += 1 + (spec.ndim if cls in ("g", "ig") else 0)
    return where


def param_words(spec: ElementwiseSpec, n: int, shape, const_blobs, leaf_views) -> bytes:
    """The parameter block: ``const_blobs`` are each constant's bytes, ``leaf_views``
    each leaf's (offset, strides) in elements."""
    cwhere, end = const_layout(spec)
    words = bytearray(4 * end)
    words[0:4] = n.to_bytes(4, "little")
    for d, s in enumerate(shape):
        words[4 * (1 + d): 8 + 4 * d] = s.to_bytes(4, "little")
    for w, blob in zip(cwhere, const_blobs):
        words[4 * w: 4 * w + len(blob)] = blob
    for (cls, _), (offset, strides) in zip(spec.leaves, leaf_views):
        words += (offset & 0xFFFFFFFF).to_bytes(4, "little")
        if cls in ("g", "ig"):
            for st in strides:
                words += (st & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(words)


def leaf_dtype(spec: ElementwiseSpec, i: int) -> str:
    cls, b = spec.leaves[i]
    return "uint32" if cls in ("ic", "ig") else spec.bindings[b][0]


def compute_fn(spec: ElementwiseSpec, prefix: str, launder_outputs: bool = True) -> str:
    """``fn {prefix}compute(leaves..., consts..., kz) -> outputs``: the op DAG as WGSL.
    The outputs are laundered too unless they are only stored (``launder_outputs``): a
    kernel consuming them (a sum of x * y) must not contract or regroup across them."""
    native = spec.int64_native
    tags_of = {}
    params = []
    for i in range(len(spec.leaves)):
        dname = leaf_dtype(spec, i)
        tags_of[("L", i)] = ty.tag(dname, native)
        params.append(f"l{i}: {ty.wgsl_type(dname, native)}")
    for i, dname in enumerate(spec.consts):
        tags_of[("K", i)] = ty.tag(dname, native)
        params.append(f"k{i}: {ty.wgsl_type(dname, native)}")
    params.append("kz: u32")

    def ref(r):
        return {"L": "l", "K": "k", "I": "v"}[r[0]] + str(r[1])

    consumed = {s for *_, srcs in spec.instrs for s in srcs}
    n_instr = len(spec.instrs)
    # Each instruction's launder has its own zero (kz times its salt): two launders of one
    # value would merge (x - x folds), and equal keys on both sides of a bit-level op
    # (negation is an xor) would cancel. The products are uniform: once per invocation.
    body = []
    for i, (op, out_dtype, arg, srcs) in enumerate(spec.instrs):
        out_tag = ty.tag(out_dtype, native)
        src_tags = tuple(tags_of[s] for s in srcs)
        template = ops.lower(op, arg, src_tags, out_tag)
        operands = []
        for j, (s, t) in enumerate(zip(srcs, src_tags)):
            text = ref(s)
            if s in srcs[:j] and t in _FLOAT_TAGS:  # x - x: one operand must not be the other
                text = launder(text, t, 2 + n_instr + 3 * i + j)
            operands.append(text)
        expr = template.format(**dict(zip("abc", operands)))
        if spec.fma_fused:
            expr = _FMA_CALL.sub(r"f32_\1_fma(", expr)
        if out_dtype in ty.NARROW and op != "where":
            expr = f"wrap_{out_dtype.replace('int', 'i').replace('ui', 'u')}({expr})"
        tags_of[("I", i)] = out_tag
        if ("I", i) in consumed and (out_tag in _FLOAT_TAGS
                                     or (out_tag == "b" and any(t in _FLOAT_TAGS for t in src_tags))):
            expr = launder(expr, out_tag, 1 + i)
        body.append(f"    let v{i} = {expr};")
    if launder_outputs:
        def ref(r, plain=ref):
            t = tags_of[r]
            return launder(plain(r), t, 1 + n_instr) if r[0] == "I" and t in _FLOAT_TAGS else plain(r)
    out_types = [ty.wgsl_type(d, native) for _, d in spec.outputs]
    struct = ""
    if len(spec.outputs) == 1:
        ret_type = out_types[0]
        body.append(f"    return {ref(spec.outputs[0][0])};")
    else:
        ret_type = f"{prefix}Outs"
        body.append(f"    return {ret_type}({', '.join(ref(r) for r, _ in spec.outputs)});")
        struct = f"struct {ret_type} {{\n" + "".join(f"    o{j}: {t},\n" for j, t in enumerate(out_types)) + "}\n"
    return struct + f"fn {prefix}compute({', '.join(params)}) -> {ret_type} {{\n" + "\n".join(body) + "\n}\n"


def input_group(spec: ElementwiseSpec, prefix: str, name: str | None = None) -> Group:
    """The bindings of a fused input (``{prefix}B0``, ...), read-only, as one group of
    a launch record: ``name`` (default ``prefix`` without its underscore) is what the
    driver passes the input's buffers as."""
    bindings = []
    for b, (dname, vec4) in enumerate(spec.bindings):
        st = ty.storage_type(dname, spec.int64_native)
        bindings.append(Binding(f"{prefix}B{b}", f"vec4<{st}>" if vec4 else st))
    return Group(name or prefix.rstrip("_"), tuple(bindings))


def output_binding(name: str, dname: str, native: bool, vec4: bool = True) -> Binding:
    """A written binding of ``dname`` values (``array<vec4<T>>`` for 32-bit values
    where ``vec4``; 8/16-bit and bool values as their u32 words)."""
    st = ty.storage_type(dname, native)
    return Binding(name, f"vec4<{st}>" if vec4 and ty.is_vec4able(dname) else st, write=True)


def launch_record(spec: ElementwiseSpec) -> Launch:
    """The fused kernel's bindings: the input buffers (``inputs``), then one output per
    result (``outputs``); its parameters are ``param_words``."""
    outs = tuple(output_binding(f"O{j}", dname, spec.int64_native) for j, (_, dname) in enumerate(spec.outputs))
    return Launch(spec.name, (input_group(spec, "", "inputs"), Group("outputs", outs)),
                  (Field("n", "u32", 0), Field("words", "block", 0)), spec.has_f64_params, WORKGROUP)


class LeafReader:
    """Emits the loads of one element's leaf values (shared by kernels and inputs)."""

    def __init__(self, spec: ElementwiseSpec, prefix: str, pbase: int):
        self.spec = spec
        self.prefix = prefix
        self.pbase = pbase
        self.lwhere = [pbase + w for w in leaf_layout(spec)]
        self.unravel = any(cls in ("g", "ig") for cls, _ in spec.leaves)

    def const_lets(self) -> list[str]:
        cwhere, _ = const_layout(self.spec)
        return [f"let k{i} = {ty.const(d, self.pbase + cwhere[i], self.spec.int64_native)};"
                for i, d in enumerate(self.spec.consts)] + [f"let kz = P[{self.pbase + zero_word(self.spec)}];"]

    def hoisted_loads(self, quad: str) -> tuple[list[str], dict[int, str]]:
        """Loads made once for 4 consecutive elements: each broadcast scalar leaf ('s')
        and each vec4 leaf ('v', the vec4 at index ``quad`` past the leaf's offset).
        Returns the statements and a function of j giving ``element``'s ``hoisted``."""
        spec, native, pre = self.spec, self.spec.int64_native, self.prefix
        lines, names = [], {}
        for i, (cls, b) in enumerate(spec.leaves):
            off = f"P[{self.lwhere[i]}]"
            if cls == "s":
                lines.append(f"let s{i} = {ty.load(leaf_dtype(spec, i), f'{pre}B{b}', off, native)};")
                names[i] = (f"s{i}", False)
            elif cls == "v":
                lines.append(f"let w{i} = {pre}B{b}[({off} >> 2u) + {quad}];")
                names[i] = (f"w{i}", True)

        def for_element(j: int) -> dict[int, str]:
            return {i: f"{name}[{j}]" if vec else name for i, (name, vec) in names.items()}

        return lines, for_element

    def unravel_first(self, e: str) -> list[str]:
        """Statements making ``u0 .. u{ndim-1}`` the multi-index of flat element ``e``: the
        one unravel (an integer division and remainder per dimension) of an invocation;
        ``advance`` steps it to the next elements."""
        lines = [f"var ur = {e};"]
        for d in reversed(range(self.spec.ndim)):
            dim = f"P[{self.pbase + 1 + d}]"
            lines.append(f"var u{d} = ur % {dim}; ur = ur / {dim};")
        return lines

    def advance(self, cond: str, j: str) -> list[str]:
        """Statements stepping the multi-index ``u*`` to the next element in C order when
        ``cond`` holds (past the last element it stays, as the clamped index does): a
        carry through the dimensions, compares and adds instead of divisions."""
        ndim = self.spec.ndim
        c = f"uc{j}"
        lines = [f"var {c} = {cond};"]
        for d in reversed(range(ndim)):
            dim = f"P[{self.pbase + 1 + d}]"
            step = f"u{d} += 1u; {c} = u{d} == {dim}; if ({c}) {{ u{d} = 0u; }}" if d else f"u{d} += 1u;"
            lines.append(f"if ({c}) {{ {step} }}")
        return lines

    def element(self, e: str, j: str, hoisted: dict, unravelled: bool = False) -> tuple[list[str], list[str]]:
        """Statements and leaf arguments for flat element ``e`` (suffix ``j`` names locals).
        ``hoisted`` maps leaf index -> an already loaded expression (scalar/vec4 leaves);
        ``unravelled``: strided leaves take their addresses from the multi-index ``u*``
        (``unravel_first`` / ``advance``) rather than unravelling ``e`` themselves."""
        spec, native, pre = self.spec, self.spec.int64_native, self.prefix
        lines, args, strided = [], [], []
        for i, (cls, b) in enumerate(spec.leaves):
            dname = leaf_dtype(spec, i)
            off = f"P[{self.lwhere[i]}]"
            if i in hoisted:
                args.append(hoisted[i])
            elif cls == "s":
                args.append(ty.load(dname, f"{pre}B{b}", off, native))
            elif cls in ("c", "v"):
                args.append(ty.load(dname, f"{pre}B{b}", f"({off} + {e})", native))
            elif cls == "ic":
                args.append(f"({off} + {e})")
            else:
                lines.append(f"var a{i}_{j} = {off};")
                strided.append(i)
                args.append(f"a{i}_{j}" if cls == "ig" else ty.load(dname, f"{pre}B{b}", f"a{i}_{j}", native))
        if strided and unravelled:
            for d in range(spec.ndim):
                for i in strided:
                    lines.append(f"a{i}_{j} += u{d} * P[{self.lwhere[i] + 1 + d}];")
        elif strided:
            lines.append(f"var r{j} = {e};")
            for d in reversed(range(spec.ndim)):
                dim = f"P[{self.pbase + 1 + d}]"
                lines.append(f"let i{d}_{j} = r{j} % {dim}; r{j} = r{j} / {dim};")
                for i in strided:
                    lines.append(f"a{i}_{j} += i{d}_{j} * P[{self.lwhere[i] + 1 + d}];")
        args += [f"k{i}" for i in range(len(spec.consts))] + ["kz"]
        return lines, args


def render_input(spec: ElementwiseSpec, prefix: str, pbase: int) -> str:
    """A fused input for another kernel: its WGSL functions.

    Defines ``fn {prefix}at(e: u32) -> T``, the value of the spec's single output at flat
    (C-order) index ``e`` of its shape. Its buffers are the bindings of
    ``input_group(spec, prefix)`` in the kernel's launch record, and its parameters
    (``param_words``) sit at word ``pbase`` (even) of the kernel's ``P``. The kernel must
    include ``library(...)`` of all its code once.
    """
    reader = LeafReader(spec, prefix, pbase)
    lines, args = reader.element("e", "0", {})
    out_t = ty.wgsl_type(spec.outputs[0][1], spec.int64_native)
    body = reader.const_lets() + lines + [f"return {prefix}compute({', '.join(args)});"]
    fn = f"fn {prefix}at(e: u32) -> {out_t} {{\n" + "".join(f"    {x}\n" for x in body) + "}\n"
    return compute_fn(spec, prefix) + fn


def library(code: str) -> str:
    """The helper-library snippets that ``code`` calls, in dependency order."""
    helpers = ops.helpers_used(code)
    return snippets.resolve(ops.LIBRARY, helpers) if helpers else ""


def render(spec: ElementwiseSpec) -> str:
    native = spec.int64_native
    decls = launch_record(spec).declarations()

    reader = LeafReader(spec, "", 0)
    main = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let gid = (wid.x + wid.y * 65535u) * 256u + lid;",
        "    let n = P[0];",
        "    let base = gid * 4u;",
        "    if (base >= n) { return; }",
    ]
    main += ["    " + x for x in reader.const_lets()]
    loads, hoisted = reader.hoisted_loads("gid")
    main += ["    " + x for x in loads]
    results = []
    # Strided leaves: one unravel of the first element, then a carry step per element
    # (the 4 elements are consecutive), not a division and remainder per dimension and
    # element.
    if reader.unravel:
        main += ["    " + x for x in reader.unravel_first("base")]
    code = compute_fn(spec, "", launder_outputs=False)
    lib = library(code)
    if is_heavy(lib + code):
        main += _element_loop(spec, reader, hoisted)
        results = [f"ys[{j}]" for j in range(PER_THREAD)]
    for j in range(PER_THREAD if not results else 0):
        main.append(f"    let e{j} = min(base + {j}u, n - 1u);")
        if reader.unravel and j:
            main += ["    " + x for x in reader.advance(f"base + {j}u < n", str(j))]
        lines, args = reader.element(f"e{j}", str(j), hoisted(j), unravelled=True)
        main += ["    " + x for x in lines]
        main.append(f"    let y{j} = compute({', '.join(args)});")
        results.append(f"y{j}")
    for jo, (_, dname) in enumerate(spec.outputs):
        vals = [r if len(spec.outputs) == 1 else f"{r}.o{jo}" for r in results]
        main.extend("    " + line for line in store4(f"O{jo}", dname, vals, native))
    main.append("}")
    return "\n".join(decls) + "\n\n" + lib + "\n" + code + "\n" + "\n".join(main) + "\n"


# A kernel whose ops loop (continued fractions, series, Newton steps) runs its 4
# elements as a loop over one call of ``compute`` rather than 4 calls: Mesa's shader
# compilers inline every call, and lavapipe's LLVM spent minutes on 4 inlined copies of
# betainc (two continued fractions, ~40 helpers each). Straight-line chains stay
# unrolled, however long: NVIDIA's Vulkan driver lost the device compiling a chain of
# 1000 adds in the loop form.
_LOOP = re.compile(r"\b(loop|for|while)\b\s*[({]")


def is_heavy(code: str) -> bool:
    """Whether ``code`` (a compute function with its helpers) loops, so that it runs once
    per element in a loop rather than inlined per element."""
    return _LOOP.search(re.sub(r"//[^\n]*", "", code)) is not None


def _element_loop(spec: ElementwiseSpec, reader: "LeafReader", hoisted) -> list[str]:
    """The statements computing an invocation's 4 results into ``ys`` in a loop."""
    native = spec.int64_native
    ret = ty.wgsl_type(spec.outputs[0][1], native) if len(spec.outputs) == 1 else "Outs"
    lines = [f"    var ys: array<{ret}, {PER_THREAD}>;",
             f"    for (var j = 0u; j < {PER_THREAD}u; j = j + 1u) {{",
             "        let e = min(base + j, n - 1u);"]
    if reader.unravel:
        lines += ["        if (j > 0u) {"] + ["            " + x for x in reader.advance("base + j < n", "l")] + ["        }"]
    body, args = reader.element("e", "l", hoisted("j"), unravelled=True)
    lines += ["        " + x for x in body]
    lines += [f"        ys[j] = compute({', '.join(args)});", "    }"]
    return lines


def store4(buf: str, dname: str, vals: list[str], native: bool, vec4: bool = True, guard: bool = False) -> list[str]:
    """Statements storing 4 consecutive results of invocation ``gid`` (elements
    ``base = 4 * gid`` on). 8/16-bit and bool results are packed into whole u32 words,
    so no two invocations write one word. 32-bit results are one vec4 store when the
    buffer is bound as ``array<vec4<T>>`` (``vec4``); otherwise elements are stored one
    by one, each guarded by ``base + j < n`` when ``guard`` (unpadded outputs)."""
    if vec4 and ty.is_vec4able(dname):
        return [f"{buf}[gid] = vec4({', '.join(vals)});"]
    if dname == "bool":
        parts = [f"(select(0u, 1u, {v}) << {8 * j}u)" for j, v in enumerate(vals)]
        return [f"{buf}[gid] = {' | '.join(parts)};"]
    if dname in ty.NARROW:
        t, bits = ty.NARROW[dname]
        mask = (1 << bits) - 1
        as_u = [f"(bitcast<u32>({v}) & {mask}u)" if t == "i32" else f"({v} & {mask}u)" for v in vals]
        per = 32 // bits
        lines = []
        for w in range(PER_THREAD // per):
            parts = [f"({as_u[w * per + j]} << {bits * j}u)" for j in range(per)]
            lines.append(f"{buf}[gid * {PER_THREAD // per}u + {w}u] = {' | '.join(parts)};")
        return lines
    if guard:
        return [f"if (base + {j}u < n) {{ {buf}[base + {j}u] = {v}; }}" for j, v in enumerate(vals)]
    return [f"{buf}[gid * 4u + {j}u] = {v};" for j, v in enumerate(vals)]
