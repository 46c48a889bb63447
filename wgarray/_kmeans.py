"""The main workload: k-means (Lloyd's algorithm) written only against the standard.

``kmeans(xp, X, centers, iters)`` runs unchanged on wgarray and on NumPy: distances
through one matmul, labels by argmin, new centers as a one-hot matmul divided by the
counts. ``run`` times both on the same synthetic data and initial centers (k-means++
seeding on a sample) and checks that they agree.
"""
from __future__ import annotations

import time

import numpy as np


def kmeans(xp, X, centers, iters: int):
    """Lloyd iterations from ``centers``; returns (centers, labels, inertia)."""
    k = centers.shape[0]
    x2 = xp.sum(X * X, axis=1, keepdims=True)
    cluster_ids = xp.arange(k)[None, :]
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


def run(n: int = 1_000_000, d: int = 32, k: int = 16, iters: int = 10) -> int:
    import wgarray as wx
    from wgarray._device import default_device

    device = default_device()
    print(f"k-means: {n:,} x {d} float32, k={k}, {iters} iterations")
    X = synthetic(n, d, k)
    C0 = kmeans_pp(X, k)

    t = time.perf_counter()
    c_np, l_np, inertia_np = kmeans(np, X, C0, iters)
    t_np = time.perf_counter() - t

    Xw = wx.asarray(X)
    C0w = wx.asarray(C0)
    # One untimed iteration compiles the kernels (cached by structure; the tile and
    # split choices of matmul depend on the sizes, so warm up on the real data).
    wx.evaluate(*kmeans(wx, Xw, C0w, 1))
    device.runtime.sync()
    t = time.perf_counter()
    c_w, l_w, inertia_w = kmeans(wx, Xw, C0w, iters)
    wx.evaluate(c_w, l_w, inertia_w)
    c_w, l_w, inertia_w = np.asarray(c_w), np.asarray(l_w), float(inertia_w)
    t_w = time.perf_counter() - t

    agree = float((l_w == l_np).mean())
    rel = abs(inertia_w - float(inertia_np)) / float(inertia_np)
    shift = float(np.abs(c_w - c_np).max())
    print(f"  numpy   ({'CPU':>24}): {t_np:8.3f} s   inertia {float(inertia_np):.6e}")
    print(f"  wgarray ({device.name[:24]:>24}): {t_w:8.3f} s   inertia {inertia_w:.6e}")
    print(f"  speed-up {t_np / t_w:.2f}x; labels agree on {agree:.4%}; inertia rel. diff {rel:.2e}; "
          f"max center diff {shift:.2e}")
    ok = agree > 0.999 and rel < 1e-3
    print("  agreement:", "OK" if ok else "MISMATCH")
    return 0 if ok else 1
