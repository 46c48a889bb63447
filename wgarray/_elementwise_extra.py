"""Elementwise functions whose signature is not the plain x / x1, x2 form."""
from __future__ import annotations

import numpy as np

from . import _core
from ._graph import node as g
from ._array import Array
from ._ops import OPS

_CATEGORY = OPS["clip"].category


def clip(x: Array, /, min: Array | int | float | None = None, max: Array | int | float | None = None) -> Array:  # noqa: A002
    """Clamp each element of x to [min, max]; a None bound is not applied.

    The result has x's dtype and the broadcast shape of x and the bounds. A NaN in x
    or in a floating bound gives NaN.
    """
    _core.check_array(x, "clip")
    _core.check_category(x.dtype, _CATEGORY, "clip")
    device = x.device
    bounds = []
    for bound, nm in ((min, "min"), (max, "max")):
        if bound is None:
            bounds.append(None)
        elif _core.is_array(bound):
            _core.same_device([x, bound], "clip")
            _core.check_category(bound.dtype, _CATEGORY, "clip", nm)
            bounds.append(_core.cast_node(bound._node, x.dtype))
        elif isinstance(bound, (int, float)) and not isinstance(bound, bool):
            if x.dtype.kind in "iu":
                if isinstance(bound, float):
                    raise TypeError(f"clip: a float {nm} cannot bound an integer array")
                info = np.iinfo(x.dtype.numpy)
                bound = info.min if bound < info.min else info.max if bound > info.max else bound
            bounds.append(_core.const(bound, x.dtype, device, "clip"))
        else:
            raise TypeError(f"clip: expected {nm} to be an Array, a real Python scalar or None, got {type(bound).__name__}")
    present = [b for b in bounds if b is not None]
    shape, nodes = _core.broadcast_nodes([x._node] + present, "clip")
    node = nodes[0]
    rest = iter(nodes[1:])
    if bounds[0] is not None:
        node = g.make_op("maximum", [node, next(rest)], x.dtype)
    if bounds[1] is not None:
        node = g.make_op("minimum", [node, next(rest)], x.dtype)
    if node is nodes[0]:
        node = g.make_op("copy", [node], x.dtype)
    return Array._new(node)
