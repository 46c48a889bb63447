"""Arrays past the storage-binding limit: elementwise work and reductions run in slabs
over windows of their buffers (``wgarray._graph.slabs``), transfers in chunks, and the
functions that do not handle such arrays yet raise a MemoryError naming themselves.

Most tests lower the binding limit (``debug.binding_limit``) so that arrays of a few
kilobytes take those paths, with slab and window edges at odd places; one test uses an
array several times lavapipe's real 128 MiB limit."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug

LIMIT = 8192  # bytes: a (300, 70) float32 array is ten bindings' worth


def _rng():
    return np.random.default_rng(7)


@pytest.fixture
def limited():
    with debug.binding_limit(LIMIT):
        yield


def _both(f, *hosts):
    """f on wgarray copies of ``hosts``: once unlimited, once under the lowered limit."""
    arrays = [xp.asarray(h) for h in hosts]
    ref = np.asarray(f(*arrays))
    with debug.binding_limit(LIMIT):
        got = np.asarray(f(*[xp.asarray(h) for h in hosts]))
    return got, ref


@pytest.mark.parametrize("case", ["chain", "broadcast", "strided", "transposed", "offset_view", "reversed",
                                  "int8", "bool", "float64", "complex64", "iota", "const"])
def test_elementwise_in_slabs_is_bit_for_bit_the_single_kernel(case):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    b = rng.standard_normal((70,)).astype(np.float32)
    a[3, 5], a[7, 9], a[11, 2] = np.nan, np.inf, -0.0
    fns = {
        "chain": (lambda x, y: xp.exp(-(x - 1.5) ** 2 / 2) * 3 + x, np.float32),
        "broadcast": (lambda x, y: x * y - y[None, :] / 2, np.float32),
        "strided": (lambda x, y: x[1::3, ::2] + 1, np.float32),
        "transposed": (lambda x, y: x.T * 2, np.float32),
        "offset_view": (lambda x, y: x[17:283, 3:69] - y[3:69], np.float32),
        "reversed": (lambda x, y: xp.flip(x, axis=0) + x, np.float32),
        "int8": (lambda x, y: xp.astype(xp.clip(x * 20, -100, 100), xp.int8) + 1, np.int8),
        "bool": (lambda x, y: (x > y) | (x < -1), np.bool_),
        "float64": (lambda x, y: xp.astype(x, xp.float64) * 1e300, np.float64),
        "complex64": (lambda x, y: xp.astype(x, xp.complex64) * (1 + 2j), np.complex64),
        "iota": (lambda x, y: xp.reshape(xp.arange(x.size, dtype=xp.int32), x.shape) * 3, np.int32),
        "const": (lambda x, y: xp.full(x.shape, 2.5, dtype=xp.float32) + 0, np.float32),
    }
    fn, dtype = fns[case]
    if dtype is np.float64 and not xp.__array_namespace_info__().dtypes().get("float64"):
        pytest.skip("the device has no float64 (probed by the namespace's dtype list)")
    got, ref = _both(fn, a, b)
    assert got.dtype == dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def test_elementwise_in_slabs_matches_numpy(limited):
    rng = _rng()
    a = rng.standard_normal((7, 41, 33)).astype(np.float32)
    x = xp.asarray(a)
    np.testing.assert_allclose(np.asarray(xp.sin(x) * x[:, :1, :] + x[0]), np.sin(a) * a[:, :1, :] + a[0], rtol=1e-6,
                               atol=1e-6)
    e = np.empty((0, 5000), np.float32)
    assert np.asarray(xp.asarray(e) + 1).shape == (0, 5000)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)])
def test_reductions_in_slabs_match_numpy(axis):
    rng = _rng()
    a = rng.standard_normal((7, 50, 33)).astype(np.float32)
    x = xp.asarray(a)
    with debug.binding_limit(LIMIT):
        np.testing.assert_allclose(np.asarray(xp.sum(x + 1, axis=axis)), np.sum(a.astype(np.float64) + 1, axis=axis),
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(np.asarray(xp.mean(x, axis=axis)), np.mean(a.astype(np.float64), axis=axis),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(xp.std(x, axis=axis, correction=1)),
                                   np.std(a.astype(np.float64), axis=axis, ddof=1), rtol=1e-5)
        np.testing.assert_array_equal(np.asarray(xp.max(x, axis=axis)), np.max(a, axis=axis))
        np.testing.assert_array_equal(np.asarray(xp.min(x * 2, axis=axis)), np.min(a * 2, axis=axis))
        np.testing.assert_array_equal(np.asarray(xp.any(x > 2.5, axis=axis)), np.any(a > 2.5, axis=axis))
        np.testing.assert_array_equal(np.asarray(xp.all(x > -2.5, axis=axis)), np.all(a > -2.5, axis=axis))


def test_reductions_in_slabs_keep_nan_integers_and_products(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    a[200, 30] = np.nan
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.max(x, axis=0)), np.max(a, axis=0))
    assert np.isnan(float(xp.sum(x)))
    i8 = np.clip(a * 30, -120, 120).astype(np.int8)
    y = xp.asarray(i8)
    assert int(xp.sum(y)) == int(i8.astype(np.int64).sum())
    np.testing.assert_array_equal(np.asarray(xp.max(y, axis=1)), i8.max(axis=1))
    p = (a[:, :4] * 0 + 1.0001).astype(np.float32)
    np.testing.assert_allclose(np.asarray(xp.prod(xp.asarray(p), axis=0)), np.prod(p.astype(np.float64), axis=0),
                               rtol=1e-5)


def test_writes_into_an_array_past_the_limit_match_numpy(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    b = a.copy()
    x = xp.asarray(a)
    v = rng.standard_normal(300).astype(np.float32)
    x[:, 3] = xp.asarray(v)
    b[:, 3] = v
    x[5:250, 10:60] = x[5:250, 10:60] * 2
    b[5:250, 10:60] *= 2
    x[x > 1.5] = 0.0
    b[b > 1.5] = 0
    x[299, 69] = -7.0
    b[299, 69] = -7.0
    for i in range(60):  # a run of element stores (a scatter dispatch into a small buffer)
        x[i, i] = float(i)
        b[i, i] = i
    d = xp.asarray(np.float32(2.5))
    for i in range(60, 70):
        x[i, i] = d
        b[i, i] = 2.5
    x += 1
    b += 1
    np.testing.assert_array_equal(np.asarray(x), b)
    view = x[100:200]
    view[...] = 4.0
    b[100:200] = 4.0
    np.testing.assert_array_equal(np.asarray(x), b)


def test_element_writes_into_a_narrow_array_past_the_limit(limited):
    host = (np.arange(20000) % 7).astype(np.int8)
    x = xp.asarray(host)
    for i in (0, 1, 4097, 8191, 8192, 19999):
        x[i] = -3
        host[i] = -3
    np.testing.assert_array_equal(np.asarray(x), host)


def test_small_views_of_an_array_past_the_limit_reach_every_kernel_family(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.sort(x[:20], axis=0)), np.sort(a[:20], axis=0))
    np.testing.assert_allclose(np.asarray(xp.cumulative_sum(x[100:110], axis=1)), np.cumsum(a[100:110], axis=1),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(x[250:260][x[250:260] > 0]), a[250:260][a[250:260] > 0])
    assert float(x[123, 45]) == a[123, 45]


@pytest.mark.parametrize("case", ["gram", "right", "transposed", "strided", "outer"])
def test_matmul_in_blocks_matches_numpy(limited, case):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    w = rng.standard_normal((70, 50)).astype(np.float32)
    x, W = xp.asarray(a), xp.asarray(w)
    got, want = {
        "gram": (lambda: x.T @ x, lambda: a.T @ a),
        "right": (lambda: x @ W, lambda: a @ w),
        "transposed": (lambda: W.T @ x.T, lambda: w.T @ a.T),
        "strided": (lambda: x[3:290:2] @ W[:, 1:40], lambda: a[3:290:2] @ w[:, 1:40]),
        "outer": (lambda: xp.matmul(x, x.T), lambda: a @ a.T),
    }[case]
    ref = want().astype(np.float64)
    out = np.asarray(got())
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())


def test_concat_and_stack_past_the_limit_match_numpy(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    b = rng.standard_normal((120, 70)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    np.testing.assert_array_equal(np.asarray(xp.concat([x, y, x[:5]])), np.concatenate([a, b, a[:5]]))
    np.testing.assert_array_equal(np.asarray(xp.concat([x, x * 2], axis=1)), np.concatenate([a, a * 2], axis=1))
    np.testing.assert_array_equal(np.asarray(xp.stack([x, x + 1], axis=1)), np.stack([a, a + 1], axis=1))
    np.testing.assert_array_equal(np.asarray(xp.concat([x, y], axis=None)), np.concatenate([a.ravel(), b.ravel()]))


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
@pytest.mark.parametrize("where", ["first", "last", "tie", "nan"])
def test_argmax_argmin_over_every_axis_past_the_limit(limited, kind, where):
    a = _rng().standard_normal((300, 70)).astype(np.float32)
    if where == "first":
        a[0, 1] = 50 if kind == "argmax" else -50
    elif where == "last":
        a[299, 69] = 50 if kind == "argmax" else -50
    elif where == "tie":  # equal extremes in different slabs: the first wins
        a[20, 3] = a[250, 4] = 50 if kind == "argmax" else -50
    else:
        a[260, 5] = a[280, 6] = np.nan
    got = int(getattr(xp, kind)(xp.asarray(a)))
    assert got == int(getattr(np, kind)(a))
    i8 = (np.arange(21000) % 97).astype(np.int16)
    assert int(getattr(xp, kind)(xp.asarray(i8))) == int(getattr(np, kind)(i8))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_argsort_and_scans_along_an_axis_past_the_limit(limited, axis):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    a[::17, ::5] = 0.5  # ties: the sort is stable
    a[3, 4] = np.nan
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis)), np.sort(a, axis=axis))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=axis)), np.argsort(a, axis=axis, kind="stable"))
    # descending, NaN still last: NumPy's ascending sort of -a, negated
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis, descending=True)), -np.sort(-a, axis=axis))
    i = (rng.integers(0, 5, (300, 70))).astype(np.int32)
    got = np.asarray(xp.cumulative_sum(xp.asarray(i), axis=axis, include_initial=True))
    want = np.cumsum(i, axis=axis, dtype=np.int64)
    want = np.concatenate([np.zeros_like(np.take(want, [0], axis=axis)), want], axis=axis)
    np.testing.assert_array_equal(got, want)


def _long_rows():
    rng = np.random.default_rng(3)
    return {
        "normal": rng.standard_normal(4000).astype(np.float32),
        "few_values": rng.integers(0, 7, 4000).astype(np.float32),
        "mostly_equal": np.where(rng.random(4000) < 0.999, 1.0, rng.standard_normal(4000)).astype(np.float32),
        "nan_and_signed_zeros": rng.permutation(np.concatenate([np.full(600, np.nan), np.zeros(1000), -np.zeros(1000),
                                                                rng.standard_normal(1400)])).astype(np.float32),
        "int8": rng.integers(-128, 128, 9000).astype(np.int8),
        "descending_input": np.arange(4000, 0, -1).astype(np.float32),
    }


@pytest.mark.parametrize("case", list(_long_rows()))
def test_sort_of_one_row_past_the_limit_matches_numpy(limited, case):
    a = _long_rows()[case]
    x = xp.asarray(a)
    got = np.asarray(xp.sort(x))
    want = np.sort(a, kind="stable")
    np.testing.assert_array_equal(got, want)
    if a.dtype.kind == "f":  # stable: -0 and +0 keep their order, as in NumPy's stable sort
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(np.asarray(xp.sort(x, descending=True)), -np.sort(-a, kind="stable"))
    else:
        np.testing.assert_array_equal(np.asarray(xp.sort(x, descending=True)), want[::-1])


@pytest.mark.parametrize("case", list(_long_rows()))
def test_argsort_of_one_row_past_the_limit_matches_numpy(limited, case):
    a = _long_rows()[case]
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.argsort(x)), np.argsort(a, kind="stable"))
    # descending and stable: equal keys keep their order, NaN last
    key = -a if a.dtype.kind == "f" else ~a
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, descending=True)), np.argsort(key, kind="stable"))


@pytest.mark.parametrize("case", ["normal", "few_values", "nan_and_signed_zeros", "int8"])
def test_unique_functions_past_the_limit_match_numpy(limited, case):
    a = _long_rows()[case]
    x = xp.asarray(a)
    got = xp.unique_all(x)
    # NumPy collapses NaNs into one; the standard keeps every NaN (they compare unequal)
    want_vals, want_idx, want_inv, want_counts = np.unique(a, return_index=True, return_inverse=True,
                                                           return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(np.asarray(got.values), want_vals)
    np.testing.assert_array_equal(np.asarray(got.counts), want_counts)
    vals = np.asarray(got.values)
    np.testing.assert_array_equal(vals[np.asarray(got.inverse_indices)], a)  # values[inverse] rebuilds x
    np.testing.assert_array_equal(a[np.asarray(got.indices)], vals)  # indices point at each value
    np.testing.assert_array_equal(np.asarray(xp.unique_values(x)), want_vals)


@pytest.mark.parametrize("include_initial", [False, True])
def test_scan_of_a_vector_past_the_limit_carries_between_slabs(limited, include_initial):
    i = (np.arange(10000) % 13 - 6).astype(np.int32)
    got = np.asarray(xp.cumulative_sum(xp.asarray(i), include_initial=include_initial))
    want = np.cumsum(i, dtype=np.int64)
    if include_initial:
        want = np.concatenate([[0], want])
    np.testing.assert_array_equal(got, want)
    p = np.full(5000, 1.0001, np.float64)
    if xp.__array_namespace_info__().dtypes().get("float64"):
        np.testing.assert_allclose(np.asarray(xp.cumulative_prod(xp.asarray(p))), np.cumprod(p), rtol=1e-12)


@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("axis", [0, 1])
def test_fft_along_an_axis_past_the_limit(limited, func, axis):
    rng = _rng()
    a = rng.standard_normal((96, 60)).astype(np.float32)
    if func in ("fft", "ifft", "irfft"):
        a = (a + 1j * rng.standard_normal((96, 60))).astype(np.complex64)
    got = np.asarray(getattr(xp.fft, func)(xp.asarray(a), axis=axis))
    want = getattr(np.fft, func)(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), axis=axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_boolean_mask_reads_past_the_limit_match_numpy(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(x[x > 0.5]), a[a > 0.5])
    rows = a[:, 0] > 0
    np.testing.assert_array_equal(np.asarray(x[xp.asarray(rows)]), a[rows])
    np.testing.assert_array_equal(np.asarray(x[x > 100]), a[a > 100])  # nothing kept


def test_integer_indexing_and_take_past_the_limit_match_numpy(limited):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    x = xp.asarray(a)
    rows = rng.integers(0, 300, 50)
    np.testing.assert_array_equal(np.asarray(xp.take(x, xp.asarray(rows), axis=0)), a[rows])
    np.testing.assert_array_equal(np.asarray(x[xp.asarray(rows), 3]), a[rows, 3])
    np.testing.assert_array_equal(np.asarray(x.T[5, xp.asarray(rows)]), a.T[5, rows])
    np.testing.assert_array_equal(np.asarray(x[xp.asarray([-1, 0, 299])]), a[[-1, 0, 299]])
    with pytest.raises(IndexError):
        np.asarray(x[xp.asarray([0, 300])])
    h = a.copy()
    uniq = rng.permutation(300)[:40]
    x[uniq] = -2.0  # distinct indices known on the host (a NumPy index): written in place, a pass per window
    h[uniq] = -2.0
    np.testing.assert_array_equal(np.asarray(x), h)
    x[np.array([3, 250, 3])] = 7.0  # repeated indices: the scatter (a sort of the updates), the last wins
    h[[3, 250, 3]] = 7.0
    np.testing.assert_array_equal(np.asarray(x), h)
    rows = rng.integers(-300, 300, 500)  # device indices, repeated; 140 KB of updates: sorted in runs
    vals = rng.standard_normal((500, 70)).astype(np.float32)
    x[xp.asarray(rows)] = xp.asarray(vals)
    h[rows] = vals
    np.testing.assert_array_equal(np.asarray(x), h)
    r, c = rng.integers(0, 300, 200), rng.integers(0, 70, 200)
    v = rng.standard_normal(200).astype(np.float32)
    x[xp.asarray(r), xp.asarray(c)] = xp.asarray(v)
    h[r, c] = v
    np.testing.assert_array_equal(np.asarray(x), h)
    with pytest.raises(IndexError, match="^__setitem__: "):
        x[xp.asarray([0, 300])] = 1.0
    np.testing.assert_array_equal(np.asarray(x), h)  # unchanged
    b = xp.asarray(a.astype(np.int8))
    hb = a.astype(np.int8)
    b[xp.asarray(rows)] = 5  # 8-bit elements share words
    hb[rows] = 5
    np.testing.assert_array_equal(np.asarray(b), hb)


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_argmax_argmin_along_whole_rows_past_the_limit(limited, kind):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    a[5, 7] = np.nan
    a[9, :3] = 9.0 if kind == "argmax" else -9.0  # ties: the first wins
    np.testing.assert_array_equal(np.asarray(getattr(xp, kind)(xp.asarray(a), axis=1)), getattr(np, kind)(a, axis=1))
    b = rng.integers(-50, 50, (40, 9, 30)).astype(np.int16)
    got = np.asarray(getattr(xp, kind)(xp.reshape(xp.asarray(b), (40, 270)), axis=-1, keepdims=True))
    np.testing.assert_array_equal(got, getattr(np, kind)(b.reshape(40, 270), axis=-1, keepdims=True))


@pytest.mark.parametrize("name", ["eig", "slogdet"])
def test_functions_that_cannot_run_under_the_limit_raise_naming_themselves(limited, name):
    """Under 8 KiB the LU panels' 64 x 64 leaf blocks do not fit a binding: eig (its
    sign iteration inverts by LU panels) and slogdet refuse, naming themselves."""
    x = xp.asarray(_rng().standard_normal((300, 70)).astype(np.float32))
    spd = x.T @ x + 70 * xp.eye(70)  # one 19.6 KB matrix
    calls = {"eig": lambda: xp.linalg.eig(spd)[0], "slogdet": lambda: xp.linalg.slogdet(spd)[1]}
    with pytest.raises(MemoryError, match=rf"^{name}: .*(binding|limit)"):
        np.asarray(calls[name]())


def test_binding_limit_switch_checks_its_argument():
    with pytest.raises(ValueError, match="binding_limit: expected a multiple of 16"):
        with debug.binding_limit(5000):
            pass


def _real_limit_case():
    dev = xp.asarray(0).device
    limit = dev.max_binding_bytes
    if dev.max_buffer_bytes < 3 * limit or 3 * limit > 1 << 30:
        pytest.skip(f"the device's buffers ({dev.max_buffer_bytes} bytes) are not several times its binding "
                    f"limit ({limit} bytes) within 1 GiB")
    return limit


def test_an_array_several_times_the_real_binding_limit():
    limit = _real_limit_case()
    n = (5 * limit) // (2 * 4) + 12345  # 2.5 bindings of float32, an odd length
    host = np.arange(n, dtype=np.float32) % 1000
    x = xp.asarray(host)
    assert x.device.big
    y = x * 2 + 1
    back = np.asarray(y)
    np.testing.assert_array_equal(back[::9973], host[::9973] * 2 + 1)
    assert back[-1] == host[-1] * 2 + 1
    if "float64" in xp.__array_namespace_info__().dtypes(device=x.device):
        assert float(xp.sum(x, dtype=xp.float64)) == float(host.astype(np.float64).sum())
    else:  # a float32 sum of ~10^8 terms: its own rounding
        np.testing.assert_allclose(float(xp.sum(x)), float(host.astype(np.float64).sum()), rtol=1e-5)
    assert int(xp.sum(xp.astype(x, xp.int32))) == int(host.astype(np.int64).sum())
    m = xp.reshape(x[: n - n % 8], (-1, 8))
    np.testing.assert_allclose(np.asarray(xp.mean(m, axis=0)), host[: n - n % 8].reshape(-1, 8).astype(np.float64).mean(axis=0),
                               rtol=1e-5)
    assert float(xp.max(x)) == 999.0
    ones = xp.ones((n,), dtype=xp.int32)
    assert int(xp.sum(ones)) == n


def test_index_grids_past_2_32_elements_are_taken_where_their_values_fit_32_bits():
    from wgarray._graph import node as g

    dev = xp.asarray(0).device
    # a flat index past 2**32 would wrap in u32: refused at construction
    with pytest.raises(MemoryError, match=r"index grid whose values fit 32 bits, got shape \(65536, 65537\)"):
        g.Iota((1 << 16, (1 << 16) + 1), dev)
    assert g.Iota((1 << 16, 1 << 16), dev).size == 1 << 32
    # a row index and a column index of a wide grid stay below 2**32: taken
    rows = g.Iota((1 << 17, 1 << 16), dev, strides=(1, 0))
    cols = g.Iota((1 << 17, 1 << 16), dev, strides=(0, 1))
    assert rows.size == cols.size == 1 << 33
    assert (rows.offset, rows.strides, cols.strides) == (0, (1, 0), (0, 1))


# ----------------------------------------------- arrays past the largest buffer: segments

SEG = 16384  # bytes a segment (and a binding): a (300, 70) float32 array spans six


@pytest.fixture
def segmented():
    with debug.segment_limit(SEG):
        yield


def test_a_segmented_array_round_trips_and_computes_like_numpy(segmented):
    from wgarray._runtime.runtime import SegmentedBuffer

    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    b = rng.standard_normal((70,)).astype(np.float32)
    x = xp.asarray(a)
    assert type(x._node.buf) is SegmentedBuffer and len(x._node.buf.parts) == 6
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)  # DLPack's CPU export reads each segment
    np.testing.assert_array_equal(np.asarray(x[7:291:3, 1:]), a[7:291:3, 1:])  # reads across segments
    y = xp.exp(x[1:] * 0.5) - xp.asarray(b)
    np.testing.assert_allclose(np.asarray(y), np.exp(a[1:] * 0.5) - b, rtol=1e-6, atol=1e-6)
    assert type(y._node.buf) is SegmentedBuffer  # the result is segmented too
    np.testing.assert_array_equal(np.asarray(x.T + 0), a.T)
    np.testing.assert_array_equal(np.asarray((x > 0)[5:]), a[5:] > 0)  # a packed result across segments
    np.testing.assert_allclose(float(xp.sum(x[3:])), a[3:].astype(np.float64).sum(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(xp.mean(x, axis=0)), a.astype(np.float64).mean(axis=0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(xp.max(x[11:], axis=1)), a[11:].max(axis=1))
    assert int(xp.argmin(x)) == int(np.argmin(a))
    np.testing.assert_allclose(np.asarray(x[2:].T @ x[2:]), (a[2:].T @ a[2:]).astype(np.float64), rtol=1e-4,
                               atol=1e-3)


def test_writes_sorts_and_joins_on_segmented_arrays(segmented):
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    h = a.copy()
    x = xp.asarray(a)
    x[:, 5] = -1.0
    h[:, 5] = -1.0
    x[50:120] = x[50:120] * 3
    h[50:120] *= 3
    for i in range(0, 300, 7):
        x[i, 69 - i % 70] = float(i)
        h[i, 69 - i % 70] = i
    np.testing.assert_array_equal(np.asarray(x), h)
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=1)), np.sort(h, axis=1))
    np.testing.assert_array_equal(np.asarray(xp.concat([x, x[:10]])), np.concatenate([h, h[:10]]))
    np.testing.assert_array_equal(np.asarray(x[x > 1]), h[h > 1])
    flat = xp.reshape(x, (-1,))
    np.testing.assert_array_equal(np.asarray(xp.sort(flat)), np.sort(h.ravel()))  # one row across segments
    c = np.asarray(xp.cumulative_sum(flat))
    np.testing.assert_allclose(c, np.cumsum(h.ravel().astype(np.float64)), rtol=1e-4, atol=1e-2)


def test_segment_limit_switch_checks_its_argument():
    with pytest.raises(ValueError, match="segment_limit: expected a power of two"):
        with debug.segment_limit(10000):
            pass


@pytest.mark.parametrize("case", ["stack", "transposed", "broadcast_b", "one_too_big", "vecdot_strided", "int32"])
def test_batched_matmul_past_the_limit(limited, case):
    """Runs of batch elements through windows; an element too large for a run alone, in
    blocks; strided operands narrowing the runs."""
    rng = _rng()
    a = rng.standard_normal((30, 20, 16)).astype(np.float32)  # 38 KB: runs of a few matrices
    b = rng.standard_normal((30, 16, 12)).astype(np.float32)
    if case == "stack":
        got, ref = xp.asarray(a) @ xp.asarray(b), a @ b
    elif case == "transposed":
        got, ref = xp.matrix_transpose(xp.asarray(a)) @ xp.asarray(a), np.swapaxes(a, -1, -2) @ a
    elif case == "broadcast_b":
        got, ref = xp.asarray(a) @ xp.asarray(b[0]), a @ b[0]
    elif case == "one_too_big":
        big = rng.standard_normal((3, 60, 50)).astype(np.float32)  # 12 KB a matrix: each alone, in blocks
        got, ref = xp.asarray(big) @ xp.matrix_transpose(xp.asarray(big)), big @ np.swapaxes(big, -1, -2)
    elif case == "vecdot_strided":
        h = rng.standard_normal((4000, 6)).astype(np.float32)  # a column is a strided row of 16 KB
        got, ref = xp.vecdot(xp.asarray(h), xp.asarray(h), axis=0), np.sum(h * h, axis=0)
    else:
        ai = rng.integers(-20, 20, a.shape).astype(np.int32)
        bi = rng.integers(-20, 20, b.shape).astype(np.int32)
        np.testing.assert_array_equal(np.asarray(xp.asarray(ai) @ xp.asarray(bi)), ai @ bi)
        return
    np.testing.assert_allclose(np.asarray(got), ref, rtol=2e-5, atol=2e-4)


_LINALG_STACK = {
    "inv": lambda L, m, spd, b: L.inv(m),
    "det": lambda L, m, spd, b: L.det(m),
    "slogdet": lambda L, m, spd, b: L.slogdet(m),
    "solve": lambda L, m, spd, b: L.solve(m, b),
    "solve_vector": lambda L, m, spd, b: L.solve(m, b[0, 0, :, 0]),
    "cholesky": lambda L, m, spd, b: L.cholesky(spd),
    "qr": lambda L, m, spd, b: L.qr(m),
    "svd": lambda L, m, spd, b: L.svd(m)[1],
    "svdvals": lambda L, m, spd, b: L.svdvals(m),
    "eigh": lambda L, m, spd, b: L.eigh(spd)[0],
    "eigvalsh": lambda L, m, spd, b: L.eigvalsh(spd),
    "eigvals": lambda L, m, spd, b: L.eigvals(spd),
    "pinv": lambda L, m, spd, b: L.pinv(m),
    "matrix_rank": lambda L, m, spd, b: L.matrix_rank(m),
    "matrix_norm_2": lambda L, m, spd, b: L.matrix_norm(m, ord=2),
}


@pytest.mark.parametrize("name", sorted(_LINALG_STACK))
def test_linalg_of_a_stack_past_the_limit_runs_matrices_in_runs(name):
    """A (2, 150, 7, 7) stack past the lowered limit: runs of matrices, each run in a
    buffer of its own, joined; the same values as the whole stack at once."""
    rng = _rng()
    m = rng.standard_normal((2, 150, 7, 7)).astype(np.float32)
    spd = m @ np.swapaxes(m, -1, -2) + 7 * np.eye(7, dtype=np.float32)
    b = rng.standard_normal((2, 150, 7, 2)).astype(np.float32)
    fn = _LINALG_STACK[name]

    def run():
        out = fn(xp.linalg, xp.asarray(m), xp.asarray(spd), xp.asarray(b))
        return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]

    ref = run()
    debug.reset_counters()
    with debug.binding_limit(LIMIT):
        got = run()
    for g_, r_ in zip(got, ref):
        assert g_.shape == r_.shape
        if name == "eigvals":
            g_, r_ = np.sort_complex(g_.ravel()), np.sort_complex(r_.ravel())
        np.testing.assert_allclose(g_, r_, rtol=1e-4, atol=1e-4)
    if name == "solve":
        np.testing.assert_allclose(got[0], np.linalg.solve(m, b), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_past_the_limit_sums_over_pieces_of_the_haystack(limited, side):
    rng = _rng()
    h = np.sort(rng.integers(0, 500, 6000)).astype(np.float32)  # 24 KB: three pieces
    h[-7:] = np.nan  # NaNs sort last
    needles = np.concatenate([rng.integers(-3, 505, 5000), [np.nan, np.inf, -np.inf]]).astype(np.float32)
    got = xp.searchsorted(xp.asarray(h), xp.asarray(needles), side=side)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(h, needles, side=side))
    assert got.dtype == xp.int64
    assert int(xp.searchsorted(xp.asarray(h), 250.0, side=side)) == np.searchsorted(h, 250.0, side=side)
    perm = rng.permutation(h.size)
    unsorted = np.empty_like(h)
    unsorted[perm] = h  # unsorted[perm] is sorted: perm is a sorter
    got = xp.searchsorted(xp.asarray(unsorted), xp.asarray(needles[:300]), side=side, sorter=xp.asarray(perm))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(unsorted, needles[:300], side=side, sorter=perm))
    small = np.sort(rng.standard_normal(50)).astype(np.float32)  # needles past the limit, haystack not
    many = rng.standard_normal((40, 100)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(xp.asarray(small), xp.asarray(many), side=side)),
                                  np.searchsorted(small, many, side=side))


def test_bincount_past_the_limit(limited):
    rng = _rng()
    v = rng.integers(0, 40, 5000).astype(np.int32)
    w = rng.standard_normal(5000).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(xp.bincount(xp.asarray(v))), np.bincount(v))
    np.testing.assert_allclose(np.asarray(xp.bincount(xp.asarray(v), weights=xp.asarray(w), minlength=50)),
                               np.bincount(v, weights=w, minlength=50), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", [(7000,), (400, 16), (3, 50, 40), (2, 3, 700)])
def test_nonzero_past_the_limit_joins_slabs_in_c_order(limited, shape):
    a = _rng().standard_normal(shape).astype(np.float32)
    got = xp.nonzero(xp.asarray(a) > 0.5)
    ref = np.nonzero(a > 0.5)
    assert len(got) == len(ref)
    for g_, r_ in zip(got, ref):
        assert g_.dtype == xp.int64
        np.testing.assert_array_equal(np.asarray(g_), r_)
    assert all(np.asarray(g_).shape == (0,) for g_ in xp.nonzero(xp.asarray(a) > 100))


def _on_cpu_adapter() -> bool:
    return xp.__array_namespace_info__().default_device().adapter_type == "CPU"


# 2**32 + 2**26 elements: a fused reduction over the broadcast grid (nothing stored) and
# a stored 17 GiB float32 result; minutes on a software device, a second on a GPU
_GRID = (65537, 65536 + 1024)


@pytest.mark.skipif(_on_cpu_adapter(), reason="4.4e9-element grids: run on GPUs (minutes of a CPU adapter)")
def test_broadcast_results_past_two_to_the_32_elements():
    m, n = _GRID
    assert m * n > 2**32
    x = xp.arange(m, dtype=xp.int32)
    y = xp.arange(n, dtype=xp.int32)
    # pairs with x_i < y_j, exactly: sum over j of min(y_j, m)
    count = int(xp.sum(xp.astype(x[:, None] < y[None, :], xp.int64)))
    assert count == int(np.minimum(np.arange(n, dtype=np.int64), m).sum())
    rows = np.asarray(xp.sum(xp.astype(x[:, None] < y[None, :], xp.int32), axis=1))
    np.testing.assert_array_equal(rows, np.maximum(n - 1 - np.arange(m), 0))
    z = xp.astype(x[:, None], xp.float32) * 0.5 + xp.astype(y[None, :], xp.float32)  # stored: 17 GiB
    xp.evaluate(z)
    for i, j in [(0, 0), (m - 1, n - 1), (40000, 65000), (65536, 1)]:
        assert float(z[i, j]) == np.float32(i) * np.float32(0.5) + np.float32(j)
    assert float(xp.max(z)) == np.float32(m - 1) * np.float32(0.5) + np.float32(n - 1)
    del z
    r = xp.arange(2**32 + 5)  # int64 values past 32 bits, from a row and a column grid
    for i in (0, 123, 2**32 - 1, 2**32, 2**32 + 4):
        assert int(r[i]) == i
    del r
    e = xp.eye(m, dtype=xp.float32)  # 17 GiB: row and column grids whose values fit 32 bits
    assert float(e[m - 1, m - 1]) == 1.0 and float(e[m - 1, m - 2]) == 0.0
    assert float(xp.sum(e)) == m


class _RefusingDevice:
    """A wgpu device whose buffers of ``size`` bytes or more run out after ``allow``."""

    def __init__(self, real, size, allow, error):
        self.real, self.size, self.allow, self.error = real, size, allow, error

    def __getattr__(self, name):
        return getattr(self.real, name)

    def create_buffer(self, **kwargs):
        if kwargs["size"] >= self.size:
            if self.allow <= 0:
                raise self.error
            self.allow -= 1
        return self.real.create_buffer(**kwargs)


def _oom_errors():
    import wgpu
    # how drivers refuse: an out-of-memory error, or (wgpu-native on NVIDIA's Vulkan) a
    # validation error from wgpuDeviceCreateBuffer
    return {"oom": wgpu.GPUOutOfMemoryError("out of memory"),
            "validation": wgpu.GPUValidationError("In wgpuDeviceCreateBuffer: Not enough memory left.")}


@pytest.mark.parametrize("how", ["oom", "validation"])
@pytest.mark.parametrize("segmented", [True, False])
def test_out_of_device_memory_is_a_memory_error_naming_requested_and_held_bytes(segmented, how):
    device = xp.__array_namespace_info__().default_device()
    rt = device.runtime
    held = xp.ones(50_000, dtype=xp.float32) + 1
    xp.evaluate(held)
    real = rt.wgpu
    with debug.segment_limit(16384):
        rt.pool.trim(0)
        rt.wgpu = _RefusingDevice(real, 16384, 3 if segmented else 0, _oom_errors()[how])
        try:
            n = 100_000 if segmented else 3000
            with pytest.raises(MemoryError, match=rf"cannot allocate {4 * n} bytes .*held by live wgarray arrays"):
                xp.evaluate(xp.ones((n,), dtype=xp.float32) * 3)
        finally:
            rt.wgpu = real
    assert float(xp.sum(held)) == 100_000.0  # the device still works, the live array intact


def test_zero_d_view_of_an_array_past_the_limit(limited):
    a = _rng().standard_normal((300, 70)).astype(np.float32)
    x = xp.asarray(a)
    assert float(x[5, 7] * 3) == a[5, 7] * np.float32(3)
    np.testing.assert_allclose(float(xp.sum(x[0, 0] + x)), float(np.sum(a[0, 0] + a, dtype=np.float64)), rtol=1e-5)


def test_a_refused_dispatch_leaves_the_runtime_usable():
    """A MemoryError from a function that cannot run under the limit is raised before the
    dispatch is recorded: later work runs, and the process exits cleanly (a pass left
    open with a half-recorded dispatch crashed wgpu-native at exit)."""
    import subprocess
    import sys
    script = (
        "import numpy as np, wgarray as xp\n"
        "from wgarray import debug\n"
        "with debug.binding_limit(8192):\n"
        "    x = xp.asarray(np.ones((300, 70), np.float32))\n"
        "    try:\n"
        "        np.asarray(xp.linalg.eig(x.T @ x + 70 * xp.eye(70))[0])\n"
        "    except MemoryError:\n"
        "        print('refused')\n"
        "    print(float(xp.sum(x * 2)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["refused", "42000.0"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("n", [70, 131])
def test_cholesky_of_one_matrix_past_the_limit_by_panels(limited, dtype, n):
    if dtype == "float64" and not xp.__array_namespace_info__().dtypes().get("float64"):
        pytest.skip("float64: this device has no shader-f64 (its dtypes leave it out)")
    rng = _rng()
    a = rng.standard_normal((n, n))
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal((n, n))
    spd = a @ a.conj().T + n * np.eye(n)
    exact = np.linalg.cholesky(spd)
    h = spd.astype(dtype)
    got = np.asarray(xp.linalg.cholesky(xp.asarray(h)))
    upper = np.asarray(xp.linalg.cholesky(xp.asarray(h), upper=True))
    ours = np.abs(got - exact).max() / np.abs(exact).max()
    lapack = np.abs(np.linalg.cholesky(h) - exact).max() / np.abs(exact).max()  # LAPACK in the same precision
    assert ours <= 10 * max(lapack, np.finfo(h.real.dtype).eps)
    assert np.all(np.triu(got, 1) == 0)
    np.testing.assert_array_equal(upper, got.conj().T)
    bad = (a + a.T).real.astype(np.float32)  # indefinite: NaN from the first failing pivot, as without panels
    with debug.binding_limit(1 << 20):
        ref = np.asarray(xp.linalg.cholesky(xp.asarray(bad)))
    np.testing.assert_array_equal(np.isnan(np.asarray(xp.linalg.cholesky(xp.asarray(bad)))), np.isnan(ref))


# the LU by panels needs the blocked solves' 64 x 64 leaf blocks (32 KiB in complex64)
# within a binding: a 64 KiB limit, matrices of 90-180 KB
LU_LIMIT = 65536


def _lu_case(dtype, n, rng):
    a = rng.standard_normal((n, n)) / np.sqrt(n)
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal((n, n)) / np.sqrt(n)
    return a


def _backward(a, x, b):
    """||a x - b|| / (||a|| ||x||) in double precision: the solve's backward error."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    a, x, b = a.astype(wide), x.astype(wide), b.astype(wide)
    return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_solve_inv_det_of_one_matrix_past_the_limit_by_panels(dtype):
    """solve (matrix and vector right-hand sides, and a leading batch dim of 1), inv,
    det and slogdet of one matrix several bindings large: the LU runs by panels of
    columns, each factored with partial pivoting. solve and inv are backward stable
    (residuals within 10x of LAPACK's, at least 10 eps); det and slogdet as accurate
    as the blocked LU of the same matrix within one binding (itself held to LAPACK)."""
    if dtype == "float64" and not xp.__array_namespace_info__().dtypes().get("float64"):
        pytest.skip("float64: this device has no shader-f64 (its dtypes leave it out)")
    rng = _rng()
    n = 150
    h = _lu_case(dtype, n, rng).astype(dtype)
    hb = rng.standard_normal((n, 3)).astype(dtype)
    eps = np.finfo(h.real.dtype).eps
    eye = np.eye(n)
    x, y = xp.asarray(h), xp.asarray(hb)
    whole_det = np.asarray(xp.linalg.det(x))
    whole_slog = [np.asarray(v) for v in xp.linalg.slogdet(x)]
    with debug.binding_limit(LU_LIMIT):
        assert h.nbytes > 1.3 * LU_LIMIT
        sol = np.asarray(xp.linalg.solve(x, y))
        inv = np.asarray(xp.linalg.inv(x))
        det = np.asarray(xp.linalg.det(x))
        vec = np.asarray(xp.linalg.solve(x, y[:, 1]))
        batched = np.asarray(xp.linalg.solve(xp.reshape(x, (1, n, n)), y))
        slog = [np.asarray(v) for v in xp.linalg.slogdet(x)]
    assert sol.dtype == inv.dtype == det.dtype == h.dtype
    assert _backward(h, sol, hb) <= 10 * max(_backward(h, np.linalg.solve(h, hb), hb), eps)
    assert _backward(h, vec, hb[:, 1]) <= 10 * max(_backward(h, np.linalg.solve(h, hb[:, 1]), hb[:, 1]), eps)
    assert _backward(h, inv, eye) <= 10 * max(_backward(h, np.linalg.inv(h), eye), eps)
    assert batched.shape == (1, n, 3)
    np.testing.assert_array_equal(batched[0], sol)
    wide = np.complex128 if dtype == "complex64" else np.float64
    exact = np.linalg.det(h.astype(wide))
    assert abs(det - exact) <= 10 * max(abs(whole_det - exact), n * eps * abs(exact))
    ref_sign, ref_logabs = np.linalg.slogdet(h.astype(wide))
    assert slog[0].dtype == h.dtype and slog[1].dtype == h.real.dtype
    assert abs(slog[0] - ref_sign) <= 10 * max(abs(whole_slog[0] - ref_sign), n * eps)
    assert abs(slog[1] - ref_logabs) <= 10 * max(abs(whole_slog[1] - ref_logabs), n * eps)


