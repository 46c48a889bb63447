"""Creation functions against NumPy, for every dtype the device offers."""
from __future__ import annotations

import array

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from conftest import (DEFAULT_COMPLEX, DEFAULT_FLOAT, DTYPES, HAS_F64, INTEGER, REAL_FLOAT, assert_exact,
                      ids, npdt, sample, to_np)

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 5)]


def one_value(d):
    return {"b": True, "i": -3, "u": 7, "f": -2.5, "c": 1.5 - 2j}[d.kind]


# ------------------------------------------------------------------ constants

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_zeros_ones_empty_every_dtype_and_shape(d, shape):
    assert_exact(xp.zeros(shape, dtype=d), np.zeros(shape, npdt(d)))
    assert_exact(xp.ones(shape, dtype=d), np.ones(shape, npdt(d)))
    e = xp.empty(shape, dtype=d)
    assert e.shape == shape and e.dtype == d


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_full_every_dtype(d):
    v = one_value(d)
    assert_exact(xp.full((2, 3), v, dtype=d), np.full((2, 3), v, npdt(d)))
    assert_exact(xp.full((), v, dtype=d), np.full((), v, npdt(d)))


def test_full_infers_dtype_from_fill_value():
    assert xp.full(3, True).dtype == xp.bool
    assert xp.full(3, 5).dtype == xp.int64
    assert xp.full(3, 5.0).dtype == DEFAULT_FLOAT
    assert xp.full(3, 5j).dtype == DEFAULT_COMPLEX
    assert_exact(xp.full(4, -7), np.full(4, -7, np.int64))


def test_full_int_shape_and_special_floats():
    assert xp.zeros(4).shape == (4,)
    assert xp.zeros(4).dtype == DEFAULT_FLOAT
    assert_exact(xp.full(3, float("nan"), dtype=xp.float32), np.full(3, np.nan, np.float32))
    assert_exact(xp.full(3, -0.0, dtype=xp.float32), np.full(3, -0.0, np.float32))
    assert_exact(xp.full(3, -float("inf"), dtype=xp.float32), np.full(3, -np.inf, np.float32))


def test_full_rejects_out_of_range_and_bad_shape():
    with pytest.raises(OverflowError):
        xp.full(2, 300, dtype=xp.uint8)
    with pytest.raises(ValueError):
        xp.zeros((-1, 2))
    with pytest.raises(TypeError):
        xp.zeros((2.0, 3))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_like_functions_keep_shape_and_dtype(d):
    x = xp.asarray(sample(d, 16)[:12].reshape(3, 4))
    for fn, ref in ((xp.zeros_like, np.zeros_like), (xp.ones_like, np.ones_like)):
        assert_exact(fn(x), ref(np.asarray(x)))
    assert_exact(xp.full_like(x, one_value(d)), np.full((3, 4), one_value(d), npdt(d)))
    e = xp.empty_like(x)
    assert e.shape == (3, 4) and e.dtype == d and e.device == x.device


def test_like_functions_with_dtype_override():
    x = xp.asarray([1, 2, 3], dtype=xp.int16)
    assert_exact(xp.ones_like(x, dtype=xp.float32), np.ones(3, np.float32))
    assert_exact(xp.zeros_like(x, dtype=xp.bool), np.zeros(3, bool))
    assert_exact(xp.full_like(x, 2.5, dtype=xp.float32), np.full(3, 2.5, np.float32))
    assert xp.empty_like(x, dtype=xp.uint8).dtype == xp.uint8
    assert_exact(xp.zeros_like(xp.zeros((0, 2))), np.zeros((0, 2), npdt(DEFAULT_FLOAT)))


# ------------------------------------------------------------------ arange / linspace

@pytest.mark.parametrize("args", [(5,), (0,), (-3,), (2, 9), (9, 2), (9, 2, -2), (-5, 6, 3), (1, 2, 5),
                                  (0, 10, 100), (10, -10, -3)])
