"""The blocked factorizations (cholesky, solve/inv/det/slogdet by blocked LU, the tall
CholeskyQR path of qr and its blocked Householder QR, svd/svdvals of tall matrices) against NumPy's LAPACK in the same
precision: on well-conditioned, ill-conditioned (condition 1e6 in float32, 1e12 in
float64) and rank-deficient inputs, at sizes below, at, between and past the block
size, every backward error, orthogonality and residual within 10x of LAPACK's own on
the same input; and the dispatch count growing as n / block, not n."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._kernels import budget
from wgarray._kernels import linalg_blocked as blk
from wgarray._kernels import program
from wgarray import debug
from wgarray import linalg as la
from wgarray._array import Array
from conftest import COMPLEX, HAS_F64, REAL_FLOAT, ids, npdt, to_np

FLOAT = REAL_FLOAT + COMPLEX
SIZES = [1, 7, 33, 100, 130]


def eps(d) -> float:
    return float(np.finfo(npdt(d)).eps)


def bound(ours: float, lapack: float, d) -> bool:
    """Ours within 10x of LAPACK's (LAPACK's floored at one ulp: it can be exactly 0)."""
    return ours <= 10 * max(lapack, eps(d))


def rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def orthonormal(rng, m, n, d):
    z = rng.standard_normal((m, n))
    if npdt(d).kind == "c":
        z = z + 1j * rng.standard_normal((m, n))
    return np.linalg.qr(z)[0]


def with_cond(m, n, d, cond, seed=0, rank=None):
    """An m x n matrix with singular values logspaced from 1 down to 1/cond (the last
    n - rank of them exactly 0), rounded to d."""
    rng = np.random.default_rng(seed)
    s = np.logspace(0, -np.log10(cond), n)
    if rank is not None:
        s[rank:] = 0
    u, v = orthonormal(rng, m, n, d), orthonormal(rng, n, n, d)
    return ((u * s) @ np.conj(v.T)).astype(npdt(d))


def hpd(n, d, cond, seed=0):
    """A Hermitian positive definite n x n matrix of condition ``cond``."""
    rng = np.random.default_rng(seed)
    q = orthonormal(rng, n, n, d)
    a = (q * np.logspace(0, -np.log10(cond), n)) @ np.conj(q.T)
    return ((a + np.conj(a.T)) / 2).astype(npdt(d))


def hi_cond(d) -> float:
    return 1e6 if np.finfo(npdt(d)).bits <= 32 else 1e12


def ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ------------------------------------------------------------------ Cholesky

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
@pytest.mark.parametrize("ill", [False, True], ids=["cond10", "condhigh"])
def test_cholesky_backward_error_within_10x_of_lapack(d, n, ill):
    a = hpd(n, d, hi_cond(d) if ill else 10.0, seed=n)
    L = to_np(la.cholesky(xp.asarray(a)))
    ref = np.linalg.cholesky(a)
    assert np.all(np.triu(L, 1) == 0)
    assert np.all(np.diagonal(L) > 0)
    assert bound(rel(L @ ct(L), a), rel(ref @ ct(ref), a), d)


@pytest.mark.parametrize("d", COMPLEX, ids=ids(COMPLEX))
def test_cholesky_complex_blocked_within_10x_of_lapack(d):
    a = hpd(100, d, 1e3, seed=3)
    L = to_np(la.cholesky(xp.asarray(a)))
    ref = np.linalg.cholesky(a)
    assert np.all(np.triu(L, 1) == 0)
    assert np.all(np.diagonal(L).imag == 0)
    assert bound(rel(L @ ct(L), a), rel(ref @ ct(ref), a), d)


@pytest.mark.parametrize("shared", [True, False], ids=["workgroup-memory-leaf", "global-memory-leaf"])
@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_both_leaf_kernels_within_10x_of_lapack(d, shared, monkeypatch):
    # the leaf factors / inverts each diagonal block in workgroup memory where one
    # block fits (every dtype but complex128 on this device), else in global memory:
    # both, past two blocks (130 = 2 LEAF + 2), through cholesky (factor + inverse),
    # solve (the unit-diagonal inverse of LU's L11) and a batch with a NaN matrix
    # (cholesky's leaf path: complex128's, and every dtype's without register panels)
    monkeypatch.setattr(blk, "LEAF_SHARED", shared)
    monkeypatch.setattr(blk, "CHOL_PANELS", False)
    monkeypatch.setattr(program, "PROGRAMS", False)  # each call runs its driver
    used = []
    orig = blk.launch

    def spy(device, family, *args, **kw):
        used.append(family)
        return orig(device, family, *args, **kw)

    monkeypatch.setattr(blk, "launch", spy)
    n = 130
    a = hpd(n, d, 1e3, seed=7)
    L = to_np(la.cholesky(xp.asarray(a)))
    ref = np.linalg.cholesky(a)
    assert np.all(np.triu(L, 1) == 0)
    assert bound(rel(L @ ct(L), a), rel(ref @ ct(ref), a), d)
    g = with_cond(n, n, d, 1e3, seed=8)
    rhs = np.random.default_rng(9).standard_normal((n, 3)).astype(npdt(d))
    x = to_np(la.solve(xp.asarray(g), xp.asarray(rhs)))
    x0 = np.linalg.solve(g, rhs)
    assert bound(rel(g @ x, rhs), rel(g @ x0, rhs), d)
    stack = np.stack([a, a])
    stack[0, 5, 5] = np.nan
    Ls = to_np(la.cholesky(xp.asarray(stack)))
    assert np.isnan(Ls[0]).any()
    assert bound(rel(Ls[1] @ ct(Ls[1]), a), rel(ref @ ct(ref), a), d)
    fits = blk.leaf_shared_ld(npdt(d).itemsize, xp.asarray(0).device) is not None
    leaves = {f for f in used if f.startswith("linalg_blk_leaf")}
    assert leaves == {"linalg_blk_leaf_sh" if shared and fits else "linalg_blk_leaf"}, leaves


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_leaf_bits_do_not_depend_on_its_thread_count(d, monkeypatch):
    # the workgroup-memory leaf takes 1024 threads on GPUs and LEAF_WG on lavapipe;
    # each entry is updated by one thread a step either way, so cholesky (factor and
    # inverse of each block), solve and inv give the same bits with either count
    if blk.leaf_shared_ld(npdt(d).itemsize, xp.asarray(0).device) is None:
        pytest.skip("one leaf block does not fit this device's workgroup memory")
    n = 130
    a = hpd(n, d, 1e3, seed=11)
    g = with_cond(n, n, d, 1e3, seed=12)
    rhs = np.random.default_rng(13).standard_normal((n, 2)).astype(npdt(d))

    def run():
        return [to_np(la.cholesky(xp.asarray(a))), to_np(la.solve(xp.asarray(g), xp.asarray(rhs))),
                to_np(la.inv(xp.asarray(g)))]

    monkeypatch.setattr(program, "PROGRAMS", False)  # a replay would repeat the first count's kernels
    monkeypatch.setattr(blk, "CHOL_PANELS", False)
    results = []
    for wg in (256, 1024):
        monkeypatch.setattr(blk, "leaf_threads", lambda device, wg=wg: wg)
        results.append(run())
    for x, y in zip(*results):
        np.testing.assert_array_equal(x, y)
    L = results[0][0]
    ref = np.linalg.cholesky(a)
    assert bound(rel(L @ ct(L), a), rel(ref @ ct(ref), a), d)


def test_cholesky_batched_upper_and_broadcast_view():
    d = xp.float32
    a = np.stack([hpd(70, d, 100.0, seed=s) for s in range(3)])
    x = xp.asarray(a)
    U = to_np(la.cholesky(x, upper=True))
    for k in range(3):
        ref = np.linalg.cholesky(a[k])
        assert np.all(np.tril(U[k], -1) == 0)
        assert bound(rel(ct(U[k]) @ U[k], a[k]), rel(ref @ ct(ref), a[k]), d)
    # a broadcast batch (stride 0) and a transposed view as input
    b = xp.broadcast_to(xp.matrix_transpose(x[1]), (2, 70, 70))
    L = to_np(la.cholesky(b))
    ref = np.linalg.cholesky(a[1].T)
    for k in range(2):
        assert bound(rel(L[k] @ L[k].T, a[1].T), rel(ref @ ref.T, a[1].T), d)


def test_cholesky_empty_and_not_positive_definite():
    assert to_np(la.cholesky(xp.zeros((0, 5, 5)))).shape == (0, 5, 5)
    assert to_np(la.cholesky(xp.zeros((2, 0, 0)))).shape == (2, 0, 0)
    a = np.eye(80, dtype=np.float32)
    a[70, 70] = -1.0  # not positive definite: NaN from the failing pivot on, as the unblocked kernel
    L = to_np(la.cholesky(xp.asarray(a)))
    assert np.all(L[:70, :70] == np.eye(70))
    assert np.isnan(L[70, 70])


def test_cholesky_dispatches_grow_as_n_over_block_and_nothing_recompiles():
    # 364 and 300 leave trailing blocks of the same layout classes (multiples of 4 wide)
    a1, a2 = hpd(364, xp.float32, 10.0), hpd(300, xp.float32, 10.0)
    to_np(la.cholesky(xp.asarray(a1)))  # compiles
    debug.reset_counters()
    to_np(la.cholesky(xp.asarray(a2)))
    c = debug.counters()
    assert c["pipelines_compiled"] == 0
    steps = -(-300 // blk.LEAF)
    # per block: the register panel, an update, and per outer block a store (the leaf
    # path: the leaf, 2 matmuls, 2 stores)
    assert c["dispatches"] <= (3 if blk.CHOL_PANELS else 5) * steps + 4


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_cholesky_panels_across_workgroups(d, monkeypatch):
    """Orders whose first panels span several workgroups of the register panel kernel
    (each factoring the diagonal block itself): a batch of 2 within 10x of LAPACK, with
    panels in outer blocks of 512 (one block), 256 (two), 128 (four) and 64 (one level), and with
    the leaf path (complex128 always takes the leaf); the factor does not depend on how
    the rows are spread over workgroups (128 threads: 64 rows each), bit for bit."""
    rt = xp.asarray(0).device.runtime
    a = np.stack([hpd(n, d, 1e3, seed=n) for n in (450, 450)])
    a[1] = hpd(450, d, hi_cond(d), seed=7)
    x = xp.asarray(a)
    outs = {}
    for panels, threads, outer in ((True, 256, 256), (True, 128, 256), (True, 256, 512), (True, 256, 64),
                                   (True, 256, 128), (False, 256, 256)):
        monkeypatch.setattr(blk, "CHOL_PANELS", panels)
        monkeypatch.setattr(blk.kb, "CHOL_WG", threads)
        monkeypatch.setattr(blk, "CHOL_OUTER", outer)
        rt.programs.clear()  # recorded for the last setting
        outs[panels, threads, outer] = L = to_np(la.cholesky(x))
        for k in range(2):
            ref = np.linalg.cholesky(a[k])
            assert np.all(np.triu(L[k], 1) == 0)
            assert bound(rel(L[k] @ ct(L[k]), a[k]), rel(ref @ ct(ref), a[k]), d)
    np.testing.assert_array_equal(outs[True, 256, 256], outs[True, 128, 256])


def test_cholesky_panels_not_positive_definite_past_the_first_workgroup():
    a = np.eye(300, dtype=np.float32)
    a[250, 250] = -1.0  # NaN from the failing pivot on, in a panel of rows past 192 + 64
    L = to_np(la.cholesky(xp.asarray(a)))
    assert np.all(L[:250, :250] == np.eye(250))
    assert np.all(L[250:, :250] == 0)
    assert np.isnan(L[250, 250])


# None: the device's default (unrolled on GPUs, looped on lavapipe); True: unrolled,
# about a minute to compile on lavapipe
@pytest.mark.parametrize("unrolled", [None, pytest.param(True, marks=pytest.mark.slow)])
def test_cholesky_panels_unrolled_and_looped_give_the_same_bits(unrolled, monkeypatch):
    d = xp.float32
    a = np.stack([hpd(300, d, 1e3, seed=s) for s in (2, 3)])
    x = xp.asarray(a)
    dev = xp.asarray(0).device
    want = (budget.loop_bound(dev) is None) if unrolled is None else unrolled
    monkeypatch.setattr(blk, "CHOL_UNROLLED", unrolled)
    dev.runtime.programs.clear()
    ours = to_np(la.cholesky(x))
    assert any(key[0] == "linalg_blk_cholp" and key[1][-1] == want for key in dev.runtime.kernels)
    for k in range(2):
        ref = np.linalg.cholesky(a[k])
        assert bound(rel(ours[k] @ ours[k].T, a[k]), rel(ref @ ref.T, a[k]), d)
    if want:  # the looped kernel beside it (the unrolled one is only built where asked for)
        monkeypatch.setattr(blk, "CHOL_UNROLLED", False)
        dev.runtime.programs.clear()
        np.testing.assert_array_equal(ours, to_np(la.cholesky(x)))


# ------------------------------------------------------------------ LU: solve, inv, det

def solve_residual(a, x, b) -> float:
    return float(np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x)))


# orders past BLOCKED_MIN (64) run the blocked LU; 33 the one-workgroup kernel beside it
SOLVE_CASES = [(d, n) for d in REAL_FLOAT for n in (33, 65, 100, 130)] + [(d, 100) for d in COMPLEX]


@pytest.mark.parametrize("d,n", SOLVE_CASES, ids=[f"{d.name}-{n}" for d, n in SOLVE_CASES])
def test_solve_residual_within_10x_of_lapack(d, n):
    a = with_cond(n, n, d, 1e3, seed=n)
    b = with_cond(n, 3, d, 10.0, seed=n + 1)
    x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    assert bound(solve_residual(a, x, b), solve_residual(a, np.linalg.solve(a, b), b), d)


@pytest.mark.parametrize("n", [300, 600])
def test_float32_solve_and_inv_within_10x_of_float32_lapack(n):
    # NumPy's float32 solve and inv give the float64 results rounded (its float32
    # residuals are below float32's own rounding: 40-380x smaller than any float32 LU's
    # at these orders), so single precision is held against LAPACK's sgesv through SciPy
    sl = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, 3)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def residual(x, rhs):
        x = x.astype(np.float64)
        return float(np.linalg.norm(a64 @ x - rhs) / (np.linalg.norm(a64) * np.linalg.norm(x)))

    ref = sl.solve(a, b, check_finite=False)
    assert ref.dtype == np.float32
    x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    assert residual(x, b64) <= 10 * residual(ref, b64)
    eye = np.eye(n)
    xi = to_np(la.inv(xp.asarray(a)))
    assert residual(xi, eye) <= 10 * residual(sl.inv(a, check_finite=False), eye)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_solve_ill_conditioned_and_batched(d):
    a = np.stack([with_cond(100, 100, d, hi_cond(d), seed=s) for s in range(2)])
    b = with_cond(100, 1, d, 10.0, seed=9)[:, 0]
    x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))  # a vector broadcast over the batch
    ref = np.linalg.solve(a, b[None, :, None])[..., 0]
    for k in range(2):
        assert bound(solve_residual(a[k], x[k], b), solve_residual(a[k], ref[k], b), d)


# None: the device's default (unrolled on GPUs); True compiles for ~2.5 minutes on lavapipe
@pytest.mark.parametrize("unrolled", [None, False, pytest.param(True, marks=pytest.mark.slow)])
def test_register_panels_give_the_global_memory_kernels_bits(monkeypatch, unrolled):
    """float32 LU panels with their rows in registers (where the device has subgroups)
    pick the same pivots and give the same bits as the global-memory panel kernel:
    solve (a batch of 2), inv, det, and a tall panel of the LU past the binding limit;
    an exactly zero pivot gives det 0 either way."""
    rt = xp.asarray(0).device.runtime
    if not blk._register_panels(xp.float32, blk.kb.panel_threads(xp.asarray(0).device), xp.asarray(0).device):
        pytest.skip("the device has no full subgroups of consecutive invocations: only the global-memory kernel runs")
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 130, 130)).astype(np.float32)
    b = rng.standard_normal((2, 130, 3)).astype(np.float32)
    sing = a[0] / np.float32(np.sqrt(130))
    sing[:, 40] = 0
    tall = rng.standard_normal((300, 70)).astype(np.float32)

    def run():
        rt.programs.clear()
        x = xp.asarray(a)
        factors, order, parity = blk.lu_tall(xp.asarray(tall)._node)
        return (to_np(la.solve(x, xp.asarray(b))), to_np(la.inv(x[1])), to_np(la.det(x / np.float32(np.sqrt(130)))),
                to_np(Array._new(factors)), to_np(Array._new(order)), int(to_np(Array._new(parity))),
                float(to_np(la.det(xp.asarray(sing)))))

    monkeypatch.setattr(blk, "REGISTER_UNROLLED", unrolled)
    ours = run()
    dev = xp.asarray(0).device
    want = (budget.loop_bound(dev) is None) if unrolled is None else unrolled
    assert any(key[0] == "linalg_blk_panelr" and key[1][-1] == want for key in rt.kernels)
    monkeypatch.setattr(blk, "REGISTER_PANELS", False)
    ref = run()
    for got, want in zip(ours[:6], ref[:6]):
        np.testing.assert_array_equal(got, want)
    assert ours[6] == ref[6] == 0.0
    p, l_u = ours[4].astype(np.int64), ours[3]
    lower = np.tril(l_u, -1)[:, :70] + np.eye(300, 70, dtype=np.float32)
    np.testing.assert_allclose(lower @ np.triu(l_u[:70]), tall[p], rtol=0, atol=1e-5)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_lu_in_outer_blocks(d, monkeypatch):
    """Blocks of OUTER columns (here 64, so an order of 200 has three and a part): the
    panels update their own block, the columns right of it one rank-OUTER update, the
    last block's panels the right-hand sides too; solve, inv and det as without blocks."""
    monkeypatch.setattr(blk, "OUTER", 64)
    n = 200
    a = with_cond(n, n, d, 1e3, seed=5)
    b = with_cond(n, 3, d, 10.0, seed=6)
    x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    assert bound(solve_residual(a, x, b), solve_residual(a, np.linalg.solve(a, b), b), d)
    xi = to_np(la.inv(xp.asarray(a)))
    eye = np.eye(n)
    assert bound(solve_residual(a, xi, eye), solve_residual(a, np.linalg.inv(a), eye), d)
    det = complex(to_np(la.det(xp.asarray(a))))
    monkeypatch.setattr(blk, "OUTER", blk.PANEL)
    xp.asarray(0).device.runtime.programs.clear()  # a recording of the blocked layout is not replayed
    one_level = complex(to_np(la.det(xp.asarray(a))))
    exact = np.linalg.det(a.astype(np.complex128))
    assert abs(det - exact) <= 10 * max(abs(one_level - exact), n * eps(d) * abs(exact))


