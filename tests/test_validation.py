"""Argument validation: one axis normalizer with one error type, and the message shape
"<func>: expected <what>, got <given>".

Every axis-taking function refuses an out-of-range axis (and a repeated one, where NumPy
refuses it) with ``AxisError``, which is both a ValueError and an IndexError, names the
function, and matches NumPy's refusal of the same call.
"""
import numpy as np
import pytest

import wgarray as xp
from wgarray import _validation as v


def _np_raises(call) -> bool:
    try:
        call()
    except (ValueError, IndexError):
        return True
    return False


@pytest.fixture(scope="module")
def arrays():
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    return h, xp.asarray(h)


# (func name, wgarray call, NumPy call); x is (2, 3) float32, both calls name axis 2 or 3
OUT_OF_RANGE = [
    ("sum", lambda m, x: m.sum(x, axis=2)),
    ("prod", lambda m, x: m.prod(x, axis=-3)),
    ("max", lambda m, x: m.max(x, axis=2)),
    ("min", lambda m, x: m.min(x, axis=(0, 2))),
    ("mean", lambda m, x: m.mean(x, axis=2)),
    ("var", lambda m, x: m.var(x, axis=2)),
    ("std", lambda m, x: m.std(x, axis=-3)),
    ("argmax", lambda m, x: m.argmax(x, axis=2)),
    ("argmin", lambda m, x: m.argmin(x, axis=-3)),
    ("count_nonzero", lambda m, x: m.count_nonzero(x, axis=2)),
    ("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=2)),
    ("cumulative_prod", lambda m, x: m.cumulative_prod(x, axis=-3)),
    ("all", lambda m, x: m.all(x, axis=2)),
    ("any", lambda m, x: m.any(x, axis=-3)),
    ("diff", lambda m, x: m.diff(x, axis=2)),
    ("median", lambda m, x: m.median(x, axis=2)),
    ("nansum", lambda m, x: m.nansum(x, axis=2)),
    ("nanmean", lambda m, x: m.nanmean(x, axis=2)),
    ("nanmax", lambda m, x: m.nanmax(x, axis=2)),
    ("nanmin", lambda m, x: m.nanmin(x, axis=2)),
    ("expand_dims", lambda m, x: m.expand_dims(x, axis=3)),
    ("flip", lambda m, x: m.flip(x, axis=2)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, 2)),
    ("squeeze", lambda m, x: m.squeeze(m.reshape(x, (1, 6)), axis=2)),
    ("unstack", lambda m, x: m.unstack(x, axis=2)),
    ("concat", lambda m, x: m.concat([x, x], axis=2) if m is xp else m.concatenate([x, x], axis=2)),
    ("stack", lambda m, x: m.stack([x, x], axis=3)),
    ("roll", lambda m, x: m.roll(x, 1, axis=2)),
    ("repeat", lambda m, x: m.repeat(x, 2, axis=2)),
    ("permute_dims", lambda m, x: m.permute_dims(x, (0, 2))),
    ("take", lambda m, x: m.take(x, m.asarray([0]), axis=2)),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, m.asarray([[0]]), axis=2)),
    ("sort", lambda m, x: m.sort(x, axis=2)),
    ("argsort", lambda m, x: m.argsort(x, axis=-3)),
    ("vecdot", lambda m, x: m.vecdot(x, x, axis=2)),
    ("tensordot", lambda m, x: m.tensordot(x, x, axes=((2,), (0,)))),
    ("cross", lambda m, x: m.linalg.cross(x, x, axis=2) if m is xp else m.cross(x, x, axis=2)),
    ("vector_norm", lambda m, x: m.linalg.vector_norm(x, axis=2)),
    ("fft", lambda m, x: m.fft.fft(x, axis=2)),
    ("ifft", lambda m, x: m.fft.ifft(x, axis=-3)),
    ("rfft", lambda m, x: m.fft.rfft(x, axis=2)),
    ("irfft", lambda m, x: m.fft.irfft(x, axis=2)),
    ("hfft", lambda m, x: m.fft.hfft(x, axis=2)),
    ("ihfft", lambda m, x: m.fft.ihfft(x, axis=2)),
    ("fftn", lambda m, x: m.fft.fftn(x, axes=(2,))),
    ("rfftn", lambda m, x: m.fft.rfftn(x, axes=(0, 2))),
    ("fftshift", lambda m, x: m.fft.fftshift(x, axes=2)),
    ("ifftshift", lambda m, x: m.fft.ifftshift(x, axes=(0, -3))),
]

