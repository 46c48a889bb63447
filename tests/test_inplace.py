"""In-place writes: work proportional to the region, copy-on-write only when needed,
views and bases agreeing, element copies keeping their own values, and threads."""
import operator
import pickle
import threading

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug



def _start_and_join(threads) -> None:
    for th in threads:
        th.start()
    for th in threads:
        th.join()

def realized(a):
    x = xp.asarray(a)
    np.asarray(x)  # realized, with a host mirror
    return x


def test_element_write_is_one_small_command_without_whole_array_pass():
    x = realized(np.zeros((64, 64), np.float32))
    debug.reset_counters()
    x[3, 5] = 2.5  # a 4-byte store, copied in order with the batch
    x._node.device.runtime.flush()
    c = debug.counters()
    assert c["stores"] == 1 and c["dispatches"] == 0 and c["realizations"] == 0
    assert c["buffers_created"] == 0 and c["readbacks"] == 0
    b = realized(np.zeros((64, 64), bool))
    debug.reset_counters()
    b[3, 5] = True  # shares a word with its neighbours: one one-invocation dispatch
    c = debug.counters()
    assert c["dispatches"] == 1 and c["realizations"] == 0
    assert np.asarray(b).sum() == 1 and np.asarray(b)[3, 5]
    x[0:2, 1] = 1.0  # a region: one dispatch over its 2 elements
    c = debug.counters()
    assert c["dispatches"] == 2 and c["realizations"] == 0
    expect = np.zeros((64, 64), np.float32)
    expect[3, 5] = 2.5
    expect[0:2, 1] = 1.0
    assert np.array_equal(np.asarray(x), expect)


def test_diagonal_write_loop_is_batched_into_one_scatter_dispatch():
    n = 300
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    x = realized(a)
    debug.reset_counters()
    for i in range(n):
        x[i, i] = 0.0
    h = np.asarray(x)
    c = debug.counters()
    # the run of element stores is recorded as one scatter dispatch, not n copies
    assert c["stores"] == n and c["dispatches"] == 1 and c["realizations"] == 0
    assert c["submits"] == 1 and c["readbacks"] == 1 and c["buffers_created"] == 0
    np.fill_diagonal(a, 0.0)
    assert np.array_equal(h, a)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "float64", "int64", "complex64", "complex128"])
def test_element_write_runs_keep_order_and_last_value(dtype):
    if not xp.__array_namespace_info__().dtypes().get(dtype):
        pytest.skip(f"{dtype} is not offered by this device")
    n = 40
    rng = np.random.default_rng(1)
    a = (rng.random((n, n)) * 100).astype(dtype)
    x = realized(a)
    special = [np.nan, -0.0, np.inf, -np.inf] if np.dtype(dtype).kind in "fc" else [0, 7, 3, 1]
    debug.reset_counters()
    for i in range(n):  # a run of stores, each element written twice: the last one stays
        x[i, (3 * i) % n] = special[i % 4]
        a[i, (3 * i) % n] = special[i % 4]
    for i in range(n):
        x[i, (3 * i) % n] = i
        a[i, (3 * i) % n] = i
    x[0, 1] = special[0]  # a one-store run stays a copy command
    a[0, 1] = special[0]
    y = x * 2  # a command after the run sees every store
    expect_y = a * a.dtype.type(2)
    for i in range(1200):  # a run of more distinct elements than one scatter dispatch holds
        r, col = divmod((37 * i) % (n * n), n)
        x[r, col] = i % 50
        a[r, col] = i % 50
    got, got_y = np.asarray(x), np.asarray(y)
    c = debug.counters()
    assert c["stores"] == 2 * n + 1 + 1200
    assert c["dispatches"] <= 12  # the first run, y (and its copy-on-write), the long run's chunks
    assert got.dtype == a.dtype and np.array_equal(got.view(np.uint8), a.view(np.uint8))  # bits: -0.0, NaN
    np.testing.assert_array_equal(got_y, expect_y)


