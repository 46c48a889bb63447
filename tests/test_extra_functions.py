"""median, bincount and the nan-reductions against NumPy; full with a 0-d fill value,
__format__, and the rules for mixing with NumPy operands."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from conftest import DEFAULT_FLOAT, HAS_F64

FDT = np.float64 if HAS_F64 else np.float32


def _data(shape, seed=0, nans=True):
    a = np.random.default_rng(seed).normal(size=shape).astype(FDT)
    if nans and a.size > 3:
        a.flat[[1, a.size // 2]] = np.nan
    return a


@pytest.mark.parametrize("shape,axis", [((7,), None), ((6,), 0), ((4, 5), 1), ((4, 5), 0), ((3, 4, 5), (0, 2)),
                                        ((3, 4, 5), -1), ((2, 3), None)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("nans", [False, True])
def test_median_matches_numpy_with_nan_axis_keepdims(shape, axis, keepdims, nans):
    a = _data(shape, nans=nans)
    got = np.asarray(xp.median(xp.asarray(a), axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(got, np.median(a, axis=axis, keepdims=keepdims))


def test_median_of_integers_is_float_and_of_empty_is_nan():
    a = np.array([[3, 1, 2, 8], [5, 5, -1, 0]], dtype=np.int32)
    got = xp.median(xp.asarray(a), axis=1)
    assert got.dtype == DEFAULT_FLOAT
    np.testing.assert_array_equal(np.asarray(got), np.median(a, axis=1))
    with np.errstate(all="ignore"):
        e = xp.median(xp.zeros((0, 3), dtype=xp.float32), axis=0)
    assert e.shape == (3,) and bool(xp.all(xp.isnan(e)))
    np.testing.assert_array_equal(np.asarray(xp.median(xp.asarray([-0.0, np.inf, 1.0]))), 1.0)


@pytest.mark.parametrize("values,minlength", [([0, 3, 3, 1, 7], 0), ([2, 2, 2], 10), ([], 4), ([], 0), ([5], 3)])
def test_bincount_counts_match_numpy(values, minlength):
    a = np.array(values, dtype=np.int64)
    got = xp.bincount(xp.asarray(a, dtype=xp.int64), minlength=minlength)
    ref = np.bincount(a, minlength=minlength)
    assert got.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(got), ref)


def test_bincount_weights_match_numpy():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 40, size=500)
    w = rng.integers(-5, 6, size=500).astype(FDT)  # exact sums: bitwise comparison
    got = xp.bincount(xp.asarray(a.astype(np.int32)), weights=xp.asarray(w), minlength=50)
    np.testing.assert_array_equal(np.asarray(got), np.bincount(a, weights=w, minlength=50).astype(FDT))
    wf = rng.random(500).astype(FDT)
    got = xp.bincount(xp.asarray(a), weights=xp.asarray(wf))
    np.testing.assert_allclose(np.asarray(got), np.bincount(a, weights=wf), rtol=1e-5 if FDT is np.float32 else 1e-12)


def test_bincount_rejects_bad_input():
    with pytest.raises(ValueError, match="bincount: expected non-negative"):
        xp.bincount(xp.asarray([1, -1]))
    with pytest.raises(TypeError, match="bincount: expected an integer array"):
        xp.bincount(xp.asarray([1.0]))
    with pytest.raises(ValueError, match="bincount: expected a 1-D array"):
        xp.bincount(xp.asarray([[1]]))


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nansum", "nanmean"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions_match_numpy(name, axis, keepdims):
    a = _data((5, 6))
    a[:, 2] = np.nan  # an all-NaN column
    a[0, 0], a[3, 4] = np.inf, -np.inf
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if name in ("nanmax", "nanmin", "nanmean") and axis == 0 else _null():
        ref = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    got = np.asarray(getattr(xp, name)(xp.asarray(a), axis=axis, keepdims=keepdims))
    if name in ("nansum", "nanmean"):
        np.testing.assert_allclose(got, ref, rtol=1e-6 if FDT is np.float32 else 1e-14)
    else:
        np.testing.assert_array_equal(got, ref)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_nan_reductions_of_integers():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.nanmax(x, axis=0)), np.nanmax(a, axis=0))
    np.testing.assert_array_equal(np.asarray(xp.nansum(x)), np.nansum(a))
    np.testing.assert_allclose(np.asarray(xp.nanmean(x, axis=1)), np.nanmean(a, axis=1))


def test_extra_functions_are_not_in_the_standard_all():
    for name in ("median", "bincount", "nanmax", "nanmin", "nansum", "nanmean"):
        assert hasattr(xp, name) and name not in xp.__all__


# ---------------------------------------------------------------- scalars and 0-d

def test_full_takes_a_0d_array_as_fill_value():
    v = xp.asarray(2.5, dtype=xp.float32)
    out = xp.full((2, 3), v)
    assert out.dtype == xp.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.5, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(xp.full(3, xp.asarray(7), dtype=xp.float32)), [7.0] * 3)
    out = xp.full(4, xp.asarray(np.nan, dtype=xp.float32))
    assert bool(xp.all(xp.isnan(out)))
    np.testing.assert_array_equal(np.asarray(xp.full(2, np.int64(3))), [3, 3])
    np.testing.assert_array_equal(np.asarray(xp.full(2, np.array(1.5))), [1.5, 1.5])
    with pytest.raises(ValueError, match="full: expected fill_value to be a scalar or a 0-d array"):
        xp.full(3, xp.asarray([1.0, 2.0]))


def test_format_of_0d_arrays_as_numpy():
    x = xp.asarray(1.23456, dtype=xp.float32)
    assert format(x, ".3f") == format(np.float32(1.23456), ".3f") == "1.235"
    assert f"{xp.asarray(42):>5d}" == "   42"
    assert format(xp.asarray([1.0, 2.0])) == str(np.asarray([1.0, 2.0], dtype=FDT))
    with pytest.raises(TypeError, match="__format__: expected a 0-d array"):
        format(xp.asarray([1.0, 2.0]), ".2f")


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__lt__", "__eq__", "__matmul__"])
def test_numpy_arrays_as_operands_raise_naming_asarray_both_ways(op):
    x = xp.asarray([1.0, 2.0], dtype=xp.float32)
    n = np.array([3.0, 4.0], dtype=np.float32)
    with pytest.raises(TypeError, match=r"xp\.asarray"):
        getattr(x, op)(n)
    assert getattr(n, op)(x) is NotImplemented  # NumPy defers to our reflected operator
    import operator

    fn = {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
          "__truediv__": operator.truediv, "__lt__": operator.lt, "__eq__": operator.eq,
          "__matmul__": operator.matmul}[op]
    with pytest.raises(TypeError, match=r"xp\.asarray"):
        fn(n, x)
    with pytest.raises(TypeError, match=r"xp\.asarray"):
        fn(x, n)


def test_numpy_scalars_and_0d_arrays_act_as_python_scalars():
    x = xp.asarray([1.0, 2.0], dtype=xp.float32)
    for s in (np.float64(2.0), np.float32(2.0), np.int64(2), np.array(2.0), np.array(2)):
        for out in (x * s, s * x, x + s, s + x, xp.multiply(x, s)):
            assert isinstance(out, xp.Array) and out.dtype == xp.float32
        np.testing.assert_array_equal(np.asarray(s * x), [2.0, 4.0])
        np.testing.assert_array_equal(np.asarray(s - x), [1.0, 0.0])
    x += np.float64(1.0)
    np.testing.assert_array_equal(np.asarray(x), [2.0, 3.0])
    assert bool(np.float32(2.0) < xp.asarray(3.0, dtype=xp.float32))


def test_numpy_ufuncs_do_not_run_on_device_arrays():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError):
        np.exp(x)
    np.testing.assert_array_equal(np.exp(np.asarray(x)), np.exp(np.array([1.0, 2.0], dtype=FDT)))


def test_devices_tuple_concatenates_with_a_list():
    d = xp.__array_namespace_info__().devices()
    assert isinstance(d, tuple)
    assert list(d + [None]) == list(d) + [None]
    assert list([None] + d) == [None] + list(d)
