"""Integer math in pure WGSL with Python/NumPy semantics, incl. emulated 64-bit.

Type tags and their WGSL representation:

=========  ==============  =====================================================
tag        WGSL type       notes
=========  ==============  =====================================================
``i32``    ``i32``         also carries int8/int16 (wrap with ``wrap_i8/16``)
``u32``    ``u32``         also carries uint8/uint16 (wrap with ``wrap_u8/16``)
``i64``    ``i64``         native, needs the ``shader-int64`` device feature
``u64``    ``u64``         native, needs the ``shader-int64`` device feature
``ei64``   ``vec2<u32>``   emulated int64: (low word, high word), two's complement
``eu64``   ``vec2<u32>``   emulated uint64, same layout
=========  ==============  =====================================================

The emulated layout is the byte layout of a little-endian int64, so NumPy buffers
are bound as ``array<vec2<u32>>`` unchanged.

Every function is ``{tag}_{name}``. All arithmetic wraps modulo 2**bits as NumPy's
does; division or remainder by zero gives 0 (NumPy's result), floor division and
remainder follow Python (remainder has the sign of the divisor), shifts by a count
outside [0, bits) shift everything out (0, or -1 for a negative signed value
shifted right), ``pow`` with a negative exponent gives the truncated real result
(1 for a base of 1, +-1 for a base of -1, else 0). ``SIGNATURES`` maps each name to
its WGSL ``(argument types, return type)``.

WGSL pitfalls handled here: ``x / 0`` is ``x`` and ``x % 0`` is 0 in WGSL, ``MIN /
-1`` is MIN; shift counts are taken modulo the bit width; 64-bit literals need the
``li``/``lu`` suffix (we write ``i64(1)`` instead). Signed ``%`` is avoided: with
wgpu 0.32 on NVIDIA's Vulkan driver (580) it gave wrong values for negative operands
(``-7 % 2 == 1``); ``a - (a / b) * b`` is right there.

``LIBRARY`` holds one snippet per function (written in :mod:`wgarray._wgsl.template`'s
style, dependencies read from the text); combine with
:func:`wgarray._wgsl.snippets.resolve`. The ``*_from_f64`` / ``*_to_f64`` snippets
use f64 and may only be requested on devices with ``shader-f64``; the ``i64``/``u64``
snippets only on devices with ``shader-int64``.
"""
from __future__ import annotations

from .snippets import Snippet
from .template import library, partial, substitute

SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {}
_TEXTS: dict[str, str] = {}

E64 = "vec2<u32>"  # WGSL type of the emulated tags


def _fn(name: str, args: str, ret: str, body: str, **subst) -> None:
    """Add ``fn name(args) -> ret { body }``, its ``$NAME`` placeholders substituted."""
    subst = {"E": E64, **subst}
    name, args, ret = (substitute(s, subst) for s in (name, args, ret))
    body = substitute(body, subst).strip("\n")
    assert name not in _TEXTS, name
    _TEXTS[name] = f"fn {name}({args}) -> {ret} {{\n{body}\n}}\n"
    SIGNATURES[name] = (tuple(a.split(":")[1].strip() for a in args.split(",")), ret)


# ---------------------------------------------------------------------------
# 8/16-bit wraparound of values computed in i32/u32
# ---------------------------------------------------------------------------
for _bits in (8, 16):
    _fn("wrap_i$B", "x: i32", "i32", "    return (x << ${S}u) >> ${S}u;", B=_bits, S=32 - _bits)
    _fn("wrap_u$B", "x: u32", "u32", "    return x & ${M}u;", B=_bits, M=hex((1 << _bits) - 1))


