"""Pure-WGSL real floating-point math for f32 and f64 (``LIBRARY``).

Every function ``{T}_{name}`` (T in f32, f64) implements the Array API (2025.12)
semantics of the elementwise function ``name`` for real floating-point inputs,
special cases (NaN, +-inf, +-0) included.  Both variants come from one template per
algorithm; only constants, polynomial degrees and the bit-level primitives differ.

Design rules
------------
* NaN / inf are never detected with ``x != x`` or ordered comparisons (a shader
  compiler may fold those assuming finite math).  Classification is bit-level:

  - f32: ``bitcast<u32>(x)``.
  - f64: naga parses ``bitcast<vec2<u32>>(f64)`` as a u64 bitcast (bug) and
    ``bitcast<u64>`` needs ``shader-int64``, which a device with ``shader-f64`` may
    lack.  So f64 is classified through an f32 conversion, which IEEE 754 defines
    for every input and which needs no int64: ``f32(x)`` keeps the sign bit of
    every value (zeros and NaN included) and maps NaN to NaN, so its bits give
    ``isnan`` and ``signbit``; ``f32(x * 0x1p-1000)`` is finite for every finite
    f64 (|x| * 2^-1000 < 2^24) and +-inf / NaN for +-inf / NaN, so its bits give
    ``isinf`` / ``isfinite``.  The f64 exponent and mantissa come from plain
    arithmetic, never from the ``frexp`` / ``ldexp`` builtins (GLSL.std.450
    Frexp/Ldexp on 64-bit floats fail NVVM compilation on NVIDIA's Vulkan driver and
    lose the device; lavapipe's f64 ldexp returned 0): ``f64_frexp`` finds the
    exponent by a binary search over comparisons with 2^+-512 .. 2^+-1, dividing the
    value by each power passed (exact: it stays normal, subnormals being pre-scaled
    by 2^54), and ``f64_pow2i`` builds 2^k as a product of the literal powers 2^+-512
    .. 2^+-1 selected by the bits of |k| (every partial product is a normal power of
    two, so exact).  f64 NaN and inf constants are made by converting the f32 ones.
* Ordered comparisons are used only once NaN has been excluded.
* f64 transcendentals never call WGSL builtins (SPIR-V GLSL.std.450 exp/log/sin/...
  reject 64-bit floats; lavapipe silently returns 0).  Only + - * /, sqrt, floor,
  ceil, trunc, round and abs are used on f64 (f32 also uses frexp and ldexp, the
  latter with a normal result only).  The f32 variants use the same code in f32 arithmetic, so they do not
  depend on the (often approximate) GPU f32 builtins either.
* Evaluation order is enforced, never assumed.  Shader compilers re-associate float
  arithmetic (NVIDIA's Vulkan driver, H200 / driver 580, turned the Cody-Waite steps
  ``((x - k c1) - k c2) - k c3`` into ``x - k (c1 + c2 + c3)`` with the constants folded;
  Mesa folds ``(a + b) - a`` to ``b``).  Wherever an exact order matters (argument
  reductions, two_sum / two_prod, double-double tails, hi + lo constants) the partial
  result goes through ``{T}_launder(s)``: ``select(s, 0, bits(s) == <a signalling NaN>)``
  (for f64 the bits of ``f32(s)`` against a pattern holding the length of the kernel's
  parameter binding ``P``, so a module that uses it declares ``P``), which is
  ``s`` but opaque (a select on a condition the compiler cannot evaluate, not an
  add that joins the surrounding sum).  Each expression between two barriers then holds
  at most one product with a shared factor and nothing to cancel, so no regrouping,
  factoring or folding across a barrier is possible.
* No fused multiply-add is relied upon (lavapipe's ``fma`` is not fused), except by
  ``f32_divide_fma``, which only devices whose probed ``fma`` is fused get.
  Error-free products (for ``pow``) use a split that contraction into an FMA by
  the shader compiler cannot break: f32 masks the low 12 mantissa bits; f64 uses
  ``f64(f32(a))`` (a 24-bit head) so that every partial product is exact.
* Polynomials are Chebyshev fits (mpmath) on the reduced ranges; constants are
  written as abstract-float literals, which WGSL converts to f32 or f64 exactly
  (to nearest for f32).

Accuracy (measured against NumPy on lavapipe, see tests/test_wgsl_realmath.py):
a few ulp for every function on typical inputs, exact (bitwise) on special values.
sin/cos/tan reduce modulo pi/2 with a multi-part Cody-Waite reduction for
|x| <= 2^26 (f64) / 2^10 (f32) and with an exact Payne-Hanek reduction beyond (2/pi as
24-bit chunks in f64, or as u32 words for f32: no 64-bit integers), so they are accurate
for every finite input up to the largest finite value.
Subnormal arithmetic follows the device (lavapipe keeps subnormals; NVIDIA's Vulkan
driver flushes float32 ones to zero, see ``wgarray._runtime.numerics``), but whatever needs no
arithmetic is done on the bits and stays exact there: float32 comparisons (``f32_key``),
maximum/minimum, nextafter, abs/copysign/signbit and the f32 <-> f64 conversions.
"""
from __future__ import annotations

from .intmath import LIBRARY as _INTMATH
from .snippets import Snippet
from .template import library, substitute

# --------------------------------------------------------------------------
# polynomial coefficients (lowest degree first) and per-type constants
# --------------------------------------------------------------------------

# (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2]
_EXP_P = {
    "f64": [0.5, 0.16666666666666666, 0.04166666666666668, 0.008333333333333333,
            0.0013888888888879082, 0.00019841269841263304, 2.480158733642132e-05,
            2.755731924720479e-06, 2.755726330147475e-07, 2.5052071109214447e-08,
            2.0918129454967065e-09, 1.6086622436215554e-10],
    "f32": [0.5000000013457727, 0.16666666681614256, 0.04166646500604005,
            0.008333310934448869, 0.0013933641031986701, 0.00019890980869750327],
}
# (log((1+s)/(1-s)) - 2s) / s^3 as a polynomial in z = s^2, s <= 3 - 2*sqrt(2)
_LOG_P = {
    "f64": [0.6666666666666666, 0.4000000000000088, 0.28571428570803614,
            0.22222222391713917, 0.18181795640132906, 0.15386239702814658,
            0.13268773138656886, 0.13086626147840102],
    "f32": [0.6666666655449709, 0.40000121839806124, 0.28550820815960665,
            0.23330467216303835],
}
# (sin r - r) / r^3 and (cos r - 1 + r^2/2) / r^4 in z = r^2, |r| <= pi/4
_SIN_P = {
    "f64": [-0.16666666666666666, 0.008333333333333331, -0.00019841269841265065,
            2.7557319219339167e-06, -2.5052106232447578e-08, 1.6058531618986147e-10,
            -7.586697117706918e-13],
    "f32": [-0.1666666666385529, 0.008333331874710208, -0.00019840086735384846,
            2.724992580305979e-06],
}
_COS_P = {
    "f64": [0.041666666666666664, -0.0013888888888888887, 2.4801587301584645e-05,
            -2.7557319221402824e-07, 2.087675579108042e-09, -1.1470460887609959e-11,
            4.7458719020432915e-14],
    "f32": [0.0416666666643212, -0.001388888767201679, 2.480060037715673e-05,
            -2.730095920390147e-07],
}
# (atan t - t) / t^3 in z = t^2, |t| <= 7/16
_ATAN_P = {
    "f64": [-0.3333333333333333, 0.1999999999999941, -0.14285714285566806,
            0.11111111096645038, -0.09090908355602592, 0.07692285554889286,
            -0.06666241923359964, 0.05876946456755061, -0.05216679739313656,
            0.04492259293193656, -0.033128134256069586, 0.014773184616983806],
    "f32": [-0.33333333233831486, 0.19999962483847505, -0.14283400018636427,
            0.11058227545536063, -0.08532127449401608, 0.04822303116353981],
}
# (asin(t) - t) / t^3 in z = t^2, |t| <= 1/2 (f32 only; f64 asin goes through atan2)
_ASIN_P = {
    "f32": [0.16666666338575511, 0.07500094314117338, 0.04459947498244488,
            0.031099839887705566, 0.017152999881749405, 0.03368482942907226],
}
# pi/2 in chunks short enough that (k split in two halves) * chunk is exact.
_PIO2 = {
    "f64": ["0x1.921fb54p+0", "0x1.10b461p-30", "0x1.a626330p-58", "0x1.45c06e0p-86",
            "0x1.cd12900p-115", "0x1.2704450p-142", "0x1.9f31d00p-169"],
    "f32": ["0x1.92p+0", "0x1.fb4p-12", "0x1.444p-24", "0x1.68cp-39", "0x1.1a6p-54",
            "0x1.318p-69", "0x1.8a2p-81"],
}

# 2/pi = sum_i C[i] * 2^(-24 (i + 1)): the first 50 chunks of 24 bits (enough for the
# largest f64 exponent), each an integer stored exactly in an f64.
_TWO_OVER_PI_24 = [
    10680707, 7228996, 1387004, 2578385, 16069853, 12639074, 9804092, 4427841, 16666979, 11263675,
    12935607, 2387514, 4345298, 14681673, 3074569, 13734428, 16653803, 1880361, 10960616, 8533493,
    3062596, 8710556, 7349940, 6258241, 3772886, 3769171, 3798172, 8675211, 12450088, 3874808,
    9961438, 366607, 15675153, 9132554, 7151469, 3571407, 2607881, 12013382, 4155038, 6285869,
    7677882, 13102053, 15825725, 473591, 9065106, 15363067, 6271263, 9264392, 5636912, 4652155,
]
# 2/pi = sum_i W[i] * 2^(-32 (i + 1)): the first 256 bits (enough for every f32).
_TWO_OVER_PI_32 = [0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561]

