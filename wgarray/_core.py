"""Shared machinery of the namespace: operand checks, promotion, broadcasting, and
building elementwise nodes. Namespace functions validate here, eagerly; graph nodes
below are strict (one dtype, one shape) and never promote.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _dtypes as dt
from ._graph import node as g
from ._array import Array
from ._ops import FUNCTIONS, shortcuts
from ._runtime.device import Device, default_device
from ._validation import check_category  # noqa: F401 - callers use _core.check_category

_PY_SCALARS = (builtins.bool, int, float, complex)


def is_array(x) -> builtins.bool:
    return isinstance(x, Array)


def check_array(x, func: str, name: str = "x"):
    if not is_array(x):
        raise TypeError(f"{func}: expected {name} to be a wgarray Array, got {type(x).__name__}")
    return x


def broadcast_shapes(*shapes, func: str = "broadcast_shapes") -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        pad = ndim - len(s)
        for i, n in enumerate(s):
            cur = out[pad + i]
            if n == cur or n == 1:
                continue
            if cur == 1:
                out[pad + i] = n
            else:
                raise ValueError(f"{func}: shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be broadcast together")
    return tuple(out)


# Kernels index elements with 32-bit integers (WGSL's u32), but an array of more than
# 2**32 elements is past every device's storage-binding limit (at least a byte an
# element, and Vulkan's largest binding is below 4 GiB), so kernels see it a slab at a
# time (``_graph.slabs``), each slab's elements counted from its start; only shapes
# whose element count overflows 64-bit offsets are refused.
MAX_ELEMENTS = 2**63 - 1


def check_size(shape, func: str) -> None:
    n = g.prod(shape)
    if n > MAX_ELEMENTS:
        raise ValueError(f"{func}: expected at most 2**63 - 1 elements (64-bit offsets), got shape "
                         f"{tuple(shape)} with {n} elements")


def same_device(arrays, func: str) -> Device:
    devices = {a.device for a in arrays}
    if len(devices) > 1:
        names = ", ".join(str(d) for d in devices)
        raise ValueError(f"{func}: arrays are on different devices ({names}); move them with to_device first")
    return next(iter(devices)) if devices else default_device()


# ------------------------------------------------------------------- scalars

def is_host_scalar(value) -> builtins.bool:
    """A NumPy scalar or 0-d NumPy array: taken wherever a Python scalar is, as CuPy does."""
    return isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0)


def host_scalar(value):
    """``value`` as a Python scalar if it is a NumPy scalar or 0-d array, else unchanged."""
    if is_host_scalar(value) and value.dtype.kind in "biufc":
        return value.item()
    return value


def scalar_dtype(value, like: dt.DType, device: Device, func: str) -> dt.DType:
    """The dtype a Python scalar takes beside an array of dtype ``like``."""
    if isinstance(value, builtins.bool):
        return like
    if isinstance(value, int):
        return like if like is not dt.bool else dt.int64
    if isinstance(value, float):
        return like if like.kind in "fc" else device.default_float
    if isinstance(value, complex):
        return like if like.kind == "c" else (dt.complex_of(like) if like.kind == "f" else device.default_complex)
    raise TypeError(f"{func}: expected an Array or a Python scalar, got {type(value).__name__}")


def check_scalar_fits(value, dtype: dt.DType, func: str):
    """The scalar as a value of ``dtype``; integers must fit."""
    if dtype is dt.bool:
        if not isinstance(value, builtins.bool):
            raise TypeError(f"{func}: expected a bool scalar for a bool array, got {type(value).__name__}")
        return value
    if dtype.kind in "iu":
        if isinstance(value, (float, complex)):
            raise TypeError(f"{func}: a {type(value).__name__} scalar cannot combine with an integer array")
        info = np.iinfo(dtype.numpy)
        v = int(value)
        if not info.min <= v <= info.max:
            raise OverflowError(f"{func}: Python int {v} is out of range for {dtype} [{info.min}, {info.max}]")
        return v
    if dtype.kind == "f":
        if isinstance(value, complex):
            raise TypeError(f"{func}: a complex scalar cannot combine with a real array here")
        return float(value)
    return complex(value)


def const(value, dtype: dt.DType, device: Device, func: str) -> g.Const:
    return g.Const(check_scalar_fits(value, dtype, func), dtype, device)


# ---------------------------------------------------------------- operands

def operands(args, func: str, names=("x1", "x2", "x3")):
    """Check the operands of an elementwise function and find the result dtype.

    Returns (device, dtype, nodes) with each operand as a node of that dtype (Python
    scalars as Consts), not yet broadcast. This is the hot path of every lazy op.
    """
    device = None
    common = None
    for a in args:
        if isinstance(a, Array):
            node = a._node
            if device is None:
                device, common = node.device, node.dtype
            else:
                if node.device is not device:
                    same_device([x for x in args if isinstance(x, Array)], func)
                if node.dtype is not common:
                    common = dt.promote(common, node.dtype, func, f64=device.has_f64)
        elif not isinstance(a, _PY_SCALARS):
            if is_host_scalar(a):  # NumPy scalars and 0-d arrays act as Python scalars
                return operands(tuple(host_scalar(x) for x in args), func, names)
            nm = next((n for x, n in zip(args, names) if x is a), "an operand")
            raise TypeError(f"{func}: expected {nm} to be a wgarray Array or a Python scalar, got {type(a).__name__}")
    if device is None:
        raise TypeError(f"{func}: expected at least one wgarray Array operand, got "
                        + ", ".join(type(a).__name__ for a in args))
    for a in args:
        if not isinstance(a, Array):
            sd = scalar_dtype(a, common, device, func)
            if sd is not common:
                common = dt.promote(common, sd, func, f64=device.has_f64)
    if common in dt.NEEDS_F64:
        device.check_dtype(common, func)
    nodes = []
    for a in args:
        if isinstance(a, Array):
            node = a._node
            nodes.append(node if node.dtype is common else cast_node(node, common))
        else:
            nodes.append(const(a, common, device, func))
    return device, common, nodes


def cast_node(node: g.Node, dtype: dt.DType) -> g.Node:
    if node.dtype is dtype:
        return node
    if isinstance(node, g.Const):
        return g.Const(_cast_scalar(node.value, dtype), dtype, node.device, node.shape)
    return g.make_op("cast", [node], dtype)


def _cast_scalar(value, dtype: dt.DType):
    return np.array(value).astype(dtype.numpy).item()


def _is_scalar(node) -> builtins.bool:
    """A Python scalar operand: a 0-d Const, which every op takes as it is. A Const
    with a shape (imag of a real array, a sum over an empty axis) is an array."""
    return isinstance(node, g.Const) and node.shape == ()


def broadcast_nodes(nodes, func: str):
    shapes = {n.shape for n in nodes if not _is_scalar(n)}
    if len(shapes) <= 1:
        return (shapes.pop() if shapes else ()), nodes
    shape = broadcast_shapes(*(n.shape for n in nodes), func=func)
    check_size(shape, func)
    return shape, [n if _is_scalar(n) else g.broadcast_view(n, shape) for n in nodes]


# The ops with shortcuts or operand rules of their own (wgarray/_ops.py): looked up once
# per call, so that the other ops pay one dict miss.
_SHORTCUTS = shortcuts()


# The ops whose only shortcut is by a scalar right operand (pow: x ** 2 -> square),
# which the fast path takes too: {name: {scalar: cheaper op}}.
_RHS_ONLY = {name: op.scalar_rhs for name, op in _SHORTCUTS.items()
             if op.scalar_rhs and not (op.passthrough or op.zeros_on or op.truth)}
# The category tuples as sets, for the fast path's membership test.
_CATEGORY_SETS = {name: frozenset(dtypes) for name, dtypes in dt.CATEGORIES.items()}
_FAST_RULES = ("same", "bool", "float")


def _fast_binary(name: str, x: Array, other, x_first: builtins.bool, category: str, rule: str):
    """The common lazy op, built without the general path's checks: an array with a
    Python float or int scalar (either side), or two arrays of one dtype, shape and
    device. None where any of that does not hold: the general path then decides,
    errors included. A loop step is a few of these (measured on lavapipe's host: 11 ->
    5 us per op)."""
    node = x._node
    if type(node) is g.Const:  # an op needs a source that is not a scalar
        return None
    dtype = node.dtype
    kind = dtype.kind
    t = type(other)
    if t is float:
        if kind != "f":
            return None
        other = g.Const(other, dtype, node.device)
    elif t is int:
        if kind == "f":
            other = g.Const(float(other), dtype, node.device)
        elif kind in "iu":
            other = g.Const(check_scalar_fits(other, dtype, name), dtype, node.device)
        else:
            return None
    elif t is Array:
        other = other._node
        if other.dtype is not dtype or other.shape != node.shape or other.device is not node.device:
            return None
    else:
        return None
    if dtype not in _CATEGORY_SETS[category]:
        return None
    if rule == "bool":
        out = dt.bool
    elif rule == "same" or kind in "fc":  # "float" keeps a floating dtype
        out = dtype
    else:
        return None
    rhs = _RHS_ONLY.get(name)
    if rhs is not None and x_first and type(other) is g.Const:  # x ** 2 is x * x, as on the general path
        cheaper = rhs.get(other.value)
        if cheaper is not None:
            return Array._new(g.make_op(cheaper, [node], out))
    srcs = [node, other] if x_first else [other, node]
    return Array._new(g.make_op(name, srcs, out))


# The binary operators' ops that the fast path takes as they are: {name: (category, rule)}.
_FAST_OPERATORS = {name: (op.category, op.result) for name, op in FUNCTIONS.items()
                   if len(op.params) == 2 and op.result in _FAST_RULES
                   and (name not in _SHORTCUTS or name in _RHS_ONLY)}


def fast_operator(name: str, x: Array, other, x_first: builtins.bool):
    """``x <op> other`` (``other <op> x`` where not ``x_first``) by ``_fast_binary``, for
    Array's operators, which then skip the operand check and the generated wrapper of
    the general path (a loop step's lazy ops: ~1 us of the ~3.5 of ``x * 2.0`` on
    lavapipe's host). None where the fast path does not hold."""
    found = _FAST_OPERATORS.get(name)
    if found is None:
        return None
    return _fast_binary(name, x, other, x_first, found[0], found[1])


def elementwise_function(name: str, args, category: str, rule: str):
    """What every generated elementwise wrapper calls (the op's declaration is in
    wgarray/_ops.py)."""
    if len(args) == 2 and rule in _FAST_RULES and (name not in _SHORTCUTS or name in _RHS_ONLY):
        a, b = args
        if type(a) is Array:
            out = _fast_binary(name, a, b, True, category, rule)
            if out is not None:
                return out
        elif type(b) is Array and type(a) in (float, int):  # the scalar first: 1.0 - x
            out = _fast_binary(name, b, a, False, category, rule)
            if out is not None:
                return out
    names = ("x",) if len(args) == 1 else ("x1", "x2")
    device, common, nodes = operands(args, name, names)
    special = _SHORTCUTS.get(name)
    if rule == "float" and common.kind in "iu":  # integers only: bool is not a number here
        common = device.default_float
        nodes = [cast_node(n, common) for n in nodes]
    elif special is not None and special.truth and common.kind in "iufc":
        # logical_*: the standard asks for bool; numbers count as their truth (nonzero,
        # NaN included), as in NumPy and PyTorch, which array-API code (scikit-learn's
        # roc_curve) relies on
        common = dt.bool
        nodes = [cast_node(n, common) for n in nodes]
    if common not in dt.CATEGORIES[category]:
        which = ", ".join(f"{nm}: {a.dtype}" for nm, a in zip(names, args) if is_array(a))
        raise TypeError(f"{name}: expected {category} input, got {which}")
    if special is not None:
        if common.kind in special.passthrough:
            return Array._new(nodes[0])
        if common.kind in special.zeros_on:
            return Array._new(g.Const(0, common, device, nodes[0].shape))
        if special.scalar_rhs and _is_scalar(nodes[1]) and not isinstance(nodes[0], g.Const):
            # Exact fast paths, as NumPy takes them: x**2 is x*x and x**1 is x, special
            # cases included, and both are far cheaper than a general pow.
            cheaper = special.scalar_rhs.get(nodes[1].value)
            if cheaper is not None:
                return Array._new(g.make_op(cheaper, nodes[:1], common))
    shape, nodes = broadcast_nodes(nodes, name)
    if all(isinstance(n, g.Const) for n in nodes):
        # an op needs one array source: the Const that has the result's shape
        i = next(k for k, n in enumerate(nodes) if n.shape == shape)
        nodes = nodes[:i] + [g.realize(nodes[i])] + nodes[i + 1:]
    out = {"same": common, "float": common, "bool": dt.bool, "real": dt.real_of(common)}[rule]
    return Array._new(g.make_op(name, nodes, out))
