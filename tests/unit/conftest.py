"""Device-free tests: every test here runs with wgpu's adapters out of reach.

An autouse fixture makes any adapter request, and any use of a wgarray device's wgpu
device or runtime, raise: a test that would open a device fails, whatever ran before it
in the process. With ``WGARRAY_TEST_NO_DEVICE=1`` the adapter requests fail from the
moment this file is imported, so importing the test modules opens nothing either
(``scripts/test.sh`` runs tests/unit so first).
"""
from __future__ import annotations

import os

import pytest
import wgpu

from wgarray._runtime import device as _device

_ADAPTER_CALLS = ("enumerate_adapters", "enumerate_adapters_sync", "enumerate_adapters_async",
                  "request_adapter", "request_adapter_sync", "request_adapter_async")


class DeviceOpened(AssertionError):
    pass


def _refuse(what):
    def refuse(*args, **kwargs):
        raise DeviceOpened(f"a device-free test asked for {what}")
    return refuse


def _refused_property(what):
    return property(_refuse(what))


if os.environ.get("WGARRAY_TEST_NO_DEVICE") == "1":
    for _name in _ADAPTER_CALLS:
        setattr(wgpu.gpu, _name, _refuse(f"wgpu.gpu.{_name}"))


@pytest.fixture(autouse=True)
def _no_device(monkeypatch):
    for name in _ADAPTER_CALLS:
        monkeypatch.setattr(wgpu.gpu, name, _refuse(f"wgpu.gpu.{name}"))
    monkeypatch.setattr(_device.Device, "wgpu_device", _refused_property("a wgpu device"))
    monkeypatch.setattr(_device.Device, "runtime", _refused_property("a device's runtime"))
    yield
