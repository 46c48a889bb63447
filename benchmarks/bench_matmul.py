"""Square float32 (or float64) matmul: wgarray vs torch (cuBLAS) and cupy when importable.

    python benchmarks/bench_matmul.py [N ...]          # default 4096
    python benchmarks/bench_matmul.py float64 [N ...]  # the same in float64
    python benchmarks/bench_matmul.py kmeans           # the k-means shapes (tall-skinny, split-K)
    python benchmarks/bench_matmul.py euclid           # scikit-learn euclidean_distances' float64
                                                       # blocks: 2000x64 @ 64x20000

Each library gets warm-up runs, then timed runs bracketed by a device sync
(wgarray: ``device.runtime.sync()`` after ``evaluate``); prints TFLOP/s = 2 N^3 / t.
Also times the transposed-operand layouts of wgarray (no copies).
"""
from __future__ import annotations

import sys
import time

import numpy as np


def _time(fn, sync, reps):
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def bench_wgarray(n, a, b, reps):
    import wgarray as xp

    dev = xp.__array_namespace_info__().default_device()
    rt = dev.runtime
    A, B = xp.asarray(a), xp.asarray(b)
    At, Bt = xp.asarray(np.ascontiguousarray(a.T)).T, xp.asarray(np.ascontiguousarray(b.T)).T
    out = {}
    cases = {"wgarray": (A, B), "wgarray A^T-layout": (At, B), "wgarray B^T-layout": (A, Bt)}
    if a.shape != b.shape[::-1]:
        cases = {"wgarray": (A, B)}
    for name, (x, y) in cases.items():
        def run():
            c = x @ y
            xp.evaluate(c)
        t = _time(run, rt.sync, reps)
        out[name] = t
    c = np.asarray(A @ B)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max() / np.abs(ref).max()
    print(f"  wgarray on {dev}: max rel err vs float64 {err:.2e}")
    return out


def bench_torch(n, a, b, reps):
    import torch

    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    A, B = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    return {"torch (cuBLAS, no TF32)": _time(lambda: A @ B, torch.cuda.synchronize, reps)}


def bench_cupy(n, a, b, reps):
    import cupy as cp

    A, B = cp.asarray(a), cp.asarray(b)
    return {"cupy": _time(lambda: A @ B, cp.cuda.Device().synchronize, reps)}


def main(shapes, dtype=np.float32):
    for m, k, n in shapes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        flop = 2 * m * k * n
        reps = max(2, min(50, int(2e12 // flop)))
        print(f"{np.dtype(dtype).name} matmul {m}x{k} @ {k}x{n}  ({reps} reps per timing, best of 3)")
        results = {}
        for fn in (bench_wgarray, bench_torch, bench_cupy):
            try:
                results.update(fn(n, a, b, reps))
            except ImportError as exc:
                print(f"  skipped {fn.__name__[6:]}: {exc}")
        for name, t in results.items():
            print(f"  {name:28s} {t * 1e3:9.3f} ms  {flop / t / 1e12:7.2f} TFLOP/s")


def main_kmeans(n=1_000_000, d=32, k=16, reps=20):
    """X @ C.T ((n,d)@(d,k), narrow output) and onehot.T @ X ((k,n)@(n,d), split-K)."""
    import wgarray as xp

    rt = xp.__array_namespace_info__().default_device().runtime
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d), dtype=np.float32)
    C = rng.standard_normal((k, d), dtype=np.float32)
    oh = (rng.integers(0, k, n)[:, None] == np.arange(k)[None, :]).astype(np.float32)
    Xw, Cw, Ow = xp.asarray(X), xp.asarray(C), xp.asarray(oh)
    cases = {f"X @ C.T      ({n},{d})@({d},{k})": (lambda: Xw @ Cw.T, X @ C.T, 4 * (n * d + n * k)),
             f"onehot.T @ X ({k},{n})@({n},{d})": (lambda: Ow.T @ Xw, oh.T.astype(np.float64) @ X, 4 * n * (k + d))}
    for name, (fn, want, nbytes) in cases.items():
        def run():
            xp.evaluate(fn())
        t = _time(run, rt.sync, reps)
        err = np.abs(np.asarray(fn()) - want).max() / np.abs(want).max()
        print(f"  {name}: {t * 1e3:8.3f} ms  {nbytes / t / 1e9:7.1f} GB/s  rel err {err:.1e}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["kmeans"]:
        main_kmeans()
    elif args == ["euclid"]:
        main([(2000, 64, 20000)], np.float64)
    else:
        dtype = np.float64 if "float64" in args else np.float32
        sizes = [int(s) for s in args if s not in ("float32", "float64")] or [4096]
        main([(n, n, n) for n in sizes], dtype)
