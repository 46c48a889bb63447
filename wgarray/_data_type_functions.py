"""Data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""
from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._array import Array
from ._runtime.device import default_device, resolve_device

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def astype(x: Array, dtype, /, *, copy: builtins.bool = True, device=None) -> Array:
    """x converted to ``dtype`` (on ``device``), as NumPy's astype converts values.

    With ``copy=False`` the input itself is returned when no conversion is needed.
    Complex to real conversion is refused (the standard leaves it undefined).
    """
    _core.check_array(x, "astype")
    target = dt.as_dtype(dtype, "astype")
    if device is not None:
        dev = resolve_device(device, "astype")
        if dev is not x.device:
            x = x.to_device(dev)
            copy = False
    x.device.check_dtype(target, "astype")
    if x.dtype.kind == "c" and target.kind != "c":
        raise TypeError(f"astype: cannot convert complex {x.dtype} to real {target}; take real() or abs() first")
    if target is x.dtype:
        return Array._new(g.make_op("copy", [x._node], target)) if copy else x
    return Array._new(_core.cast_node(x._node, target))


def can_cast(from_, to, /) -> builtins.bool:
    """Whether the standard's promotion rules allow casting ``from_`` to ``to``."""
    src = from_.dtype if _core.is_array(from_) else dt.as_dtype(from_, "can_cast")
    dst = dt.as_dtype(to, "can_cast")
    return dt.PROMOTION.get((src, dst)) is dst


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: dt.DType


def finfo(type, /) -> finfo_object:  # noqa: A002 - the standard's name
    d = type.dtype if _core.is_array(type) else dt.as_dtype(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: expected a floating-point dtype, got {d}")
    real = dt.real_of(d)
    info = np.finfo(real.numpy)
    return finfo_object(real.bits, float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), real)


def iinfo(type, /) -> iinfo_object:  # noqa: A002
    d = type.dtype if _core.is_array(type) else dt.as_dtype(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: expected an integer dtype, got {d}")
    info = np.iinfo(d.numpy)
    return iinfo_object(d.bits, int(info.max), int(info.min), d)


_KINDS = {
    "bool": "bool", "signed integer": "signed integer", "unsigned integer": "unsigned integer",
    "integral": "integer", "real floating": "real floating-point",
    "complex floating": "complex floating-point", "numeric": "numeric",
}


def isdtype(dtype, kind) -> builtins.bool:
    """Whether ``dtype`` is ``kind``: a dtype, a kind name, or a tuple of them."""
    d = dt.as_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, dt.DType):
        return d is kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {', '.join(_KINDS)}")
        return d in dt.CATEGORIES[_KINDS[kind]]
    raise TypeError(f"isdtype: expected kind to be a dtype, a kind name or a tuple, got {kind!r}")


def result_type(*arrays_and_dtypes) -> dt.DType:
    """The dtype that combining the arguments gives (arrays, dtypes, Python scalars)."""
    dtypes = []
    scalars = []
    devices = []
    for a in arrays_and_dtypes:
        if _core.is_array(a):
            dtypes.append(a.dtype)
            devices.append(a.device)
        elif isinstance(a, (builtins.bool, int, float, complex)):
            scalars.append(a)
        else:
            dtypes.append(dt.as_dtype(a, "result_type"))
    if not dtypes:
        raise TypeError("result_type: expected at least one array or dtype")
    # The arrays' device decides whether integers widen float32 to float64 (as the
    # operators do); bare dtypes ask the default device.
    device = devices[0] if devices else default_device()
    f64 = all(d.has_f64 for d in devices) if devices else None
    out = dtypes[0]
    for d in dtypes[1:]:
        out = dt.promote(out, d, "result_type", f64=f64)  # what the operators do: int32 + float32 works
    for s in scalars:
        out = dt.promote(out, _core.scalar_dtype(s, out, device, "result_type"), "result_type", f64=f64)
    return out