def test_arange_integers(args):
    assert_exact(xp.arange(*args), np.arange(*args, dtype=np.int64))


@pytest.mark.parametrize("d", [d for d in DTYPES if d.kind in "iuf"], ids=lambda d: d.name)
def test_arange_every_real_dtype(d):
    assert_exact(xp.arange(0, 20, 3, dtype=d), np.arange(0, 20, 3, dtype=npdt(d)))
    assert_exact(xp.arange(5, dtype=d), np.arange(5, dtype=npdt(d)))
    if d.kind != "u":
        assert_exact(xp.arange(4, -4, -2, dtype=d), np.arange(4, -4, -2, dtype=npdt(d)))


@pytest.mark.parametrize("args", [(0.0, 1.0, 0.1), (1.5,), (-2.0, 2.0, 0.5), (3, 0.5, -0.25), (0, 5.5), (1.0, 1.0)])
def test_arange_floats(args):
    got = xp.arange(*args)
    want = np.arange(*args, dtype=npdt(DEFAULT_FLOAT))
    assert got.dtype == DEFAULT_FLOAT and got.shape == want.shape
    np.testing.assert_allclose(to_np(got), want, rtol=1e-6, atol=1e-6)


def test_arange_int64_beyond_32_bits():
    start = 2**40 - 3
    assert_exact(xp.arange(start, start + 6), np.arange(start, start + 6, dtype=np.int64))
    assert_exact(xp.arange(-(2**35), -(2**35) + 10**9 * 4, 10**9), np.arange(-(2**35), -(2**35) + 4 * 10**9, 10**9))


def test_arange_takes_0d_arrays_as_their_scalars():
    # SciPy's cramervonmises: xp.arange(1, n + 1, dtype=n.dtype) with a 0-d n (NumPy,
    # CuPy and PyTorch take it)
    n = xp.asarray(5.0, dtype=DEFAULT_FLOAT)
    assert_exact(xp.arange(1, n + 1, dtype=n.dtype), np.arange(1, 6, dtype=npdt(DEFAULT_FLOAT)))
    assert_exact(xp.arange(xp.asarray(4)), np.arange(4, dtype=np.int64))
    got = xp.arange(xp.asarray(0.5, dtype=DEFAULT_FLOAT), 3, xp.asarray(1))
    assert got.dtype == DEFAULT_FLOAT
    np.testing.assert_allclose(to_np(got), np.arange(0.5, 3, dtype=npdt(DEFAULT_FLOAT)))
    with pytest.raises(TypeError, match="arange: expected stop"):
        xp.arange(0, xp.asarray([3]))
    with pytest.raises(TypeError, match="arange: expected start"):
        xp.arange(xp.asarray(1j))


def test_arange_errors():
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError):
        xp.arange(1j)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("start,stop,num", [(0, 1, 5), (-3.5, 7.25, 11), (2, -2, 9), (0, 1, 1), (0, 1, 0),
                                            (1, 1, 4), (0, 10, 2)])
def test_linspace(start, stop, num, endpoint):
    for d in REAL_FLOAT:
        got = xp.linspace(start, stop, num, dtype=d, endpoint=endpoint)
        want = np.linspace(start, stop, num, dtype=npdt(d), endpoint=endpoint)
        assert got.dtype == d and got.shape == want.shape
        np.testing.assert_allclose(to_np(got), want, rtol=4 * np.finfo(npdt(d)).eps, atol=1e-6)
        if endpoint and num > 1:
            assert to_np(got)[-1] == npdt(d).type(stop)
        if num > 0:
            assert to_np(got)[0] == npdt(d).type(start)


def test_linspace_default_and_complex():
    assert xp.linspace(0, 1, 3).dtype == DEFAULT_FLOAT
    got = xp.linspace(0, 1 + 2j, 5)
    assert got.dtype == DEFAULT_COMPLEX
    np.testing.assert_allclose(to_np(got), np.linspace(0, 1 + 2j, 5), rtol=1e-6)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 3, dtype=xp.int32)