# repeated axes that NumPy refuses too
REPEATED = [
    ("sum", lambda m, x: m.sum(x, axis=(1, -1))),
    ("mean", lambda m, x: m.mean(x, axis=(0, 0))),
    ("var", lambda m, x: m.var(x, axis=(1, -1))),
    ("all", lambda m, x: m.all(x, axis=(1, -1))),
    ("count_nonzero", lambda m, x: m.count_nonzero(x, axis=(0, 0))),
    ("median", lambda m, x: m.median(x, axis=(0, 0))),
    ("nanmax", lambda m, x: m.nanmax(x, axis=(0, 0))),
    ("expand_dims", lambda m, x: m.expand_dims(x, axis=(0, 0))),
    ("flip", lambda m, x: m.flip(x, axis=(0, -2))),
    ("squeeze", lambda m, x: m.squeeze(m.reshape(x, (1, 1, 6)), axis=(0, 0))),
    ("moveaxis", lambda m, x: m.moveaxis(x, (0, 0), (0, 1))),
    ("permute_dims", lambda m, x: m.permute_dims(x, (1, 1))),
    ("tensordot", lambda m, x: m.tensordot(x, x, axes=((0, 0), (1, 1)))),
    ("vector_norm", lambda m, x: m.linalg.vector_norm(x, axis=(0, 0))),
]


def _check_axis_error(func, call, arrays, words):
    h, x = arrays
    assert _np_raises(lambda: call(np, h)), f"NumPy accepts the {func} case"
    with pytest.raises(xp.AxisError) as info:
        call(xp, x)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, IndexError)
    assert str(err).startswith(f"{func}: "), str(err)
    assert words in str(err), str(err)


