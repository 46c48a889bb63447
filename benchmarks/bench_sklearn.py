"""scikit-learn estimators on each library's arrays through the Array API
(``sklearn.set_config(array_api_dispatch=True)``; conftest.py sets SCIPY_ARRAY_API=1
before SciPy or scikit-learn is imported): the same estimator fitted on NumPy arrays,
on wgarray arrays and on torch CUDA tensors.

    python -m pytest benchmarks/bench_sklearn.py -o python_files='bench_*.py' --benchmark-only
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import BACKENDS, SMALL, libs, measure, size

sklearn = pytest.importorskip("sklearn")
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

LIBS = libs("numpy", "wgarray", "torch")
RNG = np.random.default_rng(0)


def _low_rank(n, d, rank=16):
    """Data with a few strong directions and noise, so components are well separated."""
    basis = RNG.standard_normal((rank, d)).astype(np.float32)
    scale = np.geomspace(10, 1, rank).astype(np.float32)
    return (RNG.standard_normal((n, rank)).astype(np.float32) * scale) @ basis \
        + 0.1 * RNG.standard_normal((n, d)).astype(np.float32)


def _classes(n, d, k):
    means = 3 * RNG.standard_normal((k, d)).astype(np.float32)
    y = RNG.integers(0, k, n)
    return means[y] + RNG.standard_normal((n, d)).astype(np.float32), y.astype(np.int64)


# name -> (estimator factory, n, d, extra)
CASES = {
    "PCA full": (lambda: PCA(n_components=16, svd_solver="full"), *size((100_000, 256), (2_000, 32))),
    "PCA randomized": (lambda: PCA(n_components=16, svd_solver="randomized", random_state=0,
                                           power_iteration_normalizer="QR"),
                       *size((200_000, 512), (4_000, 64))),
    "PCA covariance_eigh": (lambda: PCA(n_components=16, svd_solver="covariance_eigh"),
                            *size((1_000_000, 64), (20_000, 16))),
    "LDA 10 classes": (lambda: LinearDiscriminantAnalysis(), *size((100_000, 32), (2_000, 8))),
    "Ridge svd": (lambda: Ridge(alpha=1.0, solver="svd"), *size((50_000, 64), (2_000, 16))),
}
_data: dict = {}
_reference: dict = {}


def data(name):
    if name not in _data:
        _, n, d = CASES[name]
        if name.startswith("LDA"):
            _data[name] = _classes(n, d, 10)
        elif name.startswith("Ridge"):
            X = _low_rank(n, d)
            w = RNG.standard_normal(d).astype(np.float32)
            _data[name] = (X, (X @ w + 0.1 * RNG.standard_normal(n)).astype(np.float32))
        else:
            _data[name] = (_low_rank(n, d), None)
    return _data[name]


def fitted_result(name, est):
    """The fitted attribute that depends on all the work (what is synchronized)."""
    return est.coef_ if name.startswith(("LDA", "Ridge")) else est.components_


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", list(CASES))
def test_sklearn_fit(benchmark, name, lib):
    be = BACKENDS[lib]
    make, n, d = CASES[name]
    X, y = data(name)
    xd = be.put(f"sk_{name}_X", X)
    yd = None if y is None else be.put(f"sk_{name}_y", y)

    def fit():
        with sklearn.config_context(array_api_dispatch=True):
            est = make().fit(xd) if yd is None else make().fit(xd, yd)
        return est

    est = measure(benchmark, f"scikit-learn {name} fit, {n}x{d} float32", lib, fit,
                  sync=lambda est: be.sync(fitted_result(name, est)),
                  rounds=3 if not SMALL else None)
    got = be.to_numpy(fitted_result(name, est))
    if name not in _reference:
        _reference[name] = fitted_result(name, make().fit(X) if y is None else make().fit(X, y))
    ref = _reference[name]
    assert got.shape == ref.shape
    if name != "PCA randomized":  # its random projections come from each library's own generator
        # components and coefficients up to sign, where the estimator leaves it open
        np.testing.assert_allclose(np.abs(got), np.abs(ref), rtol=1e-2, atol=1e-2 * float(np.abs(ref).max()),
                                   err_msg=f"{lib} {name}")
