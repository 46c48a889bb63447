"""Linear algebra functions of the main namespace: matmul, matrix_transpose, tensordot,
vecdot: validation, promotion and broadcasting; the product itself is the matmul
family's (``_kernels/matmul.py``).
"""
from __future__ import annotations

import operator

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._array import Array
from ._manipulation_functions import permute_dims
from ._kernels.matmul import matmul_nodes
from ._validation import normalize_axes, normalize_axis

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def matrix_transpose(x: Array, /) -> Array:
    _core.check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: expected an array of at least 2 dimensions, got {x.ndim}-D")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return permute_dims(x, axes)  # a view, as NumPy's


# ------------------------------------------------------------------ matmul

def _operands(x1, x2, func: str):
    """Checked arrays, their device and promoted numeric dtype."""
    _core.check_array(x1, func, "x1")
    _core.check_array(x2, func, "x2")
    device = _core.same_device([x1, x2], func)
    dtype = dt.promote(x1.dtype, x2.dtype, func, f64=device.has_f64)
    if dtype not in dt.NUMERIC:
        raise TypeError(f"{func}: expected numeric dtypes, got x1: {x1.dtype}, x2: {x2.dtype}")
    device.check_dtype(dtype, func)
    return device, dtype


def matmul(x1: Array, x2: Array, /) -> Array:
    device, dtype = _operands(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: expected arrays of at least 1 dimension, got shapes {x1.shape} and {x2.shape}")
    k1 = x1.shape[-1]
    k2 = x2.shape[0] if x2.ndim == 1 else x2.shape[-2]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: x1 shape {x1.shape} has {k1} columns, "
                         f"x2 shape {x2.shape} has {k2} rows")
    a = x1._node if x1.ndim > 1 else g.reshape_view(x1._node, (1, k1))
    b = x2._node if x2.ndim > 1 else g.reshape_view(x2._node, (k2, 1))
    batch = _core.broadcast_shapes(a.shape[:-2], b.shape[:-2], func="matmul")
    out = matmul_nodes(_core.cast_node(a, dtype), _core.cast_node(b, dtype), batch)
    shape = batch + (a.shape[-2],) * (x1.ndim > 1) + (b.shape[-1],) * (x2.ndim > 1)
    return Array._new(g.reshape_view(out, shape))


# ------------------------------------------------------------------ tensordot, vecdot

def tensordot(x1: Array, x2: Array, /, *, axes=2) -> Array:
    device, dtype = _operands(x1, x2, "tensordot")
    if isinstance(axes, int) or (hasattr(axes, "__index__") and not isinstance(axes, (tuple, list))):
        n = operator.index(axes)
        if n < 0 or n > x1.ndim or n > x2.ndim:
            raise ValueError(f"tensordot: axes={n} is out of range for shapes {x1.shape} and {x2.shape}")
        ax1 = list(range(x1.ndim - n, x1.ndim))
        ax2 = list(range(n))
    else:
        try:
            ax1, ax2 = axes
            ax1 = [operator.index(a) for a in (ax1 if isinstance(ax1, (tuple, list)) else [ax1])]
            ax2 = [operator.index(a) for a in (ax2 if isinstance(ax2, (tuple, list)) else [ax2])]
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: expected axes to be an int or a pair of sequences of ints, got {axes!r}") from None
        if len(ax1) != len(ax2):
            raise ValueError(f"tensordot: axes {axes!r} name {len(ax1)} axes of x1 but {len(ax2)} of x2")
        ax1 = list(normalize_axes(ax1, x1.ndim, "tensordot", "x1's axes"))
        ax2 = list(normalize_axes(ax2, x2.ndim, "tensordot", "x2's axes"))
    for a1, a2 in zip(ax1, ax2):
        if x1.shape[a1] != x2.shape[a2]:
            raise ValueError(f"tensordot: contracted axis {a1} of x1 (shape {x1.shape}) has size {x1.shape[a1]}, "
                             f"axis {a2} of x2 (shape {x2.shape}) has size {x2.shape[a2]}")
    free1 = [d for d in range(x1.ndim) if d not in ax1]
    free2 = [d for d in range(x2.ndim) if d not in ax2]
    kk = g.prod([x1.shape[d] for d in ax1])
    m = g.prod([x1.shape[d] for d in free1])
    n = g.prod([x2.shape[d] for d in free2])
    a = g.reshape_view(g.permute_view(_core.cast_node(x1._node, dtype), free1 + ax1), (m, kk))
    b = g.reshape_view(g.permute_view(_core.cast_node(x2._node, dtype), ax2 + free2), (kk, n))
    out = matmul_nodes(a, b, ())
    shape = tuple(x1.shape[d] for d in free1) + tuple(x2.shape[d] for d in free2)
    return Array._new(g.reshape_view(out, shape))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    device, dtype = _operands(x1, x2, "vecdot")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot: expected arrays of at least 1 dimension, got shapes {x1.shape} and {x2.shape}")
    shape = _core.broadcast_shapes(x1.shape, x2.shape, func="vecdot")
    ndim = len(shape)
    ax = normalize_axis(axis, ndim, "vecdot")
    for x, nm in ((x1, "x1"), (x2, "x2")):
        d = ax - (ndim - x.ndim)
        if d < 0 or x.shape[d] != shape[ax]:
            raise ValueError(f"vecdot: axis {axis} of x1 (shape {x1.shape}) and x2 (shape {x2.shape}) "
                             f"must have the same size")
    a = _core.cast_node(x1._node, dtype)
    if dtype.kind == "c":
        a = g.make_op("conj", [a], dtype)
    b = _core.cast_node(x2._node, dtype)
    perm = [d for d in range(ndim) if d != ax] + [ax]
    a = g.permute_view(g.broadcast_view(a, shape) if a.shape != shape else a, perm)
    b = g.permute_view(g.broadcast_view(b, shape) if b.shape != shape else b, perm)
    batch = tuple(shape[d] for d in perm[:-1])
    kk = shape[ax]
    a = g.reshape_view(a, batch + (1, kk))
    b = g.reshape_view(b, batch + (kk, 1))
    out = matmul_nodes(a, b, batch)
    return Array._new(g.reshape_view(out, batch))
