"""Argument grids for wgarray.special against scipy.special: each function's domain with
its tails, poles and special values. Shared by tests/test_special.py and
benchmarks/special_accuracy.py (which writes the table in docs/special.md)."""
from __future__ import annotations

import math

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
    # SciPy's 1/gamma overflows early at -170.77 (-inf; mpmath -8.0e307): the edge of the
    # overflow, x < -170, against mpmath (test_rgamma_overflow_edge_against_mpmath)
    "rgamma": np.concatenate([_pos(-300, np.log10(171.6), 300), np.linspace(0.5, 3, 251), _neg_nonint(300, 170)]),
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
    # NumPy's sinc rounds pi x, so near its zeros (|x| >= 1) its own error is ~|x| eps of
    # the amplitude (6e-18 at sinc(50) = 0): compared with SciPy inside (-1, 1), with
    # mpmath everywhere (test_sinc_against_mpmath)
    "sinc": np.concatenate([np.linspace(-0.9, 0.9, 181), _sym(-300, -0.05)]),
    "exp2": np.concatenate([np.linspace(-1074, 1023, 401), _sym(-300, 2)]),
    "exp10": np.concatenate([np.linspace(-323, 308, 401), _sym(-300, 2)]),
    "cbrt": np.concatenate([_sym(-300, 300)]),
    "cosm1": np.concatenate([np.linspace(-10, 10, 401), _sym(-300, 1)]),
    "exprel": np.concatenate([np.linspace(-700, 700, 401), _sym(-300, 1)]),
    "psi": np.concatenate([_pos(-3, 3, 50), _neg_nonint(30, 10)]),
    "sindg": np.concatenate([np.linspace(-720, 720, 97), [1e13, 3e13 + 45, 2.0 ** 30, 1e15, 89.9, 90.1, 179.99]]),
    "cosdg": np.concatenate([np.linspace(-720, 720, 97), [1e13, 3e13 + 45, 2.0 ** 30, 1e15, 89.9, 90.1, 179.99]]),
    # SciPy's tandg and cotdg take tan of the angle near the pole (tandg(89.5): ~20 ulp
    # off by mpmath); wgarray uses 1 / tan of the exact complement there
    "tandg": np.concatenate([np.linspace(-720, 720, 97), [1e13, 3e13 + 45, 2.0 ** 30, 1e15, 30.1, 150.2]]),
    "cotdg": np.concatenate([np.linspace(-720, 720, 97), [1e13, 3e13 + 45, 2.0 ** 30, 1e15, 30.1, 150.2]]),
    "ellipk": np.concatenate([np.linspace(-10, 1, 101), 1 - _pos(-300, 0, 50), -_pos(-3, 300, 50)]),
    "ellipkm1": _pos(-300, 300, 200),
    "exp1": np.concatenate([_pos(-300, 2.9, 300), -_pos(-3, 2, 5)]),
    "expi": np.concatenate([_sym(-300, 2.86, 200), np.linspace(0.3, 0.45, 51)]),
    "spence": np.concatenate([_pos(-300, 300, 300), np.linspace(0, 3, 61), -_pos(-3, 2, 5)]),
    # SciPy returns 0 for zetac(x > 127); wgarray keeps 2^-x + 3^-x + ...
    "zetac": np.concatenate([np.linspace(-30, 120, 301), _pos(-3, 2, 60), -_pos(-3, 2.4, 60)]),
    "loggamma": np.concatenate([_pos(-300, 300, 200), np.linspace(0.5, 3, 51), -_pos(-3, 2, 10)]),
    # SciPy's j0/j1/y0/y1 lose accuracy as x grows (x - pi/4 rounded: j0(1e10) is 1e-6 off
    # by mpmath); compared with SciPy up to 25, with mpmath beyond (test_special.py)
    "j0": np.concatenate([np.linspace(-25, 25, 301), _sym(-300, 1.3, 40)]),
    "j1": np.concatenate([np.linspace(-25, 25, 301), _sym(-300, 1.3, 40)]),
    "y0": np.concatenate([np.linspace(0, 25, 301), _pos(-300, 1.3, 40), [-1.0]]),
    "y1": np.concatenate([np.linspace(0, 25, 301), _pos(-300, 1.3, 40), [-1.0]]),
    "k0": np.concatenate([np.linspace(0, 30, 301), _pos(-300, 2.85, 100)]),
    "k1": np.concatenate([np.linspace(0, 30, 301), _pos(-300, 2.85, 100)]),
    "k0e": np.concatenate([np.linspace(0, 30, 301), _pos(-300, 300, 100)]),
    "k1e": np.concatenate([np.linspace(0, 30, 301), _pos(-300, 300, 100)]),
}