_K = {
    "f64": dict(
        UT="u32", EMAX="1023", EMIN="-1022", MANT="52", MANT1="53", SUBMIN="-1074",
        SCALE_LO="-970",  # EMIN + MANT
        MINNORM="0x1p-1022", TRIG_XMAX="0x1p26",
        MAXF="1.7976931348623157e308",
        EXP_HI="709.79", EXP_LO="-745.2", EM1_LO="-40.0", TINY="0x1p-28", BIG="0x1p28",
        LN2_HI="0.6931471805598903", LN2_LO="5.497923018708371e-14",
        L10_2HI="0.30102999566395283", L10_2LO="2.8363394551044964e-14",
        IVLN2_HI="1.4426950408889634", IVLN2_LO="2.0355273740931033e-17",
        ATAN_HUGE="0x1p66", ATAN2_DQ="true", DD_LO="0x1p-100", DD_HI="0x1p100",
        ATAN05_HI="0.4636476090008061", ATAN05_LO="2.2698777452961687e-17",
        PI4_HI="0.7853981633974483", PI4_LO="3.061616997868383e-17",
        ATAN15_HI="0.982793723247329", ATAN15_LO="1.3903311031230998e-17",
        PI2_HI="1.5707963267948966", PI2_LO="6.123233995736766e-17",
        PI_HI="3.141592653589793", PI_LO="1.2246467991473532e-16",
        TRIG_KSPLIT="0x1p26", TRIG_KMAX="0x1p52",
        POW_YBIG="0x1p64", POW_YTINY="0x1p-64", POW_HI="710.0", POW_LO="-746.0",
    ),
    "f32": dict(
        UT="u32", EMAX="127", EMIN="-126", MANT="23", MANT1="24", SUBMIN="-149",
        SCALE_LO="-103",
        MINNORM="0x1p-126", TRIG_XMAX="0x1p10",
        MAXF="3.4028234663852886e38",
        EXP_HI="88.73", EXP_LO="-104.0", EM1_LO="-17.0", TINY="0x1p-12", BIG="0x1p12",
        LN2_HI="0.693145751953125", LN2_LO="1.4286068203094173e-06",
        L10_2HI="0.301025390625", L10_2LO="4.605038981195214e-06",
        IVLN2_HI="1.4426950216293335", IVLN2_LO="1.925963033500011e-08",
        ATAN_HUGE="0x1p26", ATAN2_DQ="false", DD_LO="0x1p-40", DD_HI="0x1p40",
        ATAN05_HI="0.46364760398864746", ATAN05_LO="5.01215868808913e-09",
        PI4_HI="0.7853981852531433", PI4_LO="-2.1855694143368964e-08",
        ATAN15_HI="0.9827937483787537", ATAN15_LO="-2.5131424052915463e-08",
        PI2_HI="1.5707963705062866", PI2_LO="-4.371138828673793e-08",
        PI_HI="3.1415927410125732", PI_LO="-8.742277657347586e-08",
        TRIG_KSPLIT="0x1p12", TRIG_KMAX="0x1p24",
        POW_YBIG="0x1p30", POW_YTINY="0x1p-30", POW_HI="89.0", POW_LO="-104.0",
    ),
}


def _horner(var: str, coeffs) -> str:
    text = repr(float(coeffs[-1]))
    for c in reversed(coeffs[:-1]):
        text = f"({repr(float(c))} + {var} * {text})"
    return text


# --------------------------------------------------------------------------
# bit-level primitives: different text per type
# --------------------------------------------------------------------------

_PRIM_F32 = {
    "isnan": "fn f32_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }",
    "isinf": "fn f32_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }",
    "isfinite": "fn f32_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }",
    "signbit": "fn f32_signbit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }",
    "iszero": "fn f32_iszero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0u; }",
    # -0.0 or +0.0 from the bits: NVIDIA's compiler folds select(0.0, -0.0, c) to -0.0,
    # taking the two literals for one value
    "szero": "fn f32_szero(neg: bool) -> f32 { return bitcast<f32>(select(0u, 0x80000000u, neg)); }",
    "nan": "fn f32_nan() -> f32 { return bitcast<f32>(0x7fc00000u); }",
    "inf": "fn f32_inf() -> f32 { return bitcast<f32>(0x7f800000u); }",
    "abs": "fn f32_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }",
    "copysign": """
fn f32_copysign(x: f32, y: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}""",
    # s, through a select on a condition the compiler cannot evaluate: an evaluation-
    # order barrier (see the module doc).  Arithmetic never yields the signalling NaN
    # tested for, so this is s.
    "launder": "fn f32_launder(s: f32) -> f32 { return select(s, 0.0, bitcast<u32>(s) == 0x7fa00001u); }",
    # Comparisons on the bits: exact where the device flushes subnormals to zero in
    # float compares (NVIDIA's Vulkan driver), and out of reach of NaN-blind folding.
    # The key is monotonic in x for non-NaN x and equal for +-0.
    "key": """
fn f32_key(x: f32) -> i32 {
    let b = bitcast<i32>(x);
    return select(b, -(b & 0x7fffffff), b < 0);
}""",
    # a non-NaN x whose key equals y's: y is not NaN either (NaN keys lie beyond +-inf's)
    "equal": "fn f32_equal(x: f32, y: f32) -> bool { return !f32_isnan(x) && f32_key(x) == f32_key(y); }",
    "less": """
fn f32_less(x: f32, y: f32) -> bool {
    return !(f32_isnan(x) || f32_isnan(y)) && f32_key(x) < f32_key(y);
}""",
    "less_equal": """
fn f32_less_equal(x: f32, y: f32) -> bool {
    return !(f32_isnan(x) || f32_isnan(y)) && f32_key(x) <= f32_key(y);
}""",
    # float64(x) from the bits for zero and subnormal x, which a flushing device's
    # conversion would turn into 0
    "to_f64": """
fn f32_to_f64(x: f32) -> f64 {
    let b = bitcast<u32>(x);
    if ((b & 0x7f800000u) != 0u) { return f64(x); }
    let m = f64(b & 0x007fffffu) * 0x1p-149;
    return select(m, -m, (b & 0x80000000u) != 0u);
}""",
    "from_bits": "fn f32_from_bits(b: u32) -> f32 { return bitcast<f32>(b); }",
    "to_bits": "fn f32_to_bits(x: f32) -> u32 { return bitcast<u32>(x); }",
    # head of x with at most 12 significant bits, so head * head is exact
    "split": """
fn f32_split(a: f32) -> vec2<f32> {
    let h = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
    return vec2<f32>(h, a - h);
}""",
    # x / y and sqrt(x) for finite nonzero x, y (x > 0 for sqrt), correctly rounded
    # where the device's own are not: WGSL lets f32 division be 2.5 ulp off and sqrt
    # more, and NVIDIA divides through a reciprocal that underflows for divisors beyond
    # 2^126. The significands are divided (or the root taken) in [1, 4), where every
    # device is within a few ulp, fixed by ``div_fix`` / ``sqrt_fix``, and the exponent
    # goes back on exactly. Subnormal operands or results keep the device's operation.
    "div_rn": """
fn f32_div_rn(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let by = bitcast<u32>(y);
    let k = f32_expo(bx) - f32_expo(by);
    let a = f32_launder(f32_sig(bx));
    let b = f32_launder(f32_sig(by));
    let q = f32_launder(f32_div_fix(a, b, f32_launder(a / b)));   // in [1/2, 2)
    let sign = (bx ^ by) & 0x80000000u;
    var r: f32;
    if (k > 254) { return bitcast<f32>(sign | 0x7f800000u); }
    if (k > 127) {
        r = (q * 0x1p127) * bitcast<f32>(u32(k) << 23u);   // exact, or the overflow to inf
    } else if (k > -126 || (k == -126 && q >= 1.0)) {
        r = q * bitcast<f32>(u32(k + 127) << 23u);         // exact: a normal result
    } else {
        // A quotient below 2^-126 that IEEE rounds up to 2^-126: q the float just below a
        // power of two, a / b at or above it (the midpoint or past it; ties go to the even
        // 2^-126). A flushing device's own division gives 0 there.
        let top = (k == -127 && q == 0x1.fffffep0) || (k == -126 && q == 0x1.fffffep-1);
        if (top && f32_rem_side(a, q, b, 0.0, 0.0) >= 0.0) {
            return bitcast<f32>(sign | 0x00800000u);
        }
        return x / y;   // a subnormal quotient: the device's own (flushed where it flushes)
    }
    return bitcast<f32>(bitcast<u32>(r) | sign);
}""",
    # |x| = sig * 2^exp with sig in [1, 2) for finite nonzero x, subnormals normalised on
    # the bits (no arithmetic a flushing device could change)
    "sig": """
fn f32_sig(b: u32) -> f32 {
    var m = b & 0x007fffffu;
    if ((b & 0x7f800000u) == 0u) { m = (m << (countLeadingZeros(m) - 8u)) & 0x007fffffu; }
    return bitcast<f32>(m | 0x3f800000u);
}""",
    "expo": """
fn f32_expo(b: u32) -> i32 {
    let e = i32((b >> 23u) & 0xffu);
    if (e == 0) { return -118 - i32(countLeadingZeros(b & 0x007fffffu)); }
    return e - 127;
}""",
    # The sign of a - q b - c - d, exactly, for q within an ulp of a / b and small
    # exact c, d: a - q b is exact as (a - p) - e (Sterbenz; Dekker's product of 12-bit
    # halves, no FMA, since WGSL's fma may be unfused). For a midpoint q + h of the
    # quotient (c = h b, d = 0) or of the root of a (b = q, c = 2 q h, d = h^2) it is a
    # nonzero multiple of 2^-48 a (neither is ever exactly a midpoint).
    "rem_side": """
fn f32_rem_side(a: f32, q: f32, b: f32, c: f32, d: f32) -> f32 {
    let pe = f32_two_prod(q, b);
    let t = f32_two_sum(f32_launder(a - pe.x), -c);
    return t.x + f32_launder(f32_launder(t.y - pe.y) - d);
}""",
    # a / b correctly rounded from q, the device's quotient (within a few ulp), for a,
    # b in [1, 2): one Newton step brings q within an ulp, then the exact sign of the
    # remainder at each neighbouring midpoint settles it (Tuckerman's test).
    "div_fix": """
fn f32_div_fix(a: f32, b: f32, q0: f32) -> f32 {
    let pe = f32_two_prod(q0, b);
    let q = q0 + (f32_launder(a - pe.x) - pe.y) / b;
    let up = bitcast<f32>(bitcast<u32>(q) + 1u);
    let down = bitcast<f32>(bitcast<u32>(q) - 1u);
    if (f32_rem_side(a, q, b, 0.5 * (up - q) * b, 0.0) > 0.0) { return up; }
    if (f32_rem_side(a, q, b, -0.5 * (q - down) * b, 0.0) < 0.0) { return down; }
    return q;
}""",
    "sqrt_rn": """
fn f32_sqrt_rn(x: f32) -> f32 {
    var bx = bitcast<u32>(x);
    var scale = 0;
    if ((bx & 0x7f800000u) == 0u) {
        // subnormal x = 2m 2^-150, 2m normal and exact: sqrt(x) = sqrt(2m) 2^-75, all of
        // it normal, so exact also where the device flushes subnormal operands
        bx = bitcast<u32>(f32(bx & 0x007fffffu) * 2.0);
        scale = -75;
    }
    let ex = i32((bx >> 23u) & 0xffu);
    let odd = ((ex - 127) & 1) != 0;
    let m = bitcast<f32>((bx & 0x007fffffu) | select(0x3f800000u, 0x40000000u, odd));
    let h = (ex - 127 - select(0, 1, odd)) / 2 + scale;
    return f32_sqrt_fix(m, sqrt(m)) * bitcast<f32>(u32(h + 127) << 23u);
}""",
    # sqrt(m) correctly rounded from s, the device's root (within a few ulp), for m in
    # [1, 4): a Newton step, then Tuckerman's test at the neighbouring midpoints.
    "sqrt_fix": """
fn f32_sqrt_fix(m: f32, s0: f32) -> f32 {
    let pe = f32_two_prod(s0, s0);
    let s = s0 + (f32_launder(m - pe.x) - pe.y) / (s0 + s0);
    let up = bitcast<f32>(bitcast<u32>(s) + 1u);
    let down = bitcast<f32>(bitcast<u32>(s) - 1u);
    let hu = 0.5 * (up - s);
    let hd = -0.5 * (s - down);
    if (f32_rem_side(m, s, s, s * (hu + hu), hu * hu) > 0.0) { return up; }
    if (f32_rem_side(m, s, s, s * (hd + hd), hd * hd) < 0.0) { return down; }
    return s;
}""",
    "nextafter": """
fn f32_nextafter(x: f32, y: f32) -> f32 {
    if (f32_isnan(x) || f32_isnan(y)) { return f32_nan(); }
    let bx = bitcast<u32>(x);
    let by = bitcast<u32>(y);
    if (bx == by || (f32_iszero(x) && f32_iszero(y))) { return y; }
    if (f32_iszero(x)) { return bitcast<f32>((by & 0x80000000u) | 1u); }
    // moving away from zero iff y > x has the sign of x (both ordered here)
    if ((f32_key(y) > f32_key(x)) == ((bx & 0x80000000u) == 0u)) { return bitcast<f32>(bx + 1u); }
    return bitcast<f32>(bx - 1u);
}""",
}

