"""Statistical functions against NumPy: every dtype the device offers, axes (ints,
tuples, negative), keepdims, empty and 0-d arrays, NaN/inf/-0, dtype= rules, and the
fusion of the elementwise producer into the reduction (dispatch counters)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from wgarray import debug
from conftest import (COMPLEX, DTYPES, HAS_F64, INTEGER, NUMERIC, REAL_FLOAT, assert_exact, ids, npdt,
                      to_np)

REAL = INTEGER + REAL_FLOAT
CASES = [((), None), ((0,), None), ((7,), 0), ((3, 4), None), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), (0, 2)),
         ((2, 0, 3), 1), ((2, 3, 5), ()), ((130, 70), 0), ((5, 1001), 1), ((2, 3, 4), (-1, 0, 1))]
CASE_IDS = [f"{s}-{a}" for s, a in CASES]
SMALL_CASES = [((7,), 0), ((3, 40), None), ((3, 40), 0), ((5, 6, 7), (0, 2))]
SMALL_IDS = [f"{s}-{a}" for s, a in SMALL_CASES]


def data(d, shape, seed=0, specials=False):
    rng = np.random.default_rng(seed)
    t = npdt(d)
    n = int(np.prod(shape))
    if d.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif d.kind in "iu":
        info = np.iinfo(t)
        a = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(t)
    else:
        rt = np.float32 if d.name in ("float32", "complex64") else np.float64
        a = rng.standard_normal(n).astype(rt)
        if d.kind == "c":
            a = (a + 1j * rng.standard_normal(n)).astype(t)
        if specials and n >= 8:
            sp = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], rt)
            idx = rng.choice(n, n // 8, replace=False)
            a[idx] = rng.choice(sp, idx.size)
    return a.reshape(shape)


def acc_dtype(d):
    if d.kind in "bi":
        return xp.int64
    if d.kind == "u":
        return xp.uint64
    return d


def assert_close(x, want, rtol, atol=0.0, dtype=None, check_zero_sign=False):
    """Same shape and dtype; NaN where NumPy has NaN, same infinities, finite values close."""
    want = np.asarray(want)
    got = to_np(x)
    if dtype is not None:
        assert x.dtype == dtype, (x.dtype, dtype)
        want = want.astype(npdt(dtype))
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind == "c":
        assert_close_np(got.real, want.real, rtol, atol)
        assert_close_np(got.imag, want.imag, rtol, atol)
    else:
        assert_close_np(got, want, rtol, atol)


def assert_close_np(got, want, rtol, atol):
    if got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


def tol(d):
    return (2e-5, 1e-5) if d.name in ("float32", "complex64") else (1e-12, 1e-12)


# ------------------------------------------------------------------------ sum / prod

@pytest.mark.parametrize("shape,axis", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_float32_axes_keepdims_vs_numpy(shape, axis, keepdims):
    a = data(xp.float32, shape, specials=True)
    r = xp.sum(xp.asarray(a), axis=axis, keepdims=keepdims)
    assert_close(r, np.sum(a.astype(np.float64), axis=axis, keepdims=keepdims), 1e-5, 1e-4, dtype=xp.float32)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("shape,axis", SMALL_CASES, ids=SMALL_IDS)
def test_sum_prod_every_dtype_default_accumulator(d, shape, axis):
    a = data(d, shape, seed=1)
    acc = acc_dtype(d)
    x = xp.asarray(a)
    s = xp.sum(x, axis=axis)
    want = np.sum(a, axis=axis, dtype=npdt(acc))
    if acc.kind in "iu":
        assert_exact(s, want, dtype=acc)
    else:
        assert_close(s, want, *tol(d), dtype=acc)
    small = (a % 3 if d.kind in "iu" else a).astype(a.dtype) if d.kind != "b" else a
    p = xp.prod(xp.asarray(small), axis=axis)
    want = np.prod(small, axis=axis, dtype=npdt(acc))
    if acc.kind in "iu":
        assert_exact(p, want, dtype=acc)
    else:
        assert_close(p, want, 1e-4 if d.name in ("float32", "complex64") else 1e-10, 1e-30, dtype=acc)


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float32"])
def test_sum_prod_dtype_argument_wraps_like_numpy(dtype):
    d = getattr(xp, dtype)
    a = np.arange(1, 301, dtype=np.int32).reshape(3, 100)
    x = xp.asarray(a)
    s = xp.sum(x, axis=1, dtype=d)
    p = xp.prod(x, axis=0, dtype=d)
    if d.kind == "f":
        assert_close(s, a.sum(axis=1, dtype=npdt(d)), 1e-6, dtype=d)
        assert_close(p, a.prod(axis=0, dtype=npdt(d)), 1e-6, dtype=d)
    else:
        assert_exact(s, a.astype(npdt(d)).sum(axis=1, dtype=npdt(d)), dtype=d)
        assert_exact(p, a.astype(npdt(d)).prod(axis=0, dtype=npdt(d)), dtype=d)


def test_sum_int64_extremes_wrap_exactly():
    info = np.iinfo(np.int64)
    a = np.array([info.max, 1, info.min, -1, info.max, 123456789012345], np.int64)
    assert_exact(xp.sum(xp.asarray(a)), np.sum(a), dtype=xp.int64)
    u = np.array([2**64 - 1, 2, 2**63, 2**40 + 7], np.uint64)
    assert_exact(xp.sum(xp.asarray(u)), np.sum(u), dtype=xp.uint64)
    assert_exact(xp.prod(xp.asarray(u)), np.prod(u), dtype=xp.uint64)
    big = np.array([3_000_000_007, -5_000_000_003, 7], np.int64)
    assert_exact(xp.prod(xp.asarray(big)), np.prod(big), dtype=xp.int64)


def test_sum_of_empty_and_zero_signs():
    f = xp.float32
    assert_exact(xp.sum(xp.asarray(np.zeros(0, np.float32))), np.float32(0.0), dtype=f)
    assert_exact(xp.prod(xp.asarray(np.zeros((0, 3), np.float32)), axis=0), np.ones(3, np.float32), dtype=f)
    # NumPy's sums start from +0.0: a sum of negative zeros is 0.0; a running sum keeps -0.0
    assert_exact(xp.sum(xp.asarray(np.array([-0.0, -0.0], np.float32))), np.float32(0.0), dtype=f)
    assert_exact(xp.sum(xp.asarray(np.array([[-0.0], [-0.0]], np.float32)), axis=1), np.zeros(2, np.float32), dtype=f)
    assert_exact(xp.cumulative_sum(xp.asarray(np.array([-0.0, -0.0], np.float32))), np.array([-0.0, -0.0], np.float32),
                 dtype=f)
    assert_exact(xp.sum(xp.asarray(np.array([-0.0, 0.0], np.float32))), np.float32(0.0), dtype=f)
    assert_exact(xp.sum(xp.asarray(np.zeros((2, 0), np.int8)), axis=1), np.zeros(2, np.int64), dtype=xp.int64)
    assert_exact(xp.sum(xp.asarray(np.float32(2.5))), np.float32(2.5), dtype=f)


def test_sum_float32_accuracy_is_pairwise_like():
    rng = np.random.default_rng(5)
    a = (rng.random(1 << 20, dtype=np.float32) + 1.0).astype(np.float32)
    got = float(np.asarray(xp.sum(xp.asarray(a))))
    exact = float(np.sum(a.astype(np.float64)))
    npw = float(np.sum(a))
    assert abs(got - exact) <= max(4 * abs(npw - exact), 2e-6 * exact)


@pytest.mark.parametrize("d", COMPLEX, ids=ids(COMPLEX))
def test_sum_prod_mean_complex(d):
    a = data(d, (4, 33), seed=3)
    x = xp.asarray(a)
    assert_close(xp.sum(x, axis=1), a.sum(axis=1), *tol(d), dtype=d)
    assert_close(xp.prod(x[:, :6], axis=1), a[:, :6].prod(axis=1), 1e-5, 1e-6, dtype=d)
    assert_close(xp.mean(x), a.mean(), *tol(d), dtype=d)


def test_sum_rejects_bad_arguments():
    x = xp.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        xp.sum(x, axis=2)
    with pytest.raises(ValueError):
        xp.sum(x, axis=(0, 0))
    with pytest.raises(TypeError):
        xp.sum(x, axis=1.0)
    with pytest.raises(TypeError):
        xp.sum(xp.asarray(np.ones(2, np.complex64)), dtype=xp.float32)
    with pytest.raises(TypeError):
        xp.sum(np.ones(3))


@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.data())
def test_sum_random_shapes_and_axes_hypothesis(shape, draw):
    shape = tuple(shape)
    axes = draw.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    axis = tuple(axes) if axes else None
    a = data(xp.float32, shape, seed=len(shape))
    assert_close(xp.sum(xp.asarray(a), axis=axis), np.sum(a.astype(np.float64), axis=axis), 1e-5, 1e-5)
    i = data(xp.int32, shape, seed=2)
    assert_exact(xp.max(xp.asarray(i), axis=axis), np.max(i, axis=axis))


# ------------------------------------------------------------------------ min / max

@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
@pytest.mark.parametrize("shape,axis", SMALL_CASES, ids=SMALL_IDS)
def test_min_max_every_real_dtype(d, shape, axis):
    a = data(d, shape, seed=4, specials=True)
    x = xp.asarray(a)
    for f, nf in ((xp.max, np.max), (xp.min, np.min)):
        r = f(x, axis=axis, keepdims=True)
        want = nf(a, axis=axis, keepdims=True)
        got = to_np(r)
        assert r.dtype == d and got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # NaN == NaN here; -0 == +0


def test_min_max_extremes_and_nan_propagation():
    info = np.iinfo(np.int64)
    a = np.array([5, info.min, info.max, -3], np.int64)
    assert_exact(xp.max(xp.asarray(a)), np.max(a))
    assert_exact(xp.min(xp.asarray(a)), np.min(a))
    u = np.array([3, 2**64 - 1, 0], np.uint64)
    assert_exact(xp.max(xp.asarray(u)), np.max(u))
    assert_exact(xp.min(xp.asarray(u)), np.min(u))
    f = np.array([[1.0, np.nan, -np.inf], [-np.inf, -np.inf, -np.inf]], np.float32)
    assert_exact(xp.max(xp.asarray(f), axis=1), np.array([np.nan, -np.inf], np.float32))
    assert_exact(xp.min(xp.asarray(f), axis=1), np.array([np.nan, -np.inf], np.float32))
    assert_exact(xp.max(xp.asarray(np.int8(-4))), np.int8(-4))


def test_min_max_of_empty_raise_and_reject_complex_and_bool():
    with pytest.raises(ValueError):
        xp.max(xp.asarray(np.zeros((0, 3), np.float32)), axis=0)
    with pytest.raises(ValueError):
        xp.min(xp.asarray(np.zeros(0, np.int32)))
    with pytest.raises(TypeError):
        xp.max(xp.asarray(np.ones(3, np.complex64)))
    with pytest.raises(TypeError):
        xp.min(xp.asarray(np.ones(3, bool)))
    assert xp.max(xp.asarray(np.zeros((0, 3), np.float32)), axis=1).shape == (0,)


# ------------------------------------------------------------------------ mean / var / std

@pytest.mark.parametrize("d", REAL_FLOAT + COMPLEX, ids=ids(REAL_FLOAT + COMPLEX))
@pytest.mark.parametrize("shape,axis", SMALL_CASES + [((3, 4), (0, 1))], ids=SMALL_IDS + ["all"])
def test_mean_var_std_vs_numpy(d, shape, axis):
    a = data(d, shape, seed=6)
    x = xp.asarray(a)
    rtol, atol = (1e-5, 1e-5) if d.name in ("float32", "complex64") else (1e-12, 1e-12)
    assert_close(xp.mean(x, axis=axis), np.mean(a, axis=axis), rtol, atol, dtype=d)
    real = xp.float32 if d.name in ("float32", "complex64") else xp.float64
    for corr in (0, 1, 1.5):
        assert_close(xp.var(x, axis=axis, correction=corr), np.var(a, axis=axis, ddof=corr), rtol, atol, dtype=real)
        assert_close(xp.std(x, axis=axis, correction=corr, keepdims=True),
                     np.std(a, axis=axis, ddof=corr, keepdims=True), rtol, atol, dtype=real)


def test_mean_var_special_cases():
    e = xp.asarray(np.zeros((0, 2), np.float32))
    assert np.isnan(to_np(xp.mean(e, axis=0))).all()
    assert np.isnan(to_np(xp.var(e))).all()
    one = xp.asarray(np.array([3.0], np.float32))
    assert np.isnan(to_np(xp.var(one, correction=1)))  # 0 / 0
    assert_exact(xp.var(one), np.float32(0.0))
    f = np.array([1.0, np.inf, 2.0], np.float32)
    assert_exact(xp.mean(xp.asarray(f)), np.float32(np.inf))
    assert np.isnan(to_np(xp.var(xp.asarray(f))))
    with pytest.raises(TypeError):
        xp.mean(xp.asarray(np.ones(3, np.int32)))
    with pytest.raises(TypeError):
        xp.var(xp.asarray(np.ones(3, np.float32)), correction="1")


# ------------------------------------------------------------------------ argmax / argmin

@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_every_real_dtype(d, keepdims):
    a = data(d, (6, 50), seed=7, specials=True)
    if d.kind in "iu":
        a = (a % 5).astype(a.dtype)  # many ties: the first occurrence must win
    x = xp.asarray(a)
    for axis in (None, 0, 1, -1):
        for f, nf in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
            assert_exact(f(x, axis=axis, keepdims=keepdims), nf(a, axis=axis, keepdims=keepdims), dtype=xp.int64)


def test_argmax_nan_first_occurrence_and_large():
    a = np.array([1.0, np.nan, 5.0, np.nan, -np.inf], np.float32)
    assert int(to_np(xp.argmax(xp.asarray(a)))) == 1
    assert int(to_np(xp.argmin(xp.asarray(a)))) == 1
    z = np.array([-0.0, 0.0, -0.0], np.float32)
    assert int(to_np(xp.argmax(xp.asarray(z)))) == 0
    rng = np.random.default_rng(8)
    b = rng.integers(-1000, 1000, 300_001).astype(np.int32)
    assert int(to_np(xp.argmax(xp.asarray(b)))) == int(np.argmax(b))
    assert int(to_np(xp.argmin(xp.asarray(b)))) == int(np.argmin(b))
    c = rng.standard_normal((3, 20000)).astype(np.float32)
    assert_exact(xp.argmax(xp.asarray(c), axis=1), np.argmax(c, axis=1))
    assert_exact(xp.argmin(xp.asarray(c.T), axis=0), np.argmin(c.T, axis=0))


def test_argmax_edge_cases():
    assert_exact(xp.argmax(xp.asarray(np.float32(3.0))), np.int64(0))
    with pytest.raises(ValueError):
        xp.argmax(xp.asarray(np.zeros(0, np.float32)))
    with pytest.raises(TypeError):
        xp.argmax(xp.asarray(np.ones((2, 2), np.float32)), axis=(0, 1))
    with pytest.raises(TypeError):
        xp.argmin(xp.asarray(np.ones(2, np.complex64)))


# ------------------------------------------------------------------------ count_nonzero

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_count_nonzero_every_dtype(d):
    a = data(d, (4, 5, 6), seed=9, specials=True)
    a = np.where(np.arange(a.size).reshape(a.shape) % 3 == 0, np.zeros((), a.dtype), a)
    x = xp.asarray(a)
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            assert_exact(xp.count_nonzero(x, axis=axis, keepdims=keepdims),
                         np.count_nonzero(a, axis=axis, keepdims=keepdims), dtype=xp.int64)
    assert_exact(xp.count_nonzero(xp.asarray(np.zeros((0, 2), npdt(d)))), np.int64(0))


# ------------------------------------------------------------------------ cumulative

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_cumulative_sum_prod_every_dtype(d):
    a = data(d, (3, 37), seed=10)
    acc = acc_dtype(d)
    x = xp.asarray(a)
    for axis in (0, 1, -1):
        for inc in (False, True):
            got = xp.cumulative_sum(x, axis=axis, include_initial=inc)
            want = np.cumulative_sum(a, axis=axis, dtype=npdt(acc), include_initial=inc)
            if acc.kind in "iu":
                assert_exact(got, want, dtype=acc)
            else:
                assert_close(got, want, *tol(d), dtype=acc)
    small = a[:, :8] if d.kind in "fcb" else (a[:, :8] % 4).astype(a.dtype)
    got = xp.cumulative_prod(xp.asarray(small), axis=1, include_initial=True)
    want = np.cumulative_prod(small, axis=1, dtype=npdt(acc), include_initial=True)
    if acc.kind in "iu":
        assert_exact(got, want, dtype=acc)
    else:
        assert_close(got, want, 1e-5, 1e-6, dtype=acc)


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 100_000, 5_000_001])
def test_cumulative_sum_long_rows_multi_level(n):
    a = (np.arange(n) % 7 - 3).astype(np.int32)
    got = to_np(xp.cumulative_sum(xp.asarray(a), dtype=xp.int32))
    np.testing.assert_array_equal(got, np.cumsum(a, dtype=np.int32))


def test_cumulative_sum_float32_long_and_columns():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 9000)).astype(np.float32)
    assert_close(xp.cumulative_sum(xp.asarray(a), axis=1), np.cumsum(a.astype(np.float64), axis=1), 1e-4, 1e-3)
    assert_close(xp.cumulative_sum(xp.asarray(a.T), axis=0, include_initial=True),
                 np.cumulative_sum(a.T.astype(np.float64), axis=0, include_initial=True), 1e-4, 1e-3)


def test_cumulative_dtype_argument_and_edge_cases():
    a = np.arange(1, 41, dtype=np.int16)
    assert_exact(xp.cumulative_sum(xp.asarray(a), dtype=xp.int8), np.cumsum(a, dtype=np.int8))
    assert_exact(xp.cumulative_prod(xp.asarray(a), dtype=xp.uint8), np.cumprod(a, dtype=np.uint8))
    e = xp.asarray(np.zeros((2, 0), np.float32))
    assert_exact(xp.cumulative_sum(e, axis=1), np.zeros((2, 0), np.float32))
    assert_exact(xp.cumulative_sum(e, axis=1, include_initial=True), np.zeros((2, 1), np.float32))
    assert_exact(xp.cumulative_prod(e, axis=1, include_initial=True), np.ones((2, 1), np.float32))
    with pytest.raises(ValueError):
        xp.cumulative_sum(xp.asarray(np.ones((2, 2), np.float32)))
    with pytest.raises(ValueError):
        xp.cumulative_sum(xp.asarray(np.float32(1.0)))
    f = np.array([1.0, np.inf, -np.inf, 2.0, np.nan, 1.0], np.float32)
    assert_exact(xp.cumulative_sum(xp.asarray(f)), np.cumsum(f))


# ------------------------------------------------------------------------ fusion and counters

def test_fused_producer_costs_no_extra_dispatch():
    rng = np.random.default_rng(12)
    x = xp.asarray(rng.standard_normal(300_000).astype(np.float32))
    debug.reset_counters()
    plain = xp.sum(x)
    n_plain = debug.counters()["dispatches"]
    debug.reset_counters()
    fused = xp.sum((x - 1.5) ** 2)
    n_fused = debug.counters()["dispatches"]
    assert n_fused <= n_plain
    a = np.asarray(x).astype(np.float64)
    assert_close(fused, np.sum((a - 1.5) ** 2), 1e-5)
    assert_close(plain, np.sum(a), 1e-4, 1e-2)


def test_reduction_pipelines_are_keyed_by_structure_not_size():
    xp.sum(xp.asarray(np.ones(5000, np.float32)) * 2.0)._numpy()
    debug.reset_counters()
    for n in (4004, 6000, 7996):
        r = xp.sum(xp.asarray(np.ones(n, np.float32)) * 3.0)
        assert float(to_np(r)) == 3.0 * n
    assert debug.counters()["pipelines_compiled"] == 0


@pytest.mark.skipif(not HAS_F64, reason="device without float64")
def test_float64_sum_of_large_array():
    a = np.random.default_rng(13).standard_normal(200_003)
    assert_close(xp.sum(xp.asarray(a)), np.sum(a), 1e-12, 1e-10, dtype=xp.float64)


def test_numeric_categories_cover_the_device():
    assert set(NUMERIC) <= set(DTYPES)
