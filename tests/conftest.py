"""Shared helpers for the device tests: the dtypes this device offers, NumPy
references, exact (bitwise, NaN-aware) and ulp comparisons, and sample values; and the
markers of the suite's parts (tests/README.md). Importing it opens no device.

Every test reads the available dtypes from ``__array_namespace_info__().dtypes()``, so
the suite runs unchanged with ``WGARRAY_DISABLE_FEATURES=shader-f64,shader-int64``
(float64/complex128 absent, int64 emulated).
"""
from __future__ import annotations

import functools
import pathlib

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import wgarray as xp
from wgarray._runtime.numerics import float32_behaviour

settings.register_profile(
    "wgarray", max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("wgarray")

ALL_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]

# What the test device offers (INFO, DTYPES, HAS_F64, CATEGORY, BEHAVIOUR, ...) is found
# on first use, through the module's __getattr__: importing this file opens no device,
# so the device-free tests under tests/unit/ run where no adapter exists.
DEVICE_NAMES = ("INFO", "DTYPES", "DTYPE_NAMES", "HAS_F64", "DEFAULT_FLOAT", "DEFAULT_COMPLEX",
                "INTEGER", "REAL_FLOAT", "COMPLEX", "NUMERIC", "CATEGORY", "BEHAVIOUR")


@functools.cache
def device_facts() -> dict:
    """The device-dependent names of this module, from the default device."""
    info = xp.__array_namespace_info__()
    dtypes = list(info.dtypes().values())
    integer = [d for d in dtypes if d.kind in "iu"]
    real_float = [d for d in dtypes if d.kind == "f"]
    complex_ = [d for d in dtypes if d.kind == "c"]
    numeric = integer + real_float + complex_
    return {
        "INFO": info,
        "DTYPES": dtypes,
        "DTYPE_NAMES": [d.name for d in dtypes],
        "HAS_F64": any(d.name == "float64" for d in dtypes),
        "DEFAULT_FLOAT": info.default_dtypes()["real floating"],
        "DEFAULT_COMPLEX": info.default_dtypes()["complex floating"],
        "INTEGER": integer,
        "REAL_FLOAT": real_float,
        "COMPLEX": complex_,
        "NUMERIC": numeric,
        "CATEGORY": {
            "bool": [xp.bool],
            "integer": integer,
            "integer or boolean": [xp.bool] + integer,
            "real floating-point": real_float,
            "floating-point": real_float + complex_,
            "complex floating-point": complex_,
            "real-valued": integer + real_float,
            "numeric": numeric,
            "any": dtypes,
        },
        # Where the device flushes subnormals in arithmetic (NVIDIA's Vulkan driver:
        # float32 and float64), as wgarray's own probe reports.
        "BEHAVIOUR": float32_behaviour(xp.asarray(0.0).device),
    }


def __getattr__(name):
    if name in DEVICE_NAMES:
        value = device_facts()[name]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ids(dtypes):
    return [d.name for d in dtypes]


def npdt(d) -> np.dtype:
    return np.dtype(d.name)


def to_np(x) -> np.ndarray:
    """The values of a wgarray array on the host, checking shape and dtype agree."""
    assert isinstance(x, xp.Array), type(x)
    h = np.asarray(x)
    assert h.shape == x.shape, (h.shape, x.shape)
    assert h.dtype == npdt(x.dtype), (h.dtype, x.dtype)
    return h


# ----------------------------------------------------------- the device's subnormals
# Where the device flushes subnormals in arithmetic, the tests accept IEEE's result and
# also the result of the same operation on flushed inputs, flushed; elsewhere IEEE's only.

def flushes_subnormals(dtype) -> bool:
    """Whether the test device flushes subnormals of ``dtype`` (NumPy or wgarray dtype)."""
    name = getattr(dtype, "name", None) or np.dtype(dtype).name
    behaviour = device_facts()["BEHAVIOUR"]
    if name in ("float32", "complex64"):
        return not (behaviour.subnormal_inputs and behaviour.subnormal_results)
    if name in ("float64", "complex128"):
        return behaviour.float64_subnormal_results is False
    return False


def flush_subnormals(a):
    """``a`` with every subnormal (real or imaginary part) replaced by a zero of its sign."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return (flush_subnormals(a.real) + 1j * flush_subnormals(a.imag)).astype(a.dtype)
    if a.dtype.kind != "f":
        return a
    tiny = np.finfo(a.dtype).tiny
    return np.where((a != 0) & (np.abs(a) < tiny), np.copysign(np.zeros((), a.dtype), a), a).astype(a.dtype)


def flushed_reference(fn, args, dtype):
    """What ``fn`` gives on the device's flushing model (flushed inputs, flushed result),
    or None where the device keeps the subnormals of ``dtype``."""
    if not flushes_subnormals(dtype):
        return None
    with np.errstate(all="ignore"):
        return flush_subnormals(fn(*[flush_subnormals(a) for a in args]))


def same_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: equal bit patterns (the sign of zero counts), any NaN equal any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "c":
        return same_values(got.real, want.real) & same_values(got.imag, want.imag)
    if got.dtype.kind == "f":
        return ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
    return got == want


def assert_exact(x, want, *, dtype=None, msg=""):
    """``x`` (a wgarray array) has exactly NumPy's values, shape and dtype."""
    want = np.asarray(want)
    if dtype is not None:
        assert x.dtype == dtype, f"{msg} dtype {x.dtype}, expected {dtype}"
        want = want.astype(npdt(dtype)) if want.dtype != npdt(dtype) else want
    got = to_np(x)
    assert got.dtype == want.dtype, f"{msg} dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{msg} shape {got.shape}, expected {want.shape}"
    bad = ~same_values(got, want)
    if bad.any():
        idx = np.argwhere(bad)[:8]
        detail = "; ".join(f"{tuple(i)}: got {got[tuple(i)]!r} want {want[tuple(i)]!r}" for i in idx)
        raise AssertionError(f"{msg} {int(bad.sum())} of {bad.size} differ: {detail}")


