"""Argument checks of the namespace: one implementation of each, one message shape.

Errors the user caused are raised at the call, as ``"<func>: expected <what>, got
<given>"``; the helpers here build that text so that a call site states only what
differs (the function, the argument's name, what it should have been).

Axes go through :func:`normalize_axis` / :func:`normalize_axes` only. An axis out of
range, or one named twice, raises :class:`AxisError`, which is both a ``ValueError``
and an ``IndexError`` (as NumPy's ``numpy.exceptions.AxisError``), so code written
against either convention catches it.
"""
from __future__ import annotations

import builtins
import operator

from . import _dtypes as dt

__all__ = ["AxisError", "as_bool", "as_int", "check_category", "check_ndim", "describe", "expected",
           "normalize_axes", "normalize_axis", "reduction_axes"]


class AxisError(ValueError, IndexError):
    """An axis argument out of range for the array (or repeated); ``axis`` and ``ndim``
    hold the offending value and the array's number of dimensions."""

    def __init__(self, message: str, axis=None, ndim=None):
        super().__init__(message)
        self.axis = axis
        self.ndim = ndim


def expected(func: str, what: str, given) -> str:
    """The message ``"<func>: expected <what>, got <given>"``."""
    return f"{func}: expected {what}, got {given}"


def describe(value) -> str:
    """``value`` as a message shows it: Python scalars with their value (``float 2.5``),
    anything else by its type only (a repr could be long, or read an array back)."""
    if value is None or type(value) in (builtins.bool, int, float, complex, str):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def as_int(value, func: str, name: str, *, bool_ok: builtins.bool = False) -> int:
    """``value`` as a Python int (anything with ``__index__``); bools are refused unless
    ``bool_ok``, as NumPy refuses them for axes."""
    if type(value) is int:
        return value
    if isinstance(value, builtins.bool) and not bool_ok:
        raise TypeError(expected(func, f"{name} to be an int", describe(value)))
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(expected(func, f"{name} to be an int", describe(value))) from None


def as_bool(value, func: str, name: str) -> builtins.bool:
    if not isinstance(value, builtins.bool):
        raise TypeError(expected(func, f"{name} to be a bool", describe(value)))
    return value


def check_category(dtype: dt.DType, category: str, func: str, name: str = "x") -> None:
    """Refuse a dtype outside one of the standard's categories (``dt.CATEGORIES``)."""
    if dtype not in dt.CATEGORIES[category]:
        article = "an" if category[0] in "aeiou" else "a"
        raise TypeError(expected(func, f"{name} to have {article} {category} dtype", dtype))


def check_ndim(x, func: str, at_least: int = 1, name: str = "x") -> None:
    """Refuse an array of fewer than ``at_least`` dimensions."""
    if x.ndim < at_least:
        plural = "" if at_least == 1 else "s"
        raise ValueError(expected(func, f"{name} of at least {at_least} dimension{plural}",
                                  f"a {x.ndim}-d array of shape {x.shape}"))


def _out_of_bounds(axis: int, ndim: int, func: str, name: str) -> AxisError:
    # NumPy's wording, which callers match ("axis 10 is out of bounds for array"), then
    # which argument held it
    where = "" if name == "axis" else f" (in {name})"
    return AxisError(f"{func}: axis {axis} is out of bounds for array of dimension {ndim}{where}", axis, ndim)


def normalize_axis(axis, ndim: int, func: str, name: str = "axis") -> int:
    """``axis`` (an int in ``[-ndim, ndim)``) as a non-negative axis."""
    if type(axis) is not int:
        axis = as_int(axis, func, name)
    if not -ndim <= axis < ndim:
        raise _out_of_bounds(axis, ndim, func, name)
    return axis % ndim


def normalize_axes(axis, ndim: int, func: str, name: str = "axis", *,
                   unique: builtins.bool = True) -> tuple[int, ...]:
    """``axis`` (an int, or a tuple or list of ints) as non-negative axes in the given
    order; with ``unique`` an axis named twice (``(0, -2)`` of a 2-d array) is refused."""
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        if type(a) is not int:
            if isinstance(a, builtins.bool) or not hasattr(a, "__index__"):
                raise TypeError(expected(func, f"{name} to be an int or a tuple of ints", describe(axis)))
            a = operator.index(a)
        if not -ndim <= a < ndim:
            raise _out_of_bounds(a, ndim, func, name)
        a %= ndim
        if unique and a in out:
            where = "" if name in ("axis", "axes") else f" in {name}"
            raise AxisError(expected(func, f"distinct axes{where}", tuple(items)), a, ndim)
        out.append(a)
    return tuple(out)


def reduction_axes(axis, ndim: int, func: str) -> tuple[int, ...]:
    """A reduction's ``axis`` (None for all, an int or a tuple of ints) as sorted,
    non-negative, distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:  # the common case, kept cheap
        return (axis % ndim,)
    if not isinstance(axis, tuple) and (isinstance(axis, (builtins.bool, list)) or not hasattr(axis, "__index__")):
        raise TypeError(expected(func, "axis to be None, an int or a tuple of ints", describe(axis)))
    return tuple(sorted(normalize_axes(axis, ndim, func)))
