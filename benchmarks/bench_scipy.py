"""SciPy functions that support the Array API (SCIPY_ARRAY_API=1, set in conftest.py
before SciPy is imported) on each library's arrays: a reduction-heavy special function
and a statistic over a matrix.

    python -m pytest benchmarks/bench_scipy.py -o python_files='bench_*.py' --benchmark-only
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL, BACKENDS, check_close, libs, measure, size

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(0)
LOG2_LSE = size(26, 12)
ZS = size(4096, 64)
HOST = {}


def host(key):
    if key not in HOST:
        HOST[key] = {"lse": lambda: RNG.standard_normal(1 << LOG2_LSE).astype(np.float32),
                     "zs": lambda: RNG.standard_normal((ZS, ZS)).astype(np.float32)}[key]()
    return HOST[key]


@pytest.mark.parametrize("lib", libs(*ALL))
def test_logsumexp(benchmark, lib):
    be = BACKENDS[lib]
    x = be.put("lse", host("lse"))
    r = measure(benchmark, f"scipy.special.logsumexp, 2^{LOG2_LSE} float32", lib,
                lambda: scipy_special.logsumexp(x), nbytes=4 * (1 << LOG2_LSE))
    want = np.log(np.sum(np.exp(host("lse").astype(np.float64))))
    check_close(float(be.to_numpy(r)), want, rtol=1e-5, what=lib)


@pytest.mark.parametrize("lib", libs(*ALL))
def test_zscore(benchmark, lib):
    be = BACKENDS[lib]
    x = be.put("zs", host("zs"))
    r = measure(benchmark, f"scipy.stats.zscore axis 0, {ZS}x{ZS} float32", lib,
                lambda: scipy_stats.zscore(x, axis=0), nbytes=8 * ZS * ZS)
    h = host("zs").astype(np.float64)
    check_close(be.to_numpy(r), (h - h.mean(0)) / h.std(0), rtol=1e-4, atol_of_max=1e-5, what=lib)
