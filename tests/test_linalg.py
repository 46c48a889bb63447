"""The linalg extension against NumPy: random well-conditioned, batched matrices of every
floating dtype of this device (factorizations checked by their defining identities where
the factors are not unique), integer dtypes where the standard allows them, empty and
zero-size cases, namedtuple results and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import wgarray as xp
from wgarray import linalg as la
from wgarray._kernels import budget
from conftest import COMPLEX, INTEGER, NUMERIC, REAL_FLOAT, ids, npdt, to_np

FLOAT = REAL_FLOAT + COMPLEX


def rand(shape, d, seed=0):
    rng = np.random.default_rng(seed)
    t = npdt(d)
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -5, 6, shape).astype(t)
    x = rng.standard_normal(shape)
    if d.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(t)


def well_conditioned(shape, d, seed=0):
    n = shape[-1]
    return (rand(shape, d, seed) + 3 * n ** 0.5 * np.eye(n)).astype(npdt(d))


def hermitian_pd(shape, d, seed=0):
    a = rand(shape, d, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(npdt(d))


def tol(d, scale=1.0):
    return (2e-4 if d.name in ("float32", "complex64") else 1e-10) * scale


def close(got, want, d, scale=1.0):
    got = to_np(got) if isinstance(got, xp.Array) else got
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    t = tol(d, scale) * max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=tol(d, scale), atol=t)


def herm(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------- LU family

@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_solve_inv_det_slogdet(d):
    a = well_conditioned((2, 3, 6, 6), d, 1)
    b = rand((3, 6, 2), d, 2)
    A = xp.asarray(a)
    x = la.solve(A, xp.asarray(b))
    assert x.dtype == d and x.shape == (2, 3, 6, 2)
    close(x, np.linalg.solve(a, np.broadcast_to(b, (2, 3, 6, 2))), d)
    v = rand((6,), d, 3)
    close(la.solve(A, xp.asarray(v)), np.linalg.solve(a, v[:, None])[..., 0], d)
    close(la.inv(A), np.linalg.inv(a), d)
    close(la.det(A), np.linalg.det(a), d, 10)
    res = la.slogdet(A)
    assert isinstance(res, la.SlogdetResult)
    s0, l0 = np.linalg.slogdet(a)
    close(res.sign, s0, d)
    assert res.logabsdet.dtype == xp.float32 if d.name in ("float32", "complex64") else xp.float64
    close(res.logabsdet, l0, d)


def test_det_singular_and_pivoting():
    d = FLOAT[0]
    a = np.array([[0.0, 1.0], [1.0, 0.0]], npdt(d))  # needs a row swap
    close(la.det(xp.asarray(a)), -1.0, d)
    close(la.solve(xp.asarray(a), xp.asarray(np.array([2.0, 3.0], npdt(d)))), [3.0, 2.0], d)
    s = np.array([[1.0, 2.0], [2.0, 4.0]], npdt(d))
    close(la.det(xp.asarray(s)), 0.0, d)
    sign, logabs = la.slogdet(xp.asarray(s))
    assert float(sign) == 0.0 and float(logabs) == -math.inf


def test_solve_errors():
    with pytest.raises(ValueError, match="solve"):
        la.solve(xp.ones((3, 3)), xp.ones((4, 2)))
    with pytest.raises(ValueError, match="solve"):
        la.solve(xp.ones((3, 4)), xp.ones((3, 2)))
    with pytest.raises(TypeError, match="inv"):
        la.inv(xp.ones((2, 2), dtype=xp.int32))


# ---------------------------------------------------------------- Cholesky, QR

@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_cholesky_lower_and_upper(d):
    h = hermitian_pd((3, 5, 5), d, 1)
    L = np.linalg.cholesky(h)
    close(la.cholesky(xp.asarray(h)), L, d)
    close(la.cholesky(xp.asarray(h), upper=True), herm(L), d)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
@pytest.mark.parametrize("shape", [(2, 7, 4), (4, 6), (5, 5)])
def test_qr_modes(d, shape):
    a = rand(shape, d, 1)
    m, n = shape[-2:]
    for mode in ("reduced", "complete"):
        res = la.qr(xp.asarray(a), mode=mode)
        assert isinstance(res, la.QRResult)
        q, r = to_np(res.Q), to_np(res.R)
        q0, r0 = np.linalg.qr(a, mode=mode)
        assert q.shape == q0.shape and r.shape == r0.shape
        close(q @ r, a, d, 10)
        close(herm(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), d, 10)
        assert np.all(np.tril(r, -1) == 0)
        if d.kind == "f":  # LAPACK's signs: NumPy's Q and R themselves
            close(q, q0, d, 10)
            close(r, r0, d, 10)
        else:  # a real non-negative diagonal
            diag = np.diagonal(r, axis1=-2, axis2=-1)
            assert np.all(diag.real >= 0) and np.all(np.abs(diag.imag) <= tol(d, 10))
    with pytest.raises(ValueError, match="qr"):
        la.qr(xp.asarray(a), mode="r")


# ---------------------------------------------------------------- eigh, svd

@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eigh_and_eigvalsh(d):
    h = (hermitian_pd((2, 6, 6), d, 1) - 8 * np.eye(6)).astype(npdt(d))  # mixed signs
    res = la.eigh(xp.asarray(h))
    assert isinstance(res, la.EighResult)
    w, v = to_np(res.eigenvalues), to_np(res.eigenvectors)
    w0 = np.linalg.eigvalsh(h)
    close(w, w0, d, 10)
    close(h @ v, v * w[..., None, :], d, 10)
    close(herm(v) @ v, np.broadcast_to(np.eye(6), (2, 6, 6)), d, 10)
    close(la.eigvalsh(xp.asarray(h)), w0, d, 10)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
@pytest.mark.parametrize("shape", [(2, 6, 4), (4, 6), (5, 5)])
def test_svd_and_svdvals(d, shape):
    a = rand(shape, d, 1)
    s0 = np.linalg.svd(a, compute_uv=False)
    close(la.svdvals(xp.asarray(a)), s0, d, 10)
    k = min(shape[-2:])
    for full in (True, False):
        res = la.svd(xp.asarray(a), full_matrices=full)
        assert isinstance(res, la.SVDResult)
        u, s, vh = to_np(res.U), to_np(res.S), to_np(res.Vh)
        u0, _, vh0 = np.linalg.svd(a, full_matrices=full)
        assert u.shape == u0.shape and vh.shape == vh0.shape and s.shape == s0.shape
        close(s, s0, d, 10)
        close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, d, 10)
        close(herm(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), d, 10)
        close(vh @ herm(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2), d, 10)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_pinv_and_matrix_rank(d):
    a = rand((2, 5, 3), d, 1)
    close(la.pinv(xp.asarray(a)), np.linalg.pinv(a), d, 10)
    low = (rand((5, 2), d, 2) @ rand((2, 4), d, 3)).astype(npdt(d))
    r = la.matrix_rank(xp.asarray(low))
    assert r.dtype == xp.int64 and int(r) == 2
    assert to_np(la.matrix_rank(xp.asarray(a))).tolist() == [3, 3]
    assert int(la.matrix_rank(xp.asarray(low), rtol=0.0)) >= 2


# ---------------------------------------------------------------- sizes past one dispatch
# lavapipe (the CPU Vulkan driver of CI) ends every loop of an invocation once 65535 loop
# iterations have run, silently: the Jacobi kernels gave wrong answers from n = 64, LU
# from n ~ 150 (inv) / 220 (solve, det), QR from n ~ 130, Cholesky from n ~ 260. The
# kernels now run in bounded phases over several dispatches.

def _orth(q, d, scale):
    k = q.shape[-1]
    close(herm(q) @ q, np.eye(k), d, scale)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
@pytest.mark.parametrize("n", [64, 100, 130])
def test_large_jacobi_qr_lu_cholesky(d, n):
    t = npdt(d)
    a = rand((n, n), d, n)
    A = xp.asarray(a)
    sc = 10
    s0 = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    close(la.svdvals(A), s0, d, sc)
    u, s, vh = (to_np(r) for r in la.svd(A))
    close(s, s0, d, sc)
    close((u * s[None, :]) @ vh, a, d, sc)
    _orth(u, d, sc)
    _orth(herm(vh), d, sc)
    h = (a + a.T).astype(t)
    w0 = np.linalg.eigvalsh(h.astype(np.float64))
    close(la.eigvalsh(xp.asarray(h)), w0, d, sc)
    w, v = (to_np(r) for r in la.eigh(xp.asarray(h)))
    close(w, w0, d, sc)
    close(h @ v, v * w[None, :], d, sc * 10)
    _orth(v, d, sc)
    wc = well_conditioned((n, n), d, n + 1)
    close(la.pinv(xp.asarray(wc)), np.linalg.pinv(wc.astype(np.float64)), d, sc)
    low = (rand((n, n // 2), d, 2) @ rand((n // 2, n), d, 3)).astype(t)
    assert int(la.matrix_rank(xp.asarray(low))) == n // 2
    assert int(la.matrix_rank(xp.asarray(wc))) == n
    _check_lu_qr_chol(wc, d)
    q, r = (to_np(x) for x in la.qr(A))
    close(q @ r, a, d, sc)
    _orth(q, d, sc)
    assert np.all(np.tril(r, -1) == 0)
    # square real: LAPACK's signs
    assert np.array_equal(np.sign(np.diagonal(r)), np.sign(np.diagonal(np.linalg.qr(a)[1])))


def _check_lu_qr_chol(wc, d):
    n = wc.shape[-1]
    t = npdt(d)
    W = xp.asarray(wc)
    rhs = rand((n, 3), d, 4)
    close(la.solve(W, xp.asarray(rhs)), np.linalg.solve(wc, rhs), d, 10)
    close(la.inv(W), np.linalg.inv(wc), d, 10)
    sd = (wc / (3 * n ** 0.5)).astype(t)  # det of moderate size
    close(la.det(xp.asarray(sd)), np.linalg.det(sd.astype(np.float64)), d, 10)
    sign, logabs = la.slogdet(W)
    s0, l0 = np.linalg.slogdet(wc.astype(np.float64))
    assert float(sign) == s0
    close(logabs, l0, d, 10)
    hp = hermitian_pd((n, n), d, 5)
    close(la.cholesky(xp.asarray(hp)), np.linalg.cholesky(hp.astype(np.float64)), d, 10)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_large_lu_and_cholesky(d):
    """n = 264: LU and Cholesky themselves run past one dispatch's loop budget."""
    _check_lu_qr_chol(well_conditioned((264, 264), d, 7), d)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_large_complex_svd(d):
    """A complex 70 x 40 matrix (embedded as 140 x 80 real): Jacobi rounds split within a sweep."""
    a = rand((70, 40), d, 9)
    u, s, vh = (to_np(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    close(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), d, 10)
    close((u * s[None, :]) @ vh, a, d, 10)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_qr_huge_and_tiny_columns(d):
    """The Householder norms are scaled: no overflow of the squares past 1e19 (float32),
    no underflow of tiny ones (the conformance suite's NaN R for a 1 x 1 complex64 1e30)."""
    t = npdt(d)
    big = 1e30 if d.name in ("float32", "complex64") else 1e200
    for v in (big, 1 / big):
        a = np.array([[v, 1.0], [v, 2.0]], t)
        if d.kind == "c":
            a = (a * (1 + 1j) / np.sqrt(2)).astype(t)
        q, r = (to_np(x) for x in la.qr(xp.asarray(a)))
        assert np.all(np.isfinite(q)) and np.all(np.isfinite(r)), (q, r)
        close(q @ r, a, d, 10)
        close(abs(r[0, 0]), np.sqrt(2) * v, d, 10)
        q1, r1 = (to_np(x) for x in la.qr(xp.asarray(a[:1, :1])))
        close(r1, np.abs(a[:1, :1]), d)
        close(q1 * r1, a[:1, :1], d)


def test_stacks_match_single_matrices_with_nan():
    """A NaN matrix in a batch does not touch its neighbours, and each matrix of a batch
    gets bit-identical results to the matrix alone (one workgroup per matrix)."""
    d = FLOAT[0]
    a = rand((3, 5, 5), d, 12)
    a[1, 2, 3] = np.nan
    A = xp.asarray(a)
    for f in (lambda x: la.qr(x).Q, lambda x: la.qr(x).R, la.svdvals, la.inv, la.det):
        batched = to_np(f(A))
        for i in range(3):
            np.testing.assert_array_equal(to_np(f(xp.asarray(a[i]))), batched[i])
        assert np.all(np.isfinite(batched[0])) and np.all(np.isfinite(batched[2]))
    r = to_np(la.qr(A).R)
    assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("shape, mode", [((6, 6), "reduced"), ((9, 5), "complete"), ((80, 80), "reduced"),
                                         ((2000, 16), "reduced"), ((5, 9), "reduced")])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_qr_spreads_a_non_finite_entry_as_lapack_does(shape, mode, bad):
    """Every path (one workgroup, blocked, tall, wide): Q's columns and R's upper part
    from the first column with a NaN or an infinity on are NaN, as LAPACK's reflections
    make them (the kernels had passed over it: Q came out finite); the columns before it
    keep their values, R's zeros below the diagonal stay."""
    d = FLOAT[0]
    a = rand(shape, d, 3)
    a[shape[0] // 2, 1] = bad
    q, r = (to_np(t) for t in la.qr(xp.asarray(a), mode=mode))
    assert np.all(np.isnan(q[:, 1:]))
    assert np.all(np.isnan(np.triu(r)[:, 1:][np.triu(np.ones(r.shape, bool))[:, 1:]]))
    assert np.all(np.tril(r, -1) == 0)
    if shape == (80, 80):
        # the blocked kernel: the panel's block reflector carries the NaN back into the
        # panel's earlier columns too (more NaN than LAPACK's, none fewer)
        return
    # column 0 as it is without the bad entry: x_0 / |x_0| (the sign is each path's own)
    x0 = a[:, 0].astype(np.float64)
    sign = np.sign(r[0, 0])
    np.testing.assert_allclose(q[:, 0], sign * x0 / np.linalg.norm(x0), rtol=0, atol=8 * np.finfo(a.dtype).eps)
    np.testing.assert_allclose(r[0, 0], sign * np.linalg.norm(x0), rtol=8 * np.finfo(a.dtype).eps)
    if mode == "reduced":
        with np.errstate(all="ignore"):
            want = np.linalg.qr(a)[0]
        np.testing.assert_array_equal(np.isnan(q), np.isnan(want))


@pytest.mark.parametrize("shape", [(6, 6), (80, 80), (2000, 16), (7, 30)])
def test_svd_and_pinv_of_a_matrix_with_nan_are_nan(shape):
    """A NaN among the singular values makes U and Vh NaN too (the rotations passed over
    it and left them finite, and pinv, whose cut-off dropped the NaN values, finite);
    a batch neighbour keeps its values."""
    d = FLOAT[0]
    a = rand((2,) + shape, d, 4)
    a[1, 3, 2] = np.nan
    u, s, vh = (to_np(t) for t in la.svd(xp.asarray(a), full_matrices=False))
    for t in (u, s, vh):
        assert np.all(np.isnan(t[1])) and np.all(np.isfinite(t[0]))
    close(s[0], np.linalg.svd(a[0].astype(np.float64), compute_uv=False), d)
    p = to_np(la.pinv(xp.asarray(a)))
    assert np.all(np.isnan(p[1]))
    close(p[0], np.linalg.pinv(a[0].astype(np.float64)), d, 100)


# ---------------------------------------------------------------- norms, trace, diagonal

@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_vector_norm(d):
    a = rand((3, 4, 5), d, 1)
    A = xp.asarray(a)
    for o in (2, 1, 0, math.inf, -math.inf, 3, -1.5):
        got = la.vector_norm(A, axis=-1, ord=o)
        assert got.dtype == (xp.float32 if d.name in ("float32", "complex64") else xp.float64)
        close(got, np.linalg.norm(a, ord=o, axis=-1), d)
    close(la.vector_norm(A), np.linalg.norm(a.ravel()), d)
    close(la.vector_norm(A, axis=(0, 2), keepdims=True),
          np.sqrt(np.sum(np.abs(a) ** 2, axis=(0, 2), keepdims=True)), d)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_matrix_norm(d):
    a = rand((2, 4, 3), d, 1)
    for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        close(la.matrix_norm(xp.asarray(a), ord=o), np.linalg.norm(a, ord=o, axis=(-2, -1)), d, 10)
    assert la.matrix_norm(xp.asarray(a), keepdims=True).shape == (2, 1, 1)


@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_trace_and_diagonal(d):
    a = rand((2, 4, 5), d, 1)
    A = xp.asarray(a)
    for k in (0, 1, -2, 7):
        np.testing.assert_array_equal(to_np(la.diagonal(A, offset=k)), np.diagonal(a, k, -2, -1))
    t = la.trace(A, offset=1)
    want = np.trace(a, 1, -2, -1)
    if d in INTEGER:
        assert t.dtype == (xp.int64 if d.kind == "i" else xp.uint64)
        np.testing.assert_array_equal(to_np(t), want)
    else:
        assert t.dtype == d
        close(t, want, d)


# ---------------------------------------------------------------- compositions

@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_outer_cross_matrix_power(d):
    x, y = rand((4,), d, 1), rand((3,), d, 2)
    got = la.outer(xp.asarray(x), xp.asarray(y))
    assert got.dtype == d
    np.testing.assert_allclose(to_np(got), np.outer(x, y), rtol=1e-5)
    a, b = rand((4, 3), d, 3), rand((3,), d, 4)
    np.testing.assert_allclose(to_np(la.cross(xp.asarray(a), xp.asarray(b))), np.cross(a, b), rtol=1e-5)
    np.testing.assert_allclose(to_np(la.cross(xp.asarray(a.T.copy()), xp.asarray(b[:, None]), axis=0)),
                               np.cross(a.T, b[:, None], axis=0), rtol=1e-5)
    m = rand((2, 3, 3), d, 5)
    np.testing.assert_allclose(to_np(la.matrix_power(xp.asarray(m), 3)), np.linalg.matrix_power(m, 3), rtol=1e-4)
    np.testing.assert_array_equal(to_np(la.matrix_power(xp.asarray(m), 0)), np.broadcast_to(np.eye(3, dtype=m.dtype), m.shape))


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_matrix_power_negative(d):
    m = well_conditioned((3, 3), d, 1)
    close(la.matrix_power(xp.asarray(m), -2), np.linalg.matrix_power(m, -2), d, 10)


def test_namespace_functions_are_shared():
    assert la.matmul is xp.matmul and la.tensordot is xp.tensordot
    assert la.vecdot is xp.vecdot and la.matrix_transpose is xp.matrix_transpose
    assert set(la.__all__) >= {"cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
                                "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
                                "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
                                "vector_norm"}


def test_empty_batches():
    d = FLOAT[0]
    e = xp.asarray(np.zeros((0, 3, 3), npdt(d)))
    assert la.inv(e).shape == (0, 3, 3)
    assert la.det(e).shape == (0,)
    assert la.svdvals(e).shape == (0, 3)
    assert la.cholesky(e).shape == (0, 3, 3)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="cholesky"):
        la.cholesky(xp.ones((2, 3)))
    with pytest.raises(ValueError, match="cross"):
        la.cross(xp.ones((4,)), xp.ones((4,)))
    with pytest.raises(ValueError, match="outer"):
        la.outer(xp.ones((2, 2)), xp.ones((2,)))
    with pytest.raises(ValueError, match="matrix_norm"):
        la.matrix_norm(xp.ones((2, 2)), ord=3)
    with pytest.raises(ValueError, match="vector_norm"):
        la.vector_norm(xp.ones((2, 2)), axis=2)


# ---------------------------------------------------------------- eig, eigvals (general matrices)

def eig_close(w, w0, d, scale=10.0, a=None):
    """Eigenvalues of each matrix as multisets: every reference value matched to the
    nearest not yet matched computed one (the order is unspecified); the tolerance is
    relative to the largest entry of the matrix ``a`` (else of the eigenvalues)."""
    w = np.asarray(w).reshape(-1, w0.shape[-1])
    w0 = np.asarray(w0).reshape(w.shape)
    mags = np.abs(w0 if a is None else a).reshape(w.shape[0], -1).max(axis=1, initial=0)
    for got, want, mag in zip(w, w0, mags):
        left = list(got)
        big = float(mag) if mag > 0 else 1.0
        for z in sorted(want, key=lambda z: (z.real, z.imag)):
            i = int(np.argmin([abs(z - u) for u in left]))
            assert abs(z - left[i]) <= tol(d, scale) * big, (z, left[i], want, got)
            left.pop(i)


def eig_check(a, d, scale=10.0):
    """eig and eigvals of ``a`` (batch..., n, n) against NumPy: dtypes, shapes, the
    eigenvalue multisets, A v = lambda v and unit eigenvector norms."""
    cd = xp.complex64 if d.name in ("float32", "complex64") else xp.complex128
    A = xp.asarray(a)
    res = la.eig(A)
    assert isinstance(res, la.EigResult)
    assert res.eigenvalues.dtype == cd and res.eigenvectors.dtype == cd
    assert res.eigenvalues.shape == a.shape[:-1] and res.eigenvectors.shape == a.shape
    vals = la.eigvals(A)
    assert vals.dtype == cd and vals.shape == a.shape[:-1]
    if a.size == 0:
        return
    w, v = to_np(res.eigenvalues), to_np(res.eigenvectors)
    w0 = np.linalg.eigvals(a.astype(np.complex128))
    eig_close(w, w0, d, scale, a)
    eig_close(to_np(vals), w0, d, scale, a)
    mag = np.abs(a).reshape(w.shape[:-1] + (-1,)).max(axis=-1)
    resid = np.abs(a.astype(np.complex128) @ v - v * w[..., None, :]).max(axis=(-2, -1))
    assert np.all(resid <= tol(d, scale) * np.where(mag > 0, mag, 1.0) * a.shape[-1]), resid
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol(d, 10))


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16])
def test_eig_random_batched(d, n):
    eig_check(rand((3, n, n), d, n), d)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_eig_single_precision_as_accurate_as_lapack(dtype):
    """float32 / complex64 eig where the device has float64: computed there and rounded
    once, values within 4x of LAPACK's own single-precision error and A V = V W as
    well (the kernel in float32 was 6e-6 of ||A|| off at order 150, LAPACK 4e-8).
    Without float64 the float32 kernel's own accuracy: probed and bounded at 2e-5."""
    rng = np.random.default_rng(11)
    n = 150
    parts = rng.standard_normal((2, n, n))
    a = (parts[0] + 1j * parts[1] if dtype == "complex64" else parts[0]).astype(dtype)
    ref = np.linalg.eigvals(a.astype(np.complex128))

    def dist(w):  # the farthest value of either spectrum from the other, against max |w|
        d = np.abs(w[:, None] - ref[None, :])
        return max(d.min(axis=0).max(), d.min(axis=1).max()) / np.abs(ref).max()

    w, v = (to_np(t) for t in la.eig(xp.asarray(a)))
    a64 = a.astype(np.complex128)
    resid = np.linalg.norm(a64 @ v - v * w) / np.linalg.norm(a64)
    lw, lv = np.linalg.eig(a)
    lapack = dist(lw), np.linalg.norm(a64 @ lv - lv * lw) / np.linalg.norm(a64)
    if xp.__array_namespace_info__().dtypes().get("float64"):
        assert dist(w) <= 4 * lapack[0] and resid <= 4 * lapack[1], (dist(w), resid, lapack)
        assert dist(to_np(la.eigvals(xp.asarray(a)))) <= 4 * lapack[0]
    else:
        assert dist(w) <= 2e-5 and resid <= 2e-5, (dist(w), resid, lapack)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eig_larger(d):
    """n past the 64 threads of the workgroup, and past what one dispatch may iterate
    on lavapipe (the kernel's work is split over dispatches)."""
    eig_check(rand((2, 70, 70), d, 70), d, 20)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eig_nested_batch_and_strided_input(d):
    a = rand((2, 3, 6, 6), d, 7)
    eig_check(a, d)
    t = np.swapaxes(a, -1, -2)
    res = la.eig(xp.matrix_transpose(xp.asarray(a)))  # a non-contiguous view
    eig_close(to_np(res.eigenvalues), np.linalg.eigvals(t.astype(np.complex128)), d, 10, t)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eig_conjugate_pairs_and_structured(d):
    t = npdt(d)
    cases = [
        np.array([[0.0, -1.0], [1.0, 0.0]]),                    # +-i
        np.array([[1.0, -2.0], [3.0, 1.0]]),                    # 1 +- i sqrt(6)
        np.roll(np.eye(3), 1, axis=0),                          # cube roots of unity
        np.roll(np.eye(6), 1, axis=0),                          # sixth roots of unity
        np.array([[0, 0, 0, -1.0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),  # x^4 + 1
        np.diag([3.0, -1.0, 2.0, 0.5, 2.0]),                    # diagonal, a repeated value
        np.triu(np.arange(1.0, 26.0).reshape(5, 5)),           # upper triangular
        np.tril(np.arange(1.0, 26.0).reshape(5, 5)),           # lower triangular
        np.zeros((3, 3)),
        np.eye(4),
        np.ones((5, 5)),                                         # rank one
    ]
    for a in cases:
        eig_check(a.astype(t), d)
    # a diagonal matrix comes back exactly, with unit-vector eigenvectors
    res = la.eig(xp.asarray(np.diag([3.0, -1.0, 2.0]).astype(t)))
    np.testing.assert_array_equal(to_np(res.eigenvalues), np.array([3, -1, 2], np.complex128))
    np.testing.assert_array_equal(np.abs(to_np(res.eigenvectors)), np.eye(3))


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eig_defective_and_scaled(d):
    t = npdt(d)
    jordan = (2 * np.eye(4) + np.eye(4, k=1)).astype(t)  # one eigenvector, eigenvalue 2 four times
    res = la.eig(xp.asarray(jordan))
    w, v = to_np(res.eigenvalues), to_np(res.eigenvectors)
    np.testing.assert_allclose(w, 2.0, atol=tol(d, 10))
    assert np.all(np.isfinite(v))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, atol=tol(d, 10))
    np.testing.assert_allclose(jordan @ v, v * w, atol=tol(d, 10))
    for s in (1e-30, 1e30):  # the kernel scales by a power of two: no under- or overflow
        a = (rand((2, 5, 5), d, 3) * s).astype(t)
        eig_check(a, d)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_eig_empty_and_errors(d):
    t = npdt(d)
    eig_check(np.zeros((0, 3, 3), t), d)
    eig_check(np.zeros((2, 0, 0), t), d)
    with pytest.raises(ValueError, match="eig"):
        la.eig(xp.asarray(np.zeros((2, 3), t)))
    with pytest.raises(ValueError, match="eigvals"):
        la.eigvals(xp.asarray(np.zeros((3,), t)))
    with pytest.raises(TypeError, match="eig"):
        la.eig(xp.ones((2, 2), dtype=xp.int32))


def test_eig_stacks_match_single_matrices():
    """Each matrix of a batch gets bit-identical results to the matrix alone (one
    workgroup per matrix, no cross-matrix work)."""
    d = FLOAT[0]
    a = rand((4, 7, 7), d, 11)
    res = la.eig(xp.asarray(a))
    w, v = to_np(res.eigenvalues), to_np(res.eigenvectors)
    for i in range(4):
        r1 = la.eig(xp.asarray(a[i]))
        np.testing.assert_array_equal(to_np(r1.eigenvalues), w[i])
        np.testing.assert_array_equal(to_np(r1.eigenvectors), v[i])


# ---------------------------------------------------------------- tall matrices, loop bounds

# lavapipe ends every loop of an invocation past 65535 iterations, silently: a kernel
# that loops over all rows of a column in one invocation goes wrong past that many rows.

def _check_tall(a, d, sc=10):
    A = xp.asarray(a)
    m, n = a.shape
    a64 = a.astype(np.complex128 if d.kind == "c" else np.float64)
    s0 = np.linalg.svd(a64, compute_uv=False)
    close(la.svdvals(A), s0, d, sc)
    u, s, vh = (to_np(r) for r in la.svd(A, full_matrices=False))
    assert u.shape == (m, n) and vh.shape == (n, n)
    close(s, s0, d, sc)
    close((u * s[None, :]) @ vh, a, d, sc)
    _orth(u, d, sc)
    q, r = (to_np(x) for x in la.qr(A))
    close(q @ r, a, d, sc)
    _orth(q, d, sc)
    assert np.all(np.tril(r, -1) == 0)
    if d.kind == "f" and not la._is_tall(a.shape):  # the Householder kernels: LAPACK's signs
        assert np.array_equal(np.sign(np.diagonal(r)), np.sign(np.diagonal(np.linalg.qr(a64)[1])))
    else:  # the tall path and complex input: a real non-negative diagonal
        assert np.all(np.diagonal(r).real >= 0)
    close(la.pinv(A), np.linalg.pinv(a64), d, sc * 10)
    assert int(la.matrix_rank(A)) == n
    close(la.matrix_norm(A, ord=2), s0[0], d, sc)
    close(la.matrix_norm(A, ord="nuc"), s0.sum(), d, sc)
    g = xp.matmul(xp.conj(A.mT) if d.kind == "c" else A.mT, A)
    w0 = np.linalg.eigvalsh(herm(a64) @ a64)
    w, v = (to_np(x) for x in la.eigh(g))
    close(w, w0, d, sc * 10)
    close(to_np(g) @ v, v * w[None, :], d, sc * 100)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
@pytest.mark.parametrize("shape", [(70000, 3), (34000, 8)])
def test_tall_svd_qr_pinv_rank(d, shape):
    """Past 65535 rows (and past the ~33000 rows where a Householder or Jacobi column
    pass in one invocation ran out of lavapipe's loop budget): QR row-blocked, Jacobi on
    the n x n R of A = QR."""
    m, n = shape
    rng = np.random.default_rng(m + n)
    a = (rng.standard_normal((m, n)) * np.linspace(1, 3, n) + 0.5).astype(npdt(d))
    _check_tall(a, d)
    low = (rng.standard_normal((m, 2)) @ rng.standard_normal((2, n))).astype(npdt(d))
    assert int(la.matrix_rank(xp.asarray(low))) == 2


def test_tall_complex_qr_and_svdvals():
    d = COMPLEX[0]
    a = rand((33000, 2), d, 5)
    q, r = (to_np(x) for x in la.qr(xp.asarray(a)))
    close(q @ r, a, d, 10)
    _orth(q, d, 10)
    close(la.svdvals(xp.asarray(a)), np.linalg.svd(a.astype(np.complex128), compute_uv=False), d, 10)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_small_loop_budget_paths(d, monkeypatch):
    """With a tiny loop budget the row-blocked QR (several row and column blocks per
    column) and the Jacobi rounds split over column pairs run on small matrices."""
    monkeypatch.setattr(budget, "PHASE_LOOPS", 40)
    for shape in [(2, 300, 5), (9, 9), (5, 12)]:
        a = rand(shape, d, 3)
        A = xp.asarray(a)
        s0 = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
        u, s, vh = (to_np(r) for r in la.svd(A, full_matrices=False))
        close(s, s0, d, 10)
        close((u * s[..., None, :]) @ vh, a, d, 10)
        for mode in ("reduced", "complete"):
            q, r = (to_np(x) for x in la.qr(A, mode=mode))
            close(q @ r, a, d, 10)
    h = hermitian_pd((7, 7), d, 4)
    w0 = np.linalg.eigvalsh(h.astype(np.complex128))
    close(la.eigvalsh(xp.asarray(h)), w0, d, 10)


@pytest.mark.parametrize("d", FLOAT, ids=ids(FLOAT))
def test_jacobi_huge_and_tiny_entries(d):
    """Jacobi scales by a power of two first: no overflow of the squares of float32
    entries past 1e19, no underflow of tiny ones."""
    big = 1e25 if d.name in ("float32", "complex64") else 1e200
    for v in (big, 1 / big):
        for shape in [(4, 3), (3, 3)]:
            a = (rand(shape, d, 6) * v).astype(npdt(d))
            A = xp.asarray(a)
            s0 = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
            s = to_np(la.svdvals(A))
            assert np.all(np.isfinite(s)), s
            close(s, s0, d, 10)
            u, s, vh = (to_np(r) for r in la.svd(A, full_matrices=False))
            close((u * s[None, :]) @ vh, a, d, 10)
        h = (hermitian_pd((3, 3), d, 7) * v).astype(npdt(d))
        w = to_np(la.eigvalsh(xp.asarray(h)))
        assert np.all(np.isfinite(w)), w
        close(w, np.linalg.eigvalsh(h.astype(np.complex128)), d, 10)


class _LoopBound:
    """A device stand-in that reports its bound on loop iterations per invocation."""

    def __init__(self, limit):
        self.max_loop_iterations = limit


@pytest.mark.parametrize("limit, phase, bound", [(None, 40000, None), (65535, 40000, 40000), (1000, 1000, 1000)])
def test_loop_budget_read_from_the_device(limit, phase, bound):
    """The phased kernels plan PHASE_LOOPS iterations per dispatch, less where the
    device bounds loops tighter; matmul's K split and the eigen solvers split only
    where the device bounds loops at all."""
    dev = _LoopBound(limit)
    assert budget.phase_budget(dev) == phase
    assert budget.loop_bound(dev) == bound