_PRIM_F64 = {
    "isnan": "fn f64_isnan(x: f64) -> bool { return (bitcast<u32>(f32(x)) & 0x7fffffffu) > 0x7f800000u; }",
    "isinf": "fn f64_isinf(x: f64) -> bool { return (bitcast<u32>(f32(x * 0x1p-1000)) & 0x7fffffffu) == 0x7f800000u; }",
    "isfinite": "fn f64_isfinite(x: f64) -> bool { return (bitcast<u32>(f32(x * 0x1p-1000)) & 0x7fffffffu) < 0x7f800000u; }",
    "signbit": "fn f64_signbit(x: f64) -> bool { return (bitcast<u32>(f32(x)) & 0x80000000u) != 0u; }",
    # see f32_szero; converting f32's signed zero is exact
    "szero": "fn f64_szero(neg: bool) -> f64 { return f64(bitcast<f32>(select(0u, 0x80000000u, neg))); }",
    # zero test of a value already known not to be NaN (no bits needed: == is exact)
    # see f32_launder and the module doc. f64 has no bits to test, so the test is on
    # f32(s), a quiet NaN for any NaN s. Against a constant signalling NaN that test is
    # provably false (a conversion never yields one), so a compiler may fold it; here the
    # pattern's low bits are the length of the kernel's parameter binding P (1024 words:
    # a signalling NaN too, which no compiler can know). Not a select on that unknown
    # alone: one shared condition let lavapipe's compiler specialize whole loops for it
    # and fold every launder there.
    "launder": """
fn f64_launder(s: f64) -> f64 {
    return select(s, f64(0.0), bitcast<u32>(f32(s)) == (arrayLength(&P) | 0x7fa00000u));
}""",
    "iszero": "fn f64_iszero(x: f64) -> bool { return x == 0.0; }",
    "equal": "fn f64_equal(x: f64, y: f64) -> bool { return x == y; }",
    "less": "fn f64_less(x: f64, y: f64) -> bool { return x < y; }",
    "less_equal": "fn f64_less_equal(x: f64, y: f64) -> bool { return x <= y; }",
    # float32(x) with a zero or subnormal result rounded from the exact scaled value
    # (half to even, as the conversion rounds), kept where a device would flush it
    "to_f32": """
fn f64_to_f32(x: f64) -> f32 {
    let a = abs(x);
    if (f64_isnan(x) || a >= 0x1p-126) { return f32(x); }
    let m = u32(round(a * 0x1p149));
    return bitcast<f32>(m | select(0u, 0x80000000u, f64_signbit(x)));
}""",
    "nan": "fn f64_nan() -> f64 { return f64(bitcast<f32>(0x7fc00000u)); }",
    "inf": "fn f64_inf() -> f64 { return f64(bitcast<f32>(0x7f800000u)); }",
    "abs": "fn f64_abs(x: f64) -> f64 { return abs(x); }",
    # float64 division and sqrt are correctly rounded where the device has float64
    "div_rn": "fn f64_div_rn(x: f64, y: f64) -> f64 { return x / y; }",
    "sqrt_rn": "fn f64_sqrt_rn(x: f64) -> f64 { return sqrt(x); }",
    "copysign": """
fn f64_copysign(x: f64, y: f64) -> f64 {
    let a = abs(x);
    return select(a, -a, f64_signbit(y));
}""",
    # head with 24 significant bits (f32 rounding), exact tail; 24x24 and 24x29-bit
    # partial products are exact.  Only for |a| in f32 range (callers ensure it).
    "split": """
fn f64_split(a: f64) -> vec2<f64> {
    let h = f64(f32(a));
    return vec2<f64>(h, a - h);
}""",
    "nextafter": """
fn f64_nextafter(x: f64, y: f64) -> f64 {
    if (f64_isnan(x) || f64_isnan(y)) { return f64_nan(); }
    if (x == y) { return y; }
    if (x == 0.0) { return f64_copysign(4.9406564584124654e-324, y); }
    let up = (y > x) == !f64_signbit(x);   // moving away from zero
    if (f64_isinf(x)) { return f64_copysign(1.7976931348623157e308, x); }
    let fr = f64_frexp(x);                 // |fract| in [0.5, 1)
    let fe = i32(fr.y);
    var e: i32 = max(fe - 53, -1074);
    if (!up && abs(fr.x) == 0.5 && fe - 54 >= -1074) { e = fe - 54; }
    let u = f64_scalbn(f64(1.0), e);
    let r = select(x - u, x + u, y > x);
    if (r == 0.0) { return f64_copysign(0.0, x); }
    return r;
}""",
}

# --------------------------------------------------------------------------
# Payne-Hanek reduction modulo pi/2 for huge arguments (no 64-bit integers)
# --------------------------------------------------------------------------

# f64: |x| = (x0 2^48 + x1 2^24 + x2) 2^(ex - 72) with 24-bit integer chunks x_j (exact
# f64), and 2/pi = sum_i c_i 2^(-24 (i + 1)).  x 2/pi is the sum over k of
# S_k 2^(ex - 48 - 24 k) with S_k = sum_j x_j c_(k-j) < 2^50 (exact in f64).  Terms with a
# weight >= 4 are multiples of 4 and dropped; the eight next ones give 2^-139 absolute
# accuracy (the closest a double comes to a multiple of pi/2 is ~2^-61 of a quadrant).
# Carries turn the S_k into base-2^24 digits; the integer part (mod 4) and the top of the
# fraction are then exact doubles, and the rest of the fraction is summed as a double-
# double of nonnegative digits (complemented when the fraction is rounded up), so heavy
# cancellation costs no accuracy.
_F64_REM_PIO2_LARGE = """
const F64_TWO_OVER_PI_TAB = array<f64, $N>($TAB);

fn f64_two_over_pi_chunk(i: i32) -> f64 { return F64_TWO_OVER_PI_TAB[i + 2]; }

// (r, q) with |x| = q pi/2 + r (mod 2 pi), |r| <= pi/4, for finite |x| >= 2^26
fn f64_rem_pio2_large(ax: f64) -> vec2<f64> {
    let fr = f64_frexp(ax);
    let ex = i32(fr.y);
    var t = fr.x * 0x1p24;
    let x0 = floor(t);
    t = (t - x0) * 0x1p24;
    let x1 = floor(t);
    let x2 = (t - x1) * 0x1p24;
    let k0 = max(0, (ex - 26) / 24);
    let e0 = ex - 48 - 24 * k0;            // weight of digit k0 is 2^e0, -22 <= e0 <= 1
    var d: array<f64, 8>;
    var carry = f64(0.0);
    for (var j = 7; j >= 0; j--) {
        let k = k0 + j;
        let sk = x0 * f64_two_over_pi_chunk(k) + x1 * f64_two_over_pi_chunk(k - 1)
               + x2 * f64_two_over_pi_chunk(k - 2) + carry;
        carry = floor(sk * 0x1p-24);
        d[j] = sk - carry * 0x1p24;
        if (j == 0) { d[0] = sk; }
    }
    let u = f64_pow2i(e0 - 24);            // weight of digit k0 + 1
    var z = d[0] * f64_pow2i(e0);          // < 2^52, exact
    z = z - 4.0 * floor(z * 0.25);
    z = z + d[1] * u;                      // exact: bits 2^1 .. 2^(e0 - 24)
    var n = floor(z);
    var f = z - n;
    let neg = f >= 0.5;
    if (neg) {
        // round up: y = f - 1 + rest = -((1 - f - u) + (u - rest))
        n = n + 1.0;
        f = (1.0 - f) - u;
        for (var j = 2; j < 7; j++) { d[j] = 0x1p24 - 1.0 - d[j]; }
        d[7] = 0x1p24 - d[7];
    }
    // |y| = f + sum_(j >= 2) d[j] u 2^(-24 (j - 1)), all terms >= 0
    var w = u * 0x1p-144;
    var hi = d[7] * w;
    var lo = f64(0.0);
    for (var j = 6; j >= 2; j--) {
        w = w * 0x1p24;
        let s2 = f64_two_sum(hi, d[j] * w);
        hi = s2.x;
        lo = lo + s2.y;
    }
    let s3 = f64_two_sum(f, hi);
    lo = lo + s3.y;
    let yh = f64_launder(s3.x + lo);
    let yl = lo - f64_launder(yh - s3.x);
    // r = y pi/2 in double-double, rounded (the barrier keeps yh * PI2_HI and
    // yl * PI2_HI, or yh * PI2_HI and yh * PI2_LO, from being factored)
    let p = f64_two_prod(yh, $PI2_HI);
    var r = p.x + f64_launder(p.y + (yh * $PI2_LO + yl * $PI2_HI));
    if (neg) { r = -r; }
    return vec2<f64>(r, n - 4.0 * floor(n * 0.25));
}"""

