"""Manipulation functions.

Views stay views (no kernel): broadcast_arrays, broadcast_to, expand_dims, flip,
moveaxis, permute_dims, squeeze, unstack, and reshape wherever strides allow.
Data-producing functions run one kernel on the device, reading their inputs as fused
inputs: concat and stack (one concat kernel choosing each element's input), roll, tile
and repeat (a gather through an index computed elementwise from index leaves).
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from . import _indexing as ix
from ._kernels import gather as kg
from ._kernels import sort as ks
from ._kernels.reduce import reduce_rows
from ._kernels.scan import scan_rows
from ._array import Array, Permuted, Reshaped, make_view
from ._validation import as_int, check_ndim, normalize_axes, normalize_axis

__all__ = [
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
]


# ------------------------------------------------------------------ helpers

def _arrays(arrays, func: str):
    if _core.is_array(arrays) or not isinstance(arrays, (tuple, list)):
        raise TypeError(f"{func}: expected a tuple or list of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"{func}: expected at least one array, got none")
    for a in arrays:
        _core.check_array(a, func, "each input")
    device = _core.same_device(arrays, func)
    common = arrays[0].dtype
    for a in arrays[1:]:
        common = dt.promote(common, a.dtype, func, f64=device.has_f64)
    return common


def _full(shape):
    return [("slice", 0, 1, n) for n in shape]


# ------------------------------------------------------------------ broadcasting

def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to."""
    clean = []
    for s in shapes:
        try:
            clean.append(tuple(as_int(n, "broadcast_shapes", "a dimension") for n in s))
        except TypeError:
            raise TypeError(f"broadcast_shapes: expected tuples of ints, got {s!r}") from None
    return _core.broadcast_shapes(*clean, func="broadcast_shapes")


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    for a in arrays:
        _core.check_array(a, "broadcast_arrays", "each input")
    if not arrays:
        return ()
    _core.same_device(arrays, "broadcast_arrays")
    shape = _core.broadcast_shapes(*(a.shape for a in arrays), func="broadcast_arrays")
    return tuple(Array._new(g.broadcast_view(a._node, shape)) for a in arrays)


def broadcast_to(x: Array, /, shape) -> Array:
    _core.check_array(x, "broadcast_to")
    try:
        shape = tuple(as_int(n, "broadcast_to", "shape") for n in shape)
    except TypeError:
        raise TypeError(f"broadcast_to: expected shape to be a tuple of ints, got {shape!r}") from None
    ok = len(shape) >= x.ndim and all(n == m or n == 1 for n, m in zip(reversed(x.shape), reversed(shape)))
    if not ok or any(n < 0 for n in shape):
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {x.shape} to shape {shape}")
    _core.check_size(shape, "broadcast_to")
    return Array._new(g.broadcast_view(x._node, shape))


# ------------------------------------------------------------------ views

def expand_dims(x: Array, /, axis=0) -> Array:
    _core.check_array(x, "expand_dims")
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    out_ndim = x.ndim + n_new
    axes = set(normalize_axes(axis, out_ndim, "expand_dims"))
    items = []
    dims = iter(x.shape)
    for d in range(out_ndim):
        items.append(("new",) if d in axes else ("slice", 0, 1, next(dims)))
    return _basic_view(x, items)


def flip(x: Array, /, *, axis=None) -> Array:
    _core.check_array(x, "flip")
    axes = set(range(x.ndim)) if axis is None else set(normalize_axes(axis, x.ndim, "flip"))
    items = [("slice", n - 1, -1, n) if d in axes else ("slice", 0, 1, n) for d, n in enumerate(x.shape)]
    return _basic_view(x, items)


def _basic_view(x: Array, items) -> Array:
    """``x`` through basic-index items (``g.index_view``'s) as the view NumPy gives:
    it shares ``x``'s elements, writes included (expand_dims, flip, squeeze, unstack)."""
    return x[ix.host_key(items)]