# ------------------------------------------------------------------ eye / tril / triu

@pytest.mark.parametrize("n,m", [(0, None), (1, None), (4, None), (3, 5), (5, 3), (2, 0)])
@pytest.mark.parametrize("k", [0, 1, -1, 2, -4, 7])
def test_eye(n, m, k):
    assert_exact(xp.eye(n, m, k=k), np.eye(n, m, k=k, dtype=npdt(DEFAULT_FLOAT)))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_eye_every_dtype(d):
    assert_exact(xp.eye(3, 4, k=1, dtype=d), np.eye(3, 4, k=1, dtype=npdt(d)))


@pytest.mark.parametrize("k", [0, 1, -1, 3, -3, 10, -10])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4), (0, 3), (1, 1)], ids=str)
def test_tril_triu(shape, k):
    h = np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape)
    x = xp.asarray(h)
    assert_exact(xp.tril(x, k=k), np.tril(h, k=k))
    assert_exact(xp.triu(x, k=k), np.triu(h, k=k))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_tril_triu_every_dtype(d):
    h = sample(d, 32)[:20].reshape(4, 5)
    x = xp.asarray(h)
    assert_exact(xp.tril(x, k=-1), np.tril(h, k=-1))
    assert_exact(xp.triu(x, k=1), np.triu(h, k=1))


def test_tril_of_a_strided_view():
    h = np.arange(36, dtype=np.int32).reshape(6, 6)
    x = xp.asarray(h)
    assert_exact(xp.tril(x.T[::2]), np.tril(h.T[::2]))


def test_tril_rejects_1d():
    with pytest.raises(ValueError):
        xp.tril(xp.ones(3))


# ------------------------------------------------------------------ meshgrid

@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (2, 3, 4), (0, 2), (1, 4, 1)], ids=str)
def test_meshgrid(sizes, indexing):
    hs = [np.arange(n, dtype=np.int32) * (i + 1) for i, n in enumerate(sizes)]
    got = xp.meshgrid(*[xp.asarray(h) for h in hs], indexing=indexing)
    want = np.meshgrid(*hs, indexing=indexing)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_exact(g, w)


def test_meshgrid_errors():
    assert xp.meshgrid() == ()
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones(2), indexing="xx")
    with pytest.raises(TypeError):
        xp.meshgrid(xp.ones(2, dtype=xp.float32), xp.ones(2, dtype=xp.int32))


