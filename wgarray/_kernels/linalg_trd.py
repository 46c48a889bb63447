"""Host side of the tridiagonal route of eigh / eigvalsh for real matrices (kernels:
``_wgsl/linalg_trd.py``): the Householder reduction A = Q T Q^T (``trd``, a
workgroup per matrix), the eigenvalues of T by bisection on Sturm counts
(``bisect``, an invocation per eigenvalue, T split at its negligible off-diagonals;
on GPUs multisection, ``multisect``), then for the vectors inverse iteration on T
(``stein``, a workgroup per eigenvalue, clusters re-orthogonalized by their leaders)
and the back-transformation X = Q Z (past order WY_MIN Q's compact WY blocks applied
to Z through the tiled matmul, ``wy``; below, Q formed in trd and one product); the
caller sorts. This is LAPACK's dsytrd + dstebz + dstein + dormtr in shape (dsyevx's
route).

Why this beside Jacobi: two-sided Jacobi spends ~8 sweeps of n^3-order rotations,
each sweep's ~n rounds a barrier-bound step; here the O(n^3) part (the reduction and
the back-transformation) is two passes over the trailing matrix per column and
matrix products. On an NVIDIA H200 an order-256 eigh was ~60 ms of Jacobi in one
workgroup. Implicit QL, which stood where bisection and inverse iteration stand now,
is a chain of ~3 n^2 dependent rotations with barriers: 38 of eigh 256's 49.5 ms on
the H200; bisection (2.0 ms there for eigvalsh 256) and inverse iteration are one
short sequence per eigenvalue, all eigenvalues at once.

Precision: bisection and inverse iteration run in float64 where the device has it
(float32 input too), rounded once to the input's dtype; so do the reduction and the
back-transformation, except for float32 input on the blocked route (GPUs, order
BLOCKED_MIN and up), which reduces and back-transforms in float32 as LAPACK's ssyevd
does (``REDUCE_IN_DTYPE``). Inverse
iteration's vectors carry about eps ||T|| / gap of their neighbours (gaps below 1e-3
||T|| are re-orthogonalized), which float32 results never see; float64 vectors take
the caller's refinement step (``linalg_eigen._refined``: four products), which
brings their orthogonality from up to 12x LAPACK's to below it. On a device without
float64 the route runs in float32 with implicit QL for the vectors (``tql``: its
rotations applied to Q) and the same step brings the result to LAPACK's level:
inverse iteration's vectors there, for clusters whose gaps fall below float32's
resolution, are mixtures of the cluster's eigenvectors (orthogonal, but not
eigenvectors of a nearby T), so their Rayleigh quotients, the refinement's values,
strayed by up to the cluster's width (identity + 1e-7 noise at order 300: 1.7e-6
against QL's 4.0e-7; order 257, clustered: 1.3e-6 against 5.6e-7).

Orders: up to MAX_N where the one-workgroup kernels hold the matrix's rows in
workgroup memory; on GPUs, whose route is the blocked reduction (``linalg_sytrd``,
its init over the device too), up to MAX_BLOCKED, inverse iteration keeping its rows
in storage past what workgroup memory holds (``_stein_spills``).

Dispatches: on GPUs the reduction is one dispatch, the eigenvalues one
(multisection, ``multisect``, a workgroup an eigenvalue, in bisect's place), stein
one (without float64: tql one), and Q Z two products and a subtraction a block of 32 reflectors (with wy before
them; or one product up to WY_MIN): eigh of order 256 from float32 is 33 dispatches
in all (with the casts and the sort), 37 from float64 (the refinement's products);
lavapipe, which ends an invocation's loops past 65535 iterations, gets the column
ranges, bisection steps and inverse iterations cut over more, planned against
``loop_bound``; the clusters that set how long inverse iteration runs are only known
on the device, so there the host reads stein's state back after the planned
dispatches and runs more while a cluster is unfinished.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._graph import node as g
from .._wgsl import linalg_trd as kt
from . import linalg_sytrd as _sytrd
from .budget import loop_bound
from .linalg import cast as _cast, contig as _contig, eye, launch, tag as _tag
from .linalg_blocked import qr_tall
from .matmul import matmul_nodes

MAXIT = 30          # QL iterations per eigenvalue at most (LAPACK's dsteqr: 30 n in all)
STEPS = 3.0         # QL steps per eigenvalue the lavapipe plan counts on (with the search: 1.5 to 3 seen)
MAX_N = 1024        # the largest order the one-workgroup kernels take (workgroup memory)
MAX_BLOCKED = 8192  # the largest order of the blocked reduction's route (GPUs): an H200's
                    # 2 GiB binding holds stein's rows in float64 to ~9400
WY_MIN = 128        # Q by compact WY blocks through matmul past this order (below: in trd)


def _cap(n: int) -> int:
    cap = 64
    while cap < n:
        cap *= 2
    return cap


def _threads(device) -> int:
    """256 threads a matrix on GPUs; 64 on lavapipe, which runs a workgroup's
    invocations on one CPU thread (idle ones cost as much as busy ones)."""
    return 64 if loop_bound(device) is not None else 256


def _trd_threads(device) -> int:
    """trd's workgroup size: on GPUs as many as a workgroup takes (up to 1024: its
    passes over the trailing matrix are bound by the loads in flight, a few per
    invocation), 64 on lavapipe."""
    if loop_bound(device) is not None:
        return 64
    return min(1024, device.limits.get("max-compute-invocations-per-workgroup", 256))


def fits(device, n: int, work, nz: int = 1) -> bool:
    """Whether the route takes nz matrices of order n. On the blocked reduction's
    route (GPUs, ``linalg_sytrd``) up to MAX_BLOCKED, where the largest of its
    buffers (stein's rows in storage: three n x n a stack) fits one binding;
    otherwise where the one-workgroup kernels' workgroup arrays fit: trd's four of cap
    entries (double buffers of v and p) and its reduction array; stein's
    (``stein_workgroup_bytes``)."""
    if n >= 3 and _sytrd.wanted(device, nz, n):
        return n <= MAX_BLOCKED and 3 * nz * n * n * work.itemsize <= device.max_binding_bytes
    lim = device.limits.get("max-compute-workgroup-storage-size", 16384)
    need = (4 * _cap(n) + _trd_threads(device)) * work.itemsize + 64
    t = "f64" if work.itemsize == 8 else "f32"
    need = max(need, kt.stein_workgroup_bytes(t, _cap(n), _stein_threads(device, n), STEIN_STAGE))
    return 3 <= n <= MAX_N and need <= lim


# float32 input on the blocked route (GPUs, order >= linalg_sytrd.BLOCKED_MIN): the
# reduction and the back-transformation Q Z in float32, as LAPACK's ssyevd runs them
# (backward error ~eps32 ||A||, orthogonality ~eps32); bisection and inverse
# iteration still in float64 on T, whose eigen-decomposition they then give to
# float64's accuracy (off: all in float64)
REDUCE_IN_DTYPE = True


def work_dtype(dtype, device):
    return dt.float64 if device.has_f64 else dtype


def _ranges(ks, cost, budget):
    """Consecutive runs of the column indices ``ks`` whose summed cost fits ``budget``
    (at least one column each; budget None: one run)."""
    if budget is None:
        return [list(ks)] if ks else []
    out, cur, used = [], [], 0
    for k in ks:
        c = cost(k)
        if cur and used + c > budget:
            out.append(cur)
            cur, used = [], 0
        cur.append(k)
        used += c
    if cur:
        out.append(cur)
    return out


def eigh(node: g.Node, mode: str):
    """(values, vectors, refine) of the real symmetric matrices of node's lower
    triangles, in node's dtype: the values (batch..., n) unsorted, the vectors as
    columns (batch..., n, n; None for mode 'eigvals' unless ``refine``), and whether
    they still need the refinement step (a float32 result computed in float32, or
    float64 vectors), which the caller applies (``linalg_eigen``), as it sorts."""
    device = node.device
    rt = device.runtime
    dtype = node.dtype
    batch = node.shape[:-2]
    n = node.shape[-1]
    nz = g.prod(batch)
    work = work_dtype(dtype, device)
    wt = _tag(work, device)
    blocked = _sytrd.wanted(device, nz, n)
    # the precision of the reduction and the back-transformation: the work dtype, or
    # on the blocked route float32 input's own (see REDUCE_IN_DTYPE)
    red = dtype if blocked and REDUCE_IN_DTYPE and dtype is dt.float32 else work
    rt_ = _tag(red, device)
    A0 = _contig(_cast(_contig(node), red))
    # one refinement step: without float64 for the float32 result (its vectors too);
    # for float64 input for its vectors, whose orthogonality inverse iteration leaves
    # at eps ||T|| / gap (up to 12x LAPACK's at order 70, 1e-3 ||T|| being the least
    # gap it re-orthogonalizes)
    refine = (work is not dt.float64 and dtype is not dt.float64) or (dtype is dt.float64 and mode == "eigh")
    vectors = mode == "eigh" or refine
    wg = _trd_threads(device)
    cap = _cap(n)
    isz = red.itemsize
    A = rt.alloc(nz * n * n * isz)
    Q = rt.alloc(nz * n * n * isz) if vectors and n <= WY_MIN else rt.alloc(4)
    D = rt.alloc(nz * n * isz)
    E = rt.alloc(nz * n * isz)
    TAU = rt.alloc(nz * n * isz)
    SC = rt.alloc(nz * isz)
    bound = loop_bound(device)
    budget = None if bound is None else bound - 2 * -(-n * n // wg) - 64
    lg = int(math.log2(wg))

    def per(m):
        return -(-m // wg)

    def cost0(k):
        m = n - k - 1
        return per(m) * (m + 6) + -(-m * m // wg) + 4 * lg + 16

    def cost1(k):
        m = n - k - 1
        return per(m) * (m + 3) + -(-m * m // wg) + 8

    bufs = {"SRC": A0.buf, "A": A, "Q": Q, "D": D, "E": E, "TAU": TAU, "SC": SC}
    spec = (rt_, cap, wg)
    if blocked:
        # A symmetric and scaled (trd's init, over the device), then the blocked reduction
        _sytrd.init(device, rt_, isz, nz, n, A0, A, SC)
        _sytrd.reduce(device, rt_, isz, nz, n, A, D, E, TAU)
        if red is not work:
            D, E, SC = (_widen(device, b, m, red, work) for b, m in ((D, nz * n), (E, nz * n), (SC, nz)))
    else:
        for i, ks in enumerate(_ranges(range(n - 2), cost0, budget)):
            launch(device, "linalg_trd", spec, kt.trd_record, kt.render_trd, bufs, nz, nz=nz, n=n,
                   off=A0.offset, s_mat=n * n, phase=0, k0=ks[0], k1=ks[-1] + 1, init=int(i == 0))
    if vectors and n <= WY_MIN:
        for i, ks in enumerate(_ranges(range(n - 3, -1, -1), cost1, budget)):
            launch(device, "linalg_trd", spec, kt.trd_record, kt.render_trd, bufs, nz, nz=nz, n=n, off=0,
                   s_mat=n * n, phase=1, k0=ks[-1], k1=ks[0] + 1, init=int(i == 0))
    def ql():
        Qb = _contig(_cast(_q_wy(device, rt_, red, batch, n, A, TAU, None), work)).buf if n > WY_MIN else Q
        LAM = _tql(device, wt, cap, _threads(device), nz, n, D, E, SC, Qb, True)
        lam = _contig(_cast(g.Data(LAM, batch + (n,), work, device), dtype))
        return lam, _contig(_cast(g.Data(Qb, batch + (n, n), work, device), dtype)), refine

    if vectors and work is not dt.float64:
        # without float64: implicit QL on Q (see the module's docstring)
        assert red is work
        return ql()
    LAM, LO, HI = _bisect(device, wt, nz, n, D, E, SC)
    lam = _contig(_cast(g.Data(LAM, batch + (n,), work, device), dtype))
    if not vectors:
        return lam, None, refine
    alone = _largest_cluster(device, LAM, nz, n, work.itemsize) > STEIN_MAX_CLUSTER
    ZT = _stein(device, wt, nz, n, D, E, LO, HI, reorth=not alone)
    # T's eigenvectors Z as columns: ZT holds them as rows
    Z = _cast(g.Data(ZT, batch + (n, n), work, device, 0, _bstr(batch, n * n) + (1, n)), red)
    if n > WY_MIN:
        X = _q_wy(device, rt_, red, batch, n, A, TAU, Z)
    else:
        X = matmul_nodes(g.Data(Q, batch + (n, n), red, device), Z, batch)
    if alone:
        X = _orthonormal(X)
        if X is None:
            return ql()
    return lam, _contig(_cast(X, dtype)), refine


def _widen(device, buf, count: int, src, dst):
    """A new buffer of ``count`` values of buf (dtype src) converted to dst (exact:
    float32 to float64)."""
    return _contig(_cast(g.Data(buf, (count,), src, device), dst)).buf


def _orthonormal(X: g.Node):
    """X's columns orthonormalized in their order (CholeskyQR2, ``qr_tall``), or None
    where the Cholesky factor does not exist (X numerically rank-deficient).

    For eigenvectors from inverse iteration without re-orthogonalization (a cluster
    too large to orthogonalize one vector after another): in float64 each vector's
    error is ~eps ||T|| / gap along its neighbours', so that vectors of well-separated
    eigenvalues are orthogonal already and Q ~ X there, and within a tight cluster
    (gaps ~1e-11 ||T|| in a PCA Gram matrix's noise) the vectors are mixtures of the
    cluster's eigenvectors whose residual ||T x - lambda x|| stays ~eps ||T||
    (mixing costs |c| gap); orthonormalizing them mixes only within the cluster, as
    a Cholesky factor of a nearly diagonal Gram matrix does. Exactly repeated values
    give independent random vectors of the eigenspace (distinct start vectors), which
    CholeskyQR orthonormalizes as well."""
    out = qr_tall(X, rounded=False)
    return None if out is None else out[0]


# stein orthogonalizes a cluster's vectors one after another in one workgroup: a Gram
# matrix of PCA-like data (100000 x 256, rank 16 plus noise: 240 eigenvalues within
# 1e-3 ||T||) made one cluster of 240 and took 196 ms on an H200 (QL: 38 ms); past this
# size each slot iterates alone and CholeskyQR2 orthonormalizes the vectors
# (``_orthonormal``: PCA full 100000 x 256 went from 73 to 44 ms), QL only where it fails
STEIN_MAX_CLUSTER = 32


def _largest_cluster(device, LAM, nz: int, n: int, isz: int) -> int:
    """The most eigenvalues of one matrix in a chain of gaps below 3e-3 max |lambda|
    (one readback of the values): an upper bound of stein's largest cluster (gaps below
    ``kt.STEIN_ORTOL`` ||T_block||_1, and a tridiagonal's 1-norm is at most 3 max |t_ij|,
    so at most 3 ||T||_2)."""
    lam = device.runtime.read(LAM, 0, nz * n * isz).view(np.float64 if isz == 8 else np.float32)
    return _largest_cluster_of(lam.reshape(nz, n).astype(np.float64))


def _largest_cluster_of(lam: np.ndarray) -> int:
    """``_largest_cluster`` of host values (matrices x n)."""
    nz, n = lam.shape
    lam = np.sort(lam, axis=1)
    if n < 2 or not np.isfinite(lam).all():
        return 1
    tol = 3.0 * kt.STEIN_ORTOL * np.abs(lam).max(axis=1, keepdims=True)
    close = np.diff(lam, axis=1) <= tol
    # the longest run of close neighbours: runs of True in the rows, padded with False so
    # that no run crosses from one matrix into the next
    edges = np.diff(np.pad(close, ((0, 0), (1, 1))).astype(np.int8).ravel())
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max()) + 1 if starts.size else 1


def _q_wy(device, wt, work, batch, n, A, TAU, Z):
    """Q Z, Q = H_0 H_1 ... H_{n-3} from trd's reflectors by compact WY blocks of
    ``kt.WY_NB`` (``wy``: V_b^T and M_b = V_b T_b, all blocks in one dispatch), applied
    from the last block to the first as X <- X - M_b (V_b^T X), X = Z at the start
    (Z None: Q itself, its first block one product): two matrix products a block on
    the tiled matmul (all SMs) where the one-workgroup phase of trd ran the n
    reflectors one after another. A contiguous Data at offset 0."""
    rt = device.runtime
    nz = g.prod(batch)
    nb = kt.WY_NB
    nblk = -(-(n - 2) // nb)
    isz = work.itemsize
    VT = rt.alloc(nz * nblk * nb * n * isz)
    MB = rt.alloc(nz * nblk * n * nb * isz)
    wg = 64 if loop_bound(device) is not None else 256
    launch(device, "linalg_trd_wy", (wt, wg), kt.wy_record, kt.render_wy, {"A": A, "TAU": TAU, "VT": VT, "MB": MB},
           nz * nblk, nz=nz, n=n, nblk=nblk)
    X = Z
    for b in range(nblk - 1, -1, -1):
        vt = g.Data(VT, batch + (nb, n), work, device, b * nb * n, _bstr(batch, nblk * nb * n) + (n, 1))
        mb = g.Data(MB, batch + (n, nb), work, device, b * n * nb, _bstr(batch, nblk * n * nb) + (nb, 1))
        if X is None:
            # Q itself (Z = I): X = I - M_b V_b^T
            ident = g.broadcast_view(eye(n, n, work, device), batch + (n, n))
            X = _contig(g.make_op("subtract", [ident, matmul_nodes(mb, vt, batch)], work))
        else:
            X = _contig(g.make_op("subtract", [X, matmul_nodes(mb, matmul_nodes(vt, X, batch), batch)], work))
    if X.offset != 0 or not X.is_contiguous:
        X = g.realize(g.Op("copy", [X], work))
    return X


def _bstr(batch, mat: int) -> tuple:
    out = []
    s = mat
    for d in reversed(batch):
        out.append(s)
        s *= d
    return tuple(reversed(out))


BISECT_WG = 64


def _multisect_threads(device) -> int:
    """Invocations an eigenvalue on GPUs (multisection, ``multisect``: 10 Sturm counts
    in a row where bisection runs 57; one dispatch, its loops ~11 n long); 0 on
    lavapipe, whose workgroups run their invocations one after another: bisect there."""
    return 64 if loop_bound(device) is None else 0


def _bisect(device, wt, nz, n, DT, ET, SC):
    """The eigenvalues (nz x n, ascending within each unreduced block of T, the
    blocks in row order) of the tridiagonals by bisection on Sturm counts, an
    invocation per eigenvalue (``bisect``): O(n) steps of O(n) each, all eigenvalues
    at once. Steps: 2 + the mantissa's bits (the bracket starts a few units wide, T
    being scaled); on GPUs multisection in their place. The buffers of the values
    (unscaled) and of the final brackets (scaled, as stein reads them)."""
    rt = device.runtime
    isz = 8 if wt == "f64" else 4
    steps = (53 if wt == "f64" else 24) + 4
    LO = rt.alloc(nz * n * isz)
    HI = rt.alloc(nz * n * isz)
    LAM = rt.alloc(nz * n * isz)
    bufs = {"DT": DT, "ET": ET, "SC": SC, "LO": LO, "HI": HI, "LAM": LAM}
    ms = _multisect_threads(device)
    if ms:
        launch(device, "linalg_trd_multisect", (wt, ms), kt.multisect_record, kt.render_multisect, bufs, nz * n,
               nz=nz, n=n, iters=kt.multisect_steps(wt, ms))
        return LAM, LO, HI
    bound = loop_bound(device)
    per = steps if bound is None else max(1, (bound - 3 * n - 32) // (n + 2))
    groups = -(-nz * n // BISECT_WG)
    for s0 in range(0, steps, per):
        s1 = min(steps, s0 + per)
        launch(device, "linalg_trd_bisect", (wt, BISECT_WG), kt.bisect_record, kt.render_bisect, bufs, groups,
               nz=nz, n=n, iters=s1 - s0, first=int(s0 == 0), last=int(s1 == steps))
    return LAM, LO, HI


# stein's tridiagonal block in workgroup memory for its solves (``kt.render_stein``'s
# ``stage``): the one invocation that solves then reads no storage in its chain
STEIN_STAGE = False
# stein's workgroup size on GPUs (None: 64)
STEIN_THREADS = None
# stein keeps its rows in storage below this order too (0: only where they do not
# fit workgroup memory; tests raise it to run that form at small orders)
SPILL_BELOW = 0
# and on GPUs from this order: a slot's three rows in workgroup memory (26 KB at order
# 1024 in float64) let few workgroups share an SM, and the slots' chains of solves ran
# in waves (H100, eigh float32 1024: 36.6 ms in workgroup memory, 32.7 in storage)
SPILL_GPU_MIN = 320


def _stein_threads(device, n: int) -> int:
    """stein's workgroup size: 64 (the solves run in one invocation, the
    Gram-Schmidt steps over all); on lavapipe 128 past order 512, so that one
    iteration of a cluster of the whole order stays within a dispatch's budget."""
    if loop_bound(device) is not None:
        return 128 if n > 512 else 64
    return STEIN_THREADS or 64


