"""The fft extension of the Array API standard (2025.12), computed on the device.

Validation (norms, axes, lengths, dtypes) and the composition of n-D and real
transforms from 1-D transforms along one axis; the plans and kernel launches are the
fft family's (``_kernels/fft.py``), where the algorithm is described.
"""
from __future__ import annotations

import builtins
import math
import operator

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._array import Array
from ._runtime.device import resolve_device
from ._manipulation_functions import roll
from ._kernels import fft as kf
from ._validation import normalize_axes, normalize_axis

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")


# ------------------------------------------------------------------ validation

def _check_norm(norm, func: str) -> str:
    if norm not in _NORMS:
        raise ValueError(f"{func}: expected norm to be one of 'backward', 'ortho', 'forward', got {norm!r}")
    return norm


def _check_n(n, func: str, what: str = "n") -> int:
    try:
        v = operator.index(n)
    except TypeError:
        raise TypeError(f"{func}: expected {what} to be an int, got {type(n).__name__}") from None
    if v < 1:
        raise ValueError(f"{func}: expected {what} >= 1, got {v}")
    return v


def _float_input(x, func: str, *, allow_real: bool, allow_complex: bool, keep_real: bool = False):
    """``x``'s node and the complex dtype of its precision; real inputs are upcast to it
    unless ``keep_real`` (the real transforms read them as they are)."""
    _core.check_array(x, func)
    if x.dtype.kind == "c" and allow_complex:
        return x._node, x.dtype.name
    if x.dtype.kind == "f" and allow_real:
        c = dt.complex_of(x.dtype)
        return (x._node if keep_real else _core.cast_node(x._node, c)), c.name
    want = {(True, True): "floating-point", (True, False): "real floating-point",
            (False, True): "complex floating-point"}[(allow_real, allow_complex)]
    raise TypeError(f"{func}: expected x to have a {want} dtype, got {x.dtype}")


def _scale(norm: str, n: int, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def _swap(norm: str) -> str:
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


# ------------------------------------------------------------------ 1-D functions

def _one(x, n, axis, norm, func, *, kind):
    """fft, ifft, rfft, ihfft (complex output) and irfft, hfft (real output)."""
    _check_norm(norm, func)
    if kind in ("rfft", "ihfft"):
        node, cname = _float_input(x, func, allow_real=True, allow_complex=False, keep_real=True)
    else:
        node, cname = _float_input(x, func, allow_real=True, allow_complex=True)
    if x.ndim == 0:
        raise ValueError(f"{func}: expected an array of at least 1 dimension, got a 0-D array")
    x.device.check_dtype(dt.BY_NAME[cname], func)
    axis = normalize_axis(axis, x.ndim, func)
    m = x.shape[axis]
    if kind in ("irfft", "hfft"):
        n = 2 * (m - 1) if n is None else _check_n(n, func)
        if n < 1:
            raise ValueError(f"{func}: an axis of length {m} gives an output length {n}; pass n >= 1")
    else:
        n = m if n is None else _check_n(n, func)
        if n < 1:
            raise ValueError(f"{func}: expected a non-empty axis (length {m}) or n >= 1")
    # hfft(x) = real(fft(hermitian(x))); ihfft(x) = conj(fft(x))[: n//2 + 1], scaled as inverses
    inverse = kind in ("ifft", "irfft", "ihfft")
    conj_in = kind in ("ifft", "irfft")
    conj_out = kind in ("ifft", "ihfft")
    scale = _scale(norm, n, inverse)
    how = {"rfft": "r2c", "ihfft": "r2c", "irfft": "c2r", "hfft": "c2r"}.get(kind, "c2c")
    out = kf.transform_axis(node, cname, axis, n, kind=how, conj_in=conj_in, conj_out=conj_out, scale=scale, func=func)
    return Array._new(out)


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The 1-D discrete Fourier transform along ``axis``, cropped or zero-padded to ``n``."""
    return _one(x, n, axis, norm, "fft", kind="fft")


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The 1-D inverse discrete Fourier transform along ``axis``."""
    return _one(x, n, axis, norm, "ifft", kind="ifft")


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The 1-D transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _one(x, n, axis, norm, "rfft", kind="rfft")


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``)."""
    return _one(x, n, axis, norm, "irfft", kind="irfft")


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of a Hermitian-symmetric signal given by its first half: real output."""
    return _one(x, n, axis, norm, "hfft", kind="hfft")


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of ``hfft``: the first ``n // 2 + 1`` terms of a Hermitian spectrum."""
    return _one(x, n, axis, norm, "ihfft", kind="ihfft")


