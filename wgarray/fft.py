"""The fft extension of the Array API standard (2025.12), computed on the device.

Every transform is a sequence of 1-D transforms along one axis. A 1-D transform moves
its axis last (a view), reads the input through a fused loader (so the casts, views and
elementwise producers of ``x`` cost no extra pass, and padding to ``n`` happens in the
loader), and runs Stockham passes (``_wgsl/fft.py``) over a contiguous ``(rows, n)``
work buffer. Lengths whose factors are all 2, 3, 5 or 7 go straight through; any other
length ``n`` goes through Bluestein's chirp-z algorithm: a circular convolution of
length ``M = 2**k >= 2n - 1``, i.e. two power-of-two transforms plus pointwise products
that are folded into the first and last passes.

Twiddle tables (per length and dtype) and Bluestein's filter spectra (per length) are
computed on the device once and cached. The inverse transform is
``conj(fft(conj(x)))``; the conjugations and the norm's scale travel as kernel
parameters, so forward and inverse share pipelines.
"""
from __future__ import annotations

import builtins
import collections
import math
import operator

from . import _core
from . import _dtypes as dt
from . import _graph as g
from ._array import Array
from ._device import resolve_device
from ._manipulation_functions import roll
from ._realize import FusedInput
from ._wgsl import elementwise as ew
from ._wgsl import fft as wf

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")
_MAX_LENGTH = 1 << 29  # the twiddle generator's exact reduction needs 4 * L < 2**32
_CACHE_ENTRIES = 64


# ------------------------------------------------------------------ validation

def _check_norm(norm, func: str) -> str:
    if norm not in _NORMS:
        raise ValueError(f"{func}: expected norm to be one of 'backward', 'ortho', 'forward', got {norm!r}")
    return norm


def _check_axis(axis, ndim: int, func: str) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{func}: expected axis to be an int, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{func}: axis {a} is out of bounds for an array of {ndim} dimensions")
    return a % ndim


def _check_n(n, func: str, what: str = "n") -> int:
    try:
        v = operator.index(n)
    except TypeError:
        raise TypeError(f"{func}: expected {what} to be an int, got {type(n).__name__}") from None
    if v < 1:
        raise ValueError(f"{func}: expected {what} >= 1, got {v}")
    return v


def _float_input(x, func: str, *, allow_real: bool, allow_complex: bool):
    """``x``'s node as complex (real inputs upcast to the complex dtype of their precision)."""
    _core.check_array(x, func)
    if x.dtype.kind == "c" and allow_complex:
        return x._node, x.dtype.name
    if x.dtype.kind == "f" and allow_real:
        c = dt.complex_of(x.dtype)
        return _core.cast_node(x._node, c), c.name
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


# ------------------------------------------------------------------ plans

def _radices(n: int):
    """Stockham radices for ``n`` (8s, then 4s first: fewer passes over memory), or None
    when ``n`` has a factor above 7."""
    out = []
    while n % 8 == 0:
        out.append(8)
        n //= 8
    while n % 4 == 0:
        out.append(4)
        n //= 4
    for r in (2, 3, 5, 7):
        while n % r == 0:
            out.append(r)
            n //= r
    return (out or [1]) if n == 1 else None


def _library(code: str) -> str:
    return ew.library(code)


class _Cache:
    """Small per-process LRU of device tables (twiddles, chirps, Bluestein filters)."""

    def __init__(self, size: int):
        self.size = size
        self.items: collections.OrderedDict = collections.OrderedDict()

    def get(self, key, make):
        found = self.items.get(key)
        if found is None:
            found = make()
            self.items[key] = found
            if len(self.items) > self.size:
                self.items.popitem(last=False)
        else:
            self.items.move_to_end(key)
        return found


_tables = _Cache(_CACHE_ENTRIES)


