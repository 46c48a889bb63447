"""Utility functions: all, any, diff; and ``nonzero`` (exported by the searching module).

``all``/``any`` are min/max reductions of the truth values (as uint32 0/1) with the
elementwise producer fused in; ``diff`` is lazy elementwise arithmetic on views.
``nonzero`` is stream compaction on the device (``_kernels.compact.nonzero_flat``): only
the count is read back.
"""
from __future__ import annotations

import builtins

from . import _core
from . import _dtypes as dt
from . import _tally
from ._graph import node as g
from ._graph import slabs
from ._kernels import compact as kcompact
from ._array import Array
from ._elementwise_functions import not_equal, subtract
from ._manipulation_functions import concat
from ._statistical_functions import _reduce_node, _result_shape
from ._validation import as_int, check_ndim, normalize_axis, reduction_axes

__all__ = ["all", "any", "diff"]


def _truth(x, axis, keepdims, func: str, kind: str) -> Array:
    _core.check_array(x, func)
    axes = reduction_axes(axis, x.ndim, func)
    flags = kcompact.nonzero_flags(x._node)
    if axes and g.prod(x.shape[d] for d in axes) == 0:
        return Array._new(g.Const(kind == "min", dt.bool, x.device, _result_shape(x.shape, axes, keepdims)))
    res = _reduce_node(flags, axes, kind, keepdims, func)
    return Array._new(_core.cast_node(res, dt.bool))


def all(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:  # noqa: A001
    """Whether every element over ``axis`` is nonzero (True over an empty axis)."""
    return _truth(x, axis, keepdims, "all", "min")


def any(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:  # noqa: A001
    """Whether some element over ``axis`` is nonzero (False over an empty axis)."""
    return _truth(x, axis, keepdims, "any", "max")


def diff(x: Array, /, n: int = 1, axis: int = -1, *, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The ``n``-th forward difference along ``axis``, after joining ``prepend`` and
    ``append`` to ``x`` along it (as ``concat``). Booleans differ by ``!=``, as NumPy.

    ``n`` and ``axis`` may also be given by position, in NumPy's order (the standard
    makes them keyword-only; scikit-learn's ``roc_curve`` calls ``xp.diff(x, 2)``)."""
    _core.check_array(x, "diff")
    check_ndim(x, "diff")
    n = as_int(n, "diff", "n", bool_ok=True)
    if n < 0:
        raise ValueError(f"diff: expected n >= 0, got {n}")
    axis = normalize_axis(axis, x.ndim, "diff")
    if prepend is not None or append is not None:
        parts = []
        for name, p in (("prepend", prepend), ("x", x), ("append", append)):
            if p is None:
                continue
            _core.check_array(p, "diff", name)
            if p.dtype is not x.dtype:
                raise TypeError(f"diff: expected {name} to have dtype {x.dtype}, got {p.dtype}")
            if p.ndim != x.ndim or builtins.any(a != b for i, (a, b) in enumerate(zip(p.shape, x.shape))
                                                 if i != axis):
                raise ValueError(f"diff: {name} of shape {p.shape} does not match x of shape {x.shape} "
                                 f"except along axis {axis}")
            parts.append(p)
        x = concat(parts, axis=axis)
    for _ in range(n):
        length = x.shape[axis]
        if length == 0:
            break
        hi = _slice_axis(x, axis, 1, length - 1)
        lo = _slice_axis(x, axis, 0, length - 1)
        x = not_equal(hi, lo) if x.dtype is dt.bool else subtract(hi, lo)
    return x


def _slice_axis(x: Array, axis: int, start: int, length: int) -> Array:
    items = [("slice", start if d == axis else 0, 1, length if d == axis else n) for d, n in enumerate(x.shape)]
    return Array._new(g.index_view(x._node, items))


def _nonzero_in_slabs(x: Array) -> tuple[Array, ...]:
    """nonzero past the binding limit: each slab's indices (a count read back per slab)
    shifted by the slab's first index along each axis, joined in C order."""
    parts, _ = slabs.plan(x._node)
    pieces = []
    for items, _, _ in parts:
        found = nonzero(Array._new(slabs.windowed(g.index_view(x._node, items))))
        pieces.append([f + it[1] if it[1] else f for f, it in zip(found, items)])
    if len(pieces) == 1:
        return tuple(pieces[0])
    return tuple(concat([p[d] for p in pieces]) for d in range(x.ndim))


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices (int64, one array per dimension) of the nonzero elements of ``x`` in C
    order. Compaction runs on the device; only the count is read back."""
    _core.check_array(x, "nonzero")
    check_ndim(x, "nonzero")
    if x.device.big and slabs.too_big([x._node]):
        return _nonzero_in_slabs(x)
    rows, count = _tally.mask(x._node)
    if rows is not None:  # a tallied (1-D) label test: a slice of the labels' sorting permutation
        return (Array._new(g.make_op("cast", [rows], dt.int64)),)
    flat, count = kcompact.nonzero_flat(x._node, count)
    if x.ndim == 1:
        return (Array._new(flat),)
    if count == 0:
        return tuple(Array._new(flat) for _ in x.shape)
    # Unravel in uint32 (flat indices fit: kernels index in 32 bits), then widen.
    flat32 = g.make_op("cast", [flat], dt.uint32)
    out = []
    inner = g.prod(x.shape)
    for d, n in enumerate(x.shape):
        inner //= n
        node = flat32
        if inner > 1:
            node = g.make_op("floor_divide", [node, g.Const(inner, dt.uint32, x.device, node.shape)], dt.uint32)
        if d > 0:
            node = g.make_op("remainder", [node, g.Const(n, dt.uint32, x.device, node.shape)], dt.uint32)
        out.append(Array._new(g.make_op("cast", [node], dt.int64)))
    return tuple(out)
