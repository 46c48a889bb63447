"""Sorting functions: ``sort`` and ``argsort``, by a stable radix sort on the device.

The sorted axis is moved last (a view), every element's flat index is sorted by key
within its row (see ``_kernels.sort.radix_perm``), and the result is gathered (sort)
or reduced to the position along the axis (argsort, an elementwise op that fuses into
its consumer). NaNs sort last in both directions; -0 and +0 are equal.
"""
from __future__ import annotations

import numpy as np

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._graph import slabs
from ._kernels import gather as kg
from ._kernels import reduce as kr
from ._kernels import sort as ks
from ._kernels import write as kw
from ._array import Array
from ._validation import as_bool, check_ndim, normalize_axis

__all__ = ["argsort", "sort"]

_SORTABLE = dt.REAL_NUMERIC + (dt.bool,)


def _moved(x, axis, func: str):
    """(node with ``axis`` moved last, the axis order that undoes it, row length)."""
    _core.check_array(x, func)
    if x.dtype not in _SORTABLE:
        raise TypeError(f"{func}: expected a real-valued or bool dtype, got {x.dtype}")
    check_ndim(x, func)
    axis = normalize_axis(axis, x.ndim, func)
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    back = [order.index(d) for d in range(x.ndim)]
    return g.permute_view(x._node, order), back, x.shape[axis]


def _check_flags(descending, stable, func: str) -> None:
    for name, v in (("descending", descending), ("stable", stable)):
        as_bool(v, func, name)


def _perm(moved: g.Node, seglen: int, descending: bool):
    src = ks.KeySource(moved)
    return ks.radix_perm(src, moved.size, seglen, descending)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (always stable; NaNs last)."""
    moved, back, seglen = _moved(x, axis, "argsort")
    _check_flags(descending, stable, "argsort")
    if x.size == 0 or seglen == 1:
        return Array._new(g.realize(g.Const(0, dt.int64, x.device, x.shape)))
    if slabs.too_big([moved]) and moved.ndim == 1 and 8 * seglen > slabs.slab_bytes(x.device):
        node = _argsort_long(moved, descending)  # one row past the binding limit
    elif slabs.too_big([moved]):  # rows past the binding limit: a slab of rows at a time
        node = kw.along_last(moved, lambda part: _argsort_rows(part, descending),
                                row_bytes=8 * seglen)  # int64 positions, 64-bit keys
    else:
        node = _argsort_rows(moved, descending)
    return Array._new(g.permute_view(g.reshape_view(node, moved.shape), back))


def _argsort_rows(moved: g.Node, descending: bool) -> g.Node:
    """Positions along the last axis that sort each row of ``moved``, as int64."""
    seglen = moved.shape[-1]
    perm = _perm(moved, seglen, descending)
    node: g.Node = g.Data(perm, (moved.size,), dt.uint32, moved.device)
    if seglen != moved.size:
        node = g.make_op("remainder", [node, g.Const(seglen, dt.uint32, moved.device)], dt.uint32)
    return g.reshape_view(g.make_op("cast", [node], dt.int64), moved.shape)


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (always stable; NaNs last, also when descending)."""
    moved, back, seglen = _moved(x, axis, "sort")
    _check_flags(descending, stable, "sort")
    if x.size == 0 or seglen == 1:
        return Array._new(x._node)
    if slabs.too_big([moved]) and moved.ndim == 1 and 8 * seglen > slabs.slab_bytes(x.device):
        data = _sort_long(moved, descending)  # one row past the binding limit
    elif slabs.too_big([moved]):  # rows past the binding limit: a slab of rows at a time
        data = kw.along_last(moved, lambda part: _sort_rows(part, descending),
                             row_bytes=8 * seglen)  # 64-bit keys, 32-bit positions
    else:
        data = _sort_rows(moved, descending)
    return Array._new(g.permute_view(g.reshape_view(data, moved.shape), back))


# buckets a long sort cuts each run into, per run: a bucket then holds about a quarter
# of a run's elements, and seldom more than a whole one
BUCKETS_PER_RUN = 4


