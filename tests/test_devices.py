"""Devices: identity, the device= argument, to_device between adapters, capability
switches (WGARRAY_DISABLE_FEATURES), and errors for arrays on different devices."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import wgarray as xp
from conftest import INFO, assert_exact

DEVICES = INFO.devices()
DEFAULT = INFO.default_device()
OTHERS = [d for d in DEVICES if d is not DEFAULT]


def test_device_identity_and_pickling():
    for d in DEVICES:
        assert d == d and hash(d) == hash(d)
        assert pickle.loads(pickle.dumps(d)) is d
        assert isinstance(str(d), str) and repr(d).startswith("Device(")
    assert len(set(DEVICES)) == len(DEVICES)
    assert xp.devices() == tuple(DEVICES) or list(xp.devices()) == DEVICES


def test_device_argument_accepts_the_default_device():
    for fn, args in ((xp.zeros, (3,)), (xp.ones, (3,)), (xp.empty, (3,)), (xp.full, (3, 1.5)),
                     (xp.arange, (4,)), (xp.linspace, (0, 1, 3)), (xp.eye, (2,)), (xp.asarray, ([1, 2],))):
        x = fn(*args, device=DEFAULT)
        assert x.device is DEFAULT
    x = xp.ones(3)
    assert xp.zeros_like(x, device=DEFAULT).device is DEFAULT
    assert xp.astype(x, xp.int32, device=DEFAULT).device is DEFAULT
    assert x.to_device(DEFAULT) is x


def test_bad_device_argument():
    with pytest.raises((TypeError, ValueError)):
        xp.zeros(3, device=object())
    with pytest.raises(ValueError):
        xp.zeros(3, device=10_000)


def test_dtypes_per_device_follow_features():
    for d in DEVICES:
        names = list(INFO.dtypes(device=d))
        assert ("float64" in names) == ("complex128" in names)
        for must in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
                     "complex64"):
            assert must in names  # 64-bit integers are emulated where the feature is missing
        defaults = INFO.default_dtypes(device=d)
        assert defaults["real floating"] == (xp.float64 if "float64" in names else xp.float32)


@pytest.mark.skipif(not OTHERS, reason="only one device")
def test_to_device_between_adapters():
    other = OTHERS[0]
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(h)
    y = x.to_device(other)
    assert y.device is other
    assert_exact(y, h)
    assert_exact(y * 2 + 1, h * 2 + 1)
    assert_exact(xp.asarray(y, device=DEFAULT), h)
    with pytest.raises(ValueError, match="different devices"):
        x + y
    with pytest.raises(ValueError):
        xp.asarray(x, device=other, copy=False)
    z = xp.zeros(3, dtype=xp.int64, device=other)
    assert z.device is other
    assert_exact(z + 2**40, np.full(3, 2**40, np.int64))


@pytest.mark.skipif(not OTHERS, reason="only one device")
def test_float64_on_a_device_without_it():
    lacking = [d for d in DEVICES if "float64" not in INFO.dtypes(device=d)]
    if not lacking:
        pytest.skip("every device offers float64")
    d = lacking[0]
    with pytest.raises(TypeError, match="float64"):
        xp.zeros(2, dtype=xp.float64, device=d)
    if "float64" in INFO.dtypes():
        with pytest.raises(TypeError, match="float64"):
            xp.ones(2, dtype=xp.float64).to_device(d)
    assert xp.ones(2, device=d).dtype == xp.float32


@pytest.mark.parametrize("int_dtype", ["int32", "int64", "uint32"])
def test_integers_widen_float32_by_the_operands_device(int_dtype):
    # SciPy's differential_entropy(method="correa") multiplies float32 data by an int64
    # arange on every device: the promotion asked the default device (which has float64)
    # and then refused float64 on one without it. Each device answers for its own arrays.
    hi = np.array([0, 1, -3, 7, 2**20 + 1], np.int64).astype(int_dtype) if int_dtype != "uint32" \
        else np.array([0, 1, 3, 7, 2**20 + 1], np.uint32)
    hf = np.array([0.5, -0.0, np.inf, np.nan, 1.25], np.float32)
    for d in DEVICES:
        f64 = "float64" in INFO.dtypes(device=d)
        i, f = xp.asarray(hi, device=d), xp.asarray(hf, device=d)
        if f64:  # NumPy's rule
            want_mul, want_cat, want_half = hi * hf, np.concat([hi, hf]), hi * 0.5
        else:  # the widening stops at float32
            want_mul = hi.astype(np.float32) * hf
            want_cat = np.concat([hi.astype(np.float32), hf])
            want_half = hi.astype(np.float32) * np.float32(0.5)
        for got in (i * f, f * i, xp.multiply(i, f)):
            assert got.device is d
            assert_exact(got, want_mul)
        assert_exact(xp.concat([i, f]), want_cat)
        assert_exact(i * 0.5, want_half)
        assert xp.result_type(i, f) == xp.result_type(f, i) == want_mul.dtype
        assert xp.result_type(i, 0.5) == want_half.dtype
        m = xp.reshape(i, (1, 5)) @ xp.reshape(f, (5, 1))
        assert m.dtype == want_mul.dtype and m.device is d
    assert xp.result_type(xp.int64, xp.float32) == (  # bare dtypes: the default device
        xp.float64 if "float64" in INFO.dtypes() else xp.float32)


def test_disable_features_switch_hides_float64():
    code = ("import wgarray as xp; i = xp.__array_namespace_info__(); "
            "d = i.default_device(); print(sorted(i.dtypes()), i.default_dtypes()['real floating'], "
            "sorted(d.features))")
    env = dict(os.environ, WGARRAY_DISABLE_FEATURES="shader-f64,shader-int64")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "float64" not in out.stdout and "complex128" not in out.stdout
    assert "int64" in out.stdout and "float32" in out.stdout.split("]")[1]
    assert "shader-f64" not in out.stdout and "shader-int64" not in out.stdout


def test_gpu_timer_measures_recorded_passes():
    rt = xp.asarray([1.0]).device.runtime
    if "timestamp-query" not in rt.device.features:
        pytest.skip("device lacks timestamp-query")
    x = xp.asarray(np.ones(1 << 16, np.float32))
    with rt.gpu_timer() as t:
        xp.evaluate(x * 2 + 1)
    assert t.passes >= 1 and t.seconds > 0


def test_profile_times_every_dispatch_by_kernel():
    rt = xp.asarray([1.0]).device.runtime
    if "timestamp-query" not in rt.device.features:
        pytest.skip("device lacks timestamp-query")
    x = xp.asarray(np.arange(1 << 12, dtype=np.float32))
    # compiled, and the device's one-time probes run (a sort's subgroup probe is a
    # dispatch of its own, not counted as one), outside the profile
    xp.evaluate(x + 1, xp.sort(x + 3))
    xp.debug.reset_counters()
    with xp.debug.profile(x.device) as p:
        s = xp.sum(x * 2)
        y = xp.sort(-x)
        xp.evaluate(s, y)
    dispatches = xp.debug.counters()["dispatches"]
    assert sum(n for n, _ in p.kernels.values()) == dispatches >= 2
    assert all(sec >= 0 for _, sec in p.kernels.values())
    assert "dispatches" in p.table()
    assert float(s) == float(np.sum(np.arange(1 << 12, dtype=np.float32) * 2))
    np.testing.assert_array_equal(np.asarray(y), np.sort(-np.arange(1 << 12, dtype=np.float32)))
    # a query set holds 2048 passes: a longer profile takes more sets
    with xp.debug.profile(x.device) as p:
        for i in range(2100):
            xp.evaluate(x + i)
    assert sum(n for n, _ in p.kernels.values()) == 2100
    with pytest.raises(RuntimeError, match="already running"):
        with rt.gpu_timer():
            with xp.debug.profile(x.device):
                pass


def test_long_unsynchronized_loop_reuses_buffers():
    # A batch keeps the buffers it uses alive until it is submitted; a loop that never
    # synchronizes must still recycle its temporaries instead of allocating new ones.
    x = xp.ones(4 << 20, dtype=xp.float32)  # 16 MiB
    y = xp.cumulative_sum(x)
    xp.evaluate(y)
    xp.debug.reset_counters()
    for _ in range(40):  # 640 MiB of results if nothing were reused
        y = xp.cumulative_sum(x)
    xp.evaluate(y)
    assert xp.debug.counters()["buffers_created"] <= 40  # 157 without the bound
    assert float(y[-1]) == 4 << 20


class _RefusingAdapter:
    """An adapter that reports features and limits its driver then refuses (as the
    H200's OpenGL adapter does): only a request without optional features succeeds,
    or none at all."""

    info = {"device": "refusing", "description": "", "backend_type": "OpenGL", "adapter_type": "DiscreteGPU"}
    features = {"shader-f64", "shader-int64", "subgroup"}
    limits = {"max-buffer-size": 1 << 40, "max-storage-buffer-binding-size": 1 << 40}

    def __init__(self, opens: bool):
        self.opens = opens
        self.requests = []

    def request_device_sync(self, label, required_features, required_limits):
        self.requests.append((tuple(required_features), dict(required_limits)))
        if required_features or required_limits or not self.opens:
            raise RuntimeError("Validation Error")
        return type("FakeDevice", (), {"limits": {"max-buffer-size": 256 << 20,
                                                  "max-storage-buffer-binding-size": 128 << 20}})()


def test_device_falls_back_to_no_optional_features_when_the_driver_refuses_them():
    from wgarray._runtime.device import Device, _disabled_features

    adapter = _RefusingAdapter(opens=True)
    dev = Device(7, adapter)
    assert dev.features == frozenset()
    assert not dev.has_f64 and not dev.has_int64 and not dev.has_subgroups
    assert xp.float64 not in dev.dtypes and xp.float32 in dev.dtypes
    assert dev.max_buffer_bytes == 256 << 20 and dev.max_binding_bytes == 128 << 20
    wanted = tuple(sorted(f for f in adapter.features if f not in _disabled_features()))
    assert [r[0] for r in adapter.requests] == [wanted, wanted] + ([()] if wanted else [])


def test_device_that_cannot_be_opened_says_which_and_why():
    from wgarray._runtime.device import Device

    dev = Device(3, _RefusingAdapter(opens=False))
    with pytest.raises(RuntimeError, match=r"cannot open device 'refusing' \(OpenGL\): Validation Error"):
        dev.features


def test_adapters_without_compute_shaders_are_not_devices():
    from wgarray._runtime import device as _device

    good = _RefusingAdapter(opens=True)
    good.limits = dict(good.limits, **{"max-compute-workgroups-per-dimension": 65535,
                                       "max-compute-invocations-per-workgroup": 256})
    no_compute = _RefusingAdapter(opens=True)
    no_compute.limits = dict(no_compute.limits, **{"max-compute-workgroups-per-dimension": 0,
                                                   "max-compute-invocations-per-workgroup": 0})
    assert _device._can_compute(good) and not _device._can_compute(no_compute)
    assert all(_device._can_compute(d.adapter) for d in _device.devices())


def test_bind_groups_take_the_direct_path():
    # the descriptor filled through wgpu-py's own cffi objects (wgpu-py's validating
    # create_bind_group costs ~100 us a call); a wgpu-py whose internals differ would
    # silently fall back to the public call, and this says so
    from wgarray._runtime import runtime as _runtime

    assert _runtime._NATIVE is not None
    calls = []
    real = _runtime._NATIVE.bind_group
    _runtime._NATIVE.bind_group = lambda *args: calls.append(1) or real(*args)
    try:
        a = xp.asarray(np.arange(5, dtype=np.float32))
        b = xp.asarray(np.ones(5, np.float32))
        a._node.device.runtime._bind_groups.clear()  # pooled buffers may have met before
        got = np.asarray(a * 3 + b)  # no cached group: a new one
    finally:
        _runtime._NATIVE.bind_group = real
    assert calls
    np.testing.assert_array_equal(got, np.arange(5, dtype=np.float32) * 3 + 1)
