"""Searching functions: ``searchsorted`` (binary search of order-preserving keys on the
device) and ``where`` (an elementwise select that fuses). ``argmax``, ``argmin`` and
``count_nonzero`` live in ``_statistical_functions``; ``nonzero`` (device stream
compaction) is written in ``_utility_functions`` and exported from here, where the
standard puts it.
"""
from __future__ import annotations

import builtins

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._graph import slabs
from ._kernels import gather as kg
from ._kernels import sort as ks
from ._array import Array
from ._graph.fusion import FusedInput
from ._validation import check_category
from ._utility_functions import any as _any
from ._utility_functions import nonzero  # noqa: F401 - exported here, where the standard puts it

__all__ = ["nonzero", "searchsorted", "where"]


def searchsorted(x1: Array, x2, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Indices at which inserting ``x2`` into the sorted 1-D ``x1`` keeps it sorted."""
    func = "searchsorted"
    _core.check_array(x1, func, "x1")
    if x1.ndim != 1:
        raise ValueError(f"{func}: expected x1 to be 1-D, got {x1.ndim}-D")
    if side not in ("left", "right"):
        raise ValueError(f"{func}: expected side to be 'left' or 'right', got {side!r}")
    device, common, (a, b) = _core.operands([x1, x2], func, ("x1", "x2"))
    if common.kind not in "biuf":
        raise TypeError(f"{func}: expected real-valued inputs, got {common}")
    m = x1.shape[0]
    if sorter is not None:
        _core.check_array(sorter, func, "sorter")
        check_category(sorter.dtype, "integer", func, "sorter")
        if sorter.shape != x1.shape:
            raise ValueError(f"{func}: expected sorter of shape {x1.shape}, got {sorter.shape}")
        _core.same_device([x1, sorter], func)
        # as NumPy does: a sorter entry outside [0, n) would read past x1 (one flag read back)
        if sorter.size and builtins.bool(_any((sorter < 0) | (sorter >= x1.shape[0]))):
            raise ValueError(f"{func}: expected sorter entries in [0, {x1.shape[0]}), got one outside")
    out_shape = b.shape
    n = g.prod(out_shape)
    if n == 0 or m == 0:
        return Array._new(g.realize(g.Const(0, dt.int64, device, out_shape)))
    b_flat = g.reshape_view(b, (n,)) if not isinstance(b, g.Const) else g.Const(b.value, b.dtype, device, (n,))
    if device.big and builtins.any(slabs.too_big([nd]) for nd in (a, b_flat) + ((sorter._node,) if sorter is not None else ())):
        found = _search_in_pieces(a, b_flat, None if sorter is None else sorter._node, side == "right")
        return Array._new(g.reshape_view(found, out_shape))
    s = FusedInput(sorter._node) if sorter is not None else None
    found = ks.search(ks.KeySource(a), m, s, ks.KeySource(b_flat), n, "searchsorted", side == "right", device)
    node = g.make_op("cast", [found], dt.int64)
    return Array._new(g.reshape_view(node, out_shape))


def _search_in_pieces(a: g.Node, b: g.Node, sorter: g.Node | None, right: bool) -> g.Node:
    """searchsorted past the binding limit: the haystack in pieces that fit a binding (a
    piece of a sorted array is sorted, so the insertion index in the whole is the sum of
    those in its pieces), the needles in slabs; int64 positions."""
    device = a.device
    m, n = a.shape[0], b.shape[0]
    step = slabs.slab_bytes(device) // 8  # elements of a piece (int64 sorter entries at most)

    def piece(node, i, k):
        return slabs.windowed(g.index_view(node, [("slice", i, 1, k)]))

    def search(needles, k_n):
        total = None
        for i in range(0, m, step):
            k = min(step, m - i)
            hay = piece(a, i, k) if sorter is None else g.realize(kg.gather(a, g.make_op("cast", [piece(sorter, i, k)], dt.uint32)))
            found = ks.search(ks.KeySource(hay), k, None, ks.KeySource(needles), k_n, "searchsorted", right, device)
            found = g.make_op("cast", [found], dt.int64)
            total = found if total is None else g.realize(g.make_op("add", [total, found], dt.int64))
        return g.realize(total)

    if n <= step:
        return search(piece(b, 0, n) if type(g.settle(b)) is not g.Const else b, n)
    parts = [search(g.realize(g.Op("copy", [piece(b, j, min(step, n - j))], b.dtype)), min(step, n - j))
             for j in range(0, n, step)]
    return kg.concat_nodes(parts, 0, (n,))


def _scalar_array(value, device):
    """A 0-d array for a Python scalar, in the dtype it takes on its own."""
    if isinstance(value, builtins.bool):
        d = dt.bool
    elif isinstance(value, int):
        d = dt.int64
    elif isinstance(value, float):
        d = device.default_float
    elif isinstance(value, complex):
        d = device.default_complex
    else:
        raise TypeError(f"where: expected x1 to be a wgarray Array or a Python scalar, got {type(value).__name__}")
    return Array._new(_core.const(value, d, device, "where"))


_NOT_GIVEN = object()


def where(condition: Array, x1=_NOT_GIVEN, x2=_NOT_GIVEN, /):
    """Elements of ``x1`` where ``condition`` is True, else of ``x2`` (broadcast).

    ``where(condition)`` alone is ``nonzero(condition)``, as in NumPy and PyTorch (not in
    the standard; scikit-learn's ``roc_curve`` calls it so)."""
    func = "where"
    if x1 is _NOT_GIVEN and x2 is _NOT_GIVEN:
        return nonzero(condition)
    if x1 is _NOT_GIVEN or x2 is _NOT_GIVEN:
        raise TypeError(f"{func}: expected both x1 and x2, or neither, got only "
                        f"{'x1' if x2 is _NOT_GIVEN else 'x2'}")
    _core.check_array(condition, func, "condition")
    check_category(condition.dtype, "bool", func, "condition")
    if not _core.is_array(x1) and not _core.is_array(x2):
        x1 = _scalar_array(x1, condition.device)
    device, common, nodes = _core.operands([x1, x2], func, ("x1", "x2"))
    _core.same_device([condition] + [a for a in (x1, x2) if _core.is_array(a)], func)
    shape, (c, a, b) = _core.broadcast_nodes([condition._node] + nodes, func)
    if all(isinstance(nd, g.Const) for nd in (c, a, b)):
        c = g.realize(g.broadcast_view(c, shape))  # one array source, of the result's shape
    return Array._new(g.make_op("where", [c, a, b], common))
