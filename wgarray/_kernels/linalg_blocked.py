"""Blocked factorizations: the host-side drivers behind cholesky, solve, inv, det,
slogdet and qr.

Each algorithm works in place on a device work matrix and spends its O(n^3) in the
tiled matmul (``matmul_nodes``); the narrow steps run as the small kernels of
``_wgsl/linalg_blocked.py`` over strided blocks of the work matrix:

- Cholesky, right-looking by blocks of LEAF: the leaf kernel factors the diagonal
  block and inverts it, L21 = A21 L11^-H and A22 -= L21 L21^H are matmuls.
- Triangular solves by blocks: every diagonal block inverted by one leaf dispatch,
  then per block row X_i = T_ii^-1 (Y_i - T_i,done X_done), two matmuls.
- LU with partial pivoting on [A | B] (B the right-hand sides, I for inv, nothing for
  det), by panels of PANEL columns: the panel kernel searches pivots in parallel and
  swaps whole rows, U12 = L11^-1 A12 and the trailing update (which carries B along,
  so L^-1 B comes for free) are matmuls; then the blocked upper solve.
- Tall and large square QR: CholeskyQR with a shift (Fukaya et al.'s shifted
  CholeskyQR3): R from the Cholesky factor of the Gram matrix X^H X (+ s I),
  Q = X R^-1, repeated on Q until the Gram matrix of the input is near I; products of
  the R's give R. Where that does not happen within a few steps (rank deficiency,
  extreme condition) the caller falls back to TSQR / Householder QR.
- Square, moderately tall and wide real QR: blocked Householder in compact WY form,
  per panel the hh kernel, T from V^T V, and the trailing update and Q's formation as
  three matmuls each.

Dispatches per factorization grow as n / LEAF (or n / PANEL), not n; each dispatch's
per-invocation loops stay within lavapipe's 65535-iteration bound (leaf kernels by
their fixed block size, the panel kernel planned per column range).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtypes as dt
from .._graph import node as g
from . import program
from .._wgsl import linalg as kl
from .._wgsl import linalg_blocked as kb
from .._wgsl import linalg_tsqr as kt
from .budget import loop_bound, phase_budget
from .linalg import _cdiv, cast as _cast, eye, launch, refine_dtype as work_dtype, tag as _tag
from .matmul import matmul_nodes, subtract_product
from .reduce import reduce_axes

LEAF = kb.LEAF
# Leaf blocks in workgroup memory where it holds one (every dtype but complex128 on
# 48 KiB devices); the global-memory leaf elsewhere.
LEAF_SHARED = True
PANEL = 32  # LU panel width: at most the panel kernel's 32 column lanes
# float32 LU panels of at most ``panel_threads`` rows factor with their rows in
# registers (``kb.render_panel_reg``) where the device has subgroups; False: always
# the global-memory panel kernel. H100, float32 solve with 16 right-hand sides (with the
# pivot searches' subgroup pass over the winners): order 1024 9.75 -> 6.99 ms, 2048
# 17.8 -> 16.6, 4096 49.2 -> 43.0 (torch 2.62, 5.92, 14.4).
REGISTER_PANELS = True
# the register panel's column steps unrolled, each with its column a constant: None
# on devices without a loop bound (GPUs), where the 32 steps compile in well under a
# second; lavapipe's LLVM takes ~2.5 minutes over the unrolled shader, so the looped one
# runs there. H100, float32 solve 1024: 7.0 -> 5.0 ms (torch 2.57); 4096 43.0 -> 42.5.
REGISTER_UNROLLED = None
# LU columns factored a block at a time: within a block of OUTER columns the panels of
# PANEL update only the block's own columns, and the columns right of it take one
# update of rank OUTER (a matmul that is compute-bound, where rank-PANEL updates of the
# whole trailing matrix were bound by its memory traffic). OUTER == PANEL: one level.
# H100, float32 solve with 16 right-hand sides, 32 -> 256: order 16384 819 -> 583 ms,
# 4096 50.6 -> 47.4, 1024 unchanged (one block) (torch: 137, 14.5, 2.7).
OUTER = 256
# LU panels of at least TLU_MIN_ROWS rows (and 64: two candidate sets) of matrices of
# order TLU_MIN_ORDER and more take their pivots from a tournament
# (``kb.render_tlu_pick``); the others the one-workgroup panel kernel. TLU_MIN_ROWS 0:
# never. H200, float32 solve (``benchmarks/diag_tlu.py``): order 4096 94 -> 63 ms with
# panels of 512 rows and more by tournament, 68-70 ms from 256, 1024 or 2048 rows; order
# 1024 no faster (11.1 ms without, 11.5-14.4 with).
TLU_MIN_ROWS = 512
TLU_MIN_ORDER = 2048
# the tournament's pivot searches by subgroup operations (float32 and complex64, on
# devices with full subgroups of consecutive invocations) instead of a tree in
# workgroup memory: the same rows (tested), 3 barriers a column for log2(rows) + 4.
# H200, the candidate pick at order 4096: 80.9 -> 64.5 us a dispatch (290 of them:
# 23.5 -> 18.8 ms of device time)
TLU_SUBGROUPS = True

# Cholesky panels (the diagonal block and the rows below it) factored in registers by
# one dispatch each (``kb.render_chol_panel``), where the leaf kernel, a product by its
# inverse and a copy took three; complex128's 64 entries a thread would not stay in
# registers, so it keeps the leaf. CHOL_UNROLLED as REGISTER_UNROLLED.
CHOL_PANELS = True
CHOL_UNROLLED = None
# Cholesky columns in blocks of CHOL_OUTER: the panels of a block update only its own
# columns; the trailing matrix takes one update of rank CHOL_OUTER a block. H100,
# float32, outer blocks of 64 / 256 / 512 columns: order 1024 2.36 / 2.33 / 2.16 ms,
# 4096 6.94 / 5.93 / 5.91, 8192 30.7 / 20.6 / 19.8 (the leaf path 3.08, 8.98, 34.3;
# torch 0.46, 2.02, 9.31)
CHOL_OUTER = 512
_CHOL_PANEL_DTYPES = (dt.float32, dt.float64, dt.complex64)


class _Mat:
    """A batch of ``nb`` strided rows x cols matrices in a device buffer (element units):
    element (z, i, j) at ``off + z * sz + i * rs + j * cs``."""

    __slots__ = ("buf", "off", "sz", "rs", "cs", "rows", "cols", "nb", "dtype", "device")

    def __init__(self, buf, off, sz, rs, cs, rows, cols, nb, dtype, device):
        self.buf, self.off, self.sz, self.rs, self.cs = buf, off, sz, rs, cs
        self.rows, self.cols, self.nb, self.dtype, self.device = rows, cols, nb, dtype, device

    @classmethod
    def new(cls, nb, rows, cols, dtype, device):
        buf = device.runtime.alloc(max(nb * rows * cols, 1) * dtype.itemsize)
        return cls(buf, 0, rows * cols, cols, 1, rows, cols, nb, dtype, device)

    @classmethod
    def of(cls, data: g.Data):
        """A (nb, rows, cols) Data (its batch stride is used even where nb == 1)."""
        nb, rows, cols = data.shape
        sz, rs, cs = data.strides
        return cls(data.buf, data.offset, sz, rs, cs, rows, cols, nb, data.dtype, data.device)

    def block(self, r0, r1, c0, c1) -> "_Mat":
        return _Mat(self.buf, self.off + r0 * self.rs + c0 * self.cs, self.sz, self.rs, self.cs,
                    r1 - r0, c1 - c0, self.nb, self.dtype, self.device)

    @property
    def T(self) -> "_Mat":
        return _Mat(self.buf, self.off, self.sz, self.cs, self.rs, self.cols, self.rows, self.nb,
                    self.dtype, self.device)

    def node(self) -> g.Data:
        return g.Data(self.buf, (self.nb, self.rows, self.cols), self.dtype, self.device, self.off,
                      (self.sz, self.rs, self.cs))

    def conj_t(self) -> g.Node:
        node = self.T.node()
        return g.make_op("conj", [node], node.dtype) if node.dtype.kind == "c" else node


def as_batch3(node: g.Node) -> g.Data:
    """``node`` (batch..., r, c) realized as a (nb, r, c) Data (copied only where its
    batch dims do not merge into one stride)."""
    batch = node.shape[:-2]
    nb = g.prod(batch)
    data = g.realize(node)
    if data.buf is None:
        data = g.realize(g.Op("copy", [data], data.dtype))
    st = data.strides
    nd = len(batch)
    ok = all(st[d] == st[d + 1] * batch[d + 1] for d in range(nd - 1) if batch[d] != 1 and batch[d + 1] != 1)
    if nd and not ok:
        data = g.realize(g.Op("copy", [data], data.dtype))
        st = data.strides
    bstride = next((st[d] for d in reversed(range(nd)) if batch[d] != 1), 0)
    return g.Data(data.buf, (nb,) + node.shape[-2:], data.dtype, data.device, data.offset,
                  (bstride,) + tuple(st[-2:]))


# ------------------------------------------------------------------ kernel drivers

def _store(src: g.Data, dst: _Mat, mode: int) -> None:
    """dst = src (mode 0), dst -= src (1), dst = tril(src) (2), dst -= src on and below
    the diagonal only (3); src a (nb, rows, cols) Data."""
    total = dst.nb * dst.rows * dst.cols
    if not total:
        return
    t = _tag(dst.dtype, dst.device)
    sz, rs, cs = src.strides
    launch(dst.device, "linalg_blk_store", (t,), kb.store_record, kb.render_store, {"SRC": src.buf, "DST": dst.buf},
           _cdiv(total, 64), total=total, rows=dst.rows, cols=dst.cols, srcOff=src.offset, srcZ=sz, srcR=rs, srcC=cs,
           dstOff=dst.off, dstZ=dst.sz, dstR=dst.rs, dstC=dst.cs, mode=mode)


def _leaf(w: _Mat, nblk: int, phase: int, d_buf=None, unit: bool = False) -> None:
    """The leaf kernel over the ``nblk`` diagonal blocks (of LEAF, the last one smaller)
    of each of w's square matrices: phase 0 Cholesky in place, phase 1 the inverse of
    each lower-triangular block into ``d_buf`` (LEAF x LEAF per block, batch-major),
    phase 2 the factorization and then the inverse of its factor."""
    device = w.device
    t = _tag(w.dtype, device)
    d = d_buf if d_buf is not None else w.buf
    if phase and d is w.buf:
        raise AssertionError("leaf: the inverse needs its own buffer")
    if phase == 0:  # the output binding is unused: a tiny scratch keeps the bindings distinct
        d = device.runtime.alloc(16)
    ld = leaf_shared_ld(w.dtype.itemsize, device) if LEAF_SHARED else None
    if ld is not None:
        spec = (t, ld, leaf_threads(device))
        family, rec, render = "linalg_blk_leaf_sh", kb.leaf_shared_record, kb.render_leaf_shared
    else:
        family, spec, rec, render = "linalg_blk_leaf", (t,), kb.leaf_record, kb.render_leaf
    launch(device, family, spec, rec, render, {"W": w.buf, "D": d}, w.nb * nblk,
           nitems=w.nb * nblk, nblk=nblk, kb=LEAF, ntot=w.rows, offW=w.off, szW=w.sz, sblk=LEAF * (w.rs + w.cs),
           rs=w.rs, cs=w.cs, phase=phase, unit=int(unit), offD=0)


def leaf_threads(device) -> int:
    """The workgroup-memory leaf's threads: 1024 on GPUs (four rows a thread a step),
    LEAF_WG on devices that bound an invocation's loops (lavapipe, which runs a
    workgroup's invocations on one CPU thread)."""
    return kb.LEAF_WG if loop_bound(device) is not None else 1024


