"""Tests of wgarray/_wgsl/realmath.py against NumPy (and the Array API special cases).

Each (function, type) is one kernel over a batch of values: every pair (or single)
of special values, checked bitwise (NaN == NaN), plus random values checked in ulp.
f32 results are compared with the float64 NumPy result rounded to float32 (a nearly
correctly rounded reference), except for the functions NumPy computes exactly.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from wgsl_kernel import device, run_wgsl  # noqa: E402

from wgarray._ops import OPS  # noqa: E402
from wgarray._wgsl.realmath import LIBRARY  # noqa: E402
from conftest import flush_subnormals, flushed_reference, flushes_subnormals  # noqa: E402
from wgarray._wgsl.snippets import resolve  # noqa: E402

TYPES = {"f32": np.float32, "f64": np.float64}
RNG_SEED = 12345


def _has_f64():
    return "shader-f64" in device().features


def _dtype_or_skip(T):
    if T == "f64" and not _has_f64():
        pytest.skip("device lacks shader-f64")
    return TYPES[T]


def specials(dt):
    fi = np.finfo(dt)
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
         3.0, -3.0, 2.5, -2.5, 1.5, 0.1, -0.7, 10.0, np.pi, -np.pi,
         fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, -fi.tiny,
         fi.max, -fi.max, 1e-30, -1e-30, 1e30, 1e-5, 700.0, -745.5, 89.0, -104.0]
    return np.array(v, dtype=np.float64).astype(dt)


def ordered(a):
    """Map floats to integers whose difference counts ulps."""
    if a.dtype == np.float32:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    i = a.view(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)


def ulps(got, want):
    a, b = ordered(got), ordered(want)
    same_sign = (a >= 0) == (b >= 0)
    with np.errstate(over="ignore"):
        exact = np.abs(a - b).astype(np.float64)
    return np.where(same_sign, exact, np.abs(a.astype(np.float64) - b.astype(np.float64)))


def same(got, want):
    """Bitwise equal, any NaN equal to any NaN."""
    bits = got.view(np.uint32 if got.dtype == np.float32 else np.uint64) == \
        want.view(np.uint32 if want.dtype == np.float32 else np.uint64)
    return bits | (np.isnan(got) & np.isnan(want))


def gpu(name, T, args):
    dt = TYPES[T]
    call = f"{T}_{name}(" + ", ".join(f"in{k}[i]" for k in range(len(args))) + ")"
    prelude = resolve(LIBRARY, [f"{T}_{name}"])
    return run_wgsl(call, [(T, np.asarray(a, dt)) for a in args], T, dt, prelude)


def gpu_bool(name, T, args):
    call = f"select(0u, 1u, {T}_{name}(in0[i]))"
    prelude = resolve(LIBRARY, [f"{T}_{name}"])
    return run_wgsl(call, [(T, np.asarray(a, TYPES[T])) for a in args], "u32", np.uint32, prelude) == 1


# --------------------------------------------------------------------------
# random inputs
# --------------------------------------------------------------------------

def logu(rng, n, lo, hi, signed=True):
    v = 10.0 ** rng.uniform(lo, hi, n)
    if signed:
        v *= rng.choice([-1.0, 1.0], n)
    return v


def rand_unary(name, dt, rng, n=1500):
    big = 300 if dt == np.float64 else 37
    if name in ("exp", "expm1", "sinh", "cosh", "tanh"):
        hi = 750 if dt == np.float64 else 105
        parts = [rng.uniform(-hi, hi, n), rng.uniform(-2, 2, n), logu(rng, n, -20, 1)]
    elif name in ("log", "log2", "log10"):
        parts = [logu(rng, n, -big, big, False), 1 + rng.uniform(-0.3, 0.3, n),
                 rng.uniform(0, 4, n)]
    elif name == "log1p":
        parts = [logu(rng, n, -big, big, False), rng.uniform(-1, 1, n), logu(rng, n, -20, 0)]
    elif name in ("sin", "cos", "tan"):
        # moderate (Cody-Waite) and huge (Payne-Hanek) arguments up to the largest finite
        parts = [rng.uniform(-10, 10, n), rng.uniform(-1e4, 1e4, n), logu(rng, n, -10, 16),
                 logu(rng, n, 4, big + 8.2 if dt == np.float64 else big + 1.5)]
    elif name in ("asin", "acos", "atanh"):
        parts = [rng.uniform(-1, 1, n), 1 - logu(rng, n, -15, -1, False),
                 -1 + logu(rng, n, -15, -1, False), logu(rng, n, -20, -1)]
    elif name == "acosh":
        parts = [1 + logu(rng, n, -15, 1, False), logu(rng, n, 0, big, False)]
    elif name in ("sqrt", "reciprocal", "square"):
        parts = [logu(rng, n, -big, big, False), logu(rng, n, -big, big)]
    else:
        parts = [logu(rng, n, -big, big), rng.uniform(-20, 20, n), logu(rng, n, -20, 1)]
    return np.concatenate(parts).astype(dt)


def rand_binary(name, dt, rng, n=1500):
    big = 300 if dt == np.float64 else 37
    if name == "pow":
        x = np.concatenate([logu(rng, n, -5, 5, False), rng.uniform(0, 3, n),
                            -logu(rng, n, -3, 3, False), logu(rng, n, -big, big, False)])
        y = np.concatenate([rng.uniform(-50, 50, n), rng.uniform(-300, 300, n),
                            rng.integers(-40, 40, n).astype(float), rng.uniform(-1.5, 1.5, n)])
    elif name == "logaddexp":
        x = np.concatenate([rng.uniform(-800, 800, n), rng.uniform(-5, 5, n)])
        y = np.concatenate([rng.uniform(-800, 800, n), rng.uniform(-5, 5, n)])
    elif name in ("remainder", "floor_divide"):
        x = np.concatenate([rng.uniform(-100, 100, n), logu(rng, n, -big, big),
                            rng.integers(-50, 50, n).astype(float)])
        y = np.concatenate([rng.uniform(-10, 10, n), logu(rng, n, -big, big),
                            rng.integers(1, 9, n) * rng.choice([-1.0, 1.0], n)])
    else:
        x = np.concatenate([logu(rng, n, -big, big), rng.uniform(-5, 5, n)])
        y = np.concatenate([logu(rng, n, -big, big), rng.uniform(-5, 5, n)])
    return x.astype(dt), y.astype(dt)


# --------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------

def _floor_divide_ref(x, y):
    r = np.floor_divide(x, y)
    # the spec prefers floor(x / y) where one operand is infinite
    fin = np.isfinite(y) & np.isinf(x)
    r = np.where(fin, x / y, r)
    fin = np.isinf(y) & np.isfinite(x) & (x != 0)
    r = np.where(fin, np.copysign(np.zeros_like(x), x) * np.sign(y), r)
    return r.astype(x.dtype)


def _maximum_ref(x, y):
    r = np.maximum(x, y)
    z = (x == 0) & (y == 0)
    return np.where(z, np.where(np.signbit(x) & np.signbit(y), x, np.abs(x)), r).astype(x.dtype)


def _minimum_ref(x, y):
    r = np.minimum(x, y)
    z = (x == 0) & (y == 0)
    return np.where(z, np.where(np.signbit(x) | np.signbit(y), -np.abs(x), x), r).astype(x.dtype)


# The library functions under test; their NumPy references, exactness classes and ulp
# bounds are the op table's (wgarray/_ops.py), with references of our own where NumPy's
# answer is not the standard's (floor_divide at infinities, the zero sign of max/min).
UNARY_NAMES = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "expm1",
               "floor", "log", "log1p", "log2", "log10", "reciprocal", "round", "sign", "sin", "sinh", "sqrt",
               "square", "tan", "tanh", "trunc"]
BINARY_NAMES = ["atan2", "copysign", "divide", "floor_divide", "hypot", "logaddexp", "maximum", "minimum",
                "nextafter", "pow", "remainder"]
_OWN_REFERENCE = {"floor_divide": _floor_divide_ref, "maximum": _maximum_ref, "minimum": _minimum_ref}
UNARY = {n: _OWN_REFERENCE.get(n, getattr(np, OPS[n].numpy)) for n in UNARY_NAMES}
BINARY = {n: _OWN_REFERENCE.get(n, getattr(np, OPS[n].numpy)) for n in BINARY_NAMES}
# computed exactly in the argument type by NumPy (no f64 detour for the f32 reference)
EXACT = {n for n in UNARY_NAMES + BINARY_NAMES if OPS[n].exact != "ulp"}
# exact on the bits, also where the device flushes subnormals in arithmetic
BIT_EXACT = {n for n in UNARY_NAMES + BINARY_NAMES if OPS[n].exact == "bits"}


def max_ulp(name, T):
    """The ulp error allowed on random (non-special) inputs."""
    return OPS[name].ulp[("f32", "f64").index(T)]


def reference(name, fn, args, dt):
    with np.errstate(all="ignore"):
        if name in EXACT or dt == np.float64:
            return np.asarray(fn(*[np.asarray(a, dt) for a in args])).astype(dt)
        return np.asarray(fn(*[np.asarray(a, np.float64) for a in args])).astype(dt)


def _agreement(name, T, got, want, args, n_sp):
    """(special part ok, random part ok) of ``got`` against ``want``."""
    tol = 0 if name in EXACT else max_ulp(name, T)
    # special part: exact where an input or the result is NaN, +-inf or +-0
    sp_got, sp_want = got[:n_sp], want[:n_sp]
    exact = ~np.isfinite(sp_want) | (sp_want == 0)
    for a in args:
        exact |= ~np.isfinite(a[:n_sp])
    with np.errstate(all="ignore"):
        sp_ok = same(sp_got, sp_want) | (~exact & np.isfinite(sp_got) & (ulps(sp_got, sp_want) <= tol))
        r_got, r_want = got[n_sp:], want[n_sp:]
        r_ok = same(r_got, r_want) | (np.isfinite(r_got) & np.isfinite(r_want) & (ulps(r_got, r_want) <= tol))
        if name == "logaddexp":
            # absolute error relative to the larger input (the formula's own scale)
            r_in = [a[n_sp:] for a in args]
            scale = np.spacing(np.maximum(np.maximum(np.abs(r_in[0]), np.abs(r_in[1])), np.abs(r_want)))
            r_ok |= np.abs(r_got.astype(np.float64) - r_want) <= 4 * scale
    return sp_ok, r_ok


def check(name, T, fn, special_args, random_args):
    dt = TYPES[T]
    n_sp = len(special_args[0])
    args = [np.concatenate([s, r]).astype(dt) for s, r in zip(special_args, random_args)]
    got = gpu(name, T, args)
    want = reference(name, fn, args, dt)
    sp_ok, r_ok = _agreement(name, T, got, want, args, n_sp)
    if not (sp_ok.all() and r_ok.all()) and flushes_subnormals(dt) and name not in BIT_EXACT:
        # a device that flushes subnormals in arithmetic: its model's result is accepted too
        flushed = [flush_subnormals(a) for a in args]
        sp_f, r_f = _agreement(name, T, got, flush_subnormals(reference(name, fn, flushed, dt)), flushed, n_sp)
        sp_ok, r_ok = sp_ok | sp_f, r_ok | r_f
    sp_in = [a[:n_sp] for a in args]
    r_in = [a[n_sp:] for a in args]
    msgs = [f"{name}{tuple(float(a[i]) for a in sp_in)}: got {got[i]!r} want {want[i]!r}"
            for i in np.flatnonzero(~sp_ok)[:10]]
    r_got, r_want = got[n_sp:], want[n_sp:]
    msgs += [f"{name}{tuple(float(a[i]) for a in r_in)}: got {r_got[i]!r} want {r_want[i]!r} "
             f"({ulps(r_got[i:i+1], r_want[i:i+1])[0]:.0f} ulp)"
             for i in np.flatnonzero(~r_ok)[:10]]
    assert not msgs, f"{T}_{name}: {int((~sp_ok).sum())} special + {int((~r_ok).sum())} random failures\n" + "\n".join(msgs)


@pytest.mark.parametrize("T", ["f32", "f64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, T):
    dt = _dtype_or_skip(T)
    rng = np.random.default_rng(RNG_SEED)
    check(name, T, UNARY[name], [specials(dt)], [rand_unary(name, dt, rng)])


@pytest.mark.parametrize("T", ["f32", "f64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, T):
    dt = _dtype_or_skip(T)
    rng = np.random.default_rng(RNG_SEED)
    sp = specials(dt)
    sx, sy = np.meshgrid(sp, sp, indexing="ij")
    check(name, T, BINARY[name], [sx.ravel(), sy.ravel()], list(rand_binary(name, dt, rng)))


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_classification(T):
    dt = _dtype_or_skip(T)
    rng = np.random.default_rng(RNG_SEED)
    x = np.concatenate([specials(dt), logu(rng, 200, -30, 30).astype(dt)])
    for name, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                     ("signbit", np.signbit)):
        got = gpu_bool(name, T, [x])
        assert np.array_equal(got, fn(x)), (name, x[got != fn(x)])


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_round_half_even_and_signs(T):
    dt = _dtype_or_skip(T)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.4, 0.4, 3.5, 4.5, 2.0**52 + 1,
                  -(2.0**23) - 0.5], dtype=dt)
    assert same(gpu("round", T, [x]), np.round(x)).all()
    x = np.array([-0.0, 0.0, -3.0, 7.0, np.nan, -np.inf], dtype=dt)
    got = gpu("sign", T, [x])
    assert np.array_equal(got[:2], [0, 0]) and np.array_equal(got[2:4], [-1, 1])
    assert np.isnan(got[4]) and got[5] == -1


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_hypot_extremes(T):
    dt = _dtype_or_skip(T)
    fi = np.finfo(dt)
    x = np.array([fi.max, fi.max / 2, fi.smallest_subnormal * 3, 3e-300 if T == "f64" else 3e-40,
                  1e200 if T == "f64" else 1e30], dtype=dt)
    y = np.array([fi.max / 4, fi.max / 3, fi.smallest_subnormal * 4, 4e-300 if T == "f64" else 4e-40,
                  1e200 if T == "f64" else 1e30], dtype=dt)
    got = gpu("hypot", T, [x, y])
    with np.errstate(all="ignore"):
        want = np.hypot(x, y)
        ok = same(got, want) | (ulps(got, want) <= 1)
        alt = flushed_reference(np.hypot, [x, y], dt)
        if alt is not None:
            ok |= same(got, alt) | (ulps(got, alt) <= 1)
    assert ok.all(), (got, want)


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_pow_exact_cases(T):
    dt = _dtype_or_skip(T)
    x = np.array([2, 2, 3, 10, -2, -2, 0.5, 7, 1.0000001, 4], dtype=dt)
    y = np.array([10, -3, 5, 6, 3, 4, 20, 2, 1e9, 0.5], dtype=dt)
    got = gpu("pow", T, [x, y])
    want = np.power(x, y)
    assert (same(got, want)[:9]).all() and ulps(got, want).max() <= 2, (got, want)


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_trig_large_arguments(T):
    """Payne-Hanek reduction: huge arguments, the reduction thresholds, and the inputs
    closest to a multiple of pi/2 (the largest cancellation), against mpmath."""
    mpmath = pytest.importorskip("mpmath")
    dt = _dtype_or_skip(T)
    fi = np.finfo(dt)
    x = [1e5, 1e6 + 0.5, 123456.789, 2e6, 1e7, 355.0, 103993.0, 1e8, 1e20, -1e20, 1e30,
         float(fi.max), -float(fi.max), float(np.nextafter(fi.max, dt(0))), 2.0**100,
         1024.0, 1025.0, 2.0**26, 2.0**26 + 1, -(2.0**26) - 3, 3e7, 1e12]
    if T == "f64":
        x += [6381956970095103 * 2.0**797,      # closest double to a multiple of pi/2
              5261692873635770 * 2.0**499, 8.0e307, 2.0**1023, 1e300, 1e22, 2.0**52 + 1,
              2.0**60, float.fromhex("0x1.921fb54442d18p+100")]
    else:
        x += [16367173 * 2.0**72, 1e38, 2.0**127, 0.00103, 7.0e35, 1.5707963e10]
    x = np.array(x, dtype=np.float64).astype(dt)
    mpmath.mp.prec = 1200
    for name in ("sin", "cos", "tan"):
        f = getattr(mpmath, name)
        got = gpu(name, T, [x])
        want = np.array([float(f(mpmath.mpf(float(v)))) for v in x]).astype(dt)
        u = ulps(got, want)
        tol = 2 if name == "tan" else 1
        assert (u <= tol).all(), (name, x[u > tol], got[u > tol], want[u > tol])


# --------------------------------------------------------------------------
# f64 exponent primitives: no frexp / ldexp builtins on f64
# --------------------------------------------------------------------------

_BUILTIN_EXP = __import__("re").compile(r"(?<![\w.])(frexp|ldexp)\s*\(")


def test_no_f64_frexp_ldexp_builtins():
    """GLSL.std.450 Frexp/Ldexp on 64-bit floats fail NVVM compilation on NVIDIA's Vulkan
    driver (device lost) and returned 0 on lavapipe: no f64 helper may call them."""
    from wgarray._wgsl import complexmath, intmath

    libs = {"realmath": LIBRARY, "complexmath": complexmath.LIBRARY, "intmath": intmath.LIBRARY}
    bad = []
    for lname, lib in libs.items():
        for fname, snip in lib.items():
            if fname.startswith(("f32_", "c64_")) and "f64" not in snip.source:
                continue   # f32-only code may use the (widely supported) f32 builtins
            if _BUILTIN_EXP.search(snip.source):
                bad.append(f"{lname}.{fname}")
    assert not bad, f"frexp/ldexp builtin in f64 code: {bad}"
    # every f64 library function, with all its dependencies, is free of them
    for fname in LIBRARY:
        if fname.startswith("f64_"):
            assert not _BUILTIN_EXP.search(resolve(LIBRARY, [fname])), fname


def test_f64_frexp_pow2i_scalbn_exact():
    dt = _dtype_or_skip("f64")
    fi = np.finfo(dt)
    rng = np.random.default_rng(RNG_SEED)
    x = np.concatenate([
        [fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, fi.tiny / 2, fi.tiny * (1 - 2**-52),
         fi.max, -fi.max, 1.0, -1.0, 0.5, 2.0, np.nextafter(1.0, 0.0), np.nextafter(2.0, 0.0),
         3.0, 0.75, 2.0**-1000, 2.0**1000, 2.0**-1022 * 3, np.nextafter(fi.tiny, 0.0)],
        2.0 ** np.arange(-1074, 1024).astype(np.float64),
        2.0 ** np.arange(-1074, 1024).astype(np.float64) * 1.5,
        logu(rng, 3000, -323, 308)]).astype(dt)
    x = x[x != 0]
    m, e = np.frexp(x)
    got_m = gpu_expr("f64_frexp(in0[i]).x", "f64", [x])
    got_e = gpu_expr("f64_frexp(in0[i]).y", "f64", [x])
    assert same(got_m, m).all(), (x[~same(got_m, m)][:5], got_m[~same(got_m, m)][:5])
    assert np.array_equal(got_e, e.astype(dt)), x[got_e != e][:5]

    k = np.arange(-1022, 1024, dtype=np.int32)
    got = gpu_expr("f64_pow2i(in0[i])", "f64", [k], in_types=["i32"])
    assert same(got, np.ldexp(1.0, k)).all(), k[~same(got, np.ldexp(1.0, k))][:5]

    # scalbn over the whole exponent range, overflow and (rounded) underflow included
    vals = np.array([1.0, -1.5, fi.max, fi.smallest_subnormal, 1.0 + 2**-52, 0.75, -fi.tiny, 3.0,
                     np.nextafter(1.0, 2.0) * 1.25], dtype=dt)
    ks = np.arange(-2200, 2200, 7, dtype=np.int32)
    vv, kk = [a.ravel() for a in np.meshgrid(vals, ks, indexing="ij")]
    got = gpu_expr("f64_scalbn(in0[i], in1[i])", "f64", [vv, kk], in_types=["f64", "i32"])
    with np.errstate(all="ignore"):
        want = np.ldexp(vv, kk)
    bad = ~same(got, want)
    alt = flushed_reference(np.ldexp, [vv, kk], dt)
    if alt is not None:   # a device that flushes float64 subnormal results
        bad &= ~same(got, alt)
    assert not bad.any(), list(zip(vv[bad][:5], kk[bad][:5], got[bad][:5], want[bad][:5]))


@pytest.mark.parametrize("off", [-3, -2, -1, 0, 1, 2, 3])
def test_f32_division_and_sqrt_correct_a_quotient_a_few_ulp_off(off):
    """f32_div_fix / f32_sqrt_fix turn a quotient or root up to 3 ulp off (what WGSL
    allows a device; NVIDIA's are) into the correctly rounded one, and keep a right one:
    the device's result is perturbed here by ``off`` ulp before the fix."""
    rng = np.random.default_rng(11 + off)
    n = 20000
    a = rng.uniform(1, 2, n).astype(np.float32)
    b = rng.uniform(1, 2, n).astype(np.float32)
    a[:3], b[:3] = [1.0, 1.9999999, 1.5], [1.9999999, 1.0, 1.5]
    offs = np.full(n, off, np.int32)
    got = gpu_expr("f32_div_fix(in0[i], in1[i], bitcast<f32>(bitcast<i32>(in0[i] / in1[i]) + in2[i]))",
                   "f32", [a, b, offs], in_types=["f32", "f32", "i32"])
    want = (a.astype(np.float64) / b).astype(np.float32)
    assert np.array_equal(got, want), list(zip(a[got != want][:5], b[got != want][:5]))
    m = rng.uniform(1, 4, n).astype(np.float32)
    m[:2] = [np.nextafter(np.float32(4), np.float32(0)), 1.0]
    got = gpu_expr("f32_sqrt_fix(in0[i], bitcast<f32>(bitcast<i32>(sqrt(in0[i])) + in1[i]))",
                   "f32", [m, offs], in_types=["f32", "i32"])
    want = np.sqrt(m.astype(np.float64)).astype(np.float32)
    assert np.array_equal(got, want), m[got != want][:5]


def gpu_expr(expr, T, args, in_types=None):
    in_types = in_types or [T] * len(args)
    fns = __import__("re").findall(r"\b(f(?:32|64)_\w+)\s*\(", expr)
    prelude = resolve(LIBRARY, list(dict.fromkeys(fns)))
    np_types = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
    return run_wgsl(expr, [(t, np.asarray(a, np_types[t])) for t, a in zip(in_types, args)],
                    T, TYPES[T], prelude)


# --------------------------------------------------------------------------
# evaluation order: compensated steps must survive re-association by the compiler
# --------------------------------------------------------------------------

def test_launder_is_a_select_barrier():
    """{T}_launder must be opaque, not an add that joins the surrounding sum (NVIDIA's
    driver re-associated x - k c1 - k c2 - ... into x - k (c1 + c2 + ...))."""
    for T in ("f32", "f64"):
        src = LIBRARY[f"{T}_launder"].source
        assert "select(s," in src and "s +" not in src, src
        rem = LIBRARY[f"{T}_rem_pio2"].source
        assert rem.count(f"r = {T}_launder(r - k") == 2 * 7, rem


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_compensated_primitives_exact(T):
    """two_sum returns the exact rounding error, two_prod the exact (f32) or a 2^-104
    accurate (f64) one: regrouping by the compiler would give 0 or garbage."""
    from fractions import Fraction
    dt = _dtype_or_skip(T)
    rng = np.random.default_rng(RNG_SEED)
    lim = 30 if T == "f32" else 120     # two_prod: f64 split needs f32 range
    a = logu(rng, 400, -lim // 4, lim // 4).astype(dt)
    b = logu(rng, 400, -lim // 4, lim // 4).astype(dt)
    s = gpu_expr(f"{T}_two_sum(in0[i], in1[i]).x", T, [a, b])
    e = gpu_expr(f"{T}_two_sum(in0[i], in1[i]).y", T, [a, b])
    assert same(s, (a + b).astype(dt)).all()
    bad = [i for i in range(len(a)) if Fraction(float(s[i])) + Fraction(float(e[i]))
           != Fraction(float(a[i])) + Fraction(float(b[i]))]
    assert not bad, [(a[i], b[i], s[i], e[i]) for i in bad[:5]]
    p = gpu_expr(f"{T}_two_prod(in0[i], in1[i]).x", T, [a, b])
    e = gpu_expr(f"{T}_two_prod(in0[i], in1[i]).y", T, [a, b])
    # f32: exact; f64: the tail x tail product (29 x 29 bits) is rounded, < 2^-98 relative
    rel = Fraction(0) if T == "f32" else Fraction(1, 2**98)
    bad = [i for i in range(len(a)) if abs(Fraction(float(p[i])) + Fraction(float(e[i]))
           - Fraction(float(a[i])) * Fraction(float(b[i])))
           > rel * abs(Fraction(float(a[i])) * Fraction(float(b[i])))]
    assert not bad, [(a[i], b[i], p[i], e[i]) for i in bad[:5]]


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_cody_waite_reduction(T):
    """Arguments where a one-constant reduction x - k (pi/2) is off by many ulp (the H200
    failure: cos(4.6786) 27 ulp, cos(700) ~9e-15 absolute), against mpmath."""
    mpmath = pytest.importorskip("mpmath")
    dt = _dtype_or_skip(T)
    x = np.array([4.6786, 700.0, -700.0, 4.71238898, 7.85398163, 1e4 + 0.3, 355.0, 103993.0,
                  1000.0, 2.0**20 + 0.25], dtype=np.float64).astype(dt)
    mpmath.mp.prec = 300
    for name in ("sin", "cos"):
        got = gpu(name, T, [x])
        want = np.array([float(getattr(mpmath, name)(mpmath.mpf(float(v)))) for v in x]).astype(dt)
        u = ulps(got, want)
        assert (u <= 1).all(), (name, x[u > 1], got[u > 1], want[u > 1])


# --------------------------------------------------------------------------
# float32 division: the fma path's short range and its edges, bit for bit
# --------------------------------------------------------------------------

def division_operands(seed: int, n: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of float32 (x, y): random bit patterns (every exponent equally likely), every
    pair of edge values, operands at the borders of the fma path's exponent range,
    quotients that overflow or underflow, exact quotients, and quotients within a tiny
    fraction of an ulp of a midpoint between two floats (where rounding is hardest)."""
    rng = np.random.default_rng(seed)
    u32 = lambda v: np.asarray(v, np.uint64).astype(np.uint32)  # noqa: E731
    xs, ys = [u32(rng.integers(0, 1 << 32, n))], [u32(rng.integers(0, 1 << 32, n))]
    edges = u32([0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 1, 0x80000001, 0x007fffff,
                 0x00800000, 0x00800001, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x40000000, 0x40400000,
                 0x3f7fffff, 0x00400000, 0x01000000, 0x7e800000, 0x7f000000, 0x18000000, 0x17800000, 0x3fffffff])
    xs.append(np.repeat(edges, len(edges)))
    ys.append(np.tile(edges, len(edges)))
    # exponent fields near the short path's borders (x: 47, 48; y: 1, 2, 252, 253;
    # differences -101, -100, 125, 126) with random signs and significands
    m = n // 4
    for ex, ey in ((rng.integers(44, 52, m), rng.integers(0, 256, m)),
                   (rng.integers(0, 256, m), rng.choice([0, 1, 2, 3, 251, 252, 253, 254], m)),
                   (rng.integers(0, 256, m), None)):
        if ey is None:  # quotient exponents around the borders and the normal range's ends
            ey = np.clip(ex - rng.choice([-150, -149, -128, -127, -126, -102, -101, -100, -99,
                                          124, 125, 126, 127, 128], m), 0, 254)
        mant = u32(rng.integers(0, 1 << 23, (2, m)))
        sign = u32(rng.integers(0, 2, (2, m))) << 31
        xs.append(sign[0] | (u32(ex) << 23) | mant[0])
        ys.append(sign[1] | (u32(ey) << 23) | mant[1])
    x = np.concatenate(xs).view(np.float32)
    y = np.concatenate(ys).view(np.float32)
    # exact quotients and near-midpoint quotients: x = y * q rounded, q with 24 or 25 bits
    yq = np.abs(rng.standard_normal(n).astype(np.float32)) + np.float32(0.5)
    q24 = rng.integers(1 << 23, 1 << 24, n).astype(np.float64)
    mid = (q24 + 0.5) * 2.0 ** rng.integers(-60, 60, n)
    with np.errstate(all="ignore"):
        x_mid = (mid * yq.astype(np.float64)).astype(np.float32)
        x_exact = (q24 * 2.0 ** -20 * rng.integers(1, 9, n)).astype(np.float32) * yq
    return np.concatenate([x, x_mid, x_exact]), np.concatenate([y, yq, yq])


def _same_bits_or_nan(got, want):
    return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))


def _fma_by_f64(text: str) -> str:
    """``text`` with WGSL's fma replaced by one computed in float64: exact where the
    result is a float32 (the remainders), within an ulp elsewhere (a double rounding),
    which is all the short path needs; so it runs on a device whose fma rounds twice."""
    return ("fn fma_f64(a: f32, b: f32, c: f32) -> f32 { return f32(f64(a) * f64(b) + f64(c)); }\n"
            + __import__("re").sub(r"(?<!\w)fma\(", "fma_f64(", text))


@pytest.mark.skipif("shader-f64" not in device().features, reason="the fma stand-in needs float64")
@pytest.mark.parametrize("off", [0, -3, 3])
def test_f32_divide_fma_is_ieee_division_bit_for_bit(off):
    """f32_divide_fma (the fused-fma device's division) against NumPy's float32 division
    on every kind of operand pair, with an exact fma standing in for the device's where
    that is not fused (lavapipe). Most pairs take the short fma path; zeros, inf, NaN,
    subnormals and extreme exponents take the fma-free one. The device's reciprocal is
    moved ``off`` ulp first: WGSL lets it be 2.5 ulp off."""
    x, y = division_operands(21 + off)
    prelude = _fma_by_f64(resolve(LIBRARY, ["f32_divide_fma"]))
    recip = "f32_launder(1.0 / ay)"
    assert prelude.count(recip) == 1
    prelude = prelude.replace(recip, f"f32_launder(bitcast<f32>(bitcast<i32>(1.0 / ay) + {off}))")
    got = run_wgsl("f32_divide_fma(in0[i], in1[i])", [("f32", x), ("f32", y)], "f32", np.float32, prelude)
    _assert_ieee_quotient(got, x, y)


def _assert_ieee_quotient(got, a, b):
    """got is a / b bit for bit as IEEE gives it (or as a device that flushes subnormals
    gives it from flushed operands, flushed)."""
    with np.errstate(all="ignore"):
        want = np.divide(a, b)
    bad = ~_same_bits_or_nan(got, want)
    alt = flushed_reference(np.divide, [a, b], np.float32)
    if alt is not None:
        bad &= ~_same_bits_or_nan(got, alt)
    assert not bad.any(), [(a[i], b[i], got[i], want[i]) for i in np.flatnonzero(bad)[:6]]


def test_f32_division_bit_for_bit_through_the_namespace():
    """xp.divide over the same operand pairs, and by scalars (one divisor for the whole
    kernel): the kernels this device gets (the short fma path where its fma is fused),
    bit for bit."""
    import wgarray as xp

    x, y = division_operands(22, 1 << 15)
    cases = [(xp.divide(xp.asarray(x), xp.asarray(y)), x, y)]
    for d in (3.0, -0.1, 7e-30, 3e35, 0.25):
        cases.append((xp.asarray(x) / d, x, np.full_like(x, d)))
    cases.append((xp.reciprocal(xp.asarray(y)), np.ones_like(y), y))
    for got, a, b in cases:
        _assert_ieee_quotient(np.asarray(got), a, b)
