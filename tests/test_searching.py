"""searchsorted, where and nonzero against NumPy for every real dtype the device offers."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from conftest import DEFAULT_FLOAT, DTYPES, assert_exact, ids, npdt, sample

REAL = [d for d in DTYPES if d.kind != "c"]


def sorted_values(d, n, seed=0):
    """Sorted (NaNs last) values with duplicates, and queries around them."""
    v = sample(d, n, seed)
    rng = np.random.default_rng(seed)
    v = np.concatenate([v, rng.choice(v, n)])
    return np.sort(v, kind="stable"), rng.permutation(np.concatenate([v, sample(d, n, seed + 1)]))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
def test_searchsorted_every_dtype_with_specials(d, side):
    a, q = sorted_values(d, 40)
    q = q[: (len(q) // 2) * 2].reshape(2, -1)
    got = xp.searchsorted(xp.asarray(a), xp.asarray(q), side=side)
    assert_exact(got, np.searchsorted(a, q, side=side).astype(np.int64))


@pytest.mark.parametrize("d", [xp.float32, xp.int64, xp.uint8], ids=str)
def test_searchsorted_with_sorter(d):
    _, a = sorted_values(d, 30, seed=3)
    order = np.argsort(a, kind="stable")
    q = sample(d, 20, 9)
    for side in ("left", "right"):
        got = xp.searchsorted(xp.asarray(a), xp.asarray(q), side=side, sorter=xp.asarray(order))
        assert_exact(got, np.searchsorted(a, q, side=side, sorter=order).astype(np.int64))
    # a sorter computed on the device, still lazy
    x = xp.asarray(a)
    got = xp.searchsorted(x, xp.asarray(q), sorter=xp.argsort(x))
    assert_exact(got, np.searchsorted(a, q, sorter=order).astype(np.int64))


def test_searchsorted_promotes_scalars_and_empty():
    a = np.array([-0.0, 0.0, 1.0, 1.0, 2.5, np.inf, np.nan], np.float32)
    x = xp.asarray(a)
    assert_exact(xp.searchsorted(x, 1.0), np.int64(2))
    assert_exact(xp.searchsorted(x, 1, side="right"), np.int64(4))
    assert_exact(xp.searchsorted(x, xp.asarray(np.array([0.0, np.nan], np.float32))), np.array([0, 6]))
    xi = xp.asarray(np.array([1, 3, 5], np.int8))
    assert_exact(xp.searchsorted(xi, xp.asarray(np.array([2, 400], np.int16))), np.array([1, 3]))
    assert_exact(xp.searchsorted(xp.asarray(np.zeros(0, np.float32)), x), np.zeros(7, np.int64))
    assert_exact(xp.searchsorted(x, xp.asarray(np.zeros((2, 0), np.float32))), np.zeros((2, 0), np.int64))


def test_searchsorted_rejects_bad_arguments():
    x = xp.asarray(np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match="1-D"):
        xp.searchsorted(xp.asarray(np.ones((2, 2), np.float32)), x)
    with pytest.raises(ValueError, match="side"):
        xp.searchsorted(x, x, side="middle")
    with pytest.raises(TypeError, match="sorter"):
        xp.searchsorted(x, x, sorter=x)


@given(st.data())
def test_searchsorted_hypothesis(data):
    d = data.draw(st.sampled_from(REAL), label="dtype")
    seed = data.draw(st.integers(0, 1000), label="seed")
    pool = sample(d, 6, seed)[:10]
    rng = np.random.default_rng(seed)
    a = np.sort(rng.choice(pool, data.draw(st.integers(1, 30))), kind="stable")
    q = rng.choice(pool, data.draw(st.integers(1, 10)))
    side = data.draw(st.sampled_from(["left", "right"]))
    assert_exact(xp.searchsorted(xp.asarray(a), xp.asarray(q), side=side),
                 np.searchsorted(a, q, side=side).astype(np.int64))


# ------------------------------------------------------------------ where

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_where_every_dtype_broadcasts(d):
    a, b = sample(d, 16, 1)[:12].reshape(3, 4), sample(d, 16, 2)[:4]
    c = np.random.default_rng(0).integers(0, 2, (2, 1, 4)).astype(bool)
    assert_exact(xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(b)), np.where(c, a, b))


def test_where_promotes_and_takes_scalars():
    c = np.array([True, False, True])
    x = np.array([1, 2, 3], np.int8)
    y = np.array([1.5, 2.5, -0.0], np.float32)
    assert_exact(xp.where(xp.asarray(c), xp.asarray(x), xp.asarray(y)), np.where(c, x, y).astype(np.float32))
    assert_exact(xp.where(xp.asarray(c), xp.asarray(x), 7), np.where(c, x, np.int8(7)))
    assert_exact(xp.where(xp.asarray(c), -0.0, xp.asarray(y)), np.where(c, np.float32(-0.0), y))
    got = xp.where(xp.asarray(c), 1.0, 2.0)
    assert got.dtype == DEFAULT_FLOAT
    assert_exact(got, np.where(c, 1.0, 2.0).astype(npdt(DEFAULT_FLOAT)))
    assert_exact(xp.where(xp.asarray(np.array(True)), xp.asarray(x), 0), x)


def test_where_fuses_into_one_kernel():
    x = xp.asarray(np.array([1.0, -2.0, 3.0], np.float32))
    xp.evaluate(x) if hasattr(xp, "evaluate") else None
    xp.debug.reset_counters()
    y = xp.where(x > 0, x * 2, -x)
    assert_exact(y, np.array([2.0, 2.0, 6.0], np.float32))
    assert xp.debug.counters()["dispatches"] == 1


def test_where_rejects_bad_arguments():
    x = xp.asarray(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match="bool"):
        xp.where(x, x, x)
    with pytest.raises(ValueError, match="broadcast"):
        xp.where(x > 0, x, xp.asarray(np.ones(3, np.float32)))
    with pytest.raises(TypeError):
        xp.where(x > 0, x, "a")


# ------------------------------------------------------------------ nonzero

def test_nonzero_is_exported_here():
    from wgarray import _searching_functions

    assert "nonzero" in _searching_functions.__all__
    a = np.array([[0, 1.5, 0], [-0.0, np.nan, 2]], np.float32)
    got = xp.nonzero(xp.asarray(a))
    for g_, w in zip(got, np.nonzero(a)):
        assert_exact(g_, w.astype(np.int64))


def test_where_with_the_condition_alone_is_nonzero():
    # NumPy's and PyTorch's one-argument form (scikit-learn's roc_curve uses it)
    a = np.array([[0.0, 1.0, -0.0], [np.nan, 0.0, 2.0]], np.float32)
    cond = xp.asarray(a) != 0
    got = xp.where(cond)
    want = np.where(a != 0)
    assert len(got) == len(want)
    for g_, w in zip(got, want):
        assert_exact(g_, w.astype(np.int64))
    with pytest.raises(TypeError, match="where: expected both x1 and x2"):
        xp.where(cond, 1.0)
