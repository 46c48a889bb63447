"""Indexing: ``__getitem__`` and ``__setitem__``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from . import _graph as g
from ._array import Array


def _normalize_basic(shape, key, func="__getitem__"):
    """Normalize a basic index (ints, slices, Ellipsis, None) to _graph.index_view items."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError(f"{func}: an index can only have a single Ellipsis, got {key!r}")
    n_axes = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_axes > len(shape):
        raise IndexError(f"{func}: too many indices for an array of {len(shape)} dimensions: {key!r}")
    items = []
    d = 0
    for k in key:
        if k is Ellipsis:
            for _ in range(len(shape) - n_axes):
                items.append(("slice", 0, 1, shape[d]))
                d += 1
        elif k is None:
            items.append(("new",))
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[d])
            items.append(("slice", start, step, len(range(start, stop, step))))
            d += 1
        else:
            i = operator.index(k)
            n = shape[d]
            if not -n <= i < n:
                raise IndexError(f"{func}: index {i} is out of bounds for axis {d} with size {n}")
            items.append(("int", i % n))
            d += 1
    while d < len(shape):
        items.append(("slice", 0, 1, shape[d]))
        d += 1
    return items


def getitem(x: Array, key) -> Array:
    items = _normalize_basic(x.shape, key)
    return Array._new(g.index_view(x._node, items))


def setitem(x: Array, key, value) -> Array:
    raise NotImplementedError("__setitem__: not yet implemented")
