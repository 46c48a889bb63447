"""The runtime's side of launch records, on the device: a kernel that does not compile
is a typed internal error keeping its key and WGSL, a dispatch's buffers are checked
by name, and a cache miss can be logged with its key and WGSL."""
from __future__ import annotations

import io

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from wgarray._runtime.errors import InternalError, KernelCompileError, LaunchError
from wgarray._runtime.launch import Binding, Launch


def _rt():
    return xp.__array_namespace_info__().default_device().runtime


RECORD = Launch("launch_test_copy", (Binding("I", "u32"), Binding("O", "u32", write=True)))
WGSL = "\n".join(RECORD.declarations()) + """
@compute @workgroup_size(1)
fn main() { O[0] = I[0] + P[0]; }
"""


def test_kernel_that_does_not_compile_is_an_internal_error_with_key_wgsl_and_cause():
    bad = WGSL.replace("I[0] + P[0]", "I[0] + undefined_name")
    key = ("launch-test", "bad")
    with pytest.raises(KernelCompileError) as exc:
        _rt().compile(key, lambda: (RECORD, bad))
    err = exc.value
    assert isinstance(err, InternalError) and err.key == key and err.wgsl == bad
    assert err.__cause__ is not None and "does not compile" in str(err) and "undefined_name" in str(err)
    assert key not in _rt().kernels


def test_launch_runs_with_buffers_by_name_and_refuses_a_wrong_order():
    rt = _rt()
    kernel = rt.compile(("launch-test", "copy"), lambda: (RECORD, WGSL))
    src = rt.upload(np.array([40, 0, 0, 0], np.uint32))
    out = rt.alloc(16)
    rt.launch(kernel, {"I": src, "O": out}, np.array([2, 0], np.uint32).tobytes(), 1)
    assert int(rt.read(out, 0, 4).view("<u4")[0]) == 42
    with pytest.raises(LaunchError, match="kernel launch_test_copy: binding 'O' out of order"):
        rt.launch(kernel, {"O": out, "I": src}, b"\0" * 8, 1)
    with pytest.raises(LaunchError, match="kernel launch_test_copy: binding 'O' missing"):
        rt.launch(kernel, {"I": src}, b"\0" * 8, 1)


def test_kernel_keys_of_another_shape_are_refused():
    with pytest.raises(InternalError, match="expected \\(family, spec\\)"):
        _rt().compile(("launch-test", "copy", 3), lambda: (RECORD, WGSL))


def test_cache_miss_logs_key_and_wgsl():
    log = io.StringIO()
    debug.log_kernels(log)
    try:
        x = xp.asarray(np.arange(10, dtype=np.float32))
        # an op chain no other test builds: its kernel is new to the cache
        y = xp.asarray(np.float32(1.0)) + xp.atan2(x, x + 3.25) * 7.0 - x
        xp.evaluate(y)
    finally:
        debug.log_kernels(None)
    text = log.getvalue()
    assert "wgarray: compiling kernel ew_" in text and "key=('elementwise', ElementwiseSpec(" in text
    assert "@group(0) @binding(0)" in text and "fn main(" in text


@pytest.mark.parametrize("spin_s", [0.0, 0.01], ids=["blocking", "polling_first"])
def test_readbacks_by_direct_calls_match_numpy_with_either_wait(spin_s, monkeypatch):
    # the runtime's readback maps through direct C calls; on a GPU it polls for a
    # while before it blocks (on a software device it blocks at once): both ways give
    # the values, for element reads, small and chunked reads and a sync
    rt = _rt()
    monkeypatch.setattr(rt, "_spin_s", spin_s)
    host = np.random.default_rng(9).standard_normal(3 * 1024 * 1024 // 4 + 3).astype(np.float32)
    host[:4] = [np.nan, -0.0, np.inf, -np.inf]
    x = xp.asarray(host)
    for i in (0, 1, 2, 3, 17, host.size - 1):
        got = float((x * 1.0)[i])
        assert np.array_equal(np.float32(got), host[i] * np.float32(1.0), equal_nan=True)
    assert np.signbit(float((x * 1.0)[1]))
    np.testing.assert_array_equal(np.asarray(x[:1000] * 2.0), host[:1000] * np.float32(2.0))
    big = np.asarray(x + 1.0)  # several read chunks, when READ_CHUNK is small
    np.testing.assert_array_equal(big, host + np.float32(1.0))
    rt.sync()
    debug.reset_counters()
    assert float(xp.sum(x[4:] * 0.0)) == 0.0
    assert debug.counters()["readbacks"] == 1


def test_chunked_readback_through_direct_calls_matches_numpy(monkeypatch):
    from wgarray._runtime import runtime as rtmod

    monkeypatch.setattr(rtmod, "READ_CHUNK", 1 << 16)  # many chunks through the two staging buffers
    host = np.arange(300_001, dtype=np.int32) * 7 - 5
    np.testing.assert_array_equal(np.asarray(xp.asarray(host) + 0), host)


def test_bad_command_raises_at_submit_and_the_next_batch_runs():
    # the batch's encoder is driven by direct C calls; its finish still goes through
    # wgpu-py's error capture, so a command the device rejects raises there
    import wgpu

    rt = _rt()
    a, b = rt.alloc(64), rt.alloc(64)
    rt.copy(a, 0, b, 0, 128)  # past the end of both buffers
    with pytest.raises(wgpu.GPUValidationError):
        rt.flush()
    host = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(xp.asarray(host) * 2.0), host * 2)