# ------------------------------------------------------------------ asarray

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_asarray_from_numpy_every_dtype_and_shape(d):
    h = sample(d, 8)
    for shape in [(), (0,), (h.size,), (2, h.size // 2)]:
        src = h[: int(np.prod(shape))].reshape(shape)
        assert_exact(xp.asarray(src), src)


def test_asarray_from_noncontiguous_and_byteswapped_numpy():
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert_exact(xp.asarray(h[::2, ::-3]), h[::2, ::-3])
    assert_exact(xp.asarray(h.T), h.T)
    be = h.astype(">f4")
    assert_exact(xp.asarray(be), h)


def test_asarray_python_scalars_take_default_dtypes():
    assert_exact(xp.asarray(True), np.array(True))
    assert_exact(xp.asarray(-5), np.array(-5, np.int64))
    assert xp.asarray(2.5).dtype == DEFAULT_FLOAT
    assert xp.asarray(1 - 1j).dtype == DEFAULT_COMPLEX
    assert complex(xp.asarray(1 - 1j)) == 1 - 1j
    assert xp.asarray(0.1).shape == ()


def test_asarray_nested_sequences():
    assert_exact(xp.asarray([[1, 2, 3], [4, 5, 6]]), np.array([[1, 2, 3], [4, 5, 6]], np.int64))
    assert_exact(xp.asarray([[True, False]]), np.array([[True, False]]))
    assert xp.asarray([1, 2.5]).dtype == DEFAULT_FLOAT
    assert xp.asarray([1, 2j]).dtype == DEFAULT_COMPLEX
    assert_exact(xp.asarray(((1, 2), (3, 4)), dtype=xp.int8), np.array([[1, 2], [3, 4]], np.int8))
    assert_exact(xp.asarray([]), np.array([], npdt(DEFAULT_FLOAT)))
    with pytest.raises((ValueError, TypeError)):
        xp.asarray([[1, 2], [3]])


def test_asarray_nested_numpy_scalars_keep_their_dtypes():
    # as NumPy and array_api_strict infer them (SciPy builds references this way:
    # xp.asarray([np.int32(status) for ...]) must be int32)
    cases = [[np.int32(1), np.int32(-2)], [[np.int16(3)], [np.int16(4)]], (np.uint8(255), np.uint8(0)),
             [np.float32(1.5), np.float32(-0.0)], [np.int32(1), 2], [np.bool_(True), np.bool_(False)],
             [np.int8(-3), np.int16(300)]]
    if HAS_F64:
        cases.append([np.float32(1.5), np.float64(0.1)])
    for v in cases:
        assert_exact(xp.asarray(v), np.asarray(v))
    # np.float64 / np.complex128 are Python floats / complexes: the default dtypes, alone or listed
    assert xp.asarray([np.float64(0.5)]).dtype == xp.asarray(np.float64(0.5)).dtype == DEFAULT_FLOAT
    assert xp.asarray([np.complex128(1j)]).dtype == DEFAULT_COMPLEX
    assert_exact(xp.asarray([np.int32(7)], dtype=xp.int64), np.array([7], np.int64))


def test_asarray_nested_sequence_of_arrays():
    a, b = xp.asarray([1.0, 2.0], dtype=xp.float32), xp.asarray([3.0, 4.0], dtype=xp.float32)
    assert_exact(xp.asarray([a, b]), np.array([[1, 2], [3, 4]], np.float32))


def test_asarray_python_int_range():
    assert_exact(xp.asarray(2**63 - 1), np.array(2**63 - 1, np.int64))
    assert_exact(xp.asarray(2**64 - 1, dtype=xp.uint64), np.array(2**64 - 1, np.uint64))
    with pytest.raises(OverflowError):
        xp.asarray(2**63)
    with pytest.raises(OverflowError):
        xp.asarray([1, 300], dtype=xp.uint8)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_asarray_with_dtype_from_python(d):
    vals = {"b": [True, False], "i": [-3, 0, 5], "u": [0, 5, 200], "f": [0.5, -1.0, 3.0],
            "c": [1 + 1j, -2j, 3.0]}[d.kind]
    assert_exact(xp.asarray(vals, dtype=d), np.array(vals, dtype=npdt(d)))


def test_asarray_from_buffers():
    buf = array.array("f", [1.0, 2.0, -3.5])
    assert_exact(xp.asarray(buf), np.array([1.0, 2.0, -3.5], np.float32))
    assert_exact(xp.asarray(bytearray(b"\x01\x02\xff")), np.array([1, 2, 255], np.uint8))
    assert_exact(xp.asarray(memoryview(np.arange(6, dtype=np.int16).reshape(2, 3))),
                 np.arange(6, dtype=np.int16).reshape(2, 3))
    assert_exact(xp.asarray(array.array("q", [2**40, -1])), np.array([2**40, -1], np.int64))


def test_asarray_copy_semantics_for_wgarray_input():
    x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32)
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=False) is x
    assert xp.asarray(x, copy=None) is x
    y = xp.asarray(x, copy=True)
    assert y is not x
    assert_exact(y, np.array([1, 2, 3], np.float32))
    x += 1  # rebinding x must not change the copy
    assert_exact(y, np.array([1, 2, 3], np.float32))
    assert_exact(x, np.array([2, 3, 4], np.float32))
    z = xp.asarray(x, dtype=xp.int32)
    assert_exact(z, np.array([2, 3, 4], np.int32))
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.int32, copy=False)
    assert xp.asarray(x, dtype=xp.float32, copy=False) is x


