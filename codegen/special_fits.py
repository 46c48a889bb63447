"""Chebyshev fits (mpmath) behind ``wgarray/_wgsl/specialmath.py``.

Maintenance tool, not installed: ``python3 codegen/special_fits.py`` rewrites
``wgarray/_wgsl/special_coeffs.py``. Each fit is a function of u in [-1, 1]; the
WGSL evaluates it with Clenshaw's recurrence (stable, unlike monomials on a shifted
interval). Coefficients are kept down to 1e-20 of the leading one.
"""
from __future__ import annotations

import pathlib
import struct

import mpmath as mp

mp.mp.dps = 40


def cheb(f, n=80):
    """Chebyshev coefficients c_0..c_{n-1} of f on [-1, 1] (c_0 already halved)."""
    nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / n) for j in range(n)]
    vals = [f(x) for x in nodes]
    coeffs = []
    for k in range(n):
        s = mp.fsum(vals[j] * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / n) for j in range(n))
        coeffs.append(2 * s / n)
    coeffs[0] /= 2
    big = max(abs(c) for c in coeffs)
    while abs(coeffs[-1]) < mp.mpf("1e-20") * big:
        coeffs.pop()
    return [float(c) for c in coeffs]


def lin(a, b):
    """u in [-1, 1] -> x in [a, b]."""
    a, b = mp.mpf(a), mp.mpf(b)
    return lambda u: (a + b) / 2 + (b - a) / 2 * u


def erfcx(x):
    return mp.exp(x * x) * mp.erfc(x)


ROOT = mp.findroot(mp.digamma, 1.46)

FITS = {}
# erf(x) = x * ERF_SMALL(x^2) for |x| <= 0.5 (s = x^2 in [0, 0.25])
FITS["ERF_SMALL"] = cheb(lambda u: (lambda s: mp.erf(mp.sqrt(s)) / mp.sqrt(s) if s else 2 / mp.sqrt(mp.pi))(lin(0, 0.25)(u)), 40)
# erfcx(x) on [0.5, 2], [2, 4], [4, 8]; x * erfcx(x) as a function of t = 64 / x^2 beyond 8
FITS["ERFCX_A"] = cheb(lambda u: erfcx(lin(0.5, 2)(u)))
FITS["ERFCX_B"] = cheb(lambda u: erfcx(lin(2, 4)(u)))
FITS["ERFCX_C"] = cheb(lambda u: erfcx(lin(4, 8)(u)))
FITS["ERFCX_D"] = cheb(lambda u: (lambda t: (8 / mp.sqrt(t)) * erfcx(8 / mp.sqrt(t)) if t else 1 / mp.sqrt(mp.pi))(lin(0, 1)(u)))
# lgamma(2 + v) / v for v in [-0.5, 0.5]
FITS["LGAMMA_2"] = cheb(lambda u: (lambda v: mp.loggamma(2 + v) / v if v else 1 - mp.euler)(lin(-0.5, 0.5)(u)))
# i0e(x), i1e(x) / x on [0, 8]; sqrt(x) i0e(x), sqrt(x) i1e(x) as functions of t = 8 / x beyond
FITS["I0E_A"] = cheb(lambda u: (lambda x: mp.besseli(0, x) * mp.exp(-x))(lin(0, 8)(u)))
FITS["I1E_A"] = cheb(lambda u: (lambda x: mp.besseli(1, x) * mp.exp(-x) / x if x else mp.mpf(1) / 2)(lin(0, 8)(u)))
# i1e(x) itself on [4, 8]: i1e(x) / x falls to 0.016 at 8, a 30-fold cancellation of the
# [0, 8] fit's coefficients there (14 ulp in float32); i1e is flat on [4, 8] (0.156 to 0.131)
FITS["I1E_M"] = cheb(lambda u: (lambda x: mp.besseli(1, x) * mp.exp(-x))(lin(4, 8)(u)))
# i0e on [4, 8] likewise (0.207 to 0.147, where the [0, 8] fit starts at 1: 3.5 ulp near 8)
FITS["I0E_M"] = cheb(lambda u: (lambda x: mp.besseli(0, x) * mp.exp(-x))(lin(4, 8)(u)))
FITS["I0E_B"] = cheb(lambda u: (lambda t: mp.sqrt(8 / t) * mp.besseli(0, 8 / t) * mp.exp(-8 / t) if t else 1 / mp.sqrt(2 * mp.pi))(lin(0, 1)(u)))
FITS["I1E_B"] = cheb(lambda u: (lambda t: mp.sqrt(8 / t) * mp.besseli(1, 8 / t) * mp.exp(-8 / t) if t else 1 / mp.sqrt(2 * mp.pi))(lin(0, 1)(u)))

