"""Host cost of repeated calls: a reduction or a step of a loop repeated with the same
structure but a new size or scalar compiles no pipeline and plans no new reduction
kernel, and still gives NumPy's values."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._graph import fusion
from wgarray._kernels import reduce as kr
from wgarray import debug


def _ints(shape, seed):
    """float32 values that are small integers, so sums of a million are exact."""
    return np.random.default_rng(seed).integers(-4, 8, shape).astype(np.float32)


def _realized(host):
    a = xp.asarray(host)
    xp.evaluate(a)
    return a


# (description, call on (xp or np, array, scalar), first shape, second shape). The two
# shapes keep the same lanes-per-row class (a structural choice), so nothing is new.
REPEATS = [
    ("sum_all", lambda ns, a, s: ns.sum(a), (1000, 1000), (700, 900)),
    ("sum_axis0", lambda ns, a, s: ns.sum(a, axis=0), (1000, 1000), (900, 700)),
    ("sum_axis1_scaled", lambda ns, a, s: ns.sum(a * s, axis=1), (300, 1000), (200, 900)),
    ("mean_axis1_scaled", lambda ns, a, s: ns.mean(a * s, axis=1), (300, 1000), (200, 900)),
    ("max_axis0_shifted", lambda ns, a, s: ns.max(a - s, axis=0), (500, 64), (400, 48)),
    ("argmax_all", lambda ns, a, s: ns.argmax(a), (600, 700), (600, 800)),
]


@pytest.mark.parametrize("name,call,shape1,shape2", REPEATS, ids=[r[0] for r in REPEATS])
def test_reduction_repeat_with_new_size_and_scalar_compiles_and_plans_nothing(name, call, shape1, shape2):
    h1, h2 = _ints(shape1, 1), _ints(shape2, 2)
    a1, a2 = _realized(h1), _realized(h2)
    first = call(xp, a1, 2.0)
    np.testing.assert_array_equal(np.asarray(first), call(np, h1, np.float32(2.0)))
    kernels, specs = len(kr._KERNELS), len(fusion._CONTIGUOUS_SPECS)
    debug.reset_counters()
    second = call(xp, a2, 3.0)
    xp.evaluate(second)
    assert debug.counters().get("pipelines_compiled", 0) == 0
    assert len(kr._KERNELS) == kernels
    assert len(fusion._CONTIGUOUS_SPECS) == specs
    np.testing.assert_array_equal(np.asarray(second), call(np, h2, np.float32(3.0)))


def test_reduction_of_contiguous_view_with_offset_matches_numpy():
    # a row block of a realized array: a contiguous Data with an element offset,
    # aligned (4) and unaligned (3) for the vec4 loads
    host = _ints((64, 1000), 3)
    a = _realized(host)
    for start in (4, 3):
        got = xp.sum(a[start:start + 40], axis=1)
        np.testing.assert_array_equal(np.asarray(got), host[start:start + 40].sum(axis=1))
        got = xp.sum(a[start:start + 40])
        assert float(got) == float(host[start:start + 40].sum(dtype=np.float64))


def test_reduction_special_values_through_cached_path():
    host = np.array([1.0, np.nan, 2.0, -0.0] * 300, np.float32)
    a = _realized(host)
    assert np.isnan(float(xp.sum(a)))
    assert np.isnan(float(xp.max(a)))
    neg_host = np.full(1000, -0.0, np.float32)
    # NumPy's sum of negative zeros is +0.0 (its reduction starts from the identity 0.0)
    assert np.signbit(float(xp.sum(_realized(neg_host)))) == np.signbit(neg_host.sum())
    inf = _realized(np.array([np.inf, 1.0] * 500, np.float32))
    assert float(xp.sum(inf)) == np.inf


def test_contiguous_integer_and_small_dtypes_reduce_through_cache():
    for dtype in (np.int32, np.uint8, np.int16):
        host = np.random.default_rng(4).integers(0, 50, (300, 70)).astype(dtype)
        a = _realized(host)
        np.testing.assert_array_equal(np.asarray(xp.sum(a, axis=1)), host.sum(axis=1))
        np.testing.assert_array_equal(np.asarray(xp.max(a, axis=0)), host.max(axis=0))


def test_unique_of_same_array_sorts_once_and_sees_later_writes():
    host = np.random.default_rng(5).integers(0, 5, 20_000).astype(np.int64)
    y = _realized(host)
    np.testing.assert_array_equal(np.asarray(xp.unique_values(y)), np.unique(host))
    debug.reset_counters()
    again = xp.unique_values(y)
    counts = xp.unique_counts(y).counts
    xp.evaluate(again, counts)
    assert debug.counters().get("readbacks", 0) == 0  # no second sort (it reads its count)
    np.testing.assert_array_equal(np.asarray(again), np.unique(host))
    np.testing.assert_array_equal(np.asarray(counts), np.unique(host, return_counts=True)[1])
    y[3] = 9  # the memoized result must not survive a write
    host[3] = 9
    np.testing.assert_array_equal(np.asarray(xp.unique_values(y)), np.unique(host))
    view = y[100:200]  # another view of the same buffer is another key
    np.testing.assert_array_equal(np.asarray(xp.unique_values(view)), np.unique(host[100:200]))
    inv = xp.unique_inverse(y).inverse_indices
    np.testing.assert_array_equal(np.asarray(inv), np.unique(host, return_inverse=True)[1])


@pytest.mark.parametrize("shape", [(40_000, 32), (2048 * 3 + 77, 5), (257 * 16, 128)], ids=str)
def test_column_sums_of_tall_arrays_match_numpy(shape, monkeypatch):
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)  # the path at test sizes
    # tall arrays with few columns are summed as (P, Q, F) plus leftover rows
    host = _ints(shape, 6)
    host[5, 1] = np.nan
    host[7, 2] = np.inf
    host[9, 3 % shape[1]] = -np.inf
    a = _realized(host)
    got = np.asarray(xp.sum(a, axis=0))
    np.testing.assert_array_equal(got, host.sum(axis=0, dtype=np.float64).astype(np.float32))
    zeros_host = np.full(shape, -0.0, np.float32)
    np.testing.assert_array_equal(np.signbit(np.asarray(xp.sum(_realized(zeros_host), axis=0))),
                                  np.signbit(zeros_host.sum(axis=0)))
    clean = _ints(shape, 7)
    c = _realized(clean)
    np.testing.assert_array_equal(np.asarray(xp.sum((c - 1.0) * 2.0, axis=0)), ((clean - 1.0) * 2.0).sum(axis=0))
    np.testing.assert_allclose(np.asarray(xp.var(c, axis=0)), clean.astype(np.float64).var(axis=0), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16, np.int64])
def test_column_sums_of_tall_integer_arrays_match_numpy(dtype, monkeypatch):
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)
    host = np.random.default_rng(8).integers(0, 100, (30_000, 7)).astype(dtype)
    a = _realized(host)
    got = xp.sum(a, axis=0)
    assert got.dtype == xp.asarray(host.sum(axis=0)).dtype
    np.testing.assert_array_equal(np.asarray(got), host.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(xp.sum(a[1000:], axis=0)), host[1000:].sum(axis=0))


def test_column_sum_takes_the_tall_path_only_for_large_arrays(monkeypatch):
    host = _ints((40_000, 32), 11)
    a = _realized(host)
    debug.reset_counters()
    xp.evaluate(xp.sum(a, axis=0))
    direct = debug.counters()["dispatches"]
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)
    debug.reset_counters()
    got = xp.sum(a, axis=0)
    xp.evaluate(got)
    assert debug.counters()["dispatches"] > direct  # (P, Q, F) partials, then their sum
    np.testing.assert_array_equal(np.asarray(got), host.sum(axis=0))


def test_loop_reducing_its_state_keeps_the_pending_chain_short():
    from wgarray._graph import node as g

    host = _ints((1000,), 9)
    y = _realized(host)
    for step in range(1, 41):
        y = y + 1.0
        assert float(xp.sum(y)) == float((host + step).sum(dtype=np.float64))
        assert g.settle(y._node).n_nodes <= kr.REALIZE_PRODUCER_NODES + 1
    np.testing.assert_array_equal(np.asarray(y), host + 40)


def test_reduction_of_a_long_chain_matches_numpy_and_realizes_it_once():
    host = _ints((300, 50), 10)
    x = _realized(host)
    chain, ref = x, host.copy()
    for i in range(30):
        chain = chain * 1.0 + float(i % 3)
        ref = ref * np.float32(1.0) + np.float32(i % 3)
    debug.reset_counters()
    got = xp.sum(chain, axis=1)
    xp.evaluate(got)
    assert debug.counters()["realizations"] == 1  # the chain, once; the reduction reads it
    np.testing.assert_array_equal(np.asarray(got), ref.sum(axis=1))
