"""Jacobi eigensolver probe: wall and device time, dispatches and submits of eigh / svd
per size, through the whole-matrix kernels (one workgroup per matrix: jeig for eigh,
ojac for svd) and through the blocked solver, on whatever device wgarray picks; then
the device time of the single Jacobi dispatches alone. It says where the whole-matrix
thresholds (``_kernels.linalg_eigen.SMALL``, ``SMALL_SVD``) belong on that device: the size
past which the blocked solver's device time is lower by more than its host cost.

    python benchmarks/diag_jeig.py [N ...]      # default 64 128 192 256 384 512
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree, not the install
import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray._kernels import linalg_eigen as le  # noqa: E402
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of, device_seconds  # noqa: E402


def _call(func, x):
    if func == "eigh":
        w, v = xp.linalg.eigh(x)
        return float(xp.sum(w)) + float(xp.sum(v[0]))
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    return float(xp.sum(s)) + float(xp.sum(u[0])) + float(xp.sum(vh[0]))


def _input(func, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    return (a + a.T) / 2 if func == "eigh" else a


def _device_ms(fn, rt) -> str:
    try:
        return f"{device_seconds(fn, rt, warmup=0) * 1e3:.2f}"
    except Exception:
        return "-"


def _whole(func, n) -> str:
    """Device ms of the whole-matrix Jacobi dispatch alone (load + every sweep)."""
    a = _input(func, n)
    x = xp.asarray(a)
    src = le._contig(x._node)
    dev = src.device
    rt = dev.runtime
    t = le._tag(src.dtype, dev)
    gf = rt.alloc(4)
    if func == "eigh":
        def run():
            le._jeig(dev, t, src, 1, n, 1, (n * n, 0, n, 1), True, None, 1, gf, 0)
    else:
        def run():
            le._ojac(dev, t, src, 1, n, n)
    run()
    return _device_ms(run, rt)


def main(sizes):
    small, small_svd = le.SMALL, le.SMALL_SVD
    print("| function | n | path | wall ms | device ms | dispatches | submits |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        for func in ("eigh", "svd"):
            x = xp.asarray(_input(func, n))
            rt = x.device.runtime
            for path in ("whole", "blocked"):
                big = path == "whole"
                le.SMALL = max(small, n) if big else 0
                le.SMALL_SVD = max(small_svd, n) if big else 0
                _call(func, x)
                debug.reset_counters()
                _call(func, x)
                c = debug.counters()
                s = best_of(lambda: _call(func, x), repeat=3, warmup=0)
                d = _device_ms(lambda: _call(func, x), rt)
                print(f"| {func} | {n} | {path} | {s * 1e3:.1f} | {d} | {c.get('dispatches', 0)} | "
                      f"{c.get('submits', 0)} |", flush=True)
            le.SMALL, le.SMALL_SVD = small, small_svd
    print()
    for n in sizes:
        for func in ("eigh", "svd"):
            print(f"{'jeig' if func == 'eigh' else 'ojac'} {n}x{n} alone: {_whole(func, n)} device ms", flush=True)


if __name__ == "__main__":
    main([int(v) for v in sys.argv[1:]] or [64, 128, 192, 256, 384, 512])
