"""Where the device time goes: a per-kernel profile (``wgarray.debug.profile``) of
named workloads, with the wall time of a normal (unprofiled) run beside it.

    python benchmarks/diag_profile.py eigh:64 eigh:256 svd:256 pca ridge lda sort cumsum
    python benchmarks/diag_profile.py kmeans scaler gnb   # the main job, StandardScaler, GaussianNB
    python benchmarks/diag_profile.py lsez                # SciPy logsumexp(axis=1) + zscore(axis=0)
    python benchmarks/diag_profile.py --host ridge lda     # and where the host time goes (cProfile)
    python benchmarks/diag_profile.py --host euclid:20000  # scikit-learn's euclidean_distances
    WARM=0 python benchmarks/diag_profile.py sort          # no warm-up beyond two runs
    python benchmarks/diag_profile.py --torch sort argsort unique cumsum sum mean var fftn rfft matmul
    python benchmarks/diag_profile.py --torch cholesky:1024 solve:4096 qr:1024   # square factorizations
                                                           # single kernels, torch's time beside

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
            X = xp.asarray(_low_rank(int(os.environ.get("PCAC_ROWS", 1_000_000)), n or 64))
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
    if name == "lsez":  # SciPy logsumexp(axis=1) + zscore(axis=0)
        from scipy.special import logsumexp
        from scipy.stats import zscore
        X = xp.asarray(RNG.standard_normal((n or 4_000_000, 16)).astype(np.float32))
        return spec, lambda: logsumexp(X, axis=1)[0] + zscore(X, axis=0)[0, 0]
    if name == "euclid":
        import sklearn
        from sklearn.metrics.pairwise import euclidean_distances
        sklearn.set_config(array_api_dispatch=True)
        # its fill_diagonal: n element writes, gathered into a few scatter dispatches
        X = xp.asarray(RNG.standard_normal((n or 20_000, 64)).astype(np.float32))
        return spec, lambda: euclidean_distances(X)[0, 1]
    if name in KERNELS:
        make, op, _ = KERNELS[name]
        args = [xp.asarray(a) for a in make(n)]
        if name in MEMOIZED:  # a fused "* 1": a new graph each call, not the memo's answer
            return spec, lambda: _first(op(xp, *(a * 1 for a in args)))
        return spec, lambda: _first(op(xp, *args))
    raise SystemExit(f"diag_profile: unknown workload {spec!r}")


def _first(out):
    """One element of a result (a read of it synchronizes the whole call)."""
    out = out[0] if isinstance(out, tuple) else out
    return out[(0,) * out.ndim]


def _spd(n):
    a = RNG.standard_normal((n, n)).astype(np.float32)
    return (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _f32(n, default):
    return [RNG.standard_normal(n or default).astype(np.float32)]


# Single kernels: (inputs for a size n, the call on a namespace, its default n's label).
# The same call runs on torch with --torch.
KERNELS = {
    "sort": (lambda n: _f32(n, 1 << 24), lambda m, x: m.sort(x), "2^24 float32"),
    "argsort": (lambda n: _f32(n, 1 << 24), lambda m, x: m.argsort(x), "2^24 float32"),
    "unique": (lambda n: [RNG.integers(0, 1 << 20, n or 1 << 22).astype(np.int32)],
               lambda m, x: m.unique_values(x) if hasattr(m, "unique_values") else m.unique(x),
               "2^22 int32 in [0, 2^20)"),
    "cumsum": (lambda n: _f32(n, 1 << 24), lambda m, x: m.cumulative_sum(x) if hasattr(m, "cumulative_sum")
               else m.cumsum(x, 0), "2^24 float32"),
    "sum": (lambda n: _f32(n, 1 << 27), lambda m, x: m.sum(x), "2^27 float32"),
    "mean": (lambda n: _f32(n, 1 << 27), lambda m, x: m.mean(x), "2^27 float32"),
    "var": (lambda n: _f32(n, 1 << 27), lambda m, x: m.var(x), "2^27 float32"),
    "fftn": (lambda n: [(RNG.standard_normal((n or 4096,) * 2) + 1j * RNG.standard_normal((n or 4096,) * 2))
                        .astype(np.complex64)], lambda m, x: m.fft.fftn(x), "4096^2 complex64"),
    "rfft": (lambda n: _f32(n, 1 << 24), lambda m, x: m.fft.rfft(x), "2^24 float32"),
    "cholesky": (lambda n: [_spd(n or 1024)], lambda m, a: m.linalg.cholesky(a), "1024 float32"),
    "solve": (lambda n: [_spd(n or 1024), RNG.standard_normal((n or 1024, 1)).astype(np.float32)],
              lambda m, a, b: m.linalg.solve(a, b), "1024 float32, one right-hand side"),
    "qr": (lambda n: [RNG.standard_normal((n or 1024,) * 2).astype(np.float32)], lambda m, a: m.linalg.qr(a),
           "1024 float32"),
    "matmul": (lambda n: [RNG.random((n or 4096,) * 2, dtype=np.float32),
                          RNG.random((n or 4096,) * 2, dtype=np.float32)],
               lambda m, a, b: m.matmul(a, b), "4096^3 float32"),
}


# Workloads whose result wgarray keeps for an unchanged uploaded input (``_known.py``,
# unique's memo): their input is given as a lazy ``x * 1``, fused into the first kernel.
MEMOIZED = {"unique", "sum", "mean", "var"}


def torch_ms(spec):
    """torch (CUDA)'s median ms for a KERNELS workload, synchronized, warm; None without it."""
    import statistics
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    name, _, arg = spec.partition(":")
    make, op, _ = KERNELS[name]
    RNG.bit_generator.state = np.random.default_rng(0).bit_generator.state
    args = [torch.from_numpy(a).cuda() for a in make(int(arg) if arg else None)]
    for _ in range(3):
        op(torch, *args)
    torch.cuda.synchronize()
    times = []
    for _ in range(9):
        t = time.perf_counter()
        op(torch, *args)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main(specs, host=False, torch=False):
    dev = xp.asarray(0.0).device
    print(f"device: {dev.name}")
    for spec in specs:
        label, fn = workload(spec)
        end = time.perf_counter() + WARM
        for i in range(10**6):
            complex(fn())
            if i >= 1 and time.perf_counter() > end:
                break
        heat(dev.runtime)
        debug.reset_counters()
        walls = []
        for _ in range(5):
            t = time.perf_counter()
            complex(fn())
            walls.append(time.perf_counter() - t)
        wall = sorted(walls)[2]
        counts = {k: v // 5 for k, v in debug.counters().items()}
        heat(dev.runtime)
        with debug.profile(dev) as p:
            complex(fn())
        total = sum(sec for _, sec in p.kernels.values())
        beside = ""
        if torch and spec.partition(":")[0] in KERNELS:
            ms = torch_ms(spec)
            beside = "" if ms is None else f"; torch (CUDA) {ms:.3f} ms"
        print(f"\n## {label}: wall {wall * 1e3:.2f} ms, profiled device sum {total * 1e3:.2f} ms; "
              f"dispatches {counts['dispatches']}, submits {counts['submits']}, readbacks {counts['readbacks']}"
              f"{beside}")
        print(p.table(20))
        if host:
            import cProfile
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            complex(fn())
            prof.disable()
            print(f"\n### {label}: host functions by own time (cProfile)")
            stats = pstats.Stats(prof, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(18)
            stats.sort_stats("cumulative").print_stats("wgpu_native/_api", 12)  # which wgpu calls wait


if __name__ == "__main__":
    args = sys.argv[1:]
    flags = {"--host", "--torch"}
    main([a for a in args if a not in flags] or ["eigh:64", "eigh:256", "svd:256"],
         host="--host" in args, torch="--torch" in args)