# ------------------------------------------------------------------ n-D functions

def _axes_and_s(x, s, axes, func: str):
    ndim = x.ndim
    if s is not None:
        try:
            s = tuple(operator.index(v) for v in s)
        except TypeError:
            raise TypeError(f"{func}: expected s to be a sequence of ints, got {s!r}") from None
    if axes is not None:
        try:
            axes = tuple(operator.index(a) for a in axes)
        except TypeError:
            raise TypeError(f"{func}: expected axes to be a sequence of ints, got {axes!r}") from None
        axes = normalize_axes(axes, ndim, func, "axes")
    if axes is None:
        if s is None:
            axes = tuple(range(ndim))
        else:
            if len(s) > ndim:
                raise ValueError(f"{func}: s has {len(s)} entries but x has only {ndim} dimensions")
            axes = tuple(range(ndim - len(s), ndim))
    if s is None:
        s = tuple(-1 for _ in axes)
    if len(s) != len(axes):
        raise ValueError(f"{func}: expected s and axes of the same length, got {len(s)} and {len(axes)}")
    for v in s:
        if v != -1 and v < 1:
            raise ValueError(f"{func}: expected every entry of s to be >= 1 or -1, got {s}")
    return s, axes


def _nd(x, s, axes, norm, func, *, inverse: bool):
    _check_norm(norm, func)
    node, cname = _float_input(x, func, allow_real=True, allow_complex=True)
    x.device.check_dtype(dt.BY_NAME[cname], func)
    s, axes = _axes_and_s(x, s, axes, func)
    for a, m in reversed(list(zip(axes, s))):
        n = node.shape[a] if m == -1 else m
        if n < 1:
            raise ValueError(f"{func}: axis {a} has length 0; pass a length in s")
        node = kf.transform_axis(node, cname, a, n, kind="c2c", conj_in=inverse, conj_out=inverse,
                               scale=_scale(norm, n, inverse), func=func)
    return Array._new(node)


