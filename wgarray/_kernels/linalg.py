"""The one-workgroup-per-matrix factorization kernels' host driver (WGSL in
``_wgsl/linalg.py``): LU (solve, inv, det), Householder QR, Jacobi (SVD, eigh) and the
Hessenberg reduction + complex shifted QR of eig, each over a batch of matrices.

Every kernel runs in phases over several dispatches, each planned here to loop at most
about ``budget.phase_budget`` times per invocation (the kernels run 64 threads per
matrix; lavapipe ends an invocation's loops past 65535 iterations). The blocked,
matmul-bound factorizations are in ``linalg_blocked.py``, the eigen solvers in
``linalg_eigen.py``.
"""
from __future__ import annotations

import struct

from .. import _dtypes as dt
from .._graph import node as g
from .._runtime.errors import InternalError
from .._wgsl import linalg as kl
from .._wgsl import types as ty
from .budget import phase_budget

MAX_SWEEPS = 40
MAX_QR_ITS = 60  # complex shifted QR iterations per eigenvalue (LAPACK's zlahqr allows 30 on average)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def contig(node: g.Node) -> g.Data:
    """The node's values as a contiguous Data (a copy only when needed)."""
    data = g.realize(node)
    if data.buf is None or not data.is_contiguous:
        data = g.realize(g.Op("copy", [data], data.dtype))
    return data


def cast(node: g.Node, dtype: dt.DType) -> g.Node:
    return node if node.dtype is dtype else g.make_op("cast", [node], dtype)


def tag(dtype: dt.DType, device) -> str:
    return ty.tag(dtype.name, device.has_int64)


def eye(rows: int, cols: int, dtype: dt.DType, device) -> g.Data:
    """The rows x cols identity (ones where the row equals the column), realized: the
    graph that ``eye`` of the namespace builds, so its kernel is that one."""
    r = g.make_op("cast", [g.Iota((rows, cols), device, 0, (1, 0))], dt.int32)
    c = g.make_op("cast", [g.Iota((rows, cols), device, 0, (0, 1))], dt.int32)
    diff = g.make_op("subtract", [c, r], dt.int32)
    on = g.make_op("equal", [diff, g.Const(0, dt.int32, device, diff.shape)], dt.bool)
    return g.realize(g.make_op("cast", [on], dtype))


def launch(device, family: str, spec: tuple, record, render, buffers: dict, groups: int, table=(), **words) -> None:
    """Dispatch a factorization kernel, compiled once per ``(family, spec)`` from its
    launch record and renderer (both called with ``spec``): buffers and parameter words
    by name (words wrap to u32, as the kernels' arithmetic expects); ``table``: words
    that follow the record's fields (a table whose length varies by call)."""
    rt = device.runtime
    kernel = rt.compile((family, spec), lambda: (record(*spec), render(*spec)))
    fields = kernel.record.params  # consecutive u32 words (``_wgsl.linalg.record``): packed in their order
    if len(words) != len(fields):
        raise InternalError(f"kernel {kernel.record.name}: parameters {sorted(words)}, expected "
                            f"{[f.name for f in fields]}")
    params = struct.pack(f"<{len(fields)}I", *(words[f.name] & 0xFFFFFFFF for f in fields))
    if table:
        params += struct.pack(f"<{len(table)}I", *table)
    rt.launch(kernel, buffers, params, groups)


