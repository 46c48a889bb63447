"""Pure-WGSL special functions for f32 and f64 (``LIBRARY``, ``OPS``): the kernels
behind ``wgarray.special`` that do not compose well from namespace ops.

Each ``{T}_{name}`` follows SciPy's semantics for special values and domains
(checked against ``scipy.special`` in tests/test_special.py). One template per
algorithm serves both types, as in ``realmath``; they call realmath's ``{T}_exp``,
``{T}_log``, ... (never the WGSL builtins, which do not take f64 on Vulkan), and the
same rules hold: NaN and inf found at the bit level, no reliance on FMA.

Algorithms
----------
* erf / erfc / erfcx: erf(x) = x P(x^2) for |x| < 0.5; otherwise erfc(x) =
  exp(-x^2) erfcx(x) with erfcx a Chebyshev fit on [0.5, 2], [2, 4], [4, 8] and
  x erfcx(x) as a function of 64 / x^2 beyond. exp(-x^2) is exp(-h^2) exp(-(x-h)(x+h))
  with h = x rounded to a few bits, so that h^2 is exact (x^2 rounded would cost
  x^2 ulp in the tail).
* ndtri / erfinv: Halley's iteration on ndtr / erf / erfc (cubic convergence) from
  Abramowitz & Stegun 26.2.23 or the Maclaurin series; the residual is taken on the
  side (erf or erfc) where it is accurate.
* gammaln / gamma: shifted into [1.5, 2.5], where lgamma(2 + v) = v F(v) with F a
  Chebyshev fit (so the zeros at 1 and 2 keep their relative accuracy); Stirling's
  series from 8 on; reflection below 0.
* digamma: psi(x) = (x - x0) G(x) on [1, 2] (x0 its root, as hi + lo), recurrence
  below, recurrence and the asymptotic series above.
* gammainc / gammaincc: the power series (x < a + 1) or Legendre's continued
  fraction (modified Lentz), with the prefactor x^a e^-x / Gamma(a) written as
  sqrt(a / 2 pi) exp(a log1pmx((x - a) / a) - S(a)) for a >= 8, S the Stirling
  correction, which avoids the cancellation of a log x - x - lgamma(a).
* betainc: the continued fraction of Numerical Recipes (modified Lentz), on the side
  of x that converges; betaln through Stirling differences when an argument is large.
* i0e / i1e: Chebyshev fits of i0e(x), i1e(x) / x on [0, 8] and of sqrt(x) i_e(x)
  as functions of 8 / x beyond.
Loops are bounded (``$MAXIT`` terms), so an invocation never runs long on any device.
"""
from __future__ import annotations

import re
from string import Template

from . import special_coeffs as C
from .snippets import Snippet

_K = {
    "f64": dict(EPS="1.1102230246251565e-16", TINY="1e-300", SPLIT="4096.0", ERFC_BIG="26.641747557046327",
                ERF_ONE="6.0", GAMMA_MAX="171.62437695630272", ERFCX_NEG="-26.7", MAXIT="2000",
                HUGE="1e300"),
    "f32": dict(EPS="5.960464477539063e-08", TINY="1e-30", SPLIT="64.0", ERFC_BIG="10.1",
                ERF_ONE="4.0", GAMMA_MAX="35.04", ERFCX_NEG="-9.4", MAXIT="500", HUGE="1e30"),
}

_FITS = ("ERF_SMALL", "ERFCX_A", "ERFCX_B", "ERFCX_C", "ERFCX_D", "LGAMMA_2", "DIGAMMA_1",
         "I0E_A", "I1E_A", "I0E_B", "I1E_B")


def _clenshaw(T: str, name: str, coeffs, eps: float) -> str:
    """fn {T}_cheb_{name}(u): sum c_k T_k(u), unrolled; terms below eps dropped."""
    big = max(abs(c) for c in coeffs)
    cs = list(coeffs)
    while len(cs) > 2 and abs(cs[-1]) < eps * big:
        cs.pop()
    lines = [f"fn {T}_cheb_{name.lower()}(u: {T}) -> {T} {{",
             f"    let u2 = 2.0 * u;", f"    var b1: {T} = 0.0;", f"    var b2: {T} = 0.0;",
             f"    var b0: {T} = 0.0;"]
    for c in reversed(cs[1:]):
        lines.append(f"    b0 = u2 * b1 - b2 + {c!r}; b2 = b1; b1 = b0;")
    lines.append(f"    return u * b1 - b2 + {cs[0]!r};")
    lines.append("}")
    return "\n".join(lines)