@pytest.mark.parametrize("n", [65, 130])
@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_inv_residual_within_10x_of_lapack(d, n):
    a = with_cond(n, n, d, 1e4 if np.finfo(npdt(d)).bits <= 32 else 1e10, seed=2)
    xi = to_np(la.inv(xp.asarray(a)))
    ref = np.linalg.inv(a)
    eye = np.eye(n)

    def err(z):
        return float(np.linalg.norm(z @ a - eye) / (np.linalg.norm(z) * np.linalg.norm(a)))

    assert bound(err(xi), err(ref), d)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_det_slogdet_blocked_within_10x_of_lapack(d):
    n = 100
    a = (with_cond(n, n, d, 1e3, seed=4) * 3).astype(npdt(d))  # |det| in range
    exact = np.linalg.slogdet(a.astype(np.complex128 if npdt(d).kind == "c" else np.float64))
    ours = la.slogdet(xp.asarray(a))
    lap = np.linalg.slogdet(a)
    assert bound(abs(float(to_np(ours.logabsdet)) - exact[1]) / n,
                 abs(float(lap[1]) - exact[1]) / n, d)
    assert abs(complex(to_np(ours.sign)) - complex(exact[0])) <= 10 * max(abs(complex(lap[0]) - complex(exact[0])),
                                                                        n * eps(d))
    det = complex(to_np(la.det(xp.asarray(a))))
    ex = complex(exact[0]) * np.exp(exact[1])
    lapd = complex(np.linalg.det(a))
    assert abs(det - ex) / abs(ex) <= 10 * max(abs(lapd - ex) / abs(ex), n * eps(d))