def test_diagonal_write_loop_of_a_0d_array_is_batched_into_one_dispatch():
    # scikit-learn's _fill_diagonal writes a 0-d array (its value through asarray) into
    # each diagonal element: copies from one device element, gathered into a run
    n = 300
    a = np.random.default_rng(2).random((n, n), dtype=np.float32)
    x = realized(a)
    value = xp.asarray(np.float32(-2.5))
    xp.evaluate(value)
    debug.reset_counters()
    for i in range(n):
        x[i, i] = value
    h = np.asarray(x)
    c = debug.counters()
    assert c["stores"] == n and c["dispatches"] == 1 and c["realizations"] == 0
    assert c["submits"] == 1 and c["readbacks"] == 1
    np.fill_diagonal(a, -2.5)
    assert np.array_equal(h, a)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_element_copies_from_0d_arrays_keep_order_and_values(dtype):
    if not xp.__array_namespace_info__().dtypes().get(dtype):
        pytest.skip(f"{dtype} is not offered by this device")
    n = 24
    a = (np.arange(n * n) % 17).reshape(n, n).astype(dtype)
    x = realized(a)
    v1 = xp.asarray(np.asarray(5, dtype=dtype))
    v2 = xp.asarray(np.asarray(-3, dtype=dtype))
    for i in range(n):  # one run per source: v1's, then v2's (which overwrites some)
        x[i, (5 * i) % n] = v1
        a[i, (5 * i) % n] = 5
    for i in range(0, n, 2):
        x[i, (5 * i) % n] = v2
        a[i, (5 * i) % n] = -3
    x[0, 0] = 7  # a store from the host between runs
    a[0, 0] = 7
    for i in range(n):
        x[(i + 1) % n, i] = v1
        a[(i + 1) % n, i] = 5
    v1[()] = 11  # a write into the source after its run: the run read the old value
    for i in range(n):
        x[i, n - 1 - i] = v1
        a[i, n - 1 - i] = 11
    np.testing.assert_array_equal(np.asarray(x), a)
    assert complex(v1) == 11


def test_element_write_runs_into_two_arrays_alternating_match_numpy():
    n = 64
    a = np.zeros((n, n), np.float32)
    b = np.ones((n, n), np.float32)
    x, y = realized(a), realized(b)
    for i in range(n):  # alternating targets: each run holds one store
        x[i, i] = float(i)
        y[i, n - 1 - i] = -float(i)
        a[i, i] = i
        b[i, n - 1 - i] = -i
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(y), b)


def test_slice_mask_and_index_writes_in_place_match_numpy():
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    x = realized(a)
    debug.reset_counters()
    x[1:5:2, 3] = -1.0
    a[1:5:2, 3] = -1.0
    x[::-1, 7] = xp.asarray(np.arange(6, dtype=np.float32))
    a[::-1, 7] = np.arange(6, dtype=np.float32)
    c = debug.counters()
    assert c["realizations"] == 0 and c["dispatches"] == 2
    debug.reset_counters()
    x[np.array([4, 0, -1])] = 9.0  # the index grid (3 x 8 entries), then the write
    a[np.array([4, 0, -1])] = 9.0
    assert debug.counters()["dispatches"] == 2
    x[x > 40] = 0.5
    a[a > 40] = 0.5
    assert np.array_equal(np.asarray(x), a)


def test_repeated_device_indices_keep_last_write_wins():
    a = np.zeros(5, np.int32)
    x = realized(a)
    idx = xp.asarray(np.array([1, 1, 3], np.int64))
    x[idx] = xp.asarray(np.array([7, 8, 9], np.int32))
    a[np.array([1, 1, 3])] = np.array([7, 8, 9], np.int32)
    assert np.array_equal(np.asarray(x), a)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint64",
                                   "float32", "complex64"])
