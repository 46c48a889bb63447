"""Render the in-place write kernel: values stored into part of an existing buffer.

One invocation per written element ``u`` (``u < P[0]``):

    target flat index  e = u              (region mode: the written region in C order)
                       e = idx_at(u)      (indexed mode: a flat C-order index into the array)
    address            t = P[1] + sum(i_d * P[2 + ndim + d])  with e unravelled over P[2 .. 2 + ndim)
    store              O[t] = val_at(u)   (skipped where the predicate pred_at(u) is false)

Strides travel as u32 and the address is computed modulo 2**32, so negative strides
(reversed views) need no special case. Elements of 32 bits and wider own whole words and
are stored plainly; bool and 8/16-bit elements share a word with their neighbours, which
may be written by other invocations, so they are merged in with an atomicAnd/atomicOr pair
(each pair touches only its own bits, so the order between invocations does not matter).
Inputs are fused (``elementwise.render_input``): in0_ the value, then the predicate, then
the index, bound in that order from binding 0; the target follows, then the parameters.
"""
from __future__ import annotations

from .. import _dtypes as dt
from . import elementwise as ew
from . import types as ty


def render_write(value, pred, index, dname: str, native: bool, ndim: int, pbases) -> tuple[str, bool]:
    """(WGSL, has f64 params) of an in-place write of dtype ``dname`` over an ``ndim``-D
    layout; ``value``/``pred``/``index`` are ElementwiseSpecs (``pred``/``index`` may be
    None) and ``pbases`` the parameter words of those present, in that order."""
    specs = [s for s in (value, pred, index) if s is not None]
    decls, fns = [], []
    binding = 0
    names = []
    for k, (spec, pbase) in enumerate(zip(specs, pbases)):
        d, f = ew.render_input(spec, f"in{k}_", binding, pbase)
        decls += d
        fns.append(f)
        names.append(f"in{k}_at")
        binding += len(spec.bindings)
    val_at = names[0]
    pred_at = names[1] if pred is not None else None
    idx_at = names[-1] if index is not None else None
    narrow = dname == "bool" or dname in ty.NARROW
    if narrow:
        decls.append(f"@group(0) @binding({binding}) var<storage, read_write> O: array<atomic<u32>>;")
    else:
        decls.append(f"@group(0) @binding({binding}) var<storage, read_write> O: "
                     f"array<{ty.storage_type(dname, native)}>;")
    f64 = any(s.has_f64_params for s in specs)
    decls += ew.params_decls(binding + 1, f64)
    main = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let u = (wid.x + wid.y * 65535u) * 256u + lid;",
        "    if (u >= P[0]) { return; }",
    ]
    if pred_at is not None:
        main.append(f"    if (!{pred_at}(u)) {{ return; }}")
    main.append(f"    var r = {idx_at}(u);" if idx_at is not None else "    var r = u;")
    main.append("    var t = P[1];")
    for d in reversed(range(ndim)):
        main.append(f"    t += (r % P[{2 + d}]) * P[{2 + ndim + d}]; r = r / P[{2 + d}];")
    main.append(f"    let v = {val_at}(u);")
    if not narrow:
        main.append("    O[t] = v;")
    else:
        if dname == "bool":
            bits, word = 8, "select(0u, 1u, v)"
        else:
            t, bits = ty.NARROW[dname]
            word = f"(bitcast<u32>(v) & {(1 << bits) - 1}u)" if t == "i32" else f"(v & {(1 << bits) - 1}u)"
        per = 32 // bits
        main += [
            f"    let w = t >> {per.bit_length() - 1}u;",
            f"    let sh = (t & {per - 1}u) * {bits}u;",
            f"    atomicAnd(&O[w], ~({(1 << bits) - 1}u << sh));",
            f"    atomicOr(&O[w], {word} << sh);",
        ]
    main.append("}")
    body = "\n".join(main) + "\n"
    code = "".join(fns)
    return "\n".join(decls) + "\n\n" + ew.library(code + body) + "\n" + code + "\n" + body, f64


def render_write_element(dname: str, native: bool) -> str:
    """WGSL storing one scalar parameter into element ``P[0]`` of ``O`` (one invocation):
    the value's bytes follow in ``P[1..]``, as ``types.const_bytes`` packs them."""
    head = ["@compute @workgroup_size(1)", "fn main() {", "    let t = P[0];"]
    if dname == "bool" or dname in ty.NARROW:
        bits = 8 if dname == "bool" else ty.NARROW[dname][1]
        per = 32 // bits
        mask = (1 << bits) - 1
        decl = "@group(0) @binding(0) var<storage, read_write> O: array<atomic<u32>>;"
        body = [
            f"    let w = t >> {per.bit_length() - 1}u;",
            f"    let sh = (t & {per - 1}u) * {bits}u;",
            f"    atomicAnd(&O[w], ~({mask}u << sh));",
            f"    atomicOr(&O[w], (P[1] & {mask}u) << sh);",
        ]
    else:
        words = dt.BY_NAME[dname].itemsize // 4
        decl = "@group(0) @binding(0) var<storage, read_write> O: array<u32>;"
        body = [f"    O[t * {words}u + {w}u] = P[{1 + w}];" for w in range(words)]
    params = "@group(0) @binding(1) var<storage, read> P: array<u32>;"
    return "\n".join([decl, params, ""] + head + body + ["}"]) + "\n"