# ---------------------------------------------------------------------------
# Native types: i32, u32, i64, u64
# ---------------------------------------------------------------------------
# Each entry: (args, signed body, unsigned body); `a` and `b` are of type $T.
# Signed tests use the sign bit (``(x >> top) != 0``) and range checks one unsigned
# compare: Mesa's LLVM (lavapipe) miscompiles ``x < 0`` on an i64 that was sign-extended
# from i32 (it evaluates to false for negative values), which broke floor_divide,
# remainder and the shifts of int64 with int8/16/32 operands.
_NATIVE_OPS = {
    "floor_divide": (
        "a: $T, b: $T",
        """
    if (b == $T(0)) { return $T(0); }
    if (b == $T(-1)) { return -a; }  // wraps for MIN; avoids WGSL's MIN / -1
    let q = a / b;
    if (a - q * b != $T(0) && (((a ^ b) >> ${TOP}u) != $T(0))) { return q - $T(1); }
    return q;""",
        """
    if (b == $T(0)) { return $T(0); }
    return a / b;""",
    ),
    "remainder": (
        "a: $T, b: $T",
        """
    if (b == $T(0) || b == $T(-1)) { return $T(0); }
    // not WGSL's signed %, which gave wrong values on NVIDIA's Vulkan driver (580)
    let r = a - (a / b) * b;
    if (r != $T(0) && (((r ^ b) >> ${TOP}u) != $T(0))) { return r + b; }
    return r;""",
        """
    if (b == $T(0)) { return $T(0); }
    return a % b;""",
    ),
    "bitwise_left_shift": (
        "a: $T, b: $T",
        """
    if ($U(b) >= $U($BITS)) { return $T(0); }  // negative counts too
    return a << u32(b);""",
        """
    if (b >= $T($BITS)) { return $T(0); }
    return a << u32(b);""",
    ),
    "bitwise_right_shift": (
        "a: $T, b: $T",
        """
    // counts outside [0, bits) shift in sign bits only
    return a >> select(u32(b), ${BITS}u - 1u, $U(b) >= $U($BITS));""",
        """
    if (b >= $T($BITS)) { return $T(0); }
    return a >> u32(b);""",
    ),
    "abs": ("a: $T", "    let m = a >> ${TOP}u;  // 0 or -1\n    return (a ^ m) - m;", "    return a;"),
    "sign": (
        "a: $T",
        "    return select((a >> ${TOP}u) | $T(1), $T(0), a == $T(0));",
        "    return select($T(0), $T(1), a != $T(0));",
    ),
    "minimum": ("a: $T, b: $T", "    return min(a, b);", "    return min(a, b);"),
    "maximum": ("a: $T, b: $T", "    return max(a, b);", "    return max(a, b);"),
}

_POW_NEGATIVE_EXPONENT = """
    if ((b >> ${TOP}u) != $T(0)) {  // b < 0: the truncated real result
        if (a == $T(1)) { return $T(1); }
        if (a == $T(-1)) { return select($T(1), $T(-1), (b & $T(1)) != $T(0)); }
        return $T(0);
    }"""

_POW_LOOP = """
    var base = a;
    var e = b;
    var r = $ONE;
    while ($E_NONZERO) {
        if ($E_ODD) { r = $MUL; }
        base = $SQUARE;
        e = $E_HALF;
    }
    return r;"""

for _tag, (_bits, _signed) in {"i32": (32, True), "u32": (32, False), "i64": (64, True), "u64": (64, False)}.items():
    _s = dict(TAG=_tag, T=_tag, BITS=_bits, TOP=_bits - 1, U="u" + _tag[1:])
    for _name, (_args, _sbody, _ubody) in _NATIVE_OPS.items():
        _fn("$TAG_" + _name, _args, "$T", _sbody if _signed else _ubody, **_s)
    _pow = partial(_POW_LOOP,
        ONE="$T(1)", E_NONZERO="e != $T(0)", E_ODD="(e & $T(1)) != $T(0)",
        MUL="r * base", SQUARE="base * base", E_HALF="e >> 1u")
    _fn("$TAG_pow", "a: $T, b: $T", "$T", (_POW_NEGATIVE_EXPONENT if _signed else "") + _pow, **_s)

# The native int64 -> float casts are correctly rounded on the Vulkan drivers tested
# (lavapipe); kept as functions so callers can treat all tags alike.
for _tag in ("i64", "u64"):
    _fn("$TAG_to_f32", "a: $TAG", "f32", "    return f32(a);", TAG=_tag)
    _fn("$TAG_to_f64", "a: $TAG", "f64", "    return f64(a);", TAG=_tag)
    # truncation toward zero; the standard leaves NaN and out-of-range values undefined
    _fn("$TAG_from_f32", "x: f32", "$TAG", "    return $TAG(x);", TAG=_tag)
    _fn("$TAG_from_f64", "x: f64", "$TAG", "    return $TAG(x);", TAG=_tag)


# ---------------------------------------------------------------------------
# Emulated 64-bit: ei64, eu64 as vec2<u32>(low, high)
# ---------------------------------------------------------------------------
# Helpers on the unsigned layout, shared by both tags.
_fn("eu64_mul_wide", "a: u32, b: u32", "$E", """
    // full 64-bit product of two u32, from 16-bit halves
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);  // < 3 * 2^16
    return vec2<u32>((ll & 0xffffu) | (mid << 16u), ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));""")
