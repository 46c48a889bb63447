"""The main job side by side: k-means (Lloyd's algorithm, ``wgarray/_kmeans.py``) written
against the Array API standard, run unchanged on each library. Full size: 1,000,000 x 32
float32, k = 16, 10 iterations (what ``python -m wgarray`` runs).

    python -m pytest benchmarks/bench_kmeans.py -o python_files='bench_*.py' --benchmark-only
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL, BACKENDS, SMALL, libs, measure, size

from wgarray._kmeans import kmeans, kmeans_pp, synthetic

N, D, K, ITERS = size((1_000_000, 32, 16, 10), (20_000, 8, 4, 3))
X = synthetic(N, D, K)
C0 = kmeans_pp(X, K)
_reference: list = []


@pytest.mark.parametrize("lib", libs(*ALL))
def test_kmeans(benchmark, lib):
    be = BACKENDS[lib]
    x, c0 = be.put("kmeans_X", X), be.put("kmeans_C0", C0)
    centers, labels, inertia = measure(
        benchmark, f"k-means {N}x{D} float32, k={K}, {ITERS} iterations", lib,
        lambda: kmeans(be.xp, x, c0, ITERS), rounds=3 if lib == "numpy" and not SMALL else None)
    if not _reference:
        _reference.extend(kmeans(np, X, C0, ITERS))
    want_labels, want_inertia = np.asarray(_reference[1]), float(_reference[2])
    assert (be.to_numpy(labels) == want_labels).mean() > 0.999, lib
    assert abs(float(be.to_numpy(inertia)) - want_inertia) <= 1e-3 * want_inertia, lib