def test_element_writes_keep_neighbours_of_narrow_and_wide_dtypes(dtype):
    dev = xp.__array_namespace_info__().default_device()
    if np.dtype(dtype).name not in {str(d) for d in xp.__array_namespace_info__().dtypes(device=dev).values()}:
        pytest.skip(f"{dtype} not on this device")
    rng = np.random.default_rng(1)
    a = (rng.integers(0, 100, size=(5, 7)) % (2 if dtype == "bool" else 100)).astype(dtype)
    x = realized(a)
    for i, j in [(0, 0), (1, 3), (4, 6), (2, 1), (2, 2)]:
        v = a.dtype.type(not a[i, j]) if dtype == "bool" else a.dtype.type(i * 7 + j + 1)
        x[i, j] = v.item()
        a[i, j] = v
    x[3, 1:6:2] = a.dtype.type(1).item()
    a[3, 1:6:2] = 1
    assert np.array_equal(np.asarray(x), a)


def test_copy_on_write_keeps_other_values():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = realized(a)
    t = xp.reshape(x, (4, 3))  # a view over the same buffer, as NumPy's reshape
    lazy = x * 2  # a pending op reading it
    e = x[1, 1]  # an element copy
    x[1, 1] = 100.0
    x[2, 3] = 200.0
    assert float(e) == 5.0
    assert np.array_equal(np.asarray(lazy), a * 2)
    b = a.copy()
    b[1, 1], b[2, 3] = 100, 200
    assert np.array_equal(np.asarray(x), b)
    assert np.array_equal(np.asarray(t), b.reshape(4, 3))


def test_views_see_in_place_writes_and_bases_see_writes_through_views():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = realized(a)
    row = x[2]
    col = x[:, 1]
    np.asarray(row), np.asarray(col)  # host mirrors that must be dropped
    x[2, 1] = -7.0
    a[2, 1] = -7.0
    assert np.array_equal(np.asarray(row), a[2]) and np.array_equal(np.asarray(col), a[:, 1])
    row[3] = 50.0
    a[2, 3] = 50.0
    col += 1
    a[:, 1] += 1
    assert np.array_equal(np.asarray(x), a)
    assert np.array_equal(np.asarray(row), a[2])
    sub = row[1:4]
    sub[...] = 0.0
    a[2, 1:4] = 0.0
    assert np.array_equal(np.asarray(x), a) and np.array_equal(np.asarray(col), a[:, 1])


def test_zero_d_and_nothing_selected_writes():
    x = realized(np.array(3.0, np.float32))
    x[()] = 4.0
    assert float(x) == 4.0
    x[...] = 5.0
    assert float(x) == 5.0
    y = realized(np.arange(4, dtype=np.float32))
    y[2:2] = 9.0
    y[np.zeros(4, bool)] = 9.0
    assert np.array_equal(np.asarray(y), np.arange(4, dtype=np.float32))


# ------------------------------------------------------------- element copies

INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow,
           operator.ifloordiv, operator.imod]


@pytest.mark.parametrize("op", INPLACE, ids=lambda f: f.__name__)
def test_in_place_operator_on_element_copy_is_seen_by_host_reads(op):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(a)
    e = x[1, 2]
    e = op(e, 2)
    expect = op(np.float32(5.0), np.float32(2))
    assert float(e) == expect and float(e + 0) == expect
    assert np.asarray(x)[1, 2] == 5.0  # the base keeps its value


def test_element_copy_of_a_reduction_and_every_host_read():
    a = xp.asarray(np.arange(4.0, dtype=np.float32))
    m = xp.sum(a)
    v = m[()]
    v *= 2
    assert float(v) == 12.0 and float(m) == 6.0
    assert int(v) == 12 and "12." in repr(v)
    assert np.asarray(v) == 12.0
    assert np.from_dlpack(v) == 12.0
    assert float(pickle.loads(pickle.dumps(v))) == 12.0
    x = xp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    e = x[1, 2]
    e[...] = 1.5
    assert float(e) == 1.5 and np.asarray(x)[1, 2] == 5.0
    i = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))[0, 1]
    i <<= 3
    assert int(i) == 8