def leaf_shared_ld(itemsize: int, device) -> int | None:
    """The row stride of the workgroup-memory leaf's block on ``device``: LEAF + 1 (a
    column across all banks) where that fits, LEAF where only that does, None where
    the block does not fit workgroup memory (then the global-memory leaf runs)."""
    room = device.limits.get("max-compute-workgroup-storage-size", 16384)
    for ld in (LEAF + 1, LEAF):
        if kb.leaf_shared_bytes(itemsize, ld) <= room:
            return ld
    return None


def _matmul(a: g.Node, b: g.Node) -> g.Data:
    out = matmul_nodes(a, b, (a.shape[0],))
    return g.realize(out)


def _subtract(a: g.Node, b: g.Node, dst: _Mat, lower: bool = False) -> None:
    """dst -= a @ b (on and below dst's diagonal only where ``lower``): in place by the
    matmul's update mode where it applies, else a stored product subtracted."""
    if not subtract_product(a, b, dst.node(), lower):
        _store(_matmul(a, b), dst, 3 if lower else 1)


def _trsm(tm: _Mat, ym: _Mat, lower: bool, unit: bool = False) -> None:
    """Y <- T^-1 Y in place, T (square, ``tm``) lower or upper triangular; the other
    triangle of ``tm`` is never read."""
    n = tm.rows
    if not n or not ym.cols:
        return
    nblk = _cdiv(n, LEAF)
    rt = tm.device.runtime
    isz = tm.dtype.itemsize
    dbuf = rt.alloc(tm.nb * nblk * LEAF * LEAF * isz)
    # upper blocks are inverted as the lower blocks of T^T: D then holds inv(T_ii)^T
    _leaf(tm if lower else tm.T, nblk, 1, dbuf, unit)
    order = range(nblk) if lower else reversed(range(nblk))
    for bi in order:
        s, e = bi * LEAF, min(n, bi * LEAF + LEAF)
        yi = ym.block(s, e, 0, ym.cols)
        if lower and s > 0:
            _subtract(tm.block(s, e, 0, s).node(), ym.block(0, s, 0, ym.cols).node(), yi)
        elif not lower and e < n:
            _subtract(tm.block(s, e, e, n).node(), ym.block(e, n, 0, ym.cols).node(), yi)
        dm = _Mat(dbuf, bi * LEAF * LEAF, nblk * LEAF * LEAF, LEAF, 1, e - s, e - s, tm.nb, tm.dtype, tm.device)
        _store(_matmul((dm if lower else dm.T).node(), yi.node()), yi, 0)