def test_det_singular_and_sign_of_a_swap():
    a = np.eye(90, dtype=np.float32)
    a[[3, 80]] = a[[80, 3]]  # one row swap: det -1
    assert float(to_np(la.det(xp.asarray(a)))) == -1.0
    s = la.slogdet(xp.asarray(a))
    assert float(to_np(s.sign)) == -1.0 and float(to_np(s.logabsdet)) == 0.0
    a[5] = a[6]  # two equal rows
    s = la.slogdet(xp.asarray(a))
    assert float(to_np(s.sign)) == 0.0 and float(to_np(s.logabsdet)) == -np.inf


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_lu_pivots_from_every_row_group_and_unrolled_slot(d):
    # the panel kernel's rows are spread over column lanes' row groups, ROWS_UNROLL rows
    # an iteration: a permuted diagonally dominant matrix whose pivot of column j lies
    # in row perm[j] (rows in every group and slot, the last row included) pivots as
    # LAPACK does, so solve's result and det's sign (the permutation's parity) match
    n = 600
    rng = np.random.default_rng(21)
    perm = rng.permutation(n)
    perm[[0, int(np.argmax(perm))]] = perm[[int(np.argmax(perm)), 0]]  # column 0's pivot is the last row
    core = rng.uniform(-0.5, 0.5, (n, n)) / n + np.eye(n) * rng.uniform(1, 2, n)
    a = np.zeros((n, n))
    a[perm] = core
    a = a.astype(npdt(d))
    b = rng.standard_normal((n, 2)).astype(npdt(d))
    x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    assert bound(solve_residual(a, x, b), solve_residual(a, np.linalg.solve(a, b), b), d)
    sign = np.linalg.slogdet(a.astype(np.float64))[0]
    assert float(to_np(la.slogdet(xp.asarray(a)).sign)) == sign