_GENERIC = {
    # exp(-x^2) for x >= 0 without the rounding of x^2
    "expmx2": """
fn ${T}_expmx2(x: $T) -> $T {
    let h = floor(x * $SPLIT) / $SPLIT;
    let l = x - h;
    return ${T}_exp(-h * h) * ${T}_exp(-l * (x + h));
}""",
    # exp(-x^2 / 2), the same way (ndtr's tail from x itself, not from the rounded x / sqrt 2)
    "expmhx2": """
fn ${T}_expmhx2(x: $T) -> $T {
    let h = floor(x * $SPLIT) / $SPLIT;
    let l = x - h;
    return ${T}_exp(-0.5 * h * h) * ${T}_exp(-0.5 * l * (x + h));
}""",
    # erfcx for x >= 0.5 (inf included)
    "erfcx_pos": """
fn ${T}_erfcx_pos(x: $T) -> $T {
    if (x < 2.0) { return ${T}_cheb_erfcx_a((x - 1.25) / 0.75); }
    if (x < 4.0) { return ${T}_cheb_erfcx_b(x - 3.0); }
    if (x < 8.0) { return ${T}_cheb_erfcx_c((x - 6.0) * 0.5); }
    var t: $T = 0.0;
    if (x < $HUGE) { t = 64.0 / (x * x); }
    return ${T}_cheb_erfcx_d(2.0 * t - 1.0) / x;
}""",
    "erf": """
fn ${T}_erf(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    let a = abs(x);
    if (a < 0.5) { return x * ${T}_cheb_erf_small(8.0 * x * x - 1.0); }
    if (a > $ERF_ONE) { return ${T}_copysign(1.0, x); }
    let r = 1.0 - ${T}_expmx2(a) * ${T}_erfcx_pos(a);
    return select(r, -r, x < 0.0);
}""",
    "erfc": """
fn ${T}_erfc(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    let a = abs(x);
    if (a < 0.5) { return 1.0 - x * ${T}_cheb_erf_small(8.0 * x * x - 1.0); }
    var r: $T = 0.0;
    if (a < $ERFC_BIG) { r = ${T}_expmx2(a) * ${T}_erfcx_pos(a); }
    return select(r, 2.0 - r, x < 0.0);
}""",
    "erfcx": """
fn ${T}_erfcx(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (x >= 0.5) { return ${T}_erfcx_pos(x); }
    if (x < $ERFCX_NEG) { return ${T}_inf(); }
    if (x > -0.5) { return ${T}_exp(x * x) * (1.0 - x * ${T}_cheb_erf_small(8.0 * x * x - 1.0)); }
    // erfcx(x) = 2 exp(x^2) - erfcx(-x)
    return 2.0 / ${T}_expmx2(-x) - ${T}_erfcx_pos(-x);
}""",
    "ndtr": """
fn ${T}_ndtr(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    let t = x * 0.7071067811865476;
    if (abs(t) < 0.5) { return 0.5 + 0.5 * ${T}_erf(t); }
    var y: $T = 0.0;
    if (abs(t) < $ERFC_BIG) { y = 0.5 * ${T}_expmhx2(abs(x)) * ${T}_erfcx_pos(abs(t)); }
    return select(y, 1.0 - y, t > 0.0);
}""",
    "log_ndtr": """
fn ${T}_log_ndtr(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (x > 0.0) { return ${T}_log1p(-${T}_ndtr(-x)); }
    if (x > -5.0) { return ${T}_log(${T}_ndtr(x)); }
    // log(erfc(t) / 2) = log(erfcx(t) / 2) - t^2: no underflow in the far tail
    let t = -x * 0.7071067811865476;
    return ${T}_log(0.5 * ${T}_erfcx_pos(t)) - 0.5 * x * x;
}""",
    # |z| where ndtr(-|z|) = p, 0 < p <= 0.5
    "ndtri_lower": """
fn ${T}_ndtri_lower(p: $T) -> $T {
    let t = sqrt(-2.0 * ${T}_log(p));
    var z = t - (2.515517 + t * (0.802853 + t * 0.010328))
              / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
    for (var i = 0; i < 3; i = i + 1) {
        // g(z) = ndtr(-z) - p, g' = -phi(z), g''/g' = -z: Halley's step
        let phi = ${T}_expmx2(z * 0.7071067811865476) * 0.3989422804014327;
        // the residual from erf near p = 1/2, where 0.5 - p is exact and erfc would cancel
        var g = 0.5 * ${T}_erfc(z * 0.7071067811865476) - p;
        if (p > 0.25) { g = (0.5 - p) - 0.5 * ${T}_erf(z * 0.7071067811865476); }
        let r = g / (-phi);
        z = z - r / (1.0 + 0.5 * z * r);
    }
    return z;
}""",
    "ndtri": """
fn ${T}_ndtri(p: $T) -> $T {
    if (${T}_isnan(p) || p < 0.0 || p > 1.0) { return ${T}_nan(); }
    if (p == 0.0) { return -${T}_inf(); }
    if (p == 1.0) { return ${T}_inf(); }
    if (p == 0.5) { return 0.0; }
    if (p > 0.5) { return ${T}_ndtri_lower(1.0 - p); }
    return -${T}_ndtri_lower(p);
}""",
    "erfinv": """
fn ${T}_erfinv(y: $T) -> $T {
    if (${T}_isnan(y) || y < -1.0 || y > 1.0) { return ${T}_nan(); }
    if (y == 1.0) { return ${T}_inf(); }
    if (y == -1.0) { return -${T}_inf(); }
    if (y == 0.0) { return y; }
    let a = abs(y);
    var x: $T;
    if (a < 0.5) {
        // erf(x) = a from the Maclaurin series of erfinv, residual on erf
        let s = a * a;
        x = 0.886226925452758 * a * (1.0 + s * (0.2617993877991494 + s * 0.14393173084921979));
        for (var i = 0; i < 3; i = i + 1) {
            let r = (${T}_erf(x) - a) / (1.1283791670955126 * ${T}_expmx2(x));
            x = x - r / (1.0 + x * r);
        }
    } else {
        // erfc(x) = q = 1 - a (exact), residual on erfc
        let q = 1.0 - a;
        x = ${T}_ndtri_lower(0.5 * q) * 0.7071067811865476;
        for (var i = 0; i < 2; i = i + 1) {
            let r = (q - ${T}_erfc(x)) / (1.1283791670955126 * ${T}_expmx2(x));
            x = x - r / (1.0 + x * r);
        }
    }
    return ${T}_copysign(x, y);
}""",
    # |sin(pi x)| and sin(pi x) for finite x, reduced exactly
    "sinpi": """
fn ${T}_sinpi(x: $T) -> $T {
    let k = round(x);
    let r = x - k;
    let s = ${T}_sin(3.141592653589793 * r);
    let odd = (k - 2.0 * floor(0.5 * k)) != 0.0;
    return select(s, -s, odd);
}""",
    # Stirling's correction lgamma(x) - ((x - 0.5) log x - x + log(2 pi) / 2), x >= 8
    "stirling_s": """
fn ${T}_stirling_s(x: $T) -> $T {
    let w = 1.0 / x;
    let z = w * w;
    return w * (0.08333333333333333 + z * (-0.002777777777777778 + z * (0.0007936507936507937
        + z * (-0.0005952380952380952 + z * (0.0008417508417508417 + z * (-0.0019175269175269176
        + z * (0.00641025641025641 + z * -0.029550653594771242)))))));
}""",
    # lgamma(x) for x > 0 finite
    "lgamma_pos": """
fn ${T}_lgamma_pos(x: $T) -> $T {
    if (x >= 8.0) {
        return (x - 0.5) * (${T}_log(x) - 1.0) + 0.4189385332046727 + ${T}_stirling_s(x);
    }
    var v: $T;
    var acc: $T = 0.0;
    if (x < 0.5) {
        acc = -${T}_log(x) - ${T}_log1p(x);
        v = x;
    } else if (x < 1.5) {
        acc = -${T}_log1p(x - 1.0);
        v = x - 1.0;
    } else if (x <= 2.5) {
        v = x - 2.0;
    } else {
        var z = x;
        var p: $T = 1.0;
        loop {
            if (z <= 2.5) { break; }
            z = z - 1.0;
            p = p * z;
        }
        acc = ${T}_log(p);
        v = z - 2.0;
    }
    return v * ${T}_cheb_lgamma_2(2.0 * v) + acc;
}""",
    "gammaln": """
fn ${T}_gammaln(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (${T}_isinf(x)) { return x; }
    if (x > 0.0) { return ${T}_lgamma_pos(x); }
    if (x == floor(x)) { return ${T}_inf(); }
    // log|Gamma(x)| = log(pi / |sin(pi x)|) - lgamma(1 - x)
    return ${T}_log(3.141592653589793 / abs(${T}_sinpi(x))) - ${T}_lgamma_pos(1.0 - x);
}""",
    # Gamma(x) for 0 < x <= GAMMA_MAX
    "gamma_pos": """
fn ${T}_gamma_pos(x: $T) -> $T {
    if (x >= 8.0) {
        let v = ${T}_pow(x, (x - 0.5) * 0.5);
        return 2.5066282746310002 * v * (v * ${T}_exp(-x)) * ${T}_exp(${T}_stirling_s(x));
    }
    var v: $T;
    var f: $T = 1.0;
    if (x < 0.5) {
        f = 1.0 / (x * (x + 1.0));
        v = x;
    } else if (x < 1.5) {
        f = 1.0 / x;
        v = x - 1.0;
    } else if (x <= 2.5) {
        v = x - 2.0;
    } else {
        var z = x;
        loop {
            if (z <= 2.5) { break; }
            z = z - 1.0;
            f = f * z;
        }
        v = z - 2.0;
    }
    return f * ${T}_exp(v * ${T}_cheb_lgamma_2(2.0 * v));
}""",
    "gamma": """
fn ${T}_gamma(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (${T}_isinf(x)) { return select(${T}_nan(), x, x > 0.0); }
    if (x == 0.0) { return select(${T}_inf(), -${T}_inf(), ${T}_signbit(x)); }
    if (x > 0.0) {
        if (x > $GAMMA_MAX) { return ${T}_inf(); }
        return ${T}_gamma_pos(x);
    }
    if (x == floor(x)) { return ${T}_nan(); }
    if (-x > $GAMMA_MAX) { return 0.0 * ${T}_sinpi(x); }
    if (1.0 - x > $GAMMA_MAX) {
        // Gamma(1 - x) = -x Gamma(-x) would overflow; the quotient may not
        return 3.141592653589793 / ((${T}_sinpi(x) * -x) * ${T}_gamma_pos(-x));
    }
    return 3.141592653589793 / (${T}_sinpi(x) * ${T}_gamma_pos(1.0 - x));
}""",
    "rgamma": """
fn ${T}_rgamma(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (${T}_isinf(x)) { return 0.0; }
    if (x == 0.0) { return x; }
    if (x > 0.0) {
        if (x > $GAMMA_MAX) { return 0.0; }
        return 1.0 / ${T}_gamma_pos(x);
    }
    if (x == floor(x)) { return 0.0; }
    if (-x > $GAMMA_MAX) { return ${T}_sinpi(x) * ${T}_inf(); }
    if (1.0 - x > $GAMMA_MAX) { return (${T}_sinpi(x) * -x) * ${T}_gamma_pos(-x) * 0.3183098861837907; }
    return ${T}_sinpi(x) * ${T}_gamma_pos(1.0 - x) * 0.3183098861837907;
}""",
    "gammasgn": """
fn ${T}_gammasgn(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (x > 0.0) { return 1.0; }
    if (x == 0.0) { return select($T(1.0), $T(-1.0), ${T}_signbit(x)); }
    if (${T}_isinf(x) || x == floor(x)) { return ${T}_nan(); }
    let k = floor(x);
    return select($T(1.0), $T(-1.0), (k - 2.0 * floor(0.5 * k)) != 0.0);
}""",
    # digamma for x > 0 finite
    "digamma_pos": """
fn ${T}_digamma_pos(x: $T) -> $T {
    var z = x;
    var acc: $T = 0.0;
    if (z < 1.0) {
        acc = -1.0 / z;
        z = z + 1.0;
    }
    if (z <= 2.0) {
        let d = ${T}_launder(z - $ROOT_HI) - $ROOT_LO;
        return acc + d * ${T}_cheb_digamma_1(2.0 * z - 3.0);
    }
    loop {
        if (z >= 10.0) { break; }
        acc = acc - 1.0 / z;
        z = z + 1.0;
    }
    let w = 1.0 / (z * z);
    let s = w * (0.08333333333333333 + w * (-0.008333333333333333 + w * (0.003968253968253968
        + w * (-0.004166666666666667 + w * (0.007575757575757576 + w * (-0.021092796092796094
        + w * 0.08333333333333333))))));
    return acc + ${T}_log(z) - 0.5 / z - s;
}""",
    "digamma": """
fn ${T}_digamma(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    if (${T}_isinf(x)) { return select(${T}_nan(), x, x > 0.0); }
    if (x == 0.0) { return select(-${T}_inf(), ${T}_inf(), ${T}_signbit(x)); }
    if (x > 0.0) { return ${T}_digamma_pos(x); }
    if (x == floor(x)) { return ${T}_nan(); }
    // psi(x) = psi(1 - x) - pi / tan(pi x)
    let r = x - round(x);
    return ${T}_digamma_pos(1.0 - x) - 3.141592653589793 / ${T}_tan(3.141592653589793 * r);
}""",
    # log(1 + d) - d for d > -1
    "log1pmx": """
fn ${T}_log1pmx(d: $T) -> $T {
    if (abs(d) > 0.5) { return ${T}_log1p(d) - d; }
    var p = d;
    var s: $T = 0.0;
    for (var k = 2; k < 80; k = k + 1) {
        p = -p * d;
        let t = p / $T(k);
        s = s + t;
        if (abs(t) <= $EPS * abs(s)) { break; }
    }
    return s;
}""",
    # x^a e^-x / Gamma(a) for a > 0, x > 0 finite
    "igam_fac": """
fn ${T}_igam_fac(a: $T, x: $T) -> $T {
    if (a < 8.0) { return ${T}_exp(a * ${T}_log(x) - x - ${T}_lgamma_pos(a)); }
    // a log(x / a) + a - x by log1pmx where x is near a (the cancelling part), directly
    // elsewhere (where 1 + d would round away the digits of x / a)
    let d = (x - a) / a;
    var e: $T;
    if (abs(d) < 0.5) { e = a * ${T}_log1pmx(d); } else { e = a * ${T}_log(x / a) + (a - x); }
    return sqrt(a * 0.15915494309189535) * ${T}_exp(e - ${T}_stirling_s(a));
}""",
    # lgamma(1 + a) for |a| <= 0.5, exact for small a
    "lgamma1p": """
fn ${T}_lgamma1p(a: $T) -> $T {
    if (abs(a) > 0.5) { return ${T}_lgamma_pos(1.0 + a); }
    return a * ${T}_cheb_lgamma_2(2.0 * a) - ${T}_log1p(a);
}""",
    # Q(a, x) for a < 1, x < 1.5 by its own series (1 - P would cancel)
    "igamc_series": """
fn ${T}_igamc_series(a: $T, x: $T) -> $T {
    var fac: $T = 1.0;
    var s: $T = 0.0;
    for (var n = 1; n < 60; n = n + 1) {
        fac = -fac * x / $T(n);
        let t = fac / (a + $T(n));
        s = s + t;
        if (abs(t) <= $EPS * abs(s)) { break; }
    }
    let lx = ${T}_log(x);
    return -${T}_expm1(a * lx - ${T}_lgamma1p(a)) - ${T}_exp(a * lx - ${T}_lgamma_pos(a)) * s;
}""",
    # (P, Q) of the regularized incomplete gamma function, a > 0, x > 0 finite
    "igam_pq": """
fn ${T}_igam_pq(a: $T, x: $T) -> vec2<$T> {
    let fac = ${T}_igam_fac(a, x);
    if (x < a + 1.0) {
        var term: $T = 1.0;
        var s: $T = 1.0;
        var n = a;
        for (var i = 0; i < $MAXIT; i = i + 1) {
            n = n + 1.0;
            term = term * x / n;
            s = s + term;
            if (term <= $EPS * s) { break; }
        }
        let p = min(fac / a * s, 1.0);
        if (a < 1.0 && x < 1.5) { return vec2<$T>(p, ${T}_igamc_series(a, x)); }
        return vec2<$T>(p, 1.0 - p);
    }
    var b = x + 1.0 - a;
    var c: $T = 1.0 / $TINY;
    var d = 1.0 / b;
    var h = d;
    for (var i = 1; i < $MAXIT; i = i + 1) {
        let fi = $T(i);
        let an = -fi * (fi - a);
        b = b + 2.0;
        d = an * d + b;
        if (abs(d) < $TINY) { d = $TINY; }
        c = b + an / c;
        if (abs(c) < $TINY) { c = $TINY; }
        d = 1.0 / d;
        let del = d * c;
        h = h * del;
        if (abs(del - 1.0) <= $EPS) { break; }
    }
    let q = min(fac * h, 1.0);
    return vec2<$T>(1.0 - q, q);
}""",
    # the special values of gammainc (which = 0) and gammaincc (which = 1)
    "igam": """
fn ${T}_igam(a: $T, x: $T, which: i32) -> $T {
    if (${T}_isnan(a) || ${T}_isnan(x) || a < 0.0 || x < 0.0) { return ${T}_nan(); }
    var p: $T;
    if (a == 0.0) {
        if (x == 0.0) { return ${T}_nan(); }
        p = 1.0;
    } else if (x == 0.0) {
        p = 0.0;
    } else if (${T}_isinf(a)) {
        if (${T}_isinf(x)) { return ${T}_nan(); }
        p = 0.0;
    } else if (${T}_isinf(x)) {
        p = 1.0;
    } else {
        let pq = ${T}_igam_pq(a, x);
        return select(pq.x, pq.y, which == 1);
    }
    return select(p, 1.0 - p, which == 1);
}""",
    "gammainc": """
fn ${T}_gammainc(a: $T, x: $T) -> $T { return ${T}_igam(a, x, 0); }""",
    "gammaincc": """
fn ${T}_gammaincc(a: $T, x: $T) -> $T { return ${T}_igam(a, x, 1); }""",
    # log|B(a, b)|
    "betaln": """
fn ${T}_betaln(a0: $T, b0: $T) -> $T {
    if (${T}_isnan(a0) || ${T}_isnan(b0)) { return ${T}_nan(); }
    let a = min(a0, b0);
    let b = max(a0, b0);
    if (a > 0.0 && b >= 8.0) {
        if (${T}_isinf(b)) { return -${T}_inf(); }
        // lgamma(b) - lgamma(a + b) by Stirling: no cancellation of two large values
        let lb = (b - 0.5) * (-${T}_log1p(a / b)) - a * ${T}_log(a + b) + a
                 + ${T}_stirling_s(b) - ${T}_stirling_s(a + b);
        if (a >= 8.0) {
            return (a - 0.5) * ${T}_log(a) - a + 0.9189385332046728 + ${T}_stirling_s(a) + lb;
        }
        return ${T}_lgamma_pos(a) + lb;
    }
    return ${T}_gammaln(a) + ${T}_gammaln(b) - ${T}_gammaln(a + b);
}""",
    "beta": """
fn ${T}_beta(a: $T, b: $T) -> $T {
    if (${T}_isnan(a) || ${T}_isnan(b)) { return ${T}_nan(); }
    if (a > 0.0 && b > 0.0) {
        if (a + b < 20.0 && min(a, b) > 1e-15) {
            return ${T}_gamma_pos(a) * ${T}_gamma_pos(b) / ${T}_gamma_pos(a + b);
        }
        return ${T}_exp(${T}_betaln(a, b));
    }
    if ((a <= 0.0 && a == floor(a)) || (b <= 0.0 && b == floor(b))) { return ${T}_inf(); }
    let s = ${T}_gammasgn(a) * ${T}_gammasgn(b) * ${T}_gammasgn(a + b);
    return s * ${T}_exp(${T}_betaln(a, b));
}""",
    # the continued fraction of I_x(a, b) / front, Lentz
    "betacf": """
fn ${T}_betacf(a: $T, b: $T, x: $T) -> $T {
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    var c: $T = 1.0;
    var d = 1.0 - qab * x / qap;
    if (abs(d) < $TINY) { d = $TINY; }
    d = 1.0 / d;
    var h = d;
    for (var i = 1; i < $MAXIT; i = i + 1) {
        let m = $T(i);
        let m2 = 2.0 * m;
        var aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if (abs(d) < $TINY) { d = $TINY; }
        c = 1.0 + aa / c;
        if (abs(c) < $TINY) { c = $TINY; }
        d = 1.0 / d;
        h = h * d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if (abs(d) < $TINY) { d = $TINY; }
        c = 1.0 + aa / c;
        if (abs(c) < $TINY) { c = $TINY; }
        d = 1.0 / d;
        let del = d * c;
        h = h * del;
        if (abs(del - 1.0) <= $EPS) { break; }
    }
    return h;
}""",
    "betainc": """
fn ${T}_betainc(a: $T, b: $T, x: $T) -> $T {
    if (${T}_isnan(a) || ${T}_isnan(b) || ${T}_isnan(x)) { return ${T}_nan(); }
    if (a < 0.0 || b < 0.0 || x < 0.0 || x > 1.0 || (a == 0.0 && b == 0.0)) { return ${T}_nan(); }
    if (${T}_isinf(a) && ${T}_isinf(b)) { return ${T}_nan(); }
    if (a == 0.0 || ${T}_isinf(b)) { return select($T(1.0), $T(0.0), x == 0.0); }
    if (b == 0.0 || ${T}_isinf(a)) { return select($T(0.0), $T(1.0), x == 1.0); }
    if (x == 0.0) { return 0.0; }
    if (x == 1.0) { return 1.0; }
    let lx = ${T}_log(x);
    let l1x = ${T}_log1p(-x);
    let lbeta = ${T}_betaln(a, b);
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return ${T}_exp(a * lx + b * l1x - lbeta) * ${T}_betacf(a, b, x) / a;
    }
    return 1.0 - ${T}_exp(a * lx + b * l1x - lbeta) * ${T}_betacf(b, a, 1.0 - x) / b;
}""",
    "i0e": """
fn ${T}_i0e(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    let a = abs(x);
    if (a <= 8.0) { return ${T}_cheb_i0e_a(a * 0.25 - 1.0); }
    return ${T}_cheb_i0e_b(16.0 / a - 1.0) / sqrt(a);
}""",
    "i1e": """
fn ${T}_i1e(x: $T) -> $T {
    if (${T}_isnan(x)) { return x; }
    let a = abs(x);
    if (a <= 8.0) { return x * ${T}_cheb_i1e_a(a * 0.25 - 1.0); }
    return ${T}_copysign(${T}_cheb_i1e_b(16.0 / a - 1.0) / sqrt(a), x);
}""",
    "i0": """
fn ${T}_i0(x: $T) -> $T {
    if (${T}_isinf(x)) { return ${T}_nan(); }
    let a = abs(x);
    let e = ${T}_exp(0.5 * a);
    return ${T}_i0e(x) * e * e;
}""",
    "i1": """
fn ${T}_i1(x: $T) -> $T {
    if (${T}_isinf(x)) { return ${T}_nan(); }
    let a = abs(x);
    let e = ${T}_exp(0.5 * a);
    return ${T}_i1e(x) * e * e;
}""",
}

