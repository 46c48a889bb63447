"""Functions beyond the standard that array-API clients look for on a namespace
(scikit-learn: ``median``, ``bincount``; cubed: the nan-reductions), with NumPy's
semantics, computed on the device. They are exported by ``wgarray`` but are not part
of the standard's ``__all__``.
"""
from __future__ import annotations

import builtins
import math

from . import _core
from . import _dtypes as dt
from ._array import Array
from ._creation_functions import arange, full, zeros
from ._data_type_functions import astype
from ._elementwise_functions import isnan, logical_not
from ._indexing_functions import take
from ._manipulation_functions import expand_dims, permute_dims, reshape, stack
from ._searching_functions import searchsorted, where
from ._sorting_functions import argsort, sort
from ._statistical_functions import cumulative_sum, max, min, sum  # noqa: A004
from ._utility_functions import all  # noqa: A004
from ._validation import check_category, reduction_axes

__all__ = ["bincount", "median", "nanmax", "nanmean", "nanmin", "nansum"]


def _real(x, func: str):
    _core.check_array(x, func)
    check_category(x.dtype, "real-valued", func)


def _keep(out: Array, axes, ndim: int) -> Array:
    """``out`` with the reduced ``axes`` put back as length-1 dimensions."""
    for a in sorted(axes):
        out = expand_dims(out, axis=a)
    return out


def median(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:
    """The median along ``axis`` (NumPy's ``median``): the middle of the sorted values,
    the mean of the two middle ones for an even count; NaN where a slice holds a NaN;
    NaN for an empty slice. Integers give the default floating dtype, as in NumPy."""
    func = "median"
    _real(x, func)
    axes = reduction_axes(axis, x.ndim, func)
    kept = [a for a in range(x.ndim) if a not in axes]
    out_shape = tuple(x.shape[a] for a in kept)
    n = math.prod(x.shape[a] for a in axes)
    fdt = x.dtype if x.dtype.kind == "f" else x.device.default_float
    if n == 0:
        out = full(out_shape, math.nan, dtype=fdt, device=x.device)
    else:
        # the reduced axes last, as one: sort along it, then take the middle
        y = _astype(reshape(permute_dims(x, tuple(kept) + axes), out_shape + (n,)), fdt)
        s = sort(y, axis=-1)
        lo = s[..., (n - 1) // 2]
        hi = s[..., n // 2]
        mid = lo if n % 2 else (lo + hi) / 2.0
        # NaN sorts last: a NaN anywhere in the slice is a NaN at its end
        out = where(isnan(s[..., n - 1]), math.nan, mid) if fdt.kind == "f" else mid
    return _keep(out, axes, x.ndim) if keepdims else out


def _astype(x: Array, d: dt.DType) -> Array:
    return x if x.dtype == d else astype(x, d)


def bincount(x: Array, /, weights: Array | None = None, minlength: int = 0) -> Array:
    """Counts (or summed ``weights``) of each value in the non-negative integer 1-D ``x``
    (NumPy's ``bincount``): length ``max(max(x) + 1, minlength)``. On the device: a sort,
    then a binary search for each bin's edges; weights are summed as differences of a
    prefix sum in sorted order. Only the value range is read back (it sets the shape)."""
    func = "bincount"
    _core.check_array(x, func)
    if x.ndim != 1:
        raise ValueError(f"{func}: expected a 1-D array, got {x.ndim}-D")
    if x.dtype.kind not in "iub":
        raise TypeError(f"{func}: expected an integer array, got {x.dtype}")
    minlength = _core.host_scalar(minlength)
    if _core.is_array(minlength):
        minlength = int(minlength)
    if not isinstance(minlength, int) or isinstance(minlength, builtins.bool) or minlength < 0:
        raise ValueError(f"{func}: expected minlength to be a non-negative int, got {minlength!r}")
    if weights is not None:
        _core.check_array(weights, func, "weights")
        if weights.shape != x.shape:
            raise ValueError(f"{func}: expected weights of shape {x.shape}, got {weights.shape}")
        if weights.dtype not in dt.CATEGORIES["real-valued"]:
            raise TypeError(f"{func}: expected real weights, got {weights.dtype}")
    n = x.shape[0]
    xi = _astype(x, dt.int64)
    if n:
        lohi = [int(v) for v in _stack2(min(xi), max(xi))]
        if lohi[0] < 0:
            raise ValueError(f"{func}: expected non-negative values, got a minimum of {lohi[0]}")
        length = builtins.max(lohi[1] + 1, minlength)
    else:
        length = minlength
    wdt = x.device.default_float
    if n == 0 or length == 0:
        return zeros((length,), dtype=dt.int64 if weights is None else wdt, device=x.device)
    edges = arange(length + 1, dtype=dt.int64, device=x.device)
    if weights is None:
        pos = searchsorted(sort(xi), edges)
        return pos[1:] - pos[:-1]
    order = argsort(xi)
    xs = take(xi, order)
    pos = searchsorted(xs, edges)
    c = cumulative_sum(take(_astype(weights, wdt), order), include_initial=True)
    return take(c, pos[1:]) - take(c, pos[:-1])


def _stack2(a: Array, b: Array):
    return stack([a, b])._numpy()


def _nan_fill(x: Array, value) -> Array:
    return where(isnan(x), value, x) if x.dtype.kind == "f" else x


def nanmax(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:
    """``max`` ignoring NaN (NumPy's ``nanmax``); NaN where a slice is all NaN."""
    return _nan_extreme(x, axis, keepdims, "nanmax", max, -math.inf)


def nanmin(x: Array, /, *, axis=None, keepdims: builtins.bool = False) -> Array:
    """``min`` ignoring NaN (NumPy's ``nanmin``); NaN where a slice is all NaN."""
    return _nan_extreme(x, axis, keepdims, "nanmin", min, math.inf)


def _nan_extreme(x, axis, keepdims, func, reduce, fill) -> Array:
    _real(x, func)
    reduction_axes(axis, x.ndim, func)  # refused in this function's name, not the callee's
    if x.dtype.kind != "f":
        return reduce(x, axis=axis, keepdims=keepdims)
    nan = isnan(x)
    out = reduce(where(nan, fill, x), axis=axis, keepdims=keepdims)
    return where(all(nan, axis=axis, keepdims=keepdims), math.nan, out)


def nansum(x: Array, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Array:
    """``sum`` with NaN counted as zero (NumPy's ``nansum``)."""
    _real(x, "nansum")
    reduction_axes(axis, x.ndim, "nansum")
    return sum(_nan_fill(x, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(x: Array, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Array:
    """``mean`` over the values that are not NaN (NumPy's ``nanmean``); NaN for a slice
    with none. Integers give the default floating dtype."""
    func = "nanmean"
    _real(x, func)
    reduction_axes(axis, x.ndim, func)
    fdt = dt.as_dtype(dtype, func) if dtype is not None else (
        x.dtype if x.dtype.kind == "f" else x.device.default_float)
    xf = _astype(x, fdt)
    total = sum(_nan_fill(xf, 0.0), axis=axis, keepdims=keepdims)
    count = sum(_astype(logical_not(isnan(xf)), fdt), axis=axis, keepdims=keepdims)
    return total / count
