"""The Array object: attributes, conversions, interop, repr, iteration, operators."""
from __future__ import annotations

import gc
import operator

import numpy as np
import pytest

import wgarray as xp
from wgarray._ops import FUNCTIONS
from conftest import CATEGORY, DEFAULT_FLOAT, DTYPES, HAS_F64, INTEGER, assert_exact, ids, npdt, sample, to_np


@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 0, 3), (1, 2, 3, 1)], ids=str)
def test_attributes(shape):
    h = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = xp.asarray(h)
    assert x.shape == shape and isinstance(x.shape, tuple)
    assert x.ndim == len(shape) and x.size == h.size and x.dtype == xp.float32
    assert x.device == xp.__array_namespace_info__().default_device()
    if x.ndim == 2:
        assert_exact(x.T, h.T)
    else:
        with pytest.raises(ValueError):
            x.T
    if x.ndim >= 2:
        assert_exact(x.mT, np.swapaxes(h, -1, -2))


def test_array_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        xp.Array([1, 2])


def test_namespace():
    x = xp.ones(2)
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    array_api_compat = pytest.importorskip("array_api_compat")
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.array_namespace(x, xp.zeros(3, dtype=xp.int8)) is xp
    assert xp.__array_api_version__ == "2025.12"


# ------------------------------------------------------------------ conversions to Python

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_python_scalar_conversions(d):
    v = {"b": True, "i": -7, "u": 9, "f": -2.5, "c": 1.5 - 0.5j}[d.kind]
    x = xp.asarray(v, dtype=d)
    assert complex(x) == complex(v)
    if d.kind != "c":
        assert float(x) == float(v) and isinstance(float(x), float)
        assert bool(x) is bool(v)
        assert int(x) == int(v) and type(int(x)) is int
    else:
        assert bool(x) is True
        with pytest.raises(TypeError):
            float(x)
        with pytest.raises(TypeError):
            int(x)
    if d.kind in "iu":
        assert operator.index(x) == v and type(operator.index(x)) is int
        assert list(range(20))[x] == list(range(20))[v]
    else:
        with pytest.raises(TypeError):
            operator.index(x)


def test_scalar_conversion_edge_cases():
    assert bool(xp.asarray(0.0)) is False and bool(xp.asarray(float("nan"))) is True
    assert int(xp.asarray(-2.9, dtype=xp.float32)) == -2
    assert int(xp.asarray(2**62 + 1)) == 2**62 + 1
    assert int(xp.asarray(2**64 - 1, dtype=xp.uint64)) == 2**64 - 1
    assert float(xp.asarray([[3.5]])) == 3.5  # one element of any shape
    with pytest.raises((ValueError, OverflowError)):
        int(xp.asarray(float("inf"), dtype=xp.float32))
    with pytest.raises(ValueError):
        int(xp.asarray(float("nan"), dtype=xp.float32))
    with pytest.raises(TypeError):
        bool(xp.ones(2))
    with pytest.raises(TypeError):
        float(xp.zeros(0))


# ------------------------------------------------------------------ interop

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_numpy_asarray_and_array_protocol(d):
    h = sample(d, 16)[:12].reshape(3, 4)
    x = xp.asarray(h)
    got = np.asarray(x)
    assert got.dtype == h.dtype and got.shape == h.shape
    np.testing.assert_array_equal(got, h)
    assert np.array(x, dtype=np.complex128).dtype == np.complex128
    # numpy.asarray and numpy.array give writable copies that the caller owns: writing
    # to them changes neither the array nor what later reads of it see
    assert got.flags.writeable
    got[...] = 0
    assert_exact(x, h)
    np.testing.assert_array_equal(np.asarray(x), h)
    own = np.array(x)
    own[...] = 0
    assert_exact(x, h)
    np.testing.assert_array_equal(np.asarray(x), h)


