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
from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew
from . import types as ty

# Names of the fused inputs, in binding order (those present).
INPUTS = ("value", "pred", "index")


def launch_record(value, pred, index, dname: str, native: bool, ndim: int, pbases) -> Launch:
    """The fused inputs present (``value``, ``pred``, ``index``: groups ``in0``, ``in1``,
    ... in that order), then the target ``O``. Parameters: n, the target's offset,
    shape and strides, then each input's block at its base."""
    specs = [(name, s) for name, s in zip(INPUTS, (value, pred, index)) if s is not None]
    groups = tuple(ew.input_group(s, f"in{k}_", name) for k, (name, s) in enumerate(specs))
    narrow = dname == "bool" or dname in ty.NARROW
    target = Binding("O", "atomic<u32>" if narrow else ty.storage_type(dname, native), write=True)
    fields = (Field("n", "u32", 0), Field("offset", "u32", 1))
    fields += tuple(Field(f"shape{d}", "u32", 2 + d) for d in range(ndim))
    fields += tuple(Field(f"stride{d}", "u32", 2 + ndim + d) for d in range(ndim))
    fields += tuple(Field(name, "block", at) for (name, _), at in zip(specs, pbases))
    return Launch("write", groups + (target,), fields, any(s.has_f64_params for _, s in specs))


# One element set from a scalar: P holds the element index t, then the value's words.
ELEMENT_RECORD = {narrow: Launch("write_element", (Binding("O", "atomic<u32>" if narrow else "u32", write=True),),
                                 (Field("t", "u32", 0),), workgroup=1)
                  for narrow in (False, True)}


def render_write(value, pred, index, dname: str, native: bool, ndim: int, pbases) -> tuple[Launch, str]:
    """(launch record, WGSL) of an in-place write of dtype ``dname`` over an ``ndim``-D
    layout; ``value``/``pred``/``index`` are ElementwiseSpecs (``pred``/``index`` may be
    None) and ``pbases`` the parameter words of those present, in that order."""
    specs = [s for s in (value, pred, index) if s is not None]
    record = launch_record(value, pred, index, dname, native, ndim, pbases)
    decls = record.declarations()
    fns = []
    names = []
    for k, (spec, pbase) in enumerate(zip(specs, pbases)):
        f = ew.render_input(spec, f"in{k}_", pbase)
        fns.append(f)
        names.append(f"in{k}_at")
    val_at = names[0]
    pred_at = names[1] if pred is not None else None
    idx_at = names[-1] if index is not None else None
    narrow = dname == "bool" or dname in ty.NARROW
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
    return record, "\n".join(decls) + "\n\n" + ew.library(code + body) + "\n" + code + "\n" + body


def render_write_element(dname: str, native: bool) -> tuple[Launch, str]:
    """WGSL storing one scalar parameter into element ``P[0]`` of ``O`` (one invocation):
    the value's bytes follow in ``P[1..]``, as ``types.const_bytes`` packs them."""
    head = ["@compute @workgroup_size(1)", "fn main() {", "    let t = P[0];"]
    if dname == "bool" or dname in ty.NARROW:
        bits = 8 if dname == "bool" else ty.NARROW[dname][1]
        per = 32 // bits
        mask = (1 << bits) - 1
        body = [
            f"    let w = t >> {per.bit_length() - 1}u;",
            f"    let sh = (t & {per - 1}u) * {bits}u;",
            f"    atomicAnd(&O[w], ~({mask}u << sh));",
            f"    atomicOr(&O[w], (P[1] & {mask}u) << sh);",
        ]
    else:
        words = dt.BY_NAME[dname].itemsize // 4
        body = [f"    O[t * {words}u + {w}u] = P[{1 + w}];" for w in range(words)]
    record = ELEMENT_RECORD[dname == "bool" or dname in ty.NARROW]
    return record, "\n".join(record.declarations() + [""] + head + body + ["}"]) + "\n"
