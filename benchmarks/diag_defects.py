"""What the correctness fixes of the core cost: the svd basis completion for zero
singular values, the exact conjugate pairing of real eig/eigvals, the result-size check
of every new array, and writes through long chains of views.

    python benchmarks/diag_defects.py [N ...]

Per case: the median wall ms of a synchronized call (a scalar readback), and the
dispatches, submits and readbacks that wgarray's counters saw in one call.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of, table  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402


def _counts(fn):
    before = dict(debug.counters())
    fn()
    after = debug.counters()
    return [after.get(k, 0) - before.get(k, 0) for k in ("dispatches", "submits", "readbacks")]


def _row(name, fn):
    ms = best_of(fn, repeat=5, warmup=1) * 1e3
    return [name, f"{ms:.2f}", *_counts(fn)]


def _svd_case(a, full):
    x = xp.asarray(a)

    def run():
        u, s, vh = xp.linalg.svd(x, full_matrices=full)
        return float(xp.sum(u[0])) + float(xp.sum(s)) + float(xp.sum(vh[0]))
    return run


def _eigvals_case(a):
    x = xp.asarray(a)
    return lambda: float(xp.sum(xp.abs(xp.linalg.eigvals(x))))


def main(sizes):
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        full_rank = rng.standard_normal((n, n)).astype(np.float32)
        deficient = full_rank.copy()
        deficient[:, n // 2:] = 0  # n/2 exact zero singular values
        for full in (False, True):
            rows.append(_row(f"svd {n}x{n} full rank, full_matrices={full}", _svd_case(full_rank, full)))
            rows.append(_row(f"svd {n}x{n} rank {n // 2}, full_matrices={full}", _svd_case(deficient, full)))
        tall = rng.standard_normal((8 * n, n)).astype(np.float32)
        rows.append(_row(f"svd {8 * n}x{n} full rank, reduced", _svd_case(tall, False)))
        rows.append(_row(f"eigvals {n}x{n} real", _eigvals_case(full_rank)))
    a = xp.asarray(np.ones(1024, np.float32))
    b = xp.asarray(np.ones(1024, np.float32))

    def adds():
        for _ in range(1000):
            a + b  # host cost of building an op (and its result-size check)
    rows.append(["1000 x (a + b), lazy, host only", f"{best_of(adds, repeat=5) * 1e3:.2f}", "", "", ""])
    x = xp.asarray(np.zeros(4096, np.float32))
    v = x
    for _ in range(600):
        v = v[1:]

    def chain_write():
        v[0] = 1.0
        return float(x[600])
    rows.append(_row("write through a chain of 600 views, then a read", chain_write))
    print(f"device: {x.device.name}")
    print(table(rows, ["case", "ms", "dispatches", "submits", "readbacks"]))


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [64, 256])
