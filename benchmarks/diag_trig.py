"""Device time of float64 and float32 sin / cos / tan / exp over 2^26 elements beside
torch (CUDA): what the float64 trig functions' two-part argument reduction costs.

    python benchmarks/diag_trig.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wgarray as xp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of, cuda_torch, device_seconds  # noqa: E402

N = 1 << 26


def main():
    torch = cuda_torch()
    rt = xp.asarray(0.0).device.runtime
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        host = (rng.standard_normal(N) * 100).astype(dtype)
        x = xp.asarray(host)
        tx = torch.from_numpy(host).cuda() if torch is not None else None
        for name in ("exp", "sin", "cos", "tan"):
            f = getattr(xp, name)

            def run():
                xp.evaluate(f(x))

            dev_s = device_seconds(run, rt)
            ref = ""
            if tx is not None:
                tf = getattr(torch, name)
                ref = f", torch {best_of(lambda: tf(tx), torch.cuda.synchronize, repeat=5) * 1e3:.3f} ms"
            gbs = 2 * host.nbytes / dev_s / 1e9
            print(f"{dtype} {name}: device {dev_s * 1e3:.3f} ms ({gbs:.0f} GB/s){ref}")


if __name__ == "__main__":
    main()
