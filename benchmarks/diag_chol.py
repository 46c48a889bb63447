"""Cholesky by register panels (in outer blocks of 64, 256 and 512 columns) against the
leaf-kernel path, torch (CUDA) beside.

    python benchmarks/diag_chol.py 1024 2048 4096            # float32
    DTYPE=float64 python benchmarks/diag_chol.py 1024 4096

For each order: wall ms (median of rounds, each round timing every setting in turn,
synchronized by a one-element readback), the error of each factor (and torch's) against
LAPACK's in float64 (max |L - L_ref| / max |L_ref|), and the first-call time of each setting.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._kernels import linalg_blocked as blk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import cuda_torch, heat  # noqa: E402

DTYPE = os.environ.get("DTYPE", "float32")
ROUNDS = int(os.environ.get("ROUNDS", "7"))
SETTINGS = {"leaf": (False, 256), "panels/64": (True, 64), "panels/256": (True, 256), "panels/512": (True, 512)}
DEFAULT = (blk.CHOL_PANELS, blk.CHOL_OUTER)


def use(setting):
    blk.CHOL_PANELS, blk.CHOL_OUTER = setting
    xp.asarray(0.0).device.runtime.programs.clear()  # recorded for the last setting


def spd(n, rng):
    a = rng.standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(DTYPE)


def main(orders):
    torch = cuda_torch()
    dev = xp.asarray(0.0).device
    print(f"device: {dev.name}; {DTYPE}")
    rng = np.random.default_rng(0)
    for n in orders:
        a = spd(n, rng)
        x = xp.asarray(a)
        first, err = {}, {}
        ref = np.linalg.cholesky(a.astype(np.float64))
        for name, setting in SETTINGS.items():
            use(setting)
            t = time.perf_counter()
            L = np.asarray(xp.linalg.cholesky(x))
            first[name] = time.perf_counter() - t
            err[name] = float(np.abs(L - ref).max() / np.abs(ref).max())
        heat(dev.runtime)
        times = {name: [] for name in SETTINGS}
        for _ in range(ROUNDS):
            for name, setting in SETTINGS.items():
                use(setting)
                float(xp.linalg.cholesky(x)[0, 0])
                t = time.perf_counter()
                float(xp.linalg.cholesky(x)[0, 0])
                times[name].append(time.perf_counter() - t)
        use(DEFAULT)
        line = ", ".join(f"{k} {statistics.median(v) * 1e3:.3f} ms (first {first[k]:.2f} s, err {err[k]:.1e})"
                         for k, v in times.items())
        if torch is not None:
            ta = torch.from_numpy(a).cuda()
            for _ in range(3):
                torch.linalg.cholesky(ta)
            torch.cuda.synchronize()
            tt = []
            for _ in range(ROUNDS):
                t = time.perf_counter()
                float(torch.linalg.cholesky(ta)[0, 0])
                tt.append(time.perf_counter() - t)
            tl = torch.linalg.cholesky(ta).double().cpu().numpy()
            line += (f"; torch {statistics.median(tt) * 1e3:.3f} ms "
                     f"(err {float(np.abs(tl - ref).max() / np.abs(ref).max()):.1e})")
        print(f"cholesky {n}: {line}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1024, 4096])
