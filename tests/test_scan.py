"""Scans (cumulative_sum / cumulative_prod) against NumPy, exactly.

The data are chosen so that every partial result is exact in the dtype (small
integers as floats, factors of +-1, integers that wrap): then any order of combination
gives NumPy's bits, and the tests compare bit for bit, NaN, +-inf and +-0 included.
Sizes cross every threshold of the kernels (the thread layout's rows and chunks, the
tile layout's rounds and tiles, a second level of offsets), along every axis, with
views and fused producers as inputs, in every dtype the device offers.
"""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._kernels import scan as kscan
from wgarray import debug
from wgarray._wgsl import scan as sc
from conftest import COMPLEX, DTYPES, INTEGER, REAL_FLOAT, assert_exact, ids, npdt

# 1-D lengths on both sides of each threshold: the thread layout's longest row, a round
# of the tile layout, a tile, and many tiles with a partial last one.
T = sc.TILE
LENGTHS = [1, 2, kscan.SCAN_THREAD_MAX - 1, kscan.SCAN_THREAD_MAX, kscan.SCAN_THREAD_MAX + 1, sc.ROUND - 1, sc.ROUND,
           sc.ROUND + 1, sc.LOOKBACK_ROUND, sc.LOOKBACK_ROUND + 1, T - 1, T, T + 1, 3 * T + 4, 5 * T + 7]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def acc_of(d):
    return xp.int64 if d.kind in "bi" else xp.uint64 if d.kind == "u" else d


