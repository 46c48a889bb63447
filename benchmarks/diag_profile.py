"""Where the device time goes: a per-kernel profile (``wgarray.debug.profile``) of
named workloads, with the wall time of a normal (unprofiled) run beside it.

    python benchmarks/diag_profile.py eigh:64 eigh:256 svd:256 pca ridge lda sort cumsum
    python benchmarks/diag_profile.py kmeans scaler gnb   # the main job, StandardScaler, GaussianNB
    python benchmarks/diag_profile.py --host ridge lda     # and where the host time goes (cProfile)
    python benchmarks/diag_profile.py --host euclid:20000  # scikit-learn's euclidean_distances
    WARM=0 python benchmarks/diag_profile.py sort          # no warm-up beyond two runs

Each workload runs untimed first, at least twice and for WARM seconds (pipelines
compiled, pools warm, and a GPU's clocks up: a cold H200 runs its first few hundred
milliseconds slowly), then once normally (wall time, synchronized by a readback) and
once under the profiler. The
profiler gives every dispatch a pass of its own, so its sum can exceed the wall time.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
os.environ.setdefault("SCIPY_ARRAY_API", "1")
import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import heat  # noqa: E402

RNG = np.random.default_rng(0)
WARM = float(os.environ.get("WARM", "0.5"))


def _sym(n):
    a = RNG.standard_normal((n, n)).astype(np.float32)
    return xp.asarray((a + a.T) / 2)


def _low_rank(n, d, rank=16):
    basis = RNG.standard_normal((rank, d)).astype(np.float32)
    scale = np.geomspace(10, 1, rank).astype(np.float32)
    return (RNG.standard_normal((n, rank)).astype(np.float32) * scale) @ basis \
        + 0.1 * RNG.standard_normal((n, d)).astype(np.float32)


def workload(spec):
    """(label, function returning something to read back) for a spec like 'eigh:256'."""
    name, _, arg = spec.partition(":")
    n = int(arg) if arg else None
    if name == "eigh":
        x = _sym(n or 256)
        return spec, lambda: xp.linalg.eigh(x)[1][0, 0]
    if name == "eigvalsh":
        x = _sym(n or 256)
        return spec, lambda: xp.linalg.eigvalsh(x)[0]
    if name in ("svd", "svdvals"):
        x = xp.asarray(RNG.standard_normal((n or 256, n or 256)).astype(np.float32))
        if name == "svdvals":
            return spec, lambda: xp.linalg.svdvals(x)[0]
        return spec, lambda: xp.linalg.svd(x, full_matrices=False)[0][0, 0]
    if name == "tallsvd":
        x = xp.asarray(_low_rank(100_000, n or 256))
        return spec, lambda: xp.linalg.svd(x, full_matrices=False)[2][0, 0]
    if name in ("pca", "pcar", "pcac", "ridge", "lda"):
        import sklearn
        from sklearn.decomposition import PCA
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        from sklearn.linear_model import Ridge
        sklearn.set_config(array_api_dispatch=True)
        if name == "pca":
            X = xp.asarray(_low_rank(100_000, n or 256))
            return spec, lambda: PCA(n_components=16, svd_solver="full").fit(X).components_[0, 0]
        if name == "pcar":
            X = xp.asarray(_low_rank(200_000, n or 512))
            return spec, lambda: PCA(n_components=16, svd_solver="randomized", random_state=0,
                                     power_iteration_normalizer="QR").fit(X).components_[0, 0]
        if name == "pcac":
            X = xp.asarray(_low_rank(1_000_000, n or 64))
            return spec, lambda: PCA(n_components=16, svd_solver="covariance_eigh").fit(X).components_[0, 0]
        if name == "ridge":
            Xh = _low_rank(50_000, n or 64)
            y = xp.asarray((Xh @ RNG.standard_normal(Xh.shape[1]).astype(np.float32)).astype(np.float32))
            X = xp.asarray(Xh)
            return spec, lambda: Ridge(alpha=1.0, solver="svd").fit(X, y).coef_[0]
        d = n or 32
        means = 3 * RNG.standard_normal((10, d)).astype(np.float32)
        yh = RNG.integers(0, 10, 100_000)
        X = xp.asarray(means[yh] + RNG.standard_normal((100_000, d)).astype(np.float32))
        y = xp.asarray(yh.astype(np.int64))
        return spec, lambda: LinearDiscriminantAnalysis().fit(X, y).coef_[0, 0]
    if name == "kmeans":
        from wgarray._kmeans import kmeans, kmeans_pp, synthetic
        Xh = synthetic(n or 1_000_000, 32, 16)
        X, C0 = xp.asarray(Xh), xp.asarray(kmeans_pp(Xh, 16))
        return spec, lambda: kmeans(xp, X, C0, 10)[2]
    if name in ("scaler", "gnb"):
        import sklearn
        from sklearn.naive_bayes import GaussianNB
        from sklearn.preprocessing import StandardScaler
        sklearn.set_config(array_api_dispatch=True)
        if name == "scaler":
            X = xp.asarray(RNG.standard_normal((n or 2_000_000, 64)).astype(np.float32))
            return spec, lambda: StandardScaler().fit(X).scale_[0]
        rows = n or 1_000_000
        yh = RNG.integers(0, 5, rows)
        X = xp.asarray((RNG.standard_normal((rows, 32)) + yh[:, None]).astype(np.float32))
        y = xp.asarray(yh.astype(np.int64))
        return spec, lambda: GaussianNB().fit(X, y).var_[0, 0]
    if name == "euclid":
        import sklearn
        from sklearn.metrics.pairwise import euclidean_distances
        sklearn.set_config(array_api_dispatch=True)
        # its fill_diagonal: n element writes, gathered into a few scatter dispatches
        X = xp.asarray(RNG.standard_normal((n or 20_000, 64)).astype(np.float32))
        return spec, lambda: euclidean_distances(X)[0, 1]
    if name == "sort":
        x = xp.asarray(RNG.standard_normal(n or 1 << 24).astype(np.float32))
        return spec, lambda: xp.sort(x)[0]
    if name == "cumsum":
        x = xp.asarray(RNG.standard_normal(n or 1 << 24).astype(np.float32))
        return spec, lambda: xp.cumulative_sum(x)[-1]
    raise SystemExit(f"diag_profile: unknown workload {spec!r}")


def main(specs, host=False):
    dev = xp.asarray(0.0).device
    print(f"device: {dev.name}")
    for spec in specs:
        label, fn = workload(spec)
        end = time.perf_counter() + WARM
        for i in range(10**6):
            float(fn())
            if i >= 1 and time.perf_counter() > end:
                break
        heat(dev.runtime)
        debug.reset_counters()
        t = time.perf_counter()
        float(fn())
        wall = time.perf_counter() - t
        counts = debug.counters()
        heat(dev.runtime)
        with debug.profile(dev) as p:
            float(fn())
        total = sum(sec for _, sec in p.kernels.values())
        print(f"\n## {label}: wall {wall * 1e3:.2f} ms, profiled device sum {total * 1e3:.2f} ms; "
              f"dispatches {counts['dispatches']}, submits {counts['submits']}, readbacks {counts['readbacks']}")
        print(p.table(20))
        if host:
            import cProfile
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            float(fn())
            prof.disable()
            print(f"\n### {label}: host functions by own time (cProfile)")
            stats = pstats.Stats(prof, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(18)
            stats.sort_stats("cumulative").print_stats("wgpu_native/_api", 12)  # which wgpu calls wait


if __name__ == "__main__":
    args = sys.argv[1:]
    host = "--host" in args
    main([a for a in args if a != "--host"] or ["eigh:64", "eigh:256", "svd:256"], host=host)
