"""Worst relative error of every wgarray.special function against scipy.special on
NumPy over tests/special_domains.py, float64 and float32 (f32 results against SciPy's
float64 values of the same float32 inputs). Prints the markdown table of docs/special.md.

    python3 benchmarks/special_accuracy.py [name ...]
"""
from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np
import scipy.special as ss

_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests")]
import special_domains as D  # noqa: E402

import wgarray as xp  # noqa: E402


def measure(name, args, dtype):
    a32 = [np.asarray(a, dtype=dtype) for a in args]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = np.asarray(getattr(ss, name)(*[a.astype(np.float64) for a in a32]))
        got = np.asarray(getattr(xp.special, name)(*[xp.asarray(a) for a in a32]))
        scale = D.ENVELOPE[name](*[a.astype(np.float64) for a in a32]) if name in D.ENVELOPE else None
    if dtype == np.float32:
        ref = ref.astype(np.float32)
    err, mism = D.max_rel_error(got, ref, dtype, scale)
    eps = np.finfo(dtype).eps
    return err / eps, mism


def main():
    dtypes = [np.float64, np.float32] if xp.__array_namespace_info__().default_dtypes()["real floating"] == xp.float64 else [np.float32]
    rows = []
    only = set(sys.argv[1:])
    for name, x in list(D.UNARY.items()) + list(D.MULTI.items()):
        if only and name not in only:
            continue
        args = [x] if name in D.UNARY else x
        specials = D.special_pairs(len(args), name)
        cells = []
        for dtype in dtypes:
            err, mism = measure(name, args, dtype)
            _, smism = measure(name, specials, dtype)
            cells.append(f"{err:.3g}" + ("" if mism + smism == 0 else f" ({mism + smism} NaN/inf differ)"))
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)


if __name__ == "__main__":
    main()