def test_lu_by_panels_with_tournament_pivots(monkeypatch):
    """The tall panels' pivots by tournament (as on GPUs for panels of 2048 rows and
    more; here from 64 rows): the same backward stability."""
    from wgarray._kernels import linalg_blocked as blk
    monkeypatch.setattr(blk, "TLU_MIN_ROWS", 64)
    monkeypatch.setattr(blk, "TLU_MIN_ORDER", 0)
    rng = _rng()
    n = 150
    h = _lu_case("float32", n, rng).astype(np.float32)
    hb = rng.standard_normal((n, 2)).astype(np.float32)
    with debug.binding_limit(LU_LIMIT):
        sol = np.asarray(xp.linalg.solve(xp.asarray(h), xp.asarray(hb)))
    assert _backward(h, sol, hb) <= 10 * max(_backward(h, np.linalg.solve(h, hb), hb), np.finfo(np.float32).eps)


def test_lu_by_panels_pivots_across_panels_and_finds_singular_matrices():
    """Pivots that must come from another panel's rows (a permutation with a zero
    diagonal, scaled), a singular matrix (det 0, slogdet (0, -inf)), and a stack of two
    matrices each past the limit (runs of one matrix, each by panels)."""
    rng = _rng()
    n = 150
    perm = rng.permutation(n)
    p = np.zeros((n, n), np.float32)
    p[np.arange(n), perm] = rng.uniform(1, 2, n).astype(np.float32)
    p[perm[0], :] += np.float32(1e-3)  # rows move past every panel boundary
    sing = _lu_case("float32", n, rng).astype(np.float32)
    sing[:, 77] = 0  # an exactly zero pivot in a later panel
    stack = np.stack([_lu_case("float32", n, rng), _lu_case("float32", n, rng)]).astype(np.float32)
    b = rng.standard_normal((n, 2)).astype(np.float32)
    with debug.binding_limit(LU_LIMIT):
        got_p = np.asarray(xp.linalg.solve(xp.asarray(p), xp.asarray(b)))
        det_p = float(xp.linalg.det(xp.asarray(p)))
        det_s = float(xp.linalg.det(xp.asarray(sing)))
        sign_s, logabs_s = (float(v) for v in xp.linalg.slogdet(xp.asarray(sing)))
        inv_stack = np.asarray(xp.linalg.inv(xp.asarray(stack)))
    np.testing.assert_allclose(got_p, np.linalg.solve(p.astype(np.float64), b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(det_p, np.linalg.det(p.astype(np.float64)), rtol=1e-4)
    assert (det_s, sign_s, logabs_s) == (0.0, 0.0, -np.inf)
    assert (np.linalg.det(sing), *np.linalg.slogdet(sing)) == (0.0, 0.0, -np.inf)
    eye, eps = np.eye(n), np.finfo(np.float32).eps
    for i in range(2):
        assert _backward(stack[i], inv_stack[i], eye) <= 10 * max(_backward(stack[i], np.linalg.inv(stack[i]), eye), eps)


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_argmax_argmin_along_axes_that_slabs_cut(limited, kind):
    """Slabs cut the reduced axis: positions made global, slabs merged in order (the
    first extreme wins, a NaN first of all)."""
    rng = _rng()
    a = rng.standard_normal((300, 70)).astype(np.float32)
    a[5, 7] = a[200, 7] = np.nan  # two NaNs in a column: the first
    a[9, :3] = a[250, :3] = 9.0  # ties in different slabs: the first
    a[100, 10] = a[280, 10] = -9.0
    b = rng.integers(-5, 5, (40, 9, 30)).astype(np.int16)
    c = rng.standard_normal((6, 50, 40)).astype(np.float32)
    for h, axis in [(a, 0), (b, 0), (b, 1), (c, 0), (c, 1)]:
        got = getattr(xp, kind)(xp.asarray(h), axis=axis)
        assert got.dtype == xp.int64
        np.testing.assert_array_equal(np.asarray(got), getattr(np, kind)(h, axis=axis))
    np.testing.assert_array_equal(np.asarray(getattr(xp, kind)(xp.asarray(c), axis=1, keepdims=True)),
                                  getattr(np, kind)(c, axis=1, keepdims=True))


@pytest.mark.parametrize("args", [(5000,), (3, 50003, 7), (2.5, 4000.0, 0.5), (-3, 7000, 1, "int32"),
                                  (0, 6000, 1, "float32")])
def test_arange_past_the_u32_index_range_from_row_and_column_grids(monkeypatch, args):
    """Past IOTA_SPLIT (2**32) the flat index is made in int64 from two grids; lowered
    here, so that the construction runs on small ranges."""
    from wgarray import _creation_functions
    monkeypatch.setattr(_creation_functions, "IOTA_SPLIT", 1000)
    dtype = args[3] if len(args) == 4 else None
    got = xp.arange(*args[:3], dtype=None if dtype is None else getattr(xp, dtype))
    ref = np.arange(*args[:3], dtype=dtype)
    if ref.dtype == np.float64 and not xp.__array_namespace_info__().dtypes().get("float64"):
        ref = ref.astype(np.float32)
    assert np.asarray(got).dtype == ref.dtype
    np.testing.assert_array_equal(np.asarray(got), ref)
    for num, endpoint in [(5000, True), (5001, False)]:
        np.testing.assert_allclose(np.asarray(xp.linspace(-1.0, 3.0, num, endpoint=endpoint)),
                                   np.linspace(-1, 3, num, endpoint=endpoint), rtol=1e-6, atol=1e-6)


def _qr_errors(a, q, r):
    """(max |Q^H Q - I|, ||Q R - A|| / ||A||) in double precision."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    q, r, a = q.astype(wide), r.astype(wide), a.astype(wide)
    orth = np.abs(q.conj().T @ q - np.eye(q.shape[1])).max()
    return orth, np.linalg.norm(q @ r - a) / np.linalg.norm(a)


def _qr_case(kind, shape, dtype, rng):
    m, n = shape
    a = rng.standard_normal((m, n))
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal((m, n))
    if kind == "repeated":  # rank n / 4: each column four times, across panel edges
        a = np.repeat(a[:, : n // 4 + 1], 4, axis=1)[:, :n]
    elif kind == "zeros":  # the right half zero: whole panels in the span of none
        a[:, n // 2:] = 0
    elif kind == "cond":  # condition 1e6: the projections cancel
        u, _ = np.linalg.qr(rng.standard_normal((m, min(m, n))))
        v, _ = np.linalg.qr(rng.standard_normal((n, min(m, n))))
        a = (u * np.logspace(0, -6, min(m, n))) @ v.T
    return a.astype(dtype)


QR_PANEL_CASES = ([("plain", s, d) for s in ((200, 200), (230, 170), (130, 300)) for d in ("float32", "float64")]
                  + [("plain", (160, 160), "complex64")]
                  + [(k, (200, 200), d) for k in ("repeated", "zeros", "cond") for d in ("float32", "float64")])


@pytest.mark.parametrize("kind,shape,dtype", QR_PANEL_CASES,
                         ids=[f"{k}-{m}x{n}-{d}" for k, (m, n), d in QR_PANEL_CASES])
def test_qr_of_one_matrix_past_the_limit_by_panels(kind, shape, dtype):
    """Square, moderately tall and wide matrices several bindings large (one binding
    holds ten of a panel's columns): Q orthonormal and Q R = A to within 10x of LAPACK in
    the same precision, R upper triangular, also where columns repeat or vanish (rank
    deficiency: whole panels in the span of the columns before them) and where the
    projections cancel six digits."""
    if dtype == "float64" and not xp.__array_namespace_info__().dtypes().get("float64"):
        pytest.skip("float64: this device has no shader-f64 (its dtypes leave it out)")
    a = _qr_case(kind, shape, dtype, _rng())
    with debug.binding_limit(LU_LIMIT):
        assert a.nbytes > 2 * LU_LIMIT
        qx, rx = xp.linalg.qr(xp.asarray(a))
        q, r = np.asarray(qx), np.asarray(rx)
    k = min(shape)
    assert q.shape == (shape[0], k) and r.shape == (k, shape[1])
    assert q.dtype == a.dtype and r.dtype == a.dtype
    assert np.all(np.tril(r, -1) == 0)
    orth, res = _qr_errors(a, q, r)
    ref_orth, ref_res = _qr_errors(a, *np.linalg.qr(a))
    eps = np.finfo(a.real.dtype).eps
    assert orth <= 10 * max(ref_orth, eps), (orth, ref_orth)
    assert res <= 10 * max(ref_res, eps), (res, ref_res)


def test_qr_modes_past_the_limit():
    """mode='complete' of a square matrix past the limit is its reduced QR; of a tall one
    (whose Q would be m x m) a MemoryError naming qr; a stack of such matrices runs one
    at a time; NaN spreads as in NumPy's."""
    rng = _rng()
    a = rng.standard_normal((150, 150)).astype(np.float32)
    with debug.binding_limit(LU_LIMIT):
        q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(a), mode="complete"))
        assert q.shape == r.shape == (150, 150)
        orth, res = _qr_errors(a, q, r)
        assert orth < 1e-5 and res < 1e-6
        tall = xp.asarray(rng.standard_normal((260, 140)).astype(np.float32))
        with pytest.raises(MemoryError, match=r"^qr: mode='complete' of one 260 x 140 matrix past"):
            xp.linalg.qr(tall, mode="complete")
        stack = rng.standard_normal((2, 140, 140)).astype(np.float32)  # each matrix past the limit
        qs, rs = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(stack)))
        for i in range(2):
            orth, res = _qr_errors(stack[i], qs[i], rs[i])
            assert orth < 1e-5 and res < 1e-6 and np.all(np.tril(rs[i], -1) == 0)
        a[3, 70] = np.nan
        q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(a)))
        assert np.isnan(r[:, 70:]).any() and np.isnan(q).any()


