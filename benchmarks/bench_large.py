"""Throughput as arrays grow past the storage-binding limit (2 GiB on an H200): the
same work at sizes below and above it, wgarray beside torch (CUDA) in one run.

- ``ew``: ``y = x * 2 + 1`` over float32 (bytes: read + write);
- ``sum``: the sum of float32 (bytes read);
- ``gram``: ``X.T @ X`` of an (n, 256) float32 X (bytes of X read; 2 n 256^2 flops);
- ``sort``: the sort of float32 values in [0, 1) made by a hash of the index on the
  device (bytes of keys; past the binding limit a sample sort of sorted runs).

    WGARRAY_LARGE_GIB="0.5 1 4 8 32" python -m pytest benchmarks/bench_large.py \\
        --benchmark-only --benchmark-group-by=param:case --benchmark-json=large.json

Inputs are made on the device (a fill, never a host upload); each case starts with
both libraries' cached memory given back (wgarray's pool trimmed, torch's
``empty_cache``), and two warm-up rounds fill the caches again (a fresh 2 GiB buffer
costs the H200's driver ~47 ms, as torch's first allocation does); each timed call ends on
a synchronized result (a 4-byte readback for wgarray, ``torch.cuda.synchronize``), after
a warm-up call. The extra_info of each case holds its bytes and GB/s. Sizes past what a
library can allocate are skipped, with its error as the reason.
"""
from __future__ import annotations

import gc
import os

import pytest

import wgarray as xp

SIZES = [float(s) for s in os.environ.get("WGARRAY_LARGE_GIB", "0.0625 0.25").split()]
CASES = ["ew", "sum", "gram", "sort"]


def _torch():
    try:
        import torch
    except Exception:  # noqa: BLE001 - torch absent or broken: wgarray alone
        return None
    return torch if torch.cuda.is_available() else None


LIBS = ["wgarray"] + (["torch"] if _torch() is not None else [])


def _make(lib, case, nbytes):
    """(step, bytes the step moves) for one library and case."""
    n = int(nbytes) // 4
    if lib == "wgarray":
        if case == "sort":
            i = xp.astype(xp.arange(n, dtype=xp.uint32), xp.float32)
            x = xp.sin(i * 12.9898) * 43758.5453
            x = x - xp.floor(x)
            xp.evaluate(x)

            def srt():
                y = xp.sort(x)
                xp.evaluate(y)
                return float(y[0])
            return srt, 4 * n
        if case == "gram":
            X = xp.full((n // 256, 256), 0.5, dtype=xp.float32) + 0
            xp.evaluate(X)
            return (lambda: float(xp.matmul(X.T, X)[0, 0])), n * 4
        x = xp.full((n,), 1.5, dtype=xp.float32) + 0
        xp.evaluate(x)
        if case == "ew":
            def ew():
                y = x * 2 + 1
                xp.evaluate(y)
                return float(y[0])
            return ew, 8 * n
        return (lambda: float(xp.sum(x))), 4 * n
    torch = _torch()
    if case == "sort":
        x = torch.rand(n, dtype=torch.float32, device="cuda")
        return (lambda: (torch.sort(x), torch.cuda.synchronize())), 4 * n
    if case == "gram":
        X = torch.full((n // 256, 256), 0.5, dtype=torch.float32, device="cuda")
        return (lambda: (X.T @ X, torch.cuda.synchronize())), n * 4
    x = torch.full((n,), 1.5, dtype=torch.float32, device="cuda")
    if case == "ew":
        return (lambda: (x * 2 + 1, torch.cuda.synchronize())), 8 * n
    return (lambda: float(x.sum())), 4 * n


@pytest.mark.parametrize("gib", SIZES)
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CASES)
def test_large(benchmark, case, lib, gib):
    gc.collect()
    # each case starts with the other library's cached memory given back
    rt = xp.asarray(0).device.runtime
    rt.sync()
    rt.pool.trim(0)
    if _torch() is not None:
        _torch().cuda.empty_cache()
    try:
        step, moved = _make(lib, case, gib * (1 << 30))
        step()
    except MemoryError as exc:
        pytest.skip(f"{lib}: {exc}")
    except RuntimeError as exc:  # torch.sort refuses more than INT_MAX elements
        pytest.skip(f"{lib}: {str(exc).splitlines()[0]}")
    # two warm-up rounds: the first makes the results, the second the cached buffers they reuse
    benchmark.pedantic(step, rounds=5, iterations=1, warmup_rounds=2)
    median = benchmark.stats.stats.median
    benchmark.extra_info.update(bytes=moved, gbps=moved / median / 1e9, gib=gib)
    del step
    gc.collect()