_fn("eu64_shl_u32", "a: $E, n: u32", "$E", """
    // a << n for 0 <= n < 64
    if (n >= 32u) { return vec2<u32>(0u, a.x << (n - 32u)); }
    return vec2<u32>(a.x << n, (a.y << n) | ((a.x >> 1u) >> (31u - n)));""")
_fn("eu64_shr_u32", "a: $E, n: u32", "$E", """
    // logical a >> n for 0 <= n < 64
    if (n >= 32u) { return vec2<u32>(a.y >> (n - 32u), 0u); }
    return vec2<u32>((a.x >> n) | ((a.y << 1u) << (31u - n)), a.y >> n);""")
_fn("ei64_shr_u32", "a: $E, n: u32", "$E", """
    // arithmetic a >> n for 0 <= n < 64
    let hi = bitcast<i32>(a.y);
    if (n >= 32u) { return vec2<u32>(bitcast<u32>(hi >> (n - 32u)), bitcast<u32>(hi >> 31u)); }
    return vec2<u32>((a.x >> n) | ((a.y << 1u) << (31u - n)), bitcast<u32>(hi >> n));""")
_fn("eu64_clz", "a: $E", "u32", """
    if (a.y != 0u) { return countLeadingZeros(a.y); }
    return 32u + countLeadingZeros(a.x);""")
_fn("ei64_is_negative", "a: $E", "bool", "    return (a.y >> 31u) != 0u;")

# Operations whose bits do not depend on signedness: one template, both tags.
_SHARED_OPS = {
    "add": ("a: $E, b: $E", "$E", """
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));"""),
    "sub": ("a: $E, b: $E", "$E", """
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));"""),
    "neg": ("a: $E", "$E", "    return $TAG_sub(vec2<u32>(0u), a);"),
    "mul": ("a: $E, b: $E", "$E", """
    let lo = eu64_mul_wide(a.x, b.x);
    return vec2<u32>(lo.x, lo.y + a.x * b.y + a.y * b.x);"""),
    "eq": ("a: $E, b: $E", "bool", "    return all(a == b);"),
    "ne": ("a: $E, b: $E", "bool", "    return any(a != b);"),
    "bitwise_and": ("a: $E, b: $E", "$E", "    return a & b;"),
    "bitwise_or": ("a: $E, b: $E", "$E", "    return a | b;"),
    "bitwise_xor": ("a: $E, b: $E", "$E", "    return a ^ b;"),
    "bitwise_invert": ("a: $E", "$E", "    return ~a;"),
    "bitwise_left_shift": ("a: $E, b: $E", "$E", """
    if (b.y != 0u || b.x >= 64u) { return vec2<u32>(0u); }  // also negative counts
    return eu64_shl_u32(a, b.x);"""),
    "from_i32": ("x: i32", "$E", "    return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0));"),
    "from_u32": ("x: u32", "$E", "    return vec2<u32>(x, 0u);"),
    "from_bool": ("x: bool", "$E", "    return vec2<u32>(select(0u, 1u, x), 0u);"),
    "to_i32": ("a: $E", "i32", "    return bitcast<i32>(a.x);"),
    "to_u32": ("a: $E", "u32", "    return a.x;"),
    "to_bool": ("a: $E", "bool", "    return any(a != vec2<u32>(0u));"),
    "from_f32": ("x: f32", "$E", """
    // truncation toward zero, negative values wrap modulo 2^64; NaN and values
    // beyond 2^64 give some value (the magnitude saturates)
    let m = min(abs(trunc(x)), 18446742974197923840.0);  // largest f32 below 2^64
    let hi = floor(m * (1.0 / 4294967296.0));  // all exact
    let mag = vec2<u32>(u32(m - hi * 4294967296.0), u32(hi));
    return select(mag, eu64_neg(mag), x < 0.0);"""),
}
for _tag in ("eu64", "ei64"):
    for _name, (_args, _ret, _body) in _SHARED_OPS.items():
        _fn("$TAG_" + _name, _args, _ret, _body, TAG=_tag)
_fn("ei64_from_eu64", "a: $E", "$E", "    return a;")
_fn("eu64_from_ei64", "a: $E", "$E", "    return a;")

