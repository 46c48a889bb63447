"""One switch of the blocked factorizations (``wgarray/_kernels/linalg_blocked.py``) on
and off, wall time beside torch (CUDA):

    python benchmarks/diag_switch.py solve OUTER 32,256 1024,2048,4096
    python benchmarks/diag_switch.py inv REGISTER_UNROLLED 0,1 1024
    python benchmarks/diag_switch.py cholesky CHOL_OUTER 64,256,512 4096
    python benchmarks/diag_switch.py eigh trd.STEIN_THREADS 32,64,128 1024    # a switch of another module
    python benchmarks/diag_switch.py qr QR_REGISTER_PANELS 0,1 1024,4096
    python benchmarks/diag_switch.py svd eig.SVD_PRECONDITION_MAX 1024,8192 2048

A switch is a name in ``_kernels/linalg_blocked.py``, or ``trd.NAME`` / ``eig.NAME`` /
``sytrd.NAME`` for one in ``_kernels/linalg_trd.py`` / ``linalg_eigen.py`` / ``linalg_sytrd.py``.

float32 (DTYPE=float64 for that); solve takes 16 right-hand sides. Each value is timed
in turn within every round (median of ROUNDS, default 7; recorded programs cleared at
each change, then one untimed call records again), synchronized by a one-element
readback; the first call of each value (its compile and recording) is shown apart.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._kernels import linalg_blocked as blk, linalg_eigen as eig, linalg_sytrd as sytrd  # noqa: E402
from wgarray._kernels import linalg_trd as trd  # noqa: E402

MODULES = {"trd": trd, "eig": eig, "sytrd": sytrd}

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import cuda_torch, heat  # noqa: E402

DTYPE = os.environ.get("DTYPE", "float32")
ROUNDS = int(os.environ.get("ROUNDS", "7"))


def inputs(op, n, rng):
    a = rng.standard_normal((n, n))
    if op == "cholesky":
        return [(a @ a.T / n + np.eye(n)).astype(DTYPE)]
    if op in ("eigh", "eigvalsh"):
        return [((a + a.T) / 2).astype(DTYPE)]
    if op == "solve":
        return [a.astype(DTYPE), rng.standard_normal((n, 16)).astype(DTYPE)]
    return [a.astype(DTYPE)]


def call(m, op, args):
    f = {"cholesky": m.linalg.cholesky, "solve": m.linalg.solve, "inv": m.linalg.inv, "det": m.linalg.det,
         "eigh": lambda x: m.linalg.eigh(x)[1], "eigvalsh": m.linalg.eigvalsh, "qr": lambda x: m.linalg.qr(x)[1],
         "svd": lambda x: m.linalg.svd(x, full_matrices=False)[0], "svdvals": m.linalg.svdvals}[op]
    out = f(*args)
    return out if out.ndim == 0 else out[0, 0] if out.ndim == 2 else out[0]


def main(op, switch, values, orders):
    mod, _, name = switch.rpartition(".")
    target = MODULES[mod] if mod else blk
    torch = cuda_torch()
    dev = xp.asarray(0.0).device
    rt = dev.runtime
    print(f"device: {dev.name}; {op} {DTYPE}, {switch} in {values}")
    rng = np.random.default_rng(0)
    for n in orders:
        host = inputs(op, n, rng)
        args = [xp.asarray(h) for h in host]
        first, times = {}, {v: [] for v in values}
        for v in values:
            setattr(target, name, v)
            rt.programs.clear()
            t = time.perf_counter()
            complex(call(xp, op, args))
            first[v] = time.perf_counter() - t
        heat(rt)
        for _ in range(ROUNDS):
            for v in values:
                setattr(target, name, v)
                rt.programs.clear()
                complex(call(xp, op, args))  # records
                t = time.perf_counter()
                complex(call(xp, op, args))
                times[v].append(time.perf_counter() - t)
        line = ", ".join(f"{switch}={v}: {statistics.median(times[v]) * 1e3:.3f} ms (first {first[v]:.2f} s)"
                         for v in values)
        if torch is not None:
            targs = [torch.from_numpy(h).cuda() for h in host]
            for _ in range(3):
                call(torch, op, targs)
            torch.cuda.synchronize()
            tt = []
            for _ in range(ROUNDS):
                t = time.perf_counter()
                complex(call(torch, op, targs))
                tt.append(time.perf_counter() - t)
            line += f"; torch {statistics.median(tt) * 1e3:.3f} ms"
        print(f"{op} {n}: {line}")


if __name__ == "__main__":
    op, switch, vals, sizes = sys.argv[1:5]
    main(op, switch, [int(v) for v in vals.split(",")], [int(s) for s in sizes.split(",")])
