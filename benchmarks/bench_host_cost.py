"""Host cost of a reduction call and device time of column sums of tall arrays.

    python -m pytest benchmarks/bench_host_cost.py -p no:cacheprovider \\
        --benchmark-group-by=param:case --benchmark-columns=min,median,rounds -s

Groups (``case``):

- ``reduce_host``: Python time on the calling thread (no waiting) of ``sum(x)``,
  ``sum(x, axis=0)`` and ``mean(x * 2, axis=1)`` on a realized 1000 x 1000 float32,
  each round from a synchronized device, as one step of a loop is;
- ``column_sum``: ``sum(X, axis=0)`` of a tall float32 array (1M x 32, 2M x 64,
  4M x 16: the shapes of GaussianNB, StandardScaler and zscore), synchronized, beside
  torch where CUDA is present.

Each wgarray case prints its counters (dispatches, submits, pipelines compiled).
"""
from __future__ import annotations

import os

import sys

import numpy as np
import pytest

import wgarray as wx
from wgarray import debug
from wgarray._runtime.device import default_device
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import cuda_torch  # noqa: E402

SMALL = os.environ.get("WGARRAY_BENCH_SMALL", "") not in ("", "0")


TORCH = cuda_torch()


def _realized(host):
    a = wx.asarray(host)
    wx.evaluate(a)
    return a


def _print_counters(step):
    rt = default_device().runtime
    rt.sync()
    debug.reset_counters()
    out = step()
    wx.evaluate(out)
    rt.sync()
    c = debug.counters()
    print("\n  wgarray counters per call:",
          {k: c.get(k, 0) for k in ("dispatches", "submits", "readbacks", "realizations", "pipelines_compiled")})


@pytest.mark.parametrize("call", ["sum_all", "sum_axis0", "mean_x2_axis1"])
@pytest.mark.parametrize("case", ["reduce_host"])
def test_reduce_host(benchmark, case, call):
    x = _realized(np.random.default_rng(0).random((1000, 1000), dtype=np.float32))
    step = {"sum_all": lambda: wx.sum(x), "sum_axis0": lambda: wx.sum(x, axis=0),
            "mean_x2_axis1": lambda: wx.mean(x * 2.0, axis=1)}[call]
    rt = default_device().runtime
    for _ in range(50):
        step()
    benchmark.pedantic(step, setup=rt.sync, rounds=1000, warmup_rounds=20)
    _print_counters(step)


SHAPES = {"gnb_1Mx32": (1_000_000, 32), "scaler_2Mx64": (2_000_000, 64), "zscore_4Mx16": (4_000_000, 16)}


@pytest.mark.parametrize("lib", ["wgarray"] + (["torch"] if TORCH is not None else []))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("case", ["column_sum"])
def test_column_sum(benchmark, case, shape, lib):
    rows, cols = SHAPES[shape]
    if SMALL:
        rows //= 20
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    if lib == "torch":
        X = TORCH.from_numpy(host).cuda()

        def step():
            out = X.sum(dim=0)
            TORCH.cuda.synchronize()
            return out
    else:
        X = _realized(host)
        rt = default_device().runtime

        def step():
            out = wx.sum(X, axis=0)
            wx.evaluate(out)
            rt.sync()
            return out
    for _ in range(3):
        step()
    benchmark.pedantic(step, rounds=20, iterations=1, warmup_rounds=2)
    got = np.asarray(step().cpu() if lib == "torch" else step())
    np.testing.assert_allclose(got, host.sum(axis=0, dtype=np.float64), rtol=1e-3, atol=1e-1)
    if lib == "wgarray":
        _print_counters(lambda: wx.sum(X, axis=0))
