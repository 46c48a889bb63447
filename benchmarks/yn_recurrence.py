"""yn's forward recurrence y_{k+1} = (2k / x) y_k - y_{k-1} in float32, emulated in NumPy
from the correctly rounded y0 and y1: each step rounded (as lavapipe computes it), each
step with the product and the difference fused into one rounding (as a device that
contracts to FMA may), and without rounding in the steps (the double-length recurrence
of ``$T_yn``). Errors in units of max(|Y_n|, sqrt(2 / (pi x))) against SciPy's float64
yn; with ``--device``, wgarray's yn on the default device beside them.

    python3 benchmarks/yn_recurrence.py [--device]
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import scipy.special as ss

F32 = np.float32


def recur(n_max, x, mode):
    """Y_2 .. Y_n_max at float32 x (arrays of shape (n_max + 1, len(x)))."""
    x32 = x.astype(F32)
    xd = x32.astype(np.float64)
    out = np.empty((n_max + 1, x.size))
    ym = ss.y0(xd).astype(F32)
    y = ss.y1(xd).astype(F32)
    out[0], out[1] = ym, y
    if mode == "exact":
        ym, y = ym.astype(np.float64), y.astype(np.float64)
    for k in range(1, n_max):
        with np.errstate(all="ignore"):
            if mode == "rounded":
                c = F32(2 * k) / x32
                yp = (c * y).astype(F32) - ym
            elif mode == "fused":
                c = (F32(2 * k) / x32).astype(np.float64)
                yp = (c * y.astype(np.float64) - ym.astype(np.float64)).astype(F32)
            else:
                yp = (2.0 * k / xd) * y - ym
        ym, y = y, yp
        out[k + 1] = y
    return out


def worst(got, n, x):
    xd = x.astype(F32).astype(np.float64)
    with np.errstate(all="ignore"):
        ref = ss.yn(n[:, None], xd[None, :]).astype(F32).astype(np.float64)
    amp = np.minimum(1.0, np.sqrt(2 / (np.pi * xd)))[None, :]
    with np.errstate(all="ignore"):
        got = got.astype(F32).astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.abs(got - ref) / np.maximum(np.abs(ref), amp)
    # within 2^4 of overflow the rounded recurrence's product c y_k overflows first
    fin = np.isfinite(ref) & (np.abs(ref) < 2.0 ** 124)
    e = np.where(fin, e, 0.0) / np.finfo(F32).eps
    i, j = np.unravel_index(np.argmax(e), e.shape)
    return e.max(), int(n[i]), float(xd[j])


def main():
    n_max = 100
    x = np.concatenate([np.linspace(0.05, 40, 800), np.logspace(-3, 1.6, 200)])
    n = np.arange(n_max + 1, dtype=np.float64)
    rows = {mode: recur(n_max, x, mode) for mode in ("rounded", "fused", "exact")}
    if "--device" in sys.argv:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
        import wgarray as xp
        nn, xx = np.meshgrid(n, x.astype(F32), indexing="ij")
        got = xp.special.yn(xp.asarray(nn.astype(F32)), xp.asarray(xx))
        rows["device"] = np.asarray(got).astype(np.float64)
    for mode, got in rows.items():
        err, wn, wx = worst(got[2:], n[2:], x)
        print(f"{mode:8s} worst {err:6.2f} ulp (n = {wn}, x = {wx:.6g})")


if __name__ == "__main__":
    main()
