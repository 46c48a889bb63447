"""Render the data-movement kernels of indexing and manipulation: pure text from specs.

Every input is a fused input (``elementwise.render_input``): ``inK_at(e)`` is the value
at flat C-order index ``e`` of input K's shape, its elementwise producer computed inline.

gather      out[e] = data_at(idx_at(e))          (idx_at(e) >= P[1]: an invalid index)
            with an ``else`` input:  out[e] = valid ? data_at(idx) : else_at(e)
            Invalid indices in a checked kernel set the flag word ``F[0]`` to 1 (the
            caller reads it back to raise IndexError); the value is then zero/else.
winner      W[idx_at(u)] = max(W[...], u + 1) over updates u: the last update that targets
            each element, so a scatter with repeated indices is deterministic (the last
            write wins, as in NumPy) and is then a gather: out[e] = W[e] ? v_at(W[e]-1) : x_at(e).
concat      out[e] = inK_at(local index) for the input K whose slab holds e along the axis.

Each gather/concat invocation computes 4 consecutive outputs and stores them as the
elementwise kernels do (``elementwise._store``), so 8/16-bit and bool outputs are written
a whole u32 word per invocation. Parameters: P[0] = n (outputs), then kernel words, then
each input's parameter block at an even word.
"""
from __future__ import annotations

from . import elementwise as ew
from . import ops
from . import types as ty

INVALID = 0xFFFFFFFF


def _param_bases(first: int, specs_words) -> list[int]:
    """Even word offsets for consecutive parameter blocks starting at ``first``."""
    bases = []
    w = first + first % 2
    for n in specs_words:
        bases.append(w)
        w += n + n % 2
    return bases


def _inputs(specs, pbases):
    """Declarations and functions of fused inputs in0_, in1_, ... bound from binding 0."""
    decls, fns = [], []
    binding = 0
    for k, (spec, pbase) in enumerate(zip(specs, pbases)):
        d, f = ew.render_input(spec, f"in{k}_", binding, pbase)
        decls += d
        fns.append(f)
        binding += len(spec.bindings)
    return decls, "".join(fns), binding


def _out_decl(binding: int, dname: str, native: bool) -> str:
    st = ty.storage_type(dname, native)
    elem = f"vec4<{st}>" if ty.is_vec4able(dname) else st
    return f"@group(0) @binding({binding}) var<storage, read_write> O: array<{elem}>;"


def _params(binding: int, specs) -> tuple[list[str], bool]:
    f64 = any(s.has_f64_params for s in specs)
    decls = [f"@group(0) @binding({binding}) var<storage, read> P: array<u32>;"]
    if f64:
        decls.append(f"@group(0) @binding({binding + 1}) var<storage, read> PD: array<f64>;")
    return decls, f64


_HEAD = [
    "@compute @workgroup_size(256)",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
    "    let gid = (wid.x + wid.y * 65535u) * 256u + lid;",
    "    let n = P[0];",
]


def _assemble(decls, fns, main) -> str:
    body = "\n".join(main) + "\n"
    return "\n".join(decls) + "\n\n" + ew.library(fns + body) + "\n" + fns + "\n" + body


def render_gather(data, index, other, out_dtype: str, native: bool, checked: bool, pbases) -> tuple[str, bool]:
    """(WGSL, has f64 params) of a gather: ``data``, ``index`` (uint32) and optional
    ``other`` are ElementwiseSpecs of the fused inputs; ``pbases`` their parameter words."""
    specs = [data, index] + ([other] if other is not None else [])
    decls, fns, b = _inputs(specs, pbases)
    decls.append(_out_decl(b, out_dtype, native))
    b += 1
    if checked:
        decls.append(f"@group(0) @binding({b}) var<storage, read_write> F: array<atomic<u32>>;")
        b += 1
    pdecls, f64 = _params(b, specs)
    decls += pdecls
    zero = ops.ZERO[ty.tag(out_dtype, native)]
    main = list(_HEAD) + ["    let base = gid * 4u;", "    if (base >= n) { return; }", "    let size = P[1];"]
    if checked:
        main.append("    var bad = false;")
    vals = []
    for j in range(ew.PER_THREAD):
        fallback = f"in2_at(e{j})" if other is not None else zero
        main += [
            f"    let e{j} = min(base + {j}u, n - 1u);",
            f"    let f{j} = in1_at(e{j});",
            f"    var y{j} = {fallback};",
            f"    if (f{j} < size) {{ y{j} = in0_at(f{j}); }}",
        ]
        if checked:
            main.append("    else { bad = true; }")
        vals.append(f"y{j}")
    if checked:
        main.append("    if (bad) { atomicStore(&F[0], 1u); }")
    main += ["    " + s for s in ew.store4("O", out_dtype, vals, native)]
    main.append("}")
    return _assemble(decls, fns, main), f64


def render_winner(index, checked: bool, pbases) -> tuple[str, bool]:
    """WGSL of the winner pass: W[idx_at(u)] = max(W, u + 1) for u < n (one per invocation)."""
    decls, fns, b = _inputs([index], pbases)
    decls.append(f"@group(0) @binding({b}) var<storage, read_write> W: array<atomic<u32>>;")
    b += 1
    if checked:
        decls.append(f"@group(0) @binding({b}) var<storage, read_write> F: array<atomic<u32>>;")
        b += 1
    pdecls, f64 = _params(b, [index])
    decls += pdecls
    main = list(_HEAD) + [
        "    if (gid >= n) { return; }",
        "    let t = in0_at(gid);",
        "    if (t < P[1]) { atomicMax(&W[t], gid + 1u); }",
    ]
    if checked:
        main.append("    else { atomicStore(&F[0], 1u); }")
    main.append("}")
    return _assemble(decls, fns, main), f64


def render_concat(specs, out_dtype: str, native: bool, pbases) -> tuple[str, bool]:
    """WGSL of a concatenation of ``len(specs)`` inputs along one axis.

    The output is seen as (outer, n_axis, inner): P[1] = inner, P[2] = n_axis, and input
    K's slab starts at P[3 + 2K] along the axis with P[4 + 2K] entries.
    """
    k = len(specs)
    decls, fns, b = _inputs(specs, pbases)
    decls.append(_out_decl(b, out_dtype, native))
    pdecls, f64 = _params(b + 1, specs)
    decls += pdecls
    zero = ops.ZERO[ty.tag(out_dtype, native)]
    main = list(_HEAD) + ["    let base = gid * 4u;", "    if (base >= n) { return; }",
                          "    let inner = P[1];", "    let nax = P[2];"]
    vals = []
    for j in range(ew.PER_THREAD):
        main += [
            f"    let e{j} = min(base + {j}u, n - 1u);",
            f"    let t{j} = e{j} % inner;",
            f"    let q{j} = e{j} / inner;",
            f"    let c{j} = q{j} % nax;",
            f"    let o{j} = q{j} / nax;",
            f"    var y{j} = {zero};",
        ]
        for i in range(k):
            cond = f"c{j} < P[{3 + 2 * i}] + P[{4 + 2 * i}]"
            kw = "if" if i == 0 else "else if"
            local = f"(o{j} * P[{4 + 2 * i}] + (c{j} - P[{3 + 2 * i}])) * inner + t{j}"
            if i == k - 1:
                main.append(f"    {'else ' if i else ''}{{ y{j} = in{i}_at({local}); }}")
            else:
                main.append(f"    {kw} ({cond}) {{ y{j} = in{i}_at({local}); }}")
        vals.append(f"y{j}")
    main += ["    " + s for s in ew.store4("O", out_dtype, vals, native)]
    main.append("}")
    return _assemble(decls, fns, main), f64