def test_array_protocol_copy_false_raises():
    with pytest.raises(ValueError):
        xp.ones(3).__array__(copy=False)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_numpy_from_dlpack(d):
    h = sample(d, 16)[:10].reshape(2, 5)
    x = xp.asarray(h)
    assert x.__dlpack_device__() == (1, 0)
    got = np.from_dlpack(x)
    assert got.dtype == h.dtype and got.shape == h.shape
    np.testing.assert_array_equal(got, h)


def test_dlpack_arguments():
    h = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = xp.asarray(h)
    for kwargs in ({}, {"dl_device": (1, 0)}, {"copy": True}, {"copy": None}, {"max_version": (1, 0)},
                   {"max_version": (1, 0), "dl_device": (1, 0), "copy": True}):
        cap = x.__dlpack__(**kwargs)
        assert cap is not None
    got = np.from_dlpack(x, device="cpu")
    np.testing.assert_array_equal(got, h)
    got = np.from_dlpack(x, copy=True)
    np.testing.assert_array_equal(got, h)
    # copy=False shares the host mirror (read-only, so only with a versioned capsule)
    shared = np.from_dlpack(x, copy=False)
    np.testing.assert_array_equal(shared, h)
    assert not shared.flags.writeable
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))
    # a strided view exports its own values
    np.testing.assert_array_equal(np.from_dlpack(x.T), h.T)
    np.testing.assert_array_equal(np.from_dlpack(x[:, ::2]), h[:, ::2])


def test_wgarray_from_its_own_dlpack():
    x = xp.asarray(np.arange(4, dtype=np.float32))
    assert_exact(xp.from_dlpack(x), np.arange(4, dtype=np.float32))


# ------------------------------------------------------------------ display

@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_repr_looks_like_numpy(d):
    h = sample(d, 8, specials=False)[:4]
    r = repr(xp.asarray(h))
    assert r.startswith("Array(") and r.endswith(f"dtype={d.name})")
    body = np.array2string(h, separator=", ", prefix="Array(")
    assert body in r
    assert repr(xp.asarray(h[0].reshape(()))).startswith("Array(")
    assert "dtype" in repr(xp.zeros((0, 3), dtype=d))


def test_repr_multiline_and_str():
    h = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert repr(xp.asarray(h)) == "Array([[ 0,  1,  2,  3],\n       [ 4,  5,  6,  7],\n       [ 8,  9, 10, 11]], dtype=int32)"
    assert str(xp.asarray(h)) == str(h)


# ------------------------------------------------------------------ iteration and indexing (basic)

def test_iteration_and_len():
    h = np.arange(12, dtype=np.int16).reshape(3, 4)
    x = xp.asarray(h)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3
    for r, w in zip(rows, h):
        assert_exact(r, w)
    assert [int(v) for v in xp.asarray([5, 6, 7])] == [5, 6, 7]
    with pytest.raises(TypeError):
        iter(xp.asarray(1.0)).__next__()
    with pytest.raises(TypeError):
        len(xp.asarray(1.0))
    assert list(xp.zeros((0, 2))) == []


def test_basic_getitem():
    h = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = xp.asarray(h)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (slice(None, None, -1),), (0, slice(1, 4, 2), None),
                (None, Ellipsis), (slice(5, 10),), (1, 2, 3), ()]:
        assert_exact(x[key], h[key], msg=str(key))
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]


# ------------------------------------------------------------------ operators

BINARY_OPS = [("add", operator.add), ("subtract", operator.sub), ("multiply", operator.mul),
              ("divide", operator.truediv), ("floor_divide", operator.floordiv), ("remainder", operator.mod),
              ("pow", operator.pow), ("bitwise_and", operator.and_), ("bitwise_or", operator.or_),
              ("bitwise_xor", operator.xor), ("bitwise_left_shift", operator.lshift),
              ("bitwise_right_shift", operator.rshift), ("less", operator.lt), ("less_equal", operator.le),
              ("greater", operator.gt), ("greater_equal", operator.ge), ("equal", operator.eq),
              ("not_equal", operator.ne)]