def permute_dims(x: Array, /, axes) -> Array:
    _core.check_array(x, "permute_dims")
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"permute_dims: expected axes to be a tuple of ints, got {type(axes).__name__}")
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: expected {x.ndim} axes for an array of shape {x.shape}, got {tuple(axes)}")
    perm = normalize_axes(axes, x.ndim, "permute_dims", "axes")
    return _permuted(x, perm)


def _permuted(x: Array, perm) -> Array:
    """x with its axes in the order ``perm``: a view that writes through to x, as NumPy's."""
    seen = x._sync()  # before the node: a write in between makes the view re-derive
    out = Array._new(g.permute_view(x._node, perm))
    make_view(out, x, Permuted(perm), seen)
    return out


def moveaxis(x: Array, source, destination, /) -> Array:
    _core.check_array(x, "moveaxis")
    src = normalize_axes(source, x.ndim, "moveaxis", "source")
    dst = normalize_axes(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} differ in length")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permuted(x, order)


def squeeze(x: Array, /, axis) -> Array:
    _core.check_array(x, "squeeze")
    axes = set(normalize_axes(axis, x.ndim, "squeeze"))
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: cannot remove axis {a} of size {x.shape[a]} (shape {x.shape}); "
                             f"expected size 1")
    items = [("int", 0) if d in axes else ("slice", 0, 1, n) for d, n in enumerate(x.shape)]
    return _basic_view(x, items)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    _core.check_array(x, "unstack")
    check_ndim(x, "unstack")
    axis = normalize_axis(axis, x.ndim, "unstack")
    out = []
    for i in range(x.shape[axis]):
        items = _full(x.shape)
        items[axis] = ("int", i)
        out.append(_basic_view(x, items))
    return tuple(out)


def reshape(x: Array, /, shape, *, copy: builtins.bool | None = None) -> Array:
    _core.check_array(x, "reshape")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, builtins.bool):
        shape = (shape,)
    try:
        shape = [as_int(n, "reshape", "shape") for n in shape]
    except TypeError:
        raise TypeError(f"reshape: expected shape to be a tuple of ints, got {shape!r}") from None
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"reshape: expected non-negative dimensions and at most one -1, got {tuple(shape)}")
    if unknown:
        known = g.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {x.size} into shape {tuple(shape)}")
        shape[unknown[0]] = x.size // known
    shape = tuple(shape)
    if g.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) into shape {shape}")
    node = g.settle(x._node)
    if copy is False and isinstance(node, g.Data) and node.size and \
            g.reshape_strides(node.shape, node.strides, shape) is None:
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} with these strides without a copy, "
                         f"but copy=False")
    if copy:
        node = g.make_op("copy", [node], x.dtype)
        return Array._new(g.reshape_view(node, shape))
    if shape == x.shape:
        return x
    # as NumPy: a reshape that its strides allow is a view that writes through
    new_strides = g.reshape_strides(x.shape, ix.numpy_strides(x), shape)
    if new_strides is None:
        return Array._new(g.reshape_view(node, shape))
    seen = x._sync()  # before the node: a write in between makes the view re-derive
    out = Array._new(g.reshape_view(x._node, shape))
    make_view(out, x, Reshaped(shape, x.shape, new_strides), seen)
    return out


# ------------------------------------------------------------------ joins