# op name -> arity; every one lowers to {T}_{name}(...) for real floating types
OPS = {"erf": 1, "erfc": 1, "erfcx": 1, "ndtr": 1, "log_ndtr": 1, "ndtri": 1, "erfinv": 1,
       "gammaln": 1, "gamma": 1, "rgamma": 1, "gammasgn": 1, "digamma": 1,
       "gammainc": 2, "gammaincc": 2, "betaln": 2, "beta": 2, "betainc": 3,
       "i0": 1, "i0e": 1, "i1": 1, "i1e": 1}

TABLE = {name: {"float": "{T}_" + name + "(" + ", ".join("{" + "abc"[i] + "}" for i in range(n)) + ")"}
         for name, n in OPS.items()}


def _build(T: str) -> dict[str, str]:
    subs = dict(_K[T], T=T, ROOT_HI=repr(C.DIGAMMA_ROOT_HI), ROOT_LO=repr(C.DIGAMMA_ROOT_LO))
    eps = 1e-20 if T == "f64" else 1e-10
    out = {f"cheb_{name.lower()}": _clenshaw(T, name, getattr(C, name), eps) + "\n" for name in _FITS}
    for name, text in _GENERIC.items():
        out[name] = Template(text).substitute(subs).strip() + "\n"
    return out


def _make_library() -> dict[str, Snippet]:
    from .realmath import LIBRARY as REAL

    lib: dict[str, Snippet] = {}
    for T in ("f32", "f64"):
        full = {f"{T}_{n}": s for n, s in _build(T).items()}
        for fname, src in full.items():
            called = re.findall(r"\b(f32_\w+|f64_\w+)\s*\(", src)
            deps = tuple(dict.fromkeys(c for c in called if c != fname and (c in full or c in REAL)))
            lib[fname] = Snippet(src, deps)
    return lib


LIBRARY: dict[str, Snippet] = _make_library()