@pytest.mark.parametrize("func,call", OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_out_of_range_axis_raises_axis_error_naming_the_function(func, call, arrays):
    _check_axis_error(func, call, arrays, "is out of bounds for array of dimension")


@pytest.mark.parametrize("func,call", REPEATED, ids=[c[0] for c in REPEATED])
def test_repeated_axis_raises_axis_error_naming_the_function(func, call, arrays):
    _check_axis_error(func, call, arrays, "expected distinct axes")


def test_axis_error_is_exported_and_both_value_and_index_error():
    assert xp.AxisError is v.AxisError
    assert "AxisError" in xp.__all__
    assert issubclass(xp.AxisError, ValueError) and issubclass(xp.AxisError, IndexError)
    with pytest.raises(IndexError):
        xp.expand_dims(xp.ones(3), axis=5)   # the standard's tests expect IndexError here
    with pytest.raises(ValueError):
        xp.sum(xp.ones(3), axis=1)


def test_axis_error_message_and_attributes_match_numpy():
    with pytest.raises(xp.AxisError) as info:
        xp.sum(xp.ones((2, 3)), axis=3)
    assert str(info.value) == "sum: axis 3 is out of bounds for array of dimension 2"
    assert (info.value.axis, info.value.ndim) == (3, 2)
    with pytest.raises(np.exceptions.AxisError) as ref:
        np.sum(np.ones((2, 3)), axis=3)
    assert str(info.value).endswith(str(ref.value))
    with pytest.raises(xp.AxisError,
                       match=r"^moveaxis: axis -3 is out of bounds for array of dimension 2 \(in source\)$"):
        xp.moveaxis(xp.ones((2, 3)), -3, 0)
    with pytest.raises(xp.AxisError, match=r"^sum: expected distinct axes, got \(1, -1\)$"):
        xp.sum(xp.ones((2, 3)), axis=(1, -1))


def test_axis_of_a_0d_array_is_out_of_bounds():
    with pytest.raises(xp.AxisError, match="^sum: axis 0 is out of bounds for array of dimension 0$"):
        xp.sum(xp.asarray(1.0), axis=0)
    assert float(xp.sum(xp.asarray(1.5), axis=())) == 1.5   # an empty tuple is fine


def test_valid_axes_are_normalized():
    assert v.normalize_axis(-1, 3, "f") == 2
    assert v.normalize_axis(np.int64(1), 3, "f") == 1   # anything with __index__
    assert v.normalize_axes((2, -3), 3, "f") == (2, 0)   # order kept
    assert v.normalize_axes([1, 1], 2, "f", unique=False) == (1, 1)
    assert v.reduction_axes(None, 3, "f") == (0, 1, 2)
    assert v.reduction_axes((2, -3), 3, "f") == (0, 2)   # sorted
    assert v.reduction_axes(-1, 3, "f") == (2,)


@pytest.mark.parametrize("bad", [True, 1.0, "0", None, [0]])
def test_non_integer_axis_is_a_type_error(bad, arrays):
    _, x = arrays
    with pytest.raises(TypeError, match="^sort: expected axis to be an int, got "):
        xp.sort(x, axis=bad)


# a sample of bad inputs and the exact messages
MESSAGES = [
    (TypeError, "sum: expected axis to be None, an int or a tuple of ints, got float 1.5",
     lambda x: xp.sum(x, axis=1.5)),
    (TypeError, "sum: expected axis to be an int or a tuple of ints, got tuple",
     lambda x: xp.sum(x, axis=(0, True))),
    (TypeError, "expand_dims: expected axis to be an int or a tuple of ints, got bool True",
     lambda x: xp.expand_dims(x, axis=True)),
    (TypeError, "take: expected indices to have an integer dtype, got float32",
     lambda x: xp.take(x, xp.asarray([0.0], dtype=xp.float32), axis=0)),
    (TypeError, "sort: expected descending to be a bool, got int 1", lambda x: xp.sort(x, descending=1)),
    (TypeError, "argsort: expected stable to be a bool, got NoneType None", lambda x: xp.argsort(x, stable=None)),
    (TypeError, "max: expected x to have a real-valued dtype, got complex64",
     lambda x: xp.max(xp.astype(x, xp.complex64))),
    (TypeError, "mean: expected x to have a floating-point dtype, got int32",
     lambda x: xp.mean(xp.astype(x, xp.int32))),
    (TypeError, "reshape: expected shape to be a tuple of ints, got (3, 'a')", lambda x: xp.reshape(x, (3, "a"))),
    (TypeError, "roll: expected shift to be an int, got float 1.5", lambda x: xp.roll(x, 1.5, axis=0)),
    (ValueError, "unstack: expected x of at least 1 dimension, got a 0-d array of shape ()",
     lambda x: xp.unstack(xp.asarray(1.0))),
    (ValueError, "cumulative_sum: expected x of at least 1 dimension, got a 0-d array of shape ()",
     lambda x: xp.cumulative_sum(xp.asarray(1.0))),
    (ValueError, "nonzero: expected x of at least 1 dimension, got a 0-d array of shape ()",
     lambda x: xp.nonzero(xp.asarray(1.0))),
]


@pytest.mark.parametrize("exc,message,call", MESSAGES,
                         ids=[f"{m[1].split(':')[0]}-{i}" for i, m in enumerate(MESSAGES)])
def test_bad_input_messages(exc, message, call, arrays):
    _, x = arrays
    with pytest.raises(exc) as info:
        call(x)
    assert str(info.value) == message


def test_message_helpers_state_only_what_differs():
    assert v.expected("f", "n to be an int", "str 'a'") == "f: expected n to be an int, got str 'a'"
    assert v.describe(2.5) == "float 2.5"
    assert v.describe(np.float32(2.5)) == "float32"   # non-Python values by type only
    assert v.as_int(np.int32(4), "f", "n") == 4
    assert v.as_int(True, "f", "n", bool_ok=True) == 1
    with pytest.raises(TypeError, match="^f: expected n to be an int, got bool True$"):
        v.as_int(True, "f", "n")
    with pytest.raises(TypeError, match="^f: expected y to have an integer dtype, got float32$"):
        v.check_category(xp.float32, "integer", "f", "y")
