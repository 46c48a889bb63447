"""The main workload: k-means (Lloyd's algorithm) written only against the standard.

``kmeans(xp, X, centers, iters)`` runs unchanged on wgarray and on NumPy: distances
through one matmul, labels by argmin, new centers as a one-hot matmul divided by the
counts. ``run`` times both on the same synthetic data and initial centers (k-means++
seeding on a sample) and checks that they agree.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import wgarray as wx
from wgarray._runtime.device import default_device


def kmeans(xp, X, centers, iters: int):
    """Lloyd iterations from ``centers``; returns (centers, labels, inertia)."""
    k = centers.shape[0]
    x2 = xp.sum(X * X, axis=1, keepdims=True)
    # on X's device: a library with several devices (torch, CuPy) does not move data
    # itself (NumPy before 2.0 has no device at all)
    device = getattr(X, "device", None)
    cluster_ids = (xp.arange(k) if device is None else xp.arange(k, device=device))[None, :]
    for _ in range(iters):
        dist = x2 - 2 * (X @ centers.T) + xp.sum(centers * centers, axis=1)[None, :]
        labels = xp.argmin(dist, axis=1)
        onehot = xp.astype(labels[:, None] == cluster_ids, X.dtype)
        counts = xp.sum(onehot, axis=0)
        sums = onehot.T @ X
        new = sums / xp.maximum(counts, 1)[:, None]
        centers = xp.where(counts[:, None] > 0, new, centers)
    dist = x2 - 2 * (X @ centers.T) + xp.sum(centers * centers, axis=1)[None, :]
    labels = xp.argmin(dist, axis=1)
    inertia = xp.sum(xp.maximum(xp.min(dist, axis=1), 0))
    return centers, labels, inertia


def synthetic(n: int, d: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    true_centers = rng.normal(scale=8.0, size=(k, d)).astype(np.float32)
    labels = rng.integers(0, k, size=n)
    X = true_centers[labels] + rng.normal(size=(n, d)).astype(np.float32)
    return X.astype(np.float32)


def kmeans_pp(X: np.ndarray, k: int, seed: int = 0, sample: int = 20_000) -> np.ndarray:
    """k-means++ seeding on a random sample (the input data; a host step like any loader)."""
    rng = np.random.default_rng(seed)
    S = X[rng.choice(len(X), size=min(sample, len(X)), replace=False)]
    centers = [S[rng.integers(len(S))]]
    d2 = ((S - centers[0]) ** 2).sum(1)
    for _ in range(1, k):
        centers.append(S[rng.choice(len(S), p=d2 / d2.sum())])
        d2 = np.minimum(d2, ((S - centers[-1]) ** 2).sum(1))
    return np.stack(centers).astype(np.float32)


def _median_seconds(fn, repeat: int) -> tuple[float, float, float]:
    """Median, min and max wall seconds of ``repeat`` runs of ``fn`` (already warm)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def run(n: int | None = None, d: int = 32, k: int = 16, iters: int = 10, repeat: int = 5) -> int:
    device = default_device()
    software = device.adapter_type == "CPU"
    if n is None:
        # A CPU software driver runs the shaders on the host's cores: a tenth of the
        # data keeps the job to seconds there.
        n = 100_000 if software else 1_000_000
    repeat = max(1, repeat)
    print(f"k-means: {n:,} x {d} float32, k={k}, {iters} Lloyd iterations; "
          f"median of {repeat} timed run{'s' * (repeat > 1)} per side, each after one untimed warm-up run")
    print(f"  device: {device.name} ({device.backend}, {device.adapter_type})")
    X = synthetic(n, d, k)
    C0 = kmeans_pp(X, k)

    # NumPy warms up too (BLAS threads, first-touch page faults of the temporaries).
    result_np = kmeans(np, X, C0, iters)
    t_np = _median_seconds(lambda: kmeans(np, X, C0, iters), repeat)
    c_np, l_np, inertia_np = result_np

    Xw = wx.asarray(X)
    C0w = wx.asarray(C0)

    def run_wgarray():
        c, labels, inertia = kmeans(wx, Xw, C0w, iters)
        # the result on the host, as a user would take it: waits for the device
        return np.asarray(c), np.asarray(labels), float(inertia)

    # The warm-up compiles the kernels on the real data (cached by structure; matmul's
    # tile and split choices depend on the sizes).
    c_w, l_w, inertia_w = run_wgarray()
    t_w = _median_seconds(run_wgarray, repeat)

    agree = float((l_w == l_np).mean())
    rel = abs(inertia_w - float(inertia_np)) / float(inertia_np)
    shift = float(np.abs(c_w - c_np).max())

    def line(name, t):
        spread = f" (min {t[1]:.3f}, max {t[2]:.3f})" if repeat > 1 else ""
        return f"  {name:8} {t[0]:9.3f} s{spread}"

    print(line("numpy", t_np) + f"   on the host CPU; inertia {float(inertia_np):.6e}")
    print(line("wgarray", t_w) + f"   on the device;   inertia {inertia_w:.6e}")
    ratio = t_np[0] / t_w[0]
    if ratio >= 1:
        print(f"  wgarray is {ratio:.2f}x faster than NumPy here (ratio of the medians)")
    else:
        print(f"  wgarray is {1 / ratio:.2f}x slower than NumPy here (ratio of the medians)")
    print(f"  labels agree on {agree:.4%}; inertia rel. diff {rel:.2e}; max center diff {shift:.2e}")
    ok = agree > 0.999 and rel < 1e-3
    print("  agreement:", "OK" if ok else "MISMATCH")
    if software:
        print("  note: this device is a CPU software driver (no GPU was found or chosen). It runs\n"
              "  the shaders on this machine's CPU cores, so it is expected to be slower than NumPy:\n"
              "  its figures show that the job runs and agrees, not how fast wgarray is. On an\n"
              "  NVIDIA H200 the job at n=1,000,000 runs about 90x faster than NumPy on the host\n"
              "  (28 ms against 2.6 s; docs/performance.md).")
    return 0 if ok else 1
