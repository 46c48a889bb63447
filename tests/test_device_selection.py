"""Which adapters become devices, and what a bad device setting says.

The adapter list is built from fake adapters (wgpu's enumeration patched), so the
rules are checked on any machine: OpenGL adapters beside a native GPU adapter are
neither opened nor listed; alone, they are opened quietly (wgpu-native's log lines
from that probe are dropped).
"""
from __future__ import annotations

import logging

import pytest

from wgarray._runtime import device as _device

COMPUTE_LIMITS = {"max-compute-workgroups-per-dimension": 65535, "max-compute-invocations-per-workgroup": 256,
                  "max-buffer-size": 1 << 30, "max-storage-buffer-binding-size": 1 << 30}


class _FakeAdapter:
    def __init__(self, name, backend, kind):
        self.info = {"device": name, "description": "", "backend_type": backend, "adapter_type": kind}
        self.features = set()
        self.limits = dict(COMPUTE_LIMITS)
        self.opened = 0

    def request_device_sync(self, label, required_features, required_limits):
        self.opened += 1
        # what wgpu-native logs while it opens the NVIDIA driver's OpenGL context
        logging.getLogger("wgpu").error("indirect-validation error: ComputePipeline(Internal(...))")
        return type("FakeDevice", (), {"limits": dict(COMPUTE_LIMITS)})()


def _devices_of(monkeypatch, adapters):
    monkeypatch.setattr(_device.wgpu.gpu, "enumerate_adapters_sync", lambda: adapters)
    monkeypatch.delenv("WGARRAY_DISABLE_FEATURES", raising=False)
    return _device.devices.__wrapped__()  # past the cache: the real list stays as it is


def test_opengl_adapters_beside_a_vulkan_gpu_are_not_opened_nor_listed(monkeypatch, caplog):
    gpu = _FakeAdapter("NVIDIA H200", "Vulkan", "DiscreteGPU")
    gl = _FakeAdapter("NVIDIA H200/PCIe/SSE2", "OpenGL", "DiscreteGPU")
    cpu = _FakeAdapter("llvmpipe", "Vulkan", "CPU")
    with caplog.at_level(logging.WARNING, logger="wgpu"):
        devs = _devices_of(monkeypatch, [gpu, gl, cpu])
    assert [d.name for d in devs] == ["NVIDIA H200", "llvmpipe"]
    assert [d.index for d in devs] == [0, 1]
    assert gl.opened == 0 and gpu.opened == 0  # native devices open on first use
    assert not caplog.records


def test_opengl_adapter_without_a_native_gpu_is_probed_without_log_lines(monkeypatch, caplog):
    cpu = _FakeAdapter("llvmpipe", "Vulkan", "CPU")
    gl = _FakeAdapter("llvmpipe", "OpenGL", "CPU")
    with caplog.at_level(logging.WARNING, logger="wgpu"):
        devs = _devices_of(monkeypatch, [cpu, gl])
    assert [(d.name, d.backend) for d in devs] == [("llvmpipe", "Vulkan"), ("llvmpipe", "OpenGL")]
    assert gl.opened == 1
    assert not caplog.records
    # the filter is gone after the probe: wgpu's later messages still reach the user
    with caplog.at_level(logging.ERROR, logger="wgpu"):
        logging.getLogger("wgpu").error("a later wgpu error")
    assert [r.getMessage() for r in caplog.records] == ["a later wgpu error"]


@pytest.mark.parametrize("value, unknown", [
    ("shader-f46", "'shader-f46'"),
    ("shader-f64, subgroups", "'subgroups'"),
    ("SHADER-F64", "'SHADER-F64'"),
    ("shader-int64,float32-filterable,x", "'float32-filterable', 'x'"),
])
def test_misspelled_disabled_feature_names_are_an_error_naming_the_valid_ones(monkeypatch, value, unknown):
    monkeypatch.setenv("WGARRAY_DISABLE_FEATURES", value)
    with pytest.raises(ValueError) as info:
        _device._disabled_features()
    assert str(info.value) == ("WGARRAY_DISABLE_FEATURES: expected comma-separated names from shader-f16, "
                               f"shader-f64, shader-int64, subgroup, timestamp-query, got {unknown}")


@pytest.mark.parametrize("value, names", [
    ("", set()),
    (" , ", set()),
    ("shader-f64,shader-int64,subgroup", {"shader-f64", "shader-int64", "subgroup"}),
    (" shader-f16 ,timestamp-query,", {"shader-f16", "timestamp-query"}),
])
def test_valid_disabled_feature_names_are_read_with_spaces_and_empty_items(monkeypatch, value, names):
    monkeypatch.setenv("WGARRAY_DISABLE_FEATURES", value)
    assert _device._disabled_features() == frozenset(names)


@pytest.mark.parametrize("spec, message", [
    ("no-such-gpu", "WGARRAY_DEVICE: no device matches 'no-such-gpu'; devices are: 0: "),
    ("99", "WGARRAY_DEVICE: no device with index 99; devices are: 0: "),
])
def test_bad_device_setting_names_the_devices(spec, message):
    with pytest.raises(ValueError) as info:
        _device.find_device(spec, "WGARRAY_DEVICE")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_the_default_device_is_chosen_once(monkeypatch):
    # every array creation and promotion asks for it: it is chosen once per process,
    # not ranked again per call (uncached, asarray(1.0) cost ~4x its host time)
    first = _device.default_device()
    calls = []
    monkeypatch.setattr(_device, "devices", lambda: calls.append(1) or ())
    assert _device.default_device() is first and not calls
    assert _device.dt.wide_floats() is first.has_f64  # the promotion's question goes to it