def _sort_long(x: g.Node, descending: bool) -> g.Data:
    """A 1-D sort past the binding limit, as a sample sort of sorted runs: each slab
    sorted on its own (a run); splitters from a regular sample of the runs; each run's
    elements split at them by binary search (``search``, whose key order is the sort's:
    NaN last, -0 equal to +0); each bucket (the runs' pieces between two splitters, in
    run order, so equal keys keep their order) sorted and written into its place. A
    bucket past a binding is sorted the same way in turn, or copied where all its keys
    are equal. Descending: the ascending result with its non-NaN part reversed."""
    device = x.device
    rt = device.runtime
    n = x.size
    dtype = x.dtype
    if descending:
        asc = _sort_long(x, False)
        nans = 0
        if dtype.kind == "f":
            count = kr.reduce_axes(g.make_op("cast", [g.make_op("isnan", [asc], dt.bool)], dt.int64), (0,), "sum")[0]
            nans = int(rt.read(_contig(count).buf, _contig(count).offset * 8, 8).view(np.int64)[0])
        if nans >= n:
            return asc
        body = g.index_view(asc, [("slice", n - nans - 1, -1, n - nans)])
        parts = [body] + ([g.index_view(asc, [("slice", n - nans, 1, nans)])] if nans else [])
        return kg.concat_nodes(parts, 0, (n,)) if len(parts) > 1 else g.realize(g.Op("copy", [body], dtype))
    return _sample_sort(x, False)[0]


def _argsort_long(x: g.Node, descending: bool) -> g.Node:
    """argsort of one row past the binding limit: the positions a sample sort carries
    beside its keys (``_sample_sort``). Descending sorts keys of the reversed order
    (negated floats, NaN still last; inverted integer bits; negated bools), so that
    equal keys keep their order, as a stable descending sort's must."""
    if descending:
        op = {"f": "negative", "b": "logical_not"}.get(x.dtype.kind, "bitwise_invert")
        x = g.make_op(op, [x], x.dtype)
    return _sample_sort(x, True)[1]


