"""unique_* and isin against NumPy for every real dtype the device offers: NaNs distinct,
-0 == +0, duplicates, multi-dimensional, empty and 0-d inputs, fused inputs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from conftest import DTYPES, assert_exact, ids, sample

REAL = [d for d in DTYPES if d.kind != "c"]


def values(d, n, seed=0):
    v = sample(d, n, seed)
    rng = np.random.default_rng(seed + 7)
    return rng.permutation(np.concatenate([v, rng.choice(v[: max(4, len(v) // 8)], 2 * n)]))


def ref_unique(a: np.ndarray):
    vals, idx, inv, cnt = np.unique(a.reshape(-1), return_index=True, return_inverse=True, return_counts=True,
                                    equal_nan=False)
    return vals, idx, inv.reshape(a.shape), cnt


def check_unique(a: np.ndarray, x=None):
    x = xp.asarray(a) if x is None else x
    vals, idx, inv, cnt = ref_unique(a)
    r = xp.unique_all(x)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    assert_exact(r.values, vals, msg="values")
    assert_exact(r.indices, idx.astype(np.int64), msg="indices")
    assert_exact(r.inverse_indices, inv.astype(np.int64), msg="inverse_indices")
    assert_exact(r.counts, cnt.astype(np.int64), msg="counts")
    c = xp.unique_counts(x)
    assert c._fields == ("values", "counts")
    assert_exact(c.values, vals)
    assert_exact(c.counts, cnt.astype(np.int64))
    i = xp.unique_inverse(x)
    assert i._fields == ("values", "inverse_indices")
    assert_exact(i.values, vals)
    assert_exact(i.inverse_indices, inv.astype(np.int64))
    assert_exact(xp.unique_values(x), vals)


@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
def test_unique_every_dtype_with_specials_and_duplicates(d):
    check_unique(values(d, 100))


@pytest.mark.parametrize("d", [xp.float32, xp.int16, xp.bool], ids=str)
def test_unique_multidimensional_and_0d(d):
    check_unique(values(d, 30)[:60].reshape(3, 4, 5))
    check_unique(values(d, 5)[:1].reshape(()))


def test_unique_nans_are_distinct_and_zeros_merge():
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, -0.0, np.nan], np.float32)
    check_unique(a)
    assert xp.unique_values(xp.asarray(a)).shape == (5,)  # 0, 1 and three NaNs


def test_unique_large_input_many_tiles():
    a = np.random.default_rng(3).integers(-5000, 5000, 200_000).astype(np.int32)
    check_unique(a)


def test_unique_empty():
    for shape in [(0,), (2, 0)]:
        a = np.zeros(shape, np.float32)
        check_unique(a)


def test_unique_of_fused_input():
    a = np.random.default_rng(5).integers(0, 9, (6, 7)).astype(np.float32)
    x = xp.asarray(a)
    check_unique((a * 0.5).T, x=(x * 0.5).T)


def test_unique_rejects_non_arrays():
    with pytest.raises(TypeError, match="unique_values"):
        xp.unique_values([1, 2])


# ------------------------------------------------------------------ isin

@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
def test_isin_every_dtype_with_specials(d):
    a = values(d, 40, seed=1)[:80].reshape(40, 2)
    b = values(d, 30, seed=2)[:50]
    x1, x2 = xp.asarray(a), xp.asarray(b)
    want = np.isin(a, b)
    assert_exact(xp.isin(x1, x2), want)
    assert_exact(xp.isin(x1, x2, invert=True), ~want)


def test_isin_nan_never_found_and_zeros_match():
    a = np.array([np.nan, 0.0, -0.0, 1.0, 2.0], np.float32)
    b = np.array([np.nan, -0.0, 2.0], np.float32)
    assert_exact(xp.isin(xp.asarray(a), xp.asarray(b)), [False, True, True, False, True])


def test_isin_promotes_and_takes_scalars():
    x1 = xp.asarray(np.array([1, 2, 3, 300], np.int16))
    x2 = xp.asarray(np.array([2, 300, 7], np.int32))
    assert_exact(xp.isin(x1, x2), [False, True, False, True])
    assert_exact(xp.isin(x1, 3), [False, False, True, False])
    assert_exact(xp.isin(2, x2), np.array(True))


def test_isin_empty_operands():
    x = xp.asarray(np.array([1.0, 2.0], np.float32))
    e = xp.asarray(np.zeros(0, np.float32))
    assert_exact(xp.isin(x, e), [False, False])
    assert_exact(xp.isin(x, e, invert=True), [True, True])
    assert_exact(xp.isin(e, x), np.zeros(0, bool))


@given(st.data())
def test_unique_and_isin_hypothesis(data):
    d = data.draw(st.sampled_from(REAL), label="dtype")
    seed = data.draw(st.integers(0, 1000), label="seed")
    n = data.draw(st.integers(1, 40), label="n")
    pool = values(d, 8, seed)[:12]
    rng = np.random.default_rng(seed)
    a, b = rng.choice(pool, n), rng.choice(pool, data.draw(st.integers(1, 20)))
    check_unique(a)
    assert_exact(xp.isin(xp.asarray(a), xp.asarray(b)), np.isin(a, b))


@pytest.mark.parametrize("dtype", [d for d in ("complex64", "complex128")
                                   if d in xp.__array_namespace_info__().dtypes()])
def test_unique_all_complex_matches_numpy_with_distinct_nans(dtype):
    h = np.array([1 + 1j, 2, 1 + 1j, np.nan, complex(np.nan, 0), 0.5j, 2, 1 - 1j, -0.0], dtype)
    r = xp.unique_all(xp.reshape(xp.asarray(h), (3, 3)))
    values = np.asarray(r.values)
    finite = values[~np.isnan(values)]
    np.testing.assert_array_equal(finite, np.unique(h[~np.isnan(h)]))
    assert np.isnan(values).sum() == 2  # NaNs are distinct
    np.testing.assert_array_equal(values[np.asarray(r.inverse_indices)], h.reshape(3, 3))
    np.testing.assert_array_equal(h[np.asarray(r.indices)], values)
    assert int(np.asarray(r.counts).sum()) == h.size
    assert r.inverse_indices.shape == (3, 3)