def test_element_copy_after_base_written_in_place_keeps_old_value():
    x = realized(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    e = x[0, 1]
    x[0, 1] = 10.0
    assert float(e) == 1.0 and float(x[0, 1]) == 10.0


# ------------------------------------------------------------- random sequences

def _random_program(rng, lazy_base):
    a = rng.standard_normal((5, 6)).astype(np.float32)
    x = xp.asarray(a)
    if lazy_base:
        x = x * 1.0 + 0.0
        a = a * 1.0 + 0.0
    else:
        np.asarray(x)
    arrays = [(x, a)]  # (wgarray, numpy view of the same elements)
    for _ in range(25):
        kind = rng.integers(0, 11)
        w, n = arrays[rng.integers(len(arrays))]
        if kind == 0 and w.ndim >= 1 and w.shape[0] > 1:  # a view
            s = int(rng.integers(0, w.shape[0] - 1))
            arrays.append((w[s:], n[s:]))
        elif kind == 1 and w.ndim == 2:
            j = int(rng.integers(w.shape[1]))
            arrays.append((w[:, j], n[:, j]))
        elif kind == 2 and w.size:
            idx = tuple(int(rng.integers(k)) for k in w.shape)
            v = float(rng.integers(-9, 9))
            w[idx] = v
            n[idx] = v
        elif kind == 3:
            w += 1.5
            n += np.float32(1.5)
        elif kind == 4 and w.ndim:
            w *= 2.0
            n *= np.float32(2.0)
        elif kind == 5 and w.size:
            m = n > 0
            w[xp.asarray(m)] = -0.25
            n[m] = -0.25
        elif kind == 6 and w.ndim and w.shape[0]:
            k = np.array([int(rng.integers(w.shape[0]))])
            w[k] = 3.0
            n[k] = 3.0
        elif kind == 7 and w.ndim == 0:
            w[()] = 8.0
            n[()] = 8.0
        elif kind == 9 and w.ndim == 2:  # a transpose: a view
            arrays.append((w.T, n.T))
        elif kind == 10 and w.ndim:  # a reshape: a view where NumPy makes one, else a copy
            shape = (-1,) if w.ndim > 1 else (1, -1)
            arrays.append((xp.reshape(w, shape), np.reshape(n, shape)))
        elif kind == 8:
            w2, n2 = arrays[rng.integers(len(arrays))]
            assert np.array_equal(np.asarray(w2), n2)  # a host read at a random point
    for w, n in arrays:
        assert np.array_equal(np.asarray(w), n)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lazy_base", [False, True])
def test_random_in_place_sequences_on_views_agree_with_numpy(seed, lazy_base):
    _random_program(np.random.default_rng(seed), lazy_base)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 400))
def test_random_in_place_sequences_long(seed):
    _random_program(np.random.default_rng(seed), seed % 2 == 0)


# ------------------------------------------------------------------- threads

def test_threads_incrementing_their_own_rows_lose_no_writes():
    x = realized(np.zeros((4, 8), np.float32))
    errors = []

    def work(t):
        try:
            for _ in range(50):
                x[t, :] += 1
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    _start_and_join(threads)
    assert not errors
    assert np.array_equal(np.asarray(x), np.full((4, 8), 50, np.float32))


def test_threads_writing_disjoint_slices_lose_no_writes():
    n = 64
    x = realized(np.zeros((n, n), np.float32))
    parts = np.array_split(np.arange(n), 2)

    def work(rows):
        for i in rows:
            x[int(i), :] = xp.asarray(np.full(n, float(i), np.float32))
            x[int(i), int(i)] = -1.0

    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    _start_and_join(threads)
    expect = np.repeat(np.arange(n, dtype=np.float32)[:, None], n, axis=1)
    np.fill_diagonal(expect, -1.0)
    assert np.array_equal(np.asarray(x), expect)


def test_concurrent_reads_and_writes_give_a_serial_result():
    x = realized(np.zeros(16, np.float32))
    y = realized(np.arange(16, dtype=np.float32))
    errors = []

    def writer():
        try:
            for k in range(40):
                x[k % 16] = float(k)
        except Exception as exc:
            errors.append(exc)

    def reader():
        try:
            for _ in range(40):
                s = float(xp.sum(y * 2.0))
                assert s == 240.0
                h = np.asarray(x)
                assert h.shape == (16,)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader), threading.Thread(target=reader)]
    _start_and_join(threads)
    assert not errors
    expect = np.zeros(16, np.float32)
    for k in range(40):
        expect[k % 16] = k
    assert np.array_equal(np.asarray(x), expect)