def concat(arrays, /, *, axis: int | None = 0) -> Array:
    func = "concat"
    common = _arrays(arrays, func)
    nodes = [_core.cast_node(a._node, common) for a in arrays]
    if axis is None:
        nodes = [g.reshape_view(n, (n.size,)) for n in nodes]
        axis = 0
    ndim = nodes[0].ndim
    if ndim == 0 or any(n.ndim != ndim for n in nodes):
        raise ValueError(f"{func}: expected arrays of one number of dimensions (at least 1), got shapes "
                         f"{', '.join(str(a.shape) for a in arrays)}")
    axis = normalize_axis(axis, ndim, func)
    first = nodes[0].shape
    for n in nodes[1:]:
        if any(a != b for d, (a, b) in enumerate(zip(first, n.shape)) if d != axis):
            raise ValueError(f"{func}: expected shapes equal except along axis {axis}, got "
                             f"{', '.join(str(a.shape) for a in arrays)}")
    out = list(first)
    out[axis] = sum(n.shape[axis] for n in nodes)
    if len(nodes) == 1:
        return Array._new(g.make_op("copy", [nodes[0]], common))
    return Array._new(kg.concat_nodes(nodes, axis, tuple(out)))


def stack(arrays, /, *, axis: int = 0) -> Array:
    func = "stack"
    common = _arrays(arrays, func)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError(f"{func}: expected arrays of one shape, got {', '.join(str(a.shape) for a in arrays)}")
    axis = normalize_axis(axis, len(shape) + 1, func)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    nodes = [g.reshape_view(_core.cast_node(a._node, common), new_shape) for a in arrays]
    out = shape[:axis] + (len(arrays),) + shape[axis:]
    if len(nodes) == 1:
        return Array._new(g.make_op("copy", [nodes[0]], common))
    return Array._new(kg.concat_nodes(nodes, axis, out))


# ------------------------------------------------------------------ gathers

def _gather_grid(x: Array, out_shape, coord_of) -> Array:
    """``x`` gathered at the flat index sum_d coord_of(d) * stride_d over ``out_shape``;
    ``coord_of(d)`` returns a uint32 node or None (the plain out coordinate)."""
    device = x.device
    cs = g.contiguous_strides(x.shape)
    plain = [0] * len(out_shape)
    terms = []
    for d in range(len(out_shape)):
        c = coord_of(d)
        if c is None:
            plain[d] = cs[d]
        else:
            terms.append(c if cs[d] == 1 else ix._op("multiply", c, ix.u32(cs[d], device, out_shape)))
    flat = g.Iota(out_shape, device, 0, tuple(plain))
    for t in terms:
        flat = ix._op("add", flat, t)
    return Array._new(kg.gather(x._node, flat))


def roll(x: Array, /, shift, *, axis=None) -> Array:
    func = "roll"
    _core.check_array(x, func)
    if axis is None:
        flat = reshape(x, (x.size,))
        s = as_int(shift, func, "shift") if not isinstance(shift, (tuple, list)) else None
        if s is None:
            raise TypeError(f"{func}: expected an int shift when axis is None, got {shift!r}")
        return reshape(roll(flat, s, axis=0), x.shape)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else None
    axes = normalize_axes(axis, x.ndim, func, unique=False)
    if shifts is None:
        shifts = (as_int(shift, func, "shift"),) * len(axes)
    elif not isinstance(axis, (tuple, list)) or len(shifts) != len(axes):
        raise ValueError(f"{func}: expected shift and axis of one length, got shift={shift!r}, axis={axis!r}")
    total = {}
    for s, a in zip(shifts, axes):
        total[a] = total.get(a, 0) + as_int(s, func, "shift")
    total = {a: s % x.shape[a] for a, s in total.items() if x.shape[a] and s % x.shape[a]}
    if not total or x.size == 0:
        return Array._new(g.make_op("copy", [x._node], x.dtype))
    device = x.device

    def coord(d):
        if d not in total:
            return None
        n = x.shape[d]
        c = ix._op("add", ix.coordinate(x.shape, d, device), ix.u32(n - total[d], device, x.shape))
        return ix._op("remainder", c, ix.u32(n, device, x.shape))

    return _gather_grid(x, x.shape, coord)


