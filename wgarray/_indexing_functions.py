"""Indexing functions: take and take_along_axis, by the gather family's kernel (``_kernels/gather.py``).

The indices are read through a fused input (negative ones normalized inline), and are
bounds-checked on the host when their values are there, else by the kernel's flag word
(one small readback at the call), so an out-of-bounds index raises IndexError here.
"""
from __future__ import annotations

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from . import _indexing as ix
from ._kernels import gather as kg
from ._array import Array
from ._validation import check_category, check_ndim, normalize_axis

__all__ = ["take", "take_along_axis"]


def _indices(indices, x: Array, func: str):
    _core.check_array(indices, func, "indices")
    _core.same_device([x, indices], func)
    check_category(indices.dtype, "integer", func, "indices")


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` (1-D, integer) along ``axis`` (optional for 1-D x)."""
    func = "take"
    _core.check_array(x, func)
    _indices(indices, x, func)
    if indices.ndim != 1:
        raise ValueError(f"take: expected 1-D indices, got {indices.ndim}-D of shape {indices.shape}")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"take: axis is required for an array of {x.ndim} dimensions")
        axis = 0
    check_ndim(x, func)
    axis = normalize_axis(axis, x.ndim, func)
    entries = [slice(None)] * axis + [("arr", indices, indices._host)] + [slice(None)] * (x.ndim - axis - 1)
    out_shape, flat, flag = ix._plan_advanced(x.shape, entries, x.device, func)
    data = kg.gather(x._node, flat, None, flag)
    ix._check_flag(flag, func, x.shape)
    return Array._new(data)


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` at ``indices`` along ``axis``, matching positions elsewhere (broadcasting)."""
    func = "take_along_axis"
    _core.check_array(x, func)
    _indices(indices, x, func)
    check_ndim(x, func)
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: expected indices with the same number of dimensions as x "
                         f"({x.ndim}), got {indices.ndim}")
    axis = normalize_axis(axis, x.ndim, func)
    xs = list(x.shape)
    js = list(indices.shape)
    xs_b, js_b = list(xs), list(js)
    xs_b[axis] = js_b[axis] = 1
    try:
        out = list(_core.broadcast_shapes(tuple(xs_b), tuple(js_b), func=func))
    except ValueError:
        raise ValueError(f"take_along_axis: x of shape {x.shape} and indices of shape {indices.shape} do not "
                         f"broadcast outside axis {axis}") from None
    out[axis] = js[axis]
    out = tuple(out)
    device = x.device
    n = xs[axis]
    if g.prod(out) and n == 0:
        raise IndexError(f"take_along_axis: cannot take indices from axis {axis} of size 0")
    host = indices._host
    check = host is None and g.prod(out) > 0
    if host is not None and host.size and (host.min() < -n or host.max() >= n):
        bad = host[(host < -n) | (host >= n)].ravel()[0]
        raise IndexError(f"take_along_axis: index {bad} is out of bounds for axis {axis} with size {n}")
    cs = g.contiguous_strides(x.shape)
    strides = [0 if (d == axis or xs[d] == 1) else cs[d] for d in range(x.ndim)]
    flat = g.Iota(out, device, 0, tuple(strides))
    u, ok = ix.normalized_index(g.broadcast_view(indices._node, out), n, check)
    term = u if cs[axis] == 1 else ix._op("multiply", u, ix.u32(cs[axis], device, out))
    flat = ix._op("add", flat, term)
    flag = None
    if ok is not None:
        flat = g.make_op("where", [ok, flat, ix.u32(kg.INVALID, device, out)], dt.uint32)
        flag = kg.Flag(device)
    data = kg.gather(x._node, flat, None, flag)
    ix._check_flag(flag, func, x.shape)
    return Array._new(data)