def test_an_array_that_fits_a_binding_gets_a_buffer_that_does():
    """The pool's size class of a request at or below the binding limit never passes it
    (90 KB rounds to a 128 KiB class; under a 96 KiB limit that buffer could not be
    bound whole, and a fill of a 150 x 150 float32 array inside qr by panels failed)."""
    rt = xp.asarray(0).device.runtime
    with debug.binding_limit(98304):
        for nbytes in (90000, 98304, 65537):
            assert nbytes <= rt.alloc(nbytes).size <= 98304
        assert rt.alloc(98305).size > 98304  # past the limit: the array is past it too
        rng = _rng()
        a = rng.standard_normal((200, 150)).astype(np.float32)  # 120 KB, R 90 KB
        q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(a)))
    orth, res = _qr_errors(a, q, r)
    assert orth < 1e-5 and res < 1e-6


def test_qr_panels_pseudo_random_columns_are_the_integer_hash():
    """The columns that stand in for a rank-deficient matrix's lost directions come from
    an integer hash, exact on every device (a sine's would differ by device and could
    repeat): the same bits as NumPy's uint32 arithmetic, a different matrix per seed."""
    from wgarray.linalg import _pseudo_random
    dev = xp.asarray(0).device
    for seed in (0, 5, 70000):
        got = np.asarray(_pseudo_random(500, 3, seed, xp.float32, dev))
        h = (np.arange(1500, dtype=np.uint64) + ((seed * 0x9E3779B9) & 0xFFFFFFFF)) & 0xFFFFFFFF
        for mult in (0x7FEB352D, 0x846CA68B):
            h = ((h ^ (h >> 16)) * mult) & 0xFFFFFFFF
        h ^= h >> 16
        np.testing.assert_array_equal(got, ((h >> 8).astype(np.float32) / (1 << 24)).reshape(500, 3))
    assert not np.array_equal(np.asarray(_pseudo_random(50, 1, 1, xp.float32, dev)),
                              np.asarray(_pseudo_random(50, 1, 2, xp.float32, dev)))


