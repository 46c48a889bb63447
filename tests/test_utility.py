"""all, any and diff against NumPy: every dtype, axes, keepdims, empty and 0-d arrays,
NaN (truthy), -0.0 (falsy), prepend/append."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from conftest import DTYPES, assert_exact, ids, npdt, sample

AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2), ()]


def mostly_true(d, shape, seed):
    """Values with a few zeros, so all/any differ along axes."""
    rng = np.random.default_rng(seed)
    a = sample(d, 64, seed)
    a = rng.choice(a, int(np.prod(shape)))
    zero = np.zeros((), npdt(d))
    mask = rng.random(a.size) < 0.15
    return np.where(mask, zero, a).astype(npdt(d)).reshape(shape)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_all_any_every_dtype_axes_keepdims(d):
    a = mostly_true(d, (3, 4, 5), seed=1)
    x = xp.asarray(a)
    for axis in AXES:
        for keepdims in (False, True):
            assert_exact(xp.all(x, axis=axis, keepdims=keepdims), np.all(a, axis=axis, keepdims=keepdims))
            assert_exact(xp.any(x, axis=axis, keepdims=keepdims), np.any(a, axis=axis, keepdims=keepdims))


def test_all_any_special_values_empty_and_0d():
    f = np.array([[np.nan, 1.0], [-0.0, 0.0], [np.inf, -np.inf]], np.float32)
    x = xp.asarray(f)
    assert_exact(xp.all(x, axis=1), np.all(f, axis=1))
    assert_exact(xp.any(x, axis=1), np.any(f, axis=1))
    e = xp.asarray(np.zeros((0, 3), np.float32))
    assert_exact(xp.all(e), np.bool_(True))
    assert_exact(xp.any(e), np.bool_(False))
    assert_exact(xp.all(e, axis=0), np.ones(3, bool))
    assert_exact(xp.any(e, axis=1), np.zeros(0, bool))
    assert_exact(xp.all(xp.asarray(np.float32(0.0))), np.bool_(False))
    assert_exact(xp.any(xp.asarray(np.int8(3))), np.bool_(True))


def test_all_any_large_and_fused():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(200_001).astype(np.float32)
    x = xp.asarray(a)
    assert_exact(xp.all(x > -10.0), np.bool_(True))
    assert_exact(xp.any(x > 4.0), np.any(a > 4.0))
    assert_exact(xp.any(x > 100.0), np.bool_(False))


def test_all_any_reject_bad_axis():
    x = xp.asarray(np.ones((2, 3), bool))
    with pytest.raises(ValueError):
        xp.all(x, axis=2)
    with pytest.raises(TypeError):
        xp.any(x, axis="0")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_diff_every_dtype(d):
    a = mostly_true(d, (4, 6), seed=3)
    x = xp.asarray(a)
    for axis in (0, 1, -1):
        for n in (0, 1, 2):
            assert_exact(xp.diff(x, axis=axis, n=n), np.diff(a, axis=axis, n=n))


def test_diff_prepend_append_and_edges():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    x = xp.asarray(a)
    p = np.full((3, 1), -1.0, np.float32)
    q = np.zeros((3, 2), np.float32)
    assert_exact(xp.diff(x, axis=1, prepend=xp.asarray(p), append=xp.asarray(q)),
                 np.diff(a, axis=1, prepend=p, append=q))
    assert_exact(xp.diff(x, axis=0, n=3), np.diff(a, axis=0, n=3))
    assert_exact(xp.diff(x, axis=0, n=5), np.diff(a, axis=0, n=5))
    assert_exact(xp.diff(xp.asarray(np.zeros(0, np.int32))), np.diff(np.zeros(0, np.int32)))
    f = np.array([1.0, np.inf, np.inf, np.nan, -0.0, 0.0], np.float32)
    assert_exact(xp.diff(xp.asarray(f)), np.diff(f))
    u = np.array([3, 1, 200], np.uint8)
    assert_exact(xp.diff(xp.asarray(u)), np.diff(u))
    # n and axis by position, in NumPy's order (scikit-learn's roc_curve relies on it)
    assert_exact(xp.diff(x, 2), np.diff(a, 2))
    assert_exact(xp.diff(x, 1, 0), np.diff(a, 1, 0))
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(np.float32(1.0)))
    with pytest.raises(ValueError):
        xp.diff(x, n=-1)
    with pytest.raises(ValueError):
        xp.diff(x, axis=0, prepend=xp.asarray(np.zeros((1, 3), np.float32)))
