"""Complex math in pure WGSL: complex64 as ``vec2<f32>``, complex128 as ``vec2<f64>``.

``LIBRARY`` maps ``{C}_{name}`` (C in ``c64``, ``c128``) to a :class:`Snippet`.  Every
function takes and returns ``vec2<T>`` (``x`` = real, ``y`` = imaginary part), except
the predicates (``bool``) and ``abs`` (``T``).  The Array API standard's special cases
for complex operands are implemented (branch cuts as in C99 Annex G).

Both precisions are generated from one template per function (``_wgsl.template``'s
style): in the WGSL text below, ``$C`` is the complex prefix (``c64``/``c128``), ``$T``
the real type, ``$R`` the real prefix (``f32``/``f64``) and ``$NAME`` a per-precision
constant from ``_PARAMS``.  All real math goes through ``realmath``'s ``{R}_{name}``
functions (WGSL builtins such as ``exp`` return garbage for f64 on some drivers); a
snippet's dependencies are the functions of this library and of ``realmath`` that its
text calls.

Shader compilers apply "unsafe" float algebra (lavapipe folds ``x * 0.0`` to ``0`` and
``x - x`` to ``0`` even for inf/NaN), so special values are produced explicitly, never by
relying on IEEE propagation through such expressions, and NaN/inf are detected with the
bit-level ``isnan``/``isinf`` helpers only.
"""
from __future__ import annotations

import math

import numpy as np

from . import realmath
from .snippets import Snippet
from .template import library, substitute

__all__ = ["LIBRARY", "FUNCTIONS"]


def _lit(value: float, t: str) -> str:
    """A WGSL literal of type t for value (rounded to f32 first for f32)."""
    if t == "f32":
        value = float(np.float32(value))
    return f"{t}({value!r})"


