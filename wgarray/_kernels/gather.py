"""The gather family's host driver: gather, scatter (winner pass + gather) and concat,
each reading its inputs through fused elementwise producers (WGSL in ``_wgsl/gather.py``).

The one gather of the package: ``gather(data, index, other, flag)`` reads
``data.flat[index[e]]`` for a uint32 ``index`` node of the output's shape; an index of
``INVALID`` (or past the data) gives ``other[e]``, or zero, and sets ``flag`` where a
caller asked for a bounds check. Indexing, take, the manipulation functions, sort and
unique all read through it.
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._graph import node as g
from .._graph import slabs
from .._graph.fusion import FusedInput, binding_limit
from .._runtime.launch import param_bases, workgroups
from .._wgsl import gather as gk
from .reduce import reduce_axes
from .sort import KeySource, radix_perm
from .write import write

INVALID = gk.INVALID


def zeros(shape, dtype, device) -> g.Data:
    return g.realize(g.Const(False if dtype is dt.bool else 0, dtype, device, shape))


def _out_buffer(rt, n: int, dtype):
    per = 4  # invocations own 4 consecutive outputs
    return rt.alloc(-(-max(n, 1) // per) * per * dtype.itemsize)


def _blocks(inputs) -> dict:
    """The fused inputs' parameter blocks, by their names in the launch records."""
    return {f"in{k}": fi.params for k, fi in enumerate(inputs)}


def _buffers(inputs) -> dict:
    """The fused inputs' buffers, by their names in the launch records."""
    return {f"in{k}": fi.buffers for k, fi in enumerate(inputs)}


class Flag:
    """One u32 word that a kernel sets when it meets an invalid index."""

    def __init__(self, device):
        self.device = device
        self.buf = device.runtime.upload(np.zeros(4, np.uint32))

    def raised(self) -> bool:
        return bool(self.device.runtime.read(self.buf, 0, 4).view(np.uint32)[0])