# Ordering: the signed variant compares the high words as i32.
for _tag, _hi in (("eu64", ""), ("ei64", "bitcast<i32>")):
    _fn("$TAG_lt", "a: $E, b: $E", "bool",
        "    return $HI(a.y) < $HI(b.y) || (a.y == b.y && a.x < b.x);", TAG=_tag, HI=_hi)
    _fn("$TAG_le", "a: $E, b: $E", "bool", "    return !$TAG_lt(b, a);", TAG=_tag)
    _fn("$TAG_gt", "a: $E, b: $E", "bool", "    return $TAG_lt(b, a);", TAG=_tag)
    _fn("$TAG_ge", "a: $E, b: $E", "bool", "    return !$TAG_lt(a, b);", TAG=_tag)
    _fn("$TAG_minimum", "a: $E, b: $E", "$E", "    return select(a, b, $TAG_lt(b, a));", TAG=_tag)
    _fn("$TAG_maximum", "a: $E, b: $E", "$E", "    return select(a, b, $TAG_lt(a, b));", TAG=_tag)

_fn("eu64_bitwise_right_shift", "a: $E, b: $E", "$E", """
    if (b.y != 0u || b.x >= 64u) { return vec2<u32>(0u); }
    return eu64_shr_u32(a, b.x);""")
_fn("ei64_bitwise_right_shift", "a: $E, b: $E", "$E", """
    // counts outside [0, 64), negative ones included, shift in sign bits only
    return ei64_shr_u32(a, select(b.x, 63u, b.y != 0u || b.x >= 64u));""")

_fn("eu64_abs", "a: $E", "$E", "    return a;")
_fn("ei64_abs", "a: $E", "$E", "    return select(a, eu64_neg(a), ei64_is_negative(a));")
_fn("eu64_sign", "a: $E", "$E", "    return vec2<u32>(select(0u, 1u, any(a != vec2<u32>(0u))), 0u);")
_fn("ei64_sign", "a: $E", "$E", """
    if (ei64_is_negative(a)) { return vec2<u32>(0xffffffffu); }
    return vec2<u32>(select(0u, 1u, any(a != vec2<u32>(0u))), 0u);""")

# Division. eu64_divmod returns vec4(quotient, remainder); both 0 for b == 0.
_fn("eu64_divmod", "a: $E, b: $E", "vec4<u32>", """
    if (b.y == 0u && b.x <= 0xffffu) {
        if (b.x == 0u) { return vec4<u32>(0u); }
        // short division by 16-bit digits, most significant first: every partial
        // dividend (remainder << 16 | digit) fits in a u32
        var q = vec2<u32>(0u);
        var r = 0u;
        for (var k = 0u; k < 4u; k++) {
            let word = select(a.x, a.y, k < 2u);
            let cur = (r << 16u) | select(word & 0xffffu, word >> 16u, (k & 1u) == 0u);
            q = eu64_shl_u32(q, 16u) | vec2<u32>(cur / b.x, 0u);
            r = cur % b.x;
        }
        return vec4<u32>(q, r, 0u);
    }
    if (a.y == 0u && b.y == 0u) { return vec4<u32>(a.x / b.x, 0u, a.x % b.x, 0u); }
    if (eu64_lt(a, b)) { return vec4<u32>(0u, 0u, a); }
    // binary long division over the s + 1 quotient bits that can be set
    let s = eu64_clz(b) - eu64_clz(a);
    var d = eu64_shl_u32(b, s);
    var r = a;
    var q = vec2<u32>(0u);
    for (var i = 0u; i <= s; i++) {
        q = eu64_shl_u32(q, 1u);
        if (!eu64_lt(r, d)) {
            r = eu64_sub(r, d);
            q.x = q.x | 1u;
        }
        d = eu64_shr_u32(d, 1u);
    }
    return vec4<u32>(q, r);""")
_fn("ei64_divmod", "a: $E, b: $E", "vec4<u32>", """
    // Python floor division: vec4(a // b, a % b); both 0 for b == 0
    let an = ei64_is_negative(a);
    let bn = ei64_is_negative(b);
    let ub = select(b, eu64_neg(b), bn);
    let t = eu64_divmod(select(a, eu64_neg(a), an), ub);  // |MIN| = 2^63 as unsigned
    var q = t.xy;
    var r = t.zw;
    if (an != bn) {
        if (any(r != vec2<u32>(0u))) {
            q = eu64_add(q, vec2<u32>(1u, 0u));
            r = eu64_sub(ub, r);
        }
        q = eu64_neg(q);
    }
    return vec4<u32>(q, select(r, eu64_neg(r), bn));""")