def _gen(device, mode: str, cname: str, count: int, L: int, n: int = 0):
    rt = device.runtime
    spec = wf.GenSpec(mode, cname)
    kernel = rt.kernel(spec, lambda: (spec.name, wf.render_gen(spec, _library), [True], False))
    buf = rt.alloc(max(count, 1) * dt.BY_NAME[cname].itemsize)
    rt.dispatch(kernel, [buf], wf.gen_params(count, L, n), -(-count // wf.WORKGROUP))
    return buf


def _twiddles(device, N: int, cname: str):
    return _tables.get(("table", device, N, cname), lambda: _gen(device, "table", cname, N, N))


def _chirp(device, n: int, cname: str):
    return _tables.get(("chirp", device, n, cname), lambda: _gen(device, "chirp", cname, n, 2 * n))


def _bluestein_filter(device, n: int, M: int, cname: str):
    """The spectrum (length M) of Bluestein's filter conj(chirp), wrapped around."""

    def make():
        b = _gen(device, "chirpb", cname, M, 2 * n, n)
        return _passes(device, cname, M, 1, src=("buf", b, M), n=M, dst="buf", n_out=M)

    return _tables.get(("filter", device, n, M, cname), make)


def _passes(device, cname: str, N: int, rows: int, *, src, n: int, dst: str, n_out: int,
            herm=False, load_chirp=None, mul_b=None, store_chirp=None,
            conj_in=False, conj_mid=False, conj_out=False, scale=1.0):
    """Run the Stockham passes of one length-N transform over ``rows`` rows.

    ``src`` is ('buf', buffer, row length) or ('input', FusedInput, row length); the
    logical input of each row has ``n`` (<= N) elements, zero past them. The output
    buffer holds ``rows * n_out`` elements (complex, or real when ``dst == 'real'``).
    """
    rt = device.runtime
    radices = _radices(N)
    itemsize = dt.BY_NAME[cname].itemsize
    tw = _twiddles(device, N, cname)
    out_item = itemsize // 2 if dst == "real" else itemsize
    cur = None
    p = 1
    for s, R in enumerate(radices):
        first, last = s == 0, s == len(radices) - 1
        fi = src[1] if first and src[0] == "input" else None
        spec = wf.PassSpec(
            radix=R, cname=cname,
            src="input" if fi is not None else "buf",
            herm=herm and first, load_chirp=load_chirp is not None and first,
            in_spec=fi.spec if fi is not None else None,
            dst=dst if last else "buf",
            mul_b=mul_b is not None and last, store_chirp=store_chirp is not None and last,
        )
        where = spec.layout(len(fi.buffers) if fi is not None else 0)

        def build(spec=spec, fi=fi):
            if fi is not None:
                decls, fns = ew.render_input(fi.spec, "in0_", spec.layout(len(fi.buffers))["in"], wf.PASS_PBASE)
            else:
                decls, fns = [], ""
            n_bufs = spec.layout(len(fi.buffers) if fi is not None else 0)["y"] + 1
            writes = [False] * (n_bufs - 1) + [True]
            return spec.name, wf.render_pass(spec, decls, fns, _library), writes, spec.has_f64_params

        kernel = rt.kernel(spec, build)
        buffers = [None] * (where["y"] + 1)
        buffers[0] = tw
        if fi is not None:
            buffers[where["in"]: where["in"] + len(fi.buffers)] = fi.buffers
            lin = src[2]
        else:
            buffers[where["x"]] = src[1] if first else cur
            lin = src[2] if first else N
        w = load_chirp if first and load_chirp is not None else store_chirp if last else None
        if spec.uses_chirp:
            buffers[where["w"]] = w
        if spec.mul_b:
            buffers[where["b"]] = mul_b
        this_out = n_out if last else N
        out = rt.alloc(max(rows * this_out, 1) * (out_item if last else itemsize))
        buffers[where["y"]] = out
        threads = rows * (N // R)
        params = wf.pass_params(
            threads=threads, N=N, p=p, ts=N // (p * R), lin=lin, n=n if first else N, n_out=this_out,
            conj_in=int(conj_in and first), conj_mid=int(conj_mid and last), conj_out=int(conj_out and last),
            scale=scale if last else 1.0, cname=cname)
        if fi is not None:
            params += fi.params
        rt.dispatch(kernel, buffers, params, -(-threads // wf.WORKGROUP))
        cur = out
        p *= R
    return cur


def _transform_axis(node: g.Node, cname: str, axis: int, n: int, *, herm: bool, real_out: bool,
                    conj_in: bool, conj_out: bool, scale: float, func: str) -> g.Node:
    """One 1-D transform of the complex node along ``axis``: y = S * conj?(fft(conj?(x')))
    where x' is x cropped or zero-padded to ``n`` (or, with ``herm``, the length-n
    Hermitian extension of its first n//2 + 1 elements)."""
    if n > _MAX_LENGTH:
        raise ValueError(f"{func}: transform length {n} exceeds wgarray's limit of {_MAX_LENGTH}")
    device = node.device
    ndim = node.ndim
    perm = [d for d in range(ndim) if d != axis] + [axis]
    node = g.permute_view(node, perm)
    limit = n // 2 + 1 if herm else n
    lin = node.shape[-1]
    if lin > limit:
        items = [("slice", 0, 1, m) for m in node.shape[:-1]] + [("slice", 0, 1, limit)]
        node = g.index_view(node, items)
        lin = limit
    batch = node.shape[:-1]
    rows = g.prod(batch)
    out_dtype = dt.real_of(dt.BY_NAME[cname]) if real_out else dt.BY_NAME[cname]
    out_shape = batch + (n,)
    inv = [0] * ndim
    for i, d in enumerate(perm):
        inv[d] = i
    if rows == 0 or lin == 0:
        return g.permute_view(g.Const(0, out_dtype, device, out_shape), inv)
    work = n if _radices(n) is not None else 1 << (2 * n - 2).bit_length()
    if rows * work >= 1 << 32:
        raise ValueError(f"{func}: {rows} transforms of length {n} exceed wgarray's 2**32 element index range")
    dst = "real" if real_out else "buf"
    fi = FusedInput(node)
    radices = _radices(n)
    if radices is not None:
        buf = _passes(device, cname, n, rows, src=("input", fi, lin), n=n, dst=dst, n_out=n, herm=herm,
                      conj_in=conj_in, conj_out=conj_out, scale=scale)
    else:
        M = 1 << (2 * n - 2).bit_length()
        if M > _MAX_LENGTH:
            raise ValueError(f"{func}: transform length {n} needs a Bluestein length {M} beyond wgarray's limit")
        w = _chirp(device, n, cname)
        filt = _bluestein_filter(device, n, M, cname)
        conv = _passes(device, cname, M, rows, src=("input", fi, lin), n=n, dst="buf", n_out=M, herm=herm,
                       load_chirp=w, mul_b=filt, conj_in=conj_in)
        # inverse of the product: conj(fft(conj(.))) / M, then the output chirp
        buf = _passes(device, cname, M, rows, src=("buf", conv, M), n=M, dst=dst, n_out=n,
                      store_chirp=w, conj_in=True, conj_mid=True, conj_out=conj_out, scale=scale / M)
    data = g.Data(buf, out_shape, out_dtype, device)
    return g.permute_view(data, inv)


def _crop_axis(node: g.Node, axis: int, length: int) -> g.Node:
    items = [("slice", 0, 1, length if d == axis else m) for d, m in enumerate(node.shape)]
    return g.index_view(node, items)


# ------------------------------------------------------------------ 1-D functions

def _one(x, n, axis, norm, func, *, kind):
    """fft, ifft, rfft, ihfft (complex output) and irfft, hfft (real output)."""
    _check_norm(norm, func)
    if kind in ("rfft", "ihfft"):
        node, cname = _float_input(x, func, allow_real=True, allow_complex=False)
    else:
        node, cname = _float_input(x, func, allow_real=True, allow_complex=True)
    if x.ndim == 0:
        raise ValueError(f"{func}: expected an array of at least 1 dimension, got a 0-D array")
    x.device.check_dtype(dt.BY_NAME[cname], func)
    axis = _check_axis(axis, x.ndim, func)
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
    out = _transform_axis(node, cname, axis, n, herm=kind in ("irfft", "hfft"), real_out=kind in ("irfft", "hfft"),
                          conj_in=conj_in, conj_out=conj_out, scale=scale, func=func)
    if kind in ("rfft", "ihfft"):
        out = _crop_axis(out, axis, n // 2 + 1)
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
        for a in axes:
            if not -ndim <= a < ndim:
                raise ValueError(f"{func}: axis {a} is out of bounds for an array of {ndim} dimensions")
        axes = tuple(a % ndim for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{func}: expected distinct axes, got {axes}")
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
        node = _transform_axis(node, cname, a, n, herm=False, real_out=False, conj_in=inverse, conj_out=inverse,
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
    node, cname = _float_input(x, func, allow_real=True, allow_complex=False)
    x.device.check_dtype(dt.BY_NAME[cname], func)
    s, axes = _axes_and_s(x, s, axes, func)
    if not axes:
        return Array._new(node)
    last = axes[-1]
    n = node.shape[last] if s[-1] == -1 else s[-1]
    if n < 1:
        raise ValueError(f"{func}: axis {last} has length 0; pass a length in s")
    node = _transform_axis(node, cname, last, n, herm=False, real_out=False, conj_in=False, conj_out=False,
                           scale=_scale(norm, n, False), func=func)
    node = _crop_axis(node, last, n // 2 + 1)
    for a, m in reversed(list(zip(axes[:-1], s[:-1]))):
        k = node.shape[a] if m == -1 else m
        if k < 1:
            raise ValueError(f"{func}: axis {a} has length 0; pass a length in s")
        node = _transform_axis(node, cname, a, k, herm=False, real_out=False, conj_in=False, conj_out=False,
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
        node = _transform_axis(node, cname, a, k, herm=False, real_out=False, conj_in=True, conj_out=True,
                               scale=_scale(norm, k, True), func=func)
    last = axes[-1]
    n = 2 * (node.shape[last] - 1) if s[-1] == -1 else s[-1]
    if n < 1:
        raise ValueError(f"{func}: an axis of length {node.shape[last]} gives an output length {n}; pass s")
    node = _transform_axis(node, cname, last, n, herm=True, real_out=True, conj_in=True, conj_out=True,
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
        if not -ndim <= a < ndim:
            raise ValueError(f"{func}: axis {a} is out of bounds for an array of {ndim} dimensions")
        m = x.shape[a % ndim]
        shifts[a % ndim] += -(m // 2) if inverse else m // 2
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

