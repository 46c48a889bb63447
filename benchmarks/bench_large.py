"""Throughput as arrays grow past the storage-binding limit (2 GiB on an H200): the
same work at sizes below and above it, wgarray beside torch (CUDA) in one run.

- ``ew``: ``y = x * 2 + 1`` over float32 (bytes: read + write);
- ``sum``: the sum of float32 (bytes read);
- ``gram``: ``X.T @ X`` of an (n, 256) float32 X (bytes of X read; 2 n 256^2 flops);
- ``sort``: the sort of float32 values in [0, 1) made by a hash of the index on the
  device (bytes of keys; past the binding limit a sample sort of sorted runs);
- ``solve``, ``cholesky`` and ``qr`` (``test_large_factorization``, sizes from
  ``WGARRAY_LARGE_LU_GIB``): one float32 n x n matrix of that many bytes, symmetric with
  hashed entries in [-1, 1) and n on the diagonal (positive definite): ``solve`` with 16
  right-hand sides, ``cholesky``, ``qr`` (Q and R); past the binding limit all run by
  panels of columns. Their extra_info holds the GFLOP/s (2/3 n^3, 1/3 n^3 and 8/3 n^3
  flops: Householder's 4/3 n^3 for R and as much again for Q).
- ``eigvalsh`` and ``svdvals`` (``test_large_spectrum``, the same matrices): past the
  binding limit by spectral division (QDWH polar factors, QRs and products past the
  limit); ``WGARRAY_LARGE_BINDING_MIB`` lowers wgarray's binding limit, so that orders
  that fit the real one take that path too. One timed call each (they run for seconds).

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

import contextlib
import gc
import os

import pytest

import wgarray as xp
from wgarray import debug

SIZES = [float(s) for s in os.environ.get("WGARRAY_LARGE_GIB", "0.0625 0.25").split()]
LU_SIZES = [float(s) for s in os.environ.get("WGARRAY_LARGE_LU_GIB", "0.0625").split()]
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


def _order(nbytes) -> int:
    return int((nbytes / 4) ** 0.5) // 256 * 256


def _test_matrix(lib, n):
    """The float32 n x n matrix of the factorization cases, made on the device: symmetric
    with hashed entries in [-1, 1) and n on the diagonal."""
    if lib == "wgarray":
        m, kw = xp, {}
        i = xp.astype(xp.arange(n, dtype=xp.uint32), xp.float32)
    else:
        m, kw = _torch(), {"device": "cuda"}
        i = m.arange(n, dtype=m.float32, **kw)
    hashed = m.sin(i[:, None] * 12.9898 + i[None, :] * 12.9898) * 43758.5453
    return (hashed - m.floor(hashed)) * 2 - 1 + n * m.eye(n, dtype=m.float32, **kw)


def _factorization(lib, case, nbytes):
    """(step, flops) of one float32 solve, cholesky or qr of an order filling ``nbytes``."""
    n = _order(nbytes)
    flops = {"solve": 2, "cholesky": 1, "qr": 8}[case] * n ** 3 / 3
    a = _test_matrix(lib, n)
    if lib == "wgarray":
        b = xp.ones((n, 16), dtype=xp.float32)
        xp.evaluate(a, b)
        la = xp.linalg
    else:
        b = _torch().ones((n, 16), dtype=_torch().float32, device="cuda")
        la = _torch().linalg
    if case == "solve":
        return (lambda: float(la.solve(a, b)[0, 0])), flops
    if case == "qr":
        return (lambda: float(la.qr(a)[1][n - 1, n - 1])), flops
    return (lambda: float(la.cholesky(a)[n - 1, n - 1])), flops


def _spectrum(lib, case, nbytes):
    """(step, nominal flops: 4/3 n^3 for eigvalsh, 8/3 n^3 for svdvals) of the matrix of
    ``_factorization``."""
    n = _order(nbytes)
    flops = {"eigvalsh": 4, "svdvals": 8}[case] * n ** 3 / 3
    a = _test_matrix(lib, n)
    if lib == "wgarray":
        xp.evaluate(a)
    la = xp.linalg if lib == "wgarray" else _torch().linalg
    return (lambda: float(getattr(la, case)(a)[0])), flops


def _run_timed(benchmark, make, gib, rounds: int, warmup: int):
    """Time the step of ``make(nbytes) -> (step, flops)`` (skipped, with the error as the
    reason, where it cannot be allocated), its GFLOP/s in extra_info."""
    try:
        step, flops = make(gib * (1 << 30))
        step()
    except MemoryError as exc:
        pytest.skip(str(exc))
    benchmark.pedantic(step, rounds=rounds, iterations=1, warmup_rounds=warmup)
    median = benchmark.stats.stats.median
    benchmark.extra_info.update(gflops=flops / median / 1e9, gib=gib, order=_order(gib * (1 << 30)))
    del step
    gc.collect()


@pytest.mark.parametrize("gib", LU_SIZES)
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ["eigvalsh", "svdvals"])
def test_large_spectrum(benchmark, case, lib, gib):
    _fresh_caches()
    mib = os.environ.get("WGARRAY_LARGE_BINDING_MIB")
    lowered = bool(mib) and lib == "wgarray"
    with debug.binding_limit(int(mib) << 20) if lowered else contextlib.nullcontext():
        _run_timed(benchmark, lambda nbytes: _spectrum(lib, case, nbytes), gib, 1, 0)
    benchmark.extra_info["binding_mib"] = mib if lowered else None


def _fresh_caches():
    gc.collect()
    rt = xp.asarray(0).device.runtime
    rt.sync()
    rt.pool.trim(0)
    if _torch() is not None:
        _torch().cuda.empty_cache()


@pytest.mark.parametrize("gib", LU_SIZES)
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ["solve", "cholesky", "qr"])
def test_large_factorization(benchmark, case, lib, gib):
    _fresh_caches()
    _run_timed(benchmark, lambda nbytes: _factorization(lib, case, nbytes), gib, 3, 1)


@pytest.mark.parametrize("gib", SIZES)
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CASES)
def test_large(benchmark, case, lib, gib):
    _fresh_caches()  # each case starts with the other library's cached memory given back
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