INPLACE = {operator.add: operator.iadd, operator.sub: operator.isub, operator.mul: operator.imul,
           operator.truediv: operator.itruediv, operator.floordiv: operator.ifloordiv, operator.mod: operator.imod,
           operator.pow: operator.ipow, operator.and_: operator.iand, operator.or_: operator.ior,
           operator.xor: operator.ixor, operator.lshift: operator.ilshift, operator.rshift: operator.irshift}


def _operands(name, d):
    if d.kind == "b":
        return np.array([True, False, True, False]), np.array([True, True, False, False]), True
    if d.kind in "iu":
        a = np.array([7, 3, 12, 5], npdt(d)) if d.kind == "u" else np.array([-7, 3, 12, -5], npdt(d))
        b = np.array([2, 3, 5, 1], npdt(d))
        return a, b, 2
    a = np.array([1.5, -2.0, 3.25, 0.5], npdt(d))
    b = np.array([0.5, 4.0, -1.5, 2.0], npdt(d))
    if d.kind == "c":
        a, b = a + 1j * b[::-1], b - 0.5j * a
    return a, b, (1.5 if d.kind == "f" else 1.5 - 1j)


def _allowed(name, d):
    op = FUNCTIONS[name]
    return d in CATEGORY[op.category] and not (op.result == "float" and d.kind in "biu")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_operators_match_functions(d):
    for name, op in BINARY_OPS:
        if not _allowed(name, d):
            continue
        fn = getattr(xp, name)
        a, b, s = _operands(name, d)
        x, y = xp.asarray(a), xp.asarray(b)
        assert_exact(op(x, y), to_np(fn(x, y)), msg=f"{name} array-array")
        if name.startswith("bitwise") and d.kind == "b" and "shift" in name:
            continue
        assert_exact(op(x, s), to_np(fn(x, s)), msg=f"{name} array-scalar")
        assert_exact(op(s, x), to_np(fn(s, x)), msg=f"{name} reflected")
        if op in INPLACE:
            z = xp.asarray(a)
            before = z
            res = INPLACE[op](z, s)
            assert res is before, f"{name}: in-place keeps the handle"
            assert_exact(res, to_np(fn(xp.asarray(a), s)), msg=f"{name} in-place scalar")
            z2 = xp.asarray(a)
            z2 = INPLACE[op](z2, y)
            assert_exact(z2, to_np(fn(xp.asarray(a), y)), msg=f"{name} in-place array")


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_unary_operators(d):
    h = sample(d, 8, specials=False)[:6]
    x = xp.asarray(h)
    if d.kind != "b":
        assert_exact(-x, to_np(xp.negative(x)))
        assert_exact(+x, h)
        assert_exact(abs(x), to_np(xp.abs(x)))
    if d.kind in "biu":
        assert_exact(~x, ~h)


def test_inplace_rebinds_basic_index_views_follow_other_results_keep_values():
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(h)
    row = x[0]     # basic indexing, permuted axes and reshapes share x's elements, as in NumPy
    t = x.T
    r = xp.reshape(x, (3, 2))
    other = xp.abs(x)  # any other function's result is a new array
    alias = x
    x += 10
    assert alias is x  # the same handle, rebound
    assert_exact(x, h + 10)
    assert_exact(row, h[0] + 10)
    assert_exact(t, h.T + 10)
    assert_exact(r, (h + 10).reshape(3, 2))
    assert_exact(other, h)
    x *= 2
    assert_exact(x, (h + 10) * 2)
    assert_exact(row, (h[0] + 10) * 2)
    assert_exact(t, (h.T + 10) * 2)
    assert_exact(r, ((h + 10) * 2).reshape(3, 2))


def test_inplace_keeps_dtype_and_shape():
    x = xp.asarray([1, 2, 3], dtype=xp.int8)
    x += 1
    assert x.dtype == xp.int8
    y = xp.asarray([1.0, 2.0], dtype=xp.float32)
    with pytest.raises((TypeError, ValueError)):
        y += xp.ones((3, 2), dtype=xp.float32)  # would change the shape
    i = xp.asarray([1, 2], dtype=xp.int32)
    with pytest.raises(TypeError):
        i /= 2  # would change the dtype
    assert_exact(i, np.array([1, 2], np.int32))