# ------------------------------------------------------------------ spectral division
# eigh and svd of one matrix the in-binding solvers cannot hold: QDWH polar factors and
# QRs past the limit, the spectrum split in two blocks until each fits (linalg.py)
DIVIDE_LIMIT = 32768  # in-binding eigh up to order ~28 in float32: 96 divides twice


def _needs(dtype):
    if dtype == "float64" and not xp.__array_namespace_info__().dtypes().get("float64"):
        pytest.skip("float64: this device has no shader-f64 (its dtypes leave it out)")


def _sym_case(kind, n, dtype, rng):
    if kind == "clustered":  # three clusters, repeated eigenvalues across the split point
        q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        w = np.repeat([-2.0, 0.5, 3.0], [n // 3, n // 3, n - 2 * (n // 3)]) + 1e-3 * rng.standard_normal(n)
        a = (q * w) @ q.T
    else:
        a = rng.standard_normal((n, n))
        if dtype == "complex64":
            a = a + 1j * rng.standard_normal((n, n))
        a = a + a.conj().T
        if kind == "graded":  # eigenvalues from 1e-5 to 1e3
            q = np.linalg.qr(a)[0]
            a = (q * np.logspace(-5, 3, n)) @ q.conj().T
    return a.astype(dtype)


def _eigh_errors(a, w, v):
    """(max |w - w_ref| / ||a||_2, max |V^H V - I|, ||A V - V W|| / ||A||) in double."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    a64, v64 = a.astype(wide), v.astype(wide)
    ref = np.linalg.eigvalsh(a64)
    scale = np.abs(ref).max()
    return (np.abs(w - ref).max() / scale, np.abs(v64.conj().T @ v64 - np.eye(len(w))).max(),
            np.linalg.norm(a64 @ v64 - v64 * w) / np.linalg.norm(a64))


@pytest.mark.parametrize("dtype,kind,n", [("float32", "random", 96), ("float64", "graded", 70),
                                          ("complex64", "random", 60), ("float32", "clustered", 90)])
def test_eigh_of_one_matrix_past_the_limit_by_spectral_division(dtype, kind, n):
    """Values within a few times LAPACK's error in the same precision (NumPy's), vectors
    orthonormal and A V = V W to working precision; eigvalsh gives the same values; the
    upper triangle is not read."""
    _needs(dtype)
    rng = _rng()
    h = _sym_case(kind, n, dtype, rng)
    eps = np.finfo(h.dtype).eps
    upset = h.copy()
    upset[np.triu_indices(n, 1)] = 7.0  # eigh reads the lower triangle
    with debug.binding_limit(DIVIDE_LIMIT):
        w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(upset)))
        wv = np.asarray(xp.linalg.eigvalsh(xp.asarray(h)))
    assert w.dtype == np.finfo(h.dtype).dtype and v.dtype == h.dtype and v.shape == (n, n)
    assert np.all(np.diff(w) >= 0)
    lapack = _eigh_errors(h, *np.linalg.eigh(h))
    err = _eigh_errors(h, w, v)
    assert err[0] <= max(10 * lapack[0], 4 * n * eps), (err, lapack)
    assert err[1] <= max(10 * lapack[1], 4 * n * eps), (err, lapack)
    assert err[2] <= max(10 * lapack[2], 4 * n * eps), (err, lapack)
    ref = np.linalg.eigvalsh(h.astype(np.complex128 if h.dtype.kind == "c" else np.float64))
    assert np.abs(wv - ref).max() <= max(10 * lapack[0], 4 * n * eps) * np.abs(ref).max()


@pytest.mark.parametrize("shape,dtype,also", [((96, 96), "float32", "matrix_rank"), ((70, 120), "float64", "pinv"),
                                               ((110, 60), "complex64", "matrix_norm")])
def test_svd_of_one_matrix_past_the_limit_by_polar_decomposition(shape, dtype, also):
    """svd (full_matrices=False; True for the square one), svdvals, and pinv, matrix_rank
    or the 2-norm past the limit: values within a few times LAPACK's error, U and V
    orthonormal, U S Vh = A."""
    _needs(dtype)
    rng = _rng()
    h = rng.standard_normal(shape)
    if dtype == "complex64":
        h = h + 1j * rng.standard_normal(shape)
    m, n = shape
    if m >= n:  # rank deficient by one
        h[:, 3] = h[:, 5]
    else:
        h[3] = h[5]
    h = h.astype(dtype)
    k = min(m, n)
    eps = np.finfo(h.dtype).eps
    wide = np.complex128 if h.dtype.kind == "c" else np.float64
    ref = np.linalg.svd(h.astype(wide), compute_uv=False)
    lapack = np.abs(np.linalg.svd(h, compute_uv=False) - ref).max() / ref[0]
    bound = max(10 * lapack, 4 * max(m, n) * eps)
    with debug.binding_limit(DIVIDE_LIMIT):
        x = xp.asarray(h)
        u, s, vh = (np.asarray(t) for t in xp.linalg.svd(x, full_matrices=m == n))
        sv = np.asarray(xp.linalg.svdvals(x))
        if also == "matrix_rank":
            assert int(xp.linalg.matrix_rank(x)) == k - 1 == np.linalg.matrix_rank(h)
        elif also == "matrix_norm":
            assert abs(float(xp.linalg.matrix_norm(x, ord=2)) - ref[0]) <= bound * ref[0]
        else:
            p = np.asarray(xp.linalg.pinv(x))
            np.testing.assert_allclose(p, np.linalg.pinv(h.astype(wide)), atol=1e3 * bound * np.abs(p).max())
        if m != n:
            with pytest.raises(MemoryError, match="^svd: full_matrices=True"):
                xp.linalg.svd(x)
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    assert np.abs(s - ref).max() / ref[0] <= bound and np.abs(sv - ref).max() / ref[0] <= bound
    assert np.all(np.diff(s) <= 0) and s.min() >= 0
    u64, vh64 = u.astype(wide), vh.astype(wide)
    assert np.abs(u64.conj().T @ u64 - np.eye(k)).max() <= bound * 10
    assert np.abs(vh64 @ vh64.conj().T - np.eye(k)).max() <= bound * 10
    assert np.linalg.norm((u64 * s) @ vh64 - h) / np.linalg.norm(h.astype(wide)) <= bound


@pytest.mark.parametrize("case", ["zero", "diagonal", "identity", "nan", "inf"])
def test_eigh_and_svd_past_the_limit_of_special_matrices(case):
    """A zero, diagonal or identity matrix (no split point: eigh gives the diagonal,
    sorted, exactly, eig its entries in place), and non-finite input (NaN values and
    vectors, as LAPACK's)."""
    n = 40
    h = {"zero": np.zeros((n, n)), "identity": np.eye(n),
         "diagonal": np.diag(_rng().permutation(n) - 10.0)}.get(case, np.eye(n) + 0.5)
    if case in ("nan", "inf"):
        h[7, 3] = h[3, 7] = np.nan if case == "nan" else np.inf
    h = h.astype(np.float32)
    with debug.binding_limit(4096):  # a 40 x 40 float32 matrix is 6.4 KB
        w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(h)))
        s = np.asarray(xp.linalg.svdvals(xp.asarray(h)))
        ge, gv = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(h)))
    if case in ("nan", "inf"):
        assert np.isnan(w).all() and np.isnan(v).all() and np.isnan(s).all()
        assert np.isnan(ge).all() and np.isnan(gv).all()
        return
    # eig of a diagonal matrix: its entries in place, the unit vectors
    np.testing.assert_array_equal(ge, np.diagonal(h).astype(np.complex64))
    np.testing.assert_array_equal(gv, np.eye(n, dtype=np.complex64))
    ref = np.linalg.eigh(h)
    np.testing.assert_array_equal(w, ref[0])
    np.testing.assert_array_equal(np.abs(v), np.abs(ref[1]))
    # (svd goes through the polar factor: rounding level, not the diagonal itself)
    ref_s = np.linalg.svd(h, compute_uv=False)
    np.testing.assert_allclose(s, ref_s, rtol=0, atol=4 * n * np.finfo(np.float32).eps * max(ref_s.max(), 1))