def exact_sum_data(d, shape, seed=0, specials=False):
    """Values whose partial sums are exact in ``d``'s accumulator (floats: small
    integers), optionally with NaN/inf/-0 sprinkled in."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    t = npdt(d)
    if d.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif d.kind in "iu":
        info = np.iinfo(t)
        a = rng.integers(info.min, info.max, n, endpoint=True, dtype=t)  # sums wrap in 64 bits
    else:
        a = rng.integers(-3, 4, n).astype(t)
        if d.kind == "c":
            a = a + 1j * rng.integers(-3, 4, n).astype(t)
        if specials and n >= 16:
            idx = rng.choice(n, max(1, n // 200), replace=False)
            a[idx] = rng.choice(SPECIALS, idx.size)
    return a.reshape(shape)


def exact_prod_data(d, shape, seed=0, specials=False):
    """Factors whose partial products are exact (floats: +-1; integers: anything, they wrap)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    t = npdt(d)
    if d.kind == "b":
        a = rng.random(n) < 0.999
    elif d.kind in "iu":
        info = np.iinfo(t)
        a = rng.integers(max(info.min, -(1 << 20)), min(info.max, 1 << 20), n, endpoint=True).astype(t)
    elif d.kind == "c":
        a = np.array([1, -1, 1j, -1j], t)[rng.integers(0, 4, n)]
    else:
        a = rng.choice(np.array([1.0, -1.0], t), n)
        if specials and n >= 16:
            idx = rng.choice(n, max(1, n // 500), replace=False)
            a[idx] = rng.choice(SPECIALS, idx.size)
    return a.reshape(shape)


def check(a, kind, axis=None, include_initial=False, dtype=None, x=None):
    f = xp.cumulative_sum if kind == "sum" else xp.cumulative_prod
    ref = np.cumulative_sum if kind == "sum" else np.cumulative_prod
    x = xp.asarray(a) if x is None else x
    got = f(x, axis=axis, include_initial=include_initial, dtype=dtype)
    want_dtype = dtype if dtype is not None else acc_of(x.dtype)
    with np.errstate(all="ignore"):
        want = ref(a, axis=axis, include_initial=include_initial, dtype=npdt(want_dtype))
    msg = f"{kind} {a.shape} axis={axis} inc={include_initial}"
    if kind == "prod" and want_dtype.kind == "c":
        # The sign of a zero part of a complex product depends on the grouping
        # ((1+0j) * (-0-1j) is 0-1j): values must be equal, zero signs may differ.
        assert got.dtype == want_dtype and got.shape == want.shape, msg
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=msg)
        return
    assert_exact(got, want, dtype=want_dtype, msg=msg)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("inc", [False, True])
def test_cumulative_sum_float32_every_threshold_with_specials(n, inc):
    check(exact_sum_data(xp.float32, (n,), seed=n, specials=True), "sum", include_initial=inc)


@pytest.mark.parametrize("n", [255, 257, T + 1, 3 * T + 4])
@pytest.mark.parametrize("inc", [False, True])
def test_cumulative_prod_float32_every_threshold_with_specials(n, inc):
    check(exact_prod_data(xp.float32, (n,), seed=n, specials=True), "prod", include_initial=inc)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_cumulative_sum_and_prod_every_dtype_past_a_tile(d):
    n = T + 2053
    check(exact_sum_data(d, (n,), seed=1, specials=True), "sum")
    check(exact_sum_data(d, (n,), seed=2), "sum", include_initial=True)
    check(exact_prod_data(d, (n,), seed=3, specials=True), "prod")
    check(exact_prod_data(d, (3, 300), seed=4), "prod", axis=0, include_initial=True)


@pytest.mark.parametrize("d", INTEGER, ids=ids(INTEGER))
def test_integer_scans_wrap_like_numpy_in_their_own_dtype(d):
    a = exact_sum_data(d, (2, 20001), seed=5)
    check(a, "sum", axis=1, dtype=d)
    check(a, "prod", axis=1, dtype=d)
    check(a, "sum", axis=0, dtype=d, include_initial=True)


@pytest.mark.parametrize("shape", [(3, 700, 5), (4, 5, 3000), (300, 2, 7), (2, 17000)])
@pytest.mark.parametrize("inc", [False, True])
def test_every_axis_of_nd_arrays(shape, inc):
    a = exact_sum_data(xp.float32, shape, seed=6, specials=True)
    for axis in range(-len(shape), len(shape)):
        check(a, "sum", axis=axis, include_initial=inc)
    b = exact_sum_data(xp.int32, shape, seed=7)
    check(b, "sum", axis=0, include_initial=inc)
    check(b, "prod", axis=-1, include_initial=inc)


def test_views_and_fused_producers_as_input():
    a = exact_sum_data(xp.float32, (600, 90), seed=8, specials=True)
    base = xp.asarray(a)
    check(a.T, "sum", axis=1, x=base.T)
    check(a.T, "sum", axis=0, include_initial=True, x=base.T)
    check(a[::3, 1::2], "sum", axis=0, x=base[::3, 1::2])
    check(a[::-1, 5], "sum", x=base[::-1, 5])
    row = a[7]
    check(np.broadcast_to(row, (400, 90)), "sum", axis=0, x=xp.broadcast_to(base[7], (400, 90)))
    long = exact_sum_data(xp.float32, (70001,), seed=9)
    lx = xp.asarray(long)
    check(long * 2 - 1, "sum", x=lx * 2.0 - 1.0)
    check(long[1::2], "sum", x=lx[1::2])
    check((long > 0).astype(np.int32), "sum", x=xp.astype(lx > 0, xp.int32))


@pytest.mark.parametrize("tile,chunk,thread_max", [(256, 2, 4), (1024, 3, 16)])
def test_deep_recursion_with_small_tiles(monkeypatch, tile, chunk, thread_max):
    # The tile and chunk are kernel parameters: small ones force several levels of
    # offsets at sizes lavapipe scans quickly.
    monkeypatch.setattr(sc, "TILE", tile)
    monkeypatch.setattr(sc, "CHUNK", chunk)
    monkeypatch.setattr(kscan, "SCAN_THREAD_MAX", thread_max)
    a = exact_sum_data(xp.float32, (min(3 * tile * tile, 300_000) + 13,), seed=10, specials=True)
    check(a, "sum")
    check(a, "sum", include_initial=True)
    b = exact_sum_data(xp.int64, (3, 400, 2), seed=11)
    check(b, "sum", axis=1, include_initial=True)
    check(b, "prod", axis=1)
    c = exact_prod_data(xp.float32, (5, 3001), seed=12, specials=True)
    check(c, "prod", axis=1)


@pytest.mark.parametrize("d", COMPLEX + REAL_FLOAT, ids=ids(COMPLEX + REAL_FLOAT))
def test_running_sum_keeps_negative_zero_and_nan_inf_order(d):
    t = npdt(d)
    neg = np.full(20000, -0.0, t)
    check(neg, "sum")
    check(neg, "sum", include_initial=True)
    mix = np.zeros(20000, t)
    mix[100], mix[5000], mix[17000] = np.inf, -np.inf, np.nan
    check(mix, "sum")
    check(mix, "prod")


def test_empty_and_degenerate_shapes():
    for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 4), 0), ((0, 4), 1), ((2, 1), 1), ((1, 20000), 0)]:
        a = np.ones(shape, np.float32)
        for inc in (False, True):
            check(a, "sum", axis=axis, include_initial=inc)
            check(a, "prod", axis=axis, include_initial=inc)


def _dispatches(make):
    xp.evaluate(make())
    debug.reset_counters()
    r = make()
    xp.evaluate(r)
    return debug.counters()["dispatches"], r