def test_a_long_batch_is_submitted_in_pieces_by_its_bound_bytes(monkeypatch, no_early_submit):
    # a batch is submitted once its dispatches have bound BATCH_FLUSH_BYTES, a buffer
    # bound again counting again: the sum is the batch's memory traffic, so the device
    # starts on a long run of dispatches over one array (a factorization's matrix)
    # while the host still records the rest. Each such submit doubles the threshold
    # (up to BATCH_FLUSH_MAX_BYTES) until the host next waits for the device: 40
    # dispatches binding 256 KiB each with a 1 MiB threshold are submitted after 1.25,
    # 2.25 and 4.25 MiB (3 submits, not 10), and as many again after a readback; the
    # results are the same either way
    from wgarray._graph import node as g
    from wgarray._runtime import runtime as rtm
    x0 = np.arange(1 << 16, dtype=np.float32)  # 256 KiB
    x = xp.asarray(x0)
    float(x[0])

    def sums(count):
        out = [xp.sum(x * float(k)) for k in range(count)]  # small results, all bind x
        for a in out:
            g.realize(a._node)  # recorded into the batch
        return out

    submits = {}
    for limit, cap, count in ((64 << 20, 4 << 30, 12), (1 << 20, 4 << 30, 40), (1 << 20, 1 << 20, 40)):
        monkeypatch.setattr(rtm, "BATCH_FLUSH_BYTES", limit)
        monkeypatch.setattr(rtm, "BATCH_FLUSH_MAX_BYTES", cap)
        for _ in range(2):
            debug.reset_counters()
            out = sums(count)
            submits.setdefault((limit, cap), set()).add(debug.counters()["submits"])
            want = [np.sum(x0 * k, dtype=np.float64) for k in range(count)]
            np.testing.assert_allclose([float(a) for a in out], want, rtol=1e-6)  # reads: the growth restarts
    # (the threshold held at 1 MiB: a submit each time the bound bytes pass it again)
    assert submits == {(64 << 20, 4 << 30): {0}, (1 << 20, 4 << 30): {3}, (1 << 20, 1 << 20): {10}}, submits


def test_a_batch_recorded_for_long_is_submitted_early_and_the_interval_doubles(monkeypatch):
    # on GPUs a batch the host has recorded for EARLY_SUBMIT_US is submitted at its
    # next dispatch (after at least EARLY_SUBMIT_MIN_DISPATCHES), each time after twice
    # as long, until the host next waits; forced here with a 1 ms interval and a
    # recording slowed to 0.3 ms a dispatch, so the count does not depend on the host
    import time
    from wgarray._graph import node as g
    from wgarray._runtime import runtime as rtm

    rt = _rt()
    monkeypatch.setattr(rt, "early_submit_s", 1e-3)
    monkeypatch.setattr(rt, "_early_s", 1e-3)
    real_dispatch = rtm.Runtime.dispatch

    def slow_dispatch(self, *args, **kwargs):
        time.sleep(3e-4)
        return real_dispatch(self, *args, **kwargs)

    monkeypatch.setattr(rtm.Runtime, "dispatch", slow_dispatch)
    x0 = np.arange(1 << 12, dtype=np.float32)
    x = xp.asarray(x0)
    float(x[0])
    for _ in range(2):  # the second time after a readback: the interval starts again
        debug.reset_counters()
        out = [xp.sum(x * float(k)) for k in range(40)]
        for a in out:
            g.realize(a._node)  # recorded, not submitted: 40 dispatches over ~12 ms
        c = debug.counters()
        # due after 1, then 2, 4, 8 ms of recording a batch: at a sum's one or two
        # dispatches, 12-24 ms of recording make 3-4 submits (6 if each sleep took
        # three times as long), never one a dispatch
        assert c["dispatches"] >= 40 and 2 <= c["submits"] <= 6, c
        assert rt._early_s >= 4e-3
        np.testing.assert_allclose([float(a) for a in out], [np.sum(x0 * k, dtype=np.float64) for k in range(40)],
                                   rtol=1e-6)
        assert rt._early_s == 1e-3  # the readback restarted it
