"""solve / inv / det of square float32 matrices with the LU panels' tournament
pivoting from different panel heights on (``linalg_blocked.TLU_MIN_ROWS``; 0: the
one-workgroup panel kernel everywhere), the candidate search by subgroup operations
(``TLU_SUBGROUPS``, where the adapter has them) beside the tree search, wall time beside
torch (CUDA), and the device time of each kernel family in one solve.

    python benchmarks/diag_tlu.py [n ...]
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray._kernels import linalg_blocked as blk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of, cuda_torch, heat  # noqa: E402

THRESHOLDS = (0, 256, 512, 1024, 2048)


def main(sizes):
    rng = np.random.default_rng(0)
    torch = cuda_torch()
    dev = xp.asarray(0.0).device
    print(f"device: {dev.name}")
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, 1)).astype(np.float32)
        A, B = xp.asarray(a), xp.asarray(b)
        line = []
        order, subgroups = blk.TLU_MIN_ORDER, blk.TLU_SUBGROUPS
        blk.TLU_MIN_ORDER, blk.TLU_SUBGROUPS = 0, False   # the thresholds with the tree search
        for thr in THRESHOLDS:
            blk.TLU_MIN_ROWS = thr
            heat(dev.runtime)
            s = best_of(lambda: float(xp.linalg.solve(A, B)[0, 0]), repeat=5)
            x = np.asarray(xp.linalg.solve(A, B)).astype(np.float64)
            res = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
            i = best_of(lambda: float(xp.linalg.inv(A)[0, 0]), repeat=3)
            line.append(f"tlu>={thr}: solve {s * 1e3:.2f} ms (resid {res:.1e}) inv {i * 1e3:.2f} ms")
        if dev.runtime.subgroup_size:
            blk.TLU_MIN_ROWS, blk.TLU_SUBGROUPS = 512, True
            heat(dev.runtime)
            s = best_of(lambda: float(xp.linalg.solve(A, B)[0, 0]), repeat=5)
            x = np.asarray(xp.linalg.solve(A, B)).astype(np.float64)
            res = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
            i = best_of(lambda: float(xp.linalg.inv(A)[0, 0]), repeat=3)
            with debug.profile(dev) as p:
                float(xp.linalg.solve(A, B)[0, 0])
            line.append(f"tlu>=512, subgroup search: solve {s * 1e3:.2f} ms (resid {res:.1e}) "
                        f"inv {i * 1e3:.2f} ms\n" + p.table(6))
        blk.TLU_SUBGROUPS = subgroups
        ref = ""
        if torch is not None:
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            ts = best_of(lambda: torch.linalg.solve(ta, tb), torch.cuda.synchronize, repeat=5)
            ti = best_of(lambda: torch.linalg.inv(ta), torch.cuda.synchronize, repeat=3)
            ref = f"; torch solve {ts * 1e3:.2f} ms inv {ti * 1e3:.2f} ms"
        print(f"\n## n = {n}{ref}")
        for entry in line:
            print("  " + entry)
        blk.TLU_MIN_ROWS, blk.TLU_MIN_ORDER = 512, order
        heat(dev.runtime)
        with debug.profile(dev) as p:
            float(xp.linalg.solve(A, B)[0, 0])
        print(p.table(8))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1024, 2048, 4096])
