"""What scikit-learn's and SciPy's own array-API suites asked of wgarray (docs/clients.md),
each against NumPy: the conventions and interop their code relies on."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray import linalg as la
from conftest import REAL_FLOAT, ids, npdt, to_np


def test_numpy_asarray_is_writable_and_owned():
    # scikit-learn's chi2_kernel hands numpy.asarray(x) to Cython that wants a writable
    # buffer ("buffer source array is read-only" before)
    h = np.array([[1.0, -0.0, np.inf], [np.nan, 2.5, -3.0]], np.float32)
    x = xp.asarray(h)
    for got in (np.asarray(x), np.asarray(x, dtype=np.float64), np.array(x), x.__array__()):
        assert got.flags.writeable and got.flags.owndata
        np.testing.assert_array_equal(got, h)
        got[...] = 7
    np.testing.assert_array_equal(np.asarray(x), h)  # the array and its host mirror unchanged
    np.testing.assert_array_equal(to_np(x + 0), h)
    v = x[:, 1:]  # a view's export too
    got = np.asarray(v)
    got[...] = 0
    np.testing.assert_array_equal(np.asarray(v), h[:, 1:])
    z = np.asarray(xp.asarray(2.5))  # 0-d
    assert z.shape == () and z.flags.writeable and z == 2.5


def test_numpy_asarray_after_a_write_sees_the_write():
    x = xp.asarray(np.arange(6.0, dtype=np.float32))
    first = np.asarray(x)
    x[2] = -1.0
    want = np.arange(6.0, dtype=np.float32)
    np.testing.assert_array_equal(first, want)  # a copy: not changed by the later write
    want[2] = -1.0
    np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
@pytest.mark.parametrize("shape", [(30, 5), (10, 10), (5, 8), (3, 1, 4), (100, 100), (150, 90), (70, 130)])
def test_qr_has_lapack_signs(d, shape):
    # scikit-learn's randomized_range_finder compares Q with NumPy's at rtol 1e-7: the
    # Householder paths (small, and blocked past 64 columns) give dgeqrf's Q and R
    t = npdt(d)
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(t)
    q, r = (to_np(z) for z in la.qr(xp.asarray(a)))
    q0, r0 = np.linalg.qr(a)
    eps = float(np.finfo(t).eps)
    scale = 100 * eps * max(shape)
    np.testing.assert_allclose(q, q0, rtol=0, atol=scale)
    np.testing.assert_allclose(r, r0, rtol=0, atol=scale * float(np.abs(r0).max()))


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_qr_lapack_no_reflection_cases(d):
    # LAPACK reflects nothing where a column has nothing below the diagonal: Q = I for
    # the identity and for upper-triangular input (R keeps its signs), zero columns
    t = npdt(d)
    tri = np.triu(np.random.default_rng(3).standard_normal((6, 6))).astype(t)
    for a in (np.eye(4, dtype=t), np.diag(np.array([-1.0, 2.0, -0.0, 3.0], t)), tri,
              np.zeros((3, 3), t), np.array([[0.0, 1.0], [0.0, 2.0]], t), np.eye(80, dtype=t)[::-1].copy()):
        q, r = (to_np(z) for z in la.qr(xp.asarray(a)))
        q0, r0 = np.linalg.qr(a)
        np.testing.assert_allclose(q, q0, rtol=0, atol=10 * float(np.finfo(t).eps))
        np.testing.assert_allclose(r, r0, rtol=0, atol=10 * float(np.finfo(t).eps) * max(1.0, float(np.abs(r0).max())))


def test_qr_tall_path_keeps_a_non_negative_diagonal():
    # the tall-skinny path (CholeskyQR, TSQR where that fails) keeps R_kk >= 0
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2048, 8)).astype(np.float32)
    b = a.copy()
    b[:, 5] = b[:, 4]  # rank-deficient: CholeskyQR reports failure, TSQR runs
    for m in (a, b):
        q, r = (to_np(z) for z in la.qr(xp.asarray(m)))
        assert np.all(np.diagonal(r) >= 0)
        np.testing.assert_allclose(q @ r, m, rtol=0, atol=1e-4)
        np.testing.assert_allclose(q.T @ q, np.eye(8), rtol=0, atol=1e-5)


def test_permuted_views_write_through_as_numpy():
    # scipy.signal.oaconvolve adds into a swapped-axes slice of a swapped-axes result
    n = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    x = xp.asarray(n)
    want = n.copy()
    v = xp.permute_dims(xp.permute_dims(x, (2, 1, 0))[1:3], (2, 1, 0))
    v += 100
    np.swapaxes(np.swapaxes(want, 2, 0)[1:3], 2, 0)[...] += 100
    np.testing.assert_array_equal(np.asarray(x), want)
    m = xp.moveaxis(x, 0, -1)  # a write to the view, then one to the base
    m[1, 2, 0] = -np.inf
    np.moveaxis(want, 0, -1)[1, 2, 0] = -np.inf
    np.testing.assert_array_equal(np.asarray(x), want)
    x[1, 0, 3] = np.nan
    want[1, 0, 3] = np.nan
    np.testing.assert_array_equal(np.asarray(m), np.moveaxis(want, 0, -1))
    t = x[0].T  # .T of a view
    t[:, 1] = -0.0
    want[0].T[:, 1] = -0.0
    np.testing.assert_array_equal(np.asarray(x), want)
    assert np.array_equal(np.signbit(np.asarray(x)), np.signbit(want))
    y = xp.permute_dims(x, (0, 1, 2))  # the identity permutation is a view too
    y[0, 0, 0] = 5
    want[0, 0, 0] = 5
    np.testing.assert_array_equal(np.asarray(x), want)
    c = xp.asarray(xp.permute_dims(x, (1, 0, 2)), copy=True)  # a copy is not
    c[...] = 0
    np.testing.assert_array_equal(np.asarray(x), want)


def test_reshaped_views_write_through_as_numpy():
    # scipy.integrate's tanh-sinh replaces the non-finite values of `fr, fl =
    # reshape(fj.T, (2, -1, n))` in place and then sums fj: an integral over an infinite
    # interval came out NaN while the write stayed in a copy
    n = np.linspace(-3, 3, 18).astype(np.float32).reshape(3, 6)
    x = xp.asarray(n)
    want = n.copy()
    fr, fl = xp.reshape(x.T, (2, 3, 3))  # a reshape its strides allow: a view
    wfr, wfl = np.reshape(want.T, (2, 3, 3))
    assert np.shares_memory(wfr, want)
    fr[fr > 0.5] = np.inf
    wfr[wfr > 0.5] = np.inf
    fl[0, 0] = -0.0
    wfl[0, 0] = -0.0
    np.testing.assert_array_equal(np.asarray(x), want)
    assert np.array_equal(np.signbit(np.asarray(x)), np.signbit(want))
    x[2, 5] = np.nan  # a write to the base shows in the reshaped view
    want[2, 5] = np.nan
    np.testing.assert_array_equal(np.asarray(fl), wfl)
    f = xp.reshape(x, (18,))  # of a contiguous array, in place operators too
    f += 1
    np.reshape(want, (18,))[...] += 1
    np.testing.assert_array_equal(np.asarray(x), want)
    r = xp.reshape(x * 2, (2, 9))  # of a lazy result: a view of that result, not of x
    r[0, 0] = 7
    np.testing.assert_array_equal(np.asarray(x), want)
    # where NumPy must copy (merging the axes of a transpose), so does wgarray
    c = xp.reshape(x.T, (18,))
    wc = np.reshape(want.T, (18,))
    assert not np.shares_memory(wc, want)
    c[0] = 123
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(c), np.concatenate([[123], wc[1:]]))
    k = xp.reshape(x, (3, 6), copy=True)  # copy=True never writes through
    k[...] = 0
    np.testing.assert_array_equal(np.asarray(x), want)


def test_flip_squeeze_expand_dims_unstack_matrix_transpose_are_views_as_numpy():
    n = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    x = xp.asarray(n)
    want = n.copy()
    f = xp.flip(x, axis=1)
    f[0, 0, 0] = -1
    np.flip(want, axis=1)[0, 0, 0] = -1
    e = xp.expand_dims(x, axis=0)
    e[0, 1, 2, 3] = np.nan
    np.expand_dims(want, 0)[0, 1, 2, 3] = np.nan
    u = xp.unstack(x, axis=2)
    u[1][0, 0] = -0.0
    want[0, 0, 1] = -0.0
    t = xp.matrix_transpose(x)
    t[1, 3, 2] += 100
    np.matrix_transpose(want)[1, 3, 2] += 100
    np.testing.assert_array_equal(np.asarray(x), want)
    assert np.array_equal(np.signbit(np.asarray(x)), np.signbit(want))
    x[1, 2, 0] = np.inf  # and every one of them shows later writes to the base
    want[1, 2, 0] = np.inf
    np.testing.assert_array_equal(np.asarray(f), np.flip(want, axis=1))
    np.testing.assert_array_equal(np.asarray(e), np.expand_dims(want, 0))
    np.testing.assert_array_equal(np.asarray(u[0]), want[:, :, 0])
    np.testing.assert_array_equal(np.asarray(t), np.matrix_transpose(want))
    z = xp.asarray(np.ones((1, 3, 1), np.float32))
    s = xp.squeeze(z, axis=(0, 2))
    s[1] = 5
    q = xp.squeeze(xp.asarray(np.ones((1, 1), np.float32)), axis=(0, 1))  # a 0-d view, not a copy
    q[()] = 7
    np.testing.assert_array_equal(np.asarray(z), np.array([[[1], [5], [1]]], np.float32))
    assert q.shape == () and float(q) == 7