def fftn(x: Array, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The n-D discrete Fourier transform over ``axes`` (lengths ``s``)."""
    return _nd(x, s, axes, norm, "fftn", inverse=False)


def ifftn(x: Array, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The n-D inverse discrete Fourier transform over ``axes`` (lengths ``s``)."""
    return _nd(x, s, axes, norm, "ifftn", inverse=True)


def rfftn(x: Array, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The n-D transform of real input: ``rfft`` over the last axis, ``fft`` over the others."""
    func = "rfftn"
    _check_norm(norm, func)
    node, cname = _float_input(x, func, allow_real=True, allow_complex=False, keep_real=True)
    x.device.check_dtype(dt.BY_NAME[cname], func)
    s, axes = _axes_and_s(x, s, axes, func)
    if not axes:
        return Array._new(_core.cast_node(node, dt.BY_NAME[cname]))
    last = axes[-1]
    n = node.shape[last] if s[-1] == -1 else s[-1]
    if n < 1:
        raise ValueError(f"{func}: axis {last} has length 0; pass a length in s")
    node = kf.transform_axis(node, cname, last, n, kind="r2c", conj_in=False, conj_out=False,
                           scale=_scale(norm, n, False), func=func)
    for a, m in reversed(list(zip(axes[:-1], s[:-1]))):
        k = node.shape[a] if m == -1 else m
        if k < 1:
            raise ValueError(f"{func}: axis {a} has length 0; pass a length in s")
        node = kf.transform_axis(node, cname, a, k, kind="c2c", conj_in=False, conj_out=False,
                               scale=_scale(norm, k, False), func=func)
    return Array._new(node)


def irfftn(x: Array, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The inverse of ``rfftn``: ``ifft`` over all but the last axis, then ``irfft``."""
    func = "irfftn"
    _check_norm(norm, func)
    node, cname = _float_input(x, func, allow_real=True, allow_complex=True)
    x.device.check_dtype(dt.BY_NAME[cname], func)
    s, axes = _axes_and_s(x, s, axes, func)
    if not axes:
        return Array._new(node)
    for a, m in reversed(list(zip(axes[:-1], s[:-1]))):
        k = node.shape[a] if m == -1 else m
        if k < 1:
            raise ValueError(f"{func}: axis {a} has length 0; pass a length in s")
        node = kf.transform_axis(node, cname, a, k, kind="c2c", conj_in=True, conj_out=True,
                               scale=_scale(norm, k, True), func=func)
    last = axes[-1]
    n = 2 * (node.shape[last] - 1) if s[-1] == -1 else s[-1]
    if n < 1:
        raise ValueError(f"{func}: an axis of length {node.shape[last]} gives an output length {n}; pass s")
    node = kf.transform_axis(node, cname, last, n, kind="c2r", conj_in=True, conj_out=True,
                           scale=_scale(norm, n, True), func=func)
    return Array._new(node)


# ------------------------------------------------------------------ helpers

def _freq_dtype(dtype, device, func: str) -> dt.DType:
    if dtype is None:
        return device.default_float
    d = dt.as_dtype(dtype, func)
    if d.kind != "f":
        raise TypeError(f"{func}: expected a real floating-point dtype, got {d}")
    device.check_dtype(d, func)
    return d


def _check_d(d, func: str) -> float:
    if isinstance(d, builtins.bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{func}: expected d to be a Python float, got {type(d).__name__}")
    return float(d)


def fftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """The sample frequencies of an ``fft`` of length ``n``: ``[0, 1, ..., -1] / (d n)``."""
    func = "fftfreq"
    device = resolve_device(device, func)
    n = _check_n(n, func)
    d = _check_d(d, func)
    dtype = _freq_dtype(dtype, device, func)
    iota = g.Iota((n,), device)
    f = _core.cast_node(iota, dtype)
    half = (n - 1) // 2 + 1
    neg = g.make_op("less", [iota, g.Const(half, dt.uint32, device, (n,))], dt.bool)
    shifted = g.make_op("subtract", [f, g.Const(float(n), dtype, device, (n,))], dtype)
    f = g.make_op("where", [neg, f, shifted], dtype)
    f = g.make_op("multiply", [f, g.Const(1.0 / (n * d), dtype, device, (n,))], dtype)
    return Array._new(g.realize(f))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """The sample frequencies of an ``rfft`` of length ``n``: ``[0, 1, ..., n // 2] / (d n)``."""
    func = "rfftfreq"
    device = resolve_device(device, func)
    n = _check_n(n, func)
    d = _check_d(d, func)
    dtype = _freq_dtype(dtype, device, func)
    m = n // 2 + 1
    f = _core.cast_node(g.Iota((m,), device), dtype)
    f = g.make_op("multiply", [f, g.Const(1.0 / (n * d), dtype, device, (m,))], dtype)
    return Array._new(g.realize(f))


def _shift(x, axes, func: str, inverse: bool) -> Array:
    _core.check_array(x, func)
    ndim = x.ndim
    if axes is None:
        axes = tuple(range(ndim))
    elif hasattr(axes, "__index__"):
        axes = (operator.index(axes),)
    else:
        try:
            axes = tuple(operator.index(a) for a in axes)
        except TypeError:
            raise TypeError(f"{func}: expected axes to be an int or a sequence of ints, got {axes!r}") from None
    shifts = [0] * ndim
    for a in axes:
        a = normalize_axis(a, ndim, func, "axes")
        m = x.shape[a]
        shifts[a] += -(m // 2) if inverse else m // 2
    axes = tuple(d for d in range(ndim) if x.shape[d] and shifts[d] % x.shape[d])
    if x.size == 0 or not axes:
        return x
    return roll(x, tuple(shifts[d] for d in axes), axis=axes)


def fftshift(x: Array, /, *, axes=None) -> Array:
    """Move the zero-frequency term to the centre: a roll by ``n // 2`` along ``axes``."""
    return _shift(x, axes, "fftshift", inverse=False)


def ifftshift(x: Array, /, *, axes=None) -> Array:
    """The inverse of ``fftshift``: a roll by ``-(n // 2)`` along ``axes``."""
    return _shift(x, axes, "ifftshift", inverse=True)

