"""Accuracy of the tall-skinny qr and svd against NumPy's LAPACK, and their dispatch
counts: backward error ||A - QR|| / ||A||, orthogonality max |Q^H Q - I|, and for svd
||A - U S Vh|| / ||A||, max |U^H U - I| and max |S - S_np| / S_0, each with NumPy's own
on the same input (for float32, NumPy computes in float64 and rounds)::

    python benchmarks/diag_tallqr.py                 # the cases below, 20000 x 128 / 256
    python benchmarks/diag_tallqr.py --counts 100000x256
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree

import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402


def pca_like(m, n, seed=0):
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((16, n)).astype(np.float32)
    scale = np.geomspace(10, 1, 16).astype(np.float32)
    return (rng.standard_normal((m, 16)).astype(np.float32) * scale) @ basis \
        + 0.1 * rng.standard_normal((m, n)).astype(np.float32)


def with_cond(m, n, cond, seed=0, rank=None):
    rng = np.random.default_rng(seed)
    s = np.logspace(0, -np.log10(cond), n)
    if rank is not None:
        s[rank:] = 0
    u = np.linalg.qr(rng.standard_normal((m, n)))[0]
    v = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return (u * s) @ v.T


def errors(a, q, r):
    a, q, r = (np.asarray(x, dtype=np.float64) for x in (a, q, r))
    back = np.linalg.norm(a - q @ r) / np.linalg.norm(a)
    return back, float(np.abs(q.T @ q - np.eye(q.shape[1])).max())


def case(name, a, svd=True):
    t = time.perf_counter()
    debug.reset_counters()
    q, r = (np.asarray(x) for x in xp.linalg.qr(xp.asarray(a)))
    disp = debug.counters()["dispatches"]
    ours = errors(a, q, r)
    ref = errors(a, *np.linalg.qr(a))
    line = f"{name:28s} qr  back {ours[0]:.2e} (np {ref[0]:.2e})  orth {ours[1]:.2e} (np {ref[1]:.2e})  [{disp} disp]"
    print(line, flush=True)
    if svd:
        U, S, Vh = (np.asarray(x) for x in xp.linalg.svd(xp.asarray(a), full_matrices=False))
        un, sn, vhn = np.linalg.svd(a, full_matrices=False)
        truth = np.linalg.svd(np.asarray(a, np.float64), compute_uv=False)

        def sv(U, S, Vh):
            U64, S64, V64 = (np.asarray(x, np.float64) for x in (U, S, Vh))
            back = np.linalg.norm(a - (U64 * S64) @ V64) / np.linalg.norm(a)
            orth = float(np.abs(U64.T @ U64 - np.eye(U.shape[1])).max())
            return back, orth, float(np.abs(S64 - truth).max() / truth[0])
        o, n_ = sv(U, S, Vh), sv(un, sn, vhn)
        print(f"{'':28s} svd back {o[0]:.2e} (np {n_[0]:.2e})  orth {o[1]:.2e} (np {n_[1]:.2e})"
              f"  vals {o[2]:.2e} (np {n_[2]:.2e})  {time.perf_counter() - t:.0f} s", flush=True)


def main(argv):
    if argv[:1] == ["--counts"]:
        m, n = (int(v) for v in argv[1].split("x"))
        a = xp.asarray(pca_like(m, n))
        for label, f in (("qr", lambda: xp.linalg.qr(a)[1]), ("svd", lambda: xp.linalg.svd(a, full_matrices=False)[2])):
            debug.reset_counters()
            t = time.perf_counter()
            float(f()[0, 0])
            c = debug.counters()
            print(f"{label} {m}x{n}: {c.get('dispatches')} dispatches, {c.get('submits')} submits,"
                  f" {c.get('readbacks')} readbacks ({time.perf_counter() - t:.1f} s, compiles included)", flush=True)
        return
    has64 = xp.float64 in xp.__array_namespace_info__().dtypes().values()
    shapes = [(20000, 128), (20000, 256)] if not argv else [tuple(int(v) for v in s.split("x")) for s in argv]
    for m, n in shapes:
        case(f"pca f32 {m}x{n}", pca_like(m, n))
        for dtype in (np.float32, np.float64) if has64 else (np.float32,):
            hi = 1e6 if dtype == np.float32 else 1e12
            for kind, cond, rank in (("cond10", 10.0, None), (f"cond{hi:.0e}", hi, None), ("rankdef", 10.0, n - 5)):
                case(f"{np.dtype(dtype).name} {kind} {m}x{n}", with_cond(m, n, cond, m + n, rank).astype(dtype))


if __name__ == "__main__":
    main(sys.argv[1:])