# ------------------------------------------------------------------ Cholesky

def cholesky(node: g.Node) -> g.Data:
    """The lower Cholesky factor of the (batch..., n, n) Hermitian ``node`` (its lower
    triangle is read), a new contiguous Data (replayed from a recording for an input of
    a layout seen before: ``_kernels.program``)."""
    return program.run("cholesky", (), [node], _cholesky)


def _cholesky(node: g.Data) -> g.Data:
    device = node.device
    batch = node.shape[:-2]
    n = node.shape[-1]
    nb = g.prod(batch)
    w = _Mat.new(nb, n, n, node.dtype, device)
    if nb and n:
        _store(as_batch3(node), w, 2)
        _cholesky_inplace(w)
    return g.Data(w.buf, batch + (n, n), node.dtype, device)


def _cholesky_inplace(w: _Mat) -> None:
    if CHOL_PANELS and w.dtype in _CHOL_PANEL_DTYPES:
        _cholesky_panels(w)
        return
    n = w.rows
    rt = w.device.runtime
    dbuf = rt.alloc(w.nb * LEAF * LEAF * w.dtype.itemsize)
    for k in range(0, n, LEAF):
        e = min(n, k + LEAF)
        diag = w.block(k, e, k, e)
        if e == n:
            _leaf(diag, 1, 0)
            break
        _leaf(diag, 1, 2, dbuf)
        dm = _Mat(dbuf, 0, LEAF * LEAF, LEAF, 1, e - k, e - k, w.nb, w.dtype, w.device)
        a21 = w.block(e, n, k, e)
        l21 = _matmul(a21.node(), dm.conj_t())
        _store(l21, a21, 0)
        _subtract(l21, _Mat.of(l21).conj_t(), w.block(e, n, e, n), lower=True)


def _cholesky_panels(w: _Mat) -> None:
    """Right-looking Cholesky in blocks of CHOL_OUTER columns, each by panels of LEAF
    columns: a panel (its diagonal block and the rows below) factored in registers by
    one dispatch (``kb.render_chol_panel``) into the block's own buffer, the rest of
    the block's columns less its product; then the block stored into w (its lower
    triangle) and the trailing matrix less the block's product of rank CHOL_OUTER, on
    and below its diagonal."""
    n, nb, device = w.rows, w.nb, w.device
    threads = kb.CHOL_WG
    unrolled = loop_bound(device) is None if CHOL_UNROLLED is None else CHOL_UNROLLED
    t = _tag(w.dtype, device)
    for k0 in range(0, n, CHOL_OUTER):
        k1 = min(n, k0 + CHOL_OUTER)
        lb = _Mat.new(nb, n - k0, k1 - k0, w.dtype, device)  # the block's columns, rows k0..
        for k in range(k0, k1, LEAF):
            e = min(k1, k + LEAF)
            groups = max(1, _cdiv(n - e, threads - LEAF))
            launch(device, "linalg_blk_cholp", (t, threads, unrolled), kb.chol_panel_record,
                   kb.render_chol_panel, {"W": w.buf, "L": lb.buf}, nb * groups,
                   nitems=nb * groups, ngroups=groups, n=n, offW=w.off, szW=w.sz, rs=w.rs, cs=w.cs, k0=k, kend=e,
                   offL=lb.off + (k - k0) * (lb.rs + lb.cs), szL=lb.sz, rsL=lb.rs)
            if e < k1:
                l21 = lb.block(e - k0, n - k0, k - k0, e - k0)
                _subtract(l21.node(), lb.block(e - k0, k1 - k0, k - k0, e - k0).conj_t(), w.block(e, n, e, k1))
        _store(lb.node(), w.block(k0, n, k0, k1), 2)
        if k1 < n:
            l21 = lb.block(k1 - k0, n - k0, 0, k1 - k0)
            _subtract(l21.node(), l21.conj_t(), w.block(k1, n, k1, n), lower=True)


