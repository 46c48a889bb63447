"""Statistical functions: reductions and cumulative scans over axes.

Every reduction is one family of kernels (``_kernels.reduce``): the elementwise
producer of ``x`` (and any cast to the accumulator dtype) is fused into the first pass,
so ``sum((x - 1.5) ** 2)`` runs the same kernels as ``sum(x)``; var and std are one
reduction of (count, mean, squared deviations). Post-maps (mean's
division, std's square root) are computed by the reduction's last pass before it
stores; the cast of a 32-bit partial back to 8 or 16 bits is a lazy elementwise op on
the small result.
"""
from __future__ import annotations

import builtins
import struct

from . import _core
from . import _dtypes as dt
from . import _known
from ._graph import node as g
from ._graph import slabs
from ._ops import REDUCTIONS
from ._kernels import compact as kcompact
from ._kernels import reduce as kr
from ._kernels import scan as kscan
from ._kernels import write as kw
from ._validation import check_category, check_ndim, normalize_axis, reduction_axes
from ._array import Array
from ._elementwise_functions import divide, sqrt

__all__ = ["argmax", "argmin", "count_nonzero", "cumulative_prod", "cumulative_sum", "max", "mean", "min",
           "prod", "std", "sum", "var"]


# ------------------------------------------------------------------ helpers

def _result_shape(shape, axes, keepdims: builtins.bool) -> tuple[int, ...]:
    if keepdims:
        return tuple([1 if d in axes else n for d, n in enumerate(shape)])
    return tuple([n for d, n in enumerate(shape) if d not in axes])


def _sum_dtype(x_dtype: dt.DType, dtype, device, func: str) -> dt.DType:
    """The standard's accumulator dtype of sum/prod/cumulative_*."""
    if dtype is not None:
        dtype = dt.as_dtype(dtype, func)
        device.check_dtype(dtype, func)
        if dtype not in dt.NUMERIC:
            raise TypeError(f"{func}: expected a numeric dtype= argument, got {dtype}")
        if x_dtype.kind == "c" and dtype.kind != "c":
            raise TypeError(f"{func}: cannot accumulate complex {x_dtype} input in real {dtype}")
        return dtype
    if x_dtype.kind in "bi":
        return dt.int64
    if x_dtype.kind == "u":
        return dt.uint64
    return x_dtype


def _check(x, func: str, category: str):
    _core.check_array(x, func)
    check_category(x.dtype, category, func)


def _reduce_node(node: g.Node, axes, kind: str, keepdims: builtins.bool, func: str, post=None) -> g.Node:
    """The reduction of ``node`` (already in its accumulator dtype) over ``axes``, with
    the elementwise map ``post`` (a function of a node) of the result computed by the
    reduction's last pass."""
    shape = _result_shape(node.shape, axes, keepdims)
    length = g.prod([node.shape[d] for d in axes])
    if not axes or length == 0:
        if not axes:
            out = g.reshape_view(node, shape)
        elif kind not in REDUCTIONS or REDUCTIONS[kind].reduction_identity is None:
            raise ValueError(f"{func}: cannot reduce over a zero-size axis (no identity)")
        else:
            out = g.Const(REDUCTIONS[kind].reduction_identity, node.dtype, node.device, shape)
        return post(out) if post is not None else out
    post_key = None if post is None else getattr(post, "key", None)
    buf = None
    if post is None or post_key is not None:  # a repeat on unchanged data: its result (``_known``)
        buf, key, found = _known.reduction(node, (kind, axes, keepdims, post_key))
        if found is not None:
            return found
    vals, ids = kr.reduce_axes(node, axes, kind, post)
    if ids is not None:
        settled = g.settle(ids)
        if type(settled) is g.Data:  # positions within each run (``_known``: no bounds check of an index of them)
            _known.keep_range(settled.buf, 0, length - 1)
        del settled
        out = g.make_op("cast", [ids], dt.int64)
    else:
        out = vals if vals.dtype is node.dtype or post is not None else g.make_op("cast", [vals], node.dtype)
    out = g.reshape_view(out, shape)
    return _known.keep_reduction(buf, key, out) if buf is not None else out


class _DivideBy:
    """The post-map ``t / n`` (then ``then``), built by the namespace's own functions,
    so the result has the bits that dividing the reduced array afterwards gives.

    ``key`` states the map's whole structure and values (``n``'s bits and ``then``): the
    reduction planner memoizes the map's plan by it, so a loop of means or variances
    plans the division once."""

    __slots__ = ("n", "then", "key")

    def __init__(self, n: float, then=None):
        self.n = n
        self.then = then
        self.key = ("divide", struct.pack("<d", n), then)

    def __call__(self, t: g.Node) -> g.Node:
        q = divide(Array._new(t), self.n)
        return (self.then(q) if self.then is not None else q)._node