def test_asarray_copy_semantics_for_host_input():
    h = np.arange(4, dtype=np.int32)
    y = xp.asarray(h, copy=True)
    z = xp.asarray(h)
    h[0] = 100  # the device copy is independent of the host array
    assert_exact(y, np.arange(4, dtype=np.int32))
    assert_exact(z, np.arange(4, dtype=np.int32))
    with pytest.raises(ValueError):
        xp.asarray(h, copy=False)


def test_asarray_rejects_unsupported():
    with pytest.raises(TypeError):
        xp.asarray(["a", "b"])
    with pytest.raises(TypeError):
        xp.asarray(np.array([1, 2], dtype=np.float16))
    with pytest.raises(TypeError):
        xp.asarray([1j], dtype=xp.float32)


@pytest.mark.skipif(HAS_F64, reason="the device offers float64")
def test_float64_absent_raises_naming_the_device():
    with pytest.raises(TypeError, match="float64"):
        xp.asarray([1.0], dtype=xp.float64)
    with pytest.raises(TypeError, match="float64"):
        xp.zeros(3, dtype=xp.float64)
    with pytest.raises(TypeError, match="float64"):
        xp.asarray(np.ones(3))


@given(st.lists(st.lists(st.integers(-2**31, 2**31 - 1), min_size=2, max_size=2), max_size=5))
def test_asarray_nested_int_lists_hypothesis(rows):
    want = np.array(rows, dtype=np.int64).reshape(len(rows), 2) if rows else np.array([], np.int64)
    got = xp.asarray(rows, dtype=xp.int64) if not rows else xp.asarray(rows)
    assert_exact(got, want)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=12))
def test_asarray_float32_round_trip_hypothesis(vals):
    h = np.array(vals, dtype=np.float32)
    assert_exact(xp.asarray(h), h)


# ------------------------------------------------------------------ from_dlpack

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_from_dlpack_numpy(d):
    h = sample(d, 16)[:10].reshape(2, 5)
    if d.kind == "b" and np.lib.NumpyVersion(np.__version__) < "1.25.0":
        pytest.skip("old NumPy cannot export bool through DLPack")
    assert_exact(xp.from_dlpack(h), h)


def test_from_dlpack_strided_numpy_and_wgarray():
    h = np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2]
    assert_exact(xp.from_dlpack(h), h)
    x = xp.asarray(h)
    assert_exact(xp.from_dlpack(x), h)
    with pytest.raises(ValueError):
        xp.from_dlpack(np.arange(3), copy=False)
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2, 3])


def test_integer_creation_matches_each_integer_dtype():
    for d in INTEGER:
        info = np.iinfo(npdt(d))
        h = np.array([info.min, 0, info.max], npdt(d))
        assert_exact(xp.asarray(h), h)


@pytest.mark.parametrize("d", [xp.uint64, xp.int64, xp.uint32, xp.int8], ids=str)
def test_asarray_python_ints_exact_over_the_whole_integer_range(d):
    # a list mixing values beyond int64 (or beyond float64's 53 bits) with small ones
    info = np.iinfo(d.numpy if hasattr(d, "numpy") else np.dtype(str(d)))
    vals = [int(info.max), int(info.min), 0, 3, int(info.max) - 2, True]
    if info.max > 2**53:
        vals += [2**53 + 1, int(info.max) // 2 + 1]
    x = xp.asarray(vals, dtype=d)
    assert [int(x[i]) for i in range(len(vals))] == [int(v) for v in vals]
    with pytest.raises(OverflowError, match="asarray"):
        xp.asarray([int(info.max) + 1, 1], dtype=d)
