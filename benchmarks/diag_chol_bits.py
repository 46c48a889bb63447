"""Where the Cholesky panel kernel's unrolled and looped forms part (float32): for each
setting of ``EXACT_F32_ROOTS`` (the factorizations' float32 roots and reciprocals:
the device's own, correctly rounded, or the device's own laundered), the share of entries whose bits differ, the
first differing entry in column order and its size in ulps.

    python benchmarks/diag_chol_bits.py [N]
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._kernels import linalg_blocked as blk  # noqa: E402
from wgarray._wgsl import linalg as wl  # noqa: E402


def spd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q * np.logspace(0, -3, n)) @ q.T
    return ((a + a.T) / 2).astype(np.float32)


def factor(x, unrolled: bool, exact: int) -> np.ndarray:
    dev = x.device
    blk.CHOL_UNROLLED = unrolled
    wl.EXACT_F32_ROOTS = exact
    dev.runtime.programs.clear()
    dev.runtime.kernels.clear()
    return np.asarray(xp.linalg.cholesky(x))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    a = np.stack([spd(n, s) for s in (2, 3)])
    x = xp.asarray(a)
    print("device:", xp.__array_namespace_info__().default_device())
    for exact in (0, 1, 2):
        u = factor(x, True, exact)
        lo = factor(x, False, exact)
        diff = u.view(np.uint32) != lo.view(np.uint32)
        line = f"EXACT_F32_ROOTS={exact}: {diff.mean():.1%} of entries differ"
        if diff.any():
            # the first in column order: the factorization's own order
            z, i, j = min(zip(*np.nonzero(diff)), key=lambda t: (t[0], t[2], t[1]))
            ulps = abs(int(u[z, i, j].view(np.int32)) - int(lo[z, i, j].view(np.int32)))
            cols = sorted(set(np.nonzero(diff[0])[1].tolist()))[:8]
            line += (f"; first at matrix {z} ({i}, {j}): {u[z, i, j]!r} vs {lo[z, i, j]!r}"
                     f" ({ulps} ulp); columns {cols}...")
        print(line)
        ref = np.linalg.cholesky(a.astype(np.float64))
        for name, f in (("unrolled", u), ("looped", lo)):
            err = max(np.linalg.norm(f[k].astype(np.float64) @ f[k].T - a[k]) / np.linalg.norm(a[k])
                      for k in range(2))
            print(f"   {name}: |L L^T - A| / |A| = {err:.3e}   |L - L64| max {np.abs(f - ref).max():.3e}")


if __name__ == "__main__":
    main()