# f32: |x| = m 2^e with a 24-bit integer m; the 96 bits of 2/pi from the first that
# matters mod 4 (a 32-bit zero word is prepended so that every e >= -30 works) times m
# gives, in u32 arithmetic, the quadrant and a 64-bit fraction (2^-70 accurate), which is
# normalised and multiplied by pi/2 in compensated f32 arithmetic. The 32 x 32 -> 64-bit
# products are intmath's eu64_mul_wide (as (low word, high word)).
_F32_REM_PIO2_LARGE = """
const F32_TWO_OVER_PI_TAB = array<u32, $N>($TAB);

// bits [s, s + 32) of the padded 2/pi table
fn f32_two_over_pi_word(s: u32) -> u32 {
    let i = s >> 5u;
    let sh = s & 31u;
    let a = F32_TWO_OVER_PI_TAB[i];
    let b = F32_TWO_OVER_PI_TAB[i + 1u];
    return select((a << sh) | (b >> (32u - sh)), a, sh == 0u);
}

// (r, q) with |x| = q pi/2 + r (mod 2 pi), |r| <= pi/4, for finite |x| >= 2^-7
fn f32_rem_pio2_large(ax: f32) -> vec2<f32> {
    let b = bitcast<u32>(ax);
    let m = (b & 0x7fffffu) | 0x800000u;
    let s = (b >> 23u) - 120u;             // e + 30 with ax = m 2^e, e = biased - 150
    let p2 = eu64_mul_wide(m, f32_two_over_pi_word(s + 64u));
    let p1 = eu64_mul_wide(m, f32_two_over_pi_word(s + 32u));
    let p0 = eu64_mul_wide(m, f32_two_over_pi_word(s));
    // m F 2^-94 (mod 4), F the 96 bits: words w2 w1 w0 of the product (bits >= 96 dropped)
    let w0 = p2.x;
    let w1 = p2.y + p1.x;
    let w2 = p1.y + p0.x + select(0u, 1u, w1 < p2.y);
    var q = w2 >> 30u;
    var hi = (w2 << 2u) | (w1 >> 30u);      // fraction bits, 2^-32 .. 2^-64 for lo
    var lo = (w1 << 2u) | (w0 >> 30u);
    let neg = (hi & 0x80000000u) != 0u;
    if (neg) {
        q = q + 1u;
        lo = ~lo + 1u;
        hi = ~hi + select(0u, 1u, lo == 0u);
    }
    var sc = -64;
    if (hi == 0u) { hi = lo; lo = 0u; sc = -96; }
    if (hi == 0u) { return vec2<f32>(0.0, f32(q & 3u)); }
    let lz = countLeadingZeros(hi);
    if (lz > 0u) { hi = (hi << lz) | (lo >> (32u - lz)); lo = lo << lz; }
    sc = sc - i32(lz);
    let fh = f32(hi >> 8u) * f32_pow2i(sc + 40);
    let fl = f32(((hi & 0xffu) << 16u) | (lo >> 16u)) * f32_pow2i(sc + 16);
    let p = f32_two_prod(fh, $PI2_HI);
    var r = p.x + f32_launder(p.y + (fh * $PI2_LO + fl * $PI2_HI));
    if (neg) { r = -r; }
    return vec2<f32>(r, f32(q & 3u));
}"""


# --------------------------------------------------------------------------
# generic templates (``_wgsl.template``'s style: $T = type; other $NAMES from _K and
# the polynomials)
# --------------------------------------------------------------------------