def _permuted_dominant(n, d, seed):
    """A row permutation of a diagonally dominant matrix: column j's pivot is row
    perm[j] whatever rows a search sees, so every pivoting strategy picks the same."""
    rng = np.random.default_rng(seed)
    core = rng.uniform(-0.5, 0.5, (n, n)) / n + np.eye(n) * rng.uniform(1, 2, n)
    if npdt(d).kind == "c":
        core = core + 1j * rng.uniform(-0.5, 0.5, (n, n)) / n
    a = np.zeros_like(core)
    a[rng.permutation(n)] = core
    return a.astype(npdt(d))


@pytest.mark.parametrize("subgroups", [True, False], ids=["subgroups", "tree"])
@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_lu_tournament_pivots_as_partial_pivoting(d, subgroups, monkeypatch):
    # panels of 64 rows and more by tournament: 300 rows are 3 or 5 blocks, merged in
    # one or more rounds; where the pivots are unambiguous the factors, the solution,
    # the inverse and det's sign are those of the one-workgroup panel kernel, bit for
    # bit in real dtypes (the same operations in the same order; complex products may
    # contract to fma differently in the two kernels: NVIDIA's complex64 differs in
    # the last bits), within 10x of LAPACK's residual in complex ones; the pivot
    # searches by subgroup operations (where the device has them) or by a tree
    monkeypatch.setattr(blk, "TLU_SUBGROUPS", subgroups)
    a = np.stack([_permuted_dominant(300, d, seed) for seed in (3, 4)])
    b = np.random.default_rng(5).standard_normal((2, 300, 3)).astype(npdt(d))
    got = {}
    for rows in (0, 64):
        monkeypatch.setattr(blk, "TLU_MIN_ROWS", rows)
        monkeypatch.setattr(blk, "TLU_MIN_ORDER", 0)
        A = xp.asarray(a)
        got[rows] = (to_np(la.solve(A, xp.asarray(b))), to_np(la.inv(A)), to_np(la.slogdet(A).sign))
    if npdt(d).kind == "c":
        for k in range(2):
            x = got[64][0][k]
            assert bound(solve_residual(a[k], x, b[k]), solve_residual(a[k], np.linalg.solve(a[k], b[k]), b[k]), d)
        np.testing.assert_array_equal(got[64][2], got[0][2])
    else:
        for old, new in zip(got[0], got[64]):
            np.testing.assert_array_equal(new, old)
    ref = np.linalg.slogdet(a.astype(np.complex128 if npdt(d).kind == "c" else np.float64))[0]
    np.testing.assert_allclose(got[64][2], ref, atol=300 * eps(d))


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_lu_tournament_within_10x_of_lapack(d, monkeypatch):
    # pivots the tournament picks differently from partial pivoting (random and
    # ill-conditioned input, 530 rows: the last panel 18 columns wide, a partial last
    # block), every panel of 64 rows or more by tournament
    monkeypatch.setattr(blk, "TLU_MIN_ROWS", 64)
    monkeypatch.setattr(blk, "TLU_MIN_ORDER", 0)
    n = 530
    for cond, seed in ((1e2, 6), (hi_cond(d), 7)):
        a = with_cond(n, n, d, cond, seed=seed)
        b = with_cond(n, 2, d, 10.0, seed=seed + 1)
        x = to_np(la.solve(xp.asarray(a), xp.asarray(b)))
        assert bound(solve_residual(a, x, b), solve_residual(a, np.linalg.solve(a, b), b), d)
    a = (with_cond(n, n, d, 1e2, seed=8) * 2).astype(npdt(d))
    exact = np.linalg.slogdet(a.astype(np.complex128 if npdt(d).kind == "c" else np.float64))
    ours, lap = la.slogdet(xp.asarray(a)), np.linalg.slogdet(a)
    assert bound(abs(float(to_np(ours.logabsdet)) - exact[1]) / n, abs(float(lap[1]) - exact[1]) / n, d)
    assert abs(complex(to_np(ours.sign)) - complex(exact[0])) <= 10 * max(abs(complex(lap[0]) - complex(exact[0])),
                                                                        n * eps(d))
    xi = to_np(la.inv(xp.asarray(a)))
    eye = np.eye(n)

    def err(z):
        return float(np.linalg.norm(z @ a - eye) / (np.linalg.norm(z) * np.linalg.norm(a)))

    assert bound(err(xi), err(np.linalg.inv(a)), d)