# ------------------------------------------------------------------ LU

def lu(a: g.Node, rhs: g.Node | None, mode: str):
    """LU with partial pivoting of the (batch..., n, n) ``a`` on [A | B]: mode 'solve'
    (B = rhs, (batch..., n, r)), 'inv' (B = I) or 'det'. Returns the solution Data
    (batch..., n, r) for solve/inv; for det a Data of (sign, log|det|, det) per matrix,
    (batch..., 3). Replayed from a recording for inputs of a layout seen before."""
    if rhs is None:
        return program.run("lu", mode, [a], lambda a: _lu(a, None, mode))
    return program.run("lu", mode, [a, rhs], lambda a, rhs: _lu(a, rhs, mode))


def _lu(a: g.Data, rhs: g.Data | None, mode: str):
    device = a.device
    dtype = a.dtype
    batch = a.shape[:-2]
    n = a.shape[-1]
    nb = g.prod(batch)
    r = rhs.shape[-1] if mode == "solve" else (n if mode == "inv" else 0)
    ld = n + r
    w = _Mat.new(nb, n, ld, dtype, device)
    rt = device.runtime
    t = _tag(dtype, device)
    _store(as_batch3(a), w.block(0, n, 0, n), 0)
    if mode == "solve":
        _store(as_batch3(rhs), w.block(0, n, n, ld), 0)
    elif mode == "inv":
        e = eye(n, n, dtype, device)
        _store(g.Data(e.buf, (nb, n, n), dtype, device, e.offset, (0,) + e.strides), w.block(0, n, n, ld), 0)
    piv = rt.alloc(max(nb * n, 1) * 4)
    fl = rt.alloc(max(nb, 1) * 4)
    _lu_steps(w, n, ld, piv, fl)
    if mode == "det":
        out = rt.alloc(max(nb, 1) * 3 * dtype.itemsize)
        dummy = rt.alloc(16)
        for a0 in range(0, n, 800):  # thread 0 folds pivots in order, a log (~48 iterations) each
            launch(device, "linalg_lu", (t, "det"), kl.lu_record, kl.render_lu,
                   {"A": dummy, "W": w.buf, "X": out, "FL": fl}, nb,
                   nbatch=nb, n=n, nrhs=0, offA=0, offB=0, phase=3, a=a0, c=min(n, a0 + 800))
        return g.Data(out, batch + (3,), dtype, device)
    _trsm(w.block(0, n, 0, n), w.block(0, n, n, ld), lower=False)
    x = w.block(0, n, n, ld)
    bst = _batch_strides(batch, x.sz)
    return g.Data(w.buf, batch + (n, r), dtype, device, x.off, bst + (x.rs, x.cs))


