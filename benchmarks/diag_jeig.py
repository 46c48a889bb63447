"""Jacobi eigensolver probe: wall time and dispatch counts of eigh / svd per size, and
the time of single jeig dispatches (a whole small matrix; one batch of 32 x 32 pair
subproblems), on whatever device wgarray picks.

    python benchmarks/diag_jeig.py [N ...]      # default 64 130 256
"""
from __future__ import annotations

import sys

import os

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree, not the install
import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray import _linalg_eigen as le  # noqa: E402
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of  # noqa: E402



def _call(func, x):
    if func == "eigh":
        w, v = xp.linalg.eigh(x)
        return float(xp.sum(w)) + float(xp.sum(v[0]))
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    return float(xp.sum(s)) + float(xp.sum(u[0])) + float(xp.sum(vh[0]))


def _jeig_time(n, nblocks):
    """Seconds of one jeig sweep dispatch chain (load + sweeps) on nblocks n x n blocks."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((nblocks, n, n)).astype(np.float32)
    a = (a + a.transpose(0, 2, 1)) / 2
    x = xp.asarray(a)
    src = le._contig(x._node)
    dev = src.device
    rt = dev.runtime
    gf = rt.alloc(4)
    t = le._tag(src.dtype, dev)

    def run():
        W, U = le._jeig(dev, t, src, nblocks, n, 1, (n * n, 0, n, 1), True, None, 1, gf, 0)
        rt.read(W, 0, 4)
    debug.reset_counters()
    run()
    nd = debug.counters().get("dispatches", 0)
    return best_of(run, repeat=3, warmup=1), nd


def main(sizes):
    for n in sizes:
        for func in ("eigh", "svd"):
            rng = np.random.default_rng(n)
            a = rng.standard_normal((n, n)).astype(np.float32)
            if func == "eigh":
                a = (a + a.T) / 2
            x = xp.asarray(a)
            _call(func, x)
            debug.reset_counters()
            _call(func, x)
            c = debug.counters()
            s = best_of(lambda: _call(func, x), repeat=3, warmup=1)
            print(f"{func:5s} n={n:4d}  {s * 1e3:9.1f} ms  dispatches={c.get('dispatches', 0)}  "
                  f"submits={c.get('submits', 0)}", flush=True)
    for n, nb in ((64, 1), (32, 1), (32, 8)):
        s, nd = _jeig_time(n, nb)
        print(f"jeig {n}x{n} x{nb}: {s * 1e3:8.2f} ms for {le.INNER_SWEEPS} sweeps max ({nd} dispatches)",
              flush=True)


if __name__ == "__main__":
    main([int(v) for v in sys.argv[1:]] or [64, 130, 256])
