"""How many sweeps the whole-matrix one-sided Jacobi (``ojac``) runs inside svd, and
how svd's result compares with NumPy's LAPACK, on the inputs that decide whether it
stops early: a random square matrix, the R of PCA's benchmark data (rank 16 plus
noise: 240 singular values within ~5% of each other at 100000 x 256), the PCA data
itself (QR first), and clustered / ill-conditioned / rank-deficient squares.

    python benchmarks/diag_ojac.py              # order 256, PCA data 100000 x 256
    python benchmarks/diag_ojac.py 128 20000    # order 128, PCA data 20000 x 128

Each line: the sweeps ojac ran (the solve ends after a sweep that finds nothing to do;
OUTER_SWEEPS is the cap), then backward error, orthogonality of U and V and the largest
singular value error, each with NumPy's beside it (all against a float64 reference)."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._kernels import linalg_eigen as le  # noqa: E402

RNG = np.random.default_rng(0)
_FLAGS = []
_ojac = le._ojac


def _recording_ojac(device, t, A0, nz, m, n):
    res = _ojac(device, t, A0, nz, m, n)
    _FLAGS.append((device, res[2], nz))
    return res


def _sweeps() -> list[int]:
    out = [int(d.runtime.read(fl, 0, 12 * nz).view(np.uint32)[2]) for d, fl, nz in _FLAGS]
    _FLAGS.clear()
    return out


def _low_rank(n, d, rank=16):
    """benchmarks/bench_sklearn.py's data, centered as PCA centers it."""
    basis = RNG.standard_normal((rank, d)).astype(np.float32)
    scale = np.geomspace(10, 1, rank).astype(np.float32)
    x = (RNG.standard_normal((n, rank)).astype(np.float32) * scale) @ basis \
        + 0.1 * RNG.standard_normal((n, d)).astype(np.float32)
    return x - x.mean(0)


def _spectrum(n, s):
    qu = np.linalg.qr(RNG.standard_normal((n, n)))[0]
    qv = np.linalg.qr(RNG.standard_normal((n, n)))[0]
    return ((qu * s) @ qv.T).astype(np.float32)


def _errors(a, u, s, vh):
    aa = a.astype(np.float64)
    s0 = np.linalg.svd(aa, compute_uv=False)
    u, vh = u.astype(np.float64), vh.astype(np.float64)
    return (np.linalg.norm(aa - (u * s) @ vh) / np.linalg.norm(aa), np.abs(u.T @ u - np.eye(u.shape[1])).max(),
            np.abs(vh @ vh.T - np.eye(vh.shape[0])).max(), np.abs(np.sort(s)[::-1] - s0).max() / s0.max())


def main(n=256, rows=100_000):
    le._ojac = _recording_ojac
    pca = _low_rank(rows, n)
    half = np.ones(n)
    half[n // 2:] = 0
    cases = {
        "random": RNG.standard_normal((n, n)).astype(np.float32),
        "pca R": np.linalg.qr(pca.astype(np.float64))[1].astype(np.float32),
        f"pca {rows}x{n}": pca,
        "repeated": _spectrum(n, np.repeat(1 + 0.003 * np.arange(-(-n // 4)), 4)[:n]),
        "ill 1e6": _spectrum(n, np.logspace(0, -6, n)),
        "rank n/2": _spectrum(n, half),
    }
    print(f"ojac cap: {le.OUTER_SWEEPS} sweeps; errors ours / NumPy's")
    for name, a in cases.items():
        u, s, vh = (np.asarray(r) for r in xp.linalg.svd(xp.asarray(a), full_matrices=False))
        sw = _sweeps()
        ours = _errors(a, u, s, vh)
        ref = _errors(a, *np.linalg.svd(a, full_matrices=False))
        cols = " ".join(f"{k} {x:.1e}/{y:.1e}" for k, x, y in zip(("backward", "U", "V", "values"), ours, ref))
        print(f"{name:>16}: sweeps {sw}  {cols}", flush=True)


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