def _sample_sort(x: g.Node, positions: bool):
    """(keys, positions or None): the ascending stable sort of the 1-D ``x`` past the
    binding limit, and with ``positions`` the int64 index of each sorted key in ``x``."""
    device = x.device
    rt = device.runtime
    n = x.size
    dtype = x.dtype
    per = max(slabs.slab_bytes(device) // 8, 1)  # a run's elements (64-bit keys)
    runs = g.Data(rt.alloc(n * dtype.itemsize), (n,), dtype, device)
    ridx = g.Data(rt.alloc(n * 8), (n,), dt.int64, device) if positions else None
    bounds = [(a, min(a + per, n)) for a in range(0, n, per)]
    for a, b in bounds:
        part = slabs.windowed(g.index_view(x, [("slice", a, 1, b - a)]))
        where = [("slice", a, 1, b - a)]
        if positions:
            perm = _contig(_argsort_rows(part, False))
            kw.write(g.index_view(runs, where), kg.gather(part, g.make_op("cast", [perm], dt.uint32)))
            kw.write(g.index_view(ridx, where), g.make_op("add", [perm, g.Const(a, dt.int64, device, perm.shape)],
                                                          dt.int64))
        else:
            kw.write(g.index_view(runs, where), _sort_rows(part, False))
    # a regular sample of the runs, no larger than one run (so that it sorts in one)
    q = min(BUCKETS_PER_RUN * len(bounds), max(1, per // len(bounds)))
    picks = np.array([a + ((b - a) * (2 * t + 1)) // (2 * q) for a, b in bounds for t in range(q)], np.uint32)
    sample = _sort_rows(kg.gather(runs, g.Data(rt.upload(picks), picks.shape, dt.uint32, device)), False)
    nb = min(BUCKETS_PER_RUN * len(bounds), picks.size)
    cut = np.array([(j * picks.size) // nb for j in range(1, nb)], np.uint32)
    splitters = _distinct(kg.gather(sample, g.Data(rt.upload(cut), cut.shape, dt.uint32, device)))
    m = splitters.size
    edges = []  # per run: [left(s_0), right(s_0), left(s_1), ...] (searchsorted both sides)
    for a, b in bounds:
        run = slabs.windowed(g.index_view(runs, [("slice", a, 1, b - a)]))
        sides = [_contig(ks.search(ks.KeySource(run), b - a, None, ks.KeySource(splitters), m, "searchsorted",
                                   right, device)) for right in (False, True)]
        lr = [rt.read(f.buf, f.offset * 4, 4 * m).view(np.uint32).astype(np.int64) for f in sides]
        edges.append([0] + [int(v) for pair in zip(*lr) for v in pair] + [b - a])
    out = g.Data(rt.alloc(n * dtype.itemsize), (n,), dtype, device)
    oidx = g.Data(rt.alloc(n * 8), (n,), dt.int64, device) if positions else None
    at = 0
    # buckets in order: keys below s_0, keys equal to s_0, keys between s_0 and s_1, ...
    for k in range(2 * m + 1):
        pieces = [(a + e[k], e[k + 1] - e[k]) for (a, _), e in zip(bounds, edges) if e[k + 1] > e[k]]
        size = sum(c for _, c in pieces)
        if not size:
            continue
        where = [("slice", at, 1, size)]
        at += size
        small = 8 * size <= slabs.slab_bytes(device)
        keys = _joined(runs, pieces, small)
        idx = _joined(ridx, pieces, small) if positions else None
        if k % 2:  # keys equal to a splitter: in run order, which is their order
            kw.write(g.index_view(out, where), keys)
            if positions:
                kw.write(g.index_view(oidx, where), idx)
            continue
        if small:
            if positions:
                p = g.make_op("cast", [_contig(_argsort_rows(keys, False))], dt.uint32)
                kw.write(g.index_view(out, where), kg.gather(keys, p))
                kw.write(g.index_view(oidx, where), kg.gather(idx, p))
            else:
                kw.write(g.index_view(out, where), _sort_rows(keys, False))
            continue
        # a bucket past a binding (it holds no splitter, so it is smaller than x): sorted in turn
        sk, sp = _sample_sort(keys, positions)
        kw.write(g.index_view(out, where), sk)
        if positions:
            kw.write(g.index_view(oidx, where), kg.gather(idx, g.make_op("cast", [sp], dt.uint32)))
    return out, oidx


def _joined(data: g.Data, pieces, small: bool) -> g.Node:
    """The ``pieces`` (start, count) of 1-D ``data`` one after another: through windows
    when they fit one binding, else as an array of their own past it."""
    views = [g.index_view(data, [("slice", s0, 1, c)]) for s0, c in pieces]
    size = sum(c for _, c in pieces)
    if small:
        views = [slabs.windowed(v) for v in views]
        return slabs.windowed(views[0]) if len(views) == 1 else kg.concat_nodes(views, 0, (size,))
    return kg.concat_nodes(views, 0, (size,)) if len(views) > 1 else g.realize(g.Op("copy", views, data.dtype))


def _distinct(sorted_keys: g.Data) -> g.Data:
    """The distinct keys of a sorted (small) array, as the sort orders them (-0 equal to
    +0, NaN to NaN): read to the host, the decision being a small data-dependent one."""
    device = sorted_keys.device
    host = np.asarray(device.runtime.read(sorted_keys.buf, sorted_keys.offset * sorted_keys.dtype.itemsize,
                                          sorted_keys.size * sorted_keys.dtype.itemsize).view(
        np.dtype(sorted_keys.dtype.name)))
    keep = np.ones(host.size, bool)
    if host.size > 1:
        same = host[1:] == host[:-1]
        if host.dtype.kind == "f":
            same |= np.isnan(host[1:]) & np.isnan(host[:-1])
        keep[1:] = ~same
    if keep.all():
        return sorted_keys
    picked = np.flatnonzero(keep).astype(np.uint32)
    idx = g.Data(device.runtime.upload(picked), picked.shape, dt.uint32, device)
    return kg.gather(sorted_keys, idx)


def _contig(node: g.Node) -> g.Data:
    node = g.settle(node)
    if type(node) is g.Data and node.is_contiguous:
        return node
    return g.realize(g.Op("copy", [node], node.dtype))


def _sort_rows(moved: g.Node, descending: bool) -> g.Data:
    """Each row (last axis) of ``moved`` sorted: a contiguous Data of its shape."""
    n = moved.size
    seglen = moved.shape[-1]
    src = ks.KeySource(moved)
    if ks.sorts_values(src, n, seglen):
        # one row of 32-bit values: the values themselves travel through the sort
        buf = ks.radix_perm(src, n, seglen, descending, values=True)
        return g.Data(buf, moved.shape, moved.dtype, moved.device)
    perm = g.Data(ks.radix_perm(src, n, seglen, descending), (n,), dt.uint32, moved.device)
    return g.reshape_view(kg.gather(moved, perm), moved.shape)
