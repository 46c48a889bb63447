"""Reductions of inputs that are costly to compile (float32 sin and tan, float64 sin,
complex exp), which the reduction calls from one place rather than from its unrolled
loop: device time of ``sum(f(x))`` beside ``f(x)`` alone and torch (CUDA) over 2^26
elements, the same with the unrolled loop (every input light), and the first call's
wall time (compile included).

    python benchmarks/diag_heavy_reduce.py
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wgarray as xp  # noqa: E402
from wgarray._kernels import reduce as kr  # noqa: E402
from wgarray._wgsl import reduce as rd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of, cuda_torch, device_seconds  # noqa: E402

N = int(os.environ.get("DIAG_N", 1 << 26))
CASES = [("sin", "float32"), ("tan", "float32"), ("exp", "float32"), ("sin", "float64"), ("exp", "complex64"),
         ("exp", "complex128")]


def _forget_reductions(rt):
    kr._KERNELS.clear()
    for key in [k for k, v in rt.kernels.items() if v.name.startswith("reduce")]:
        del rt.kernels[key]


def _unrolled(rt, fn):
    """``fn()`` with every reduction input rendered as light (the unrolled loop)."""
    heavy = rd.heavy_input
    _forget_reductions(rt)
    rd.heavy_input = lambda spec: False
    try:
        return fn()
    finally:
        rd.heavy_input = heavy
        _forget_reductions(rt)


def main():
    torch = cuda_torch()
    rt = xp.asarray(0.0).device.runtime
    rng = np.random.default_rng(0)
    for name, dtype in CASES:
        host = rng.standard_normal(N // (2 if dtype.startswith("complex") else 1)) * 3
        if dtype.startswith("complex"):
            host = host + 1j * rng.standard_normal(host.size)
        host = host.astype(dtype)
        x = xp.asarray(host)
        f = getattr(xp, name)
        t = time.perf_counter()
        complex(xp.sum(f(x)))
        first = time.perf_counter() - t
        red = device_seconds(lambda: xp.evaluate(xp.sum(f(x))), rt)
        unrolled = _unrolled(rt, lambda: device_seconds(lambda: xp.evaluate(xp.sum(f(x))), rt))
        alone = device_seconds(lambda: xp.evaluate(f(x)), rt)
        ref = ""
        if torch is not None:
            tx = torch.from_numpy(host).cuda()
            tf = getattr(torch, name)
            ref = f", torch sum(f(x)) {best_of(lambda: tf(tx).sum(), torch.cuda.synchronize, repeat=5) * 1e3:.3f} ms"
        print(f"{dtype} sum({name}(x)): device {red * 1e3:.3f} ms (unrolled {unrolled * 1e3:.3f}), "
              f"{name}(x) alone {alone * 1e3:.3f} ms"
              f"{ref}; first call {first:.2f} s")


if __name__ == "__main__":
    main()
