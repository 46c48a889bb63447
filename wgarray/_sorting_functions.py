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
from ._kernels import gather as kg
from ._kernels import sort as ks
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
    perm = _perm(moved, seglen, descending)
    node: g.Node = g.Data(perm, (x.size,), dt.uint32, x.device)
    if seglen != x.size:
        node = g.make_op("remainder", [node, g.Const(seglen, dt.uint32, x.device)], dt.uint32)
    node = g.make_op("cast", [node], dt.int64)
    return Array._new(g.permute_view(g.reshape_view(node, moved.shape), back))


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (always stable; NaNs last, also when descending)."""
    moved, back, seglen = _moved(x, axis, "sort")
    _check_flags(descending, stable, "sort")
    if x.size == 0 or seglen == 1:
        return Array._new(x._node)
    src = ks.KeySource(moved)
    if ks.sorts_values(src, x.size, seglen):
        # one row of 32-bit values: the values themselves travel through the sort
        buf = ks.radix_perm(src, x.size, seglen, descending, values=True)
        data = g.Data(buf, (x.size,), x.dtype, x.device)
    else:
        perm = g.Data(ks.radix_perm(src, x.size, seglen, descending), (x.size,), dt.uint32, x.device)
        data = kg.gather(moved, perm)
    return Array._new(g.permute_view(g.reshape_view(data, moved.shape), back))
