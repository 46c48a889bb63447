"""Fusion and work counters: how many kernels, pipelines and readbacks things cost."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from conftest import DEFAULT_FLOAT, assert_exact, npdt, to_np


@pytest.fixture
def counters():
    def snapshot():
        return debug.counters()

    xp.evaluate()
    debug.reset_counters()
    return snapshot


def _realized(h):
    x = xp.asarray(h)
    xp.evaluate(x)
    return x


def test_counters_api():
    c = debug.counters()
    for key in ("dispatches", "submits", "pipelines_compiled", "readbacks", "uploads"):
        assert key in c and isinstance(c[key], int)
    debug.reset_counters()
    assert all(v == 0 for v in debug.counters().values())


def test_gaussian_chain_is_one_dispatch(counters):
    rng = np.random.default_rng(0)
    ha, hb, hc = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    a, b, c = _realized(ha), _realized(hb), _realized(hc)
    debug.reset_counters()
    y = xp.exp(-(a - b) ** 2 / 2) * c + a
    assert counters()["dispatches"] == 0  # lazy until needed
    got = to_np(y)
    n = counters()
    assert n["dispatches"] == 1, n
    assert n["readbacks"] == 1, n
    want = np.exp(-(ha.astype(np.float64) - hb) ** 2 / 2) * hc + ha
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_gaussian_chain_with_broadcast_and_views_is_one_dispatch(counters):
    ha = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    hb = np.linspace(0, 1, 4, dtype=np.float32)
    a, b = _realized(ha), _realized(hb)
    debug.reset_counters()
    y = xp.exp(-(a.T - b[:3]) ** 2 / 2) * 3.0 + a.T
    got = to_np(y)
    assert counters()["dispatches"] == 1
    want = np.exp(-(ha.T.astype(np.float64) - hb[:3]) ** 2 / 2) * 3.0 + ha.T
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=4e-7)  # a few ulp of the O(1) terms


def test_changing_python_scalars_reuse_one_pipeline(counters):
    ha = np.arange(257, dtype=np.float32)
    hb = np.ones(257, np.float32)
    a, b = _realized(ha), _realized(hb)
    debug.reset_counters()
    for i in range(20):
        s = 0.5 + i * 0.37
        y = a * s + b
        np.testing.assert_array_equal(to_np(y), ha * np.float32(s) + hb)
    n = counters()
    assert n["pipelines_compiled"] <= 1, n
    assert n["dispatches"] == 20


def test_changing_sizes_reuse_one_pipeline(counters):
    for n_elem in (5, 1000, 4099):
        a = xp.asarray(np.arange(n_elem, dtype=np.float32))
        to_np(a * 2.0 + 1.0)
    assert counters()["pipelines_compiled"] <= 1


def test_host_mirror_repeated_reads_cost_no_readback(counters):
    h = np.arange(10, dtype=np.float32)
    x = xp.asarray(h) * 3
    first = to_np(x)
    assert counters()["readbacks"] == 1
    debug.reset_counters()
    for _ in range(3):
        np.testing.assert_array_equal(to_np(x), first)
    vals = [float(x[i]) for i in range(10)]
    assert vals == (h * 3).tolist()
    assert [float(v) for v in x] == vals
    assert repr(x) and bool(x[1]) and int(x[2]) == 6
    n = counters()
    assert n["readbacks"] == 0 and n["dispatches"] == 0, n


def test_host_mirror_dropped_when_the_handle_is_rebound():
    x = xp.asarray(np.arange(4, dtype=np.int32))
    to_np(x)
    x += 1
    assert_exact(x, np.arange(1, 5, dtype=np.int32))
    assert int(x[0]) == 1


def test_evaluate_runs_pending_work_fused(counters):
    a = _realized(np.arange(64, dtype=np.float32))
    debug.reset_counters()
    y1 = xp.sin(a) + 1
    y2 = xp.cos(a) * 2
    xp.evaluate(y1, y2)
    n = counters()
    assert n["dispatches"] == 1, n  # one kernel, two outputs
    assert n["submits"] >= 1
    debug.reset_counters()
    np.testing.assert_allclose(to_np(y1), np.sin(np.arange(64.0)) + 1, rtol=1e-6, atol=2.5e-7)
    np.testing.assert_allclose(to_np(y2), np.cos(np.arange(64.0)) * 2, rtol=1e-6, atol=2.5e-7)
    assert counters()["dispatches"] == 0
    xp.evaluate()  # nothing pending: no error
    xp.evaluate(a)
    with pytest.raises(TypeError):
        xp.evaluate(np.ones(3))


def test_evaluate_different_shapes(counters):
    a = _realized(np.arange(6, dtype=np.float32))
    b = _realized(np.arange(4, dtype=np.float32))
    debug.reset_counters()
    ya, yb = a * 2, b + 1
    xp.evaluate(ya, yb)
    assert counters()["dispatches"] == 2
    assert_exact(ya, np.arange(6, dtype=np.float32) * 2)
    assert_exact(yb, np.arange(4, dtype=np.float32) + 1)


def test_long_chains_stay_correct():
    h = np.linspace(0, 1, 100, dtype=np.float32)
    x = xp.asarray(h)
    y = x
    want = h.copy()
    for i in range(300):  # must not grow one kernel without bound
        y = y * 0.5 + 0.25
        want = want * np.float32(0.5) + np.float32(0.25)
    np.testing.assert_array_equal(to_np(y), want)


def test_shared_subexpression_and_multiple_consumers():
    h = np.arange(8, dtype=np.float32)
    x = xp.asarray(h)
    t = xp.exp(x / 8)
    u = t + t * t
    v = t - 1
    np.testing.assert_allclose(to_np(u), np.exp(h / 8) + np.exp(h / 8) ** 2, rtol=1e-6)
    np.testing.assert_allclose(to_np(v), np.exp(h / 8) - 1, rtol=1e-6)
    np.testing.assert_allclose(to_np(t), np.exp(h / 8), rtol=1e-6)


def test_mixed_dtype_chain_one_dispatch(counters):
    hi = np.arange(-8, 8, dtype=np.int8)
    hu = np.arange(16, dtype=np.uint16)
    i8, u16 = _realized(hi), _realized(hu)
    debug.reset_counters()
    y = xp.where(i8 < 0, i8 * 3, u16 // 2) if hasattr(xp, "where") else (i8 * 3 + u16 // 2)
    got = to_np(y)
    assert counters()["dispatches"] == 1
    if hasattr(xp, "where"):
        want = np.where(hi < 0, (hi * np.int8(3)).astype(np.int32), (hu // np.uint16(2)).astype(np.int32))
    else:
        want = (hi * np.int8(3)).astype(np.int32) + hu // np.uint16(2)
    assert_exact(y, want.astype(npdt(y.dtype)))
    del got


def test_default_float_chain_from_integers():
    x = xp.arange(5)
    y = xp.sqrt(x) * 2
    assert y.dtype == DEFAULT_FLOAT
    np.testing.assert_allclose(to_np(y), np.sqrt(np.arange(5)) * 2, rtol=1e-6)


def test_element_loop_over_a_lazy_array_reads_back_once():
    x = xp.asarray(np.arange(10, dtype=np.float32))
    z = x * 2 + 1
    xp.debug.reset_counters()
    got = [float(z[i]) for i in range(10)]
    assert got == [2.0 * i + 1 for i in range(10)]
    assert xp.debug.counters()["readbacks"] == 1


def test_element_view_keeps_its_value_after_the_array_is_rebound():
    y = xp.asarray(np.arange(5, dtype=np.float32))
    e = y[2]
    y[2] = 100.0
    assert float(e) == 2.0 and float(y[2]) == 100.0


# Broadcast and strided operands: each invocation unravels its first element once and
# steps the multi-index to the next three (a carry through the dimensions).
_STEP_SHAPES = [(5, 7), (3, 1), (1, 5), (4, 4), (6, 3), (2, 3, 5), (3, 1, 2, 3), (7,), (1,), (2, 2, 2, 2, 3),
                (1027, 3), (3, 1027), (2, 1, 1, 2), (5, 2)]


@pytest.mark.parametrize("shape", _STEP_SHAPES, ids=str)
def test_broadcast_and_strided_operands_step_across_rows(shape):
    # last dims of 1, 2, 3, 5 and odd sizes: the 4 elements of one invocation cross rows
    # (and several dims at once), and the final invocation is partial
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    h = rng.standard_normal(shape).astype(np.float32)
    x = xp.asarray(h)
    perm = tuple(reversed(range(len(shape))))
    for ax in range(len(shape)):
        cs = list(shape)
        cs[ax] = 1
        hc = rng.standard_normal(cs).astype(np.float32)
        c = xp.asarray(hc)
        assert_exact(x - c, h - hc)                                     # row / column broadcast
        assert_exact(xp.permute_dims(x, perm) * xp.permute_dims(c, perm), h.transpose(perm) * hc.transpose(perm))
        assert_exact(x[..., ::-1] - c, h[..., ::-1] - hc)              # reversed view
    if shape[0] > 1:
        assert_exact(x[1:] + x[:1], h[1:] + h[:1])                       # offset views
    assert_exact(xp.asarray(np.float32(2.5)) + x, np.float32(2.5) + h)   # a 0-d operand


def test_strided_operands_unravel_once_per_invocation():
    # the kernel of a broadcast difference divides by each dimension once per invocation
    # (4 elements), with no size in its text
    from wgarray._graph.fusion import explain

    x = _realized(np.ones((6, 7, 5), np.float32))
    c = _realized(np.ones((6, 1, 5), np.float32))
    text = explain(x - c)
    main = text[text.index("fn main"):]
    assert main.count(" % P[") == 3 and main.count(" / P[") == 3, main
    assert not __import__("re").search(r"\b[5-7]u\b", main), main