def test_lu_tournament_singular_and_nan(monkeypatch):
    monkeypatch.setattr(blk, "TLU_MIN_ROWS", 64)
    monkeypatch.setattr(blk, "TLU_MIN_ORDER", 0)
    a = np.eye(200, dtype=np.float32)
    a[[3, 180]] = a[[180, 3]]
    assert float(to_np(la.det(xp.asarray(a)))) == -1.0
    a[150] = a[7]  # two equal rows, in different blocks
    s = la.slogdet(xp.asarray(a))
    assert float(to_np(s.sign)) == 0.0 and float(to_np(s.logabsdet)) == -np.inf
    a = with_cond(200, 200, xp.float32, 10.0)
    a[120, 5] = np.nan
    assert np.all(np.isnan(to_np(la.solve(xp.asarray(a), xp.ones((200, 1))))))


def test_solve_dispatches_grow_as_n_over_panel():
    a = with_cond(200, 200, xp.float32, 10.0)
    b = with_cond(200, 2, xp.float32, 10.0)
    to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    debug.reset_counters()
    to_np(la.solve(xp.asarray(a), xp.asarray(b)))
    c = debug.counters()
    assert c["pipelines_compiled"] == 0
    panels = -(-200 // blk.PANEL)
    leaves = -(-200 // blk.LEAF)
    assert c["dispatches"] <= 6 * panels + 6 * leaves + 8


# ------------------------------------------------------------------ CholeskyQR (tall and square), tall SVD

TALL = [(2000, 40), (300, 40), (130, 130)]


QR_CASES = ([(d, m, n, k) for d in REAL_FLOAT for m, n in TALL for k in ("cond10", "condhigh", "rankdef")]
            + [(d, 2000, 40, k) for d in COMPLEX for k in ("condhigh", "rankdef")])


@pytest.mark.parametrize("d,m,n,kind", QR_CASES, ids=[f"{d.name}-{m}x{n}-{k}" for d, m, n, k in QR_CASES])
def test_qr_cholesky_qr_within_10x_of_lapack(d, m, n, kind):
    cond = {"cond10": 10.0, "condhigh": hi_cond(d), "rankdef": 10.0}[kind]
    a = with_cond(m, n, d, cond, seed=m + n, rank=n - 5 if kind == "rankdef" else None)
    q, r = la.qr(xp.asarray(a))
    q, r = to_np(q), to_np(r)
    assert q.shape == (m, n) and r.shape == (n, n)
    assert np.all(np.tril(r, -1) == 0)
    qn, rn = np.linalg.qr(a)
    eye = np.eye(n)
    assert bound(rel(q @ r, a), rel(qn @ rn, a), d)
    assert bound(float(np.abs(ct(q) @ q - eye).max()), float(np.abs(ct(qn) @ qn - eye).max()), d)


def test_qr_tall_path_is_taken_and_batched():
    a = np.stack([with_cond(1000, 30, xp.float32, 100.0, seed=s) for s in range(2)])
    debug.reset_counters()
    q, r = la.qr(xp.asarray(a))
    q, r = to_np(q), to_np(r)
    # the Householder kernel would run hundreds of row-blocked phases here
    assert debug.counters()["dispatches"] < 200
    for k in range(2):
        qn, rn = np.linalg.qr(a[k])
        assert bound(rel(q[k] @ r[k], a[k]), rel(qn @ rn, a[k]), xp.float32)
        # R's diagonal is positive, so Q and R are LAPACK's up to the sign of each column
        sg = np.sign(np.diagonal(rn))
        assert np.allclose(r[k], sg[:, None] * rn, atol=1e-4 * np.abs(rn).max())


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_svd_tall_within_10x_of_lapack_and_of_the_square_core(d):
    """The tall path (QR, then the SVD of the square R) against LAPACK for U S Vh and
    U's orthogonality; its singular values against those of the square core on an
    n x n matrix of the same spectrum (the tall path must lose nothing beyond QR's
    rounding), and against LAPACK where the core itself is."""
    m, n = 2000, 40
    a = with_cond(m, n, d, 1e4, seed=5)
    true = np.logspace(0, -4, n)

    def err(s):
        return float(np.abs(np.asarray(s, dtype=np.float64) - true).max())

    lap = err(np.linalg.svd(a, compute_uv=False))
    sq = with_cond(n, n, d, 1e4, seed=6)
    core = err(to_np(la.svdvals(xp.asarray(sq))))
    floor = max(lap, core)
    cu, cs, cvh = (to_np(r) for r in la.svd(xp.asarray(sq)))
    core_back = rel((cu * cs) @ cvh, sq)
    core_orth = float(np.abs(cu.T @ cu - np.eye(n)).max())
    assert bound(err(to_np(la.svdvals(xp.asarray(a)))), floor, d)
    U, S, Vh = la.svd(xp.asarray(a), full_matrices=False)
    U, S, Vh = to_np(U), to_np(S), to_np(Vh)
    assert bound(err(S), floor, d)
    un, sn, vhn = np.linalg.svd(a, full_matrices=False)
    assert bound(rel((U * S) @ Vh, a), max(rel((un * sn) @ vhn, a), core_back), d)
    lap_orth = float(np.abs(un.T @ un - np.eye(n)).max())
    assert bound(float(np.abs(U.T @ U - np.eye(n)).max()), max(lap_orth, core_orth), d)
    # wide: through the conjugate transpose; matrix_norm(ord=2) is the largest value
    assert bound(err(to_np(la.svdvals(xp.asarray(a.T)))), floor, d)
    assert bound(abs(float(to_np(la.matrix_norm(xp.asarray(a), ord=2))) - 1.0), floor, d)


def pca_like(m, n, seed=0):
    """Rank-16 signal plus 0.1 Gaussian noise, float32 (what PCA and Ridge factor)."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((16, n))
    return ((rng.standard_normal((m, 16)) * np.geomspace(10, 1, 16)) @ basis
            + 0.1 * rng.standard_normal((m, n))).astype(np.float32)


def tall_floor(d) -> float:
    """A few ulps of the precision the tall path works in: float64 for float32 input
    where the device has it (then the bound is NumPy's own error, which for float32 is
    float64 LAPACK's rounded), else the input's own."""
    return 4 * eps(xp.float64 if HAS_F64 else d)


def errs64(a, *fs):
    """Backward error ||A - prod(fs)|| / ||A|| and max |F0^H F0 - I|, in float64."""
    a = np.asarray(a, np.complex128 if np.iscomplexobj(a) else np.float64)
    fs = [np.asarray(f, a.dtype) for f in fs]
    p = fs[0]
    for f in fs[1:]:
        p = p * f if f.ndim == 1 else p @ f
    q = fs[0]
    return (float(np.linalg.norm(a - p) / np.linalg.norm(a)),
            float(np.abs(ct(q) @ q - np.eye(q.shape[-1])).max()))


TALL_CASES = [(xp.float32, "pca")] + [(d, k) for d in REAL_FLOAT for k in ("cond10", "condhigh", "rankdef", "zerocols")]


@pytest.mark.parametrize("d,kind", TALL_CASES, ids=[f"{d.name}-{k}" for d, k in TALL_CASES])
def test_tall_qr_and_svd_within_10x_of_numpy(d, kind):
    """qr and svd of tall input (the CholeskyQR path; TSQR where it fails: columns of
    zeros and repeated columns) against NumPy on the same input: backward errors,
    max |Q^T Q - I| and |U^T U - I|, and the singular values, within 10x of NumPy's
    (floored at a few ulps of the precision the path works in); R upper triangular
    with a non-negative diagonal; two CholeskyQR steps for well-conditioned input."""
    m, n = 3000, 48
    if kind == "pca":
        a = pca_like(m, n)
    else:
        cond = {"cond10": 10.0, "condhigh": hi_cond(d), "rankdef": 10.0, "zerocols": 10.0}[kind]
        a = with_cond(m, n, d, cond, seed=n + len(kind), rank=n - 5 if kind == "rankdef" else None)
        if kind == "zerocols":
            a[:, 3] = 0
            a[:, 10] = a[:, 7]
    floor = tall_floor(d)

    def ok(ours, ref):
        return ours <= 10 * max(ref, floor)

    debug.reset_counters()
    q, r = (to_np(x) for x in la.qr(xp.asarray(a)))
    if kind == "cond10":  # one leaf block: a Gram matrix, Cholesky and Q = A R^-1, twice
        # (27 for float32 and 28 for float64 on lavapipe, and four that spread a
        # non-finite column into Q and R)
        assert debug.counters()["dispatches"] <= 32
    assert q.dtype == a.dtype and r.dtype == a.dtype
    assert np.all(np.tril(r, -1) == 0) and np.all(np.diagonal(r) >= 0)
    back, orth = errs64(a, q, r)
    nback, north = errs64(a, *np.linalg.qr(a))
    assert ok(back, nback) and ok(orth, north), (back, nback, orth, north)
    U, S, Vh = (to_np(x) for x in la.svd(xp.asarray(a), full_matrices=False))
    un, sn, vhn = np.linalg.svd(a, full_matrices=False)
    true = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    back, orth = errs64(a, U, S, Vh)
    nback, north = errs64(a, un, sn, vhn)
    assert ok(back, nback) and ok(orth, north), (back, nback, orth, north)
    verr = float(np.abs(S.astype(np.float64) - true).max() / true[0])
    nverr = float(np.abs(sn.astype(np.float64) - true).max() / true[0])
    assert ok(verr, nverr), (verr, nverr)
    sv = to_np(la.svdvals(xp.asarray(a)))
    assert ok(float(np.abs(sv.astype(np.float64) - true).max() / true[0]), nverr)


def test_tall_qr_works_in_the_input_precision_past_the_buffer_limit(monkeypatch):
    """Where a float64 copy of the input would pass the device's binding limit, the
    tall path works in float32 (then within 10x of a few float32 ulps) and allocates
    nothing larger than the input."""
    a = with_cond(3000, 48, xp.float32, 1e3, seed=3)
    x = xp.asarray(a)
    limit = a.nbytes + 64  # the float32 input fits, a float64 copy does not
    monkeypatch.setattr(blk, "work_limit", lambda device: limit)
    q, r = (to_np(v) for v in la.qr(x))
    U, S, Vh = (to_np(v) for v in la.svd(x, full_matrices=False))
    monkeypatch.undo()
    floor = 4 * eps(xp.float32)
    for ours, ref in zip(errs64(a, q, r) + errs64(a, U, S, Vh), errs64(a, *np.linalg.qr(a))
                         + errs64(a, *np.linalg.svd(a, full_matrices=False))):
        assert ours <= 10 * max(ref, floor)


@pytest.mark.parametrize("d", [xp.float32, xp.complex64], ids=["float32", "complex64"])
def test_tsqr_fallback_rank_deficient_within_10x_of_lapack(d):
    """The tree of Householder QRs that backs CholeskyQR, on its own: rank-deficient
    tall matrices, batched, a row count that is no multiple of its block."""
    a = np.stack([with_cond(2500, 24, d, 10.0, seed=s, rank=20) for s in range(2)])
    q, r = la._qr_tsqr(xp.asarray(a))
    q, r = to_np(q), to_np(r)
    assert q.shape == (2, 2500, 24) and r.shape == (2, 24, 24)
    eye = np.eye(24)
    for k in range(2):
        qn, rn = np.linalg.qr(a[k])
        assert np.all(np.tril(r[k], -1) == 0)
        assert bound(rel(q[k] @ r[k], a[k]), rel(qn @ rn, a[k]), d)
        assert bound(float(np.abs(ct(q[k]) @ q[k] - eye).max()), float(np.abs(ct(qn) @ qn - eye).max()), d)


def test_blocked_lu_empty_batch_no_rhs_and_nan():
    assert to_np(la.solve(xp.zeros((0, 100, 100)), xp.zeros((0, 100, 2)))).shape == (0, 100, 2)
    assert to_np(la.inv(xp.zeros((0, 100, 100)))).shape == (0, 100, 100)
    assert to_np(la.det(xp.zeros((0, 100, 100)))).shape == (0,)
    a = with_cond(100, 100, xp.float32, 10.0)
    assert to_np(la.solve(xp.asarray(a), xp.zeros((100, 0)))).shape == (100, 0)
    a[5, 5] = np.nan
    assert np.all(np.isnan(to_np(la.solve(xp.asarray(a), xp.ones((100, 1))))))


# ------------------------------------------------------------------ blocked Householder QR

HH_SHAPES = [(33, 33), (100, 100), (130, 130), (300, 200), (100, 130), (64, 65)]
HH_CASES = [(d, m, n, k, mode) for d in REAL_FLOAT for m, n in HH_SHAPES for k in ("cond10", "condhigh", "rankdef")
            for mode in (["reduced", "complete"] if m != n and k == "cond10" else ["reduced"])]


@pytest.mark.parametrize("sg", [False, True], ids=["tree-sums", "subgroup-sums"])
@pytest.mark.parametrize("d,m,n,kind,mode", HH_CASES,
                         ids=[f"{d.name}-{m}x{n}-{k}-{mo}" for d, m, n, k, mo in HH_CASES])
def test_qr_blocked_householder_within_10x_of_lapack(d, m, n, kind, mode, sg, monkeypatch):
    """Sizes below, past and no multiple of the panel, wide and tall, both modes; the
    hh kernel's norms by its tree and by subgroup reductions (where the device has
    subgroups; the same kernel as the tree's elsewhere)."""
    monkeypatch.setattr(blk, "HH_SUBGROUPS", sg)
    kk = min(m, n)
    cond = {"cond10": 10.0, "condhigh": hi_cond(d), "rankdef": 10.0}[kind]
    a = with_cond(max(m, n), kk, d, cond, seed=m + 2 * n, rank=kk - 5 if kind == "rankdef" else None)
    a = a if m >= n else np.ascontiguousarray(a.T)
    q, r = blk.qr_householder(xp.asarray(a)._node, mode)
    q, r = to_np(Array._new(q)), to_np(Array._new(r))
    qn, rn = np.linalg.qr(a, mode=mode)
    assert q.shape == qn.shape and r.shape == rn.shape
    assert np.all(np.tril(r, -1) == 0)
    if kind != "rankdef":
        # LAPACK's signs, except where R_kk is rounding (a rank-deficient R's trailing
        # ones, the smallest of an ill-conditioned one: their signs follow the order of
        # the sums)
        rk = np.diagonal(rn)
        known = np.abs(rk) > 1000 * eps(d) * np.abs(rn).max()
        assert known[:kk // 2].all()
        assert np.array_equal(np.sign(np.diagonal(r))[known], np.sign(rk)[known])
    eye = np.eye(q.shape[1])
    assert bound(rel(q @ r, a), rel(qn @ rn, a), d)
    assert bound(float(np.abs(ct(q) @ q - eye).max()), float(np.abs(ct(qn) @ qn - eye).max()), d)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_qr_square_takes_blocked_householder_batched_complete(d):
    """qr of square and moderately tall real matrices runs the blocked Householder QR
    (dispatches growing as n / panel, no readback), batched, either mode; NaN spreads."""
    a = np.stack([with_cond(200, 200, d, hi_cond(d), seed=s) for s in range(2)])
    for part in la.qr(xp.asarray(a)):  # warm: Q and R read as below (each has its fused map)
        to_np(part)
    debug.reset_counters()
    q, r = la.qr(xp.asarray(a))
    q, r = to_np(q), to_np(r)
    c = debug.counters()
    panels = -(-200 // blk.QR_PANEL)
    assert c["pipelines_compiled"] == 0 and c["readbacks"] == 2
    assert c["dispatches"] <= 16 * panels + 8
    for k in range(2):
        qn, rn = np.linalg.qr(a[k])
        assert bound(rel(q[k] @ r[k], a[k]), rel(qn @ rn, a[k]), d)
        # LAPACK's, signs included, except rows whose R_kk is rounding (high condition)
        noise = np.abs(np.diagonal(rn)) <= 1000 * eps(d) * np.abs(rn).max()
        sg = np.where(noise, np.sign(np.diagonal(r[k])) * np.sign(np.diagonal(rn)), 1)
        assert np.allclose(r[k], sg[:, None] * rn, atol=100 * eps(d) * np.abs(rn).max())
    b = with_cond(300, 200, d, 10.0, seed=3)
    q, r = (to_np(z) for z in la.qr(xp.asarray(b), mode="complete"))
    assert q.shape == (300, 300) and r.shape == (300, 200) and np.all(np.tril(r, -1) == 0)
    qn, rn = np.linalg.qr(b, mode="complete")
    assert bound(rel(q @ r, b), rel(qn @ rn, b), d)
    assert bound(float(np.abs(q.T @ q - np.eye(300)).max()), float(np.abs(qn.T @ qn - np.eye(300)).max()), d)
    b[7, 3] = np.nan
    assert np.isnan(to_np(la.qr(xp.asarray(b))[1])).any()


def test_qr_blocked_householder_panel_split_over_dispatches(monkeypatch):
    """A loop budget small enough that a panel's columns are spread over several
    dispatches (as for tens of thousands of rows under lavapipe's bound): the same
    factorization as LAPACK's."""
    monkeypatch.setattr(budget, "PHASE_LOOPS", 3000)
    monkeypatch.setattr(blk, "QR_TREE_PANELS", False)  # the hh kernel's own split
    m, n = 3000, 40
    threads = blk.kb.panel_threads(xp.asarray(0).device)
    assert sum(blk._hh_cost(m, j, blk.QR_PANEL, threads) for j in range(blk.QR_PANEL)) > 2 * budget.PHASE_LOOPS
    a = with_cond(m, n, xp.float32, 1e3, seed=9)
    q, r = blk.qr_householder(xp.asarray(a)._node, "reduced")
    q, r = to_np(Array._new(q)), to_np(Array._new(r))
    qn, rn = np.linalg.qr(a)
    assert bound(rel(q @ r, a), rel(qn @ rn, a), xp.float32)
    assert bound(float(np.abs(q.T @ q - np.eye(n)).max()), float(np.abs(qn.T @ qn - np.eye(n)).max()), xp.float32)
    assert np.allclose(r, rn, atol=1e-4 * np.abs(rn).max())  # LAPACK's, signs included


TREE_CASES = [(d, shape) for d in REAL_FLOAT for shape in ((1100, 40), (700, 96), (2, 600, 70), (300, 700))]


@pytest.fixture
def tree(monkeypatch):
    """QR panels by the tree of block QRs (off by default: see blk.QR_TREE_PANELS)."""
    monkeypatch.setattr(blk, "QR_TREE_PANELS", True)


@pytest.mark.parametrize("d,shape", TREE_CASES, ids=[f"{d.name}-{'x'.join(map(str, s))}" for d, s in TREE_CASES])
def test_qr_tree_panels_give_lapacks_factors(d, shape, tree, monkeypatch):
    """Panels taller than a tree block (two and three levels on lavapipe, batched,
    wide): dgeqrf's Q and R, signs included, and the same factors as the one-workgroup
    panel kernel within rounding."""
    assert blk.tsqr_block_rows(d, xp.asarray(0).device)[0] < shape[-2]
    a = with_cond(max(shape[-2:]), min(shape[-2:]), d, 1e3, seed=sum(shape))
    a = a if shape[-2] >= shape[-1] else np.ascontiguousarray(a.T)
    if len(shape) == 3:
        a = np.stack([a, a[::-1] * 2])

    def householder():  # qr itself takes CholeskyQR for the tall ones
        return tuple(to_np(Array._new(z)) for z in blk.qr_householder(xp.asarray(a)._node, "reduced"))

    q, r = householder()
    m, n = shape[-2:]
    for z in range(a.shape[0] if a.ndim == 3 else 1):
        az, qz, rz = (a[z], q[z], r[z]) if a.ndim == 3 else (a, q, r)
        qn, rn = np.linalg.qr(az)
        scale = 100 * eps(d) * max(m, n)
        np.testing.assert_allclose(qz, qn, rtol=0, atol=scale)
        np.testing.assert_allclose(rz, rn, rtol=0, atol=scale * float(np.abs(rn).max()))
        assert bound(rel(qz @ rz, az), rel(qn @ rn, az), d)
        assert bound(float(np.abs(qz.T @ qz - np.eye(qz.shape[1])).max()),
                     float(np.abs(qn.T @ qn - np.eye(qn.shape[1])).max()), d)
    monkeypatch.setattr(blk, "QR_TREE_PANELS", False)
    xp.asarray(0).device.runtime.programs.clear()  # recorded with the tree
    q1, r1 = householder()
    assert not np.array_equal(q1, q)  # another path: the same factors to rounding, other bits
    assert np.abs(q1 - q).max() <= 100 * eps(d) * max(m, n)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_qr_tree_panels_reflect_nothing_where_lapack_does_not(d, tree):
    """Columns with nothing below the diagonal (identity, triangular, a panel zero below
    its top square) are not reflected, as in dgeqrf (Q = I, R keeps its signs), and a
    zero pivot above a nonzero column (permutations) takes dlarfg's sign: Q and R exactly
    LAPACK's, panels of several tree blocks."""
    t = npdt(d)
    rng = np.random.default_rng(8)
    n = 300
    blocky = np.zeros((400, n), t)
    blocky[:200, :100] = rng.standard_normal((200, 100))
    blocky[:, 100:] = rng.standard_normal((400, 200))
    perm = np.eye(n, dtype=t)[rng.permutation(n)]
    cases = (np.eye(n, dtype=t), -np.eye(n, dtype=t), np.eye(n, dtype=t)[::-1].copy(), perm,
             np.triu(rng.standard_normal((n, n))).astype(t), blocky)
    for a in cases:
        q, r = (to_np(z) for z in la.qr(xp.asarray(a)))
        q0, r0 = np.linalg.qr(a)
        big = float(np.abs(r0).max())
        np.testing.assert_allclose(q, q0, rtol=0, atol=1000 * eps(d))
        np.testing.assert_allclose(r, r0, rtol=0, atol=1000 * eps(d) * big)
        if a is not blocky:
            assert np.array_equal(np.sign(np.diagonal(r)), np.sign(np.diagonal(r0)))
    for bad in (np.nan, np.inf):  # a non-finite entry below the top square spreads into R
        b = blocky.copy()
        b[350, 3] = bad
        assert not np.isfinite(to_np(la.qr(xp.asarray(b))[1])).all()


@pytest.mark.parametrize("panels", ["hh", "hh-subgroups", "tree"])
@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_qr_householder_near_the_bottom_of_the_range(d, panels, monkeypatch):
    """Columns whose largest entry lies far down the exponent range are scaled up by a
    power of two before 1 / max is taken (a subnormal max made it inf: float32 qr of a
    matrix scaled by 2^-120 was NaN from column 60 on): entries bounded away from zero
    at 2^-101 (float32) or 2^-1010 (float64), LAPACK's bounds; float32 graded down to
    2^-134 and float64 into its subnormals, finite. Both panel kernels (the tree's
    blocks scale as hh does; 150 rows are two blocks wherever h < 150), hh's norms by
    subgroup reductions too where the device has them."""
    monkeypatch.setattr(blk, "QR_TREE_PANELS", panels == "tree")
    monkeypatch.setattr(blk, "HH_SUBGROUPS", panels == "hh-subgroups")
    rng = np.random.default_rng(41)
    e = -101 if d is xp.float32 else -1010
    a = (rng.choice([-1.0, 1.0], (150, 150)) * rng.uniform(0.5, 1.0, (150, 150)) * 2.0 ** e).astype(npdt(d))
    q, r = (to_np(z).astype(np.float64) for z in la.qr(xp.asarray(a)))
    qn, rn = np.linalg.qr(a)
    a64, r64, rn64 = (np.ldexp(z.astype(np.float64), -e) for z in (a, r, rn))
    assert np.isfinite(q).all() and np.isfinite(r).all()
    assert np.array_equal(np.sign(np.diagonal(r)), np.sign(np.diagonal(rn)))
    assert bound(rel(q @ r64, a64), rel(qn.astype(np.float64) @ rn64, a64), d)
    assert bound(float(np.abs(q.T @ q - np.eye(150)).max()), float(np.abs(qn.T @ qn - np.eye(150)).max()), d)
    u, _ = np.linalg.qr(rng.standard_normal((150, 150)))
    g = (u * np.geomspace(1, 1e-4, 150)) @ u.T * 2.0 ** (-120 if d is xp.float32 else -1030)
    q, r = (to_np(z) for z in la.qr(xp.asarray(g.astype(npdt(d)))))
    assert np.isfinite(q).all() and np.isfinite(r).all()
