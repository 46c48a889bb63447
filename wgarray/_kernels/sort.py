"""Device kernels for sorting, searching and sets (WGSL text in ``_wgsl/sort.py``).

Everything here runs on the device; the host only reads output sizes (unique).

- ``KeySource``: the order-preserving keys of a node's elements, read inside a kernel
  (the node's elementwise producer fused in; float64 is read as raw words, since its
  bits cannot be taken portably in WGSL).
- ``radix_perm``: the stable sorting permutation of flat elements, per segment (the
  digit counts scanned by the one exclusive scan, ``scan.exclusive_scan``).
- ``search``: binary search of keys (searchsorted, isin).
- ``unique``: sort + adjacent-difference flags + the one stream compaction
  (``compact.positions``) + a scatter of each value's first occurrence.

Kernels are keyed ``("sort", spec)``; each renderer returns its launch record with
its WGSL, and the dispatches pass their buffers by the record's names.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph.fusion import FusedInput
from .._runtime.launch import even, param_bases, workgroups
from .._wgsl import elementwise as ew
from .._wgsl import sort as ws
from .._wgsl import types as ty
from . import scan as kscan
from .compact import positions

FAMILY = "sort"


def _groups(threads: int) -> int:
    return workgroups(threads, ws.WG)


class KeySource:
    """The keys of ``node``'s elements in flat C order, for a kernel to read.

    ``render(prefix, binding_base, pbase)`` defines ``{prefix}key(e, desc)`` and
    ``{prefix}isnan(k)``; bind ``buffers`` from ``binding_base`` and put ``params``
    at word ``pbase`` (even) of the kernel's P.
    """

    def __init__(self, node: g.Node):
        node = g.settle(node)
        self.dtype = node.dtype
        self.device = node.device
        self.native = node.device.has_int64
        self.raw = node.dtype is dt.float64
        if self.raw:
            data = g.realize(node)
            if not data.is_contiguous:
                data = g.realize(g.Op("copy", [data], data.dtype))
            self.buffers = [data.buf]
            self.params = data.offset.to_bytes(4, "little") + bytes(4)
            self.spec = "raw-f64"
        else:
            fi = FusedInput(node)
            self.buffers = fi.buffers
            self.params = fi.params
            self.spec = fi.spec
        self.bits = ws.KEY_BITS[self.dtype.name]
        self.kw = 2 if self.bits > 32 else 1

    @property
    def key(self):
        return (self.spec, self.dtype.name, self.native)

    @property
    def n_words(self) -> int:
        return even(len(self.params) // 4)

    def render(self, prefix: str, pbase: int):
        """(the bindings, as a launch record's group named ``prefix`` without its
        underscore; the WGSL functions)."""
        if self.raw:
            group, fns = ws.raw_group(prefix), ""
        else:
            group = ew.input_group(self.spec, prefix)
            fns = ew.render_input(self.spec, prefix, pbase)
        return group, fns + ws.key_fn(prefix, self.dtype.name, self.native, self.raw, pbase)


# ------------------------------------------------------------------- radix sort

# Sorts of at least this many elements submit their work before returning, so that
# their scratch buffers go back to the pool at once: otherwise a loop of sorts that
# never flushes keeps every call's scratch alive until the batch is full, and each call
# allocates (and the driver clears) fresh buffers of several times the input's size.
FLUSH_AT = 1 << 18


def _fitting_kpt(device) -> int:
    """ws.RADIX_KPT, halved until the downsweep's workgroup memory fits the device."""
    limit = device.limits.get("max-compute-workgroup-storage-size", 16384)
    kpt = ws.RADIX_KPT
    while kpt > 1 and ws.downsweep_shared_bytes(kpt) > limit:
        kpt //= 2
    return kpt


def sorts_values(src: KeySource, n: int, seglen: int) -> bool:
    """Whether ``radix_perm(..., values=True)`` applies: one segment of 32-bit values."""
    return seglen == n and src.dtype in (dt.float32, dt.int32, dt.uint32) and not src.raw