_GENERIC = {
    # frexp of finite nonzero x as (fract, exp); subnormals are normalised first
    # (lavapipe's frexp returns a wrong exponent for them).  f64: see _F64_ONLY
    "frexp": """
fn $T_frexp(x: $T) -> vec2<$T> {
    var y = x;
    var s = 0;
    if (abs(x) < $MINNORM) { y = x * 0x1p32 * 0x1p32; s = 64; }
    let fr = frexp(y);
    return vec2<$T>(fr.fract, $T(i32(fr.exp) - s));
}""",
    # 2^k for k in [EMIN, EMAX] (normal result, so ldexp is well defined).  f64: _F64_ONLY
    "pow2i": """
fn $T_pow2i(k: i32) -> $T { return ldexp($T(1.0), k); }""",
    # x * 2^n for any n, correctly rounded on the last multiply
    "scalbn": """
fn $T_scalbn(x: $T, n: i32) -> $T {
    var y = x;
    var k = n;
    if (k > $EMAX) {
        y = $T_launder(y * $T_pow2i($EMAX));
        k = k - $EMAX;
        if (k > $EMAX) { y = $T_launder(y * $T_pow2i($EMAX)); k = min(k - $EMAX, $EMAX); }
    } else if (k < $EMIN) {
        y = $T_launder(y * $T_pow2i($SCALE_LO));
        k = k - ($SCALE_LO);
        if (k < $EMIN) { y = $T_launder(y * $T_pow2i($SCALE_LO)); k = max(k - ($SCALE_LO), $EMIN); }
    }
    // laundered: (x * 2^a) * 2^b must not be reassociated into x * 2^(a + b), which
    // can underflow where the two steps do not (NVIDIA, float64)
    let r = $T_launder(y) * $T_pow2i(k);
    return select(r, $T_copysign(0.0, x), r == 0.0);  // an underflow keeps x's sign
}""",
    # IEEE's x / y where x or y is NaN, inf or zero (``div_ordinary`` is false), shared by
    # divide and floor_divide: NaN, a signed inf or a signed zero
    "div_ordinary": """
fn $T_div_ordinary(x: $T, y: $T) -> bool {
    return $T_isfinite(x) && $T_isfinite(y) && !$T_iszero(x) && !$T_iszero(y);
}""",
    "div_special": """
fn $T_div_special(x: $T, y: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    let neg = $T_signbit(x) != $T_signbit(y);
    let xinf = $T_isinf(x);
    let yinf = $T_isinf(y);
    let xz = $T_iszero(x);
    let yz = $T_iszero(y);
    if ((xinf && yinf) || (xz && yz)) { return $T_nan(); }
    if (xinf || yz) { return select($T_inf(), -$T_inf(), neg); }
    return $T_szero(neg);   // yinf || xz
}""",
    "divide": """
fn $T_divide(x: $T, y: $T) -> $T {
    if (!$T_div_ordinary(x, y)) { return $T_div_special(x, y); }
    return $T_div_rn(x, y);
}""",
    "reciprocal": """
fn $T_reciprocal(x: $T) -> $T { return $T_divide($T(1.0), x); }""",
    "square": """
fn $T_square(x: $T) -> $T { return x * x; }""",
    "ceil": """
fn $T_ceil(x: $T) -> $T { return ceil(x); }""",
    "floor": """
fn $T_floor(x: $T) -> $T { return floor(x); }""",
    "trunc": """
fn $T_trunc(x: $T) -> $T { return trunc(x); }""",
    "round": """
fn $T_round(x: $T) -> $T { return round(x); }""",
    "sign": """
fn $T_sign(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if ($T_iszero(x)) { return $T(0.0); }
    return $T_copysign($T(1.0), x);
}""",
    "sqrt": """
fn $T_sqrt(x: $T) -> $T {
    if ($T_isnan(x) || $T_iszero(x)) { return x; }
    if ($T_signbit(x)) { return $T_nan(); }
    if ($T_isinf(x)) { return x; }
    return $T_sqrt_rn(x);
}""",
    "maximum": """
fn $T_maximum(x: $T, y: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    if (x == y) { return select(x, y, $T_signbit(x)); }   // max(-0, +0) = +0
    return select(y, x, x > y);
}""",
    "minimum": """
fn $T_minimum(x: $T, y: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    if (x == y) { return select(y, x, $T_signbit(x)); }   // min(-0, +0) = -0
    return select(y, x, x < y);
}""",
    # ---------------------------------------------------------------- exp
    # e^r for |r| <= ln2/2 (plus a tail rl added to r)
    "exp_kernel": """
fn $T_exp_kernel(r: $T) -> $T { return 1.0 + $T_launder(r + r * r * $EXP_P); }""",
    "expm1_kernel": """
fn $T_expm1_kernel(r: $T) -> $T { return r + r * r * $EXP_P; }""",
    "exp": """
fn $T_exp(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (x > $EXP_HI) { return $T_inf(); }
    if (x < $EXP_LO) { return $T(0.0); }
    let k = $T_round(x * $IVLN2_HI);
    let r = $T_launder(x - k * $LN2_HI) - k * $LN2_LO;
    return $T_scalbn($T_exp_kernel(r), i32(k));
}""",
    "expm1": """
fn $T_expm1(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (x > $EXP_HI) { return $T_inf(); }
    if (x < $EM1_LO) { return $T(-1.0); }
    if (abs(x) < 0x1p-60) { return x; }
    if (abs(x) < 0.34657359027997264) { return $T_expm1_kernel(x); }
    let k = $T_round(x * $IVLN2_HI);
    let r = $T_launder(x - k * $LN2_HI) - k * $LN2_LO;
    let em = $T_expm1_kernel(r);
    let ik = i32(k);
    if (ik > $MANT1 + 2) { return $T_scalbn(1.0 + em, ik); }
    if (ik < -2) { return $T_scalbn(1.0 + em, ik) - 1.0; }
    let t = $T_pow2i(ik);
    return $T_launder(t - 1.0) + t * em;
}""",
    # ---------------------------------------------------------------- log
    # for finite x > 0: (e, log(m)) with x = m * 2^e, m in [sqrt(1/2), sqrt(2))
    "log_core": """
fn $T_log_core(x: $T) -> vec2<$T> {
    let fr = $T_frexp(x);
    var m = fr.x;
    var e = i32(fr.y);
    if (m < 0.7071067811865476) { m = m + m; e = e - 1; }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let R = z * $LOG_P;
    let hfsq = 0.5 * f * f;
    return vec2<$T>($T(e), f - $T_launder(hfsq - s * (hfsq + R)));
}""",
    # log of a nonnegative non-finite-or-special x, or -1 sentinel when x is regular
    "log_special": """
fn $T_log_special(x: $T) -> vec2<$T> {
    if ($T_isnan(x)) { return vec2<$T>(1.0, x); }
    if ($T_iszero(x)) { return vec2<$T>(1.0, -$T_inf()); }
    if ($T_signbit(x)) { return vec2<$T>(1.0, $T_nan()); }
    if ($T_isinf(x)) { return vec2<$T>(1.0, x); }
    return vec2<$T>(0.0, 0.0);
}""",
    "log": """
fn $T_log(x: $T) -> $T {
    let sp = $T_log_special(x);
    if (sp.x != 0.0) { return sp.y; }
    let c = $T_log_core(x);
    return c.x * $LN2_HI + $T_launder(c.y + c.x * $LN2_LO);
}""",
    "log2": """
fn $T_log2(x: $T) -> $T {
    let sp = $T_log_special(x);
    if (sp.x != 0.0) { return sp.y; }
    let c = $T_log_core(x);
    return c.x + $T_launder(c.y * $IVLN2_HI + $T_launder(c.y * $IVLN2_LO));
}""",
    "log10": """
fn $T_log10(x: $T) -> $T {
    let sp = $T_log_special(x);
    if (sp.x != 0.0) { return sp.y; }
    let c = $T_log_core(x);
    return c.x * $L10_2HI + $T_launder(c.x * $L10_2LO + c.y * 0.4342944819032518);
}""",
    "log1p": """
fn $T_log1p(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (x == -1.0) { return -$T_inf(); }
    if (x < -1.0) { return $T_nan(); }
    if ($T_isinf(x)) { return x; }
    if (x > -0.2928932188134524 && x < 0.41421356237309503) {
        // 1 + x in [sqrt(1/2), sqrt(2)): the log kernel on f = x, no rounding of 1 + x
        let s = x / (2.0 + x);
        let z = s * s;
        let R = z * $LOG_P;
        let hfsq = 0.5 * x * x;
        return x - $T_launder(hfsq - s * (hfsq + R));
    }
    // |log1p(x)| > 0.34 here, so the rounding of 1 + x costs < 1 ulp
    return $T_log(1.0 + x);
}""",
    "logaddexp": """
fn $T_logaddexp(x: $T, y: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    if (x == y) {
        if ($T_isinf(x)) { return x; }
        return x + 0.6931471805599453;
    }
    let m = max(x, y);
    if ($T_isinf(m)) { return m; }
    let d = -abs(x - y);
    return m + $T_log1p($T_exp(d));
}""",
    # ---------------------------------------------------------------- pow
    # exact product a*b as (hi, lo), a, b finite with |a|, |b| in split range
    "two_prod": """
fn $T_two_prod(a: $T, b: $T) -> vec2<$T> {
    // the product laundered before sa.x sb.x - p: contracted into that subtraction, a b
    // would be taken exactly, not as the rounded p whose error e is. (A caller's quotient
    // q = n / d passed with d is laundered by the caller, so that no compiler can cancel
    // q d into n and make n - q d 0; and the caller's (n - p.x) - p.y needs n - p.x
    // laundered, or it may become n - (p.x + p.y): see div_dd.)
    let p = $T_launder(a * b);
    let sa = $T_split(a);
    let sb = $T_split(b);
    // one partial product per barrier: nothing to factor (a * (b_hi + b_lo) = a * b)
    var e = $T_launder(sa.x * sb.x - p);
    e = $T_launder(e + sa.x * sb.y);
    e = $T_launder(e + sa.y * sb.x);
    // p laundered for the caller too: a caller's c - p or c + p that a compiler contracts
    // into a fused multiply-add (lavapipe's did, in div_dd) is exact already, and e then
    // counts twice
    return vec2<$T>(p, e + sa.y * sb.y);
}""",
    "two_sum": """
fn $T_two_sum(a: $T, b: $T) -> vec2<$T> {
    let s = $T_launder(a + b);
    let bb = $T_launder(s - a);
    let av = $T_launder(s - bb);
    return vec2<$T>(s, $T_launder(a - av) + $T_launder(b - bb));
}""",
    # log(x) as hi + lo for finite x > 0, ~2^-(p+8) relative
    "log_dd": """
fn $T_log_dd(x: $T) -> vec2<$T> {
    let fr = $T_frexp(x);
    var m = fr.x;
    var e = i32(fr.y);
    if (m < 0.7071067811865476) { m = m + m; e = e - 1; }
    let f = m - 1.0;
    let d = 2.0 + f;
    let s = f / d;
    // s_lo = (f - s*d) / d with d = 2 + f: f - 2s is exact, s*f via two_prod
    let sf = $T_two_prod(s, f);
    let slo = ($T_launder($T_launder(f - 2.0 * s) - sf.x) - sf.y) / d;
    let z = s * s;
    let R = z * $LOG_P;
    let ef = $T(e);
    let hi = $T_two_sum(ef * $LN2_HI, 2.0 * s);
    let lo = hi.y + (ef * $LN2_LO + (2.0 * slo + s * R));
    let h = $T_launder(hi.x + lo);
    return vec2<$T>(h, lo - $T_launder(h - hi.x));
}""",
    # x^y for finite x > 0, finite nonzero y
    "pow_pos": """
fn $T_pow_pos(x: $T, y: $T) -> $T {
    let l = $T_log_dd(x);
    var th: $T;
    var tl: $T;
    let ay = abs(y);
    if (ay > $POW_YBIG || ay < $POW_YTINY) {
        th = y * l.x;
        tl = y * l.y;
    } else {
        let p = $T_two_prod(y, l.x);
        th = p.x;
        tl = p.y + y * l.y;
    }
    if (th > $POW_HI) { return $T_inf(); }
    if (th < $POW_LO) { return $T(0.0); }
    let k = $T_round(th * $IVLN2_HI);
    let r = $T_launder($T_launder(th - k * $LN2_HI) - k * $LN2_LO) + tl;
    return $T_scalbn($T_exp_kernel(r), i32(k));
}""",
    # whether finite y is an integer
    "isint": """
fn $T_isint(y: $T) -> bool { return floor(y) == y; }""",
    "pow": """
fn $T_pow(x: $T, y: $T) -> $T {
    if ($T_iszero(y) && !$T_isnan(y)) { return $T(1.0); }
    if ($T_isnan(x)) { return x; }
    if (x == 1.0) { return $T(1.0); }
    if ($T_isnan(y)) { return y; }
    let ax = $T_abs(x);   // on the bits: abs() of a subnormal is 0 where the device flushes
    if ($T_isinf(y)) {
        if (ax == 1.0) { return $T(1.0); }
        if ((ax > 1.0) == !$T_signbit(y)) { return $T_inf(); }
        return $T(0.0);
    }
    let yint = $T_isint(y);
    let hy = 0.5 * y;
    let yodd = yint && floor(hy) != hy;
    let xneg = $T_signbit(x);
    if ($T_iszero(x) || $T_isinf(x)) {
        // |x|^y is 0 or inf; the sign is x's when y is an odd integer
        let big = !$T_signbit(y) == $T_isinf(x);   // signs from the bits: y may be subnormal
        let r = select($T(0.0), $T_inf(), big);
        return select(r, -r, xneg && yodd);
    }
    if (xneg && !yint) { return $T_nan(); }
    let r = $T_pow_pos(ax, y);
    return select(r, -r, xneg && yodd);
}""",
    # ---------------------------------------------------------------- hyperbolic
    "sinh": """
fn $T_sinh(x: $T) -> $T {
    if ($T_isnan(x) || $T_isinf(x)) { return x; }
    let ax = abs(x);
    if (ax < $TINY) { return x; }
    let h = $T_copysign(0.5, x);
    if (ax < 1.0) {
        let t = $T_expm1(ax);
        return h * (2.0 * t - t * t / (t + 1.0));
    }
    if (ax < 22.0) {
        let t = $T_expm1(ax);
        return h * (t + t / (t + 1.0));
    }
    if (ax < $EXP_HI) { return h * $T_exp(ax); }
    let w = $T_exp(0.5 * ax);
    return $T_launder(h * w) * w;  // not h * (w * w), which overflows
}""",
    "cosh": """
fn $T_cosh(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if ($T_isinf(x)) { return $T_inf(); }
    let ax = abs(x);
    if (ax < 0.34657359027997264) {
        let t = $T_expm1(ax);
        let w = 1.0 + t;
        return 1.0 + (t * t) / (w + w);
    }
    if (ax < 22.0) {
        let t = $T_exp(ax);
        return 0.5 * t + 0.5 / t;
    }
    if (ax < $EXP_HI) { return 0.5 * $T_exp(ax); }
    let w = $T_exp(0.5 * ax);
    return $T_launder(0.5 * w) * w;  // not 0.5 * (w * w), which overflows
}""",
    "tanh": """
fn $T_tanh(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if ($T_isinf(x)) { return $T_copysign(1.0, x); }
    let ax = abs(x);
    if (ax < $TINY) { return x; }
    var z: $T;
    if (ax < 1.0) {
        let t = $T_expm1(-2.0 * ax);
        z = -t / (t + 2.0);
    } else if (ax < 22.0) {
        let t = $T_expm1(2.0 * ax);
        z = 1.0 - 2.0 / (t + 2.0);
    } else {
        z = 1.0;
    }
    return $T_copysign(z, x);
}""",
    "asinh": """
fn $T_asinh(x: $T) -> $T {
    if ($T_isnan(x) || $T_isinf(x)) { return x; }
    let ax = abs(x);
    if (ax < $TINY) { return x; }
    var w: $T;
    if (ax > $BIG) {
        w = $T_log(ax) + 0.6931471805599453;
    } else if (ax > 2.0) {
        w = $T_log(2.0 * ax + 1.0 / (sqrt(ax * ax + 1.0) + ax));
    } else {
        let t = ax * ax;
        w = $T_log1p(ax + t / (1.0 + sqrt(1.0 + t)));
    }
    return $T_copysign(w, x);
}""",
    "acosh": """
fn $T_acosh(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (x < 1.0) { return $T_nan(); }
    if ($T_isinf(x)) { return x; }
    if (x > $BIG) { return $T_log(x) + 0.6931471805599453; }
    if (x > 2.0) { return $T_log(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))); }
    let t = x - 1.0;
    return $T_log1p(t + sqrt(2.0 * t + t * t));
}""",
    "atanh": """
fn $T_atanh(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    let ax = abs(x);
    if (ax > 1.0) { return $T_nan(); }
    if (ax == 1.0) { return $T_copysign($T_inf(), x); }
    if (ax < $TINY) { return x; }
    var w: $T;
    if (ax < 0.5) {
        let t = ax + ax;
        w = 0.5 * $T_log1p(t + t * ax / (1.0 - ax));
    } else {
        w = 0.5 * $T_log1p((ax + ax) / (1.0 - ax));
    }
    return $T_copysign(w, x);
}""",
    # ---------------------------------------------------------------- trig
    # x = k * pi/2 + r, |r| <= ~pi/4; returns (r, k mod 4) for finite x
    "rem_pio2": """
fn $T_rem_pio2(x: $T) -> vec2<$T> {
    if (abs(x) > $TRIG_XMAX) {
        // Payne-Hanek, exact for every finite x
        let v = $T_rem_pio2_large(abs(x));
        if ($T_signbit(x)) { return vec2<$T>(-v.x, select(4.0 - v.y, 0.0, v.y == 0.0)); }
        return v;
    }
    let k = $T_round(x * 0.6366197723675814);
    let kh = $T_trunc(k * (1.0 / $TRIG_KSPLIT)) * $TRIG_KSPLIT;
    let kl = k - kh;
    var r = x;
$TRIG_STEPS
    let q = k - 4.0 * floor(k * 0.25);
    return vec2<$T>(r, q);
}""",
    "sin_kernel": """
fn $T_sin_kernel(r: $T) -> $T { let z = r * r; return r + r * z * $SIN_P; }""",
    "cos_kernel": """
fn $T_cos_kernel(r: $T) -> $T {
    let z = r * r;
    let hz = 0.5 * z;
    let w = $T_launder(1.0 - hz);
    let c = $T_launder(1.0 - w) - hz;   // -(rounding error of w), exact
    return w + $T_launder(c + z * z * $COS_P);
}""",
    # sin, cos and tan through the reduction $TRIG_RQ (float32: rem_pio2, (r, q);
    # float64: rem_pio2_dd, (r, y, q), see _DD_TRIG) and its kernels
    "sin": """
fn $T_sin(x: $T) -> $T {
    if ($T_isnan(x) || $T_isinf(x)) { return $T_nan(); }
    if (abs(x) < $TINY) { return x; }
    let rq = $T_$TRIG_RQ(x);
    let q = i32(rq.$TRIG_Q);
    var v: $T;
    if ((q & 1) == 0) { v = $T_$TRIG_SIN(rq.x$TRIG_TAIL); } else { v = $T_$TRIG_COS(rq.x$TRIG_TAIL); }
    return select(v, -v, q >= 2);
}""",
    "cos": """
fn $T_cos(x: $T) -> $T {
    if ($T_isnan(x) || $T_isinf(x)) { return $T_nan(); }
    let rq = $T_$TRIG_RQ(x);
    let q = i32(rq.$TRIG_Q);
    var v: $T;
    if ((q & 1) == 0) { v = $T_$TRIG_COS(rq.x$TRIG_TAIL); } else { v = $T_$TRIG_SIN(rq.x$TRIG_TAIL); }
    return select(v, -v, q == 1 || q == 2);
}""",
    "tan": """
fn $T_tan(x: $T) -> $T {
    if ($T_isnan(x) || $T_isinf(x)) { return $T_nan(); }
    if (abs(x) < $TINY) { return x; }
    let rq = $T_$TRIG_RQ(x);
    let s = $T_$TRIG_SIN(rq.x$TRIG_TAIL);
    let c = $T_$TRIG_COS(rq.x$TRIG_TAIL);
    if ((i32(rq.$TRIG_Q) & 1) == 0) { return $T_div_rn(s, c); }
    return $T_div_rn(-c, s);
}""",
    "atan": """
fn $T_atan(x: $T) -> $T { return $T_atan_lo(x, 0.0, false); }""",
    # atan(x + dx) for a tiny dx (what a rounded argument left out), given
    # c = dx / (1 + x^2): c joins the smallest term before the one rounding of the sum.
    # With neg (for x >= 0), pi - atan(x + dx), also rounded once: pi's and the
    # reduction constant's low parts join the small terms (rounding atan first and
    # then the difference left atan2 0.22 ulp off on average for x < 0, against 0.10)
    "atan_lo": """
fn $T_atan_lo(x: $T, c: $T, neg: bool) -> $T {
    if ($T_isnan(x)) { return x; }
    let ax = abs(x);
    if (ax > $ATAN_HUGE) { return $T_copysign($PI2_HI, x); }
    if (ax < $TINY) {
        if (neg) { return $PI_HI + ($PI_LO - ax); }
        return x;
    }
    var t: $T;
    var hi: $T;
    var lo: $T;
    var id = 0;
    if (ax < 0.4375) {
        t = ax; id = -1; hi = 0.0; lo = 0.0;
    } else if (ax < 0.6875) {
        t = (2.0 * ax - 1.0) / (2.0 + ax); hi = $ATAN05_HI; lo = $ATAN05_LO;
    } else if (ax < 1.1875) {
        t = (ax - 1.0) / (ax + 1.0); hi = $PI4_HI; lo = $PI4_LO;
    } else if (ax < 2.4375) {
        t = (ax - 1.5) / (1.0 + 1.5 * ax); hi = $ATAN15_HI; lo = $ATAN15_LO;
    } else {
        t = -1.0 / ax; hi = $PI2_HI; lo = $PI2_LO;
    }
    let z = t * t;
    let p = t * z * $ATAN_P + c;
    var r: $T;
    if (neg) {
        let d = $T_two_sum($PI_HI, -hi);   // pi_hi - hi exactly
        r = d.x + $T_launder($T_launder((d.y + ($PI_LO - lo)) - p) - t);
    } else if (id < 0) { r = t + p; } else { r = hi + $T_launder(t + (p + lo)); }
    return $T_copysign(r, x);
}""",
    "atan2": """
fn $T_atan2(y: $T, x: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    let xneg = $T_signbit(x);
    if ($T_isinf(x)) {
        if ($T_isinf(y)) {
            return $T_copysign(select($T($PI4_HI), $T(2.356194490192345), xneg), y);
        }
        return $T_copysign(select($T(0.0), $T($PI_HI), xneg), y);
    }
    if ($T_isinf(y)) { return $T_copysign($PI2_HI, y); }
    if ($T_iszero(y)) {
        if (xneg) { return $T_copysign($PI_HI, y); }
        return y;
    }
    if ($T_iszero(x)) { return $T_copysign($PI2_HI, y); }
    // atan of the correctly rounded |y / x|, with the quotient's rounding error
    // (ay - q ax) / ax, from the exact product q ax, passed on (float64: without it
    // atan2 was up to 2 ulp off, 0.16 ulp on average, 1 and 0.10 with it; float32's
    // atan is itself 2 ulp off and gains nothing)
    // (the quotient of y and x themselves: abs() of a subnormal is flushed to zero on
    // devices without subnormals, the division scales its operands first)
    let q = $T_launder(abs($T_divide(y, x)));   // (see two_prod: q |x| is not |y|)
    let ax = abs(x);
    var c = $T(0.0);
    if ($ATAN2_DQ && q > $DD_LO && q < $DD_HI && ax > $DD_LO && ax < $DD_HI) {
        let ay = abs(y);
        let pe = $T_two_prod(q, ax);
        c = ($T_launder(ay - pe.x) - pe.y) / ax / (1.0 + q * q);
    }
    return $T_copysign($T_atan_lo(q, c, xneg), y);
}""",
    "asin": """
fn $T_asin(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (abs(x) > 1.0) { return $T_nan(); }
    if (abs(x) < $TINY) { return x; }
    return $T_atan2(x, sqrt((1.0 - x) * (1.0 + x)));
}""",
    "acos": """
fn $T_acos(x: $T) -> $T {
    if ($T_isnan(x)) { return x; }
    if (abs(x) > 1.0) { return $T_nan(); }
    return 2.0 * $T_atan2(sqrt(1.0 - x), sqrt(1.0 + x));
}""",
    # ---------------------------------------------------------------- misc
    "hypot": """
fn $T_hypot(x: $T, y: $T) -> $T {
    if ($T_isinf(x) || $T_isinf(y)) { return $T_inf(); }
    if ($T_isnan(x) || $T_isnan(y)) { return $T_nan(); }
    let a = max(abs(x), abs(y));
    let b = min(abs(x), abs(y));
    if ($T_iszero(a)) { return $T(0.0); }
    let e = i32($T_frexp(a).y);
    let sa = $T_scalbn(a, -e);
    let bs = $T_scalbn(b, -e);
    return $T_scalbn(sqrt(sa * sa + bs * bs), e);
}""",
    # exact fmod for finite x, finite nonzero y (sign of x)
    "fmod": """
fn $T_fmod(x: $T, y: $T) -> $T {
    let ax = abs(x);
    let ay = abs(y);
    if (ax < ay) { return x; }
    let fx = $T_frexp(ax);
    let fy = $T_frexp(ay);
    var r = ax;
    var t = $T_scalbn(fy.x, i32(fx.y));
    for (var i = i32(fx.y) - i32(fy.y); i >= 0; i--) {
        if (r >= t) { r = r - t; }
        t = t * 0.5;
    }
    return $T_copysign(r, x);
}""",
    "remainder": """
fn $T_remainder(x: $T, y: $T) -> $T {
    if ($T_isnan(x) || $T_isnan(y) || $T_isinf(x) || $T_iszero(y)) { return $T_nan(); }
    if ($T_isinf(y)) {
        if ($T_iszero(x)) { return $T_copysign(0.0, y); }
        if ($T_signbit(x) == $T_signbit(y)) { return x; }
        return y;
    }
    var m = $T_fmod(x, y);
    if ($T_iszero(m)) { return $T_copysign(0.0, y); }
    if ($T_signbit(m) != $T_signbit(y)) { m = $T_rem_add(m, y); }
    return m;
}""",
    # m + y for a remainder m of x by y, |m| < |y| (f32: exact for a subnormal m as well)
    "rem_add": """
fn $T_rem_add(m: $T, y: $T) -> $T { return m + y; }""",
    "floor_divide": """
fn $T_floor_divide(x: $T, y: $T) -> $T {
    if (!$T_div_ordinary(x, y)) { return $T_div_special(x, y); }
    let neg = $T_signbit(x) != $T_signbit(y);
    // NumPy's npy_divmod: quotient from the exact remainder, then fix-ups
    let m = $T_fmod(x, y);
    // not the device's '/' (NVIDIA: through 1/y, flushed past 2^126); no subtraction of a
    // zero remainder (a flushing device would take a subnormal x for 0)
    var div = $T_divide(select(x - m, x, $T_iszero(m)), y);
    if (!$T_iszero(m) && $T_signbit(m) != $T_signbit(y)) { div = div - 1.0; }
    if ($T_iszero(div)) { return $T_szero(neg); }
    var fd = floor(div);
    if (div - fd > 0.5) { fd = fd + 1.0; }
    return fd;
}""",
}