# E1(x) + log(x) on [0, 1] (entire: -gamma + x - x^2 / 4 + ...)
FITS["E1_0"] = cheb(lambda u: (lambda x: mp.e1(x) + mp.log(x) if x else -mp.euler)(lin(0, 1)(u)), 40)
EI_ROOT = mp.findroot(mp.ei, 0.37)
# (Ei(x) - log(x / x0)) / (x - x0) on [0, 6], x0 the root of Ei: entire, so
# Ei = log(x / x0) + (x - x0) H keeps its relative accuracy at the root
FITS["EI_H"] = cheb(lambda u: (lambda x: (mp.ei(x) - mp.log(x / EI_ROOT)) / (x - EI_ROOT) if x else (mp.euler + mp.log(EI_ROOT)) / -EI_ROOT)(lin(0, 6)(u)))
# Ei near its root, per type: Ei(x) = Ei(h) + (x - h) F(x) on [0.2, 0.6], h the root
# rounded to the type (x - h is exact there; Ei(h) is a single constant, so there is no
# hi + lo pair that a shader compiler could join into one rounded value)
EI_RH = {"F64": mp.mpf(float(EI_ROOT)), "F32": mp.mpf(struct.unpack("f", struct.pack("f", float(EI_ROOT)))[0])}
for _t, _h in EI_RH.items():
    FITS["EI_R" + _t] = cheb(lambda u, h=_h: (lambda x: (mp.ei(x) - mp.ei(h)) / (x - h))(lin(0.2, 0.6)(u)))
# x e^-x Ei(x) on [6, 12], [12, 24], [24, 48]; as a function of t = 48 / x beyond
FITS["EI_A"] = cheb(lambda u: (lambda x: x * mp.exp(-x) * mp.ei(x))(lin(6, 12)(u)))
FITS["EI_B"] = cheb(lambda u: (lambda x: x * mp.exp(-x) * mp.ei(x))(lin(12, 24)(u)))
FITS["EI_C"] = cheb(lambda u: (lambda x: x * mp.exp(-x) * mp.ei(x))(lin(24, 48)(u)))
FITS["EI_D"] = cheb(lambda u: (lambda t: (48 / t) * mp.exp(-48 / t) * mp.ei(48 / t) if t else mp.mpf(1))(lin(0, 1)(u)))
# zeta(x) - 1 / (x - 1) on [0, 1] (entire: gamma at x = 1, 1/2 at x = 0): Riemann zeta
# for 0 <= x < 1 without the Euler-Maclaurin sum's cancellation there
FITS["ZETA_01"] = cheb(lambda u: (lambda x: mp.zeta(x) - 1 / (x - 1) if x != 1 else +mp.euler)(lin(0, 1)(u)), 40)
# -Li2(-w) / w on [-0.5, 0.5]: spence(1 + w) = -w R(w)
FITS["SPENCE_1"] = cheb(lambda u: (lambda w: -mp.polylog(2, -w) / w if w else mp.mpf(1))(lin(-0.5, 0.5)(u)))

# Bessel functions. J0 and J1 / x on [0, 8] through _root_fit (their zeros z there:
# relative accuracy at them); Y0 - (2 / pi) log(x) J0 and
# (Y1 - (2 / pi)(log(x) J1 - 1 / x)) / x on [0, 8] (entire)
J0Z = [mp.besseljzero(0, 1), mp.besseljzero(0, 2)]
J1Z = [mp.besseljzero(1, 1), mp.besseljzero(1, 2)]


