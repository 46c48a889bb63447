"""int64 arithmetic on values widened from narrower signed integers.

Mesa's LLVM (lavapipe) once evaluated ``x < 0`` as false for an i64 sign-extended from
i32, inside helper functions: floor_divide, remainder, the shifts, sign and abs of int64
with int8/16/32 operands gave wrong results. These cases pin the fix.
"""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._ops import OPS


def numpy_function(name):
    """NumPy's function for the op (wgarray/_ops.py)."""
    return getattr(np, OPS[name].numpy)


A = np.array([1, -5, 7, 0, -1, -2**40, 9, -9, 2**62], np.int64)
B = np.array([1, 1, -2, 3, -1, 3, -4, 70, -7], np.int8)
NARROW = [np.int8, np.int16, np.int32]


@pytest.mark.parametrize("bd", NARROW, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "less", "greater_equal", "multiply"])
def test_binary_with_widened_operand_matches_numpy(bd, name):
    got = np.asarray(getattr(xp, name)(xp.asarray(A), xp.asarray(B.astype(bd))))
    np.testing.assert_array_equal(got, numpy_function(name)(A, B.astype(np.int64)))


@pytest.mark.parametrize("bd", NARROW, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shift_by_widened_count_matches_numpy(bd, name):
    ref = numpy_function(name)
    counts = np.array([0, 1, 2, 63, 64, 70, 5, 3, 1], bd)
    got = np.asarray(getattr(xp, name)(xp.asarray(A), xp.asarray(counts)))
    want = np.where(counts.astype(np.int64) >= 64, np.where((A < 0) & (name == "bitwise_right_shift"), -1, 0),
                    ref(A, np.minimum(counts.astype(np.int64), 63)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bd", NARROW, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", ["sign", "abs", "negative", "square"])
def test_unary_of_widened_values_matches_numpy(bd, name):
    y = xp.astype(xp.asarray(B.astype(bd)), xp.int64)
    np.testing.assert_array_equal(np.asarray(getattr(xp, name)(y)), numpy_function(name)(B.astype(np.int64)))