def gather(data: g.Node, index: g.Node, other: g.Node | None = None, flag: Flag | None = None) -> g.Data:
    """out[e] = data.flat[index[e]] (C order), or ``other[e]`` / zero where the index is
    ``INVALID`` (or past the data). ``index`` is uint32 and has the output's shape."""
    device = index.device
    shape = index.shape
    n = g.prod(shape)
    if n == 0:
        return zeros(shape, data.dtype, device)
    if data.size == 0 and other is None:  # nothing to read: every index is invalid
        return zeros(shape, data.dtype, device)
    if n * data.dtype.itemsize > device.max_binding_bytes or (device.big and slabs.too_big([index])):
        return _gather_in_pieces(data, index, other, flag)
    if device.big and slabs.too_big([data]):
        return _gather_in_windows(data, index, other, flag)
    rt = device.runtime
    inputs = [FusedInput(data), FusedInput(index)] + ([FusedInput(other)] if other is not None else [])
    pbases = param_bases(2, [fi.n_words for fi in inputs])
    specs = [fi.spec for fi in inputs]
    spec = (specs[0], specs[1], specs[2] if other is not None else None, data.dtype.name, device.has_int64,
            flag is not None, tuple(pbases))
    kernel = rt.compile(("gather", spec), lambda: (gk.gather_record(*spec), gk.render_gather(*spec)))
    out = _out_buffer(rt, n, data.dtype)
    buffers = _buffers(inputs)
    buffers["O"] = out
    if flag is not None:
        buffers["F"] = flag.buf
    rt.launch(kernel, buffers, kernel.record.pack(n=n, size=data.size, **_blocks(inputs)), workgroups(-(-n // 4)))
    return g.Data(out, shape, data.dtype, device)


def _gather_in_pieces(data: g.Node, index: g.Node, other: g.Node | None, flag: Flag | None) -> g.Data:
    """``gather`` of a result (or an index) past the binding limit: a slab of the index
    at a time, each piece written into its place in the result."""
    device = index.device
    out = g.Data(device.runtime.alloc(max(index.size, 1) * data.dtype.itemsize), index.shape, data.dtype, device)
    for items, _, _ in slabs.plan(index)[0]:
        piece = gather(data, slabs.windowed(g.index_view(index, items)),
                       None if other is None else slabs.windowed(g.index_view(other, items)), flag)
        write(g.index_view(out, items), piece)
    return out


def _gather_in_windows(data: g.Node, index: g.Node, other: g.Node | None, flag: Flag | None) -> g.Node:
    """``gather`` from data past the binding limit: one pass over the indices per
    slab-sized window of the (contiguous, flattened) data, each taking the indices that
    fall in it and keeping the previous passes' values elsewhere; invalid indices are
    found by a pass of their own (a window's kernel would count the others' as invalid)."""
    device = index.device
    data = g.settle(data)
    if not (type(data) is g.Data and data.is_contiguous):
        data = g.realize(g.Op("copy", [data], data.dtype))
    size = data.size
    flat = g.reshape_view(data, (size,))
    u32 = dt.uint32

    def c(v):
        return g.Const(v, u32, device, index.shape)

    per = max(slabs.slab_bytes(device) // data.dtype.itemsize, 1)
    res = other
    for base in range(0, size, per):
        w = min(per, size - base)
        part = slabs.windowed(g.index_view(flat, [("slice", base, 1, w)]))
        inside = g.make_op("logical_and", [g.make_op("greater_equal", [index, c(base)], dt.bool),
                                           g.make_op("less", [index, c(base + w)], dt.bool)], dt.bool)
        local = g.make_op("where", [inside, g.make_op("subtract", [index, c(base)], u32), c(INVALID)], u32)
        res = gather(part, local, res)
    if flag is not None:  # every index past the data (INVALID too) flagged, as one gather would
        probe = slabs.windowed(g.index_view(flat, [("slice", 0, 1, 1)]))
        bad = g.make_op("where", [g.make_op("less", [index, c(size)], dt.bool), c(0), c(INVALID)], u32)
        gather(probe, bad, None, flag)
    return res


def scatter(x: g.Node, index: g.Node, value: g.Node, flag: Flag | None = None) -> g.Node:
    """A copy of ``x`` with x.flat[index[u]] = value[u] for every update u (``index`` and
    ``value`` share a shape); among updates of one element the last one wins."""
    device = x.device
    if index.size == 0 or x.size == 0:
        return x
    if device.big and (x.size * 4 > device.max_binding_bytes or slabs.too_big([x])):
        return _scatter_past_limit(x, index, value, flag)
    rt = device.runtime
    winners = zeros((x.size,), dt.uint32, device)
    fi = FusedInput(index)
    spec = (fi.spec, flag is not None, tuple(param_bases(2, [fi.n_words])))
    kernel = rt.compile(("scatter_winner", spec), lambda: (gk.winner_record(*spec), gk.render_winner(*spec)))
    buffers = {"in0": fi.buffers, "W": winners.buf}
    if flag is not None:
        buffers["F"] = flag.buf
    rt.launch(kernel, buffers, kernel.record.pack(n=index.size, size=x.size, in0=fi.params), workgroups(index.size))
    w = g.Data(winners.buf, x.shape, dt.uint32, device)
    zero = g.Const(0, dt.uint32, device, x.shape)
    picked = g.make_op("where", [g.make_op("equal", [w, zero], dt.bool), g.Const(INVALID, dt.uint32, device, x.shape),
                                 g.make_op("subtract", [w, g.Const(1, dt.uint32, device, x.shape)], dt.uint32)],
                       dt.uint32)
    return gather(value, picked, x)


def _scatter_past_limit(x: g.Node, index: g.Node, value: g.Node, flag: Flag | None) -> g.Data:
    """scatter into an array past the binding limit, with no winners array of its size:
    a stable sort of the updates by index puts the updates of one element side by side,
    the last of each run (the last update given) wins, and the winners are written into
    a copy of ``x`` a window at a time (``write``'s indexed mode)."""
    device = x.device
    out = g.realize(g.Op("copy", [x], x.dtype))
    k = index.size
    flat = g.reshape_view(index, (k,))
    vals = g.reshape_view(value, (k,))
    run = slabs.slab_bytes(device) // 8  # updates a sort takes at once (its keys and payloads)
    for at in range(0, k, run):  # runs in order: a later run's updates win over an earlier's
        n = min(run, k - at)
        part = [("slice", at, 1, n)]
        _scatter_last_wins(out, slabs.windowed(g.index_view(flat, part)), g.index_view(vals, part), flag)
    return out


def _scatter_last_wins(out: g.Data, flat: g.Node, vals: g.Node, flag: Flag | None) -> None:
    device = out.device
    k = flat.size
    perm = g.Data(radix_perm(KeySource(flat), k, k, False), (k,), dt.uint32, device)
    at = gather(flat, perm)  # the indices in sorted order, ties in update order
    pos = g.Iota((k,), device)
    nxt = gather(at, g.make_op("add", [pos, g.Const(1, dt.uint32, device, (k,))], dt.uint32))  # 0 past the end
    last = g.make_op("logical_or", [g.make_op("equal", [pos, g.Const(k - 1, dt.uint32, device, (k,))], dt.bool),
                                    g.make_op("not_equal", [at, nxt], dt.bool)], dt.bool)
    valid = g.make_op("less", [at, g.Const(out.size, dt.uint32, device, (k,))], dt.bool)
    if flag is not None:  # an index past x (INVALID included) raises, as the winner kernel's flag does
        bad = g.make_op("cast", [g.make_op("logical_not", [valid], dt.bool)], dt.uint32)
        seen = g.Data(flag.buf, (1,), dt.uint32, device)
        write(seen, g.make_op("maximum", [g.realize(g.Op("copy", [seen], dt.uint32)),
                                          g.reshape_view(reduce_axes(bad, (0,), "max")[0], (1,))], dt.uint32))
    write(g.reshape_view(out, (out.size,)), gather(vals, perm), g.make_op("logical_and", [last, valid], dt.bool), at)


def _concat_by_writes(nodes, axis: int, out_shape) -> g.Data:
    """concat past the binding limit: each input written into its region of the result
    (the region writer runs a slab at a time where a region is wider than a binding)."""
    device = nodes[0].device
    dtype = nodes[0].dtype
    out = g.Data(device.runtime.alloc(max(g.prod(out_shape), 1) * dtype.itemsize), out_shape, dtype, device)
    at = 0
    for nd in nodes:
        k = nd.shape[axis]
        items = [("slice", at, 1, k) if d == axis else ("slice", 0, 1, n) for d, n in enumerate(out_shape)]
        write(g.index_view(out, items), nd)
        at += k
    return out


def concat_nodes(nodes, axis: int, out_shape) -> g.Data:
    """The nodes (one dtype, equal shapes but along ``axis``) joined along ``axis``."""
    device = nodes[0].device
    dtype = nodes[0].dtype
    n = g.prod(out_shape)
    nodes = [nd for nd in nodes if nd.size]
    if n == 0 or not nodes:
        return zeros(out_shape, dtype, device)
    group = 6  # inputs per kernel (their bindings add up); more are joined as a tree
    if len(nodes) > group:
        parts = []
        for i in range(0, len(nodes), group):
            chunk = nodes[i:i + group]
            shp = list(out_shape)
            shp[axis] = sum(c.shape[axis] for c in chunk)
            parts.append(concat_nodes(chunk, axis, tuple(shp)))
        return concat_nodes(parts, axis, out_shape)
    if len(nodes) == 1:
        return g.realize(g.Op("copy", [nodes[0]], dtype))
    rt = device.runtime
    if n * dtype.itemsize > device.max_binding_bytes or (device.big and slabs.too_big(nodes)):
        return _concat_by_writes(nodes, axis, out_shape)
    inputs = [FusedInput(nd) for nd in nodes]
    # the inputs' leaves, the output and the parameter block within the device's
    # bindings: past them, the input with the most leaves is realized first (four
    # pending 0-d graphs of 8 leaves each made 33 bindings on lavapipe's 32)
    limit = binding_limit(device) - 3
    while sum(len(fi.buffers) for fi in inputs) > limit:
        k = max(range(len(inputs)), key=lambda i: len(inputs[i].buffers))
        if len(inputs[k].buffers) <= 1:
            return _concat_by_writes(nodes, axis, out_shape)
        nodes[k] = g.realize(nodes[k])
        inputs[k] = FusedInput(nodes[k])
    head = {"n": n, "inner": g.prod(out_shape[axis + 1:]), "nax": out_shape[axis]}
    off = 0
    for k, nd in enumerate(nodes):
        head[f"start{k}"] = off
        head[f"len{k}"] = nd.shape[axis]
        off += nd.shape[axis]
    pbases = param_bases(3 + 2 * len(nodes), [fi.n_words for fi in inputs])
    spec = (tuple(fi.spec for fi in inputs), dtype.name, device.has_int64, tuple(pbases))
    kernel = rt.compile(("concat", spec), lambda: (gk.concat_record(*spec), gk.render_concat(*spec)))
    out = _out_buffer(rt, n, dtype)
    buffers = _buffers(inputs)
    buffers["O"] = out
    rt.launch(kernel, buffers, kernel.record.pack(**head, **_blocks(inputs)), workgroups(-(-n // 4)))
    return g.Data(out, out_shape, dtype, device)
