"""Argument grids for wgarray.special against scipy.special: each function's domain with
its tails, poles and special values. Shared by tests/test_special.py and
benchmarks/special_accuracy.py (which writes the table in docs/special.md)."""
from __future__ import annotations

import numpy as np

INF, NAN = np.inf, np.nan
SPECIAL = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5])


def _pos(lo, hi, n=200):
    return np.logspace(lo, hi, n)


def _sym(lo, hi, n=120):
    p = _pos(lo, hi, n)
    return np.concatenate([-p[::-1], p])


def _neg_nonint(n=300, top=170):
    k = np.linspace(0.0, top, n)
    return -(np.floor(k) + np.array([0.013, 0.25, 0.5, 0.77, 0.987])[np.arange(n) % 5])


def _grid(*axes):
    mesh = np.meshgrid(*axes, indexing="ij")
    return [m.ravel() for m in mesh]


def _near(args, ratio):
    a, b = args
    keep = np.maximum(a, b) < ratio * np.minimum(a, b)
    return [a[keep], b[keep]]


def _pair_special():
    v = SPECIAL
    return _grid(v, v)


UNARY = {
    "erf": np.concatenate([np.linspace(-8, 8, 401), _sym(-300, 1.5)]),
    "erfc": np.concatenate([np.linspace(-8, 27, 601), _sym(-300, 1.5)]),
    "erfcx": np.concatenate([np.linspace(-26, 30, 601), _sym(-300, 300)]),
    "ndtr": np.concatenate([np.linspace(-38, 9, 601), _sym(-300, 1.5)]),
    "log_ndtr": np.concatenate([np.linspace(-40, 40, 601), _sym(-300, 100)]),
    "ndtri": np.concatenate([_pos(-300, -0.302, 300), 1 - _pos(-16, -0.302, 200), np.linspace(0, 1, 101)]),
    "erfinv": np.concatenate([_sym(-300, 0), 1 - _pos(-16, 0, 100), -1 + _pos(-16, 0, 100)]),
    "gammaln": np.concatenate([_pos(-300, 300, 400), np.linspace(0.5, 3, 251), _neg_nonint()]),
    "gamma": np.concatenate([_pos(-300, np.log10(171.6), 300), np.linspace(0.5, 3, 251), _neg_nonint(300, 180)]),
    "rgamma": np.concatenate([_pos(-300, np.log10(171.6), 300), np.linspace(0.5, 3, 251), _neg_nonint(300, 180)]),
    "gammasgn": np.concatenate([_pos(-3, 3, 30), _neg_nonint(60, 30)]),
    "digamma": np.concatenate([_pos(-300, 300, 400), np.linspace(0.3, 12, 400), _neg_nonint(200, 100)]),
    "i0": np.concatenate([np.linspace(-700, 700, 701), _sym(-300, 2.8)]),
    "i0e": np.concatenate([np.linspace(-700, 700, 701), _sym(-300, 300)]),
    "i1": np.concatenate([np.linspace(-700, 700, 701), _sym(-300, 2.8)]),
    "i1e": np.concatenate([np.linspace(-700, 700, 701), _sym(-300, 300)]),
    "expit": np.concatenate([np.linspace(-745, 40, 401), _sym(-300, 2.8)]),
    "log_expit": np.concatenate([np.linspace(-700, 700, 401), _sym(-300, 2.8)]),
    "logit": np.concatenate([_pos(-300, -0.302, 300), 1 - _pos(-16, -0.302, 200), np.linspace(0, 1, 101)]),
    "entr": np.concatenate([_pos(-300, 300, 300), -_pos(-3, 3, 10)]),
    "sinc": np.concatenate([np.linspace(-50, 50, 403), _sym(-300, 2)]),
    "exp2": np.concatenate([np.linspace(-1074, 1023, 401), _sym(-300, 2)]),
    "exp10": np.concatenate([np.linspace(-323, 308, 401), _sym(-300, 2)]),
    "cbrt": np.concatenate([_sym(-300, 300)]),
    "cosm1": np.concatenate([np.linspace(-10, 10, 401), _sym(-300, 1)]),
    "exprel": np.concatenate([np.linspace(-700, 700, 401), _sym(-300, 1)]),
    "psi": np.concatenate([_pos(-3, 3, 50), _neg_nonint(30, 10)]),
}

_A = _pos(-2, 3, 24)
_X = np.concatenate([_pos(-3, 3.5, 30), [0.5, 1, 2]])
_P = np.concatenate([np.linspace(0, 1, 11), _pos(-10, -0.31, 8), 1 - _pos(-10, -0.31, 8)])

