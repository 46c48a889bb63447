"""Points where a wgarray.special function disagrees with SciPy (or mpmath) on this
device: the inputs, wgarray's value, the reference, and the error in ulp, for the
test grids of ``tests/test_special.py`` that a device fails.

    python benchmarks/diag_special_points.py lpmv rgamma beta formed
"""
from __future__ import annotations

import os
import sys

import numpy as np
import scipy.special as sc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import wgarray as xp  # noqa: E402
import special_domains as D  # noqa: E402


def _lpmv_grid():
    m, v, x = D._grid(np.array([0, 1, 3, -2.0]), np.array([0.0, 2, 4.5, -3.7, 9.25, 1.5]),
                      np.array([-1.0, -0.9, -0.5, 0.0, 0.3, 0.95, 1.0]))
    return [np.concatenate([q, r]) for q, r in zip((m, v, x), ([0.0, 0, 2], [2.5, 3.0, 1.0], [1.5, -3.0, 2.0]))]


def _rgamma_grid():
    return [-(np.repeat(np.arange(170.0, 181.0), 5) + np.tile([0.013, 0.25, 0.5, 0.77, 0.987], 11))]


def _show(name, args, dtype, ref=None):
    a = [np.asarray(v, dtype=dtype) for v in args]
    with np.errstate(all="ignore"):
        if ref is None:
            ref = np.asarray(getattr(sc, name)(*[v.astype(np.float64) for v in a]))
        got = np.asarray(getattr(xp.special, name)(*[xp.asarray(v) for v in a])).astype(np.float64)
        err = np.abs(got - ref) / np.maximum(np.abs(ref), np.finfo(dtype).tiny) / np.finfo(dtype).eps
    same = (np.isnan(got) & np.isnan(ref)) | (got == ref)
    mism = ~same & ~(np.isfinite(got) & np.isfinite(ref))
    worst = np.flatnonzero(~same & ~mism)
    worst = worst[np.argsort(err[worst])[::-1][:5]]
    print(f"## {name} {np.dtype(dtype).name}: {int(mism.sum())} of {mism.size} points NaN/inf where the other is not;"
          f" the worst finite errors:")
    for i in list(np.flatnonzero(mism)[:40]) + list(worst):
        print("  ", [float(v[i]) for v in a], "got", repr(got[i]), "ref", repr(float(ref[i])), f"{err[i]:.3g} ulp")


def _beta_grid(dtype):
    return [v.astype(dtype) for v in D._grid(D._pos(-2, 3, 26), D._pos(-2, 3, 26))]


def _formed_reference(name, args):
    """tests/test_special.py's reference: the formed argument exact, each tail on its side"""
    import mpmath as mp
    from test_special import _distribution_reference
    mp.mp.dps = 40
    return np.array([float(_distribution_reference(mp, name, p)) for p in zip(*args)])


def _mp_ref(f, args):
    import mpmath as mp
    mp.mp.dps = 40
    return np.array([float(f(mp, *[mp.mpf(float(u)) for u in p])) for p in zip(*args)])


def main(names):
    for name in names:
        if name == "beta":
            _show("beta", [[1.0, 1.0, -2.0, 2.0, -2.0, -0.5, np.nan, -np.inf, -1.0, -1.0, -1.0, -3.0, 0.0, np.inf, -1.5],
                           [-1.0, -2.0, 1.0, -2.0, 2.0, -0.5, -1.0, np.nan, 0.0, -1.0, 0.5, 3.0, 4.0, np.inf, -2.5]],
                  np.float64)
            for dtype in (np.float32, np.float64):
                g = _beta_grid(dtype)
                _show("beta", g, dtype, _mp_ref(lambda mp, a, b: mp.beta(a, b), g))
        elif name == "formed":
            for dtype in (np.float32, np.float64):
                for f in ("gdtr", "gdtrc", "stdtr", "fdtr", "fdtrc"):
                    args = [np.asarray(v, dtype=dtype) for v in D.MULTI[f]]
                    keep = np.all([np.isfinite(v) for v in args], axis=0)
                    args = [v[keep] for v in args]
                    _show(f, args, dtype, _formed_reference(f, args))
        if name == "lpmv":
            for dtype in (np.float64, np.float32):
                _show("lpmv", _lpmv_grid(), dtype)
        elif name == "rgamma":
            import mpmath as mp
            mp.mp.dps = 40
            (x,) = _rgamma_grid()
            ref = []
            for v in x:
                r = 1 / mp.gamma(mp.mpf(float(v)))
                ref.append(float(r) if abs(r) < np.finfo(np.float64).max else float(mp.sign(r)) * np.inf)
            _show("rgamma", [x], np.float64, np.array(ref))


if __name__ == "__main__":
    main(sys.argv[1:] or ["lpmv", "rgamma"])
