"""Host side of the symmetric/Hermitian eigensolver (eigh, eigvalsh) and of the Jacobi
SVD of square and small matrices (kernels: ``_wgsl/linalg_eigen.py``).

Real eigvalsh and eigh of order TRD_MIN < n that ``linalg_trd.fits`` (up to its MAX_N,
on GPUs up to MAX_BLOCKED; eigh without float64 up to TRD_MAX_VECTORS_QL) take the
tridiagonal route of ``linalg_trd``
(Householder reduction, bisection, inverse iteration for the vectors), which does
O(n^3) work in two passes over the trailing matrix per column where Jacobi spends
~8 sweeps of rotations; the Jacobi solvers below serve the rest: real n <= TRD_MIN
(two dispatches: jeig and the one-workgroup refinement), complex Hermitian matrices,
real ones past those orders, and every svd. A real svd of order TRD_MIN < n (up to
SVD_PRECONDITION_MAX; past SMALL_SVD only where the device has float64) works on A V0,
V0 the eigenvectors of A^T A by that route (``_preconditioned_svd``): where the
columns of A V0 are already orthogonal to ojac's bound (a Gram-matrix check, one
readback: float32 input of condition up to ~1e6) they go straight to the refinement;
otherwise ojac (n <= SMALL_SVD) or block Jacobi (past it) runs on A V0, and stops
after a sweep or two where it spent ~8 from A itself (H200, float32 svd: order 512
225 -> 32 ms, 1024 362 -> 57 ms).

Matrices of order n <= SMALL (eigh: two-sided Jacobi, ``jeig``) or n <= SMALL_SVD
(svd of the square matrix, or of the R of a tall one: one-sided Jacobi, ``ojac``) are
solved whole, a workgroup of up to 1024 threads per matrix, every sweep in one
dispatch on GPUs (the rounds cut over dispatches only where the device bounds an
invocation's loops). What these sizes cost is latency, not flops: the blocked solver
below spent ~7 dispatches per round, ~100 us of host time each, and its 2b x 2b
subproblems kept few SMs busy; the whole-matrix kernels need no readback and no
host work between sweeps.

Larger ones run parallel block Jacobi, so that the work spreads
over the GPU and rides on the tiled matmul. The columns are cut into blocks of BS and
paired, a round-robin tournament of the blocks making a sweep; in each round every
pair (I, J) solves its 2 BS x 2 BS subproblem in one workgroup (``jeig``), and the
rotations are applied as batched products:

  eigh  A <- U^H A U:   Y = U^H A[pair rows, :], A = Y[:, pair cols] U;  V <- V U
  svd   (one-sided, on A itself, never on A^H A): G = A_IJ^H A_IJ (the Gram matrix of
        the pair's columns), U from jeig(G), A_IJ <- A_IJ U, V <- V U; at the end
        sigma_j = ||a_j||, u_j = a_j / sigma_j.

The pairs of a round sit next to each other (block positions 2k, 2k+1), so the pair
rows / columns are strided views and every product is one batched matmul; between
rounds one permute kernel moves the blocks into the next round's order (a permutation of the
block columns, and rows for eigh). Sizes that are not a multiple of 2 BS are padded
with zero rows/columns: those stay exactly decoupled (no rotation touches a zero
off-diagonal entry), and are dropped at the end.

Convergence: jeig rotates a pair while |a_pq| > eps sqrt(|a_pp a_qq|) (relative, as
LAPACK's Jacobi codes), and marks a flag of the sweep when a rotation passes the outer
bound (sqrt(m) eps for the SVD cosines, as LAPACK's gesvj). For eigh, couplings
below 4 eps ||A||_F / sqrt(n) are not rotated at all: a block product rounds at about
NS eps ||A||, noise that relative tests would chase forever, while blocks with nothing
left to rotate get U = I exactly and stay noise-free. The host reads that flag once per sweep from the
third sweep on, and stops after a sweep that marked nothing.

Jacobi's rotations (and the products that apply them) leave ~sqrt(rotations) eps of
error in the vectors, well above LAPACK's ~eps; one step of Ogita and Aishima's
matmul-based refinement (in float64 where the device has it, for float32 input)
brings backward error, orthogonality and values to LAPACK's level (``_refined``,
``_svd_finish``): the matrix products through matmul, the elementwise middle (the
eigenvalue / singular value estimates, the gaps, the corrections) in one kernel
instead of some twenty fused elementwise and reduction dispatches, each of which cost
host time; for real matrices of order <= 64 the whole step and the sort run in one
workgroup (``post_eigh``, ``post_svd``), so that eigh and svd are two dispatches.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._graph import node as g
from .._wgsl import linalg_eigen as ke
from . import linalg_trd
from .budget import loop_bound
from .linalg import cast as _cast, contig as _contig, launch, refine_dtype as _work_dtype, tag as _tag
from .matmul import matmul_nodes
from .reduce import reduce_axes

SMALL = 256         # eigh of n <= SMALL: one workgroup per matrix (at 512 the blocked solver
                    # was as fast on an H200, and its svd faster: one workgroup is 1/132 of it)
SMALL_SVD = 256     # svd of n <= SMALL_SVD: one-sided Jacobi, one workgroup per matrix (at
                    # order 512 its refined float32 backward error, 1.3e-6, passed 10 eps)
NS = 32             # pair subproblem size (two blocks of BS)
BS = NS // 2
INNER_SWEEPS = 30   # sweeps of jeig per subproblem at most (quadratic: ~5-8 from scratch)
OUTER_SWEEPS = 30   # block sweeps at most
FIRST_CHECK = 3     # sweeps before the first convergence readback
FLOOR = 4           # blocked eigh: couplings below FLOOR eps ||A||_F / sqrt(n) are left
SVD_PRECONDITION = True  # svd of real n > TRD_MIN: Jacobi (or nothing) on A V0, V0 from eigh(A^T A)
OJAC_SUBGROUPS = True  # ojac's pair sums by subgroup shuffles where the device has them
JEIG_SLOTS = 1       # jeig's items by pair slots (_jeig_slots): 0 never, 1 on GPUs and full blocks, 2 always
TRD_MIN = 64        # real eigh / eigvalsh of TRD_MIN < n <= linalg_trd.MAX_N: the tridiagonal route
                    # (at n <= 64 Jacobi and the one-workgroup refinement are two dispatches)
WATCHDOG_SWEEPS = 4  # whole-matrix sweeps per dispatch at most (order 256: ~30 ms on an H200);
                     # the dispatches after convergence return at once


# eigh's vectors by the tridiagonal route up to this order. With implicit QL for the
# vectors the route stopped at 384: QL's chain of rotations in one workgroup made it
# slower than block Jacobi past ~512 (H200, float32: eigh 256 49 ms against Jacobi's
# 69; 1024 871 ms against 440). Bisection and inverse iteration cost about what
# eigvalsh costs (1024: 147 ms, nearly all of it the reduction) plus Q's WY blocks
# applied to Z through matmul: ~3 n / 32 + 10 dispatches (order 1024: ~105) where
# block Jacobi runs ~7 a round, ~n / 16 rounds a sweep, ~8 sweeps.
# Without float64 the vectors come from QL (``linalg_trd``), and the old limit holds.
TRD_MAX_VECTORS = linalg_trd.MAX_BLOCKED
TRD_MAX_VECTORS_QL = 384
# svd preconditioned by eigh(A^T A) up to this order (past it, block Jacobi on A): the
# tridiagonal route's own limit (H100, svd float32 2048: 125 ms, block Jacobi on A 643,
# torch 235)
SVD_PRECONDITION_MAX = linalg_trd.MAX_BLOCKED


def uses_trd(node: g.Node, mode: str) -> bool:
    """Whether eigh / eigvalsh of this node take the tridiagonal route
    (``linalg_trd``): real matrices of order TRD_MIN < n that its kernels hold (for
    eigh, n <= TRD_MAX_VECTORS; without float64, TRD_MAX_VECTORS_QL)."""
    n = node.shape[-1]
    if mode == "eigh" and n > (TRD_MAX_VECTORS if node.device.has_f64 else TRD_MAX_VECTORS_QL):
        return False
    return mode in ("eigh", "eigvals") and _trd_order(node.device, node.dtype, n, g.prod(node.shape[:-2]))


def _trd_order(device, dtype, n: int, nz: int = 1) -> bool:
    return (dtype.kind == "f" and n > TRD_MIN
            and linalg_trd.fits(device, n, linalg_trd.work_dtype(dtype, device), nz))


def handles(node: g.Node, mode: str) -> bool:
    """Whether ``jacobi`` serves this (m >= n) problem: all of them."""
    return True


def _grid(total: int) -> int:
    return max(1, -(-total // ke.GATHER_WG))


def _jeig_threads(device, ns: int) -> int:
    """jeig's workgroup size. A whole matrix past 32 takes 1024 threads: a round's
    work (ns^2 / 4 blocks of W, ns^2 / 2 pairs of U entries) then spreads over one
    SM's full width, the rounds being the sequential part. The 2b x 2b subproblems
    of the blocked solver take 256 on GPUs and 64 on lavapipe, which runs a
    workgroup's invocations on one CPU thread, so that the idle ones of a round cost
    as much as the busy ones (and 256, not 1024, for whole matrices there)."""
    if loop_bound(device) is not None:
        return 256 if ns > 32 else 64
    return 1024 if ns > 32 else 256


def _round_cost(ns: int, w: int, slots: int | None = None) -> int:
    """Loop iterations of one jeig round per invocation (w threads; ``slots``: pair
    slots a row of its items, see ``_jeig_slots``)."""
    n2 = ns + (ns & 1)
    npairs = n2 // 2
    per = slots or npairs
    return 2 + -(-npairs // w) + -(-npairs * per // w) + -(-ns * per // w)


def _jeig_slots(device, ns: int, cap: int) -> int | None:
    """jeig's items numbered by cap / 2 pair slots (shifts and masks, no division by the
    pair count) where JEIG_SLOTS asks: 1 on GPUs and wherever the block fills its
    capacity (no idle slots), 2 always, 0 never."""
    if JEIG_SLOTS == 2 or (JEIG_SLOTS == 1 and (ns == cap or loop_bound(device) is None)):
        return cap // 2
    return None


def _jeig_layout(device, ns: int, isz: int) -> tuple[int, bool, bool]:
    """(capacity, W in workgroup memory, U too) for ns x ns blocks of isz-byte entries:
    as much of the block as the device's workgroup storage holds."""
    cap = 32
    while cap < ns:
        cap *= 2
    small = (cap // 2) * (5 * isz + 3 * 4) + 64
    lim = device.limits.get("max-compute-workgroup-storage-size", 16384)
    wbytes = cap * cap * isz
    wmem = cap <= 64 and small + wbytes <= lim
    umem = wmem and small + 2 * wbytes <= lim
    return cap, wmem, umem


def _jeig(device, t, src: g.Data, nblocks, ns, nper, strides, lower, th, tolmul, gf, gf_index,
          sweeps=INNER_SWEEPS):
    """Run jeig on ``nblocks`` ns x ns blocks read from ``src`` with (matrix, block, row,
    col) ``strides``: returns (W, U) buffers (blocks x ns x ns, eigenvalues on W's diagonal)."""
    rt = device.runtime
    isz = src.dtype.itemsize
    W = rt.alloc(nblocks * ns * ns * isz)
    U = rt.alloc(nblocks * ns * ns * isz)
    FL = rt.alloc(nblocks * 8)
    thb, use_th = (th, 1) if th is not None else (rt.alloc(4), 0)
    cap, wmem, umem = _jeig_layout(device, ns, isz)
    wg = _jeig_threads(device, ns)
    slots = _jeig_slots(device, ns, cap)
    bufs = {"SRC": src.buf, "W": W, "U": U, "FL": FL, "TH": thb, "GF": gf}
    s_mat, s_blk, s_row, s_col = strides
    nrd = max(1, ns + (ns & 1) - 1)
    total = sweeps * nrd
    # lavapipe stops an invocation's loops past 65535 iterations: cut the rounds there
    fixed = 4 * -(-ns * ns // wg) + 2 * ns + 8
    bound = loop_bound(device)
    per = total if bound is None else max(1, (bound - fixed) // _round_cost(ns, wg, slots))
    if ns > 64:
        per = min(per, WATCHDOG_SWEEPS * nrd)
    for r0 in range(0, total, per):
        r1 = min(total, r0 + per)
        launch(device, "linalg_eigen_jeig", (t, cap, wmem, umem, wg, slots is not None), ke.jeig_record,
               ke.render_jeig, bufs, nblocks,
               nblocks=nblocks, ns=ns, off=src.offset, nper=nper, s_mat=s_mat, s_blk=s_blk, s_row=s_row, s_col=s_col,
               first=int(r0 == 0), r0=r0, r1=r1, tolmul=tolmul, use_th=use_th, lower=int(lower), gf_index=gf_index,
               last=int(r1 == total))
    return W, U


def _order(device, t, rdt, dtype, nz, n, desc, val, vec, rows, divide):
    """Sorted values (nz, n) and, when ``vec`` is given, the matching vector columns
    (nz, rows, n). ``val`` = (buffer, offset, matrix stride, value stride) in R units;
    ``vec`` = (buffer, offset, matrix, row, col strides) in S units."""
    rt = device.runtime
    Sv = rt.alloc(max(nz * n, 1) * rdt.itemsize)
    O = rt.alloc(max(nz * n, 1) * 4)
    Vo = rt.alloc(max(nz * rows * n, 1) * dtype.itemsize) if vec is not None else None
    vbuf, voff, vz, vj = val
    if vec is None:
        vec = (val[0], 0, 0, 0, 0)
    ebuf, eoff, ez, er, ec = vec
    words = dict(nz=nz, n=n, desc=int(desc), rows=rows, voff=voff, vz=vz, vj=vj, eoff=eoff, ez=ez, er=er, ec=ec,
                 divide=int(divide))
    bufs = {"VAL": vbuf, "VEC": ebuf, "Sv": Sv, "O": O, "Vo": Vo if Vo is not None else rt.alloc(4)}
    launch(device, "linalg_eigen_order", (t,), ke.order_record, ke.render_order, bufs, _grid(nz * n), phase=0, **words)
    if Vo is not None:
        launch(device, "linalg_eigen_order", (t,), ke.order_record, ke.render_order, bufs, _grid(nz * rows * n),
               phase=1, **words)
    return Sv, Vo


def _empty(node, mode):
    device = node.device
    dtype = node.dtype
    rdt = dt.real_of(dtype)
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    rt = device.runtime
    res = [g.Data(rt.alloc(4), batch + (n,), rdt, device)]
    if mode == "svd":
        res.append(g.Data(rt.alloc(4), batch + (m, n), dtype, device))
    if mode in ("svd", "eigh"):
        res.append(g.Data(rt.alloc(4), batch + (n, n), dtype, device))
    return res


def jacobi(node: g.Node, mode: str):
    """Values (batch..., n) and, by mode, U (batch..., m, n) and V (batch..., n, n) of a
    (batch..., m, n) node with m >= n, as ``linalg._jacobi`` returns them: 'svd' / 'vals'
    singular values descending (A = U diag(S) V^H), 'eigh' / 'eigvals' eigenvalues of
    the Hermitian (square) A ascending (A = V diag(w) V^H; the lower triangle is read)."""
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    if g.prod(batch) == 0 or n == 0:
        return _empty(node, mode)
    if uses_trd(node, mode):
        return _trd_eigh(node, mode)
    if mode in ("eigh", "eigvals") and n <= SMALL:
        return _small_eigh(node, mode)
    if mode in ("svd", "vals") and n <= SMALL_SVD:
        return _small_svd(node, mode)
    if mode in ("svd", "vals") and _preconditions_large(node):
        return _preconditioned_svd(_contig(node), mode)
    return _blocked(node, mode)


def _preconditions_large(node: g.Node) -> bool:
    """Whether a real svd past SMALL_SVD takes the preconditioned route: V0 from the
    tridiagonal route's eigh of A^T A formed in float64 (so on devices with float64
    only: in float32 V0 misses the noise subspace, and block Jacobi would run its
    sweeps after the Gram matrix and eigh on top)."""
    device = node.device
    n = node.shape[-1]
    return (SVD_PRECONDITION and device.has_f64 and _trd_order(device, node.dtype, n, g.prod(node.shape[:-2]))
            and n <= SVD_PRECONDITION_MAX)


def _trd_eigh(node: g.Node, mode: str):
    """The tridiagonal route (``linalg_trd``), then the refinement step where it asks
    for one, else the sort."""
    lam, X, refine = linalg_trd.eigh(node, mode)
    if refine:
        return _refined(_contig(node), lam, X, mode)
    device = node.device
    dtype = node.dtype
    batch = node.shape[:-2]
    n = node.shape[-1]
    nz = g.prod(batch)
    vec = (X.buf, X.offset, n * n, n, 1) if mode == "eigh" else None
    Sv, Vo = _order(device, _tag(dtype, device), dtype, dtype, nz, n, False, (lam.buf, lam.offset, n, 1), vec, n,
                    False)
    res = [g.Data(Sv, batch + (n,), dtype, device)]
    if mode == "eigh":
        res.append(g.Data(Vo, batch + (n, n), dtype, device))
    return res


def _ojac_threads(device) -> int:
    """ojac's workgroup size: one SM's full width on GPUs; 256 on lavapipe (fewer
    dispatches for its loop bound than 64, less idle work than 1024)."""
    return 256 if loop_bound(device) is not None else 1024


def _ojac_layout(device, m: int, n: int, dtype) -> tuple[int, int, int]:
    """(workgroup size, threads per column pair, capacity) of ojac on m x n matrices:
    threads per pair as many as fill ``_ojac_threads``, up to 32. Where both A and V
    fit in workgroup memory (order up to 64 in float32 on an H200, 48 on lavapipe),
    capacity is m rounded up to 16 and the workgroup shrinks to the threads the pairs
    use; otherwise capacity 0 (the rounds work in the storage buffers)."""
    wg = _ojac_threads(device)
    npairs = (n + (n & 1)) // 2
    tpp = 1
    while tpp < 32 and tpp * 2 * npairs <= wg:
        tpp *= 2
    cap = -(-m // 16) * 16
    used = 1 << max(5, (tpp * npairs - 1).bit_length())
    wsh = min(wg, used) if loop_bound(device) is None else wg
    k = 4 if dtype.kind == "c" else 3
    need = 2 * cap * (cap + 1) * dtype.itemsize + wsh * k * dt.real_of(dtype).itemsize + 16
    if need > device.limits.get("max-compute-workgroup-storage-size", 16384):
        return wg, tpp, 0
    return wsh, tpp, cap


def _small_svd(node: g.Node, mode: str):
    """One-sided Jacobi on whole matrices, a workgroup each (``ojac``), then the
    refinement of ``_svd_finish``: one dispatch on GPUs where the blocked solver
    took several per round, each of which cost ~100 us of host time."""
    device = node.device
    dtype = node.dtype
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    A0 = _contig(node)
    t = _tag(dtype, device)
    if SVD_PRECONDITION and _trd_order(device, dtype, n, g.prod(batch)):
        return _preconditioned_svd(A0, mode)
    Aw, Vw, _ = _ojac(device, t, A0, g.prod(batch), m, n)
    if dtype.kind == "f" and m == n <= ke.POST_MAX:
        return _post_svd(A0, Aw, Vw, mode)
    Ajac = g.Data(Aw, batch + (m, n), dtype, device, 0, _bstr(batch, m * n) + (1, m))
    Vjac = g.Data(Vw, batch + (n, n), dtype, device, 0, _bstr(batch, n * n) + (1, n))
    return _svd_finish(A0, Ajac, Vjac, mode)


def _preconditioned_svd(A0: g.Data, mode: str):
    """svd of real A through the eigenvectors V0 of A^T A (the tridiagonal route) as a
    preconditioner: one-sided Jacobi (``ojac``) on A V0, whose columns are already
    orthogonal to about the Gram matrix's rounding, so that it stops after a sweep or
    two where it spent ~8 from A itself; V = V0 W, then the refinement of
    ``_svd_finish`` as before (Jacobi on A V0 keeps its accuracy: V0 is orthogonal
    to working precision, and the small singular values come from the rotations of
    A V0, not from A^T A).

    A^T A, V0 and A V0 are formed in the refinement's precision (float64 for float32
    input where the device has it; trd works in it anyway). In float32 the Gram
    matrix's rounding, eps sigma_max^2, is what V0 misses by: PCA-like data (rank 16
    plus noise, 240 singular values within ~5% of each other at 100000 x 256) has
    noise eigenvalues of A^T A ~1e-6 sigma_max^2 apart, so V0 was a random basis of
    the noise subspace and ojac ran 7 sweeps at order 128 (9 at 256) where plain A took
    12; formed in float64, the rounded A V0 has columns orthogonal to ~2 eps (relative
    coupling) and ojac ends after one sweep that rotates nothing. A^T A is formed from
    A / max|a_ij| (the division in that precision too: in float32 its rounding moved
    V0 by ~45 eps of coupling), so that it neither overflows nor underflows."""
    device = A0.device
    dtype = A0.dtype
    batch = A0.shape[:-2]
    m, n = A0.shape[-2:]
    nb = len(batch)
    work = _work_dtype(dtype, device)
    Aw = _cast(A0, work)
    amax = _new_axes(reduce_axes(g.make_op("abs", [Aw], work), (nb, nb + 1), "max")[0], 2, False)
    ok = g.make_op("logical_and", [_ew("greater", dt.bool, amax, _scalar(0, work, device)),
                                   g.make_op("isfinite", [amax], dt.bool)], dt.bool)
    div = _where_or_one(ok, amax)
    As = _contig(_ew("divide", work, Aw, div))
    G = matmul_nodes(_conj_t(As), As, batch)
    _, V0 = _trd_eigh(G, "eigh")
    B = _contig(_cast(matmul_nodes(Aw, V0, batch), dtype))
    tolmul = max(1, math.isqrt(m - 1) + 1)
    if _columns_orthogonal(B, work, ke.OJAC_ACTIVE * tolmul * _eps_of(dtype)):
        return _svd_finish(A0, B, V0, mode)
    if n <= SMALL_SVD:
        Ab, Vb, _ = _ojac(device, _tag(dtype, device), B, g.prod(batch), m, n)
        Ajac = g.Data(Ab, batch + (m, n), dtype, device, 0, _bstr(batch, m * n) + (1, m))
        W = g.Data(Vb, batch + (n, n), dtype, device, 0, _bstr(batch, n * n) + (1, n))
    else:
        Ajac, W = _block_jacobi(B, mode, first_check=1)
    Vjac = _contig(matmul_nodes(V0, _cast(W, work), batch))
    return _svd_finish(A0, Ajac, Vjac, mode)


def _columns_orthogonal(B: g.Data, work, tol: float) -> bool:
    """Whether every pair of B's columns (in every matrix of the batch) has a coupling
    |b_p^H b_q| <= tol |b_p| |b_q|, the Gram matrix formed in ``work`` precision by the
    tiled matmul (one readback). With tol OJAC_ACTIVE times ojac's rotation bound, ojac
    would end after its first sweep, having rotated only couplings between its bound
    and tol, which the refinement step squares anyway: so B and V0 go to it directly,
    and the sweep (one workgroup per matrix streaming all of B and V through one core
    n times: 2.8 ms of svd 256 on an H200, growing as n^3 on one core) is skipped. NaN
    fails the test (Jacobi then runs and carries it as before)."""
    device = B.device
    batch = B.shape[:-2]
    n = B.shape[-1]
    rdt = dt.real_of(work)
    Bw = _cast(B, work)
    C = _contig(matmul_nodes(_conj_t(Bw), Bw, batch))
    diag = g.Data(C.buf, batch + (n,), work, device, C.offset, _bstr(batch, n * n) + (n + 1,))
    norms = g.make_op("sqrt", [g.make_op("abs", [diag], rdt)], rdt)
    lim = _ew("multiply", rdt, _new_axes(norms, 1, False), _new_axes(norms, 1, True))
    shape = batch + (n, n)
    zeros = (0,) * len(batch)
    rows = g.Iota(shape, device, 0, zeros + (1, 0))
    cols = g.Iota(shape, device, 0, zeros + (0, 1))
    within = _ew("less_equal", dt.bool, g.make_op("abs", [C], rdt), _ew("multiply", rdt, lim, _scalar(tol, rdt, device)))
    ok = _ew("logical_or", dt.bool, within, _ew("equal", dt.bool, rows, cols))
    bad = g.make_op("cast", [g.make_op("logical_not", [ok], dt.bool)], dt.uint32)
    worst = _contig(reduce_axes(g.reshape_view(bad, (bad.size,)), (0,), "max")[0])
    return device.runtime.read(worst.buf, 4 * worst.offset, 4).view(np.uint32)[0] == 0


def _post_svd(A0: g.Data, Aw, Vw, mode: str):
    """Refinement and sort of small real square SVDs in one dispatch (``post_svd``)
    from ojac's A V and V."""
    device = A0.device
    rt = device.runtime
    dtype = A0.dtype
    batch = A0.shape[:-2]
    n = A0.shape[-1]
    nz = g.prod(batch)
    work = _work_dtype(dtype, device)
    wt = _tag(work, device)
    it = _tag(dtype, device)
    scr = rt.alloc(nz * 7 * n * n * work.itemsize)
    SO = rt.alloc(nz * n * dtype.itemsize)
    UO = rt.alloc(nz * n * n * dtype.itemsize)
    VO = rt.alloc(nz * n * n * dtype.itemsize)
    vectors = int(mode == "svd")
    launch(device, "linalg_eigen_post_svd", (wt, it), ke.post_svd_record, ke.render_post_svd,
           {"A": A0.buf, "AJ": Aw, "VJ": Vw, "SCR": scr, "SO": SO, "UO": UO, "VO": VO}, nz,
           nz=nz, n=n, offA=A0.offset, tau=_tau_bits(dtype), vectors=vectors)
    res = [g.Data(SO, batch + (n,), dtype, device)]
    if vectors:
        res += [g.Data(UO, batch + (n, n), dtype, device), g.Data(VO, batch + (n, n), dtype, device)]
    return res


def _ojac(device, t, A0: g.Data, nz: int, m: int, n: int):
    """Run ojac on the nz contiguous m x n matrices of A0: the (A V, V) buffers, each
    matrix's columns contiguous (n x m and n x n, transposed), and its flags FL (three
    u32 a matrix: converged, a coupling past the sweep bound in the last sweep, sweeps
    run)."""
    rt = device.runtime
    isz = A0.dtype.itemsize
    Aw = rt.alloc(nz * m * n * isz)
    Vw = rt.alloc(nz * n * n * isz)
    FL = rt.alloc(nz * 12)
    wg, tpp, cap = _ojac_layout(device, m, n, A0.dtype)
    lanes = rt.subgroup_size
    sg = OJAC_SUBGROUPS and t in ("f32", "c64") and lanes is not None and tpp <= lanes
    n2 = n + (n & 1)
    npairs = n2 // 2
    nrd = max(1, n2 - 1)
    total = OUTER_SWEEPS * nrd
    tolmul = max(1, math.isqrt(m - 1) + 1)
    per = WATCHDOG_SWEEPS * nrd if n > 64 else total
    bound = loop_bound(device)
    if bound is not None:
        passes = -(-npairs // (wg // tpp))
        cost = 2 + passes * (3 + tpp + 2 * -(-m // tpp) + -(-n // tpp))
        fixed = 2 * -(-m * n // wg) + -(-n // wg) * (2 * n + m)
        if cap:  # the copies into and out of workgroup memory
            fixed += 2 * (-(-m * n // wg) + -(-n * n // wg))
        per = min(per, max(1, (bound - fixed) // cost))
    bufs = {"SRC": A0.buf, "A": Aw, "V": Vw, "FL": FL}
    for r0 in range(0, total, per):
        r1 = min(total, r0 + per)
        launch(device, "linalg_eigen_ojac", (t, wg, cap, sg), ke.ojac_record, ke.render_ojac, bufs, nz,
               nz=nz, m=m, n=n, off=A0.offset, s_mat=m * n, s_row=n, s_col=1, first=int(r0 == 0), r0=r0, r1=r1,
               tolmul=tolmul, tpp=tpp, last=int(r1 == total))
    return Aw, Vw, FL


def _small_eigh(node: g.Node, mode: str):
    device = node.device
    dtype = node.dtype
    batch = node.shape[:-2]
    n = node.shape[-1]
    nz = g.prod(batch)
    t = _tag(dtype, device)
    A = _contig(node)
    gf = device.runtime.alloc(4)
    W, U = _jeig(device, t, A, nz, n, 1, (n * n, 0, n, 1), True, None, 1, gf, 0)
    if dtype.kind == "f" and n <= ke.POST_MAX:
        return _post_eigh(A, U, mode)
    lam = g.Data(W, batch + (n,), dtype, device, 0, _bstr(batch, n * n) + (n + 1,))
    X = g.Data(U, batch + (n, n), dtype, device)
    return _refined(A, lam, X, mode)


def _post_eigh(A: g.Data, U, mode: str):
    """Refinement and sort of small real eigendecompositions in one dispatch
    (``post_eigh``): values (and vectors) of A's lower triangles from Jacobi's U."""
    device = A.device
    rt = device.runtime
    dtype = A.dtype
    batch = A.shape[:-2]
    n = A.shape[-1]
    nz = g.prod(batch)
    work = _work_dtype(dtype, device)
    wt = _tag(work, device)
    it = _tag(dtype, device)
    scr = rt.alloc(nz * 5 * n * n * work.itemsize)
    WO = rt.alloc(nz * n * dtype.itemsize)
    VO = rt.alloc(nz * n * n * dtype.itemsize)
    vectors = int(mode == "eigh")
    launch(device, "linalg_eigen_post_eigh", (wt, it), ke.post_eigh_record, ke.render_post_eigh,
           {"A": A.buf, "X": U, "SCR": scr, "WO": WO, "VO": VO}, nz,
           nz=nz, n=n, offA=A.offset, tau=_tau_bits(dtype), vectors=vectors)
    res = [g.Data(WO, batch + (n,), dtype, device)]
    if vectors:
        res.append(g.Data(VO, batch + (n, n), dtype, device))
    return res


def _hermitian(A: g.Data) -> g.Data:
    """The Hermitian matrices that A's lower triangles define (contiguous A)."""
    device = A.device
    t = _tag(A.dtype, device)
    n = A.shape[-1]
    nz = g.prod(A.shape[:-2])
    out = _permute(device, t, A.dtype, A.buf, nz, n, n, 1, A.offset, n * n, n, 2 * BS, BS, False, n, n,
                  range(-(-n // BS)))
    return g.Data(out, A.shape, A.dtype, device)


def _refined(A: g.Data, lam: g.Node, X: g.Node, mode: str):
    """One step of Ogita and Aishima's refinement of an eigendecomposition (X, lam) of
    the Hermitian matrices of A's lower triangles, then sorted (values ascending).

    With R = I - X^H X and S = X^H A X: lam_i = s_ii / (1 - r_ii), X <- X (I + E),
    e_ij = (s_ij + lam_j r_ij) / (lam_j - lam_i) where |lam_i - lam_j| > delta, else
    r_ij / 2 (delta = 2 (||S - diag(lam)||_F + ||A||_F ||R||_F): clusters are only
    re-orthogonalized). Jacobi's eigenvectors carry about sqrt(rotations) eps of error
    per column (~8e-6 in float32 at n = 50); one step brings that to the square of it
    plus the rounding of the products (~sqrt(n) eps, as LAPACK), and the eigenvalues
    to Rayleigh quotients. Four matrix products: cheap beside the Jacobi sweeps."""
    device = A.device
    batch = A.shape[:-2]
    n = A.shape[-1]
    nz = g.prod(batch)
    work = _work_dtype(A.dtype, device)
    H = _cast(_hermitian(A), work)
    Xw = _contig(_cast(X, work))
    Xh = _contig(_conj_t(Xw)) if work.kind == "c" else _conj_t(Xw)
    Sm = matmul_nodes(Xh, matmul_nodes(H, Xw, batch), batch)
    G = matmul_nodes(Xh, Xw, batch)
    rt = device.runtime
    wt = _tag(work, device)
    E = rt.alloc(nz * n * n * work.itemsize)
    LAM = rt.alloc(nz * n * dt.real_of(work).itemsize)
    launch(device, "linalg_eigen_refine_eigh", (wt,), ke.refine_eigh_record, ke.render_refine_eigh,
           {"SM": Sm.buf, "G": G.buf, "E": E, "LAM": LAM}, nz, nz=nz, n=n, tau=_tau_bits(A.dtype))
    lam = _cast(g.Data(LAM, batch + (n,), dt.real_of(work), device), dt.real_of(A.dtype))
    if mode != "eigh":
        return _sorted(lam, X, mode)
    Ed = g.Data(E, batch + (n, n), work, device)
    Xn = _cast(g.make_op("add", [Xw, matmul_nodes(Xw, Ed, batch)], work), A.dtype)
    return _sorted(lam, _contig(Xn), mode)


# The refinement's elementwise steps, built as the namespace's elementwise functions
# build them (a Python scalar is a 0-d Const; operands of different shapes are
# broadcast views of the result's shape), so that they fuse as before.

def _scalar(value, dtype, device) -> g.Const:
    return g.Const(complex(value) if dtype.kind == "c" else float(value), dtype, device, ())


def _ew(op: str, dtype, *nodes) -> g.Node:
    shapes = [nd.shape for nd in nodes if not (isinstance(nd, g.Const) and nd.shape == ())]
    if len(set(shapes)) > 1:
        ndim = max(len(s) for s in shapes)
        padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
        shape = tuple(max(d) if min(d) else 0 for d in zip(*padded))
        nodes = [nd if isinstance(nd, g.Const) and nd.shape == () else g.broadcast_view(nd, shape) for nd in nodes]
    return g.make_op(op, list(nodes), dtype)


def _where_or_one(cond: g.Node, x: g.Node) -> g.Node:
    """x where ``cond``, else 1 (a safe divisor): ``x * 0 + 1``, so that a NaN or inf
    x stays NaN rather than becoming a finite 1."""
    one = _ew("add", x.dtype, _ew("multiply", x.dtype, x, _scalar(0, x.dtype, x.device)), _scalar(1, x.dtype, x.device))
    return _ew("where", x.dtype, cond, x, one)


def _new_axes(node: g.Node, k: int, last: bool) -> g.Node:
    """``node[..., None, :]`` (``last``) or ``node[..., None, None]`` (k = 2): the view
    the namespace's basic indexing makes."""
    items = [("slice", 0, 1, d) for d in node.shape]
    at = len(items) - 1 if last else len(items)
    return g.index_view(node, items[:at] + [("new",)] * k + items[at:])


def _astype(node: g.Node, dtype) -> g.Node:
    """``astype`` (a copy where the dtype already matches)."""
    return g.make_op("copy", [node], dtype) if node.dtype is dtype else g.make_op("cast", [node], dtype)


def _tau_bits(dtype) -> int:
    """sqrt(eps) / 4 of the input's precision as float32 bits: the refinement applies
    first-order corrections only below it (their square is the error the step leaves;
    pairs closer than that are only re-orthogonalized)."""
    tau = math.sqrt(_eps_of(dtype)) / 4
    return int(np.array(tau, np.float32).view(np.uint32))


def _eps_of(dtype) -> float:
    return 1.1920928955078125e-07 if dt.real_of(dtype) is dt.float32 else 2.220446049250313e-16


def _sorted(lam: g.Node, X: g.Data | None, mode: str):
    """Values ascending (and the matching columns of X for 'eigh')."""
    lamd = _contig(lam)
    device = lamd.device
    rdt = lamd.dtype
    dtype = X.dtype
    batch = lamd.shape[:-1]
    n = lamd.shape[-1]
    nz = g.prod(batch)
    t = _tag(dtype, device)
    vec = (X.buf, X.offset, n * n, n, 1) if mode == "eigh" else None
    Sv, Vo = _order(device, t, rdt, dtype, nz, n, False, (lamd.buf, lamd.offset, n, 1), vec, n, False)
    res = [g.Data(Sv, batch + (n,), rdt, device)]
    if Vo is not None:
        res.append(g.Data(Vo, batch + (n, n), dtype, device))
    return res


def _tournament(nblk: int, r: int) -> list[int]:
    """Block ids by position in round r of the circle method (block 0 fixed, the others
    rotating): positions 2k and 2k+1 are paired."""
    ring = list(range(1, nblk))
    s = r % (nblk - 1)
    ring = ring[s:] + ring[:s]
    line = [0] + ring
    out = []
    for k in range(nblk // 2):
        out += [line[k], line[nblk - 1 - k]]
    return out


def _permute(device, t, dtype, src_buf, nz, rows, cols, kind, off, sz, sr, sp, sh, rowperm, vrows, vcols, perm):
    rt = device.runtime
    dst = rt.alloc(nz * rows * cols * dtype.itemsize)
    launch(device, "linalg_eigen_permute", (t,), ke.permute_record, ke.render_permute, {"SRC": src_buf, "DST": dst},
           _grid(nz * rows * cols), table=perm, nz=nz, rows=rows, cols=cols, kind=kind, off=off, sz=sz, sr=sr, sp=sp,
           sh=sh, bs=BS, rowperm=int(rowperm), vrows=vrows, vcols=vcols)
    return dst


def _conj_t(node: g.Node) -> g.Node:
    axes = tuple(range(node.ndim - 2)) + (node.ndim - 1, node.ndim - 2)
    node = g.permute_view(node, axes)
    return g.make_op("conj", [node], node.dtype) if node.dtype.kind == "c" else node


def _blocked(node: g.Node, mode: str):
    """Parallel block Jacobi (module docstring), then the refinement step."""
    A0 = _contig(node)
    vals_or_av, vecs = _block_jacobi(A0, mode, FIRST_CHECK)
    if mode in ("eigh", "eigvals"):
        return _refined(A0, vals_or_av, vecs, mode)
    return _svd_finish(A0, vals_or_av, vecs, mode)


def _block_jacobi(A0: g.Data, mode: str, first_check: int):
    """Block Jacobi's converged state on the contiguous A0: (eigenvalues, V) for eigh,
    (A V, V) for svd, reading the sweep's convergence flag back from sweep
    ``first_check`` on (FIRST_CHECK from scratch; the preconditioned route's A V0 is
    nearly orthogonal already, a sweep or two)."""
    device = A0.device
    rt = device.runtime
    dtype = A0.dtype
    rdt = dt.real_of(dtype)
    batch = A0.shape[:-2]
    m, n = A0.shape[-2:]
    nz = g.prod(batch)
    t = _tag(dtype, device)
    eig = mode in ("eigh", "eigvals")
    vectors = True  # eigvals and svdvals too: the final refinement needs them
    npad = -(-n // NS) * NS
    nblk = npad // BS
    P = nblk // 2
    rows = npad if eig else m
    eps = 1.1920928955078125e-07 if rdt is dt.float32 else 2.220446049250313e-16

    order = _tournament(nblk, 0)
    # A in position order, zero padded (eigh: Hermitian from the lower triangle)
    A = _permute(device, t, dtype, A0.buf, nz, rows, npad, 1 if eig else 0, A0.offset, m * n, n, 2 * BS, BS,
                eig, m, n, order)
    V = _permute(device, t, dtype, A0.buf, nz, n, npad, 2, 0, 0, 0, 0, 0, False, n, n, order) if vectors else None
    th = None
    if eig:
        # 4 eps ||A||_F per matrix: the outer convergence floor
        x = g.Data(A0.buf, batch + (n * n,), dtype, device, A0.offset)
        a2 = g.make_op("abs", [x], rdt)
        ss = reduce_axes(g.make_op("multiply", [a2, a2], rdt), (len(batch),), "sum")[0]
        fl = g.make_op("multiply", [g.make_op("sqrt", [ss], rdt), g.Const(FLOOR * eps / math.sqrt(n), rdt, device,
                                                                           ss.shape)], rdt)
        th = _contig(fl).buf
    tolmul = 1 if eig else max(1, math.isqrt(m - 1) + 1)
    gf = rt.upload(np.zeros(OUTER_SWEEPS, np.uint32))

    def data(buf, shape, strides, off=0):
        return g.Data(buf, shape, dtype, device, off, strides)

    sweep = 0
    r = 0
    while True:
        last_round = (r + 1) % (nblk - 1) == 0
        if eig:
            W, U = _jeig(device, t, data(A, (1,), (1,)), nz * P, NS, P,
                         (rows * npad, NS * npad + NS, npad, 1), True, th, tolmul, gf, sweep)
        else:
            cols = data(A, batch + (P, m, NS), _bstr(batch, m * npad) + (NS, npad, 1))
            G = _contig(matmul_nodes(_conj_t(cols), cols, batch + (P,)))
            W, U = _jeig(device, t, G, nz * P, NS, P, (P * NS * NS, NS * NS, NS, 1), True, None, tolmul, gf,
                         sweep)
        Ud = data(U, batch + (P, NS, NS), _bstr(batch, P * NS * NS) + (NS * NS, NS, 1))
        if eig:
            prow = data(A, batch + (P, NS, npad), _bstr(batch, npad * npad) + (NS * npad, npad, 1))
            Y = _contig(matmul_nodes(_conj_t(Ud), prow, batch + (P,)))
            ycols = data(Y.buf, batch + (P, npad, NS), _bstr(batch, npad * npad) + (NS, npad, 1), Y.offset)
            Z = _contig(matmul_nodes(ycols, Ud, batch + (P,)))
        else:
            Z = _contig(matmul_nodes(cols, Ud, batch + (P,)))
        if vectors:
            vcols = data(V, batch + (P, n, NS), _bstr(batch, n * npad) + (NS, npad, 1))
            VZ = _contig(matmul_nodes(vcols, Ud, batch + (P,)))
        finished = False
        if last_round:
            if sweep + 1 >= OUTER_SWEEPS:
                finished = True
            elif sweep + 1 >= first_check:
                flag = rt.read(gf, 4 * sweep, 4).view(np.uint32)[0]
                finished = flag == 0
            sweep += 1
        nxt = list(range(nblk)) if finished else _tournament(nblk, r + 1)
        pos = {blk: i for i, blk in enumerate(order)}
        perm = [pos[blk] for blk in nxt]
        A = _permute(device, t, dtype, Z.buf, nz, rows, npad, 0, Z.offset, P * rows * NS, NS, rows * NS, BS,
                    eig, rows, npad, perm)
        if vectors:
            V = _permute(device, t, dtype, VZ.buf, nz, n, npad, 0, VZ.offset, P * n * NS, NS, n * NS, BS,
                        False, n, npad, perm)
        order = nxt
        r += 1
        if finished:
            break

    if eig:
        lam = g.Data(A, batch + (n,), dtype, device, 0, _bstr(batch, rows * npad) + (npad + 1,))
        X = g.Data(V, batch + (n, n), dtype, device, 0, _bstr(batch, n * npad) + (npad, 1))
        return lam, X
    Ajac = g.Data(A, batch + (m, n), dtype, device, 0, _bstr(batch, m * npad) + (npad, 1))
    Vjac = g.Data(V, batch + (n, n), dtype, device, 0, _bstr(batch, n * npad) + (npad, 1))
    return Ajac, Vjac


def _colnorms(M: g.Node, rdt) -> g.Node:
    """The 2-norms of M's columns, (batch..., n) in ``rdt``, each column scaled by its
    largest magnitude first (as LAPACK's nrm2), so that squares of huge or tiny entries
    (float32 past 1e19 or below 1e-19) neither overflow nor underflow."""
    device = M.device
    a = g.make_op("abs", [M], rdt)
    amax = reduce_axes(a, (M.ndim - 2,), "max")[0]
    pos = _ew("greater", dt.bool, amax, _scalar(0, rdt, device))
    scale = _where_or_one(pos, amax)
    q = _ew("divide", rdt, a, _new_axes(scale, 1, True))
    ss = reduce_axes(g.make_op("multiply", [q, q], rdt), (M.ndim - 2,), "sum")[0]
    return _ew("multiply", rdt, g.make_op("sqrt", [ss], rdt), scale)


def _svd_finish(A0: g.Data, Ajac: g.Data, Vjac: g.Data, mode: str):
    """Singular values and vectors from the converged one-sided Jacobi state A V
    (columns of norm sigma_j) and V, after one step of Ogita and Aishima's refinement
    (in float64 where the device has it and A is float32).

    Jacobi's A V carries the rounding of every round's product (and V that of every
    rotation): ~sqrt(rounds) eps, where LAPACK's backward error is ~eps. With
    U = the unit columns of A V, R = I - U^H U, Q = I - V^H V, T = U^H A V:
    sigma_i = t_ii / (1 - (r_ii + q_ii) / 2), U <- U (I + F), V <- V (I + G),
    f_ij = (a sigma_j + b sigma_i) / (sigma_j^2 - sigma_i^2),
    g_ij = (a sigma_i + b sigma_j) / (sigma_j^2 - sigma_i^2), a = t_ij + sigma_j r_ij,
    b = conj(t_ji) + sigma_j q_ij, where that stays below sqrt(eps) (else and on the
    diagonal, R / 2 and Q / 2: orthonormalization only); a tall U also takes the part of
    A V outside its span, (A V - U T) / sigma. R, Q symmetrized so that F + F^H = R
    holds exactly."""
    device = A0.device
    dtype = A0.dtype
    rdt = dt.real_of(dtype)
    batch = A0.shape[:-2]
    m, n = A0.shape[-2:]
    nz = g.prod(batch)
    t = _tag(dtype, device)
    work = _work_dtype(dtype, device)
    nj = _new_axes(_colnorms(Ajac, rdt), 1, True)
    pos = _ew("greater", dt.bool, nj, _scalar(0, rdt, device))
    unit = _ew("divide", dtype, Ajac, _cast(_where_or_one(pos, nj), dtype))
    U = _contig(_cast(_ew("where", dtype, pos, unit, _ew("multiply", dtype, Ajac, _scalar(0, dtype, device))), work))
    V = _contig(_cast(Vjac, work))
    A = _cast(A0, work)
    AV = matmul_nodes(A, V, batch)
    Uh = _contig(_conj_t(U)) if work.kind == "c" else _conj_t(U)
    Vh = _conj_t(V)
    T = matmul_nodes(Uh, AV, batch)
    UU = matmul_nodes(Uh, U, batch)
    VV = matmul_nodes(Vh, V, batch)
    rt = device.runtime
    wt = _tag(work, device)
    F = rt.alloc(nz * n * n * work.itemsize)
    G = rt.alloc(nz * n * n * work.itemsize)
    SIG = rt.alloc(nz * n * dt.real_of(work).itemsize)
    launch(device, "linalg_eigen_refine_svd", (wt,), ke.refine_svd_record, ke.render_refine_svd,
           {"T": T.buf, "UU": UU.buf, "VV": VV.buf, "F": F, "G": G, "SIG": SIG}, _grid(nz * n * n),
           nz=nz, n=n, tau=_tau_bits(dtype))
    sig = g.Data(SIG, batch + (n,), dt.real_of(work), device)
    S = _contig(_astype(sig, rdt))
    val = (S.buf, S.offset, n, 1)
    if mode == "vals":
        Sv, _ = _order(device, t, rdt, dtype, nz, n, True, val, None, m, False)
        return [g.Data(Sv, batch + (n,), rdt, device)]
    Fd = g.Data(F, batch + (n, n), work, device)
    Gd = g.Data(G, batch + (n, n), work, device)
    Un = g.make_op("add", [U, matmul_nodes(U, Fd, batch)], work)
    if m > n:
        # a tall U also takes the part of A V outside its span, (A V - U T) / sigma
        sr = sig.dtype
        sj = _new_axes(sig, 1, True)
        smax = _new_axes(reduce_axes(sig, (len(batch),), "max")[0], 2, False)
        big = _ew("greater", dt.bool, sj, _ew("multiply", sr, smax, _scalar(m * _eps_of(dtype), sr, device)))
        div = _where_or_one(big, sj)
        if work.kind == "c":
            div = _astype(div, work)
        UT = g.reshape_view(matmul_nodes(U, T, batch), batch + (m, n))
        out = _ew("divide", work, _ew("subtract", work, AV, UT), div)
        Un = _ew("add", work, Un, _ew("where", work, big, out, _ew("multiply", work, out, _scalar(0, work, device))))
    Vn = g.make_op("add", [V, matmul_nodes(V, Gd, batch)], work)
    Und = _contig(_astype(Un, dtype))
    Vnd = _contig(_astype(Vn, dtype))
    Sv, Uo = _order(device, t, rdt, dtype, nz, n, True, val, (Und.buf, Und.offset, m * n, n, 1), m, False)
    _, Vo = _order(device, t, rdt, dtype, nz, n, True, val, (Vnd.buf, Vnd.offset, n * n, n, 1), n, False)
    return [g.Data(Sv, batch + (n,), rdt, device), g.Data(Uo, batch + (m, n), dtype, device),
            g.Data(Vo, batch + (n, n), dtype, device)]


def _bstr(batch, mat: int) -> tuple:
    """Contiguous strides of the batch dims over matrices of ``mat`` elements."""
    out = []
    s = mat
    for d in reversed(batch):
        out.append(s)
        s *= d
    return tuple(reversed(out))