# f32 asin by its own polynomial (no atan2: its division and sqrt roundings added up to
# 3 ulp once a compiler contracts a*b+c): |x| <= 1/2: x + x z P(z), z = x^2; beyond,
# pi/2 - 2 asin(s) with s = sqrt((1 - |x|)/2) carried as w + c (w: s with 12 bits, so w*w
# and the residual z - w*w are exact), as in fdlibm.  Every rounding is in a term much
# smaller than the result, so fused or unfused multiply-adds give the same accuracy.
_F32_ONLY = {
    # a subnormal m, which a flushing device's add takes for 0: beside |y| >= 2^-98 it is
    # under half an ulp (m + y is y); beside a smaller y, both scaled by 2^24 are normal,
    # their sum is rounded once as IEEE's would be (or exact, when that is subnormal), and
    # scaling back is exact
    "rem_add": """
fn f32_rem_add(m: f32, y: f32) -> f32 {
    let bm = bitcast<u32>(m);
    if ((bm & 0x7f800000u) != 0u) { return m + y; }
    if (f32_abs(y) >= 0x1p-98) { return y; }
    let ms = f32_copysign(f32(bm & 0x007fffffu) * 0x1p-125, m);
    return (ms + y * 0x1p24) * 0x1p-24;
}""",
    # fmod on the bits (shift-and-subtract on the significands, the exponent difference
    # in steps): exact for every finite x and nonzero finite y, subnormals included,
    # with no float arithmetic a flushing device could change
    "fmod": """
fn f32_fmod(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let sx = bx & 0x80000000u;
    let ax = bx & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    if (ax < ay) { return x; }
    if (ax == ay) { return bitcast<f32>(sx); }
    var ex = i32(ax >> 23u);
    var ey = i32(ay >> 23u);
    var mx = (ax & 0x007fffffu) | 0x00800000u;
    var my = (ay & 0x007fffffu) | 0x00800000u;
    if (ex == 0) { let z = countLeadingZeros(ax) - 8u; mx = ax << z; ex = 1 - i32(z); }
    if (ey == 0) { let z = countLeadingZeros(ay) - 8u; my = ay << z; ey = 1 - i32(z); }
    for (; ex > ey; ex--) {
        if (mx >= my) { mx = mx - my; }
        if (mx == 0u) { return bitcast<f32>(sx); }
        mx = mx << 1u;
    }
    if (mx >= my) { mx = mx - my; }
    if (mx == 0u) { return bitcast<f32>(sx); }
    let z = countLeadingZeros(mx) - 8u;
    mx = mx << z;
    ex = ex - i32(z);
    if (ex >= 1) { return bitcast<f32>(sx | (u32(ex) << 23u) | (mx & 0x007fffffu)); }
    return bitcast<f32>(sx | (mx >> u32(1 - ex)));   // subnormal, exact: no bits are lost
}""",
    # frexp with subnormals normalised on the bits (a flushing device would see them as
    # 0; lavapipe's frexp returns a wrong exponent for them): x = m 2^-149, m exact
    "frexp": """
fn f32_frexp(x: f32) -> vec2<f32> {
    let b = bitcast<u32>(x);
    if ((b & 0x7f800000u) == 0u) {
        let fr = frexp(f32(b & 0x007fffffu));
        return vec2<f32>(f32_copysign(fr.fract, x), f32(i32(fr.exp) - 149));
    }
    let fr = frexp(x);
    return vec2<f32>(fr.fract, f32(fr.exp));
}""",
    # integrality on the bits (a subnormal y is no integer, also where floor flushes it)
    "isint": """
fn f32_isint(y: f32) -> bool {
    let b = bitcast<u32>(y);
    let e = (b >> 23u) & 0xffu;
    if (e >= 150u) { return true; }
    if (e < 127u) { return (b & 0x7fffffffu) == 0u; }
    return (b & ((1u << (150u - e)) - 1u)) == 0u;
}""",
    # A divisor +-2^k whose reciprocal 2^-k is normal, and an x that is zero, inf, NaN or
    # normal with a normal quotient: then x * 2^-k is the same exact quotient rounded once,
    # for a few integer ops. Subnormal x and quotients below 2^-126 take the exact path: a
    # flushing device (NVIDIA) flushes such a product to 0 even where IEEE's quotient
    # rounds up to 2^-126 (0.99999994 / 2^126).
    "pow2_divisor": """
fn f32_pow2_divisor(bx: u32, by: u32) -> bool {
    let ex = (bx >> 23u) & 0xffu;
    let ey = (by >> 23u) & 0xffu;
    let ordinary_x = ex == 255u || (bx & 0x7fffffffu) == 0u || (ex != 0u && ex + 126u >= ey);
    return (by & 0x007fffffu) == 0u && ey != 0u && ey < 254u && ordinary_x;
}""",
    # With a scalar divisor (x / 2) the branch is uniform, so the correctly rounded division
    # below costs nothing there, and the pipeline stays one for every divisor.
    "divide": """
fn f32_divide(x: f32, y: f32) -> f32 {
    let by = bitcast<u32>(y);
    if (f32_pow2_divisor(bitcast<u32>(x), by)) {
        let ey = (by >> 23u) & 0xffu;
        return x * bitcast<f32>(((254u - ey) << 23u) | (by & 0x80000000u));
    }
    if (!f32_div_ordinary(x, y)) { return f32_div_special(x, y); }
    return f32_div_rn(x, y);
}""",
    # The same where the device's fma is fused (probed at device open, see
    # wgarray._runtime.numerics), with a short path for operands whose exponent fields
    # put every step below in the normal range: 2^-79 <= |x| < 2^128, 2^-125 <= |y| <
    # 2^126 and a quotient in (2^-101, 2^126). There, with r0 = 1 / |y| within WGSL's
    # 2.5 ulp, q0 = |x| r0 is within 5.5 ulp of Q = |x| / |y|; fma(-|y|, q0, |x|) is
    # |y| (Q - q0) rounded once (nonzero remainders are multiples of 2^-126 or more:
    # |x| >= 2^-79), so q1 = fma(rem0, r0, q0) is within 0.5 ulp + 2^-19 ulp of Q. Then
    # rem1 = fma(-|y|, q1, |x|) is exact (q1 is within an ulp), and comparing it with
    # |y| times half the gap to each neighbour of q1 (exact: powers of two times a normal
    # number) says which of the three is Q rounded to nearest (Q is never a midpoint of
    # two floats when x and y are floats). Everywhere else (zeros, inf, NaN, subnormal
    # or extreme operands and quotients) the path above, whose pieces need no fma.
    "divide_fma": """
fn f32_divide_fma(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let by = bitcast<u32>(y);
    let ex = (bx >> 23u) & 0xffu;
    let ey = (by >> 23u) & 0xffu;
    if (f32_pow2_divisor(bx, by)) {
        return x * bitcast<f32>(((254u - ey) << 23u) | (by & 0x80000000u));
    }
    if (ex - 48u < 207u && ey - 2u < 251u && ex + 101u - ey < 227u) {
        let ax = bitcast<f32>(bx & 0x7fffffffu);
        let ay = bitcast<f32>(by & 0x7fffffffu);
        let r0 = f32_launder(1.0 / ay);   // opaque: no folding of ay * (1 / ay) into 1
        let q0 = ax * r0;
        let q1 = fma(fma(-ay, q0, ax), r0, q0);
        let rem = fma(-ay, q1, ax);
        let b1 = bitcast<u32>(q1);
        let hy = 0.5 * ay;
        var b = b1;
        if (rem > (bitcast<f32>(b1 + 1u) - q1) * hy) { b = b1 + 1u; }
        if (rem < -((q1 - bitcast<f32>(b1 - 1u)) * hy)) { b = b1 - 1u; }
        return bitcast<f32>(b | ((bx ^ by) & 0x80000000u));
    }
    if (!f32_div_ordinary(x, y)) { return f32_div_special(x, y); }
    return f32_div_rn(x, y);
}""",
    "reciprocal_fma": "fn f32_reciprocal_fma(x: f32) -> f32 { return f32_divide_fma(1.0, x); }",
    # the selection on the bits (see f32_key): two subnormals are not equal to a flushing
    # device's float compare, and the one chosen keeps its bits
    "maximum": """
fn f32_maximum(x: f32, y: f32) -> f32 {
    if (f32_isnan(x) || f32_isnan(y)) { return f32_nan(); }
    let kx = f32_key(x);
    let ky = f32_key(y);
    if (kx == ky) { return select(x, y, f32_signbit(x)); }   // max(-0, +0) = +0
    return select(y, x, kx > ky);
}""",
    "minimum": """
fn f32_minimum(x: f32, y: f32) -> f32 {
    if (f32_isnan(x) || f32_isnan(y)) { return f32_nan(); }
    let kx = f32_key(x);
    let ky = f32_key(y);
    if (kx == ky) { return select(y, x, f32_signbit(x)); }   // min(-0, +0) = -0
    return select(y, x, kx < ky);
}""",
    "asin": """
fn f32_asin(x: f32) -> f32 {
    if (f32_isnan(x)) { return x; }
    let ax = abs(x);
    if (ax > 1.0) { return f32_nan(); }
    if (ax < $TINY) { return x; }
    if (ax == 1.0) { return f32_copysign($PI2_HI, x); }
    var r: f32;
    if (ax <= 0.5) {
        let z = ax * ax;
        r = ax + ax * (z * $ASIN_P);
    } else {
        let z = (1.0 - ax) * 0.5;
        let s = sqrt(z);
        let w = bitcast<f32>(bitcast<u32>(s) & 0xfffff000u);
        let c = (z - w * w) / (s + w);
        let p = 2.0 * s * (z * $ASIN_P) - ($PI2_LO - 2.0 * c);
        let q = f32_launder($PI4_HI - 2.0 * w);
        r = $PI4_HI - f32_launder(f32_launder(p) - q);
    }
    return f32_copysign(r, x);
}""",
}

