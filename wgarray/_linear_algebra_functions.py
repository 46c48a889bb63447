"""Linear algebra functions of the main namespace."""
from __future__ import annotations

from . import _core
from . import _graph as g
from ._array import Array

__all__ = ["matrix_transpose"]


def matrix_transpose(x: Array, /) -> Array:
    _core.check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: expected an array of at least 2 dimensions, got {x.ndim}-D")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return Array._new(g.permute_view(x._node, axes))