# Oscillating functions: the error is measured against max(|f|, envelope) (absolute
# error in units of the local amplitude, as Cephes states it): near a zero neither
# library has relative accuracy, only the root's position.
ENVELOPE = {
    "j0": lambda x: np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))),
    "j1": lambda x: np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))),
    "y0": lambda x: np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))),
    "y1": lambda x: np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))),
    "yn": lambda n, x: np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))),
    # NumPy's sin(pi x) / (pi x) is off by ~eps of the amplitude 1 / (pi |x|) (3.9e-17 at
    # the zero x = 1), so its values near the zeros have no relative accuracy
    "sinc": lambda x: np.minimum(1.0, 1.0 / (np.pi * np.abs(x))),
}

_A = _pos(-2, 3, 24)
# up to a = 100: beyond, SciPy's own error grows with a (gammainc(1000, 239.5): 3800 ulp
# off by mpmath, wgarray 1); larger a are compared with mpmath (test_special.py)
_A_SCIPY = _A[_A <= 100.0]
_X = np.concatenate([_pos(-3, 3.5, 30), [0.5, 1, 2]])
_P = np.concatenate([np.linspace(0, 1, 11), _pos(-10, -0.31, 8), 1 - _pos(-10, -0.31, 8)])
# targets of the inverses: tails to 1e-30 and 1 - 1e-10. Further out SciPy's own
# inverses fail where wgarray's converge (bdtri(1, 300, 2.46e-34): SciPy 1.0,
# wgarray 0.239, and bdtr(1, 300, 0.239) = 2.46e-34; nbdtri(19, 1, 1 - 1.7e-14): SciPy
# 0.99999, wgarray 0.7949, whose nbdtr is the target)
_Y = np.concatenate([np.linspace(0, 1, 11), _pos(-30, -0.31, 8), 1 - _pos(-10, -0.31, 6)])

def round_trip_error(forward: str, args, p):
    """How far ``p`` is, relative to itself, from a value that SciPy's ``forward``
    function takes exactly to the target y (last of ``args``): the residual of the smaller
    tail (F(p) - y for y <= 1/2, F^c(p) - (1 - y) above: near y = 1 the complement
    decides p) over that tail's derivative at p (a difference quotient), divided by p.
    A backward error, so that p = 1.0 for bdtri(19, 20, 1e-30), whose exact value rounds
    to 1 (bdtr(19, 20, 1.0) = 0), counts as exact."""
    import scipy.special as sc
    *params, y = args
    upper = y > 0.5
    with np.errstate(all="ignore"):
        def tail(q):
            return np.where(upper, getattr(sc, forward + "c")(*params, q), getattr(sc, forward)(*params, q))

        # a one-sided step toward 1/2, wide enough to be resolved next to 0 and 1
        d = np.maximum(1e-6 * np.minimum(p, 1.0 - p), 2.0 ** -40) * np.where(p > 0.5, -1.0, 1.0)
        slope = (tail(p + d) - tail(p)) / d
        resid = tail(p) - np.where(upper, 1.0 - y, y)
        # an exact root counts as exact where it is 0 too (bdtri(1, 20, 1) = 0)
        return np.where(resid == 0.0, 0.0, np.abs(resid / slope) / np.abs(p))


def _scipy_inverts(forward: str, args, rtol: float = 1e-12):
    """(kept, left out): the points of an inverse's grid (last argument the target y)
    where SciPy's inverse goes back to y through its forward function within ``rtol``
    (``round_trip_error``), and the rest, where it does not (bdtri(1, 300, 5.3e-18): SciPy
    1.0, whose bdtr is 0; wgarray 0.1354, whose bdtr is 5.3e-18; nbdtri(19, 1, 1 - 1e-10):
    SciPy 0.68377225647, off by 1.3e-8 in 1 - y; wgarray 0.68377223267). test_special.py
    checks wgarray's inverse at the points left out by the same round trip."""
    import scipy.special as sc
    *params, y = args
    with np.errstate(all="ignore"):
        err = round_trip_error(forward, args, getattr(sc, forward + "i")(*params, y))
    ok = ~(err > rtol)  # NaN: a point outside the domain, kept (SciPy's NaN is the reference)
    return [q[ok] for q in args], [q[~ok] for q in args]


BDTRI_GRID = _grid(np.array([0, 1, 3, 7, 19.0]), np.array([20.0, 50, 300]), _Y)
NBDTRI_GRID = _grid(np.array([0, 1, 3, 19.0]), np.array([1.0, 5, 50]), _Y)