_divide_by = _DivideBy


def _sum_like(x, axis, dtype, keepdims, func: str, kind: str) -> Array:
    _core.check_array(x, func)
    if x.dtype not in dt.NUMERIC and x.dtype is not dt.bool:
        raise TypeError(f"{func}: expected x to have a numeric dtype, got {x.dtype}")
    axes = reduction_axes(axis, x.ndim, func)
    acc = _sum_dtype(x.dtype, dtype, x.device, func)
    return Array._new(_reduce_node(_core.cast_node(x._node, acc), axes, kind, keepdims, func))


# ---------------------------------------------------------------- reductions

def sum(x: Array, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Array:  # noqa: A001
    """Sum over ``axis``; integers accumulate in int64 (signed, bool) or uint64 (unsigned)
    unless ``dtype`` says otherwise. Float sums are pairwise-like: short serial chains
    per lane, then a tree."""
    return _sum_like(x, axis, dtype, keepdims, "sum", "sum")


def prod(x: Array, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Array:
    """Product over ``axis``, with sum's accumulator dtype rules."""
    return _sum_like(x, axis, dtype, keepdims, "prod", "prod")


def _minmax(x, axis, keepdims, func: str) -> Array:
    _check(x, func, "real-valued")
    axes = reduction_axes(axis, x.ndim, func)
    return Array._new(_reduce_node(x._node, axes, func, keepdims, func))


def max(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:  # noqa: A001
    """Maximum over ``axis``; NaN propagates. Raises ValueError over a zero-size axis."""
    return _minmax(x, axis, keepdims, "max")


def min(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:  # noqa: A001
    """Minimum over ``axis``; NaN propagates. Raises ValueError over a zero-size axis."""
    return _minmax(x, axis, keepdims, "min")


def mean(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:
    """Arithmetic mean over ``axis`` (floating-point input; NaN for an empty reduction).
    The division is done by the sum's last pass."""
    _check(x, "mean", "floating-point")
    axes = reduction_axes(axis, x.ndim, "mean")
    n = g.prod(x.shape[d] for d in axes)
    return Array._new(_reduce_node(x._node, axes, "sum", keepdims, "mean", _divide_by(float(n))))


def var(x: Array, /, *, axis=None, correction: int | float = 0.0, keepdims: builtins.bool = False) -> Array:
    """Variance over ``axis``: ``sum(|x - mean|**2) / max(N - correction, 0)``.
    Complex input gives a real result (the variance of the values in the plane)."""
    return _var(x, axis, correction, keepdims, "var")


def std(x: Array, /, *, axis=None, correction: int | float = 0.0, keepdims: builtins.bool = False) -> Array:
    """Standard deviation: ``sqrt(var(x, ...))``."""
    return _var(x, axis, correction, keepdims, "std", sqrt)


def _var(x, axis, correction, keepdims, func: str, then=None) -> Array:
    """One pass over ``x``: count, mean and sum of squared deviations per chunk
    (Welford), partials merged pairwise (Chan et al.), the division (and ``then``) by
    the last pass. As accurate as centring on the exact mean first (``sum(|x -
    mean(x)|**2)``), with half the reads."""
    _check(x, func, "floating-point")
    if isinstance(correction, builtins.bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{func}: expected correction to be an int or a float, got {type(correction).__name__}")
    axes = reduction_axes(axis, x.ndim, func)
    n = g.prod(x.shape[d] for d in axes)
    post = _divide_by(float(builtins.max(n - correction, 0)), then)
    shape = _result_shape(x.shape, axes, keepdims)
    if n == 0 or x.size == 0:
        real = dt.BY_NAME[{"complex64": "float32", "complex128": "float64"}.get(x.dtype.name, x.dtype.name)]
        return Array._new(post(g.Const(0, real, x.device, shape)))
    return Array._new(g.reshape_view(kr.moments_axes(x._node, axes, post), shape))


def argmax(x: Array, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Array:
    """Index (int64) of the first maximum along ``axis`` (flattened when None); NaN
    counts as the maximum, as in NumPy."""
    return _arg(x, axis, keepdims, "argmax")


def argmin(x: Array, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Array:
    """Index (int64) of the first minimum along ``axis`` (flattened when None); NaN
    counts as the minimum, as in NumPy."""
    return _arg(x, axis, keepdims, "argmin")


def _arg(x, axis, keepdims, func: str) -> Array:
    _check(x, func, "real-valued")
    if axis is not None and not isinstance(axis, int) or isinstance(axis, builtins.bool):
        raise TypeError(f"{func}: expected axis to be None or an int, got {axis!r}")
    axes = reduction_axes(axis, x.ndim, func)
    if x.size == 0:
        if axis is None or builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{func}: cannot take the {func} of an empty array")
        # reduced axes of nonzero length over an empty array: an empty result, as NumPy
        out = tuple(1 if d in axes else n for d, n in enumerate(x.shape) if keepdims or d not in axes)
        return Array._new(g.Const(0, dt.int64, x.device, out))
    if not axes:  # 0-d
        return Array._new(g.Const(0, dt.int64, x.device, x.shape))
    node = x._node
    if axis is None and x.ndim > 1:
        node = g.reshape_view(node, (x.size,))
        res = _reduce_node(node, (0,), func, False, func)
        return Array._new(g.reshape_view(res, (1,) * x.ndim if keepdims else ()))
    return Array._new(_reduce_node(node, axes, func, keepdims, func))


def count_nonzero(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:
    """Number of nonzero elements over ``axis``, as int64 (counted in uint32)."""
    _core.check_array(x, "count_nonzero")
    axes = reduction_axes(axis, x.ndim, "count_nonzero")
    flags = kcompact.nonzero_flags(x._node)
    res = _reduce_node(flags, axes, "sum", keepdims, "count_nonzero")
    return Array._new(_core.cast_node(res, dt.int64))


# --------------------------------------------------------------------- scans

def _cumulative(x, axis, dtype, include_initial, func: str, kind: str) -> Array:
    _core.check_array(x, func)
    if x.dtype not in dt.NUMERIC and x.dtype is not dt.bool:
        raise TypeError(f"{func}: expected x to have a numeric dtype, got {x.dtype}")
    check_ndim(x, func)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{func}: axis must be given for a {x.ndim}-D array")
        axis = 0
    ax = normalize_axis(axis, x.ndim, func)
    acc = _sum_dtype(x.dtype, dtype, x.device, func)
    node = _core.cast_node(x._node, acc)
    out_shape = tuple(n + (1 if include_initial and d == ax else 0) for d, n in enumerate(x.shape))
    if g.prod(out_shape) == 0 or x.shape[ax] == 0:
        return Array._new(g.Const(REDUCTIONS[kind].reduction_identity, acc, x.device, out_shape))
    if slabs.too_big([node]):
        data = _scan_in_slabs(node, ax, kind, include_initial)
    else:
        data = kscan.scan_axis(node, ax, kind, include_initial)
    return Array._new(data if data.dtype is acc else g.make_op("cast", [data], acc))


def _scan_in_slabs(node: g.Node, ax: int, kind: str, include_initial: builtins.bool) -> g.Node:
    """A scan past the binding limit (``_graph.slabs``): rows along ``ax`` a slab at a
    time where a row fits a binding; a 1-D array too long for one as consecutive
    slabs, each scanned and then offset by the running total of those before it."""
    inc = 1 if include_initial else 0
    if node.ndim > 1:
        order = tuple(d for d in range(node.ndim) if d != ax) + (ax,)
        moved = g.permute_view(node, order)
        data = kw.along_last(moved, lambda part: kscan.scan_axis(part, part.ndim - 1, kind, include_initial),
                                moved.shape[-1] + inc, (moved.shape[-1] + inc) * builtins.max(8, node.dtype.itemsize))
        return g.permute_view(data, [order.index(d) for d in range(node.ndim)])
    merge = "add" if kind == "sum" else "multiply"
    out = carry = None
    for items, start, count in slabs.plan(node)[0]:
        part = kscan.scan_axis(slabs.windowed(g.index_view(node, items)), 0, kind, include_initial and start == 0)
        if carry is not None:
            part = g.make_op(merge, [part, g.broadcast_view(carry, part.shape)], part.dtype)
        if out is None:
            out = g.Data(node.device.runtime.alloc((node.size + inc) * part.dtype.itemsize), (node.size + inc,),
                         part.dtype, node.device)
        at = start + (inc if start else 0)
        region = g.index_view(out, [("slice", at, 1, part.shape[0])])
        kw.write(region, part)
        carry = g.realize(g.Op("copy", [g.index_view(out, [("slice", at + part.shape[0] - 1, 1, 1)])], part.dtype))
        carry = g.reshape_view(carry, ())
    return out


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype=None,
                   include_initial: builtins.bool = False) -> Array:
    """Inclusive prefix sums along ``axis`` (sum's accumulator dtype rules); with
    ``include_initial`` the result starts with 0 and is one longer."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_sum", "sum")


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype=None,
                    include_initial: builtins.bool = False) -> Array:
    """Inclusive prefix products along ``axis``; with ``include_initial`` the result
    starts with 1."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_prod", "prod")