def test_dispatches_of_each_layout():
    x = xp.asarray(np.ones(5 * T + 3, np.float32))
    xp.evaluate(x)
    # float32: the look-back state's fill, then one pass; one pass within a round
    assert _dispatches(lambda: xp.cumulative_sum(x))[0] == 2
    assert _dispatches(lambda: xp.cumulative_prod(x[:sc.ROUND]))[0] == 1
    assert _dispatches(lambda: xp.cumulative_sum(x[:200]))[0] == 1
    # other accumulators: tile sums, their scan, the rescan; one pass within a tile
    assert _dispatches(lambda: xp.cumulative_sum(x, dtype=xp.complex64))[0] == 3
    assert _dispatches(lambda: xp.cumulative_sum(x[:T], dtype=xp.complex64))[0] == 1
    m = xp.asarray(np.ones((1000, 300), np.float32))
    xp.evaluate(m)
    n, r = _dispatches(lambda: xp.cumulative_sum(m, axis=0))
    assert n == 3  # chunks of the columns, their offsets, the rescan
    assert_exact(r, np.cumsum(np.ones((1000, 300), np.float32), axis=0))


@pytest.mark.parametrize("polls", [0, 1])
def test_lookback_when_predecessors_are_not_waited_for(monkeypatch, polls):
    # 0 polls: every workgroup reduces all the tiles before it from the input itself
    # (the path a device that runs workgroups one after another, or out of order, takes)
    monkeypatch.setattr(sc, "LOOKBACK_POLLS", polls)
    R = sc.LOOKBACK_ROUND
    for n in (sc.ROUND + 1, R + 1, 4 * R, 6 * R + 5):
        a = exact_sum_data(xp.float32, (n,), seed=n, specials=True)
        check(a, "sum")
        check(a, "sum", include_initial=True)
        check(exact_prod_data(xp.float32, (n,), seed=n, specials=True), "prod")
    b = exact_sum_data(xp.float32, (3, 3 * R + 7), seed=13, specials=True)
    check(b, "sum", axis=1)
    check(b, "sum", axis=1, include_initial=True)
    neg = np.full(5 * R, -0.0, np.float32)
    check(neg, "sum")


@pytest.mark.parametrize("tiles", [sc.LOOKBACK_WINDOW - 1, sc.LOOKBACK_WINDOW + 1, 3 * sc.LOOKBACK_WINDOW + 5])
def test_lookback_across_more_tiles_than_its_window(tiles):
    # the window step combines up to LOOKBACK_WINDOW predecessors at once; rows of more
    # tiles than that take several windows (or stop at an unpublished tile) per look-back
    n = tiles * sc.LOOKBACK_ROUND + 3
    a = exact_sum_data(xp.float32, (n,), seed=tiles, specials=False)
    check(a, "sum")
    check(a, "sum", include_initial=True)
    check(exact_prod_data(xp.float32, (n,), seed=tiles), "prod")
    b = exact_sum_data(xp.float32, (2, n // 2), seed=tiles + 1, specials=True)
    check(b, "sum", axis=1)


def test_scan_pipelines_are_keyed_by_structure_not_size():
    for n in (70_000, 20_001):
        xp.evaluate(xp.cumulative_sum(xp.asarray(np.ones(n, np.float32)) * 2.0))
    debug.reset_counters()
    for n in (50_000, 90_004, 33_333):
        r = xp.cumulative_sum(xp.asarray(np.ones(n, np.float32)) * 2.0)
        assert float(r[-1]) == 2.0 * n
    assert debug.counters()["pipelines_compiled"] == 0


@pytest.mark.parametrize("n", [5, 300, 5000])
def test_scan_of_a_heavy_input_is_the_scan_of_the_stored_input(n):
    # tan's helpers (correctly rounded float32 division, argument reduction) are heavy to
    # compile in the scan's unrolled loads: the producer is stored first, so the scan has
    # the bits of the scan of the stored values, and NumPy's values
    h = (np.random.default_rng(n).standard_normal(n) * 3).astype(np.float32)
    x = xp.asarray(h)
    assert kscan._heavy(xp.tan(x)._node)
    assert not kscan._heavy((x * 2 + 1)._node)
    stored = xp.tan(x)
    xp.evaluate(stored)
    for fn in (xp.cumulative_sum, xp.cumulative_prod):
        got = fn(xp.tan(x))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(fn(stored)))
    np.testing.assert_allclose(np.asarray(xp.cumulative_sum(xp.tan(x))), np.cumsum(np.tan(h.astype(np.float64))),
                               rtol=1e-4, atol=1e-3 * np.sqrt(n))
