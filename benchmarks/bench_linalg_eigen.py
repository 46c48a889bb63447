"""eigh / eigvalsh / svd / svdvals, float32, n x n: wgarray vs NumPy (host LAPACK) vs
PyTorch on CUDA (cuSOLVER) where present.

    python -m pytest benchmarks/bench_linalg_eigen.py --benchmark-only -q
    python benchmarks/bench_linalg_eigen.py [N ...]   # plain table + dispatch/submit counts
    python benchmarks/bench_linalg_eigen.py --tall    # svd of the tall shapes scikit-learn meets
    python benchmarks/bench_linalg_eigen.py --funcs eigh,eigvalsh 256 1024   # some functions only
    python benchmarks/bench_linalg_eigen.py --jacobi --funcs eigh,svd 256    # Jacobi alone (no tridiagonal route)

Synchronized: wgarray through a scalar readback (float(xp.sum(w))), torch through
torch.cuda.synchronize(). The plain script also prints, per call, the dispatches,
submits and readbacks that wgarray's counters saw (``wgarray.debug.counters()``) and
the device time of its compute passes (timestamp queries; "-" where the device has
none), so that host and device cost can be told apart.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of, device_seconds  # noqa: E402

SIZES = [32, 64, 128, 256, 512, 1024]
TALL = [(100_000, 32), (50_000, 64), (100_000, 256)]  # LDA, Ridge, PCA
FUNCS = ["eigh", "eigvalsh", "svd", "svdvals"]


def _input(n: int, func: str, m: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((m or n, n)).astype(np.float32)
    return (a + a.T) / 2 if func.startswith("eig") else a


def _wg_call(xp, func, x):
    la = xp.linalg
    if func == "eigh":
        w, v = la.eigh(x)
        return float(xp.sum(w)) + float(xp.sum(v[0]))
    if func == "svd":
        u, s, vh = la.svd(x, full_matrices=False)
        return float(xp.sum(s)) + float(xp.sum(u[0])) + float(xp.sum(vh[0]))
    return float(xp.sum(getattr(la, func)(x)))


def _np_call(func, a):
    if func == "eigh":
        return np.linalg.eigh(a)
    if func == "eigvalsh":
        return np.linalg.eigvalsh(a)
    if func == "svd":
        return np.linalg.svd(a, full_matrices=False)
    return np.linalg.svd(a, compute_uv=False)


def _torch_call(torch, func, t):
    la = torch.linalg
    out = {"eigh": la.eigh, "eigvalsh": la.eigvalsh, "svd": lambda z: la.svd(z, full_matrices=False),
           "svdvals": la.svdvals}[func](t)
    torch.cuda.synchronize()
    return out


def _torch():
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", FUNCS)
def test_wgarray(benchmark, func, n):
    import wgarray as xp

    x = xp.asarray(_input(n, func))
    _wg_call(xp, func, x)  # compile
    benchmark(_wg_call, xp, func, x)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", FUNCS)
def test_numpy(benchmark, func, n):
    benchmark(_np_call, func, _input(n, func))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", FUNCS)
def test_torch_cuda(benchmark, func, n):
    torch = _torch()
    if torch is None:
        pytest.skip("no torch with CUDA")
    t = torch.from_numpy(_input(n, func)).cuda()
    _torch_call(torch, func, t)
    benchmark(_torch_call, torch, func, t)



def _vec_errors(xp, func, x, a):
    """(backward error, orthogonality) of wgarray's eigh against float64, '-' else."""
    if func != "eigh":
        return "-", "-"
    w, v = (np.asarray(r).astype(np.float64) for r in xp.linalg.eigh(x))
    h = a.astype(np.float64)
    back = np.linalg.norm(h - (v * w) @ v.T) / np.linalg.norm(h)
    orth = np.abs(v.T @ v - np.eye(h.shape[0])).max()
    return f"{back:.1e}", f"{orth:.1e}"


def main(sizes, tall=False, funcs=FUNCS, jacobi=False):
    import wgarray as xp
    from wgarray import debug
    if jacobi:
        from wgarray._kernels import linalg_eigen
        linalg_eigen.TRD_MIN = 1 << 30
        linalg_eigen.SVD_PRECONDITION = False

    torch = _torch()
    print("| function | shape | wgarray ms | device ms | dispatches | submits | readbacks | numpy ms | "
          "torch-cuda ms | max err vs float64 | backward | orthogonality |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    cases = [(func, n, n) for n in sizes for func in funcs]
    if tall:
        cases = [(func, m, n) for m, n in TALL for func in ("svd", "svdvals")]
    for func, m, n in cases:
        a = _input(n, func, m)
        x = xp.asarray(a)
        _wg_call(xp, func, x)
        before = dict(debug.counters())
        _wg_call(xp, func, x)
        after = debug.counters()
        d = {k: after.get(k, 0) - before.get(k, 0) for k in ("dispatches", "submits", "readbacks")}
        tw = best_of(lambda: _wg_call(xp, func, x), repeat=3, warmup=1)
        try:
            rt = x.device.runtime
            td = f"{device_seconds(lambda: _wg_call(xp, func, x), rt, warmup=0) * 1e3:.2f}"
        except Exception:
            td = "-"
        tn = best_of(lambda: _np_call(func, a), repeat=3, warmup=1)
        tt = float("nan")
        if torch is not None:
            ta = torch.from_numpy(a).cuda()
            tt = best_of(lambda: _torch_call(torch, func, ta), repeat=3, warmup=1)
        vals = np.asarray(xp.linalg.eigvalsh(x) if func.startswith("eig") else xp.linalg.svdvals(x))
        ref = (np.linalg.eigvalsh(a.astype(np.float64)) if func.startswith("eig")
               else np.linalg.svd(a.astype(np.float64), compute_uv=False))
        err = np.abs(np.sort(vals) - np.sort(ref)).max() / np.abs(ref).max()
        back, orth = _vec_errors(xp, func, x, a)
        print(f"| {func} | {m}x{n} | {tw * 1e3:.2f} | {td} | {d['dispatches']} | {d['submits']} | "
              f"{d['readbacks']} | {tn * 1e3:.2f} | {tt * 1e3:.2f} | {err:.1e} | {back} | {orth} |", flush=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    funcs = FUNCS
    if "--funcs" in argv:
        at = argv.index("--funcs")
        funcs = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2:]
    args = [v for v in argv if not v.startswith("--")]
    main([int(s) for s in args] or SIZES, tall="--tall" in argv, funcs=funcs, jacobi="--jacobi" in argv)
