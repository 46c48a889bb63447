"""The fft family's host driver: plans of tile kernels (``_wgsl/fft.py``) for 1-D
transforms along one axis, their device tables, and the kernel launches.

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

Twiddle tables (per tile length, or a planned tile's radices, and dtype) and
Bluestein's filter spectra (per length) are computed on the device once and cached;
the four-step twiddles are computed in the kernel from exact integer angles. The
inverse transform is ``conj(fft(conj(x)))``; the conjugations and the norm's scale
travel as kernel parameters, so forward and inverse share pipelines. A tile's length
is part of its pipeline (``PLANNED``): a new length compiles its tiles once, whatever
the batch, the data or the direction.
"""
from __future__ import annotations

import collections

from .. import _dtypes as dt
from .._graph import node as g
from .._graph import slabs
from .._graph.fusion import FusedInput
from .._runtime.launch import workgroups
from .._wgsl import elementwise as ew
from .._wgsl import fft as wf
from .write import along_last

_MAX_LENGTH = 1 << 29  # the twiddle generator's exact reduction needs 4 * L < 2**32
_CACHE_ENTRIES = 64


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


def _tile_radices(n: int, cap: int):
    """The passes of a planned tile of length ``n``: its power-of-two part in as few
    passes as radices up to ``cap / WORKGROUP`` allow (16 for complex64: every thread
    holds one butterfly a pass of a full tile), the bits spread evenly (2048 = 16 16 8,
    512 = 8 8 8), then the odd radices as ``_radices``; None as ``_radices``. NVIDIA
    H100: rfft 2^24 0.684 ms in passes of 16 against 0.891 in passes of 8 and 4; fftn
    2048^2 complex128 (capacity 2048) 0.443 ms in passes of 8 against 0.512 in passes
    of 16, which leave half the threads idle."""
    base = _radices(n)
    if base is None:
        return None
    k = (n & -n).bit_length() - 1
    odd = [r for r in base if r % 2]
    if k == 0:
        return odd or [1]
    rbits = max(1, min(4, (cap // wf.WORKGROUP).bit_length() - 1))
    passes = -(-k // rbits)
    bits = [k // passes + (i < k % passes) for i in range(passes)]
    return [1 << b for b in bits] + odd


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


def _gen(device, mode: str, cname: str, count: int, L: int = 0, n: int = 0, radices=()):
    rt = device.runtime
    spec = wf.GenSpec(mode, cname)
    kernel = rt.compile(("fft_gen", spec), lambda: (wf.gen_record(spec), wf.render_gen(spec, _library)))
    buf = rt.alloc(max(count, 1) * dt.BY_NAME[cname].itemsize)
    params = wf.gen_params(count=count, L=L, n=n, radices=radices)
    rt.launch(kernel, {"Y": buf}, kernel.record.pack(**params), workgroups(count, wf.WORKGROUP))
    return buf


def _twiddles(device, N: int, cname: str):
    """exp(-2 pi i m / N) at m: the generic tile's table."""
    return _tables.get(("table", device, N, cname), lambda: _gen(device, "table", cname, N, N))


def _pass_twiddles(device, radices: tuple, cname: str):
    """A planned tile's twiddles in the order its passes read them (GenSpec 'passes')."""
    L = 1
    for r in radices:
        L *= r
    return _tables.get(("passes", device, radices, cname), lambda: _gen(device, "passes", cname, L,
                                                                         radices=radices))


def _chirp(device, n: int, cname: str):
    return _tables.get(("chirp", device, n, cname), lambda: _gen(device, "chirp", cname, n, 2 * n))


def _bluestein_filter(device, n: int, M: int, cname: str):
    """The spectrum (length M) of Bluestein's filter conj(chirp), wrapped around."""

    def make():
        b = _gen(device, "chirpb", cname, M, 2 * n, n)
        return _transform(device, cname, M, 1, 1, src=("buf", b), lin=M, n=M, n_out=M, radix16=False)

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
    # row of the tile, so its loads and stores use whole memory segments. NVIDIA H100:
    # fft columns 4096 x 4096 complex64 0.403 ms so (two kernels), 0.469 as one tile of
    # one column (8 B rows); fftn 2048^2 complex128 though 0.297 so, 0.243 with one tile
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


# Tiles compile with their passes planned (``TileSpec.radices``, ``_tile_radices``):
# sizes as constants, no per-pass switch (whose registers, the largest case's, the
# generic kernel holds whatever the length), radix 16, the first pass reading the
# source and the last writing the destination (``_wgsl/fft._planned_pass``). NVIDIA
# H100, device time: fftn 4096^2 complex64 1.92 ms generic, 1.63 with planned passes
# all in workgroup memory, 0.58 now (torch 0.25); rfft 2^24 1.25, 1.02, 0.48 (torch
# 0.20); ``bench_fft.py``. A tile length is
# then part of its pipeline: a new length compiles once (30-70 ms on lavapipe with a
# warm shader cache). False: every length shares the generic kernel
# (``bench_fft.py --generic``).
PLANNED = True


def _planned(L: int) -> bool:
    return PLANNED and L > 1


def _pow2ceil(v: int) -> int:
    return 1 << max(v - 1, 0).bit_length()


def _transform(device, cname: str, N: int, outer: int, inner: int, *, src, lin: int, n: int, n_out: int,
               load="plain", lchirp=None, store="complex", mul_b=None, schirp=None, conj_in=False,
               conj_mid=False, conj_out=False, scale=1.0, nh=0, radix16=True):
    """Run one length-N transform along K of a (outer, K, inner) layout; returns the
    output buffer, (outer, n_out, inner) of complex (or real: 'real', 'unpack') values.

    ``src`` is ('buf', buffer) holding (outer, lin, inner) or ('input', FusedInput) of
    that shape; the logical input has ``n`` elements along K, zero past them. The load
    and store hooks go to the first and the last kernel of the plan. ``radix16``:
    planned tiles in passes of up to 16 (``_tile_radices``), else of 8 and 4 as
    ``_radices`` (Bluestein's transforms, see ``transform_axis``)."""
    rt = device.runtime
    cap = _capacity(device, cname)
    steps = _plan(N, inner, cap, _min_lanes(cname))
    if store == "r2c" and len(steps) > 1:
        z = _transform(device, cname, N, outer, inner, src=src, lin=lin, n=n, n_out=N, load=load,
                       lchirp=lchirp, conj_in=conj_in, nh=nh, radix16=radix16)
        return _split(device, cname, z, outer, N, inner, conj_out=conj_out, scale=scale)
    itemsize = dt.BY_NAME[cname].itemsize
    cur = None
    for idx, st in enumerate(steps):
        first, last = idx == 0, idx == len(steps) - 1
        fi = src[1] if first and src[0] == "input" else None
        planned = _planned(st.L)
        radices = [] if st.L == 1 else (_tile_radices(st.L, cap) if planned and radix16 else _radices(st.L))
        spec = wf.TileSpec(
            cname=cname, capacity=cap, src="input" if fi is not None else "buf",
            in_spec=fi.spec if fi is not None else None, load=load if first else "plain",
            lchirp=lchirp is not None and first, store=store if last else "complex",
            mul_b=mul_b is not None and last, schirp=schirp is not None and last, twiddle=st.tw is not None,
            radices=tuple(radices) if planned else ())
        kernel = rt.compile(("fft_tile", spec), lambda spec=spec: (wf.tile_record(spec),
                                                                   wf.render_tile(spec, _library)))
        buffers = {"TW": _pass_twiddles(device, spec.radices, cname) if spec.radices else
                   _twiddles(device, st.L, cname)}
        if fi is not None:
            buffers["in0"] = fi.buffers
        else:
            buffers["X"] = src[1] if first else cur
        if spec.uses_chirp:
            buffers["W"] = lchirp if spec.lchirp else schirp
        if spec.mul_b:
            buffers["BB"] = mul_b
        this_out = n_out if last else N
        out_item = itemsize // 2 if spec.store in ("real", "unpack") else itemsize
        out = rt.alloc(max(outer * this_out * inner, 1) * out_item)
        buffers["Y"] = out
        lanes_max = min(wf.WORKGROUP, 1 << ((cap // st.L).bit_length() - 1))
        ci = min(_pow2ceil(st.J), lanes_max)
        B = outer * st.A
        cb = min(_pow2ceil(B), lanes_max // ci) if ci >= st.J else 1
        nct = -(-st.J // ci)
        groups = nct * -(-B // cb)
        tw_n, tw_div, tw_unit = st.tw if st.tw is not None else (0, 1, 1)
        params = wf.tile_params(
            groups=groups, L=st.L, radices=radices, log_ci=ci.bit_length() - 1, log_cb=cb.bit_length() - 1,
            J=st.J, nct=nct, B=B, A=st.A, IA=st.IA, IK=st.IK, OA=st.OA, OK=st.OK,
            lin=lin if first else N, n=n if first else N, n_out=this_out, inner=inner,
            conj_in=int(conj_in and first), conj_mid=int(conj_mid and last), conj_out=int(conj_out and last),
            tw_div=tw_div, nh=nh, tw_unit=tw_unit, tw_n=tw_n, scale=scale if last else 1.0, cname=cname)
        if fi is not None:
            params["in0"] = fi.params
        rt.launch(kernel, buffers, kernel.record.pack(**params), groups)
        cur = out
    return cur


def _split(device, cname: str, z, outer: int, nh: int, inner: int, *, conj_out: bool, scale: float):
    """The half-length rfft's split of Z (outer, nh, inner) into (outer, nh + 1, inner)."""
    rt = device.runtime
    spec = wf.SplitSpec(cname)
    kernel = rt.compile(("fft_split", spec), lambda: (wf.split_record(spec), wf.render_split(spec, _library)))
    count = outer * (nh + 1) * inner
    out = rt.alloc(count * dt.BY_NAME[cname].itemsize)
    params = wf.split_params(count=count, nh=nh, inner=inner, conj_out=int(conj_out), scale=scale, cname=cname)
    rt.launch(kernel, {"Z": z, "Y": out}, kernel.record.pack(**params), workgroups(count, wf.WORKGROUP))
    return out


def _bluestein_length(n: int) -> int:
    return 1 << (2 * n - 2).bit_length()


def transform_axis(node: g.Node, cname: str, axis: int, n: int, *, kind: str, conj_in: bool, conj_out: bool,
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
    row_bytes = (max(work, n) + 1) * dt.BY_NAME[cname].itemsize  # a row's largest buffer, its work space
    if slabs.too_big([node]) or outer * inner * row_bytes > device.max_binding_bytes:
        # past the binding limit: the axis moved last, a slab of whole rows at a time
        order = tuple(d for d in range(node.ndim) if d != axis) + (axis,)
        last = node.ndim - 1
        data = along_last(g.permute_view(node, order), lambda part: transform_axis(
            part, cname, last, n, kind=kind, conj_in=conj_in, conj_out=conj_out, scale=scale, func=func), n_out,
            row_bytes)
        return g.permute_view(data, [order.index(d) for d in range(node.ndim)])
    if outer * inner * max(work, n) >= 1 << 32:
        raise ValueError(f"{func}: {outer * inner} transforms of length {n} exceed wgarray's 2**32 element index range")
    if kind == "r2c" and not half:
        c = dt.BY_NAME[cname]  # an odd real length runs as a complex transform
        node = g.Const(complex(node.value), c, device, node.shape) if isinstance(node, g.Const) else \
            g.make_op("cast", [node], c)
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
        # in passes of 8 and 4: a radix-16 last pass, whose outputs the inverse's first
        # pass reads as one group again, lets the roundings of its constants add up
        # (lavapipe, n = 1031: 6% more rms error than today's 8 8 8 8, one-off
        # transforms of 4096 none)
        conv = _transform(device, cname, M, outer, inner, src=("input", fi), n_out=M, lchirp=w, mul_b=filt,
                          radix16=False, **common)
        # inverse of the product: conj(fft(conj(.))) / M, then the output chirp
        back = dict(src=("buf", conv), lin=M, n=M, schirp=w, conj_in=True, conj_mid=True, radix16=False)
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