def _f32(v):
    return mp.mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def _root_fit(f, zs, a, b):
    """Per type (F64, F32): the zeros zs rounded to it (h), f at them (c, tiny), the slope
    s of the line L through (h, c) (0 for one zero) and the fit of
    (f - L) / prod(x - h) on [a, b]. f = L + prod(x - h) R keeps relative accuracy at
    each zero with x - h exact, and no hi + lo pair for a shader compiler to fold."""
    out = {}
    for tag, rnd in (("F64", lambda v: mp.mpf(float(v))), ("F32", _f32)):
        hs = [rnd(z) for z in zs]
        cs = [f(h) for h in hs]
        slope = (cs[1] - cs[0]) / (hs[1] - hs[0]) if len(hs) > 1 else mp.mpf(0)

        def g(x, hs=hs, c0=cs[0], slope=slope):
            d = mp.mpf(1)
            for h in hs:
                d *= x - h
            return (f(x) - c0 - (x - hs[0]) * slope) / d
        out[tag] = (hs, cs[0], slope, cheb(lambda u, g=g: g(lin(a, b)(u))))
    return out


ROOT_FITS = {
    "DIGAMMA_R": _root_fit(mp.digamma, [ROOT], 1, 2),
    "J0_R": _root_fit(lambda t: mp.besselj(0, t), J0Z, 0, 8),
    "J1_R": _root_fit(lambda t: mp.besselj(1, t) / t, J1Z, 0, 8),
    # Y0 on [6, 8] about its zero 7.086 (see J0_M)
    "Y0_M": _root_fit(lambda t: mp.bessely(0, t), [mp.besselyzero(0, 3)], 6, 8),
}
for _name, _per in ROOT_FITS.items():
    for _tag, (_hs, _c, _s, _cs) in _per.items():
        FITS[_name + _tag] = _cs
# J0 and Y1 themselves on [6, 8] (neither has a zero there): near 8 the [0, 8] forms are
# small beside their fits' coefficients (J0's R times (x - h1)(x - h2) = 14; Y0 carries
# (2 / pi) log(x) J0): 9.5 (J0), 13 (Y0) and 5 (Y1) ulp of the amplitude in float32
FITS["J0_M"] = cheb(lambda u: mp.besselj(0, lin(6, 8)(u)))
FITS["Y1_M"] = cheb(lambda u: mp.bessely(1, lin(6, 8)(u)))
FITS["Y0_A"] = cheb(lambda u: (lambda x: mp.bessely(0, x) - 2 / mp.pi * mp.log(x) * mp.besselj(0, x) if x else 2 / mp.pi * (mp.euler - mp.log(2)))(lin(0, 8)(u)))
FITS["Y1_A"] = cheb(lambda u: (lambda x: (mp.bessely(1, x) - 2 / mp.pi * (mp.log(x) * mp.besselj(1, x) - 1 / x)) / x if x else mp.limit(lambda y: (mp.bessely(1, y) - 2 / mp.pi * (mp.log(y) * mp.besselj(1, y) - 1 / y)) / y, 0))(lin(0, 8)(u)))


def _pq(n, x):
    """P, x Q of the Hankel expansion: J_n + i Y_n = sqrt(2 / (pi x)) (P + i Q) e^{i chi}."""
    chi = x - (2 * n + 1) * mp.pi / 4
    h = (mp.besselj(n, x) + 1j * mp.bessely(n, x)) * mp.sqrt(mp.pi * x / 2) * mp.exp(-1j * chi)
    return h.real, x * h.imag