def _stein_spills(device, wt: str, n: int) -> bool:
    """Whether stein keeps its rows in storage (``kt.render_stein``'s ``spill``): on GPUs
    from order SPILL_GPU_MIN, past the orders whose three rows fit the device's
    workgroup memory, or below them where SPILL_BELOW says so (tests)."""
    if n < SPILL_BELOW or (loop_bound(device) is None and n >= SPILL_GPU_MIN):
        return True
    lim = device.limits.get("max-compute-workgroup-storage-size", 16384)
    return kt.stein_workgroup_bytes(wt, _cap(n), _stein_threads(device, n), STEIN_STAGE) > lim


def _stein_budget(device, n: int) -> int | None:
    """The loop iterations a stein invocation may spend on inverse iterations in one
    dispatch (None: unbounded, one dispatch): ``loop_bound`` less the block's search
    and norm that every dispatch repeats first."""
    bound = loop_bound(device)
    return None if bound is None else bound - 2 * n - 64


def _stein(device, wt, nz, n, DT, ET, LO, HI, reorth: bool = True):
    """The eigenvectors of the tridiagonals (DT, ET) for bisect's eigenvalues by
    inverse iteration (``stein``, a workgroup per eigenvalue, a cluster's leader
    running its members one after another): the buffer of Z^T (nz x n x n, vector j
    in row j). On GPUs one dispatch; lavapipe cuts the iterations over dispatches
    against ``loop_bound``, and as the clusters (known only on the device) set how
    many, the host reads the state back after 1, 2, 4, ... more until every cluster
    is done (one readback where no cluster needs a second dispatch)."""
    rt = device.runtime
    isz = 8 if wt == "f64" else 4
    cap = _cap(n)
    wg = _stein_threads(device, n)
    spill = _stein_spills(device, wt, n)
    SH = rt.alloc(nz * n * isz)
    SW = rt.alloc(nz * n * 3 * 4)
    ZT = rt.alloc(nz * n * n * isz)
    bufs = {"DT": DT, "ET": ET, "LO": LO, "HI": HI, "SH": SH, "SW": SW, "ZT": ZT}
    if spill:
        bufs["SU"] = rt.alloc(nz * n * 3 * n * isz)
    spec = (wt, cap, wg, reorth, STEIN_STAGE and not spill, spill)
    budget = _stein_budget(device, n)
    if budget is None:
        launch(device, "linalg_trd_stein", spec, kt.stein_record, kt.render_stein, bufs, nz * n, nz=nz, n=n,
               budget=0, first=1)
        return ZT
    est, total, first = 1, 0, 1
    while True:
        for _ in range(est):
            launch(device, "linalg_trd_stein", spec, kt.stein_record, kt.render_stein, bufs, nz * n, nz=nz, n=n,
                   budget=budget, first=first)
            first = 0
        total += est
        st = rt.read(SW, 0, nz * n * 3 * 4).view(np.uint32)
        if int(st[0::3].min()) >= n or total > kt.STEIN_MAXITS * n:
            return ZT
        est *= 2


