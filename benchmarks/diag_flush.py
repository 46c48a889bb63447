"""Wall time of the square factorizations against the batch's flush size (buffer bytes
a batch binds before it is submitted): held at each of SIZES_MB, and the default (256
MiB after each wait for the device, doubling with each submit up to
``runtime.BATCH_FLUSH_MAX_BYTES``), with the submits each call makes, beside torch (CUDA).

    python benchmarks/diag_flush.py [n ...]
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray._runtime import runtime as wrt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of, cuda_torch, heat  # noqa: E402

SIZES_MB = tuple(int(v) for v in os.environ.get("DIAG_FLUSH_MB", "256,1024,4096,16384").split(","))


def main(sizes):
    rng = np.random.default_rng(0)
    torch = cuda_torch()
    dev = xp.asarray(0.0).device
    print(f"device: {dev.name}")
    default = wrt.BATCH_FLUSH_BYTES, wrt.BATCH_FLUSH_MAX_BYTES
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        spd = (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)
        b = rng.standard_normal((n, 1)).astype(np.float32)
        A, S, B = xp.asarray(a), xp.asarray(spd), xp.asarray(b)
        calls = {"solve": lambda: float(xp.linalg.solve(A, B)[0, 0]),
                 "inv": lambda: float(xp.linalg.inv(A)[0, 0]),
                 "cholesky": lambda: float(xp.linalg.cholesky(S)[0, 0])}
        ref = {}
        if torch is not None:
            ta, ts, tb = (torch.from_numpy(v).cuda() for v in (a, spd, b))
            ref = {"solve": lambda: torch.linalg.solve(ta, tb), "inv": lambda: torch.linalg.inv(ta),
                   "cholesky": lambda: torch.linalg.cholesky(ts)}
        for name, fn in calls.items():
            line = [f"{name} {n}:"]
            for mb in SIZES_MB + (None,):
                wrt.BATCH_FLUSH_BYTES, wrt.BATCH_FLUSH_MAX_BYTES = default if mb is None else (mb << 20, mb << 20)
                heat(dev.runtime)
                t = best_of(fn, repeat=5)
                debug.reset_counters()
                fn()
                label = "doubling" if mb is None else f"{mb} MiB"
                line.append(f"{label} {t * 1e3:.2f} ms ({debug.counters()['submits']} submits)")
            wrt.BATCH_FLUSH_BYTES, wrt.BATCH_FLUSH_MAX_BYTES = default
            if name in ref:
                line.append(f"torch {best_of(ref[name], torch.cuda.synchronize, repeat=5) * 1e3:.2f} ms")
            print("  ".join(line), flush=True)


if __name__ == "__main__":
    main([int(v) for v in sys.argv[1:]] or [2048, 4096])
