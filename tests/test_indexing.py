"""__getitem__, __setitem__, take and take_along_axis against NumPy, for every dtype the
device offers (the suite also runs with WGARRAY_DISABLE_FEATURES=shader-f64,shader-int64)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from wgarray import debug
from conftest import DTYPES, assert_exact, ids, sample

SHAPE = (3, 4, 5)


def base(d, shape=SHAPE, seed=0):
    vals = sample(d, 64, seed)
    n = int(np.prod(shape))
    return np.resize(vals, n).reshape(shape)


def wrap(k):
    """A key with NumPy arrays turned into wgarray arrays."""
    if isinstance(k, tuple):
        return tuple(wrap(e) for e in k)
    return xp.asarray(k) if isinstance(k, np.ndarray) else k


def device_only(k):
    """Like ``wrap``, but the index arrays have no host copy (their bounds are checked
    on the device)."""
    if isinstance(k, tuple):
        return tuple(device_only(e) for e in k)
    if isinstance(k, np.ndarray):
        return xp.asarray(k) + 0 if k.dtype != bool else xp.asarray(k) & True
    return k


BASIC_KEYS = [
    0, -1, (1, 2), (slice(None), 1), (slice(None, None, -1),), (slice(3, None, -2), slice(1, 4)),
    (Ellipsis, 2), (None, 1, Ellipsis, None), (slice(10, 20),), (slice(None), slice(4, 0, -3), -2),
    (Ellipsis,), (), (slice(0, 0),),
]

ADVANCED_KEYS = [
    np.array([2, 0, -1, 2]),
    (slice(None), np.array([3, -4])),
    (np.array([[0], [2]]), slice(1, 3), np.array([4, -1, 0])),   # separated: broadcast dims first
    (slice(None), np.array([1, 1]), np.array([0, 4])),           # adjacent: stay in place
    (1, slice(None), np.array([0, 3])),                          # int counts as an array
    (Ellipsis, np.array([[4, 3], [2, 1]])),
    (None, np.array([0, 1]), None),
    np.array([], dtype=np.int64),
    (np.array(2), np.array(-1)),
]

MASK_KEYS = [
    lambda a: a.real > 0 if a.dtype.kind == "c" else a.astype(bool),
    lambda a: np.arange(a.shape[0]) % 2 == 0,
    lambda a: (slice(None), np.array([True, False, True, True])),
    lambda a: (Ellipsis, np.arange(5) > 2),
    lambda a: np.zeros(a.shape, bool),
]


# ----------------------------------------------------------------- getitem

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_getitem_basic_every_dtype_is_a_view(d):
    a = base(d)
    x = xp.asarray(a)
    for key in BASIC_KEYS:
        before = debug.counters()["dispatches"]
        y = x[key]
        assert debug.counters()["dispatches"] == before, key  # a view: no kernel
        assert_exact(y, a[key], msg=f"key {key!r}")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_getitem_integer_arrays_every_dtype(d):
    a = base(d)
    x = xp.asarray(a)
    for key in ADVANCED_KEYS:
        assert_exact(x[wrap(key)], a[key], msg=f"key {key!r}")
    for key in ADVANCED_KEYS[:3]:
        assert_exact(x[device_only(key)], a[key], msg=f"device key {key!r}")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_getitem_boolean_masks_every_dtype(d):
    a = base(d)
    x = xp.asarray(a)
    for make in MASK_KEYS:
        key = make(a)
        assert_exact(x[wrap(key)], a[key], msg=f"mask {key!r}")


@pytest.mark.parametrize("idx_dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_getitem_every_index_dtype(idx_dtype):
    a = np.arange(200, dtype=np.float32)
    i = np.array([0, 5, 127, 3], dtype=idx_dtype)
    x = xp.asarray(a)
    assert_exact(x[xp.asarray(i)], a[i])
    assert_exact(x[xp.asarray(i) + 0], a[i])  # bounds checked on the device
    if idx_dtype.startswith("int"):
        j = np.array([-1, -128 if idx_dtype == "int8" else -200], dtype=idx_dtype)
        assert_exact(x[xp.asarray(j) + 0], a[j])


def test_getitem_numpy_integer_scalars_and_zero_d():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = xp.asarray(a)
    assert_exact(x[np.int64(2), np.uint8(1)], a[2, 1])
    assert_exact(x[xp.asarray(True)], a[True])
    assert_exact(x[xp.asarray(False)], a[False])
    assert_exact(x[True], a[True])
    z = xp.asarray(np.float32(3.5))
    assert_exact(z[()], np.float32(3.5))
    assert_exact(z[...], np.float32(3.5))
    assert_exact(z[None], np.array([3.5], np.float32))
    assert_exact(z[xp.asarray(True)], np.array([3.5], np.float32))


def test_getitem_empty_arrays():
    a = np.zeros((0, 3), np.float32)
    x = xp.asarray(a)
    assert_exact(x[:, 1], a[:, 1])
    assert_exact(x[xp.asarray(np.zeros(0, np.int64))], a[np.zeros(0, np.int64)])
    assert_exact(x[:, xp.asarray(np.array([2, 0]))], a[:, [2, 0]])
    assert_exact(x[xp.asarray(np.zeros((0, 3), bool))], a[np.zeros((0, 3), bool)])


def test_getitem_fuses_index_arithmetic_into_one_dispatch():
    a = np.arange(50, dtype=np.float32)
    x = xp.asarray(a) * 2
    i = xp.asarray(np.array([1, 7, 3]))
    i.__array__()  # host copy: bounds are checked there, no flag readback
    debug.reset_counters()
    y = x[i]
    c = debug.counters()
    assert c["dispatches"] == 1 and c["readbacks"] == 0
    debug.reset_counters()
    z = x[i + 1]  # on the device only: one dispatch, one 4-byte flag readback
    c = debug.counters()
    assert c["dispatches"] == 1 and c["readbacks"] == 1
    assert_exact(y, (a * 2)[[1, 7, 3]])
    assert_exact(z, (a * 2)[[2, 8, 4]])


@pytest.mark.parametrize("key", [5, -6, (0, 9), (slice(None), 7)])
def test_getitem_int_out_of_bounds_raises(key):
    x = xp.asarray(np.zeros((5, 6), np.float32))
    with pytest.raises(IndexError, match="__getitem__"):
        x[key]


@pytest.mark.parametrize("where", ["host", "device"])
def test_getitem_array_out_of_bounds_raises_at_the_call(where):
    x = xp.asarray(np.zeros((5, 6), np.float32))
    for bad in (np.array([0, 6]), np.array([-7]), np.array([[1], [99]])):
        k = xp.asarray(bad) if where == "host" else xp.asarray(bad) + 0
        if where == "host":
            k.__array__()
        with pytest.raises(IndexError, match="out of bounds"):
            x[k]
        with pytest.raises(IndexError, match="out of bounds"):
            x[:, k]


def test_getitem_rejects_bad_keys():
    x = xp.asarray(np.zeros((4, 4), np.float32))
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(IndexError):
        x[xp.asarray(np.array([1.0], np.float32))]
    with pytest.raises(IndexError, match="boolean index"):
        x[xp.asarray(np.ones(3, bool))]
    with pytest.raises(TypeError, match="list"):
        x[[0, 1]]
    with pytest.raises(IndexError):
        x[1.5]


@given(st.data())
def test_getitem_hypothesis_mixed_keys(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = []
    m = data.draw(st.integers(0, 3))  # one length for all index arrays: they broadcast
    for n in shape:
        kind = data.draw(st.sampled_from(["slice", "int", "arr"] if n else ["slice", "arr"]))
        if kind == "slice":
            lo = data.draw(st.integers(-n - 1, n + 1))
            hi = data.draw(st.integers(-n - 1, n + 1))
            step = data.draw(st.sampled_from([1, 2, -1, -3]))
            key.append(slice(lo, hi, step))
        elif kind == "int":
            key.append(data.draw(st.integers(-n, n - 1)))
        else:
            if not n:
                m = 0
            key.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=m, max_size=m)) if n else [],
                                dtype=np.int64))
    if data.draw(st.booleans()):
        key.insert(data.draw(st.integers(0, len(key))), None)
    key = tuple(key)
    want = a[key]
    assert_exact(xp.asarray(a)[wrap(key)], want, msg=f"key {key!r}")


# ----------------------------------------------------------------- setitem

def _value(d, shape, seed=3):
    return base(d, shape, seed)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_setitem_basic_every_dtype(d):
    a = base(d)
    scalar = {"b": True, "i": -2, "u": 3, "f": -1.5, "c": 2 - 1j}[d.kind]
    for key in BASIC_KEYS:
        want = a.copy()
        want[key] = scalar
        x = xp.asarray(a)
        x[key] = scalar
        assert_exact(x, want, msg=f"scalar key {key!r}")
        region = a[key].shape
        v = _value(d, region)
        want = a.copy()
        want[key] = v
        x = xp.asarray(a)
        x[key] = xp.asarray(v)
        assert_exact(x, want, msg=f"array key {key!r}")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_setitem_basic_broadcast_value(d):
    a = base(d)
    v = _value(d, (5,))
    want = a.copy()
    want[1:, ::-2] = v
    x = xp.asarray(a)
    x[1:, ::-2] = xp.asarray(v)
    assert_exact(x, want)
    want = a.copy()
    want[..., 2] = v[:4]
    x = xp.asarray(a)
    x[..., 2] = xp.asarray(v[:4])
    assert_exact(x, want)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_setitem_integer_arrays_every_dtype(d):
    a = base(d)
    for key in ADVANCED_KEYS[:6]:
        region = a[key].shape
        v = _value(d, region)
        want = a.copy()
        want[key] = v
        x = xp.asarray(a)
        x[wrap(key)] = xp.asarray(v)
        assert_exact(x, want, msg=f"key {key!r}")
    x = xp.asarray(a)
    x[device_only(ADVANCED_KEYS[2])] = xp.asarray(_value(d, a[ADVANCED_KEYS[2]].shape))
    want = a.copy()
    want[ADVANCED_KEYS[2]] = _value(d, a[ADVANCED_KEYS[2]].shape)
    assert_exact(x, want)


def test_setitem_repeated_indices_last_write_wins():
    for name in ("int8", "uint16", "int32", "float32", "int64", "complex64"):
        a = np.zeros(10, name)
        i = np.array([3, 3, 4, 3, 4, 9])
        v = np.arange(1, 7).astype(name)
        want = a.copy()
        want[i] = v  # NumPy: the last write wins
        x = xp.asarray(a)
        x[xp.asarray(i)] = xp.asarray(v)
        assert_exact(x, want, msg=name)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_setitem_boolean_masks_every_dtype(d):
    a = base(d)
    scalar = {"b": False, "i": 7, "u": 7, "f": 0.25, "c": 1j}[d.kind]
    for make in MASK_KEYS:
        key = make(a)
        want = a.copy()
        want[key] = scalar
        x = xp.asarray(a)
        x[wrap(key)] = scalar
        assert_exact(x, want, msg=f"mask {key!r}")
        region = a[key].shape
        v = _value(d, region)
        want = a.copy()
        want[key] = v
        x = xp.asarray(a)
        x[wrap(key)] = xp.asarray(v)
        assert_exact(x, want, msg=f"mask {key!r} array value")
    # a value broadcast along the masked rows
    m = np.array([True, False, True])
    v = _value(d, (4, 5))
    want = a.copy()
    want[m] = v
    x = xp.asarray(a)
    x[xp.asarray(m)] = xp.asarray(v)
    assert_exact(x, want)


def test_setitem_mask_with_scalar_performs_no_readback():
    a = np.linspace(-3, 3, 101, dtype=np.float32)
    x = xp.asarray(a) * 2
    debug.reset_counters()
    x[x < 0] = 0
    c = debug.counters()
    assert c["readbacks"] == 0 and c["dispatches"] == 0  # lazy: where(mask, 0, x)
    want = a * 2
    want[want < 0] = 0
    assert_exact(x, want)
    y = xp.asarray(a)
    debug.reset_counters()
    y[y > 1] = xp.asarray(np.float32(5))
    y[xp.asarray(True)] = y + 1
    assert debug.counters()["readbacks"] == 0


def test_setitem_updates_the_array_and_its_views_not_other_results():
    a = np.arange(6, dtype=np.int32)
    x = xp.asarray(a)
    view = x[1:4]
    copy = x[xp.asarray([1, 2, 3])]
    doubled = x * 2
    before = x
    x[2] = 100
    assert x is before
    assert_exact(x, np.array([0, 1, 100, 3, 4, 5], np.int32))
    assert_exact(view, np.array([1, 100, 3], np.int32))  # basic indexing: shares, as NumPy
    assert_exact(copy, a[1:4])
    assert_exact(doubled, a * 2)


def test_setitem_zero_d_and_empty():
    x = xp.asarray(np.float32(1))
    x[()] = 4.0
    assert_exact(x, np.float32(4))
    x[...] = xp.asarray(np.float32(-2))
    assert_exact(x, np.float32(-2))
    e = xp.asarray(np.zeros((0, 3), np.int16))
    e[:, 1] = 3
    e[xp.asarray(np.zeros((0, 3), bool))] = 1
    assert_exact(e, np.zeros((0, 3), np.int16))


def test_setitem_errors():
    x = xp.asarray(np.zeros((4, 5), np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        x[1:3] = xp.asarray(np.zeros((3, 5), np.int32))
    with pytest.raises(TypeError):
        x[0] = 1.5
    with pytest.raises(TypeError, match="dtype"):
        x[0] = xp.asarray(np.zeros(5, np.float32))
    with pytest.raises(OverflowError):
        x[0] = 2**40
    with pytest.raises(IndexError, match="out of bounds"):
        x[xp.asarray(np.array([0, 4])) + 0] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, xp.asarray(np.array([-6]))] = 1
    assert_exact(x, np.zeros((4, 5), np.int32))


# ----------------------------------------------------------------- take

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_take_every_dtype(d):
    a = base(d)
    i = np.array([0, -1, 2, 2])
    for axis in (0, 1, -1):
        n = a.shape[axis]
        j = np.clip(i, -n, n - 1)
        assert_exact(xp.take(xp.asarray(a), xp.asarray(j) + 0, axis=axis), np.take(a, j, axis=axis))
    assert_exact(xp.take(xp.asarray(a[0, 0]), xp.asarray(i)), np.take(a[0, 0], i))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_take_along_axis_every_dtype(d):
    a = base(d)
    rng = np.random.default_rng(1)
    for axis in (0, 1, 2, -1):
        shape = list(a.shape)
        shape[axis] = 6
        idx = rng.integers(-a.shape[axis], a.shape[axis], shape)
        assert_exact(xp.take_along_axis(xp.asarray(a), xp.asarray(idx) + 0, axis=axis),
                     np.take_along_axis(a, idx, axis=axis))
    idx = rng.integers(0, 5, (1, 4, 2))  # broadcast along axis 0
    assert_exact(xp.take_along_axis(xp.asarray(a), xp.asarray(idx), axis=2),
                 np.take_along_axis(a, np.broadcast_to(idx, (3, 4, 2)), axis=2))


def test_take_errors():
    x = xp.asarray(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="take"):
        xp.take(x, xp.asarray(np.array([4])) + 0, axis=1)
    with pytest.raises(IndexError, match="take"):
        xp.take(x, xp.asarray(np.array([-5])), axis=1)
    with pytest.raises(ValueError, match="axis"):
        xp.take(x, xp.asarray(np.array([0])))
    with pytest.raises(TypeError, match="integer"):
        xp.take(x, xp.asarray(np.array([0.0], np.float32)), axis=0)
    with pytest.raises(IndexError, match="take_along_axis"):
        xp.take_along_axis(x, xp.asarray(np.full((3, 1), 4)) + 0, axis=1)
    with pytest.raises(ValueError, match="take_along_axis"):
        xp.take_along_axis(x, xp.asarray(np.zeros(2, np.int64)), axis=0)
    assert_exact(xp.take(x, xp.asarray(np.zeros(0, np.int64)), axis=1), np.zeros((3, 0), np.float32))


def test_mask_with_a_zero_length_dim_selects_nothing():
    # the standard's suite takes a mask dim of 0 as matching any axis length
    h = np.arange(6, dtype=np.float32).reshape(1, 6)
    x = xp.asarray(h)
    for mshape, want in (((0,), (0, 6)), ((1, 0), (0,)), ((0, 6), (0,))):
        got = x[xp.asarray(np.zeros(mshape, bool))]
        assert got.shape == want and np.asarray(got).size == 0
    x[xp.asarray(np.zeros((0,), bool))] = 5.0
    np.testing.assert_array_equal(np.asarray(x), h)
    with pytest.raises(IndexError):
        x[xp.asarray(np.zeros((2,), bool))]


# ------------------------------------------------------------------ views share elements

def test_basic_index_views_write_through_to_their_base():
    # as NumPy: x[1, :, :] shares x's elements (scikit-learn's _add_to_diagonal writes
    # the diagonal of covariances[k, :, :] one element at a time)
    a = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    x = xp.asarray(a)
    v = x[1, :, :]
    a1 = a[1, :, :]
    for i in range(3):
        v[i, i] = v[i, i] + 100
        a1[i, i] = a1[i, i] + 100
    assert_exact(x, a)
    assert_exact(v, a1)
    r = x[0][1:, ::-1]          # a view of a view, negative step
    ra = a[0][1:, ::-1]
    r[0, :] = -1
    ra[0, :] = -1
    r += 0.5
    ra += 0.5
    assert_exact(x, a)
    e = x[..., 2]
    e[...] = 7
    a[..., 2] = 7
    assert_exact(x, a)
    n = x[None, 0]
    n[0, 0, 0] = 3
    a[0, 0, 0] = 3
    assert_exact(x, a)


def test_views_show_later_writes_to_their_base():
    a = np.zeros((4, 5), np.int32)
    x = xp.asarray(a)
    row, col, inner = x[2], x[:, 3], x[1:3][1]
    x[2, 3] = 9
    x[x == 0] = 1              # a mask write to the base
    a[2, 3] = 9
    a[a == 0] = 1
    assert_exact(row, a[2])
    assert_exact(col, a[:, 3])
    assert_exact(inner, a[1:3][1])
    x += 1
    a += 1
    assert_exact(row, a[2])
    assert_exact(inner, a[2])


def test_advanced_indexing_results_are_copies():
    a = np.arange(10, dtype=np.float32)
    x = xp.asarray(a)
    t = x[xp.asarray([1, 2])]
    m = x[x > 5]
    t[0] = -1
    m[...] = -1
    assert_exact(x, a)
    assert_exact(t, np.array([-1, 2], np.float32))