def _stdtrit_args():
    """df x targets, less the points whose |t| passes 1e150: SciPy bounds its search by
    2.1e153 and returns that (stdtrit(0.1, 1e-30): SciPy -2.1e153, mpmath and wgarray
    -1.6e296, checked in test_special.py). |t| estimated from the lower tail's power law."""
    df, y = _grid(_pos(-1, 4, 12), _Y)
    a = 0.5 * df
    tail = 2.0 * np.minimum(y, 1.0 - y)
    lgam = np.vectorize(math.lgamma)
    with np.errstate(divide="ignore"):
        log_t = 0.5 * np.log(df) - (np.log(tail) + np.log(a) + lgam(a) + lgam(0.5) - lgam(a + 0.5)) / (2.0 * a)
    keep = (tail == 0.0) | (log_t < math.log(1e150))
    return [df[keep], y[keep]]


# lpmv: orders -3..5, degrees of both signs up to 60 (integers, halves and others), x over
# [-1, 1], and m = 0 beyond 1 (P_v(x) is real there). Left out: integer degrees at |x| ~ 1e-8
# (SciPy's polynomial in 1 + x cancels: P_1(1e-8) 6e-17 off) and large degrees at
# x = -0.999 (SciPy's recurrence amplifies its start's error: lpmv(5, 60.25, -0.999)
# 3e8 ulp off by mpmath); test_special.py compares those with mpmath
_LPMV_V = np.concatenate([np.linspace(-6.5, 12.3, 24), [0.0, 1, 2, 3, 7, 10, -1, -2, 30.5, 60.25]])
_LPMV_X = np.concatenate([np.linspace(-1, 1, 41), [-0.999, 0.999, -0.36, -0.34, -0.69, -0.71, 0.123]])


def _lpmv_args():
    m, v, x = _grid(np.array([0, 1, 2, 3, 5, -1, -2, -3.0]), _LPMV_V, _LPMV_X)
    keep = ~((x == -0.999) & (np.abs(v) > 12.5))
    m0, v0, x0 = _grid(np.array([0.0]), _LPMV_V, np.array([1.2, 1.5, 2.0, -1.5]))
    return [np.concatenate([m[keep], m0]), np.concatenate([v[keep], v0]), np.concatenate([x[keep], x0])]


def _hyp1f1_args():
    """a x b x x, less the points where SciPy is off by mpmath: a large a with b small
    and x just below 0 (hyp1f1(30, 0.2, -0.0567): SciPy -1.36, mpmath and wgarray
    -2.760) and the overflow for a < 0 at x = 1000 (SciPy +inf where 1F1(-5.5, -2.3,
    1000) = -6.7e426)."""
    a, b, x = _grid(np.array([-20, -5.5, -3, -1.5, -0.3, 0.1, 0.5, 1, 2.7, 5, 12.3, 30]),
                    np.array([-7.5, -2.3, -0.5, 0.2, 0.5, 1, 1.5, 3, 7.9, 20, 55]),
                    np.concatenate([_sym(-3, 2.7, 14), [-1000.0, 1000.0, -90.0, 90.0]]))
    keep = ~(((a < 0) | (b < 0)) & (x == 1000.0)) & ~((a > 2 * np.abs(b) + 5) & (x < 0) & (x > -1))
    # regions where the terms of the power series cancel, left out of the comparison with
    # SciPy, which is off there by up to 1.9e16 ulp (wgarray 2.4 by mpmath in float64,
    # test_hyp1f1_over_its_whole_grid_against_mpmath; float32 without float64 keeps ~2^-48
    # through the cancellation, short of some): x < 0 with a - b > 5 (Kummer's series in
    # b - a alternates: hyp1f1(12.3, 3, -3.2)), a = -20 (hyp1f1(-20, -7.5, 0.43)), and
    # a < 0 with x > 30 and b > 20 (hyp1f1(-5.5, 55, 66.5))
    keep &= ~((x < 0) & (a - b > 5)) & ~(a <= -20) & ~((a < 0) & (x > 30) & (b > 20))
    # and b >= 20 with |x| > 85 (float32 past its series range, short of the asymptotic one)
    keep &= ~((b >= 20) & (np.abs(x) > 85))
    # b - a a nonpositive integer with x < 0: M = e^x times a polynomial exactly, and off
    # it by (b - a + n) / Gamma-sized terms, so the rounding of the float32 inputs decides
    # (hyp1f1(-0.3, -2.3, -90): -6.6e-7 at the float32 inputs, 0 for their exact b - a = -2)
    c = np.round(b - a, 9)
    keep &= ~((x < 0) & (c <= 0) & (c == np.floor(c)))
    return [a[keep], b[keep], x[keep]]


