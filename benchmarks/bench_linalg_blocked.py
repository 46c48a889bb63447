"""The blocked factorizations, float32: wgarray vs NumPy (host LAPACK) vs PyTorch on CUDA
(cuSOLVER) when present. pytest-benchmark:

    python -m pytest benchmarks/bench_linalg_blocked.py --benchmark-only \
        --benchmark-group-by=param:case --benchmark-columns=median,min,rounds -q

``case``: cholesky / solve / qr at 1024 and 4096 square, qr of 3000 x 1000 (blocked
Householder, as square), qr and svd of 100000 x 256 (CholeskyQR),
and scikit-learn's Ridge(solver='svd').fit on 50000 x 64 and
LinearDiscriminantAnalysis().fit on 100000 x 32 with 10 classes (array API dispatch;
both are a tall SVD inside). Every timed call ends in a device sync: wgarray reads back
one scalar of the result (``float(xp.sum(r))``), torch calls ``torch.cuda.synchronize()``.
Also prints, once per case, wgarray's dispatch count and the pipelines compiled on its
second call (expected 0). The first call (compilation) is untimed.
"""
from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array API dispatch needs it

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug

try:
    import torch

    CUDA = torch.cuda.is_available()
except Exception:  # torch absent
    torch, CUDA = None, False

CASES = ["cholesky-1024", "cholesky-4096", "solve-1024", "solve-4096", "qr-1024", "qr-4096",
         "qr-3000x1000", "qr-100000x256", "svd-100000x256", "sk_ridge-50000x64", "sk_lda-100000x32"]
LIBS = ["wgarray", "numpy"] + (["torch"] if CUDA else [])


def _inputs(case):
    rng = np.random.default_rng(0)
    name, size = case.split("-")
    if "x" in size:
        m, n = map(int, size.split("x"))
        x = rng.standard_normal((m, n)).astype(np.float32)
        if name == "sk_ridge":
            return name, [x, rng.standard_normal(m).astype(np.float32)]
        if name == "sk_lda":
            return name, [x, rng.integers(0, 10, m)]
        return name, [x]
    n = int(size)
    a = rng.standard_normal((n, n)).astype(np.float32)
    if name == "cholesky":
        a = (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)
    elif name == "solve":
        a = a + np.float32(n ** 0.5) * np.eye(n, dtype=np.float32)
        return name, [a, rng.standard_normal((n, 16)).astype(np.float32)]
    return name, [a]


def _sk(estimator, dispatch):
    import sklearn

    def fit(x, y):
        with sklearn.config_context(array_api_dispatch=dispatch):
            return estimator().fit(x, y).coef_

    return fit


def _ops(lib):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge

    la = {"wgarray": xp.linalg, "numpy": np.linalg}.get(lib) or torch.linalg
    dispatch = lib != "numpy"
    return {"cholesky": la.cholesky, "solve": la.solve, "qr": lambda a: la.qr(a)[1],
            "svd": lambda a: la.svd(a, full_matrices=False)[1],
            "sk_ridge": _sk(lambda: Ridge(solver="svd"), dispatch),
            "sk_lda": _sk(LinearDiscriminantAnalysis, dispatch)}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CASES)
def test_linalg_blocked(benchmark, case, lib):
    name, host = _inputs(case)
    fn = _ops(lib)[name]
    if lib == "wgarray":
        args = [xp.asarray(h) for h in host]

        def run():
            return float(xp.sum(fn(*args)))

        run()  # compiles
        debug.reset_counters()
        run()
        c = debug.counters()
        print(f"\n{case}: {c['dispatches']} dispatches, "
              f"{c['pipelines_compiled']} pipelines compiled on the second call")
    elif lib == "numpy":
        def run():
            return fn(*host)
    else:
        args = [torch.from_numpy(h).cuda() for h in host]

        def run():
            r = fn(*args)
            torch.cuda.synchronize()
            return r

        run()
    benchmark.pedantic(run, rounds=5, warmup_rounds=1, iterations=1)