def _lu_steps(w: _Mat, nfac: int, upd: int, piv, fl) -> None:
    """Partial-pivoting LU, in place, of the first ``nfac`` columns of each of w's
    contiguous rows x ld matrices (rows >= nfac): each pivot's row swap over all ld
    columns (into PIV, u32 rows per matrix, and the parity into FL), the blocked updates
    over the columns before ``upd`` (the right-hand sides carried along where
    ``upd`` > ``nfac``; columns from ``upd`` on are only swapped)."""
    nb, m, ld = w.nb, w.rows, w.cols
    device, dtype = w.device, w.dtype
    t = _tag(dtype, device)
    dbuf = device.runtime.alloc(nb * LEAF * LEAF * dtype.itemsize)
    budget = phase_budget(device)
    threads = kb.panel_threads(device)
    tall = max(TLU_MIN_ROWS, 64)
    tournament = _Tournament(nb, m, dtype, device) if TLU_MIN_ROWS and m >= max(tall, TLU_MIN_ORDER) else None
    reg = _register_panels(dtype, threads, device)
    unrolled = loop_bound(device) is None if REGISTER_UNROLLED is None else REGISTER_UNROLLED
    for k0 in range(0, nfac, OUTER):
        k1 = min(nfac, k0 + OUTER)
        # the panels update the rest of their block; those of the last block every column
        inner = k1 if k1 < nfac else upd
        for k in range(k0, k1, PANEL):
            kend = min(k1, k + PANEL)
            if tournament is not None and m - k >= tall:
                tournament.panel(w.buf, piv, fl, ld, k, kend, t)
            elif reg and m - k <= threads:
                launch(device, "linalg_blk_panelr", (t, threads, reg, unrolled), kb.panel_reg_record,
                       kb.render_panel_reg,
                       {"W": w.buf, "PIV": piv, "FL": fl}, nb, nbatch=nb, n=m, ld=ld, k0=k, kend=kend)
            else:
                # per column: the tree, the row swap, the update of a row group's rows;
                # then once per dispatch the multipliers' division
                rows = _cdiv(m - k, threads // 32)
                cost = 16 + threads.bit_length() + _cdiv(ld, threads) + rows
                step = max(1, (budget - rows - _cdiv(m - k, threads)) // cost)
                for a0 in range(k, kend, step):
                    launch(device, "linalg_blk_panel", (t, threads), kb.panel_record, kb.render_panel,
                           {"W": w.buf, "PIV": piv, "FL": fl}, nb,
                           nbatch=nb, n=m, ld=ld, k0=k, kend=kend, a=a0, c=min(kend, a0 + step))
            if kend < inner:
                _lu_update(w, k, kend, inner, dbuf)
        if inner < upd:
            _lu_update(w, k0, k1, upd, dbuf)


def _register_panels(dtype, threads: int, device) -> int:
    """The subgroup size where LU panels of up to ``threads`` rows factor in registers
    (``kb.render_panel_reg``: float32, devices with full subgroups of consecutive
    invocations), else 0."""
    lanes = device.runtime.subgroup_size
    if not REGISTER_PANELS or dtype is not dt.float32 or not lanes or threads % lanes:
        return 0
    return lanes


def _lu_update(w: _Mat, k: int, kend: int, upd: int, dbuf) -> None:
    """After columns k..kend-1 are factored: U12 = L11^-1 A12 over columns kend..upd-1
    (L11 unit lower), then the rows below less L21 U12."""
    nb, m, device, dtype = w.nb, w.rows, w.device, w.dtype
    u12 = w.block(k, kend, kend, upd)
    if kend - k <= LEAF:
        _leaf(w.block(k, kend, k, kend), 1, 1, dbuf, unit=True)
        dm = _Mat(dbuf, 0, LEAF * LEAF, LEAF, 1, kend - k, kend - k, nb, dtype, device)
        u12new = _matmul(dm.node(), u12.node())
        _store(u12new, u12, 0)
    else:
        _trsm(w.block(k, kend, k, kend), u12, lower=True, unit=True)
        u12new = _Mat.new(nb, kend - k, upd - kend, dtype, device)
        _store(u12.node(), u12new, 0)
        u12new = u12new.node()
    if kend < m:
        # the trailing update reads L21 from a copy (the update writes W itself)
        l21 = _Mat.new(nb, m - kend, kend - k, dtype, device)
        _store(w.block(kend, m, k, kend).node(), l21, 0)
        _subtract(l21.node(), u12new, w.block(kend, m, kend, upd))

def lu_tall(a: g.Node):
    """LU with partial pivoting of one m x w matrix ``a`` (m >= w >= 1), the panel step of
    the LU of a matrix past the binding limit (``linalg._lu_by_panels``): the factors
    (m, w) (L unit lower below the diagonal, U on and above it), the row order (m,) in
    ``a``'s dtype (row i of the factors is row ``order[i]`` of ``a``: a column of row
    numbers rides along with the swaps, exact below 2^24 rows in float32) and the
    parity of the swaps (a uint32 0-d Data)."""
    m, wd = a.shape
    dtype, device = a.dtype, a.device
    rt = device.runtime
    w = _Mat.new(1, m, wd + 1, dtype, device)
    _store(as_batch3(a), w.block(0, m, 0, wd), 0)
    rows = g.make_op("cast", [g.Iota((m, 1), device)], dtype)
    _store(as_batch3(rows), w.block(0, m, wd, wd + 1), 0)
    piv = rt.alloc(max(m, 1) * 4)
    fl = rt.alloc(16)
    _lu_steps(w, wd, wd, piv, fl)
    factors = g.Data(w.buf, (m, wd), dtype, device, 0, (wd + 1, 1))
    order = g.Data(w.buf, (m,), dtype, device, wd, (wd + 1,))
    return factors, order, g.Data(fl, (), dt.uint32, device)


def triangular_solve(t: g.Node, y: g.Node, lower: bool, unit: bool = False) -> g.Data:
    """T^-1 Y for one square triangular ``t`` (the other triangle never read; a unit
    diagonal where ``unit``) and ``y`` (n, r): a new contiguous Data, by the blocked
    solve of the LU and Cholesky."""
    n, r = y.shape
    ym = _Mat.new(1, n, r, y.dtype, y.device)
    _store(as_batch3(y), ym, 0)
    _trsm(_Mat.of(as_batch3(t)), ym, lower, unit)
    return g.Data(ym.buf, (n, r), y.dtype, y.device)


class _Tournament:
    """The LU panels of ``nb`` matrices of ``n`` rows by tournament pivoting
    (``kb.render_tlu_pick``): blocks of ``rows`` rows pick 32 candidates each, sets are
    merged ``rows / 32`` at a time until one is left, its rows are swapped into place
    (``render_tlu_swap``), and the panel is factored on them (``render_tlu_l21``).
    One candidate buffer serves every panel (sized for the tallest, the first)."""

    def __init__(self, nb: int, n: int, dtype, device):
        self.nb, self.n, self.device = nb, n, device
        self.rows = kb.tlu_rows(dtype.itemsize, device)
        lanes = device.runtime.subgroup_size
        real = dtype.name in ("float32", "complex64")
        self.sg = lanes if TLU_SUBGROUPS and real and lanes is not None and self.rows % lanes == 0 else 0
        self.stride = 32 * sum(self._levels(n))
        self.cand = device.runtime.alloc(max(nb * self.stride, 1) * 4)

    def _levels(self, m: int) -> list[int]:
        """The set count of each round for a panel of ``m`` rows: blocks, then merges."""
        counts = [_cdiv(m, self.rows)]
        while counts[-1] > 1:
            counts.append(_cdiv(counts[-1] * 32, self.rows))
        return counts

    def panel(self, wbuf, piv, fl, ld: int, k: int, kend: int, t: str) -> None:
        nb, n, rows, device = self.nb, self.n, self.rows, self.device
        wp = kend - k
        cand = {"W": wbuf, "CAND": self.cand}
        off, prev = 0, None
        for level, count in enumerate(self._levels(n - k)):
            nin, in_off = (0, 0) if prev is None else prev
            launch(device, "linalg_blk_tlu_pick", (t, rows, self.sg), kb.tlu_pick_record, kb.render_tlu_pick, cand,
                   nb * count, nitems=nb * count, ngroups=count, n=n, ld=ld, k0=k, wp=wp, mode=int(level > 0),
                   nin=nin, inOff=in_off, outOff=off, cstride=self.stride)
            prev = (count * 32, off)
            off += count * 32
        groups = _cdiv(ld, 256)
        launch(device, "linalg_blk_tlu_swap", (t,), kb.tlu_swap_record, kb.render_tlu_swap,
               {"W": wbuf, "CAND": self.cand, "PIV": piv, "FL": fl}, nb * groups,
               nitems=nb * groups, ngroups=groups, n=n, ld=ld, k0=k, wp=wp, winOff=prev[1], cstride=self.stride)
        below = _cdiv(n - kend, 256)
        for top, groups in ((1, 1), (0, below)):
            if groups:
                launch(device, "linalg_blk_tlu_l21", (t,), kb.tlu_l21_record, kb.render_tlu_l21, {"W": wbuf},
                       nb * groups, nitems=nb * groups, ngroups=groups, n=n, ld=ld, k0=k, wp=wp, top=top)


def _batch_strides(batch, sz: int) -> tuple:
    out = []
    acc = sz
    for d in reversed(batch):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


# ------------------------------------------------------------------ tall QR

def _eye3(nb: int, n: int, dtype, device) -> _Mat:
    w = _Mat.new(nb, n, n, dtype, device)
    e = eye(n, n, dtype, device)
    _store(g.Data(e.buf, (nb, n, n), dtype, device, e.offset, (0,) + e.strides), w, 0)
    return w


MAX_SHIFTED = 3  # shifted CholeskyQR steps before the caller falls back to Householder


def tall_work_dtype(node: g.Node) -> dt.DType:
    """The precision the tall QR works in: ``work_dtype`` (float64 for float32 input
    where the device has it), unless the (batch..., m, n) copy in it would pass the
    device's binding limit (lavapipe's 128 MiB: a 100000 x 256 float64 copy is
    205 MB), where it works in the input's own."""
    work = work_dtype(node.dtype, node.device)
    if work is not node.dtype and node.size * work.itemsize > work_limit(node.device):
        return node.dtype
    return work


def work_limit(device) -> int:
    """The largest copy in the work precision the tall QR makes: one binding."""
    return device.max_binding_bytes


def qr_tall(node: g.Node, rounded: bool = True):
    """Shifted CholeskyQR of the (batch..., m, n) ``node``, m >= n: (Q, R) Data of
    shapes (batch..., m, n) and (batch..., n, n), in ``node``'s dtype (``rounded``) or
    in the work precision, or None where it cannot reach an orthonormal Q (rank
    deficiency, condition near 1 / eps of the work precision): the caller falls back.

    Everything runs in the refinement precision (``tall_work_dtype``: float64 for
    float32 input where the device has it) and is rounded once at the end. In float32 the Gram
    matrix alone, summed over m rows, cost max |Q^T Q - I| ~2.5e-7 and a backward
    error ~4.4e-7 on 4000 x 64 PCA-like data, against NumPy's 3.1e-9 and 3.6e-8 (NumPy
    factors float32 input in float64 and rounds); in float64 the rounding of Q and R is
    all that is left, and the condition the Gram matrix can carry grows from ~1e3 to
    ~1e7, so float32 input of condition up to 1e6 takes two plain steps.

    Where the work precision is wider than the input, the first step is plain
    CholeskyQR (its Cholesky factor exists for condition below ~1e7); otherwise, and
    where that step fails (a NaN or inf in the next Gram matrix: a rank-deficient or
    extremely ill-conditioned input), steps with the shift s = sqrt(m) u ||Q||_F^2
    (above the Gram matrix's rounding error, so its Cholesky factorization exists
    however ill-conditioned Q is; each such step divides the condition number by about
    1 / sqrt(sqrt(m) u)) run until the next Gram matrix is within 0.1 of I, read back
    after each step; then one plain step makes Q orthonormal to working precision
    (Fukaya et al.'s shifted CholeskyQR3 in its adaptive form: CholeskyQR2, two steps,
    for well-conditioned input)."""
    device = node.device
    dtype = node.dtype
    work = tall_work_dtype(node)
    rdt = dt.real_of(work)
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    nb = g.prod(batch)
    u = 2.0 ** -24 if rdt is dt.float32 else 2.0 ** -53
    eye = _eye3(nb, n, work, device)
    a = as_batch3(_cast(node, work))
    q, r_tot = a, None
    gram0 = gram = _matmul(_Mat.of(q).conj_t(), q)
    shifted = work is dtype  # a wider precision tries the plain step first
    step = 0
    while True:
        final = False
        if r_tot is not None:
            dev = g.make_op("abs", [g.make_op("subtract", [gram, eye.node()], work)], rdt)
            err = g.realize(reduce_axes(dev, range(dev.ndim), "max")[0])
            # the decision is the guard of a recorded program (``program.read_decided``)
            outcome = program.read_decided(err, functools.partial(_gram_outcome, err.dtype, shifted, step))
            if outcome == "final":
                final = True
            elif outcome == "restart":
                # the plain first step broke down: start over from the input, shifted
                q, r_tot, gram, shifted, step = a, None, gram0, True, 0
            elif outcome == "fail":
                return None
        gm = _Mat.new(nb, n, n, work, device)
        if final or not shifted:
            _store(gram, gm, 2)
        else:
            a2 = g.make_op("abs", [q], rdt)
            fro2 = g.reshape_view(reduce_axes(g.make_op("multiply", [a2, a2], rdt), (1, 2), "sum")[0], (nb, 1, 1))
            shift = g.make_op("multiply", [fro2, g.Const(math.sqrt(m) * u, rdt, device, fro2.shape)], rdt)
            shift = g.broadcast_view(_cast(shift, work), gram.shape)
            shifted_gram = g.make_op("add", [gram, g.make_op("multiply", [shift, eye.node()], work)], work)
            _store(g.realize(shifted_gram), gm, 2)
        _cholesky_inplace(gm)
        # Q = Q R^-1 = Q L^-H: the inverse of L by the blocked lower solve of L Z = I
        linv = _Mat.new(nb, n, n, work, device)
        _store(eye.node(), linv, 0)
        _trsm(gm, linv, lower=True)
        q = _matmul(q, linv.conj_t())
        r = gm.conj_t()
        r_tot = g.realize(r) if r_tot is None else _matmul(r, r_tot)
        step += 1
        if final:
            break
        gram = _matmul(_Mat.of(q).conj_t(), q)
    out = dtype if rounded else work
    qd = g.realize(_cast(q, out))
    rd = g.realize(r_tot)
    if rd.strides != (n * n, n, 1) or rd.dtype is not out:
        rd = g.realize(g.Op("copy", [rd], out) if rd.dtype is out else _cast(rd, out))
    return g.reshape_view(qd, batch + (m, n)), g.Data(rd.buf, batch + (n, n), out, device, rd.offset)


def _gram_outcome(dtype, shifted: bool, step: int, raw) -> str:
    """What a CholeskyQR step does next, from the bytes of max |Q^H Q - I| (``qr_tall``)."""
    err = float(np.frombuffer(bytes(raw), dtype.numpy)[0])
    if err < 0.1:
        return "final"
    if not shifted and not math.isfinite(err):
        return "restart"
    if not math.isfinite(err) or step >= MAX_SHIFTED:
        return "fail"
    return "shift"


# ------------------------------------------------------------------ Householder QR

QR_PANEL = 32  # panel width of the blocked Householder QR (T is QR_PANEL x QR_PANEL)


def _hh_cost(m: int, j: int, kend: int, threads: int) -> int:
    """Loop iterations of the panel kernel's column j on ``threads`` threads (three
    passes over the rows by all threads and two reductions, then a pass and a
    reduction for the later columns' dot products and the update pass, by row group)."""
    r = _cdiv(m - j, threads)
    return 3 * r + 2 * threads.bit_length() + 8 + (2 * _cdiv(m - j, threads // 32) + 8 if j + 1 < kend else 0)


def qr_householder_fits(m: int, n: int, device) -> bool:
    """Whether every column of a panel fits one dispatch's loop budget on ``device``."""
    return _hh_cost(m, 0, min(m, n, QR_PANEL), kb.panel_threads(device)) <= phase_budget(device)


def qr_householder(node: g.Node, mode: str):
    """Blocked Householder QR (compact WY) of the real (batch..., m, n) ``node``: per
    panel of QR_PANEL columns a tree of block QRs (``_tsqr_panel``; the one-workgroup
    hh kernel where the device's workgroup memory holds no tree block) factors it in
    place (R above the diagonal, the reflectors below), T comes from the tree's
    rebuild or from G = V^T V, and the trailing columns
    get A2 -= V (T^T (V^T A2)), three matmuls; Q is I with the block reflectors
    applied last to first, Q2 -= V (T (V^T Q2)). mode 'reduced' or 'complete', as qr.
    Returns (Q, R) Data, with LAPACK's signs (dgeqrf's reflectors, see kb.render_hh).
    Replayed from a recording for an input of a layout seen before."""
    return program.run("qr_householder", mode, [node], lambda a: _qr_householder(a, mode))


def _qr_householder(node: g.Data, mode: str):
    device = node.device
    dtype = node.dtype
    rt = device.runtime
    t = _tag(dtype, device)
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    nb = g.prod(batch)
    kk = min(m, n)
    qc, rr = (kk, kk) if mode == "reduced" else (m, m)
    w = _Mat.new(nb, m, n, dtype, device)
    _store(as_batch3(node), w, 0)
    tau = rt.alloc(max(nb * kk, 1) * dtype.itemsize)
    panels = []
    tree = tsqr_block_rows(dtype, device)
    for k in range(0, kk, QR_PANEL):
        kend = min(kk, k + QR_PANEL)
        if tree is not None:
            made = _tsqr_panel(w, tau, k, kend, kk, tree)
        else:
            made = _hh_panel(w, tau, k, kend, kk)
        wv = kend - k
        if made is not None:  # the tree's rebuild gave V and T
            v, tm = made
        else:
            v = _Mat.new(nb, m - k, wv, dtype, device)
            _store(w.block(k, m, k, kend).node(), v, 4)
            gram = _matmul(v.T.node(), v.node())
            tm = _Mat.new(nb, wv, wv, dtype, device)
            gs = gram.strides
            launch(device, "linalg_blk_hh_t", (t,), kb.hh_t_record, kb.render_hh_t,
                   {"G": gram.buf, "TAU": tau, "TM": tm.buf}, nb,
                   nbatch=nb, w=wv, kk=kk, k0=k, offG=gram.offset, szG=gs[0], rsG=gs[1], csG=gs[2])
        panels.append((k, v, tm))
        if kend < n:
            a2 = w.block(k, m, kend, n)
            y = _matmul(tm.T.node(), _matmul(v.T.node(), a2.node()))
            _subtract(v.node(), y, a2)
    r = _Mat.new(nb, rr, n, dtype, device)
    _store(w.block(0, rr, 0, n).node(), r, 5)
    q = _Mat.new(nb, m, qc, dtype, device)
    e = eye(m, qc, dtype, device)
    _store(g.Data(e.buf, (nb, m, qc), dtype, device, e.offset, (0,) + e.strides), q, 0)
    for k, v, tm in reversed(panels):
        # Q's rows and columns before k are still the identity's: only Q[k:, k:] changes
        qb = q.block(k, m, k, qc)
        y = _matmul(tm.node(), _matmul(v.T.node(), qb.node()))
        _subtract(v.node(), y, qb)
    return g.Data(q.buf, batch + (m, qc), dtype, device), g.Data(r.buf, batch + (rr, n), dtype, device)


# The hh kernel's two norm reductions a column by subgroup operations (two barriers
# each, where the tree over 1024 invocations takes 13) on devices with full subgroups of
# consecutive invocations. On: qr float32 on an H100 (diag_switch.py qr HH_SUBGROUPS 0,1
# 1024,2048,4096) 15.36 -> 12.96 ms at 1024, 40.4 -> 35.6 at 2048, 135.0 -> 123.2 at 4096;
# the same reductions serve the tridiagonal kernels (linalg_trd.reduce_to).
HH_SUBGROUPS = True


def _hh_subgroups(threads: int, device) -> int:
    """The subgroup size the hh kernel's reductions use on ``device``, else 0."""
    lanes = device.runtime.subgroup_size if HH_SUBGROUPS else None
    return lanes if lanes and threads % lanes == 0 else 0


def _hh_panel(w: _Mat, tau, k: int, kend: int, kk: int) -> None:
    """The panel's columns k..kend-1 by the one-workgroup hh kernel, as many columns a
    dispatch as the loop budget allows."""
    device = w.device
    t = _tag(w.dtype, device)
    m, n = w.rows, w.cols
    budget = phase_budget(device)
    threads = kb.panel_threads(device)
    sg = _hh_subgroups(threads, device)
    a0 = k
    while a0 < kend:
        c, cost = a0, 0
        while c < kend and (c == a0 or cost + _hh_cost(m, c, kend, threads) <= budget):
            cost += _hh_cost(m, c, kend, threads)
            c += 1
        launch(device, "linalg_blk_hh", (t, threads, sg), kb.hh_record, kb.render_hh, {"W": w.buf, "TAU": tau}, w.nb,
               nbatch=w.nb, m=m, ld=n, kk=kk, kend=kend, a=a0, c=c)
        a0 = c


# ------------------------------------------------------------------ QR panels by a tree

# Panels by a tree of block QRs: off by default. On an H200 the tree was slower than
# the one-workgroup hh kernel at order 1024 and 2048 and 6% faster at 4096 (qr float32,
# ms: 15.6 -> 20.5, 39.8 -> 69.3 (1024 threads), 133.5 -> 125.2): its block kernels
# spend 180 us on 32 columns of 256 rows, latency-bound per column (reductions and
# dependent chains through workgroup memory), where the hh kernel spends ~10 us a
# column of all the panel's rows (docs/performance.md).
QR_TREE_PANELS = False
QR_TREE_THREADS = None  # the up and down kernels' threads: None is kt.T (256; 1024 measured slower)


def tsqr_block_rows(dtype, device) -> tuple[int, int, int] | None:
    """(h, ld, threads): the rows of a tree block (256, 128 or 64: at least twice
    QR_PANEL), its row stride in workgroup memory (QR_PANEL + 1, so a column spans the
    banks; QR_PANEL where only that fits) and the up and down kernels' threads (at
    most QR_TREE_THREADS) on ``device``, or None where the tree is off or no block of
    64 rows fits its workgroup memory (then the hh kernel factors the panels)."""
    if not QR_TREE_PANELS:
        return None
    most = QR_TREE_THREADS or kt.T
    room = device.limits.get("max-compute-workgroup-storage-size", 16384)
    for h in (256, 128, 64):  # the tallest block first, then the most threads
        for ld in (QR_PANEL + 1, QR_PANEL):
            threads = most
            while threads >= kt.T:
                if kt.shared_bytes(h, ld, dtype.itemsize, threads) <= room:
                    return h, ld, threads
                threads //= 2
    return None


def _tsqr_panel(w: _Mat, tau, k: int, kend: int, kk: int, tree: tuple[int, int, int]):
    """Householder QR of w's panel rows k.., columns k..kend-1 in place, as the hh
    kernel leaves it (R on and above the diagonal, LAPACK's reflectors below, their
    taus in ``tau`` at k..), by a tree of block QRs (``_wgsl/linalg_tsqr``): a panel of
    at most h rows is one block, factored in place (returns None); a taller one is
    factored level by level up to one block, its explicit Q built back down, and the
    reflectors recovered from that Q, together with the trailing update's V (unit
    diagonal, zero above: a _Mat) and T (returns (V, T))."""
    device = w.device
    rt = device.runtime
    dtype = w.dtype
    isz = dtype.itemsize
    t = _tag(dtype, device)
    h, ld, tw = tree
    nb = w.nb
    wv = kend - k
    rows = w.rows - k
    x = (w.buf, w.off + k * (w.rs + w.cs), w.sz, w.rs)
    levels = []  # (X: buf, off, sz, rs), blocks, rows, taus
    while True:
        nblk = _cdiv(rows, h)
        root = nblk == 1
        taus = tau if root and not levels else rt.alloc(nb * nblk * 32 * isz)
        offt, szt = (k, kk) if taus is tau else (0, nblk * 32)
        nx = rt.alloc(16) if root else rt.alloc(nb * nblk * wv * wv * isz)
        launch(device, "linalg_tsqr_up", (t, h, ld, tw), kt.up_record, kt.render_up,
               {"X": x[0], "TAU": taus, "NX": nx}, nb * nblk, nbatch=nb * nblk, nblk=nblk, M=rows, wv=wv,
               off=x[1], sz=x[2], rs=x[3], offT=offt, szT=szt, nx=int(not root))
        levels.append((x, nblk, rows, taus))
        if root:
            break
        x, rows = (nx, 0, nblk * wv * wv, wv), nblk * wv
    if len(levels) == 1:  # one block: its reflectors and taus are the panel's
        return None
    qp = rt.alloc(16)
    for (xb, xo, xz, xr), nblk, lrows, taus in reversed(levels):
        qo = rt.alloc(nb * lrows * wv * isz)
        launch(device, "linalg_tsqr_down", (t, h, ld, tw), kt.down_record, kt.render_down,
               {"X": xb, "TAU": taus, "QP": qp, "QO": qo}, nb * nblk, nbatch=nb * nblk, nblk=nblk, M=lrows,
               wv=wv, off=xo, sz=xz, rs=xr, offT=0, szT=nblk * 32, root=int(nblk == 1))
        qp = qo
    (rb, ro, rz, rr), _, _, _ = levels[-1]
    rows0 = levels[0][2]
    nrb = _cdiv(rows0, kt.T)
    fl = rt.alloc(nb * nrb * 4)
    ud = rt.alloc(nb * kt.UD_STRIDE * isz)
    v = _Mat.new(nb, rows0, wv, dtype, device)
    tm = _Mat.new(nb, wv, wv, dtype, device)
    top = w.off + k * (w.rs + w.cs)
    launch(device, "linalg_tsqr_rebuild", (t,), kt.rebuild_record, kt.render_rebuild,
           {"Q0": qp, "RS": rb, "W": w.buf, "TAU": tau, "FL": fl, "VB": v.buf, "UD": ud}, nb * nrb,
           nbatch=nb * nrb, nrb=nrb, M=rows0, wv=wv, offR=ro, szR=rz, rsR=rr, offW=top, szW=w.sz, ldW=w.rs,
           offT=k, szT=kk)
    launch(device, "linalg_tsqr_fix", (t,), kt.fix_record, kt.render_fix,
           {"FL": fl, "W": w.buf, "TAU": tau, "UD": ud, "VB": v.buf, "TM": tm.buf}, nb,
           nbatch=nb, nrb=nrb, M=rows0, wv=wv, offW=top, szW=w.sz, ldW=w.rs, offT=k, szT=kk)
    return v, tm