def test_python_scalar_operators_promotion():
    x = xp.asarray([1, 2, 3], dtype=xp.uint8)
    assert (x + 1).dtype == xp.uint8
    assert (2 * x).dtype == xp.uint8
    assert_exact(x - 1, np.array([0, 1, 2], np.uint8))
    f = xp.asarray([1.0, 2.0], dtype=xp.float32)
    assert (f + 1).dtype == xp.float32 and (1.5 ** f).dtype == xp.float32
    assert_exact(2 ** f, np.array([2.0, 4.0], np.float32))
    b = xp.asarray([True, False])
    assert_exact(b & True, np.array([True, False]))
    assert_exact(True ^ b, np.array([False, True]))


def test_operators_with_foreign_objects_return_not_implemented():
    x = xp.ones(3)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + [1, 2, 3]
    with pytest.raises(TypeError):
        hash(x)


def test_operators_with_numpy_arrays_on_the_left_defer_to_wgarray():
    x = xp.asarray(np.arange(3, dtype=np.float32))
    # NumPy must not iterate the wgarray array element by element
    with pytest.raises(TypeError):
        np.arange(3, dtype=np.float32) + x


def test_comparison_results_are_bool_arrays():
    x = xp.asarray([1, 2, 3])
    r = x == 2
    assert isinstance(r, xp.Array) and r.dtype == xp.bool
    assert_exact(r, np.array([False, True, False]))
    assert_exact(x != 2, np.array([True, False, True]))


def test_matmul_operator_exists():
    assert hasattr(xp.Array, "__matmul__") and hasattr(xp.Array, "__rmatmul__") and hasattr(xp.Array, "__imatmul__")


# ------------------------------------------------------------------ host mirror and lifetime

def test_arrays_in_reference_cycles_free_their_buffers_safely():
    for _ in range(3):
        a = xp.asarray(np.arange(100, dtype=np.float32))
        cycle = [a]
        cycle.append(cycle)
        del a, cycle
        gc.collect()  # the buffer goes back to the pool from inside the cyclic GC
        b = xp.asarray(np.ones(100, np.float32)) * 2
        assert_exact(b, np.full(100, 2, np.float32))


def test_to_device_same_device_is_identity():
    x = xp.ones(3)
    assert x.to_device(x.device) is x
    with pytest.raises(ValueError):
        x.to_device(x.device, stream=1)


@pytest.mark.skipif(HAS_F64, reason="the device offers float64")
def test_default_float_is_float32_without_f64():
    assert DEFAULT_FLOAT == xp.float32
    assert (xp.asarray([1, 2]) / 2).dtype == xp.float32


def test_integer_dtypes_wrap_like_numpy():
    for d in INTEGER:
        info = np.iinfo(npdt(d))
        h = np.array([info.max, info.min], npdt(d))
        x = xp.asarray(h)
        assert_exact(x + 1, h + npdt(d).type(1))
        assert_exact(x * 3, h * npdt(d).type(3))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_pickle_copy_and_deepcopy_keep_values_device_and_dtype(d):
    import copy
    import pickle

    h = sample(d, 7)
    for a in (h, h[:0], h[3]):  # 1-d, empty, 0-d
        x = xp.asarray(a)
        for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x)):
            assert y is not x and y.device == x.device
            assert_exact(y, a)


def test_copies_do_not_follow_the_original_and_a_view_copies_to_a_plain_array():
    import copy

    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(h)
    v = x[0]
    c, d = copy.copy(v), copy.deepcopy(x)
    x[0, 0] = 50
    assert_exact(c, h[0])
    assert_exact(d, h)
    c[1] = -1  # not a view of x
    assert float(x[0, 1]) == 1.0