@pytest.mark.parametrize("n", [512])
def test_matmul_whose_k_splits_would_pass_the_limit(n):
    """Operands and product each within the binding limit, but the split-K partial
    products (K = 512: two splits of C) past it: one pass instead (not a MemoryError)."""
    rng = _rng()
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    with debug.binding_limit(n * n * 4):
        got = np.asarray(xp.asarray(a) @ xp.asarray(b))
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4 * np.sqrt(n))


def _spectrum_distance(w, ref):
    """The largest distance from a value of either spectrum to the other's nearest."""
    d = np.abs(w[:, None] - ref[None, :])
    return max(d.min(axis=0).max(), d.min(axis=1).max())


def _eig_residual(a, w, v):
    """(||A V - V W|| / ||A||, max | ||v_j|| - 1 |) in double precision."""
    a64, v64 = a.astype(np.complex128), v.astype(np.complex128)
    return (np.linalg.norm(a64 @ v64 - v64 * w) / np.linalg.norm(a64),
            np.abs(np.linalg.norm(v64, axis=0) - 1).max())


@pytest.mark.parametrize("dtype,n,name", [("float32", 130, "eig"), ("complex64", 96, "eigvals")])
def test_eig_of_one_matrix_past_the_limit_by_the_sign_function(dtype, n, name):
    """eig / eigvals past the limit (LU by panels needs LU_LIMIT): values within a few
    times the in-binding solver's own error on the same matrix (its float32 eig is ~5e-6
    of ||A|| off, LAPACK's 4e-8), A V = V W as well as that solver's, unit vectors; a
    real matrix's complex values in exact conjugate pairs with conjugate vectors, real
    vectors for real values."""
    rng = _rng()
    h = rng.standard_normal((n, n))
    if dtype == "complex64":
        h = h + 1j * rng.standard_normal((n, n))
    h = h.astype(dtype)
    ref = np.linalg.eigvals(h.astype(np.complex128))
    scale = np.abs(ref).max()
    eps = np.finfo(h.dtype).eps
    if name == "eig":
        w0, v0 = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(h)))
        with debug.binding_limit(LU_LIMIT):
            w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(h)))
        assert v.shape == (n, n) and v.dtype == v0.dtype
        res, res0 = _eig_residual(h, w, v), _eig_residual(h, w0, v0)
        assert res[0] <= 4 * max(res0[0], n * eps) and res[1] <= 4 * max(res0[1], n * eps)
    else:
        w0 = np.asarray(xp.linalg.eigvals(xp.asarray(h)))
        with debug.binding_limit(LU_LIMIT):
            w = np.asarray(xp.linalg.eigvals(xp.asarray(h)))
    assert w.shape == (n,) and w.dtype == w0.dtype
    assert _spectrum_distance(w, ref) <= 4 * max(_spectrum_distance(w0, ref), n * eps * scale)
    if dtype == "float32":
        cplx = w.imag != 0
        np.testing.assert_array_equal(np.sort_complex(w[cplx]), np.sort_complex(w[cplx].conj()))
        assert np.all(v[:, ~cplx].imag == 0)
        for j in np.flatnonzero(cplx):  # the partner's vector is the conjugate
            mate = np.flatnonzero((w == w[j].conj()))
            assert any(np.array_equal(v[:, m], v[:, j].conj()) for m in mate)
