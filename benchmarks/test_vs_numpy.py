"""pytest-benchmark suite: wgarray beside NumPy (and PyTorch/CuPy when they have a GPU).

    python -m pytest benchmarks/test_vs_numpy.py --benchmark-group-by=param:op

Each case times one operation to a device-synchronized result; the group compares the
libraries on the same data. Sizes are kept moderate (LOG2N, default 22) so the suite
also runs on lavapipe, where the figures mean nothing: performance is measured on a GPU.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import wgarray as wx
from wgarray._device import default_device

LOG2N = int(os.environ.get("WGARRAY_BENCH_LOG2N", 22))
N = 1 << LOG2N
MAT = int(os.environ.get("WGARRAY_BENCH_MAT", 1024))


def _host():
    rng = np.random.default_rng(0)
    return {
        "a": rng.random(N, dtype=np.float32),
        "b": rng.random(N, dtype=np.float32),
        "c": rng.random(N, dtype=np.float32),
        "m1": rng.random((MAT, MAT), dtype=np.float32),
        "m2": rng.random((MAT, MAT), dtype=np.float32),
    }


HOST = _host()

OPS = {
    "fused_chain": lambda xp, d: xp.exp(-(d["a"] - d["b"]) ** 2 / 2) * d["c"] + d["a"],
    "sum": lambda xp, d: xp.sum(d["a"]),
    "sort": lambda xp, d: xp.sort(d["a"]),
    "matmul": lambda xp, d: d["m1"] @ d["m2"],
}


def _libraries():
    libs = [("numpy", np, dict(HOST), lambda r: r)]
    dev_rt = default_device().runtime
    wdata = {k: wx.asarray(v) for k, v in HOST.items()}
    wx.evaluate(*wdata.values())

    def wsync(r):
        wx.evaluate(r)
        dev_rt.sync()
        return r

    libs.append(("wgarray", wx, wdata, wsync))
    try:
        import torch

        if torch.cuda.is_available():
            tdata = {k: torch.from_numpy(v).cuda() for k, v in HOST.items()}
            libs.append(("torch", torch, tdata, lambda r: (torch.cuda.synchronize(), r)[1]))
    except ImportError:
        pass
    return libs


LIBS = _libraries()


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("lib", [name for name, *_ in LIBS])
def test_op(benchmark, op, lib):
    _, xp, data, sync = next(entry for entry in LIBS if entry[0] == lib)
    fn = OPS[op]
    if lib == "torch" and op == "sort":
        fn = lambda xp, d: xp.sort(d["a"]).values  # noqa: E731
    result = benchmark(lambda: sync(fn(xp, data)))
    expected = OPS[op](np, HOST)
    got = np.asarray(result.cpu() if lib == "torch" else result)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=1e-3 * float(np.abs(expected).max()))