def _f64_frexp() -> str:
    up = "\n".join(f"        if (y >= 0x1p{k}) {{ y = y * 0x1p-{k}; e = e + {k}; }}"
                   for k in (512, 256, 128, 64, 32, 16, 8, 4, 2, 1))
    down = "\n".join(f"        if (y < 0x1p{1 - k}) {{ y = y * 0x1p{k}; e = e - {k}; }}"
                     for k in (512, 256, 128, 64, 32, 16, 8, 4, 2, 1))
    return f"""
fn f64_frexp(x: f64) -> vec2<f64> {{
    var y = abs(x);
    var e = 1;
    if (y < 0x1p-1022) {{ y = y * 0x1p54; e = e - 54; }}
    if (y >= 1.0) {{
        // y in [1, 2^1024): after the step for 2^k, 1 <= y < 2^k
{up}
    }} else {{
        // y in [2^-1022, 1): after the step for 2^k, 2^(1-k) <= y < 2
{down}
    }}
    let h = 0.5 * y;                       // in [0.5, 1)
    return vec2<f64>(select(h, -h, x < 0.0), f64(e));
}}"""


def _f64_pow2i() -> str:
    pos = "\n".join(f"        if ((k & {1 << b}) != 0) {{ r = r * 0x1p{1 << b}; }}" for b in range(9, -1, -1))
    neg = "\n".join(f"        if ((a & {1 << b}) != 0) {{ r = r * 0x1p-{1 << b}; }}" for b in range(9, -1, -1))
    return f"""
fn f64_pow2i(k: i32) -> f64 {{
    var r = f64(1.0);
    if (k >= 0) {{
{pos}
    }} else {{
        let a = -k;
{neg}
    }}
    return r;
}}"""