BINOM_GRID = _grid(np.concatenate([np.linspace(-10.5, 30, 28), [1e-9, 1e10, 1e15]]),
                   np.concatenate([np.arange(-3, 25, 1.0), [0.5, 2.5, 10.3, 1e9]]))


MULTI = {
    "gammainc": _grid(_A_SCIPY, _X),
    "gammaincc": _grid(_A_SCIPY, _X),
    # SciPy's betaln loses digits once one argument is ~10 times the other (by mpmath:
    # 136 ulp at a ratio of 100, 7800 at 5000): compared with SciPy below that, with
    # mpmath over the whole grid (test_betaln_over_its_whole_grid_against_mpmath)
    "betaln": _near(_grid(_pos(-3, 6, 30), _pos(-3, 6, 30)), 10),
    # a + b < 30: SciPy's own float64 error grows with a + b (its gamma products: 60 ulp
    # by mpmath below 50, beta(31.6, 105.9) 314 ulp off; past 171 exp of a lgamma
    # difference, beta(158.5, 70.8) 1070 ulp; wgarray < 1 at both); the whole grid up to
    # 1000 against mpmath: test_beta_over_its_grid_against_mpmath
    "beta": [v[(lambda a, b: a + b < 30)(*_grid(_pos(-2, 2.2, 25), _pos(-2, 2.2, 25)))]
             for v in _grid(_pos(-2, 2.2, 25), _pos(-2, 2.2, 25))],
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
    # n up to 50: at n = 300 SciPy's own error reaches ~1800 ulp by mpmath (bdtr(3, 300,
    # 0.9): SciPy 1832, wgarray 0.2; bdtrc(7.5, 300, 1e-10): SciPy 1588, wgarray 3.6);
    # n = 300 against mpmath: test_binomial_at_n_300_against_mpmath
    "bdtr": _grid(np.array([0.0, 1, 3, 7.5, 19]), np.array([20.0, 50]), _P),
    "bdtrc": _grid(np.array([0.0, 1, 3, 7.5, 19]), np.array([20.0, 50]), _P),
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
    # non-integer m only up to z = 30: beyond, SciPy's lgamma difference loses |lgamma|
    # ulp (poch(61.05, 0.5): 240 ulp off by mpmath, wgarray 0.5); the whole grid and
    # z past Gamma's range are compared with mpmath (test_poch_against_mpmath)
    "poch": [np.concatenate([v, w]) for v, w in zip(_grid(_pos(-1, 2, 15), np.array([0.0, 1.0, 3.0, 10.0])),
                                                    _grid(_pos(-1, np.log10(30), 12), np.array([0.5, -0.5])))],
    "radian": _grid(np.array([0.0, 30.0, -90.0, 360.0]), np.array([0.0, 15.0]), np.array([0.0, 30.0])),
    "expn": _grid(np.array([0, 1, 2, 3, 5, 10, 30, 60, 200.0]), np.concatenate([_pos(-300, 2.8, 40), [0.0]])),
    "yn": _grid(np.array([-3, -2, 0, 1, 2, 3, 5, 10, 30, 100.0]), np.concatenate([_pos(-3, 1.4, 30)])),
    # SciPy's asymptotic form for k > 1e8 |n| is off (binom(3, 1e9): SciPy -7e-52, exactly
    # 0; binom(16.5, 1e9): 3.6e-6 relative; binom(1e-9, 0.5): 2.7e-10), and so is its
    # exp of a lgamma difference for large n (binom(1e15, 21): 539 ulp), so k = 1e9,
    # n = 1e-9 and n >= 1e10 are left out here; BINOM_GRID, with them, against mpmath
    "binom": _grid(np.linspace(-10.5, 30, 28),
                   np.concatenate([np.arange(-3, 25, 1.0), [0.5, 2.5, 10.3]])),
    "zeta": _grid(np.concatenate([np.linspace(1.01, 30, 20), _pos(0.01, 2.5, 10)]),
                  np.concatenate([_pos(-3, 5, 20), [-1.5, -7.25, -20.5]])),
    # x < 0 with n >= 1 against mpmath (POLYGAMMA_NEG): SciPy sums the Hurwitz terms
    # rounded, and near a zero of psi^(n) they cancel (polygamma(2, -1.4988): SciPy 778 ulp
    # off by mpmath, wgarray 1)
    "polygamma": [np.concatenate(z) for z in zip(_grid(np.array([0, 1, 2, 3, 5, 10.0]), _pos(-2, 3, 40)),
                                                 _grid(np.array([0.0]), -_pos(-1, 1.5, 20) - 0.37))],
    "gammaincinv": _grid(_pos(-2, 3, 16), _Y),
    "gammainccinv": _grid(_pos(-2, 3, 16), _Y),
    "chdtri": _grid(2 * _pos(-2, 3, 16), _Y),
    "pdtri": _grid(np.array([0, 1, 2, 5, 10, 50, 300.0]), _Y),
    "betaincinv": _grid(_pos(-1.5, 2, 10), _pos(-1.5, 2, 10), _Y),
    "bdtri": _scipy_inverts("bdtr", BDTRI_GRID)[0],
    "nbdtri": _scipy_inverts("nbdtr", NBDTRI_GRID)[0],
    "fdtri": _grid(np.array([0.5, 1, 5, 30]), np.array([0.5, 2, 10, 100]), _Y),
    "stdtrit": _stdtrit_args(),
    "lpmv": _lpmv_args(),
    # hyp1f1: parameters of both signs (b not a pole) and x to +-1000 (past the power
    # series' range of 700 in float64: the asymptotic expansions)
    "hyp1f1": _hyp1f1_args(),
}

