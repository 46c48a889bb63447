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
elementwise kernels do (``elementwise.store4``), so 8/16-bit and bool outputs are written
a whole u32 word per invocation. Parameters: P[0] = n (outputs), then kernel words, then
each input's parameter block at an even word.
"""
from __future__ import annotations

from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew
from . import ops
from . import types as ty

INVALID = 0xFFFFFFFF


def _groups(specs) -> tuple:
    """The bindings of fused inputs in0_, in1_, ... (passed as ``in0``, ``in1``, ...)."""
    return tuple(ew.input_group(spec, f"in{k}_") for k, spec in enumerate(specs))


def _fns(specs, pbases) -> str:
    """The WGSL functions ``inK_at`` of the fused inputs, their parameters at ``pbases``."""
    return "".join(ew.render_input(spec, f"in{k}_", pbase) for k, (spec, pbase) in enumerate(zip(specs, pbases)))


def _blocks(pbases) -> tuple:
    return tuple(Field(f"in{k}", "block", base) for k, base in enumerate(pbases))


_FLAG = Binding("F", "atomic<u32>", write=True)


def _f64(specs) -> bool:
    return any(s.has_f64_params for s in specs)


_HEAD = [
    "@compute @workgroup_size(256)",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
    "    let gid = (wid.x + wid.y * 65535u) * 256u + lid;",
    "    let n = P[0];",
]


def _assemble(record: Launch, fns, main) -> str:
    decls = record.declarations()
    body = "\n".join(main) + "\n"
    return "\n".join(decls) + "\n\n" + ew.library(fns + body) + "\n" + fns + "\n" + body


def gather_record(data, index, other, out_dtype: str, native: bool, checked: bool, pbases) -> Launch:
    """The gather's bindings: inputs ``in0`` (data), ``in1`` (index), ``in2`` (other,
    optional), output ``O``, the flag ``F`` where ``checked``; parameters n, the data's
    size, then each input's block at ``pbases``."""
    specs = [data, index] + ([other] if other is not None else [])
    args = _groups(specs) + (ew.output_binding("O", out_dtype, native),) + ((_FLAG,) if checked else ())
    return Launch("gather", args, (Field("n", "u32", 0), Field("size", "u32", 1)) + _blocks(pbases), _f64(specs))


def render_gather(data, index, other, out_dtype: str, native: bool, checked: bool, pbases) -> str:
    """WGSL of a gather (``gather_record``): ``data``, ``index`` (uint32) and optional
    ``other`` are ElementwiseSpecs of the fused inputs; ``pbases`` their parameter words."""
    specs = [data, index] + ([other] if other is not None else [])
    record = gather_record(data, index, other, out_dtype, native, checked, pbases)
    fns = _fns(specs, pbases)
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
    return _assemble(record, fns, main)


def winner_record(index, checked: bool, pbases) -> Launch:
    """The winner pass's bindings: input ``in0`` (the index), ``W``, the flag ``F`` where
    ``checked``; parameters n (updates), the target's size, the index's block."""
    args = _groups([index]) + (Binding("W", "atomic<u32>", write=True),) + ((_FLAG,) if checked else ())
    return Launch("scatter_winner", args, (Field("n", "u32", 0), Field("size", "u32", 1)) + _blocks(pbases),
                  _f64([index]))


def render_winner(index, checked: bool, pbases) -> str:
    """WGSL of the winner pass: W[idx_at(u)] = max(W, u + 1) for u < n (one per invocation)."""
    record = winner_record(index, checked, pbases)
    fns = _fns([index], pbases)
    main = list(_HEAD) + [
        "    if (gid >= n) { return; }",
        "    let t = in0_at(gid);",
        "    if (t < P[1]) { atomicMax(&W[t], gid + 1u); }",
    ]
    if checked:
        main.append("    else { atomicStore(&F[0], 1u); }")
    main.append("}")
    return _assemble(record, fns, main)


def concat_record(specs, out_dtype: str, native: bool, pbases) -> Launch:
    """The concatenation's bindings: inputs ``in0``, ``in1``, ..., output ``O``;
    parameters n, inner, n_axis, then (start, length) along the axis per input, then
    the inputs' blocks at ``pbases``."""
    head = [Field("n", "u32", 0), Field("inner", "u32", 1), Field("nax", "u32", 2)]
    for i in range(len(specs)):
        head += [Field(f"start{i}", "u32", 3 + 2 * i), Field(f"len{i}", "u32", 4 + 2 * i)]
    args = _groups(specs) + (ew.output_binding("O", out_dtype, native),)
    return Launch("concat", args, tuple(head) + _blocks(pbases), _f64(specs))


def render_concat(specs, out_dtype: str, native: bool, pbases) -> str:
    """WGSL of a concatenation of ``len(specs)`` inputs along one axis (``concat_record``).

    The output is seen as (outer, n_axis, inner): P[1] = inner, P[2] = n_axis, and input
    K's slab starts at P[3 + 2K] along the axis with P[4 + 2K] entries.
    """
    k = len(specs)
    record = concat_record(specs, out_dtype, native, pbases)
    fns = _fns(specs, pbases)
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
    return _assemble(record, fns, main)
