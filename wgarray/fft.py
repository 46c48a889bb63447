"""The fft extension of the Array API standard (2025.12), computed on the device.

Every transform is a sequence of 1-D transforms along one axis, each addressed in place
as (outer, K, inner) with K the transformed index: no axis is moved. A 1-D transform is
a plan of tile kernels (``_wgsl/fft.py``): one kernel does every Stockham pass of a
length up to the tile capacity (4096 complex64 or 2048 complex128 elements of workgroup
memory) for a group of neighbouring sequences; a longer length, or a strided axis whose
tile would leave too few neighbours for coalesced rows, is a four-step decomposition
N = N1 * N2 (two or three kernels). The first kernel reads the input through a fused
loader (casts, views and elementwise producers cost no extra pass; padding to ``n``
happens there), the last stores the output in its final layout.

Real transforms of even length n run at half length: rfft packs x[2k] + i x[2k+1] in
the loader and splits the half-length spectrum on store (in the same kernel when the
whole transform is one tile, else in one more pass); irfft/hfft form the half-length
sequence in the loader and unpack its transform on store. Odd lengths run at full
length (a Hermitian extension in the loader for c2r, the real part on store).

Lengths whose factors are all 2, 3, 5 or 7 go straight through; any other length
goes through Bluestein's chirp-z algorithm: a circular convolution of length
``M = 2**k >= 2n - 1``, i.e. two power-of-two transforms with the chirps and the filter
product folded into their loaders and storers.

Twiddle tables (per tile length and dtype) and Bluestein's filter spectra (per length)
are computed on the device once and cached; the four-step twiddles are computed in the
kernel from exact integer angles. The inverse transform is ``conj(fft(conj(x)))``; the
conjugations and the norm's scale travel as kernel parameters, so forward and inverse
share pipelines, and no pipeline depends on a length.
"""
from __future__ import annotations

import builtins
import collections
import math
import operator

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._array import Array
from ._runtime.device import resolve_device
from ._manipulation_functions import roll
from ._graph.fusion import FusedInput
from ._validation import normalize_axes, normalize_axis
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
        return _transform(device, cname, M, 1, 1, src=("buf", b), lin=M, n=M, n_out=M)

    return _tables.get(("filter", device, n, M, cname), make)


# ------------------------------------------------------------------ tile plans