def _elem_ranges(total: int, budget: int, per: int = 1):
    """(a, c) ranges covering range(total) where a thread loops over ``(c - a) / 64``
    items costing ``per`` iterations each."""
    step = 64 * max(1, (budget - 16) // max(per, 1))
    return [(a, min(a + step, total)) for a in range(0, total, step)]


def _item_ranges(count: int, cost, budget: int):
    """(a, c) ranges covering range(count), item i costing ``cost(i)`` loop iterations
    per invocation: each range holds as many items as fit in ``budget`` (at least one)."""
    out = []
    a = 0
    while a < count:
        c, used = a, 0
        while c < count and (c == a or used + cost(c) <= budget):
            used += cost(c)
            c += 1
        out.append((a, c))
        a = c
    return out


# ------------------------------------------------------------------ LU

def lu(node: g.Node, rhs: g.Data | None, mode: str):
    """The LU kernel over the batch of the square floating ``node`` (batch..., n, n):
    mode 'solve' (rhs a contiguous (batch..., n, r) Data), 'inv' or 'det'. Returns the
    output buffer: the solution (batch..., n, r) / inverse, or for det (sign, log|det|,
    det) per matrix."""
    device = node.device
    n = node.shape[-1]
    batch = node.shape[:-2]
    nb = g.prod(batch)
    dtype = node.dtype
    t = tag(dtype, device)
    A = contig(node)
    rt = device.runtime
    isz = dtype.itemsize
    if mode == "det":
        r = 0
        out = rt.alloc(max(nb, 1) * 3 * isz)
    else:
        r = rhs.shape[-1] if mode == "solve" else n
        out = rt.alloc(max(nb * n * r, 1) * isz)
    work = rt.alloc(max(nb * n * (n + r), 1) * isz)
    if nb and n:
        st = rt.alloc(max(nb, 1) * 4)
        bufs = {"A": A.buf, "B": rhs.buf, "W": work, "X": out, "FL": st} if mode == "solve" else \
            {"A": A.buf, "W": work, "X": out, "FL": st}
        off_b = rhs.offset if mode == "solve" else 0
        for phase, a, c in _lu_phases(n, r, mode, phase_budget(device)):
            launch(device, "linalg_lu", (t, mode), kl.lu_record, kl.render_lu, bufs, nb,
                   nbatch=nb, n=n, nrhs=r, offA=A.offset, offB=off_b, phase=phase, a=a, c=c)
    return out


def _lu_phases(n: int, r: int, mode: str, budget: int):
    """The dispatches of the LU kernel: (phase, a, c) triples (see ``kl.render_lu``)."""
    c = n + r
    out = [(0, a, b) for a, b in _elem_ranges(n * c, budget)]
    out += [(1, a, b) for a, b in _item_ranges(
        n, lambda k: 9 + _cdiv(n - k, 64) + _cdiv(c, 64) + _cdiv((n - k - 1) * (c - k - 1), 64), budget)]
    if mode == "det":
        return out + [(3, a, b) for a, b in _item_ranges(n, lambda k: 48, budget)]  # thread 0: a log per pivot
    out += [(2, a, b) for a, b in _item_ranges(n, lambda kk: 1 + _cdiv(r, 64) + _cdiv((n - 1 - kk) * r, 64),
                                               budget)]
    return out + [(3, a, b) for a, b in _elem_ranges(n * r, budget)]


# ------------------------------------------------------------------ Householder QR

def qr_householder(node: g.Node, mode: str):
    """The one-workgroup-per-matrix Householder kernel (row-blocked phases where tall)
    over the (batch..., m, n) floating ``node``: Data of Q (batch..., m, k) and R
    (batch..., k, n), k = min(m, n) for mode 'reduced', m for 'complete'."""
    device = node.device
    dtype = node.dtype
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    nb = g.prod(batch)
    kk = min(m, n)
    qc, rr = (kk, kk) if mode == "reduced" else (m, m)
    t = tag(dtype, device)
    rt = device.runtime
    isz = dtype.itemsize
    Q = rt.alloc(max(nb * m * qc, 1) * isz)
    R = rt.alloc(max(nb * rr * n, 1) * isz)
    if nb and m:
        A = contig(node)
        work = rt.alloc(max(nb * (m * n + m * kk + kk + 4 + max(n, qc)), 1) * isz)
        bufs = {"A": A.buf, "T": work, "Q": Q, "Rm": R}
        for phase, a, c, k, j0, j1 in _qr_phases(m, n, kk, qc, rr, phase_budget(device)):
            launch(device, "linalg_qr", (t,), kl.qr_record, kl.render_qr, bufs, nb,
                   nbatch=nb, m=m, n=n, kk=kk, qc=qc, rr=rr, offA=A.offset, phase=phase, a=a, c=c, k=k, j0=j0, j1=j1)
    return g.Data(Q, batch + (m, qc), dtype, device), g.Data(R, batch + (rr, n), dtype, device)


def _qr_phases(m: int, n: int, kk: int, qc: int, rr: int, budget: int):
    """The dispatches of the QR kernel: (phase, a, c, k, j0, j1) tuples (see
    ``kl.render_qr``).

    Phases 1 and 3 give a thread a column and loop over all its rows below the
    diagonal; where one column passes the loop budget (tall matrices: m past about
    20000) the factorization, and separately the building of Q, run row-blocked
    instead: per column, passes over blocks of rows accumulating max |x|, the scaled
    sum of squares and the dot products with the other columns in the work buffer,
    each block a dispatch."""
    out = [(0, a, c, 0, 0, 0) for a, c in _elem_ranges(m * n, budget)]
    if kk and 16 + 3 * _cdiv(m, 64) + _cdiv(n - 1, 64) * (2 * m + 1) <= budget:
        out += [(1, a, c, 0, 0, 0) for a, c in _item_ranges(
            kk, lambda k: 16 + 2 * _cdiv(m - k, 64) + _cdiv(m, 64) + _cdiv(n - k - 1, 64) * (2 * (m - k) + 1),
            budget)]
    else:
        for k in range(kk):
            rows = [(a, c, k, 0, 0) for a, c in _row_blocks(k, m, 1, budget)]
            out += [(p,) + r for p in (5, 6, 7) for r in rows]
            out += _row_col_blocks(8, k, m, k + 1, n, budget) + _row_col_blocks(9, k, m, k + 1, n, budget)
    out += [(2, a, c, 0, 0, 0) for a, c in _elem_ranges(m * qc, budget)]
    if kk and 2 + _cdiv(qc, 64) * (2 * m + 1) <= budget:
        out += [(3, a, c, 0, 0, 0) for a, c in _item_ranges(
            kk, lambda h: 2 + _cdiv(qc, 64) * (2 * (h + 1 + m - kk) + 1), budget)]
    else:
        for k in reversed(range(kk)):
            out += _row_col_blocks(10, k, m, 0, qc, budget) + _row_col_blocks(11, k, m, 0, qc, budget)
    return out + [(4, a, c, 0, 0, 0) for a, c in _elem_ranges(m * qc + rr * n, budget)]


def _row_blocks(r0: int, r1: int, per: int, budget: int):
    """Blocks (a, c) of rows r0..r1-1 (a 64-thread workgroup looping over a block's
    rows, ``per`` iterations a row, within ``budget``)."""
    step = 64 * max(1, (budget - 16) // max(per, 1))
    return [(a, min(a + step, r1)) for a in range(r0, r1, step)]


def _row_col_blocks(phase: int, k: int, m: int, j0: int, j1: int, budget: int):
    """The dispatches of a row-blocked QR phase over rows k..m-1 and columns j0..j1-1:
    each column costs a pass over the block's rows and a 64-way tree reduction."""
    if j0 >= j1:
        return []
    per_col = min(_cdiv(m - k, 64), budget // 2)
    w = max(1, budget // (per_col + 8))
    step = 64 * per_col
    return [(phase, a, min(a + step, m), k, c, min(c + w, j1))
            for c in range(j0, j1, w) for a in range(k, m, step)]


# ------------------------------------------------------------------ Jacobi: SVD and eigh

def jacobi(node: g.Node, mode: str):
    """The Jacobi kernel on a (batch..., m, n) node with m >= n: Data of the values
    (batch..., n) and, by mode ('svd', 'vals', 'eigh', 'eigvals'), U (batch..., m, n)
    and V (batch..., n, n). Complex matrices run embedded as real ones of twice the
    order."""
    device = node.device
    dtype = node.dtype
    rdt = dt.real_of(dtype)
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    nb = g.prod(batch)
    f = 2 if dtype.kind == "c" else 1
    mm, nn = f * m, f * n
    rt = device.runtime
    rsz, isz = rdt.itemsize, dtype.itemsize
    Sv = rt.alloc(max(nb * n, 1) * rsz)
    U = rt.alloc(max(nb * m * n, 1) * isz) if mode == "svd" else None
    V = rt.alloc(max(nb * n * n, 1) * isz) if mode in ("svd", "eigh") else None
    if nb and n:
        A = contig(node)
        G = rt.alloc(nb * (mm * nn + nn + 4) * rsz)
        W = rt.alloc(nb * nn * nn * rsz)
        O = rt.alloc(nb * nn * 4)
        ST = rt.alloc(nb * 2 * 4)
        bufs = {"A": A.buf, "G": G, "V": W, "O": O, "FL": ST, "Sv": Sv}
        if U is not None:
            bufs["U"] = U
        if V is not None:
            bufs["Vo"] = V
        t = tag(dtype, device)
        nout = n + (m * n if U is not None else 0) + (n * n if V is not None else 0)
        for phase, a, c, p0, p1 in _jacobi_phases(mm, nn, nout, phase_budget(device)):
            launch(device, "linalg_jacobi", (t, mode), kl.svd_record, kl.render_svd, bufs, nb,
                   nbatch=nb, m=m, n=n, offA=A.offset, phase=phase, a=a, c=c, p0=p0, p1=p1)
    res = [g.Data(Sv, batch + (n,), rdt, device)]
    if U is not None:
        res.append(g.Data(U, batch + (m, n), dtype, device))
    if V is not None:
        res.append(g.Data(V, batch + (n, n), dtype, device))
    return res


def _jacobi_phases(mm: int, nn: int, nout: int, budget: int):
    """The dispatches of the Jacobi kernel on mm x nn (embedded) matrices: (phase, a, c,
    p0, p1) tuples (see ``kl.render_svd``); the rounds of up to MAX_SWEEPS sweeps, those
    after convergence returning at once, a round's column pairs split over dispatches
    where one round passes the loop budget."""
    n2 = nn + (nn & 1)
    npairs = n2 // 2
    out = [(0, a, c) for a, c in _elem_ranges(mm * nn + nn * nn, budget)]
    out += [(7, a, c) for a, c in _elem_ranges(mm * nn, budget)]
    out += [(8, a, c) for a, c in _elem_ranges(mm * nn, budget, 2)]
    rounds = MAX_SWEEPS * (n2 - 1)
    pair = 1 + 2 * mm + nn  # loop iterations of one pair's rotation
    per = budget // (3 + _cdiv(npairs, 64) * pair)
    out = [ph + (0, npairs) for ph in out]
    if per >= 1:
        out += [(3, a, min(a + per, rounds), 0, npairs) for a in range(0, rounds, per)]
    else:
        w = 64 * max(1, (budget - 3) // pair)
        out += [(3, r, r + 1, p, min(p + w, npairs)) for r in range(rounds) for p in range(0, npairs, w)]
    out += [(4, a, c, 0, 0) for a, c in _elem_ranges(nn, budget, mm + 1)]
    out += [(5, a, c, 0, 0) for a, c in _elem_ranges(nn, budget, nn + 1)]
    return out + [(6, a, c, 0, 0) for a, c in _elem_ranges(nout, budget)]


# ------------------------------------------------------------------ general eigenproblem

def eig(node: g.Node, vectors: bool):
    """The Hessenberg + complex shifted QR kernel over the batch of the square floating
    ``node``: Data of the eigenvalues (batch..., n) and, with ``vectors``, the unit
    eigenvectors as columns (batch..., n, n), complex of the node's precision."""
    device = node.device
    batch = node.shape[:-2]
    n = node.shape[-1]
    nb = g.prod(batch)
    cdt = dt.complex_of(node.dtype)
    rt = device.runtime
    isz = cdt.itemsize
    L = rt.alloc(max(nb * n, 1) * isz)
    E = rt.alloc(max(nb * n * n, 1) * isz) if vectors else None
    if nb and n:
        A = contig(node)
        real_in = node.dtype.kind != "c"
        W = rt.alloc(nb * ((2 if vectors else 1) * n * n + n + 1) * isz)
        ST = rt.alloc(nb * 2 * 4)
        t = tag(cdt, device)
        bufs = {"A": A.buf, "W": W, "Lv": L, "E": E, "QS": ST} if vectors else {"A": A.buf, "W": W, "Lv": L, "QS": ST}
        for phase, a, c in _eig_phases(n, vectors, phase_budget(device)):
            launch(device, "linalg_eig", (t, real_in, vectors, MAX_QR_ITS), kl.eig_record, kl.render_eig, bufs, nb,
                   nbatch=nb, n=n, offA=A.offset, phase=phase, a=a, c=c)
    res = [g.Data(L, batch + (n,), cdt, device)]
    if vectors:
        res.append(g.Data(E, node.shape, cdt, device))
    return res


def _eig_phases(n: int, vectors: bool, budget: int):
    """The dispatches of the eig kernel for n x n matrices: (phase, a, c) triples.

    Each dispatch keeps its loop iterations per invocation within ``budget``: the
    Hessenberg reduction goes in chunks of columns, and the QR iteration in chunks of
    sweeps up to LAPACK's total budget of 30 max(10, n) sweeps; chunks after
    convergence return at once."""
    f = 2 if vectors else 1
    per = -(-n // 64)
    out = [(0, 0, 0)]
    col = 2 * n * (per + f * per + 1) + n  # loop iterations of one Hessenberg column
    kc = max(1, budget // col)
    for a in range(0, max(n - 2, 0), kc):
        out.append((3, a, a + kc))
    sweep = n + n * (1 + -(-(n + 1) // 64) + f * per)  # of one QR sweep (scan, rotations)
    sc = max(1, budget // sweep)
    total = 30 * max(10, n)
    for _ in range(-(-total // sc)):
        out.append((1, sc, 0))
    if not vectors:
        out.append((2, 0, 0))
        return out
    a = 0
    while a < n:  # back-substitution: thread k runs about k^2 / 2 + 2n iterations
        c = a + 64
        while c < n and (c + 64) ** 2 // 2 * (-(-(c + 64) // 64)) < budget:
            c += 64
        out.append((2, a, min(c, n)))
        a = c
    w = max(1, min(n, (budget - 3 * n) * 64 // (n * n)))  # Q times w columns: n w / 64 sums of n
    for a in range(0, n, w):
        out.append((4, a, min(a + w, n)))
    return out


def refine_dtype(dtype, device):
    """The refinement's precision: float64 for float32 input where the device has it
    (in float32 the product X^H A X alone costs ~sqrt(n) eps of eigenvalue error,
    LAPACK's being ~eps)."""
    if dtype in (dt.float32, dt.complex64) and device.has_f64:
        return dt.float64 if dtype is dt.float32 else dt.complex128
    return dtype