def radix_perm(src: KeySource, n: int, seglen: int, descending: bool, kpt: int | None = None,
               values: bool = False):
    """A u32 buffer of the n flat indices in stably sorted order within each segment of
    ``seglen`` consecutive elements (keys ascending, or descending with NaNs last).
    With ``values`` (where ``sorts_values``) the buffer holds the sorted values' bits
    instead: the value travels as the payload, and no gather is needed.

    LSD radix sort, 8 bits a pass: per pass an *upsweep* counts every tile's digits,
    the counts (digit-major) are scanned into each (digit, tile)'s first output slot,
    and a *downsweep* ranks each tile in workgroup memory and writes it out in coalesced
    runs. Keys and payloads ping-pong between two buffers each, allocated once per call.
    """
    rt = src.device.runtime
    kpt = kpt or _fitting_kpt(src.device)
    tile = ws.WG * kpt
    bits = ws.RADIX_BITS
    key_passes = -(-src.bits // bits)
    nseg = n // seglen
    seg_passes = -(-(nseg - 1).bit_length() // bits) if nseg > 1 else 0
    passes = [("key", p) for p in range(key_passes)] + [("seg", p) for p in range(seg_passes)]
    n_tiles = -(-n // tile)
    kw = src.kw
    sg = kscan.use_subgroups(rt)

    def build_keys():
        group, fns = src.render("src_", 2)
        return ws.render_keys(group, fns, kw, values)

    if values and not sorts_values(src, n, seglen):
        raise ValueError("radix_perm: values=True needs one segment of 32-bit values")
    keys = rt.compile((FAMILY, ("keys", src.key, values)), build_keys)
    scratch = [rt.alloc(4 * kw * n)]
    # Two key and two payload buffers, used in turn: a pass never allocates.
    kbufs = [scratch[0], rt.alloc(4 * kw * n) if key_passes > 1 else None]
    vbufs = [rt.alloc(4 * n), rt.alloc(4 * n) if len(passes) > 1 or values else None]
    kin, vin = kbufs[0], None
    if values:
        vin = vbufs[1]
    bufs = {"src": src.buffers, "KOUT": kin}
    if values:
        bufs["VOUT"] = vin
    rt.launch(keys, bufs, keys.record.pack(n=n, desc=int(descending), src=src.params), _groups(n))
    counts = rt.alloc(4 * 256 * n_tiles)
    counts_node = g.Data(counts, (256 * n_tiles,), dt.uint32, src.device)
    scanned = rt.alloc(4 * (256 * n_tiles + 1))  # every pass's scanned counts: one buffer, one bind group
    for i, (kind, p) in enumerate(passes):
        mode = "key0" if i == 0 and not values else kind
        write_keys = kind == "key" and p + 1 < key_passes
        if kind == "key":
            shift, word = (p * bits) % 32, (p * bits) // 32
        else:
            shift, word = p * bits, 0
        up = rt.compile((FAMILY, ("radix8_up", kind, kw, kpt)), lambda: ws.render_upsweep(kind, kw, kpt))
        params = up.record.pack(n=n, seglen=seglen, n_tiles=n_tiles, shift=shift, word=word)
        up_bufs = {"KIN": kin} if kind == "key" else {"VIN": vin}
        up_bufs["COUNTS"] = counts
        rt.launch(up, up_bufs, params, n_tiles)
        kscan.exclusive_scan(counts_node, out=scanned)
        kout = kbufs[(i + 1) % 2] if write_keys else None
        vout = vbufs[i % 2]
        down = rt.compile((FAMILY, ("radix8_down", mode, kw, write_keys, kpt, sg)),
                          lambda: ws.render_downsweep(mode, kw, write_keys, kpt, sg))
        bufs = {"key0": {"KIN": kin}, "key": {"KIN": kin, "VIN": vin}, "seg": {"VIN": vin}}[mode]
        bufs["SCAN"] = scanned
        if write_keys:
            bufs["KOUT"] = kout
        bufs["VOUT"] = vout
        rt.launch(down, bufs, params, n_tiles)
        kin, vin = kout, vout
    result = vin
    if n >= FLUSH_AT:
        del kin, vin, kbufs, vbufs, counts, counts_node, scanned, scratch, bufs, up_bufs, kout, vout
        rt.flush()
    return result


# ------------------------------------------------------------------- search

def search(a: KeySource, m: int, sorter: FusedInput | None, b: KeySource, n: int, mode: str, flag: bool, device):
    """A u32 (n,) Data: for each b key, its insertion point among the m sorted a keys
    (mode 'searchsorted', flag = side right) or whether it occurs (mode 'isin', flag = invert)."""
    rt = device.runtime
    blocks = [a.params] + ([sorter.params] if sorter is not None else []) + [b.params]
    pbases = param_bases(4, [len(p) // 4 for p in blocks])
    pa, ps, pb = pbases[0], pbases[1] if sorter is not None else None, pbases[-1]
    s_tag = ty.tag(sorter.dtype.name, device.has_int64) if sorter is not None else None

    def build():
        a_group, a_fns = a.render("a_", pa)
        if sorter is not None:
            s_group, s_fns = ew.input_group(sorter.spec, "s_"), ew.render_input(sorter.spec, "s_", ps)
        else:
            s_group, s_fns = None, ""
        b_group, b_fns = b.render("b_", pb)
        return ws.render_search(a_group, a_fns, s_group, s_fns, s_tag, b_group, b_fns, mode, pbases)

    key = (FAMILY, ("search", mode, a.key, sorter.spec if sorter is not None else None,
                    sorter.dtype.name if sorter is not None else None, b.key))
    kernel = rt.compile(key, build)
    out = rt.alloc(4 * max(n, 1))
    bufs = {"a": a.buffers}
    if sorter is not None:
        bufs["s"] = sorter.buffers
    bufs["b"] = b.buffers
    bufs["O"] = out
    params = kernel.record.pack(n=n, m=m, flag=int(flag), **dict(zip(bufs, blocks)))
    rt.launch(kernel, bufs, params, _groups(n))
    return g.Data(out, (n,), dt.uint32, device)


# ------------------------------------------------------------------- unique

def unique(flat: g.Node, with_inverse: bool):
    """Sorted unique values of the (n,) node ``flat`` (n > 0; every NaN distinct).

    Returns (K, src, starts, inv, perm): K the number of unique values; u32 buffers:
    src[k] the flat index of value k's first occurrence, starts[0:K+1] where each
    value's run begins in sorted order (starts[K] = n), inv[i] the value number of
    element i, perm the stable sorting permutation (value k's positions, increasing, are
    perm[starts[k]:starts[k+1]]).
    """
    device = flat.device
    rt = device.runtime
    n = flat.shape[0]
    src = KeySource(flat)
    perm = radix_perm(src, n, n, False)
    starts_flags = rt.alloc(4 * (n + 1))  # F[n] = 0 too: the flags kernel covers n + 1 slots

    def build_flags():
        group, fns = src.render("src_", 2)
        return ws.render_unique_flags(group, fns)

    flags = rt.compile((FAMILY, ("unique_flags", src.key)), build_flags)
    rt.launch(flags, {"src": src.buffers, "PERM": perm, "F": starts_flags},
              flags.record.pack(n=n, src=src.params), _groups(n + 1))
    pos, k = positions(g.Data(starts_flags, (n,), dt.uint32, device))
    src_idx = rt.alloc(4 * k)
    starts = rt.alloc(4 * (k + 1))
    bufs = {"PERM": perm, "POS": pos.buf, "SRC": src_idx, "STARTS": starts}
    inv = None
    if with_inverse:
        inv = bufs["INV"] = rt.alloc(4 * n)
    compact = rt.compile((FAMILY, ("unique_compact", with_inverse)), lambda: ws.render_unique_compact(with_inverse))
    rt.launch(compact, bufs, compact.record.pack(n=n), _groups(n))
    return k, src_idx, starts, inv, perm
