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
f64 scalars): n, the shape, the scalar constants, then each leaf's offset and (for
'g') strides. ``param_words`` packs them in exactly that order.
"""
from __future__ import annotations

from dataclasses import dataclass

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

    # Operand refs: ('L', i) leaf i, ('K', i) constant i, ('I', i) instruction i.

    @property
    def name(self) -> str:
        return "ew_" + "_".join(op for op, *_ in self.instrs)[:80]

    @property
    def has_f64_params(self) -> bool:
        return any(c in ("float64", "complex128") for c in self.consts)


def const_layout(spec: ElementwiseSpec) -> tuple[list[int], int]:
    """Word index of each constant, and the first word after them."""
    word = 1 + spec.ndim
    where = []
    for name in spec.consts:
        size = ty.const_words(name)
        if size >= 2:
            word += word % 2
        where.append(word)
        word += size
    return where, word


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


def _leaf_dtype(spec: ElementwiseSpec, i: int) -> str:
    cls, b = spec.leaves[i]
    return "uint32" if cls in ("ic", "ig") else spec.bindings[b][0]


def render(spec: ElementwiseSpec) -> str:
    native = spec.int64_native
    tags_of = {}  # ref -> compute tag

    def tag_of_dtype(name):
        return ty.tag(name, native)

    # ---- the compute function: fn f(leaves..., consts...) -> outputs
    params = []
    for i, (cls, b) in enumerate(spec.leaves):
        dname = _leaf_dtype(spec, i)
        tags_of[("L", i)] = tag_of_dtype(dname)
        params.append(f"l{i}: {ty.wgsl_type(dname, native)}")
    for i, dname in enumerate(spec.consts):
        tags_of[("K", i)] = tag_of_dtype(dname)
        params.append(f"k{i}: {ty.wgsl_type(dname, native)}")

    def ref(r):
        return {"L": "l", "K": "k", "I": "v"}[r[0]] + str(r[1])

    body = []
    for i, (op, out_dtype, arg, srcs) in enumerate(spec.instrs):
        out_tag = tag_of_dtype(out_dtype)
        src_tags = tuple(tags_of[s] for s in srcs)
        template = ops.lower(op, arg, src_tags, out_tag)
        expr = template.format(**{k: ref(s) for k, s in zip("abc", srcs)})
        if out_dtype in ty.NARROW and op not in ("where",):
            expr = f"wrap_{out_dtype.replace('int', 'i').replace('ui', 'u')}({expr})"
        tags_of[("I", i)] = out_tag
        body.append(f"    let v{i} = {expr};")

    out_types = [ty.wgsl_type(d, native) for _, d in spec.outputs]
    if len(spec.outputs) == 1:
        ret_type = out_types[0]
        body.append(f"    return {ref(spec.outputs[0][0])};")
    else:
        ret_type = "Outs"
        fields = ", ".join(ref(r) for r, _ in spec.outputs)
        body.append(f"    return Outs({fields});")
    compute_fn = f"fn compute({', '.join(params)}) -> {ret_type} {{\n" + "\n".join(body) + "\n}\n"
    struct = ""
    if len(spec.outputs) > 1:
        struct = "struct Outs {\n" + "".join(f"    o{j}: {t},\n" for j, t in enumerate(out_types)) + "}\n"

    # ---- bindings
    decls = []
    for b, (dname, vec4) in enumerate(spec.bindings):
        st = ty.storage_type(dname, native)
        decls.append(f"@group(0) @binding({b}) var<storage, read> B{b}: array<{f'vec4<{st}>' if vec4 else st}>;")
    nb = len(spec.bindings)
    for j, (_, dname) in enumerate(spec.outputs):
        st = ty.storage_type(dname, native)
        elem = f"vec4<{st}>" if ty.is_vec4able(dname) else st
        decls.append(f"@group(0) @binding({nb + j}) var<storage, read_write> O{j}: array<{elem}>;")
    decls.append(f"@group(0) @binding({nb + len(spec.outputs)}) var<storage, read> P: array<u32>;")
    if spec.has_f64_params:
        decls.append(f"@group(0) @binding({nb + len(spec.outputs) + 1}) var<storage, read> PD: array<f64>;")

    # ---- main
    cwhere, _ = const_layout(spec)
    lwhere = leaf_layout(spec)
    main = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let gid = (wid.x + wid.y * 65535u) * 256u + lid;",
        "    let n = P[0];",
        "    let base = gid * 4u;",
        "    if (base >= n) { return; }",
    ]
    for i, dname in enumerate(spec.consts):
        main.append(f"    let k{i} = {ty.const(dname, cwhere[i], native)};")
    needs_unravel = any(cls in ("g", "ig") for cls, _ in spec.leaves)
    for i, (cls, b) in enumerate(spec.leaves):
        off = f"P[{lwhere[i]}]"
        if cls == "s":
            main.append(f"    let s{i} = {ty.load(_leaf_dtype(spec, i), f'B{b}', off, native)};")
        elif cls == "v":
            main.append(f"    let w{i} = B{b}[({off} >> 2u) + gid];")
    args_common = [f"k{i}" for i in range(len(spec.consts))]
    results = []
    for j in range(PER_THREAD):
        main.append(f"    let e{j} = min(base + {j}u, n - 1u);")
        if needs_unravel:
            main.append(f"    var r{j} = e{j};")
        leaf_args = []
        addr_lines = []
        for i, (cls, b) in enumerate(spec.leaves):
            dname = _leaf_dtype(spec, i)
            off = f"P[{lwhere[i]}]"
            if cls == "s":
                leaf_args.append(f"s{i}")
            elif cls == "v":
                leaf_args.append(f"w{i}[{j}]")
            elif cls == "c":
                leaf_args.append(ty.load(dname, f"B{b}", f"({off} + e{j})", native))
            elif cls == "ic":
                leaf_args.append(f"({off} + e{j})")
            else:
                main.append(f"    var a{i}_{j} = {off};")
                addr_lines.append(i)
                leaf_args.append(f"a{i}_{j}" if cls == "ig" else ty.load(dname, f"B{b}", f"a{i}_{j}", native))
        if needs_unravel:
            for d in reversed(range(spec.ndim)):
                main.append(f"    let i{d}_{j} = r{j} % P[{1 + d}]; r{j} = r{j} / P[{1 + d}];")
                for i in addr_lines:
                    main.append(f"    a{i}_{j} += i{d}_{j} * P[{lwhere[i] + 1 + d}];")
        main.append(f"    let y{j} = compute({', '.join(leaf_args + args_common)});")
        results.append(f"y{j}")
    for jo, (_, dname) in enumerate(spec.outputs):
        vals = [r if len(spec.outputs) == 1 else f"{r}.o{jo}" for r in results]
        main.extend("    " + line for line in _store(f"O{jo}", dname, vals, native))
    main.append("}")

    code = struct + compute_fn
    helpers = ops.helpers_used(code)
    library = snippets.resolve(ops.LIBRARY, helpers) if helpers else ""
    return "\n".join(decls) + "\n\n" + library + "\n" + code + "\n" + "\n".join(main) + "\n"


def _store(buf: str, dname: str, vals: list[str], native: bool) -> list[str]:
    """Statements storing 4 consecutive results of invocation ``gid``."""
    if ty.is_vec4able(dname):
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
    return [f"{buf}[gid * 4u + {j}u] = {v};" for j, v in enumerate(vals)]