def _params(t: str) -> dict[str, str]:
    fi = np.finfo(np.float32 if t == "f32" else np.float64)
    eps, tiny, big = float(fi.eps), float(fi.smallest_normal), float(fi.max)
    pio2_hi = float(np.float32(math.pi / 2)) if t == "f32" else math.pi / 2
    # pi/2 - pio2_hi: exact enough from the double pi/2 for f32; the true tail for f64.
    pio2_lo = (math.pi / 2 - pio2_hi) if t == "f32" else 6.123233995736766e-17
    half_bits = 24 if t == "f32" else 54  # even power of two for scaling tiny inputs
    k = {
        "INF": f"{t}(bitcast<f32>(0x7f800000u))",  # f32 inf/nan widen exactly to f64
        "NAN": f"{t}(bitcast<f32>(0x7fc00000u))",
        "EPS": _lit(eps, t),
        "MAX": _lit(big, t),
        "MIN": _lit(tiny, t),
        "PI": _lit(math.pi, t),
        "PIO2": _lit(math.pi / 2, t),
        "PIO4": _lit(math.pi / 4, t),
        "PIO2_HI": _lit(pio2_hi, t),
        "PIO2_LO": _lit(pio2_lo, t),
        "LN2": _lit(math.log(2), t),
        "LOG2E": _lit(1 / math.log(2), t),
        "LOG10E": _lit(1 / math.log(10), t),
        "E": _lit(math.e, t),
        # exp(a) overflows beyond ~ln(MAX); above EXP_SPLIT exp is evaluated as exp(a/2)^2.
        "EXP_SPLIT": _lit(88.0 if t == "f32" else 709.0, t),
        # tanh(x) rounds to 1 above this.
        "TANH_BIG": _lit(9.0 if t == "f32" else 22.0, t),
        "RECIP_EPS": _lit(1 / eps, t),
        "SQRT_3_EPS": _lit(math.sqrt(3 * eps), t),
        "SQRT_6_EPS": _lit(math.sqrt(6 * eps), t),
        "SQRT_MIN": _lit(2.0 ** (-63 if t == "f32" else -511), t),
        "FOUR_SQRT_MIN": _lit(2.0 ** (-61 if t == "f32" else -509), t),
        "QUARTER_SQRT_MAX": _lit(2.0 ** (61 if t == "f32" else 509), t),
        "SCALE_UP": _lit(2.0 ** half_bits, t),
        "SCALE_UP_SQRT_INV": _lit(2.0 ** (-half_bits // 2), t),
        "DIV_BE": _lit(2.0 / (eps * eps), t),
    }
    return k


_PARAMS = {
    "c64": {"C": "c64", "T": "f32", "R": "f32", **_params("f32")},
    "c128": {"C": "c128", "T": "f64", "R": "f64", **_params("f64")},
}

# name -> WGSL template.  Private helpers are named _$C_*.
_TEMPLATES: dict[str, str] = {}


def _def(name: str, source: str) -> None:
    _TEMPLATES[name] = source


# ---------------------------------------------------------------- trivial ops

_def("conj", """
fn $C_conj(z: vec2<$T>) -> vec2<$T> { return vec2<$T>(z.x, -z.y); }
""")

_def("negative", """
fn $C_negative(z: vec2<$T>) -> vec2<$T> { return -z; }
""")

_def("add", """
fn $C_add(x: vec2<$T>, y: vec2<$T>) -> vec2<$T> { return x + y; }
""")

_def("subtract", """
fn $C_subtract(x: vec2<$T>, y: vec2<$T>) -> vec2<$T> { return x - y; }
""")

_def("isnan", """
fn $C_isnan(z: vec2<$T>) -> bool { return $R_isnan(z.x) || $R_isnan(z.y); }
""")

_def("isinf", """
fn $C_isinf(z: vec2<$T>) -> bool { return $R_isinf(z.x) || $R_isinf(z.y); }
""")

_def("isfinite", """
fn $C_isfinite(z: vec2<$T>) -> bool { return $R_isfinite(z.x) && $R_isfinite(z.y); }
""")

_def("equal", """
fn $C_equal(x: vec2<$T>, y: vec2<$T>) -> bool {
    if ($C_isnan(x) || $C_isnan(y)) { return false; }
    return x.x == y.x && x.y == y.y;
}
""")

_def("not_equal", """
fn $C_not_equal(x: vec2<$T>, y: vec2<$T>) -> bool { return !$C_equal(x, y); }
""")

_def("round", """
fn $C_round(z: vec2<$T>) -> vec2<$T> { return vec2<$T>($R_round(z.x), $R_round(z.y)); }
""")

# ------------------------------------------------------------ helpers

# x == 0 for a value that may be NaN (ordered comparisons are not trusted with NaN).
_def("_iszero", """
fn _$C_iszero(x: $T) -> bool { return !$R_isnan(x) && x == $T(0.0); }
""")

# The NaN + NaN j result.
_def("_nan2", """
fn _$C_nan2() -> vec2<$T> { return vec2<$T>($NAN, $NAN); }
""")

# ------------------------------------------------------------ abs, multiply, divide

_def("abs", """
fn $C_abs(z: vec2<$T>) -> $T {
    if ($R_isinf(z.x) || $R_isinf(z.y)) { return $INF; }
    return $R_hypot(z.x, z.y);
}
""")

# Textbook product; when both parts come out NaN, infinities are recovered as in
# C99 Annex G (_Cmultcc).
_def("multiply", """
fn $C_multiply(x: vec2<$T>, y: vec2<$T>) -> vec2<$T> {
    var a = x.x; var b = x.y; var c = y.x; var d = y.y;
    let ac = a * c; let bd = b * d; let ad = a * d; let bc = b * c;
    let re = ac - bd;
    let im = ad + bc;
    if (!($R_isnan(re) && $R_isnan(im))) { return vec2<$T>(re, im); }
    var recalc = false;
    if ($R_isinf(a) || $R_isinf(b)) {
        a = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(a)), a);
        b = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(b)), b);
        if ($R_isnan(c)) { c = $R_copysign($T(0.0), c); }
        if ($R_isnan(d)) { d = $R_copysign($T(0.0), d); }
        recalc = true;
    }
    if ($R_isinf(c) || $R_isinf(d)) {
        c = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(c)), c);
        d = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(d)), d);
        if ($R_isnan(a)) { a = $R_copysign($T(0.0), a); }
        if ($R_isnan(b)) { b = $R_copysign($T(0.0), b); }
        recalc = true;
    }
    if (!recalc && ($R_isinf(ac) || $R_isinf(bd) || $R_isinf(ad) || $R_isinf(bc))) {
        // overflowed products: recover infinities
        if ($R_isnan(a)) { a = $R_copysign($T(0.0), a); }
        if ($R_isnan(b)) { b = $R_copysign($T(0.0), b); }
        if ($R_isnan(c)) { c = $R_copysign($T(0.0), c); }
        if ($R_isnan(d)) { d = $R_copysign($T(0.0), d); }
        recalc = true;
    }
    if (recalc) {
        return vec2<$T>($INF * (a * c - b * d), $INF * (a * d + b * c));
    }
    return vec2<$T>(re, im);
}
""")

_def("square", """
fn $C_square(z: vec2<$T>) -> vec2<$T> {
    if (!$C_isfinite(z)) { return $C_multiply(z, z); }
    let a = z.x; let b = z.y;
    if (max(abs(a), abs(b)) > $MAX * $T(0.25)) {
        // (a-b)(a+b) could overflow in a+b: square z/2 and scale by 4
        let h = z * $T(0.5);
        return vec2<$T>(((h.x - h.y) * (h.x + h.y)) * $T(4.0), (h.x * h.y) * $T(8.0));
    }
    return vec2<$T>((a - b) * (a + b), $T(2.0) * a * b);
}
""")

# Robust division (Baudin & Smith, "A robust complex division in Scilab", 2012), with the
# C99 Annex G (_Cdivd) recovery of infinities and zeros when the result is NaN + NaN j.
_def("divide", """
fn _$C_div_internal(a: $T, b: $T, c: $T, d: $T) -> vec2<$T> {
    // |c| >= |d|
    let r = d / c;
    let t = $T(1.0) / (c + d * r);
    if (r != $T(0.0)) {
        return vec2<$T>((a + b * r) * t, (b - a * r) * t);
    }
    return vec2<$T>((a + d * (b / c)) * t, (b - d * (a / c)) * t);
}

fn $C_divide(x: vec2<$T>, y: vec2<$T>) -> vec2<$T> {
    var a = x.x; var b = x.y; var c = y.x; var d = y.y;
    let ab = max(abs(a), abs(b));
    let cd = max(abs(c), abs(d));
    var s = $T(1.0);
    if (ab >= $MAX * $T(0.5)) { a = a * $T(0.5); b = b * $T(0.5); s = s * $T(2.0); }
    if (cd >= $MAX * $T(0.5)) { c = c * $T(0.5); d = d * $T(0.5); s = s * $T(0.5); }
    if (ab <= $MIN * $T(2.0) / $EPS) { a = a * $DIV_BE; b = b * $DIV_BE; s = s / $DIV_BE; }
    if (cd <= $MIN * $T(2.0) / $EPS) { c = c * $DIV_BE; d = d * $DIV_BE; s = s * $DIV_BE; }
    var w: vec2<$T>;
    if (abs(d) <= abs(c)) {
        w = _$C_div_internal(a, b, c, d);
    } else {
        let v = _$C_div_internal(b, a, d, c);
        w = vec2<$T>(v.x, -v.y);
    }
    w = w * s;
    if (!($R_isnan(w.x) && $R_isnan(w.y))) { return w; }
    a = x.x; b = x.y; c = y.x; d = y.y;
    if (_$C_iszero(c) && _$C_iszero(d) && (!$R_isnan(a) || !$R_isnan(b))) {
        let inf = $R_copysign($INF, c);
        return vec2<$T>(inf * a, inf * b);
    }
    if (($R_isinf(a) || $R_isinf(b)) && $R_isfinite(c) && $R_isfinite(d)) {
        a = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(a)), a);
        b = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(b)), b);
        return vec2<$T>($INF * (a * c + b * d), $INF * (b * c - a * d));
    }
    if (($R_isinf(c) || $R_isinf(d)) && $R_isfinite(a) && $R_isfinite(b)) {
        c = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(c)), c);
        d = $R_copysign(select($T(0.0), $T(1.0), $R_isinf(d)), d);
        return vec2<$T>($R_copysign($T(0.0), a * c + b * d), $R_copysign($T(0.0), b * c - a * d));
    }
    return w;
}
""")

_def("reciprocal", """
fn $C_reciprocal(z: vec2<$T>) -> vec2<$T> { return $C_divide(vec2<$T>($T(1.0), $T(0.0)), z); }
""")

# z/|z|; 0 for 0; NaN + NaN j for NaN.  With an infinite component the direction of the
# infinity is returned (e.g. sign(inf + 1j) = 1 + 0j, sign(inf + inf j) = (1 + 1j)/sqrt(2)).
_def("sign", """
fn $C_sign(z: vec2<$T>) -> vec2<$T> {
    if ($C_isnan(z)) { return _$C_nan2(); }
    var u = z;
    if ($C_isinf(z)) {
        u = vec2<$T>($R_copysign(select($T(0.0), $T(1.0), $R_isinf(z.x)), z.x),
                     $R_copysign(select($T(0.0), $T(1.0), $R_isinf(z.y)), z.y));
    }
    let m = max(abs(u.x), abs(u.y));
    if (m == $T(0.0)) { return vec2<$T>($T(0.0), $T(0.0)); }
    let v = u / m;
    return v / $R_hypot(v.x, v.y);
}
""")

# ------------------------------------------------------------ exp family

_def("exp", """
fn $C_exp(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if (_$C_iszero(b)) { return vec2<$T>($R_exp(a), b); }
    if ($R_isinf(a)) {
        if (!$R_isfinite(b)) {
            if (a > $T(0.0)) { return vec2<$T>(a, $NAN); }
            return vec2<$T>($T(0.0), $R_copysign($T(0.0), b));
        }
        let c = $R_cos(b); let s = $R_sin(b);
        if (a > $T(0.0)) { return vec2<$T>($R_copysign($INF, c), $R_copysign($INF, s)); }
        return vec2<$T>($R_copysign($T(0.0), c), $R_copysign($T(0.0), s));
    }
    if (!$R_isfinite(b) || $R_isnan(a)) { return _$C_nan2(); }
    let c = $R_cos(b); let s = $R_sin(b);
    if (a > $EXP_SPLIT) {
        let h = $R_exp(a * $T(0.5));
        return vec2<$T>((c * h) * h, (s * h) * h);
    }
    let e = $R_exp(a);
    return vec2<$T>(e * c, e * s);
}
""")

# expm1(a + bj) = (expm1(a) cos b - 2 sin^2(b/2)) + j exp(a) sin b
_def("expm1", """
fn $C_expm1(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if (_$C_iszero(b)) {
        // the standard's expm1(+-0 + 0j) = +0 + 0j (the real expm1(-0) is -0)
        if (_$C_iszero(a)) { return vec2<$T>($T(0.0), b); }
        return vec2<$T>($R_expm1(a), b);
    }
    if ($R_isinf(a)) {
        if (!$R_isfinite(b)) {
            if (a > $T(0.0)) { return vec2<$T>(a, $NAN); }
            return vec2<$T>($T(-1.0), $R_copysign($T(0.0), b));
        }
        let c = $R_cos(b); let s = $R_sin(b);
        if (a > $T(0.0)) { return vec2<$T>($R_copysign($INF, c), $R_copysign($INF, s)); }
        return vec2<$T>($T(-1.0), $R_copysign($T(0.0), s));
    }
    if (!$R_isfinite(b) || $R_isnan(a)) { return _$C_nan2(); }
    if (a > $EXP_SPLIT) {
        let w = $C_exp(z);
        return vec2<$T>(w.x - $T(1.0), w.y);
    }
    let c = $R_cos(b); let s = $R_sin(b);
    let h = $R_sin(b * $T(0.5));
    return vec2<$T>($R_expm1(a) * c - $T(2.0) * h * h, $R_exp(a) * s);
}
""")

# ------------------------------------------------------------ hyperbolic and trig

_def("cosh", """
fn $C_cosh(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if (_$C_iszero(b)) { return vec2<$T>($R_cosh(a), $R_copysign($T(0.0), a) * b); }
    if (!$R_isfinite(b)) {
        if ($R_isinf(a)) { return vec2<$T>($INF, $NAN); }
        if (_$C_iszero(a)) { return vec2<$T>($NAN, $T(0.0)); }
        return _$C_nan2();
    }
    if ($R_isnan(a)) { return _$C_nan2(); }
    let c = $R_cos(b); let s = $R_sin(b);
    if (abs(a) > $EXP_SPLIT) {
        let h = $R_exp(abs(a) * $T(0.5));
        let hh = h * $T(0.5);
        return vec2<$T>((c * hh) * h, (($R_copysign($T(1.0), a) * s) * hh) * h);
    }
    return vec2<$T>($R_cosh(a) * c, $R_sinh(a) * s);
}
""")

_def("sinh", """
fn $C_sinh(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if (_$C_iszero(b)) { return vec2<$T>($R_sinh(a), b); }
    if (!$R_isfinite(b)) {
        if ($R_isinf(a) || _$C_iszero(a)) { return vec2<$T>(a, $NAN); }
        return _$C_nan2();
    }
    if ($R_isnan(a)) { return _$C_nan2(); }
    let c = $R_cos(b); let s = $R_sin(b);
    if (abs(a) > $EXP_SPLIT) {
        let h = $R_exp(abs(a) * $T(0.5));
        let hh = h * $T(0.5);
        return vec2<$T>((($R_copysign($T(1.0), a) * c) * hh) * h, (s * hh) * h);
    }
    return vec2<$T>($R_sinh(a) * c, $R_cosh(a) * s);
}
""")

# Kahan's formulation (as in FreeBSD's ctanh): with t = tan b, beta = 1 + t^2,
# s = sinh a, rho = sqrt(1 + s^2): tanh z = (beta rho s + j t) / (1 + beta s^2).
_def("tanh", """
fn $C_tanh(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if ($R_isnan(a)) {
        if (_$C_iszero(b)) { return vec2<$T>(a, b); }
        return _$C_nan2();
    }
    if (!$R_isfinite(b)) {
        if (_$C_iszero(a)) { return vec2<$T>(a, $NAN); }
        if ($R_isinf(a)) { return vec2<$T>($R_copysign($T(1.0), a), $R_copysign($T(0.0), b)); }
        return _$C_nan2();
    }
    if ($R_isinf(a)) {
        // the standard's 1 + 0j (C99 has the sign of sin(2b) on the zero)
        return vec2<$T>($R_copysign($T(1.0), a), $R_copysign($T(0.0), b));
    }
    if (abs(a) > $TANH_BIG) {
        let e = $R_exp(-abs(a));
        return vec2<$T>($R_copysign($T(1.0), a), $T(4.0) * $R_sin(b) * $R_cos(b) * e * e);
    }
    let t = $R_tan(b);
    let beta = $T(1.0) + t * t;
    let s = $R_sinh(a);
    let rho = $R_sqrt($T(1.0) + s * s);
    let denom = $T(1.0) + beta * s * s;
    return vec2<$T>((beta * rho * s) / denom, t / denom);
}
""")

# cos z = cosh(jz); sin z = -j sinh(jz); tan z = -j tanh(jz)   (jz = -b + ja)
_def("cos", """
fn $C_cos(z: vec2<$T>) -> vec2<$T> { return $C_cosh(vec2<$T>(-z.y, z.x)); }
""")

_def("sin", """
fn $C_sin(z: vec2<$T>) -> vec2<$T> {
    let w = $C_sinh(vec2<$T>(-z.y, z.x));
    return vec2<$T>(w.y, -w.x);
}
""")

_def("tan", """
fn $C_tan(z: vec2<$T>) -> vec2<$T> {
    let w = $C_tanh(vec2<$T>(-z.y, z.x));
    return vec2<$T>(w.y, -w.x);
}
""")

# ------------------------------------------------------------ logarithms, sqrt, pow

_def("log", """
fn $C_log(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    let im = $R_atan2(b, a);
    if (!$C_isfinite(z)) { return vec2<$T>($R_log($C_abs(z)), im); }
    let ax = max(abs(a), abs(b));
    let ay = min(abs(a), abs(b));
    var re: $T;
    if (ax > $MAX * $T(0.5)) {
        re = $R_log($R_hypot(a * $T(0.5), b * $T(0.5))) + $LN2;
    } else if (ax >= $T(0.5) && ax <= $T(2.0)) {
        // |z|^2 - 1 = (ax - 1)(ax + 1) + ay^2, with ax - 1 exact
        re = $T(0.5) * $R_log1p((ax - $T(1.0)) * (ax + $T(1.0)) + ay * ay);
    } else {
        re = $R_log($R_hypot(a, b));
    }
    return vec2<$T>(re, im);
}
""")

_def("log2", """
fn $C_log2(z: vec2<$T>) -> vec2<$T> { return $C_log(z) * $LOG2E; }
""")

_def("log10", """
fn $C_log10(z: vec2<$T>) -> vec2<$T> { return $C_log(z) * $LOG10E; }
""")

_def("log1p", """
fn $C_log1p(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if ($C_isfinite(z) && abs(a) < $T(0.5) && abs(b) < $T(0.5)) {
        // |1 + z|^2 - 1 = a (2 + a) + b^2
        return vec2<$T>($T(0.5) * $R_log1p(a * ($T(2.0) + a) + b * b), $R_atan2(b, $T(1.0) + a));
    }
    return $C_log(vec2<$T>($T(1.0) + a, b));
}
""")

# Principal square root (Kahan): t = sqrt((|a| + |z|)/2); sqrt z = t + j b/(2t) for
# a >= 0, |b|/(2t) + j copysign(t, b) for a < 0; inputs scaled away from over/underflow.
_def("sqrt", """
fn $C_sqrt(z: vec2<$T>) -> vec2<$T> {
    let a = z.x; let b = z.y;
    if ($R_isinf(b)) { return vec2<$T>($INF, b); }
    if ($R_isnan(a)) { return _$C_nan2(); }
    if ($R_isinf(a)) {
        if ($R_isnan(b)) {
            if (a > $T(0.0)) { return vec2<$T>(a, b); }
            return vec2<$T>($NAN, $R_copysign($INF, b));
        }
        if (a > $T(0.0)) { return vec2<$T>(a, $R_copysign($T(0.0), b)); }
        return vec2<$T>($T(0.0), $R_copysign($INF, b));
    }
    if ($R_isnan(b)) { return _$C_nan2(); }
    if (a == $T(0.0) && b == $T(0.0)) { return vec2<$T>($T(0.0), b); }
    var u = z;
    var s = $T(1.0);
    let m = max(abs(a), abs(b));
    if (m > $MAX * $T(0.25)) {
        u = z * $T(0.25); s = $T(2.0);
    } else if (m < $MIN * $T(4.0)) {
        u = z * $SCALE_UP; s = $SCALE_UP_SQRT_INV;
    }
    let t = $R_sqrt((abs(u.x) + $R_hypot(u.x, u.y)) * $T(0.5));
    if (u.x >= $T(0.0)) {
        return vec2<$T>(t * s, (u.y / ($T(2.0) * t)) * s);
    }
    return vec2<$T>((abs(u.y) / ($T(2.0) * t)) * s, $R_copysign(t, u.y) * s);
}
""")

# pow(x, y) = exp(y log x); y == 0 gives 1 (as for real pow, and NumPy).
_def("pow", """
fn $C_pow(x: vec2<$T>, y: vec2<$T>) -> vec2<$T> {
    if (_$C_iszero(y.x) && _$C_iszero(y.y)) { return vec2<$T>($T(1.0), $T(0.0)); }
    return $C_exp($C_multiply(y, $C_log(x)));
}
""")

# ------------------------------------------------------------ inverse functions
#
# asinh/asin/acos/acosh follow T. E. Hull, T. F. Fairgrieve, P. T. P. Tang, "Implementing
# the complex arcsine and arccosine functions using exception handling", ACM TOMS 23(3),
# 1997, in the formulation of S. Montgomery-Smith (FreeBSD catrig.c):
#   asinh(x + jy) = sign(x) log(A + sqrt(A^2 - 1)) + j asin(B),   x, y >= 0,
#   A = (|z + j| + |z - j|)/2,  B = y/A,
# with A - 1 and A - y evaluated without cancellation through
#   f(a, b) = (hypot(a, b) - b)/2 = a^2 / (hypot(a, b) + b) / 2.

_def("_clog_large", """
// log(z) for finite |z| > ~1/EPS (or infinite): avoids overflow in |z|^2.
fn _$C_clog_large(z: vec2<$T>) -> vec2<$T> {
    let x = z.x; let y = z.y;
    let ax = max(abs(x), abs(y));
    let ay = min(abs(x), abs(y));
    let im = $R_atan2(y, x);
    if (ax > $MAX * $T(0.5)) {
        return vec2<$T>($R_log($R_hypot(x / $E, y / $E)) + $T(1.0), im);
    }
    if (ax > $QUARTER_SQRT_MAX || ay < $SQRT_MIN) {
        return vec2<$T>($R_log($R_hypot(x, y)), im);
    }
    return vec2<$T>($R_log(ax * ax + ay * ay) * $T(0.5), im);
}
""")

_def("_asinh_parts", """
// (hypot(a, b) - b) / 2, given h = hypot(a, b)
fn _$C_hf(a: $T, b: $T, h: $T) -> $T {
    if (b < $T(0.0)) { return (h - b) * $T(0.5); }
    if (b == $T(0.0)) { return a * $T(0.5); }
    return a * a / (h + b) * $T(0.5);
}

struct _$C_asinh_parts_t {
    rx: $T,           // log(A + sqrt(A^2 - 1)) = Re asinh(x + jy)
    b_usable: bool,   // Im asinh = asin(b) if b_usable, else atan2(new_y, sqrt_a2my2)
    b: $T,
    sqrt_a2my2: $T,
    new_y: $T,
}

// x, y >= 0, finite, < 1/EPS
fn _$C_asinh_parts(x: $T, y: $T) -> _$C_asinh_parts_t {
    var p: _$C_asinh_parts_t;
    let r = $R_hypot(x, y + $T(1.0));
    let s = $R_hypot(x, y - $T(1.0));
    let a = max((r + s) * $T(0.5), $T(1.0));
    if (a < $T(10.0)) {
        if (y == $T(1.0) && x < $EPS * $EPS / $T(128.0)) {
            p.rx = $R_sqrt(x);
        } else if (x >= $EPS * abs(y - $T(1.0))) {
            let am1 = _$C_hf(x, $T(1.0) + y, r) + _$C_hf(x, $T(1.0) - y, s);
            p.rx = $R_log1p(am1 + $R_sqrt(am1 * (a + $T(1.0))));
        } else if (y < $T(1.0)) {
            p.rx = x / $R_sqrt(($T(1.0) - y) * ($T(1.0) + y));
        } else {
            p.rx = $R_log1p((y - $T(1.0)) + $R_sqrt((y - $T(1.0)) * (y + $T(1.0))));
        }
    } else {
        p.rx = $R_log(a + $R_sqrt(a * a - $T(1.0)));
    }
    p.new_y = y;
    if (y < $FOUR_SQRT_MIN) {
        p.b_usable = false;
        p.sqrt_a2my2 = a * ($T(2.0) / $EPS);
        p.new_y = y * ($T(2.0) / $EPS);
        return p;
    }
    p.b = y / a;
    p.b_usable = true;
    if (p.b > $T(0.6417)) {
        p.b_usable = false;
        if (y == $T(1.0) && x < $EPS / $T(128.0)) {
            p.sqrt_a2my2 = $R_sqrt(x) * $R_sqrt((a + y) * $T(0.5));
        } else if (x >= $EPS * abs(y - $T(1.0))) {
            let amy = _$C_hf(x, y + $T(1.0), r) + _$C_hf(x, y - $T(1.0), s);
            p.sqrt_a2my2 = $R_sqrt(amy * (a + y));
        } else if (y > $T(1.0)) {
            let k = $T(4.0) / $EPS / $EPS;
            p.sqrt_a2my2 = x * k * y / $R_sqrt((y + $T(1.0)) * (y - $T(1.0)));
            p.new_y = y * k;
        } else {
            p.sqrt_a2my2 = $R_sqrt(($T(1.0) - y) * ($T(1.0) + y));
        }
    }
    return p;
}
""")

_def("asinh", """
fn $C_asinh(z: vec2<$T>) -> vec2<$T> {
    let x = z.x; let y = z.y;
    let ax = abs(x); let ay = abs(y);
    if ($C_isnan(z)) {
        if ($R_isinf(x)) { return vec2<$T>(x, $NAN); }
        if ($R_isinf(y)) { return vec2<$T>(y, $NAN); }
        if (_$C_iszero(y)) { return vec2<$T>($NAN, y); }
        return _$C_nan2();
    }
    if (ax > $RECIP_EPS || ay > $RECIP_EPS) {
        let w = _$C_clog_large(vec2<$T>(ax, ay));
        return vec2<$T>($R_copysign(w.x + $LN2, x), $R_copysign(w.y, y));
    }
    if (ax < $SQRT_6_EPS * $T(0.25) && ay < $SQRT_6_EPS * $T(0.25)) { return z; }
    let p = _$C_asinh_parts(ax, ay);
    var ry: $T;
    if (p.b_usable) { ry = $R_asin(p.b); } else { ry = $R_atan2(p.new_y, p.sqrt_a2my2); }
    return vec2<$T>($R_copysign(p.rx, x), $R_copysign(ry, y));
}
""")

# asin z = -j asinh(jz), computed as swap(asinh(swap z)) (the same by the symmetries).
_def("asin", """
fn $C_asin(z: vec2<$T>) -> vec2<$T> {
    let w = $C_asinh(z.yx);
    return w.yx;
}
""")

_def("acos", """
fn $C_acos(z: vec2<$T>) -> vec2<$T> {
    let x = z.x; let y = z.y;
    let ax = abs(x); let ay = abs(y);
    if ($C_isnan(z)) {
        if ($R_isinf(x)) { return vec2<$T>($NAN, -$INF); }
        if ($R_isinf(y)) { return vec2<$T>($NAN, -y); }
        if (_$C_iszero(x)) { return vec2<$T>($PIO2, $NAN); }
        return _$C_nan2();
    }
    if (ax > $RECIP_EPS || ay > $RECIP_EPS) {
        let w = _$C_clog_large(z);
        let ry = w.x + $LN2;
        return vec2<$T>(abs(w.y), select(-ry, ry, $R_signbit(y)));
    }
    if (x == $T(1.0) && y == $T(0.0)) { return vec2<$T>($T(0.0), -y); }
    if (ax < $SQRT_6_EPS * $T(0.25) && ay < $SQRT_6_EPS * $T(0.25)) {
        return vec2<$T>($PIO2_HI - $R_launder(x - $PIO2_LO), -y);   // no hi + lo folding
    }
    let p = _$C_asinh_parts(ay, ax);
    var rx: $T;
    let sx = $R_signbit(x);
    if (p.b_usable) {
        rx = $R_acos(select(p.b, -p.b, sx));
    } else {
        rx = $R_atan2(p.sqrt_a2my2, select(p.new_y, -p.new_y, sx));
    }
    return vec2<$T>(rx, select(-p.rx, p.rx, $R_signbit(y)));
}
""")

# acosh z = +-j acos z, the sign making Re >= 0.
_def("acosh", """
fn $C_acosh(z: vec2<$T>) -> vec2<$T> {
    if (_$C_iszero(z.x) && $R_isnan(z.y)) { return vec2<$T>($NAN, $PIO2); }
    let w = $C_acos(z);
    if ($R_isnan(w.x) && $R_isnan(w.y)) { return _$C_nan2(); }
    if ($R_isnan(w.x)) { return vec2<$T>(abs(w.y), w.x); }
    if ($R_isnan(w.y)) { return _$C_nan2(); }
    return vec2<$T>(abs(w.y), $R_copysign(w.x, z.y));
}
""")

# atanh z = log((1 + z)/(1 - z))/2
#   = log1p(4x / |z - 1|^2)/4 + j atan2(2y, (1 - x)(1 + x) - y^2)/2   (FreeBSD catanh)
_def("atanh", """
// Re(1/(x + jy)) = x / (x^2 + y^2) without overflow, for max(|x|, |y|) > 1/EPS
fn _$C_real_part_reciprocal(x: $T, y: $T) -> $T {
    if ($R_isinf(x) || $R_isinf(y)) { return $R_copysign($T(0.0), x); }
    let m = max(abs(x), abs(y));
    let xs = x / m; let ys = y / m;
    return (xs / (xs * xs + ys * ys)) / m;
}

fn $C_atanh(z: vec2<$T>) -> vec2<$T> {
    let x = z.x; let y = z.y;
    let ax = abs(x); let ay = abs(y);
    if ($C_isnan(z)) {
        if ($R_isinf(x)) { return vec2<$T>($R_copysign($T(0.0), x), $NAN); }
        if ($R_isinf(y)) { return vec2<$T>($R_copysign($T(0.0), x), $R_copysign($PIO2, y)); }
        if (_$C_iszero(x)) { return vec2<$T>(x, $NAN); }
        return _$C_nan2();
    }
    if (y == $T(0.0) && ax <= $T(1.0)) { return vec2<$T>($R_atanh(x), y); }
    if (x == $T(0.0)) { return vec2<$T>(x, $R_atan(y)); }
    if (ax > $RECIP_EPS || ay > $RECIP_EPS) {
        return vec2<$T>(_$C_real_part_reciprocal(x, y), $R_copysign($PIO2, y));
    }
    if (ax < $SQRT_3_EPS * $T(0.5) && ay < $SQRT_3_EPS * $T(0.5)) { return z; }
    var rx: $T;
    if (ax == $T(1.0) && ay < $EPS) {
        rx = ($LN2 - $R_log(ay)) * $T(0.5);
    } else {
        let xm1 = ax - $T(1.0);
        var ss = xm1 * xm1;
        if (ay >= $SQRT_MIN) { ss = ss + ay * ay; }
        rx = $R_log1p($T(4.0) * ax / ss) * $T(0.25);
    }
    var ry: $T;
    if (ax == $T(1.0)) {
        ry = $R_atan2($T(2.0), -ay) * $T(0.5);
    } else if (ay < $EPS) {
        ry = $R_atan2($T(2.0) * ay, ($T(1.0) - ax) * ($T(1.0) + ax)) * $T(0.5);
    } else {
        ry = $R_atan2($T(2.0) * ay, ($T(1.0) - ax) * ($T(1.0) + ax) - ay * ay) * $T(0.5);
    }
    return vec2<$T>($R_copysign(rx, x), $R_copysign(ry, y));
}
""")

# atan z = -j atanh(jz), computed as swap(atanh(swap z)).
_def("atan", """
fn $C_atan(z: vec2<$T>) -> vec2<$T> {
    let w = $C_atanh(z.yx);
    return w.yx;
}
""")

# ------------------------------------------------------------ build

#: Public function names (without the c64_/c128_ prefix).
FUNCTIONS = tuple(n for n in _TEMPLATES if not n.startswith("_"))


def _build() -> dict[str, Snippet]:
    texts: dict[str, str] = {}
    for prec, params in _PARAMS.items():
        for name, tmpl in _TEMPLATES.items():
            key = f"_{prec}{name}" if name.startswith("_") else f"{prec}_{name}"
            texts[key] = substitute(tmpl, params)
    return library(texts, external=realmath.LIBRARY)


LIBRARY: dict[str, Snippet] = _build()