def ordered(a: np.ndarray) -> np.ndarray:
    """Map floats to integers whose difference counts ulps."""
    if a.dtype == np.float32:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    i = a.view(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    a, b = ordered(got), ordered(want)
    same_sign = (a >= 0) == (b >= 0)
    with np.errstate(over="ignore"):
        exact = np.abs(np.where(same_sign, a - b, 0)).astype(np.float64)  # int64 differences are exact
    return np.where(same_sign, exact, np.abs(a.astype(np.float64) - b.astype(np.float64)))


def sample(d, n=64, seed=0, specials=True) -> np.ndarray:
    """Values of dtype ``d`` for elementwise tests: the type's edge values first, then
    random ones (for floats: NaN, +-inf, +-0, tiny, huge, halves)."""
    rng = np.random.default_rng(seed)
    t = npdt(d)
    if d.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(t)
        edge = [0, 1, info.max, info.min, info.max - 1, info.min + 1, 2, 7, 100]
        if d.kind == "i":
            edge += [-1, -2, -7, -100]
        rnd = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
        small = rng.integers(max(info.min, -50), 50, n).astype(t)
        return np.concatenate([np.array(edge, dtype=t) if specials else [], rnd, small]).astype(t)
    if d.kind == "f":
        fi = np.finfo(t)
        edge = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0,
                fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, np.pi, -np.e]
        body = np.concatenate([rng.standard_normal(n) * 3, rng.uniform(-1, 1, n),
                               np.exp(rng.uniform(-20, 20, n)) * rng.choice([-1, 1], n)])
        vals = np.concatenate([np.array(edge) if specials else [], body])
        return vals.astype(t)
    real = sample(xp.float32 if d.name == "complex64" else xp.float64, n, seed, specials=False)
    rng2 = np.random.default_rng(seed + 1)
    out = (real + 1j * rng2.permutation(real)).astype(t)
    if specials:
        sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])
        re, im = np.meshgrid(sp, sp)
        edge = np.empty(re.size, t)
        edge.real, edge.imag = re.ravel(), im.ravel()
        out = np.concatenate([edge, out])
    return out


@pytest.fixture(autouse=True)
def _numpy_quiet():
    with np.errstate(all="ignore"):
        yield


@pytest.fixture(autouse=True)
def _fresh_programs():
    """No recorded program (``_kernels/program.py``) carries over from another test: a
    test that patches a factorization's module settings gets its own recording."""
    if not os.environ.get("WGARRAY_TEST_NO_DEVICE"):
        for dev in xp.__array_namespace_info__().devices():
            if dev._runtime is not None:
                dev._runtime.programs.clear()
    yield


@pytest.fixture
def no_early_submit(monkeypatch):
    """The default device's runtime without its early submit (``runtime.EARLY_SUBMIT_US``,
    on GPUs only), for tests that count submits: a GPU host's recording time then does
    not change the count."""
    rt = xp.__array_namespace_info__().default_device().runtime
    monkeypatch.setattr(rt, "early_submit_s", None)
    monkeypatch.setattr(rt, "_early_s", None)


# ------------------------------------------------------------------ the suite's parts
# Three parts, run apart with -m (tests/README.md): "unit" (tests/unit/: no device),
# "kernels" (the WGSL libraries and kernel families below the namespace: fusion, plans,
# counters, in-place writes) and "namespace" (the public functions against NumPy, and
# wgarray as the xp of other libraries). A new test file joins "namespace" unless it is
# named here; tests/unit/test_suite_parts.py checks that every name here exists.
KERNEL_TEST_FILES = frozenset({
    "test_compaction.py",
    "test_exactness.py",
    "test_fft_plans.py",
    "test_fft_tiles.py",
    "test_fusion.py",
    "test_host_cost.py",
    "test_inplace.py",
    "test_linalg_blocked.py",
    "test_linalg_eigen.py",
    "test_reduce_fused.py",
    "test_scan.py",
    "test_unit_stand_ins.py",
    "test_wgsl_complexmath.py",
    "test_wgsl_intmath.py",
    "test_wgsl_realmath.py",
})


UNIT_DIR = pathlib.Path(__file__).resolve().parent / "unit"


def suite_part(path) -> str:
    """The part of the suite (a marker name) that the test file at ``path`` belongs to."""
    path = pathlib.Path(path).resolve()
    if UNIT_DIR in path.parents:
        return "unit"
    return "kernels" if path.name in KERNEL_TEST_FILES else "namespace"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config, items):
    for item in items:
        item.add_marker(suite_part(item.path))