# f64 overrides of generic entries: no frexp / ldexp builtins on f64 (see the module doc).
# The exponent search compares against and multiplies by exact powers of two only:
# frexp of finite nonzero x (|fract| in [0.5, 1)), 2^k for k in [EMIN, EMAX].
_F64_ONLY = {
    # float64 trunc and round from floor: lavapipe's LLVM on some x86 hosts returns float64
    # round(x) and trunc(x) unchanged for |x| >= 2^23 (round(25074287.11) = 25074287.11),
    # which also broke sin/cos/tan's reduction there; floor and ceil are right everywhere.
    "trunc": """
fn f64_trunc(x: f64) -> f64 {
    if (!(abs(x) < 0x1p52)) { return x; }   // an integer already, inf or NaN
    return f64_copysign(select(ceil(x), floor(x), x >= 0.0), x);   // trunc(-0.5) = -0
}""",
    "round": """
fn f64_round(x: f64) -> f64 {
    if (!(abs(x) < 0x1p52)) { return x; }
    let f = floor(x);
    let d = x - f;   // exact, in [0, 1)
    let odd = f - 2.0 * floor(f * 0.5) != 0.0;
    let r = select(f, f + 1.0, d > 0.5 || (d == 0.5 && odd));   // halves to even
    return f64_copysign(r, x);   // round(-0.3) = -0
}""",
    "frexp": _f64_frexp(),
    "pow2i": _f64_pow2i(),
}

NAMES = sorted(set(_GENERIC) | set(_PRIM_F32))


def _trig_steps(T: str) -> str:
    lines = []
    for c in _PIO2[T]:
        lines.append(f"    r = {T}_launder(r - kh * {c});")
        lines.append(f"    r = {T}_launder(r - kl * {c});")
    return "\n".join(lines)


def _trig_steps_dd(T: str) -> str:
    """``_trig_steps`` with each subtraction's rounding error kept (two_sum) in lo."""
    lines = []
    for c in _PIO2[T]:
        for part in ("kh", "kl"):
            lines.append(f"    {{ let s = {T}_two_sum(r, -({part} * {c})); r = s.x; lo = lo + s.y; }}")
    return "\n".join(lines)


# float64's reduction and kernels for sin, cos and tan: the reduced argument as r + y,
# the reduction's rounding error y kept (fdlibm's kernels with their tail terms): without it float64 sin was 1
# ulp off at worst and 0.18 ulp on average over [-10, 10], cos 2 ulp and 0.19 (glibc's
# are within 1 ulp and mostly exact; SciPy's Euler-angle round trip asks 1.1e-13).
# float32 keeps the one-part reduction (its kernels run in float32 chains at speed).
_DD_TRIG = {
    "rem_pio2_dd": """
fn $T_rem_pio2_dd(x: $T) -> vec3<$T> {
    if (abs(x) > $TRIG_XMAX) {
        let v = $T_rem_pio2(x);
        return vec3<$T>(v.x, 0.0, v.y);
    }
    let k = $T_round(x * 0.6366197723675814);
    let kh = $T_trunc(k * (1.0 / $TRIG_KSPLIT)) * $TRIG_KSPLIT;
    let kl = k - kh;
    var r = x;
    var lo = $T(0.0);
$TRIG_STEPS_DD
    let h = $T_launder(r + lo);
    let q = k - 4.0 * floor(k * 0.25);
    return vec3<$T>(h, $T_launder(lo - $T_launder(h - r)), q);
}""",
    "sin_kernel_dd": """
fn $T_sin_kernel_dd(r: $T, y: $T) -> $T {
    let z = r * r;
    return r + $T_launder(r * z * $SIN_P + (y - 0.5 * z * y));
}""",
    "cos_kernel_dd": """
fn $T_cos_kernel_dd(r: $T, y: $T) -> $T {
    let z = r * r;
    let hz = 0.5 * z;
    let w = $T_launder(1.0 - hz);
    let c = $T_launder(1.0 - w) - hz;   // -(rounding error of w), exact
    return w + $T_launder(c + (z * z * $COS_P - r * y));
}""",
}


def _build(T: str) -> dict[str, str]:
    subs = dict(_K[T])
    subs.update(
        T=T,
        EXP_P=_horner("r", _EXP_P[T]),
        LOG_P=_horner("z", _LOG_P[T]),
        SIN_P=_horner("z", _SIN_P[T]),
        COS_P=_horner("z", _COS_P[T]),
        ATAN_P=_horner("z", _ATAN_P[T]),
        TRIG_STEPS=_trig_steps(T),
        TRIG_STEPS_DD=_trig_steps_dd(T),
    )
    if T == "f64":
        subs.update(TRIG_RQ="rem_pio2_dd", TRIG_Q="z", TRIG_SIN="sin_kernel_dd", TRIG_COS="cos_kernel_dd",
                    TRIG_TAIL=", rq.y")
    else:
        subs.update(TRIG_RQ="rem_pio2", TRIG_Q="y", TRIG_SIN="sin_kernel", TRIG_COS="cos_kernel", TRIG_TAIL="")
    out = {}
    for name, text in (_PRIM_F32 if T == "f32" else _PRIM_F64).items():
        out[name] = text.strip() + "\n"
    if T == "f64":
        tab = [0, 0] + _TWO_OVER_PI_24   # two zero chunks: index k - 2 >= 0
        large = substitute(_F64_REM_PIO2_LARGE, subs, N=len(tab), TAB=", ".join(f"{v}.0" for v in tab))
    else:
        tab = [0] + _TWO_OVER_PI_32      # a zero word: exponents down to -30
        large = substitute(_F32_REM_PIO2_LARGE, subs, N=len(tab), TAB=", ".join(f"0x{v:08x}u" for v in tab))
    out["rem_pio2_large"] = large.strip() + "\n"
    for name, text in _GENERIC.items():
        out[name] = substitute(text, subs).strip() + "\n"
    if T == "f32":   # overrides of generic entries
        subs["ASIN_P"] = _horner("z", _ASIN_P[T])
        for name, text in _F32_ONLY.items():
            out[name] = substitute(text, subs).strip() + "\n"
    else:
        for name, text in _DD_TRIG.items():
            out[name] = substitute(text, subs).strip() + "\n"
        for name, text in _F64_ONLY.items():
            out[name] = text.strip() + "\n"
    return out


# Snippets of other libraries that these call; LIBRARY holds them too, so it resolves alone.
_SHARED = ("eu64_mul_wide",)


def _make_library() -> dict[str, Snippet]:
    lib: dict[str, Snippet] = {}
    for T in ("f32", "f64"):
        texts = _build(T)
        lib.update(library({f"{T}_{n}": s for n, s in texts.items()}, external=_SHARED))
    lib.update((name, _INTMATH[name]) for name in _SHARED)
    return lib


LIBRARY: dict[str, Snippet] = _make_library()
