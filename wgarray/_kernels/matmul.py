"""The matmul family's host driver: ``matmul_nodes`` runs one kernel
(``_wgsl/matmul.py``) over strided views of its operands: the tiled one for float32 and
float64, int32 and uint32, the generic one for the other dtypes.

A transposed or batch-broadcast operand costs no copy; a pending elementwise operand
(a cast, ``conj``, ``x * 2``) is realized once first, which is O(n^2) beside the
O(n^3) product. Tiles fit the output's shape (128x128 / 64x64 when wide,
256x16, 128x32, 16x32, ... when narrow). When the output tiles are too few to fill the
GPU and K is long (``onehot.T @ X`` in k-means: 16 x 32 outputs, K = 10^6), K is split
over many workgroups that write partial products, summed by the reduce family's row
reduction.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph import slabs
from .._runtime.runtime import pack_params
from .._wgsl import matmul as km
from .budget import loop_bound
from .reduce import reduce_axes, reduce_rows
from .write import write


def _as_data(node: g.Node) -> g.Data:
    node = g.realize(node)
    if node.buf is None:  # a zero-size view
        node = g.realize(g.Op("copy", [node], node.dtype))
    return node


def _load_class(data: g.Data, rows_stride: int, cols_stride: int, n_rows: int, n_cols: int,
                batch_strides, kinds: tuple[str, str]) -> str:
    """How the tiled kernel fetches an operand (see ``_wgsl/matmul.py``): vec4 along the
    unit-stride dim when every offset is 4-aligned, else scalars along the smaller stride.
    ``kinds`` names (rows, cols) as the kernel does, e.g. ('M', 'K') for A."""
    aligned = data.offset % 4 == 0 and all(s % 4 == 0 for s in batch_strides)
    if cols_stride == 1 and n_cols % 4 == 0 and (rows_stride % 4 == 0 or n_rows == 1) and aligned:
        return kinds[1] + "v"
    if rows_stride == 1 and n_rows % 4 == 0 and (cols_stride % 4 == 0 or n_cols == 1) and aligned:
        return kinds[0] + "v"
    return "s" + (kinds[1] if abs(cols_stride) <= abs(rows_stride) else kinds[0])


# Split-K heuristic. WebGPU does not say how many SMs/CUs a device has; TARGET_THREADS is
# about one full wave of resident threads on a large GPU (an H200: 132 SMs x 2048). When
# the output tiles give fewer than half of that and K is long, K is cut into chunks of at
# least MIN_CHUNK (so each workgroup still streams a useful run of K and the partial
# slabs stay small beside the operands) until about TARGET_THREADS are busy.
TARGET_THREADS = 1 << 18
MIN_CHUNK = 256
SMEM_BYTES = 16384  # workgroup memory (WebGPU's default limit) for As + Bs
# The 128x128 tiles' slabs where the device offers the workgroup memory: twice as deep
# (float32 BK 32, float64 16), half the barriers per K. NVIDIA H100, median of 5 x 20
# products, 16 -> 32 KiB: float32 4096^3 4.72 -> 4.44 ms (29.1 -> 31.0 TFLOP/s; cuBLAS
# 2.67 ms), 8192^3 37.2 -> 34.8 ms, float64 2048^3 1.44 -> 1.30 ms; bit-identical results.
# The narrow tiles keep SMEM_BYTES (not measured deeper).
WIDE_SMEM_BYTES = 32768
# the tiled kernel's element types (float64 where the device has it; the other integer
# dtypes are 8/16-bit packed words or 64-bit, on the generic kernel)
_TILED = {dt.float32: "f32", dt.float64: "f64", dt.int32: "i32", dt.uint32: "u32"}


def _pow2ceil(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _tile_config(M: int, N: int, nbatch: int, itemsize: int = 4,
                 wide_smem: int = SMEM_BYTES) -> tuple[int, int, int, int, int]:
    """(BM, BN, BK, RM, CN) of the tiled kernel for an M x N output of ``itemsize``-byte
    elements: float64 takes slabs half as deep, so that As + Bs fit the same bytes.
    ``wide_smem``: the workgroup memory the 128x128 tiles may use (``_wide_smem``)."""
    smem = SMEM_BYTES // itemsize
    bm0 = min(64, max(16, _pow2ceil(M)))
    bn0 = min(64, max(16, _pow2ceil(N)))
    if bm0 == 64 and bn0 == 64:
        if M * N * nbatch >= 128 * 128 * 96:
            return 128, 128, wide_smem // itemsize // 256, 8, 8
        return 64, 64, 16, 4, 4
    # a narrow output: 4x4 register blocks, the long side grown to 256 threads
    bm, bn = bm0, bn0
    if bm == 64:
        bm = min(smem // bn, max(64, _pow2ceil(M)))
    elif bn == 64:
        bn = min(smem // bm, max(64, _pow2ceil(N)))
    bk = next(k for k in (32, 16, 8, 4) if (bm + bn) * k <= smem)
    return bm, bn, bk, 4, 4


def _wide_smem(device) -> int:
    """WIDE_SMEM_BYTES where ``device`` offers that much workgroup memory, else SMEM_BYTES."""
    limit = device.limits.get("max-compute-workgroup-storage-size", SMEM_BYTES)
    return WIDE_SMEM_BYTES if limit >= WIDE_SMEM_BYTES else SMEM_BYTES


def _splits(K: int, busy_threads: int, granule: int, max_chunk: int | None = None) -> tuple[int, int]:
    """(K chunk, number of chunks): 1 chunk unless the output leaves the GPU idle, or
    unless K exceeds ``max_chunk`` (a device's bound on loop iterations per invocation)."""
    n = 1
    if busy_threads * 2 <= TARGET_THREADS and K >= 2 * MIN_CHUNK:
        n = min(K // MIN_CHUNK, -(-TARGET_THREADS // max(busy_threads, 1)))
    if max_chunk is not None:
        n = max(n, -(-K // max_chunk))
    if n == 1:
        return K, 1
    chunk = -(-K // n)
    chunk = -(-chunk // granule) * granule
    return chunk, -(-K // chunk)


def _max_chunk(device, loops_per_k: int) -> int | None:
    """The longest K range one invocation may loop over on ``device`` (None: no bound)."""
    bound = loop_bound(device)
    return None if bound is None else max(MIN_CHUNK, bound // loops_per_k)


def _sum_partials(part, nsplit: int, total: int, stride: int, dtype, device) -> g.Data:
    """The sum over the ``nsplit`` partial slabs (``stride`` elements apart) of ``part``."""
    slabs = g.Data(part, (total, nsplit), dtype, device, 0, (1, stride))
    vals, _ = reduce_rows(slabs, total, nsplit, "sum")
    if vals.dtype is not dtype:  # 8/16-bit sums come back 32-bit: wrap back
        vals = g.realize(g.make_op("cast", [vals], dtype))
    return vals


def total_bytes(shape, dtype) -> int:
    return g.prod(shape) * dtype.itemsize


def _matmul_in_slabs(A: g.Data, B: g.Data, batch) -> g.Data:
    """``A @ B`` past the binding limit (``_graph.slabs``): blocks of C (mb x nb) and of
    the inner dimension (kb), sized so that each block of A, of B and of C fits one
    binding (halving, of the two dimensions of a block too wide, the one whose halving
    narrows it more); the products over the inner blocks are summed and each block of
    C is written into its place."""
    device = A.device
    dtype = A.dtype
    if batch and g.prod(batch) > 1:
        return _batched_in_slabs(A, B, tuple(batch))
    A = g.reshape_view(A, A.shape[-2:])
    B = g.reshape_view(B, B.shape[-2:])
    M, K = A.shape
    N = B.shape[1]
    isz = dtype.itemsize
    budget = slabs.slab_bytes(device)

    def span(x, r, c):
        lo, hi = slabs.extent(g.index_view(x, [("slice", 0, 1, r), ("slice", 0, 1, c)]))
        return (hi - lo) * isz

    def halve(x, r, c):  # (r, c) with one of them halved: the one that narrows x's block more
        hr, hc = (-(-r // 2), c), (r, -(-c // 2))
        if r == 1:
            return hc
        if c == 1:
            return hr
        return hr if span(x, *hr) <= span(x, *hc) else hc

    mb, kb, nb = M, K, N
    while True:
        if span(B, kb, nb) > budget and kb * nb > 1:
            kb, nb = halve(B, kb, nb)
        elif mb * nb * isz > budget and mb * nb > 1:
            mb, nb = (-(-mb // 2), nb) if mb > 1 else (mb, -(-nb // 2))
        elif span(A, mb, kb) > budget and mb * kb > 1:
            mb, kb = halve(A, mb, kb)
        else:
            break
    rt = device.runtime
    whole = mb == M and nb == N
    out = None if whole else g.Data(rt.alloc(max(M * N, 1) * isz), (M, N), dtype, device)
    for m0 in range(0, M, mb):
        m = min(mb, M - m0)
        for n0 in range(0, N, nb):
            n = min(nb, N - n0)
            acc = None
            for k0 in range(0, K, kb):
                part = _block_product(A, B, m0, m, n0, n, k0, min(kb, K - k0))
                acc = part if acc is None else g.make_op("add", [acc, part], dtype)
            if whole:
                return g.reshape_view(g.realize(acc), tuple(batch) + (M, N))
            write(g.index_view(out, [("slice", m0, 1, m), ("slice", n0, 1, n)]), acc)
    return g.reshape_view(out, tuple(batch) + (M, N))


def _batched_in_slabs(A: g.Data, B: g.Data, batch: tuple) -> g.Data:
    """``A @ B`` over a batch past the binding limit: runs of batch elements (slabs of
    the batch shape, ``slabs.slabs``) whose matrices of A, B and C fit one binding each
    go to the kernel together, through windows of A and B, and their products are
    written into place; a batch element too large for that runs alone, in blocks
    (``_matmul_in_slabs``)."""
    device = A.device
    dtype = A.dtype
    M, K = A.shape[-2:]
    N = B.shape[-1]
    isz = dtype.itemsize
    out = g.Data(device.runtime.alloc(max(g.prod(batch) * M * N, 1) * isz), batch + (M, N), dtype, device)
    whole = [("slice", 0, 1, M), ("slice", 0, 1, K)], [("slice", 0, 1, K), ("slice", 0, 1, N)], \
        [("slice", 0, 1, M), ("slice", 0, 1, N)]
    def spread(items):  # the most bytes of a buffer that A's or B's part of a slab reads
        return max(slabs.spread(g.index_view(A, items + whole[0])), slabs.spread(g.index_view(B, items + whole[1])))

    per = max(M * K, K * N, M * N) * isz
    budget = slabs.slab_bytes(device)
    parts = None
    while per <= budget:
        parts, _ = slabs.slabs(batch, per, budget)
        wide = spread(parts[0][0])
        if wide <= slabs.budget_of(device):
            break
        parts, budget = None, budget * slabs.budget_of(device) // (2 * wide)
    if parts is None:
        for flat in range(g.prod(batch)):
            items = []
            for n in reversed(batch):
                items.append(("int", flat % n))
                flat //= n
            items.reverse()
            c = _matmul_in_slabs(g.index_view(A, items + whole[0]), g.index_view(B, items + whole[1]), ())
            write(g.index_view(out, items + whole[2]), c)
        return out
    for items, _start, _count in parts:
        a = slabs.windowed(g.index_view(A, items + whole[0]))
        b = slabs.windowed(g.index_view(B, items + whole[1]))
        c = matmul_nodes(a, b, a.shape[:-2])
        write(g.index_view(out, items + whole[2]), c)
    return out


def _block_product(A: g.Data, B: g.Data, m0: int, m: int, n0: int, n: int, k0: int, k: int) -> g.Node:
    """A[m0:m0+m, k0:k0+k] @ B[k0:k0+k, n0:n0+n], each block bound through a window."""
    a = slabs.windowed(g.index_view(A, [("slice", m0, 1, m), ("slice", k0, 1, k)]))
    b = slabs.windowed(g.index_view(B, [("slice", k0, 1, k), ("slice", n0, 1, n)]))
    return matmul_nodes(a, b, ())


# A matrix-vector product (M or N of 1) with K at least this long runs as a row
# reduction of the elementwise products: the generic kernel's few threads each walked
# a whole K chunk (a 64 x 4032 block times a vector: 147 us on an H200).
MATVEC_REDUCE_K = 256


def _matvec(A: g.Data, B: g.Data, batch, M: int, N: int, K: int) -> g.Data:
    """``A @ B`` (M or N of 1) as the sum over K of A[..., m, k] * B[..., k, n]: both
    viewed as (batch..., M, N, K) without a copy, the product fused into the reduction."""
    nd = len(batch)
    shape = tuple(batch) + (M, N, K)
    sa, sb = A.strides, B.strides
    av = g.Data(A.buf, shape, A.dtype, A.device, A.offset, sa[:nd] + (sa[nd], 0, sa[nd + 1]))
    bv = g.Data(B.buf, shape, B.dtype, B.device, B.offset, sb[:nd] + (0, sb[nd + 1], sb[nd]))
    vals, _ = reduce_axes(g.make_op("multiply", [av, bv], A.dtype), (nd + 2,), "sum")
    return g.realize(g.reshape_view(vals, tuple(batch) + (M, N)))


def _batch_dims(A: g.Data, B: g.Data, batch):
    """(sizes, A's strides, B's strides) of the batch dims of extent other than 1."""
    bdims = [d for d, n in enumerate(batch) if n != 1]
    return [batch[d] for d in bdims], [A.strides[d] for d in bdims], [B.strides[d] for d in bdims]


def _tiled(A: g.Data, B: g.Data, batch, c_vec: bool, upd: int = 0, split: bool = True):
    """(kernel, parameter words, tiles, K splits) of the tiled kernel for A @ B, or
    None where ``split`` is False and K would have to be split (the device's loop bound)."""
    device = A.device
    dtype = A.dtype
    M, K = A.shape[-2:]
    N = B.shape[-1]
    nbatch = g.prod(batch)
    bshape, sa, sb = _batch_dims(A, B, batch)
    sAm, sAk = A.strides[-2:]
    sBk, sBn = B.strides[-2:]
    a_cls = _load_class(A, sAm, sAk, M, K, sa, ("M", "K"))
    b_cls = _load_class(B, sBk, sBn, K, N, sb, ("K", "N"))
    bm, bn, bk, rm, cn = _tile_config(M, N, nbatch, dtype.itemsize, _wide_smem(device))
    tiles_m = -(-M // bm)
    tiles_n = -(-N // bn)
    tiles = tiles_m * tiles_n * nbatch
    if split:
        chunk, nsplit = _splits(K, tiles * km.tiled_threads(bm, bn, rm, cn), bk, _max_chunk(device, 1))
    else:
        limit = _max_chunk(device, 1)
        if limit is not None and K > limit:
            return None
        chunk, nsplit = K, 1
    spec = (a_cls, b_cls, c_vec, bm, bn, bk, rm, cn, len(bshape), _TILED[dtype], upd)
    kernel = device.runtime.compile(("matmul_tiled", spec), lambda: (km.tiled_record(*spec), km.render_tiled(*spec)))
    offA, offB = A.offset, B.offset
    if a_cls.endswith("v"):
        offA, sAm, sAk, sa = offA // 4, sAm // 4 if a_cls == "Kv" else sAm, sAk // 4 if a_cls == "Mv" else sAk, \
            [s // 4 for s in sa]
    if b_cls.endswith("v"):
        offB, sBk, sBn, sb = offB // 4, sBk // 4 if b_cls == "Nv" else sBk, sBn // 4 if b_cls == "Kv" else sBn, \
            [s // 4 for s in sb]
    words = km.param_words(M, N, K, nbatch, offA, offB, sAm, sAk, sBk, sBn, tiles_m, tiles_n, bshape, sa, sb,
                           chunk, nsplit)
    return kernel, words, tiles, nsplit


def subtract_product(a: g.Node, b: g.Node, dst: g.Data, lower: bool = False) -> bool:
    """``dst -= a @ b`` in place, ``dst`` a (nb, M, N) strided view into its buffer, only
    on and below its diagonal where ``lower``; a (nb, M, K) and b (nb, K, N) (batch of
    1 broadcast). The tiled kernel's update mode: no product is stored and read back,
    and a lower update skips the tiles above the diagonal. Returns False, having done
    nothing, where that does not apply (a dtype off the tiled kernel, a vector shape,
    an operand in dst's buffer, arrays past the binding limit, K split by the device's
    loop bound); the caller then subtracts a stored product."""
    dtype = dst.dtype
    device = dst.device
    nb, M, N = dst.shape
    K = a.shape[-1]
    if dtype not in _TILED or M <= 1 or N <= 1 or K == 0 or nb == 0:
        return False
    A = _as_data(g.broadcast_view(_as_data(a), (nb, M, K)))
    B = _as_data(g.broadcast_view(_as_data(b), (nb, K, N)))
    # each buffer bound whole: one past the binding limit (a segmented array, a slab's
    # window) takes the stored-product path, whatever else the device holds
    if dst.buf is None or dst.buf in (A.buf, B.buf) \
            or max(A.buf.size, B.buf.size, dst.buf.size) > device.max_binding_bytes:
        return False
    batch = (nb,)
    plan = _tiled(A, B, batch, False, 3 if lower else 1, split=False)
    if plan is None:
        return False
    kernel, words, tiles, _ = plan
    sz, rs, cs = dst.strides
    words += [w & 0xFFFFFFFF for w in (dst.offset, sz, rs, cs)]
    device.runtime.launch(kernel, {"A": A.buf, "B": B.buf, "C": dst.buf}, pack_params(words), tiles)
    return True


def matmul_nodes(a: g.Node, b: g.Node, batch) -> g.Data:
    """``a @ b`` for nodes of one dtype, shapes (..., M, K) and (..., K, N) whose batch
    dims broadcast to ``batch``: a new contiguous (batch..., M, N) Data."""
    dtype = a.dtype
    device = a.device
    M, K = a.shape[-2:]
    N = b.shape[-1]
    shape = tuple(batch) + (M, N)
    nbatch = g.prod(batch)
    if M * N * nbatch == 0 or K == 0:
        zero = g.Const(0, dtype, device, shape)
        return g.realize(g.Op("copy", [zero], dtype))
    A = _as_data(g.broadcast_view(_as_data(a), tuple(batch) + (M, K)))
    B = _as_data(g.broadcast_view(_as_data(b), tuple(batch) + (K, N)))
    limit = device.max_binding_bytes
    if device.big or total_bytes(shape, dtype) > limit:
        if max(A.buf.size, B.buf.size, total_bytes(shape, dtype)) > limit:
            return _matmul_in_slabs(A, B, batch)
    if (M == 1 or N == 1) and K >= MATVEC_REDUCE_K and dtype.kind == "f":
        return _matvec(A, B, batch, M, N, K)
    rt = device.runtime
    total = M * N * nbatch
    if dtype in _TILED and M > 1 and N > 1:
        kernel, words, tiles, nsplit = _tiled(A, B, batch, N % 4 == 0)
        if nsplit > 1 and -(-total * nsplit // 4) * 4 * dtype.itemsize > limit:
            # the K splits' partial products would pass the binding limit: one pass
            # (or, where the device's loop bound splits K, row slabs of C)
            plan = _tiled(A, B, batch, N % 4 == 0, split=False)
            if plan is None:
                return _matmul_in_slabs(A, B, batch)
            kernel, words, tiles, nsplit = plan
        groups = tiles * nsplit
        stride = total  # partial slabs of C (c_vec: N % 4 == 0, so each slab stays vec4 aligned)
        out = rt.alloc(-(-total * nsplit // 4) * 4 * dtype.itemsize)
    else:
        # Batch dims of extent 1 say nothing; drop them from the kernel's loop.
        bshape, sa, sb = _batch_dims(A, B, batch)
        sAm, sAk = A.strides[-2:]
        sBk, sBn = B.strides[-2:]
        native = device.has_int64
        spec = (dtype.name, native, len(bshape))
        kernel = rt.compile(("matmul", spec), lambda: (km.generic_record(*spec), km.render_generic(*spec)))
        q = -(-total // 4)
        chunk, nsplit = _splits(K, q, 1, _max_chunk(device, 4))
        if nsplit > 1 and q * 4 * nsplit * dtype.itemsize > limit:
            return _matmul_in_slabs(A, B, batch)   # (as the tiled kernel's splits above)
        words = km.param_words(M, N, K, nbatch, A.offset, B.offset, sAm, sAk, sBk, sBn, 0, 0, bshape, sa, sb,
                               chunk, nsplit)
        groups = -(-q * nsplit // 64)
        stride = q * 4
        out = rt.alloc(q * 4 * nsplit * dtype.itemsize)
    # the record's fields are consecutive u32 words (``km._fields``): packed in their order
    rt.launch(kernel, {"A": A.buf, "B": B.buf, "C": out}, pack_params(words), groups)
    if nsplit > 1:
        return g.reshape_view(_sum_partials(out, nsplit, total, stride, dtype, device), shape)
    return g.Data(out, shape, dtype, device)
