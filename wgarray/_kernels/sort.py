"""Device kernels for sorting, searching and sets (WGSL text in ``_wgsl/sort.py``).

Everything here runs on the device; the host only reads output sizes (unique).

- ``KeySource``: the order-preserving keys of a node's elements, read inside a kernel
  (the node's elementwise producer fused in; float64 is read as raw words, since its
  bits cannot be taken portably in WGSL).
- ``radix_perm``: the stable sorting permutation of flat elements, per segment.
- ``exclusive_scan``: an in-place u32 exclusive scan (tiles, then tile sums, recursively).
- ``search``: binary search of keys (searchsorted, isin).
- ``unique``: sort + adjacent-difference flags + scan + compaction.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph.fusion import FusedInput
from .._runtime.runtime import pack_params
from .._wgsl import elementwise as ew
from .._wgsl import sort as ws
from .._wgsl import types as ty


def _groups(threads: int) -> int:
    return -(-threads // ws.WG)


def _even(n: int) -> int:
    return n + n % 2


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
            self.params = pack_params([data.offset, 0])
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
        return _even(len(self.params) // 4)

    def padded_params(self) -> bytes:
        return self.params + b"\0" * (4 * self.n_words - len(self.params))

    def render(self, prefix: str, binding_base: int, pbase: int) -> tuple[list[str], str]:
        if self.raw:
            decls = [ws.decl(binding_base, prefix + "RAW", "vec2<u32>")]
            fns = ""
        else:
            decls, fns = ew.render_input(self.spec, prefix, binding_base, pbase)
        return decls, fns + ws.key_fn(prefix, self.dtype.name, self.native, self.raw, pbase)


# ------------------------------------------------------------------- scan

def _subgroups(rt) -> bool:
    """Whether workgroup-wide scans may go through subgroup operations."""
    return rt.subgroup_size is not None


def exclusive_scan(rt, buf, n: int) -> None:
    """Exclusive prefix sum of the u32 words buf[0:n], in place."""
    n_tiles = -(-n // ws.SCAN_TILE)
    sums = rt.alloc(4 * max(n_tiles, 1))
    params = pack_params([n, n_tiles])
    sg = _subgroups(rt)
    tile = rt.kernel(("sort-scan-tile", sg), lambda: ("scan_tile", ws.render_scan_tile(sg), [True, True], False))
    rt.dispatch(tile, [buf, sums], params, n_tiles)
    if n_tiles > 1:
        exclusive_scan(rt, sums, n_tiles)
        add = rt.kernel(("sort-scan-add",), lambda: ("scan_add", ws.render_scan_add(), [True, False], False))
        rt.dispatch(add, [buf, sums], params, n_tiles)


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
    sg = _subgroups(rt)

    def build_keys():
        decls, fns = src.render("src_", 0, 2)
        code, writes = ws.render_keys(decls, fns, len(src.buffers), kw, values)
        return ("sort_keys", code, writes, False)

    if values and not sorts_values(src, n, seglen):
        raise ValueError("radix_perm: values=True needs one segment of 32-bit values")
    keys = rt.kernel(("sort-keys", src.key, values), build_keys)
    scratch = [rt.alloc(4 * kw * n)]
    # Two key and two payload buffers, used in turn: a pass never allocates.
    kbufs = [scratch[0], rt.alloc(4 * kw * n) if key_passes > 1 else None]
    vbufs = [rt.alloc(4 * n), rt.alloc(4 * n) if len(passes) > 1 or values else None]
    kin, vin = kbufs[0], None
    if values:
        vin = vbufs[1]
    rt.dispatch(keys, list(src.buffers) + [kin] + ([vin] if values else []),
                pack_params([n, int(descending)]) + src.padded_params(), _groups(n))
    counts = rt.alloc(4 * 256 * n_tiles)
    for i, (kind, p) in enumerate(passes):
        mode = "key0" if i == 0 and not values else kind
        write_keys = kind == "key" and p + 1 < key_passes
        if kind == "key":
            shift, word = (p * bits) % 32, (p * bits) // 32
        else:
            shift, word = p * bits, 0
        params = pack_params([n, seglen, n_tiles, shift, word])
        in_bufs = {"key0": [kin], "key": [kin, vin], "seg": [vin]}[mode]

        up = rt.kernel(("radix8", "up", kind, kw, kpt),
                       lambda: ("radix_up_" + kind, *ws.render_upsweep(kind, kw, kpt), False))
        rt.dispatch(up, [kin if kind == "key" else vin, counts], params, n_tiles)
        exclusive_scan(rt, counts, 256 * n_tiles)
        kout = kbufs[(i + 1) % 2] if write_keys else None
        vout = vbufs[i % 2]
        down = rt.kernel(("radix8", "down", mode, kw, write_keys, kpt, sg),
                         lambda: (f"radix_down_{mode}", *ws.render_downsweep(mode, kw, write_keys, kpt, sg), False))
        rt.dispatch(down, in_bufs + [counts] + ([kout] if write_keys else []) + [vout], params, n_tiles)
        kin, vin = kout, vout
    result = vin
    if n >= FLUSH_AT:
        del kin, vin, kbufs, vbufs, counts, scratch, in_bufs, kout, vout
        rt.flush()
    return result


# ------------------------------------------------------------------- search

def search(a: KeySource, m: int, sorter: FusedInput | None, b: KeySource, n: int, mode: str, flag: bool, device):
    """A u32 (n,) Data: for each b key, its insertion point among the m sorted a keys
    (mode 'searchsorted', flag = side right) or whether it occurs (mode 'isin', flag = invert)."""
    rt = device.runtime
    pa = 4
    ps = pa + a.n_words
    pb = ps + (_even(sorter.n_words) if sorter is not None else 0)
    n_a, n_s, n_b = len(a.buffers), len(sorter.buffers) if sorter is not None else 0, len(b.buffers)
    s_tag = ty.tag(sorter.dtype.name, device.has_int64) if sorter is not None else None

    def build():
        a_decls, a_fns = a.render("a_", 0, pa)
        if sorter is not None:
            s_decls, s_fns = ew.render_input(sorter.spec, "s_", n_a, ps)
        else:
            s_decls, s_fns = [], ""
        b_decls, b_fns = b.render("b_", n_a + n_s, pb)
        code, writes = ws.render_search(a_decls, a_fns, n_a, s_decls, s_fns, n_s, s_tag, b_decls, b_fns, n_b, mode)
        return (f"sort_{mode}", code, writes, False)

    key = ("sort-search", mode, a.key, sorter.spec if sorter is not None else None,
           sorter.dtype.name if sorter is not None else None, b.key)
    kernel = rt.kernel(key, build)
    out = rt.alloc(4 * max(n, 1))
    params = pack_params([n, m, int(flag), 0]) + a.padded_params()
    if sorter is not None:
        params += sorter.params + b"\0" * (4 * _even(sorter.n_words) - len(sorter.params))
    params += b.padded_params()
    bufs = list(a.buffers) + (list(sorter.buffers) if sorter is not None else []) + list(b.buffers) + [out]
    rt.dispatch(kernel, bufs, params, _groups(n))
    return g.Data(out, (n,), dt.uint32, device)


# ------------------------------------------------------------------- unique

def unique(flat: g.Node, with_inverse: bool):
    """Sorted unique values of the (n,) node ``flat`` (n > 0; every NaN distinct).

    Returns (K, src, starts, inv): K the number of unique values; u32 buffers: src[k]
    the flat index of value k's first occurrence, starts[0:K+1] where each value's run
    begins in sorted order (starts[K] = n), inv[i] the value number of element i.
    """
    device = flat.device
    rt = device.runtime
    n = flat.shape[0]
    src = KeySource(flat)
    perm = radix_perm(src, n, n, False)
    pos = rt.alloc(4 * (n + 1))

    def build_flags():
        decls, fns = src.render("src_", 0, 2)
        code, writes = ws.render_unique_flags(decls, fns, len(src.buffers))
        return ("unique_flags", code, writes, False)

    flags = rt.kernel(("unique-flags", src.key), build_flags)
    rt.dispatch(flags, list(src.buffers) + [perm, pos], pack_params([n, 0]) + src.padded_params(), _groups(n + 1))
    exclusive_scan(rt, pos, n + 1)
    k = int(rt.read(pos, 4 * n, 4).view("<u4")[0])
    src_idx = rt.alloc(4 * k)
    starts = rt.alloc(4 * (k + 1))
    bufs = [perm, pos, src_idx, starts]
    if with_inverse:
        inv = rt.alloc(4 * n)
        bufs.append(inv)
    else:
        inv = None
    writes = [False, False, True, True] + ([True] if with_inverse else [])
    compact = rt.kernel(("unique-compact", with_inverse),
                        lambda: ("unique_compact", ws.render_unique_compact(with_inverse), writes, False))
    rt.dispatch(compact, bufs, pack_params([n]), _groups(n))
    return k, src_idx, starts, inv