for _tag in ("eu64", "ei64"):
    _fn("$TAG_floor_divide", "a: $E, b: $E", "$E", "    return $TAG_divmod(a, b).xy;", TAG=_tag)
    _fn("$TAG_remainder", "a: $E, b: $E", "$E", "    return $TAG_divmod(a, b).zw;", TAG=_tag)

for _tag, _negexp in (("eu64", ""), ("ei64", """
    if (ei64_is_negative(b)) {  // truncated real result
        if (all(a == vec2<u32>(1u, 0u))) { return a; }
        if (all(a == vec2<u32>(0xffffffffu))) { return select(vec2<u32>(1u, 0u), a, (b.x & 1u) != 0u); }
        return vec2<u32>(0u);
    }""")):
    _pow = partial(_POW_LOOP,
        ONE="vec2<u32>(1u, 0u)", E_NONZERO="any(e != vec2<u32>(0u))", E_ODD="(e.x & 1u) != 0u",
        MUL="eu64_mul(r, base)", SQUARE="eu64_mul(base, base)", E_HALF="eu64_shr_u32(e, 1u)")
    _fn("$TAG_pow", "a: $E, b: $E", "$E", _negexp + _pow, TAG=_tag)

# Conversions to float, correctly rounded (to nearest, ties to even) like NumPy's casts.
_fn("eu64_to_f32", "a: $E", "f32", """
    if (a.y == 0u && a.x <= 0x1000000u) { return f32(a.x); }  // exact
    let p = 63u - eu64_clz(a);  // leading bit, >= 24
    let s = p - 23u;  // dropped bits, 1..40
    var m = eu64_shr_u32(a, s).x;  // 24 significant bits
    let dropped = eu64_shl_u32(a, 64u - s);  // left-aligned
    let sticky = (dropped.y << 1u) | dropped.x;
    if ((dropped.y >> 31u) != 0u && (sticky != 0u || (m & 1u) != 0u)) { m = m + 1u; }
    // m in [2^23, 2^24]: its leading bit adds one to the exponent field (two if
    // rounding carried out), so the bits are exactly those of m * 2^s
    return bitcast<f32>(((p + 126u) << 23u) + m);""")
# In f64 both words convert exactly and the one addition rounds correctly.
_fn("eu64_to_f64", "a: $E", "f64", "    return f64(a.y) * 4294967296.0lf + f64(a.x);")
_fn("ei64_to_f64", "a: $E", "f64", "    return f64(bitcast<i32>(a.y)) * 4294967296.0lf + f64(a.x);")
_fn("ei64_to_f32", "a: $E", "f32", """
    let neg = ei64_is_negative(a);
    let f = eu64_to_f32(select(a, eu64_neg(a), neg));  // rounding is symmetric
    return select(f, -f, neg);""")
for _tag in ("eu64", "ei64"):
    _fn("$TAG_from_f64", "x: f64", "$E", """
    // truncation toward zero, negative values wrap modulo 2^64; NaN and values
    // beyond 2^64 give some value (the magnitude saturates)
    let m = min(abs(trunc(x)), 18446744073709549568.0lf);  // largest f64 below 2^64
    let hi = floor(m * (1.0lf / 4294967296.0lf));  // all exact
    let mag = vec2<u32>(u32(m - hi * 4294967296.0lf), u32(hi));
    return select(mag, eu64_neg(mag), x < 0.0lf);""", TAG=_tag)

del _bits, _tag, _name, _args, _sbody, _ubody, _pow, _s, _signed, _hi, _negexp, _ret, _body

# Dependencies are read from the text; these three keep the order in which their helpers
# have always been emitted, so the generated WGSL text stays the same.
_STATED_ORDER = {
    "eu64_divmod": ("eu64_shl_u32", "eu64_shr_u32", "eu64_clz", "eu64_lt", "eu64_sub"),
    "ei64_pow": ("eu64_mul", "eu64_shr_u32", "ei64_is_negative"),
    "ei64_to_f32": ("ei64_is_negative", "eu64_neg", "eu64_to_f32"),
}
LIBRARY: dict[str, Snippet] = library(_TEXTS, stated=_STATED_ORDER)
