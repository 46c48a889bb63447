"""Shared pieces of the pytest-benchmark suites in ``benchmarks/bench_*.py``.

Each workload is one benchmark group; each library that can run it is one case in the
group: NumPy on the host, wgarray on its default device, and PyTorch (CUDA) and CuPy
where they import and see a CUDA device. Every timed call ends on a synchronized
result (wgarray: ``evaluate`` and a 4-byte readback; torch: ``torch.cuda.synchronize``;
CuPy: ``Device().synchronize``), after an untimed warm-up call (kernels compiled,
caches filled) and, on a GPU, half a second of the same work so that clocks are up.
pytest-benchmark reports the median of the rounds.

    WGARRAY_BENCH_SCALE=small   sizes small enough for lavapipe (a smoke test)
    WGARRAY_BENCH_TORCH_DEVICE  torch's device (default cuda; torch is left out without it)
"""
from __future__ import annotations

import os
import time

# scikit-learn and SciPy read this once, at their first import.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from _timing import heat  # noqa: E402

SCALE = os.environ.get("WGARRAY_BENCH_SCALE", "full")
if SCALE not in ("full", "small"):
    raise ValueError(f"WGARRAY_BENCH_SCALE: expected 'full' or 'small', got {SCALE!r}")
SMALL = SCALE == "small"
ROUNDS = 3 if SMALL else 7
WARM_SECONDS = 0.0 if SMALL else 0.5


def size(full, small):
    """The workload size for the current scale."""
    return small if SMALL else full


class Backend:
    """One library: its Array API namespace, how data gets onto its device, how a
    result is made ready (``evaluate``: queued; ``sync``: finished) and read back."""

    name = ""
    gpu = False
    device = ""

    def __init__(self, xp):
        self.xp = xp
        self._cache: dict = {}

    def put(self, key, host: np.ndarray):
        """``host`` on this library's device, uploaded once per key."""
        if key not in self._cache:
            arr = self._upload(host)
            self.sync(arr)
            self._cache[key] = arr
        return self._cache[key]

    def _upload(self, host):
        raise NotImplementedError

    def evaluate(self, result) -> None:
        pass

    def sync(self, result=None) -> None:
        pass

    def to_numpy(self, result) -> np.ndarray:
        return np.asarray(result)


class NumPyBackend(Backend):
    name, device = "numpy", "host CPU"

    def _upload(self, host):
        return np.array(host)


class WgarrayBackend(Backend):
    name, gpu = "wgarray", True

    def __init__(self):
        import wgarray

        super().__init__(wgarray)
        self.dev = wgarray.__array_namespace_info__().default_device()
        self.device = f"{self.dev.name} ({self.dev.backend})"
        self.gpu = self.dev.adapter_type != "CPU"

    def _upload(self, host):
        return self.xp.asarray(host)

    def evaluate(self, result) -> None:
        arrays = [r for r in _leaves(result) if isinstance(r, self.xp.Array)]
        if arrays:
            self.xp.evaluate(*arrays)

    def sync(self, result=None) -> None:
        self.evaluate(result)
        self.dev.runtime.sync()


class TorchBackend(Backend):
    name, gpu = "torch", True

    def __init__(self, torch, device):
        from array_api_compat import torch as xp

        super().__init__(xp)
        self.torch, self.where = torch, device
        self.gpu = device.startswith("cuda")
        self.device = torch.cuda.get_device_name() if self.gpu else device
        # float32 matmul in float32, as everyone else computes it
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def _upload(self, host):
        return self.torch.from_numpy(np.ascontiguousarray(host)).to(self.where)

    def sync(self, result=None) -> None:
        if self.gpu:
            self.torch.cuda.synchronize()

    def to_numpy(self, result) -> np.ndarray:
        return result.detach().cpu().numpy() if hasattr(result, "detach") else np.asarray(result)


class CuPyBackend(Backend):
    name, gpu = "cupy", True

    def __init__(self, cupy):
        from array_api_compat import cupy as xp

        super().__init__(xp)
        self.cupy = cupy
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        self.device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

    def _upload(self, host):
        return self.cupy.asarray(host)

    def sync(self, result=None) -> None:
        self.cupy.cuda.Device().synchronize()

    def to_numpy(self, result) -> np.ndarray:
        return self.cupy.asnumpy(result)


def _leaves(result):
    if isinstance(result, (tuple, list)):
        for r in result:
            yield from _leaves(r)
    elif result is not None:
        yield result


def _backends() -> dict[str, Backend]:
    from array_api_compat import numpy as np_xp  # the standard's names on any NumPy version

    found: dict[str, Backend] = {"numpy": NumPyBackend(np_xp), "wgarray": WgarrayBackend()}
    try:
        import torch

        where = os.environ.get("WGARRAY_BENCH_TORCH_DEVICE", "cuda")
        if not where.startswith("cuda") or torch.cuda.is_available():
            found["torch"] = TorchBackend(torch, where)
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found["cupy"] = CuPyBackend(cupy)
    except Exception:  # not installed, or no CUDA device or driver
        pass
    return found


BACKENDS = _backends()


def libs(*names: str) -> list[str]:
    """Those of ``names`` that are present here, for ``parametrize("lib", ...)``."""
    return [n for n in names if n in BACKENDS]


ALL = ("numpy", "wgarray", "torch", "cupy")


def measure(benchmark, group: str, lib: str, fn, ops: int = 1, *, nbytes: int | None = None,
            flops: float | None = None, rounds: int | None = None, sync=None):
    """Time ``fn`` (which returns its result) to a synchronized result, after warming up;
    returns the result of the last call. ``ops``: how many workload operations one call
    runs (per-operation time = median / ops); ``nbytes``/``flops``: per operation, for
    bandwidth and throughput columns in the report."""
    backend = BACKENDS.get(lib)
    done = sync or (backend.sync if backend else (lambda r: None))

    def call():
        r = fn()
        done(r)
        return r

    call()
    if backend is None or backend.gpu:
        end = time.perf_counter() + WARM_SECONDS
        while time.perf_counter() < end:
            call()
    if backend is not None and backend.gpu and not SMALL:
        # the clocks up for the timed rounds, whichever library runs them (one GPU)
        heat(BACKENDS["wgarray"].dev.runtime)
    benchmark.group = group
    benchmark.extra_info.update(
        workload=group, library=lib, ops=ops, bytes=nbytes, flops=flops, scale=SCALE,
        device=backend.device if backend else BACKENDS["wgarray"].device)
    if rounds is None:
        # NumPy's host times are steady and long at full size: fewer rounds keep the suite short
        rounds = ROUNDS if backend is None or backend.gpu or SMALL else 3
    return benchmark.pedantic(call, rounds=rounds, iterations=1, warmup_rounds=0)


def check_close(got, want, *, rtol: float = 1e-5, atol_of_max: float = 0.0, what: str = ""):
    """``got`` against the NumPy reference; ``atol_of_max`` scales an absolute tolerance
    by the largest magnitude of ``want`` (for sums and transforms whose small entries
    are cancellations)."""
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    atol = atol_of_max * float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def pytest_report_header(config):
    lines = [f"wgarray benchmarks, scale {SCALE}:"]
    lines += [f"  {name}: {b.device}" for name, b in BACKENDS.items()]
    return lines