# P and x Q as functions of t = 64 / x^2 for x >= 8
FITS["P0_B"] = cheb(lambda u: (lambda t: _pq(0, 8 / mp.sqrt(t))[0] if t else mp.mpf(1))(lin(0, 1)(u)))
FITS["Q0_B"] = cheb(lambda u: (lambda t: _pq(0, 8 / mp.sqrt(t))[1] if t else mp.mpf(-1) / 8)(lin(0, 1)(u)))
FITS["P1_B"] = cheb(lambda u: (lambda t: _pq(1, 8 / mp.sqrt(t))[0] if t else mp.mpf(1))(lin(0, 1)(u)))
FITS["Q1_B"] = cheb(lambda u: (lambda t: _pq(1, 8 / mp.sqrt(t))[1] if t else mp.mpf(3) / 8)(lin(0, 1)(u)))
# K0 + log(x) I0 and (K1 - log(x) I1 - 1 / x) / x on [0, 1] (entire);
# sqrt(x) e^x K0, K1 on [1, 4] and as functions of t = 4 / x beyond
FITS["K0_A"] = cheb(lambda u: (lambda x: mp.besselk(0, x) + mp.log(x) * mp.besseli(0, x) if x else mp.log(2) - mp.euler)(lin(0, 1)(u)), 40)
FITS["K1_A"] = cheb(lambda u: (lambda x: (mp.besselk(1, x) - mp.log(x) * mp.besseli(1, x) - 1 / x) / x if x else mp.limit(lambda y: (mp.besselk(1, y) - mp.log(y) * mp.besseli(1, y) - 1 / y) / y, 0))(lin(0, 1)(u)), 40)
FITS["K0E_B"] = cheb(lambda u: (lambda x: mp.sqrt(x) * mp.exp(x) * mp.besselk(0, x))(lin(1, 4)(u)))
FITS["K1E_B"] = cheb(lambda u: (lambda x: mp.sqrt(x) * mp.exp(x) * mp.besselk(1, x))(lin(1, 4)(u)))
FITS["K0E_C"] = cheb(lambda u: (lambda t: mp.sqrt(4 / t) * mp.exp(4 / t) * mp.besselk(0, 4 / t) if t else mp.sqrt(mp.pi / 2))(lin(0, 1)(u)))
FITS["K1E_C"] = cheb(lambda u: (lambda t: mp.sqrt(4 / t) * mp.exp(4 / t) * mp.besselk(1, 4 / t) if t else mp.sqrt(mp.pi / 2))(lin(0, 1)(u)))


def _hilo(v):
    hi = float(v)
    return hi, float(v - mp.mpf(hi))


SCALARS = {
    "EI_ROOT_HI": _hilo(EI_ROOT)[0], "EI_ROOT_LO": _hilo(EI_ROOT)[1],
    "EI_RF64_H": float(EI_RH["F64"]), "EI_RF64_C": float(mp.ei(EI_RH["F64"])),
    "EI_RF32_H": float(EI_RH["F32"]), "EI_RF32_C": float(mp.ei(EI_RH["F32"])),
}
for _name, _per in ROOT_FITS.items():
    for _tag, (_hs, _c, _s, _cs) in _per.items():
        for _i, _h in enumerate(_hs):
            SCALARS[f"{_name}{_tag}_H{_i + 1}"] = float(_h)
        SCALARS[f"{_name}{_tag}_C"] = float(_c)
        SCALARS[f"{_name}{_tag}_S"] = float(_s)
# (2k)! / B_2k, k = 1..12: the Euler-Maclaurin tail of the Hurwitz zeta function
ZETA_EM = [float(mp.factorial(2 * k) / mp.bernoulli(2 * k)) for k in range(1, 13)]


def main():
    lines = ['"""Chebyshev coefficients for specialmath (generated by codegen/special_fits.py; do not edit)."""', ""]
    for name, cs in FITS.items():
        lines.append(f"{name} = [")
        lines += [f"    {c!r}," for c in cs]
        lines.append("]")
    for name, v in SCALARS.items():
        lines.append(f"{name} = {v!r}")
    lines.append("ZETA_EM = [" + ", ".join(repr(c) for c in ZETA_EM) + "]")
    out = pathlib.Path(__file__).resolve().parents[1] / "wgarray" / "_wgsl" / "special_coeffs.py"
    out.write_text("\n".join(lines) + "\n")
    for name, cs in FITS.items():
        print(name, len(cs), cs[-1])


if __name__ == "__main__":
    main()
