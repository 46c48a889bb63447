"""Sorting functions: ``sort`` and ``argsort``, by a stable radix sort on the device.

The sorted axis is moved last (a view), every element's flat index is sorted by key
within its row (see ``_kernels.sort.radix_perm``), and the result is gathered (sort)
or reduced to the position along the axis (argsort, an elementwise op that fuses into
its consumer). NaNs sort last in both directions; -0 and +0 are equal.
"""
from __future__ import annotations

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._graph import slabs
from ._kernels import gather as kg
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
    if slabs.too_big([moved]):  # rows past the binding limit: a slab of rows at a time
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
    if slabs.too_big([moved]):  # rows past the binding limit: a slab of rows at a time
        data = kw.along_last(moved, lambda part: _sort_rows(part, descending),
                                row_bytes=8 * seglen)  # 64-bit keys, 32-bit positions
    else:
        data = _sort_rows(moved, descending)
    return Array._new(g.permute_view(g.reshape_view(data, moved.shape), back))


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