MULTI = {
    "gammainc": _grid(_A, _X),
    "gammaincc": _grid(_A, _X),
    # SciPy's betaln loses digits when one argument is 1e4 times the other (checked with
    # mpmath: test_betaln_far_apart_against_mpmath); compared with SciPy below that
    "betaln": _near(_grid(_pos(-3, 6, 30), _pos(-3, 6, 30)), 1e4),
    "beta": _grid(_pos(-2, 2.2, 25), _pos(-2, 2.2, 25)),
    # up to 100: beyond, SciPy's own error grows past wgarray's (betainc(316, 25.7, 0.1):
    # SciPy 1.6e-10 off, wgarray 7.7e-14, by mpmath)
    "betainc": _grid(_pos(-1.5, 2, 12), _pos(-1.5, 2, 12), _P),
    "betaincc": _grid(_pos(-1.5, 2, 12), _pos(-1.5, 2, 12), _P),
    "xlogy": _grid(np.array([0.0, -0.0, 1.5, -2.0, 1e-300, 1e300]), np.concatenate([_pos(-300, 300, 20), [0.0, -1.0]])),
    "xlog1py": _grid(np.array([0.0, 1.5, -2.0, 1e-300, 1e300]), np.concatenate([_pos(-300, 300, 20), [-1.0, -0.5, -2.0]])),
    "rel_entr": _grid(np.concatenate([_pos(-300, 300, 15), [0.0, -1.0]]), np.concatenate([_pos(-300, 300, 15), [0.0, -1.0]])),
    "kl_div": _grid(np.concatenate([_pos(-10, 10, 15), [0.0, -1.0]]), np.concatenate([_pos(-10, 10, 15), [0.0, -1.0]])),
    "chdtr": _grid(np.concatenate([_pos(-1, 3, 15), [0.0]]), np.concatenate([_pos(-2, 3.3, 20), [0.0]])),
    "chdtrc": _grid(np.concatenate([_pos(-1, 3, 15), [0.0]]), np.concatenate([_pos(-2, 3.3, 20), [0.0]])),
    "stdtr": _grid(np.concatenate([_pos(-1, 4, 12), [INF]]), np.concatenate([_sym(-3, 3, 20), [0.0, INF, -INF]])),
    "pdtr": _grid(np.array([0.0, 1, 2.5, 5, 10, 40, 200]), np.concatenate([_pos(-3, 2.7, 20), [0.0]])),
    "pdtrc": _grid(np.array([0.0, 1, 2.5, 5, 10, 40, 200]), np.concatenate([_pos(-3, 2.7, 20), [0.0]])),
    "gdtr": _grid(np.array([0.1, 1.0, 3.0]), _pos(-1, 2.5, 8), _pos(-2, 2.5, 12)),
    "gdtrc": _grid(np.array([0.1, 1.0, 3.0]), _pos(-1, 2.5, 8), _pos(-2, 2.5, 12)),
    "bdtr": _grid(np.array([0.0, 1, 3, 7.5, 19]), np.array([20.0, 50, 300]), _P),
    "bdtrc": _grid(np.array([0.0, 1, 3, 7.5, 19]), np.array([20.0, 50, 300]), _P),
    "nbdtr": _grid(np.array([0.0, 1, 3, 19]), np.array([1.0, 5, 50]), _P),
    "nbdtrc": _grid(np.array([0.0, 1, 3, 19]), np.array([1.0, 5, 50]), _P),
    "fdtr": _grid(np.array([0.5, 1, 5, 30]), np.array([0.5, 2, 10, 100]), np.concatenate([_pos(-3, 3, 12), [0.0]])),
    "fdtrc": _grid(np.array([0.5, 1, 5, 30]), np.array([0.5, 2, 10, 100]), np.concatenate([_pos(-3, 3, 12), [0.0]])),
    "huber": _grid(np.array([0.0, 0.5, 1.0, 3.0, -1.0]), _sym(-3, 3, 15)),
    "pseudo_huber": _grid(np.array([0.0, 0.5, 1.0, 3.0, -1.0]), _sym(-3, 3, 15)),
    "boxcox": _grid(np.concatenate([_pos(-3, 3, 15), [0.0]]), np.array([0.0, 0.5, -0.5, 2.0, 1e-10])),
    "boxcox1p": _grid(np.concatenate([_pos(-3, 3, 15), [0.0]]), np.array([0.0, 0.5, -0.5, 2.0, 1e-10])),
    "inv_boxcox": _grid(np.concatenate([_sym(-3, 1, 15)]), np.array([0.0, 0.5, -0.5, 2.0, 1e-10])),
    "inv_boxcox1p": _grid(np.concatenate([_sym(-3, 1, 15)]), np.array([0.0, 0.5, -0.5, 2.0, 1e-10])),
    "poch": _grid(_pos(-1, 2, 15), np.array([0.0, 0.5, 1.0, 3.0, 10.0, -0.5])),
    "radian": _grid(np.array([0.0, 30.0, -90.0, 360.0]), np.array([0.0, 15.0]), np.array([0.0, 30.0])),
}


def special_pairs(n: int):
    """Every combination of the special values for an n-argument function."""
    return _grid(*([SPECIAL] * n))


def max_rel_error(got: np.ndarray, ref: np.ndarray, dtype) -> tuple[float, int]:
    """Worst relative error (below the smallest normal: absolute, in units of it) over
    the points where the reference is finite, and the number of points where NaN/inf
    disagree."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    tiny = np.finfo(dtype).tiny
    fin = np.isfinite(ref)
    mism = int(np.sum(~fin & ~((np.isnan(ref) & np.isnan(got)) | (ref == got))))
    with np.errstate(all="ignore"):
        err = np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), tiny)
    err = np.where(np.isnan(err), np.inf, err)
    # both below the smallest normal: agreement (SciPy flushes some tails to 0, and
    # devices may flush subnormals)
    err = np.where((np.abs(got[fin]) < tiny) & (np.abs(ref[fin]) < tiny), 0.0, err)
    return (float(err.max()) if err.size else 0.0), mism