# SciPy's incomplete gamma inverses give irregular results for a = -0.0 that differ
# from a = +0.0 (0 where +0.0 gives NaN); wgarray treats -0.0 as 0.0
SPECIAL_SKIP_NEGATIVE_ZERO = {"gammaincinv": 0, "gammainccinv": 0}


def special_pairs(n: int, name: str | None = None):
    """Every combination of the special values for an n-argument function."""
    args = _grid(*([SPECIAL] * n))
    if name == "hyp1f1":
        # SciPy's results at infinite x, or infinite a with x != 0, or b = -inf, follow no
        # rule (hyp1f1(1, 1, inf) NaN, hyp1f1(-1, 1, inf) inf, hyp1f1(-2, 1, inf) NaN,
        # hyp1f1(inf, inf, -2) e^-2 but hyp1f1(inf, inf, -1) 1), and several at x = inf
        # do not return (hyp1f1(1, 0.5, inf)): left out. So is hyp1f1(0.5, -0.5, 0.5),
        # 0 (M(a, a - 1, x) = e^x (1 + x / (a - 1))) where SciPy gives NaN.
        a, b, x = args
        keep = ~np.isinf(x) & ~(np.isinf(a) & (x != 0)) & ~(np.isinf(b) & (b < 0))
        keep &= ~((a == 0.5) & (b == -0.5) & (x == 0.5))
        args = [v[keep] for v in args]
    if name == "lpmv":
        # SciPy casts an infinite order to int (undefined in C): left out
        keep = np.isfinite(args[0]) | np.isnan(args[0])
        args = [v[keep] for v in args]
    if name in SPECIAL_SKIP_NEGATIVE_ZERO:
        a = args[SPECIAL_SKIP_NEGATIVE_ZERO[name]]
        keep = ~((a == 0) & np.signbit(a))
        args = [v[keep] for v in args]
    return args


def max_rel_error(got: np.ndarray, ref: np.ndarray, dtype, scale=None) -> tuple[float, int]:
    """Worst relative error (below the smallest normal: absolute, in units of it) over
    the points where the reference is finite, and the number of points where NaN/inf
    disagree. ``scale``: a floor for |ref| in the denominator (an envelope)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    tiny = np.finfo(dtype).tiny
    fin = np.isfinite(ref)
    mism = int(np.sum(~fin & ~((np.isnan(ref) & np.isnan(got)) | (ref == got))))
    floor = tiny if scale is None else np.maximum(np.asarray(scale, dtype=np.float64)[fin], tiny)
    with np.errstate(all="ignore"):
        err = np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), floor)
    err = np.where(np.isnan(err), np.inf, err)
    # both at most the smallest normal: agreement (SciPy flushes some tails to 0 or
    # clamps them to the smallest normal, and devices may flush subnormals)
    err = np.where((np.abs(got[fin]) <= tiny) & (np.abs(ref[fin]) <= tiny), 0.0, err)
    return (float(err.max()) if err.size else 0.0), mism


# polygamma(n, x) for x < 0, n >= 1: compared with mpmath (test_special.py)
POLYGAMMA_NEG = _grid(np.array([1, 2, 3, 5, 10.0]), np.concatenate([-_pos(-1, 1.5, 20) - 0.37, [-1.4988378916846887]]))