def _capacity(device, cname: str) -> int:
    """Elements of one tile: the workgroup memory's power of two, at most 4096 (the
    longest tile whose radices fit the kernel's pass list and register budget)."""
    limit = device.limits.get("max-compute-workgroup-storage-size", 16384)
    per = dt.BY_NAME[cname].itemsize
    return min(4096, 1 << ((limit // per).bit_length() - 1))


def _min_lanes(cname: str) -> int:
    # neighbouring sequences a tile wants along a strided axis: 256 contiguous bytes per
    # row of the tile, so its loads and stores use whole memory segments
    return 256 // dt.BY_NAME[cname].itemsize


class _Step:
    """One tile kernel of a plan: transforms of length L over the batch (outer, A) x the
    J inner elements; strides count K, the index along the axis (units of inner). The
    element k of batch a, inner j is at K = a*IA + j // inner + k*IK; its output m at
    a*OA + j // inner + m*OK. ``tw``: (N, N1, unit) when the store multiplies by the
    four-step twiddle exp(-2 pi i k1 m2 / N) of a level whose index is K' = K // unit,
    with k1 = K' mod N1 and m2 = K' // N1."""

    __slots__ = ("L", "A", "IA", "IK", "OA", "OK", "J", "tw")

    def __init__(self, L, A, IA, IK, OA, OK, J, tw=None):
        self.L, self.A, self.IA, self.IK, self.OA, self.OK, self.J, self.tw = L, A, IA, IK, OA, OK, J, tw

    def scaled(self, f: int) -> "_Step":
        """This step inside a level whose index steps by ``f`` along K."""
        tw = None if self.tw is None else (self.tw[0], self.tw[1], self.tw[2] * f)
        return _Step(self.L, self.A, self.IA * f, self.IK * f, self.OA * f, self.OK * f, self.J, tw)


def _plan(N: int, inner: int, cap: int, want: int) -> list:
    """The tile kernels of a length-N transform along an axis with ``inner`` elements
    after it: one tile when N fits beside enough neighbouring sequences, else the
    four-step N = N1 * N2 (N1 as large as fits), the N2 part planned the same way."""
    lanes = min(inner, want)
    if N * lanes <= cap:
        return [_Step(N, 1, 0, 1, 0, 1, inner)]
    N1 = next(d for d in range(cap // lanes, 1, -1) if N % d == 0 and d < N)
    N2 = N // N1
    first = [s.scaled(N1) for s in _plan(N2, N1 * inner, cap, want)]
    first[-1].tw = (N, N1, 1)
    return first + [_Step(N1, N2, N1, 1, 1, N2, inner)]


def _pow2ceil(v: int) -> int:
    return 1 << max(v - 1, 0).bit_length()


def _transform(device, cname: str, N: int, outer: int, inner: int, *, src, lin: int, n: int, n_out: int,
               load="plain", lchirp=None, store="complex", mul_b=None, schirp=None, conj_in=False,
               conj_mid=False, conj_out=False, scale=1.0, nh=0):
    """Run one length-N transform along K of a (outer, K, inner) layout; returns the
    output buffer, (outer, n_out, inner) of complex (or real: 'real', 'unpack') values.

    ``src`` is ('buf', buffer) holding (outer, lin, inner) or ('input', FusedInput) of
    that shape; the logical input has ``n`` elements along K, zero past them. The load
    and store hooks go to the first and the last kernel of the plan."""
    rt = device.runtime
    cap = _capacity(device, cname)
    steps = _plan(N, inner, cap, _min_lanes(cname))
    if store == "r2c" and len(steps) > 1:
        z = _transform(device, cname, N, outer, inner, src=src, lin=lin, n=n, n_out=N, load=load,
                       lchirp=lchirp, conj_in=conj_in, nh=nh)
        return _split(device, cname, z, outer, N, inner, conj_out=conj_out, scale=scale)
    itemsize = dt.BY_NAME[cname].itemsize
    cur = None
    for idx, st in enumerate(steps):
        first, last = idx == 0, idx == len(steps) - 1
        fi = src[1] if first and src[0] == "input" else None
        spec = wf.TileSpec(
            cname=cname, capacity=cap, src="input" if fi is not None else "buf",
            in_spec=fi.spec if fi is not None else None, load=load if first else "plain",
            lchirp=lchirp is not None and first, store=store if last else "complex",
            mul_b=mul_b is not None and last, schirp=schirp is not None and last, twiddle=st.tw is not None)
        n_in = len(fi.buffers) if fi is not None else 0
        where = spec.layout(n_in)

        def build(spec=spec, n_in=n_in):
            if spec.src == "input":
                decls, fns = ew.render_input(spec.in_spec, "in0_", spec.layout(n_in)["in"], wf.TILE_PBASE)
            else:
                decls, fns = [], ""
            n_bufs = spec.layout(n_in)["y"] + 1
            return spec.name, wf.render_tile(spec, decls, fns, _library), [False] * (n_bufs - 1) + [True], \
                spec.has_f64_params

        kernel = rt.kernel(spec, build)
        buffers = [None] * (where["y"] + 1)
        buffers[0] = _twiddles(device, st.L, cname)
        if fi is not None:
            buffers[where["in"]: where["in"] + n_in] = fi.buffers
        else:
            buffers[where["x"]] = src[1] if first else cur
        if spec.uses_chirp:
            buffers[where["w"]] = lchirp if spec.lchirp else schirp
        if spec.mul_b:
            buffers[where["b"]] = mul_b
        this_out = n_out if last else N
        out_item = itemsize // 2 if spec.store in ("real", "unpack") else itemsize
        out = rt.alloc(max(outer * this_out * inner, 1) * out_item)
        buffers[where["y"]] = out
        lanes_max = min(wf.WORKGROUP, 1 << ((cap // st.L).bit_length() - 1))
        ci = min(_pow2ceil(st.J), lanes_max)
        B = outer * st.A
        cb = min(_pow2ceil(B), lanes_max // ci) if ci >= st.J else 1
        nct = -(-st.J // ci)
        groups = nct * -(-B // cb)
        radices = [] if st.L == 1 else _radices(st.L)
        tw_n, tw_div, tw_unit = st.tw if st.tw is not None else (0, 1, 1)
        params = wf.tile_params(
            groups=groups, L=st.L, radices=radices, log_ci=ci.bit_length() - 1, log_cb=cb.bit_length() - 1,
            J=st.J, nct=nct, B=B, A=st.A, IA=st.IA, IK=st.IK, OA=st.OA, OK=st.OK,
            lin=lin if first else N, n=n if first else N, n_out=this_out, inner=inner,
            conj_in=int(conj_in and first), conj_mid=int(conj_mid and last), conj_out=int(conj_out and last),
            tw_div=tw_div, nh=nh, tw_unit=tw_unit, tw_n=tw_n, scale=scale if last else 1.0, cname=cname)
        if fi is not None:
            params += fi.params
        rt.dispatch(kernel, buffers, params, groups)
        cur = out
    return cur


def _split(device, cname: str, z, outer: int, nh: int, inner: int, *, conj_out: bool, scale: float):
    """The half-length rfft's split of Z (outer, nh, inner) into (outer, nh + 1, inner)."""
    rt = device.runtime
    spec = wf.SplitSpec(cname)
    kernel = rt.kernel(spec, lambda: (spec.name, wf.render_split(spec, _library), [False, True],
                                      spec.has_f64_params))
    count = outer * (nh + 1) * inner
    out = rt.alloc(count * dt.BY_NAME[cname].itemsize)
    params = wf.split_params(count=count, nh=nh, inner=inner, conj_out=int(conj_out), scale=scale, cname=cname)
    rt.dispatch(kernel, [z, out], params, -(-count // wf.WORKGROUP))
    return out


def _bluestein_length(n: int) -> int:
    return 1 << (2 * n - 2).bit_length()


def _transform_axis(node: g.Node, cname: str, axis: int, n: int, *, kind: str, conj_in: bool, conj_out: bool,
                    scale: float, func: str) -> g.Node:
    """One 1-D transform along ``axis``: y = S * conj?(fft(conj?(x'))) where x' is x
    cropped or zero-padded to ``n``. ``kind``: 'c2c'; 'r2c' (real x, the n // 2 + 1
    non-negative frequencies); 'c2r' (x' the length-n Hermitian extension of the first
    n // 2 + 1 elements of x, real output). Even-length real transforms run at half
    length: a real signal packed as n / 2 complex values, and the split (or for c2r its
    inverse, in the loader) of the half-length spectrum."""
    if n > _MAX_LENGTH:
        raise ValueError(f"{func}: transform length {n} exceeds wgarray's limit of {_MAX_LENGTH}")
    device = node.device
    shape = node.shape
    outer, inner = g.prod(shape[:axis]), g.prod(shape[axis + 1:])
    limit = n // 2 + 1 if kind == "c2r" else n
    lin = shape[axis]
    if lin > limit:
        node = _crop_axis(node, axis, limit)
        lin = limit
    n_out = n // 2 + 1 if kind == "r2c" else n
    out_dtype = dt.real_of(dt.BY_NAME[cname]) if kind == "c2r" else dt.BY_NAME[cname]
    out_shape = shape[:axis] + (n_out,) + shape[axis + 1:]
    if outer * inner == 0 or lin == 0:
        return g.Const(0, out_dtype, device, out_shape)
    half = kind != "c2c" and n % 2 == 0
    N = n // 2 if half else n
    smooth = _radices(N) is not None
    work = N if smooth else _bluestein_length(N)
    if outer * inner * max(work, n) >= 1 << 32:
        raise ValueError(f"{func}: {outer * inner} transforms of length {n} exceed wgarray's 2**32 element index range")
    if kind == "r2c" and not half:
        node = _core.cast_node(node, dt.BY_NAME[cname])
    load = {"c2c": "plain", "r2c": "pack" if half else "plain", "c2r": "c2r" if half else "herm"}[kind]
    store = {"c2c": "complex", "r2c": "r2c" if half else "complex", "c2r": "unpack" if half else "real"}[kind]
    fi = FusedInput(node)
    common = dict(lin=lin, n=N, load=load, conj_in=conj_in, nh=N if half else 0)
    if smooth:
        buf = _transform(device, cname, N, outer, inner, src=("input", fi), n_out=N + 1 if store == "r2c" else n_out,
                         store=store, conj_out=conj_out, scale=scale, **common)
    else:
        M = work
        if M > _MAX_LENGTH:
            raise ValueError(f"{func}: transform length {n} needs a Bluestein length {M} beyond wgarray's limit")
        w = _chirp(device, N, cname)
        filt = _bluestein_filter(device, N, M, cname)
        conv = _transform(device, cname, M, outer, inner, src=("input", fi), n_out=M, lchirp=w, mul_b=filt, **common)
        # inverse of the product: conj(fft(conj(.))) / M, then the output chirp
        back = dict(src=("buf", conv), lin=M, n=M, schirp=w, conj_in=True, conj_mid=True)
        if store == "r2c":
            z = _transform(device, cname, M, outer, inner, n_out=N, scale=1.0 / M, **back)
            buf = _split(device, cname, z, outer, N, inner, conj_out=conj_out, scale=scale)
        else:
            buf = _transform(device, cname, M, outer, inner, n_out=n_out, store=store, conj_out=conj_out,
                             scale=scale / M, **back)
    return g.Data(buf, out_shape, out_dtype, device)


def _crop_axis(node: g.Node, axis: int, length: int) -> g.Node:
    items = [("slice", 0, 1, length if d == axis else m) for d, m in enumerate(node.shape)]
    return g.index_view(node, items)


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
    out = _transform_axis(node, cname, axis, n, kind=how, conj_in=conj_in, conj_out=conj_out, scale=scale, func=func)
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
        node = _transform_axis(node, cname, a, n, kind="c2c", conj_in=inverse, conj_out=inverse,
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
    node = _transform_axis(node, cname, last, n, kind="r2c", conj_in=False, conj_out=False,
                           scale=_scale(norm, n, False), func=func)
    for a, m in reversed(list(zip(axes[:-1], s[:-1]))):
        k = node.shape[a] if m == -1 else m
        if k < 1:
            raise ValueError(f"{func}: axis {a} has length 0; pass a length in s")
        node = _transform_axis(node, cname, a, k, kind="c2c", conj_in=False, conj_out=False,
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
        node = _transform_axis(node, cname, a, k, kind="c2c", conj_in=True, conj_out=True,
                               scale=_scale(norm, k, True), func=func)
    last = axes[-1]
    n = 2 * (node.shape[last] - 1) if s[-1] == -1 else s[-1]
    if n < 1:
        raise ValueError(f"{func}: an axis of length {node.shape[last]} gives an output length {n}; pass s")
    node = _transform_axis(node, cname, last, n, kind="c2r", conj_in=True, conj_out=True,
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