def tile(x: Array, repetitions, /) -> Array:
    func = "tile"
    _core.check_array(x, func)
    if not isinstance(repetitions, (tuple, list)):
        raise TypeError(f"{func}: expected repetitions to be a tuple of ints, got {type(repetitions).__name__}")
    reps = tuple(as_int(r, func, "repetitions") for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"{func}: expected non-negative repetitions, got {reps}")
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    xs = (1,) * (ndim - x.ndim) + x.shape
    xv = reshape(x, xs)
    out = tuple(r * n for r, n in zip(reps, xs))
    if g.prod(out) == 0:
        return Array._new(kg.zeros(out, x.dtype, x.device))
    device = x.device

    def coord(d):
        if reps[d] == 1:
            return None
        return ix._op("remainder", ix.coordinate(out, d, device), ix.u32(xs[d], device, out))

    return _gather_grid(xv, out, coord)


def repeat(x: Array, repeats, /, *, axis: int | None = None) -> Array:
    func = "repeat"
    _core.check_array(x, func)
    if axis is None:
        x = reshape(x, (x.size,))
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{func}: expected an array of at least 1 dimension with axis given, got a 0-d array")
    axis = normalize_axis(axis, x.ndim, func)
    n = x.shape[axis]
    device = x.device
    if _core.is_array(repeats):
        return _repeat_array(x, repeats, axis)
    r = as_int(repeats, func, "repeats")
    if r < 0:
        raise ValueError(f"{func}: expected non-negative repeats, got {r}")
    out = x.shape[:axis] + (n * r,) + x.shape[axis + 1:]
    if g.prod(out) == 0:
        return Array._new(kg.zeros(out, x.dtype, device))

    def coord(d):
        if d != axis or r == 1:
            return None
        return ix._op("floor_divide", ix.coordinate(out, d, device), ix.u32(r, device, out))

    return _gather_grid(x, out, coord)


def _repeat_array(x: Array, repeats: Array, axis: int) -> Array:
    """Repeats per element: their running total (a device scan) places each output
    element; a device searchsorted finds its source. The total is the one readback."""
    func = "repeat"
    _core.same_device([x, repeats], func)
    if repeats.dtype not in dt.INTEGER:
        raise TypeError(f"{func}: expected repeats to have an integer dtype, got {repeats.dtype}")
    n = x.shape[axis]
    if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
        raise ValueError(f"{func}: expected repeats of shape () or (1,) or ({n},) for axis {axis} of size {n}, "
                         f"got {repeats.shape}")
    if repeats.size == 1:
        return repeat(x, int(repeats), axis=axis)
    device = x.device
    rt = device.runtime
    rnode = repeats._node
    if repeats._host is not None:
        if (repeats._host < 0).any():
            raise ValueError(f"{func}: expected non-negative repeats")
    elif repeats.dtype.kind == "i" and n:
        neg = g.make_op("cast", [g.make_op("less", [rnode, g.Const(0, repeats.dtype, device, rnode.shape)], dt.bool)],
                        dt.uint32)
        worst, _ = reduce_rows(neg, 1, n, "max")
        if int(rt.read(worst.buf, 0, 4).view("<u4")[0]):
            raise ValueError(f"{func}: expected non-negative repeats")
    if n == 0:
        return Array._new(g.make_op("copy", [x._node], x.dtype))
    counts = g.make_op("cast", [rnode], dt.uint32)
    scan = scan_rows(counts, 1, n, "sum", include_initial=True)  # (1, n + 1): exclusive, then the total
    total = int(rt.read(scan.buf, 4 * n, 4).view("<u4")[0])
    out = x.shape[:axis] + (total,) + x.shape[axis + 1:]
    if g.prod(out) == 0:
        return Array._new(kg.zeros(out, x.dtype, device))
    ends = g.index_view(scan, [("int", 0), ("slice", 1, 1, n)])  # inclusive running totals
    positions = g.Iota((total,), device)
    src_u = ks.search(ks.KeySource(ends), n, None, ks.KeySource(positions), total, "searchsorted", True, device)

    def coord(d):
        if d != axis:
            return None
        return ix.embed(src_u, out, axis)

    return _gather_grid(x, out, coord)