def row_chunks(device, n: int, napply: int) -> int:
    """Workgroups per matrix in tql: on GPUs the rows of Q spread over as many as give
    each rotating invocation one row (each runs the scalar steps itself); lavapipe,
    one invocation of a workgroup at a time, runs one."""
    return -(-n // napply) if loop_bound(device) is None else 1


def _tql(device, wt, cap, wg, nz, n, DT, ET, SC, Q, vectors):
    """Run tql over the nz tridiagonals (DT, ET) until every matrix is done: the
    eigenvalues buffer (nz x n, unsorted, unscaled)."""
    rt = device.runtime
    isz = 8 if wt == "f64" else 4
    napply = wg - kt.APPLY0
    nchunk = row_chunks(device, n, napply) if vectors else 1
    rows = -(-n // nchunk)
    D = rt.alloc(nz * nchunk * n * isz)
    E = rt.alloc(nz * nchunk * n * isz)
    ST = rt.alloc(nz * nchunk * 8)
    LAM = rt.alloc(nz * n * isz)
    bufs = {"DT": DT, "ET": ET, "SC": SC, "D": D, "E": E, "SW": ST, "Q": Q if vectors else rt.alloc(4), "LAM": LAM}
    bound = loop_bound(device)
    words = dict(nz=nz, n=n, nchunk=nchunk, rows=rows, vectors=int(vectors), maxit=MAXIT)
    spec = (wt, cap, wg)
    if bound is None:
        launch(device, "linalg_trd_tql", spec, kt.tql_record, kt.render_tql, bufs, nz * nchunk, budget=0, first=1,
               **words)
        return LAM
    budget = bound - 3 * -(-n // wg) - 32
    rpt = -(-rows // napply) if vectors else 0

    def dispatches(rem):
        # about two QL steps per eigenvalue, each over the n - l rows left, and the
        # search for the split point before each
        return max(1, math.ceil(STEPS * (2 + rpt) * rem * rem / 2 / budget + rem * 8 / budget))

    est = dispatches(n)
    first = 1
    total = 0
    while True:
        for _ in range(est):
            launch(device, "linalg_trd_tql", spec, kt.tql_record, kt.render_tql, bufs, nz * nchunk, budget=budget,
                   first=first, **words)
            first = 0
        total += est
        st = rt.read(ST, 0, nz * nchunk * 8).view(np.uint32)
        left = int(n - st[0::2].min())
        if left <= 0 or total > 4 * MAXIT * n:
            return LAM
        est = dispatches(left)
