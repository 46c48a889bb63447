"""The stand-ins of the device-free tests (tests/unit/catalogue.py) plan as the device
does: graphs that the namespace builds from arrays on the device get the same kernel
key, and render the same WGSL, as the catalogue's graphs over stand-in buffers; and
every kernel of the catalogue is valid WGSL to the device's compiler (naga), which the
device-free structural check stands in for."""
from __future__ import annotations

import re

import numpy as np
import pytest

import wgarray as xp
from wgarray._graph import fusion
from wgarray._wgsl import elementwise as ew

from unit import catalogue as c
from wgsl_kernel import device as raw_device


def _stand_in(device):
    return c.NATIVE if device.has_int64 else c.EMULATED


def _expect(graph, device):
    spec = c.elementwise_spec(getattr(c, graph)(0, _stand_in(device)))
    return spec, ew.render(spec)


def test_float_chain_plans_as_on_the_device():
    rng = np.random.default_rng(0)
    shape = c.SIZES[0]
    x = xp.asarray(rng.random(shape, dtype=np.float32))
    y = xp.asarray(rng.random(shape, dtype=np.float32))
    r = xp.exp(x - y) * c.SCALARS[0]
    spec = fusion._plan([r._node]).spec
    assert (spec, ew.render(spec)) == _expect("float_chain", x.device)


def test_int64_chain_plans_as_on_the_device():
    rng = np.random.default_rng(1)
    a = xp.astype(xp.asarray(rng.integers(-1000, 1000, c.SIZES[0], dtype=np.int32)), xp.int64)
    k = c.INT_SCALARS[0]
    r = a // k + a % k
    spec = fusion._plan([r._node]).spec
    assert (spec, ew.render(spec)) == _expect("int64_mixed", a.device)
    h = np.asarray(a)
    assert np.array_equal(np.asarray(r), h // k + h % k)  # and the kernel of that spec computes it


# The features a kernel's text needs: f64, 64-bit integers (types or literals), subgroups.
NEEDS = {"shader-f64": re.compile(r"\bf64\b"), "shader-int64": re.compile(r"\b[iu]64\b|\b\d+l[iu]\b"),
         "subgroup": re.compile(r"\bsubgroup")}
CATALOGUE = {**c.kernels(0), **{"op/" + k: v for k, v in c.op_kernels().items()}}
FAMILIES = sorted({name.split("/")[0] for name in CATALOGUE})


@pytest.mark.parametrize("family", FAMILIES)
def test_catalogue_kernels_compile_on_the_device(family):
    dev = raw_device()
    compiled, wrong = 0, []
    for name, render in CATALOGUE.items():
        if name.split("/")[0] != family:
            continue
        text = render()
        if any(feature not in dev.features and rx.search(text) for feature, rx in NEEDS.items()):
            continue
        try:
            dev.create_shader_module(code=text)
        except Exception as e:  # wgpu's validation error, with naga's message
            wrong.append(f"{name}: {str(e)[:400]}")
        compiled += 1
    assert not wrong, "\n".join(wrong)
    assert compiled, f"{family}: nothing this device can compile"
