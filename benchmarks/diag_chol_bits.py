"""Where the Cholesky panel kernel's unrolled and looped forms part (float32): the share
of entries whose bits differ, the first differing entry in column order and its size in
ulps, and each form's factorization error.

    python benchmarks/diag_chol_bits.py [N]

On an NVIDIA H100 (Vulkan) 42% of the entries of two order-300 factors differ, from
entry (3, 1) on (2-3 ulp): the first column's update, not the pivots' roots and
reciprocals (taking those correctly rounded, or laundering the root before it is
divided by, changed neither the share nor the first entry). Both forms meet the
factorization's error bound; lavapipe gives the same bits.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._kernels import linalg_blocked as blk  # noqa: E402


def spd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q * np.logspace(0, -3, n)) @ q.T
    return ((a + a.T) / 2).astype(np.float32)


def factor(x, unrolled: bool) -> np.ndarray:
    blk.CHOL_UNROLLED = unrolled
    x.device.runtime.programs.clear()
    return np.asarray(xp.linalg.cholesky(x))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    a = np.stack([spd(n, s) for s in (2, 3)])
    x = xp.asarray(a)
    print("device:", x.device.name)
    u = factor(x, True)
    lo = factor(x, False)
    diff = u.view(np.uint32) != lo.view(np.uint32)
    line = f"{diff.mean():.1%} of entries differ"
    if diff.any():
        # the first in column order: the factorization's own order
        z, i, j = min(zip(*np.nonzero(diff)), key=lambda t: (t[0], t[2], t[1]))
        ulps = abs(int(u[z, i, j].view(np.int32)) - int(lo[z, i, j].view(np.int32)))
        line += f"; the first at matrix {z} ({i}, {j}): {u[z, i, j]!r} vs {lo[z, i, j]!r} ({ulps} ulp)"
    print(line)
    for name, f in (("unrolled", u), ("looped", lo)):
        err = max(np.linalg.norm(f[k].astype(np.float64) @ f[k].T - a[k]) / np.linalg.norm(a[k]) for k in range(2))
        print(f"   {name}: |L L^T - A| / |A| = {err:.3e}")


if __name__ == "__main__":
    main()