def test_add_to_diagonal_pattern_copies_once_then_writes_in_place():
    n = 40
    a = np.random.default_rng(2).random((n, n), dtype=np.float32)
    x = realized(a)
    debug.reset_counters()
    value = xp.linalg.diagonal(x) + 1.0  # pending: reads x's buffer, so the first write copies
    for i in range(n):
        x[i, i] = value[i]
    h = np.asarray(x)
    c = debug.counters()
    # the first element value (it reads x) and one copy of x; then one write each
    assert c["dispatches"] == n + 2 and c["realizations"] == 2
    b = a.copy()
    b[np.arange(n), np.arange(n)] += np.float32(1.0)
    assert np.array_equal(h, b)


def test_write_loop_into_a_pending_array_realizes_it_once():
    n = 50
    a = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32)
    x = realized(a)
    d = xp.maximum(x * 2.0 - 1.0, 0.0)  # pending, as a distance matrix before its diagonal fill
    debug.reset_counters()
    for i in range(n):
        d[i, i] = 0.0
    h = np.asarray(d)
    c = debug.counters()
    assert c["realizations"] <= 2 and c["dispatches"] <= n + 2
    e = np.maximum(a * np.float32(2.0) - np.float32(1.0), np.float32(0.0))
    np.fill_diagonal(e, 0.0)
    assert np.array_equal(h, e)


def test_readers_see_whole_writes_and_no_stale_mirror_after_concurrent_writes():
    x = realized(np.zeros((8, 8), np.float32))
    errors = []
    done = threading.Event()

    def writer():
        try:
            for k in range(1, 31):
                x[...] = float(k)
        except Exception as exc:
            errors.append(exc)
        finally:
            done.set()

    def reader():
        try:
            while not done.is_set():
                h = np.asarray(x)
                assert (h == h.flat[0]).all()  # one write or the next, never a mix
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader), threading.Thread(target=reader)]
    _start_and_join(threads)
    assert not errors
    assert np.array_equal(np.asarray(x), np.full((8, 8), 30, np.float32))


def test_element_writes_from_scalars_and_zero_d_arrays_and_bad_indices():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = realized(a)
    v = xp.asarray(7, dtype=xp.float32)  # 0-d, as scikit-learn's fill value
    debug.reset_counters()
    for i in range(3):
        x[i, i] = v
    x[-1, -1] = 3  # a Python int into float32
    x[0, 3] = -2.5
    c = debug.counters()
    assert c["realizations"] == 0 and c["dispatches"] <= 2
    for i in range(3):
        a[i, i] = 7
    a[-1, -1] = 3
    a[0, 3] = -2.5
    assert np.array_equal(np.asarray(x), a)
    with pytest.raises(IndexError, match="__setitem__: index 3 is out of bounds for axis 0 with size 3"):
        x[3, 0] = 1.0
    i = realized(np.zeros(3, np.int32))
    with pytest.raises((TypeError, OverflowError, ValueError)):
        i[0] = 1.5
    i[1] = -(2 ** 31)
    assert np.array_equal(np.asarray(i), np.array([0, -(2 ** 31), 0], np.int32))


def test_row_write_loop_into_a_large_array_stays_in_few_submits(no_early_submit):
    n = 512
    x = realized(np.zeros((n, n), np.float32))
    row = xp.asarray(np.arange(n, dtype=np.float32))
    debug.reset_counters()
    for i in range(200):
        x[i, :] = row  # a region write: one dispatch each; the target is no temporary
    c = debug.counters()
    assert c["dispatches"] == 200 and c["realizations"] == 0 and c["submits"] <= 1
    h = np.asarray(x)
    assert np.array_equal(h[:200], np.broadcast_to(np.arange(n, dtype=np.float32), (200, n)))
    assert not h[200:].any()
