"""wgarray._wgsl.intmath against NumPy: every function, every tag, exact equality.

Each case runs one kernel ``out[i] = f(in0[i], ...)`` over a batch of edge values
(0, +-1, MIN, MAX, values around 2^24, 2^31, 2^32, 2^53, 2^63, all their pairs for
binary functions) and random values of every magnitude.
"""
from __future__ import annotations

import pathlib
import sys
import zlib
from dataclasses import dataclass
from typing import Callable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(1, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from wgsl_kernel import device, run_wgsl  # noqa: E402

from wgarray._ops import OPS  # noqa: E402
from wgarray._wgsl.intmath import LIBRARY, SIGNATURES  # noqa: E402
from wgarray._wgsl.snippets import resolve  # noqa: E402

TAGS = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
        "ei64": np.int64, "eu64": np.uint64}
EMULATED = ("ei64", "eu64")
NATIVE = ("i32", "u32", "i64", "u64")
N_RANDOM = 6000


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------
def wrap(values, dtype) -> np.ndarray:
    """Python ints reduced modulo 2^bits into dtype."""
    bits = np.dtype(dtype).itemsize * 8
    u = np.array([int(v) % (1 << bits) for v in values], dtype=f"u{bits // 8}")
    return u.view(dtype)


def edges(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    base = [0, 1, 2, 3, 5, 7, 10, 127, 128, 255, 256, 65535, 65536, 0x12345678]
    for p in (16, 24, 31, 32, 33, 52, 53, 62, 63, 64):
        base += [(1 << p) - 1, 1 << p, (1 << p) + 1]
    base += [0x1234_5678_9ABC_DEF0, 0xFEDC_BA98_7654_3210]
    vals = set(base) | {-v for v in base} | {info.min, info.max, info.min + 1, info.max - 1}
    return np.unique(wrap(sorted(vals), dtype))


def randoms(dtype, n, rng) -> np.ndarray:
    """Random bits scaled to random magnitudes, either sign."""
    u = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    u >>= rng.integers(0, 64, n).astype(np.uint64)
    u = np.where(rng.random(n) < 0.5, u, ~u + np.uint64(1))
    return u.astype(f"u{np.dtype(dtype).itemsize}").view(dtype)


def values(dtype, rng, n=N_RANDOM) -> np.ndarray:
    return np.concatenate([edges(dtype), randoms(dtype, n, rng)])


def pairs(dtype, rng, second=None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of edge values, then random pairs; `second` draws the right operand."""
    e = edges(dtype)
    a = [np.repeat(e, len(e)), randoms(dtype, N_RANDOM, rng), e.repeat(20)]
    b = [np.tile(e, len(e)), randoms(dtype, N_RANDOM, rng), randoms(dtype, 20 * len(e), rng)]
    a, b = np.concatenate(a), np.concatenate(b)
    if second is not None:
        b = second(dtype, len(a), rng)
    return a, b


def small_divisors(dtype, n, rng):
    """Mostly random, some small (the short-division path), some 0 and -1."""
    b = randoms(dtype, n, rng)
    pick = rng.random(n)
    b = np.where(pick < 0.3, wrap(rng.integers(-70000, 70000, n).tolist(), dtype), b)
    return np.where(pick > 0.95, wrap(rng.integers(-1, 1, n).tolist(), dtype), b)


def shift_counts(dtype, n, rng):
    """Counts 0..70 mostly, some arbitrary (negative or huge), some 0..70 + k * 2^32."""
    c = rng.integers(0, 71, n)
    if np.dtype(dtype).itemsize == 8:  # small low word, nonzero high word
        c = np.where(rng.random(n) < 0.1, c + (rng.integers(-3, 4, n) << 32), c)
    c = wrap(c.tolist(), dtype)
    return np.where(rng.random(n) < 0.15, randoms(dtype, n, rng), c)


def exponents(dtype, n, rng):
    """Exponents 0..70 mostly, some huge; never negative (NumPy refuses those)."""
    e = rng.integers(0, 71, n).astype(dtype)
    return np.where(rng.random(n) < 0.1, rng.integers(0, np.iinfo(dtype).max, n, dtype=dtype), e)


def float_values(ftype, lo, hi, rng, n=N_RANDOM) -> np.ndarray:
    """Floats in [lo, hi) of every magnitude, with fractions, and edge values."""
    mag = rng.random(n) * np.exp2(rng.integers(-2, 65, n))
    x = np.where(rng.random(n) < 0.5, mag, -mag)
    special = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.0**24 + 2, 2.0**31, -2.0**31, 2.0**32,
               -2.0**32, 2.0**32 + 2**9, 2.0**53, -2.0**53, 2.0**62, -2.0**63, 2.0**63, 2.0**64 * (1 - 2.0**-24)]
    x = np.concatenate([np.array(special), x]).astype(ftype)
    return x[(x >= lo) & (x < hi)]


def rounding_ints(dtype, rng, n=N_RANDOM) -> np.ndarray:
    """Integers at float rounding boundaries: below the 24th or 53rd significant bit
    exactly half, half -+ 1, zero, or all ones (rounding carries into the exponent)."""
    signed = np.dtype(dtype).kind == "i"
    width = 63 if signed else 64
    out = []
    for _ in range(n):
        prec = int(rng.choice([24, 53]))
        length = int(rng.integers(prec + 1, width + 1))
        low_bits = length - prec
        x = (int(rng.integers(0, 1 << 62)) << 2 | 1 << 63) >> (64 - prec) << low_bits
        half = 1 << (low_bits - 1)
        x |= int(rng.choice([half, half - 1, half + 1, 0, 2 * half - 1])) if low_bits > 1 else int(rng.integers(0, 2))
        out.append(-x if signed and rng.random() < 0.5 else x)
    return np.concatenate([edges(dtype), wrap(out, dtype)])


# ---------------------------------------------------------------------------
# running one function
# ---------------------------------------------------------------------------
def call(name: str, *args: np.ndarray, out_dtype) -> np.ndarray:
    """name(in0[i], ...) on the device; bools travel as u32."""
    arg_types, ret = SIGNATURES[name]
    inputs, exprs = [], []
    for k, (wtype, a) in enumerate(zip(arg_types, args)):
        if wtype == "bool":
            inputs.append(("u32", a.astype(np.uint32)))
            exprs.append(f"in{k}[i] != 0u")
        else:
            inputs.append((wtype, a))
            exprs.append(f"in{k}[i]")
    expr = f"{name}({', '.join(exprs)})"
    if ret == "bool":
        return run_wgsl(f"u32({expr})", inputs, "u32", np.uint32, resolve(LIBRARY, [name])).astype(bool)
    return run_wgsl(expr, inputs, ret, out_dtype, resolve(LIBRARY, [name]))


def assert_same(got: np.ndarray, want: np.ndarray, args, name: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        bad = got.view(f"u{want.itemsize}") != want.view(f"u{want.itemsize}")
    elif want.dtype.names:
        bad = np.zeros(len(want), bool)
        for field in want.dtype.names:
            bad |= got[field] != want[field]
    else:
        bad = got != want
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = "\n".join(f"  args={[a[i].item() for a in args]} got={got[i]!r} want={want[i]!r}" for i in idx)
        pytest.fail(f"{name}: {bad.sum()} of {len(want)} differ, e.g.\n{rows}")


@dataclass
class Case:
    name: str  # function under test
    make: Callable  # rng -> tuple of argument arrays
    ref: Callable  # *args -> expected array (its dtype is the output's)
    variant: str = ""

    @property
    def id(self):
        return self.name + (f"[{self.variant}]" if self.variant else "")


def _np(f):
    def ref(*args):
        with np.errstate(all="ignore"):
            return f(*args)
    return ref


def _pow_negative(a, b):
    """Truncated real value of a ** b for b < 0."""
    odd = (b & 1) != 0
    return np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)


def _divmod_ref(dtype):
    def ref(a, b):
        out = np.zeros(len(a), [("q", dtype), ("r", dtype)])
        with np.errstate(all="ignore"):
            out["q"], out["r"] = np.floor_divide(a, b), np.remainder(a, b)
        return out
    return ref


def _clz64(a):
    return np.array([64 - int(v).bit_length() for v in a.view(np.uint64)], np.uint32)


def cases():
    out = []
    for tag, dt in TAGS.items():
        signed = np.dtype(dt).kind == "i"
        binary = lambda rng, dt=dt: pairs(dt, rng)  # noqa: E731
        unary = lambda rng, dt=dt: (values(dt, rng),)  # noqa: E731
        out += [
            Case(f"{tag}_floor_divide", lambda rng, dt=dt: pairs(dt, rng, small_divisors), _np(np.floor_divide)),
            Case(f"{tag}_remainder", lambda rng, dt=dt: pairs(dt, rng, small_divisors), _np(np.remainder)),
            Case(f"{tag}_pow", lambda rng, dt=dt: pairs(dt, rng, exponents), _np(np.power)),
            Case(f"{tag}_bitwise_left_shift", lambda rng, dt=dt: pairs(dt, rng, shift_counts), _np(np.left_shift)),
            Case(f"{tag}_bitwise_right_shift", lambda rng, dt=dt: pairs(dt, rng, shift_counts), _np(np.right_shift)),
            Case(f"{tag}_abs", unary, _np(np.abs)),
            Case(f"{tag}_sign", unary, _np(np.sign)),
            Case(f"{tag}_minimum", binary, np.minimum),
            Case(f"{tag}_maximum", binary, np.maximum),
        ]
        if signed:
            out.append(Case(f"{tag}_pow", lambda rng, dt=dt: pairs(
                dt, rng, lambda dt, n, rng: -exponents(dt, n, rng) - dt(1)), _pow_negative, "negative exponent"))
        if tag in ("i64", "u64"):
            out.append(Case(f"{tag}_to_f32", lambda rng, dt=dt: (rounding_ints(dt, rng),),
                            lambda a: a.astype(np.float32)))
            out.append(Case(f"{tag}_to_f64", lambda rng, dt=dt: (rounding_ints(dt, rng),),
                            lambda a: a.astype(np.float64)))
            for ft in (np.float32, np.float64):  # values in range: out of range is undefined
                lo, hi = (-2.0**62, 2.0**62) if signed else (0.0, 2.0**63)
                out.append(Case(f"{tag}_from_{np.dtype(ft).name.replace('float', 'f')}",
                                lambda rng, ft=ft, lo=lo, hi=hi: (float_values(ft, lo, hi, rng),),
                                _np(lambda x, dt=dt: x.astype(dt))))
        if tag not in EMULATED:
            continue
        other = np.uint64 if signed else np.int64
        out += [
            Case(f"{tag}_{op}", binary, _np(f)) for op, f in [
                ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("eq", np.equal),
                ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                ("ge", np.greater_equal), ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                ("bitwise_xor", np.bitwise_xor)]
        ]
        out += [
            Case(f"{tag}_neg", unary, _np(np.negative)),
            Case(f"{tag}_bitwise_invert", unary, np.invert),
            Case(f"{tag}_divmod", lambda rng, dt=dt: pairs(dt, rng, small_divisors), _divmod_ref(dt)),
            Case(f"{tag}_from_i32", lambda rng: (values(np.int32, rng),), lambda a, dt=dt: a.astype(dt)),
            Case(f"{tag}_from_u32", lambda rng: (values(np.uint32, rng),), lambda a, dt=dt: a.astype(dt)),
            Case(f"{tag}_from_bool", lambda rng: (np.array([False, True, True, False]),),
                 lambda a, dt=dt: a.astype(dt)),
            Case(f"{tag}_to_i32", unary, lambda a: a.astype(np.int32)),
            Case(f"{tag}_to_u32", unary, lambda a: a.astype(np.uint32)),
            Case(f"{tag}_to_bool", unary, lambda a: a.astype(bool)),
            Case(f"{tag}_from_{'eu64' if signed else 'ei64'}", lambda rng, o=other: (values(o, rng),),
                 lambda a, dt=dt: a.view(dt)),
        ]
        for ft in (np.float32, np.float64):
            fname = np.dtype(ft).name.replace("float", "f")
            out.append(Case(f"{tag}_to_{fname}", lambda rng, dt=dt: (rounding_ints(dt, rng),),
                            lambda a, ft=ft: a.astype(ft)))
            # magnitudes in range; negative values wrap for eu64 (the int64 bits)
            lo, hi = -2.0**63, (2.0**63 if signed else 2.0**64)
            out.append(Case(f"{tag}_from_{fname}", lambda rng, ft=ft, lo=lo, hi=hi: (float_values(ft, lo, hi, rng),),
                            _np(lambda x, dt=dt: np.where(x < 0, x.astype(np.int64).view(dt), x.astype(dt)))))
    # helpers and the 8/16-bit wraps
    i32s = lambda rng: (values(np.int32, rng),)  # noqa: E731
    u32s = lambda rng: (values(np.uint32, rng),)  # noqa: E731
    n64 = lambda dt, n, rng: wrap(rng.integers(0, 64, n).tolist(), dt)  # noqa: E731
    with_count = lambda dt: lambda rng: ((v := values(dt, rng)), n64(np.uint32, len(v), rng))  # noqa: E731
    out += [
        Case("wrap_i8", i32s, lambda a: a.astype(np.int8).astype(np.int32)),
        Case("wrap_i16", i32s, lambda a: a.astype(np.int16).astype(np.int32)),
        Case("wrap_u8", u32s, lambda a: a.astype(np.uint8).astype(np.uint32)),
        Case("wrap_u16", u32s, lambda a: a.astype(np.uint16).astype(np.uint32)),
        Case("eu64_mul_wide", lambda rng: pairs(np.uint32, rng),
             lambda a, b: a.astype(np.uint64) * b.astype(np.uint64)),
        Case("eu64_shl_u32", with_count(np.uint64), lambda a, n: a << n.astype(np.uint64)),
        Case("eu64_shr_u32", with_count(np.uint64), lambda a, n: a >> n.astype(np.uint64)),
        Case("ei64_shr_u32", with_count(np.int64),
             lambda a, n: a >> n.astype(np.int64)),
        Case("eu64_clz", lambda rng: (values(np.uint64, rng),), _clz64),
        Case("ei64_is_negative", lambda rng: (values(np.int64, rng),), lambda a: a < 0),
    ]
    return out


CASES = cases()


def _skip_reason(name: str) -> str | None:
    feats = device().features
    arg_types, ret = SIGNATURES[name]
    types = set(arg_types) | {ret}
    if types & {"i64", "u64"} and "shader-int64" not in feats:
        return "device lacks shader-int64"
    if "f64" in types and "shader-f64" not in feats:
        return "device lacks shader-f64"
    return None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_against_numpy(case: Case):
    if reason := _skip_reason(case.name):
        pytest.skip(reason)
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    args = case.make(rng)
    want = case.ref(*args)
    got = call(case.name, *args, out_dtype=want.dtype)
    assert_same(got, want, args, case.id)


def test_every_function_is_tested():
    assert set(LIBRARY) == {c.name for c in CASES}


def test_whole_library_compiles_together():
    names = [n for n in LIBRARY if _skip_reason(n) is None]
    got = run_wgsl("in0[i] + 1u", [("u32", np.arange(4, dtype=np.uint32))], "u32", np.uint32,
                   resolve(LIBRARY, names))
    assert list(got) == [1, 2, 3, 4]


@pytest.mark.parametrize("tag", EMULATED)
@pytest.mark.parametrize("ftype", ["f32", "f64"])
def test_from_float_out_of_range_terminates(tag, ftype):
    name = f"{tag}_from_{ftype}"
    if reason := _skip_reason(name):
        pytest.skip(reason)
    dt = np.float32 if ftype == "f32" else np.float64
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0**64, -2.0**64, 3.0], dt)
    got = call(name, x, out_dtype=TAGS[tag])
    assert got[-1] == 3


def test_short_and_long_division_paths_agree():
    """Divisors around 2^16, where eu64_divmod switches algorithm."""
    rng = np.random.default_rng(7)
    a = randoms(np.uint64, 4000, rng)
    b = rng.integers(2**16 - 40, 2**16 + 40, 4000).astype(np.uint64)
    got = call("eu64_divmod", a, b, out_dtype=_divmod_ref(np.uint64)(a, b).dtype)
    assert_same(got, _divmod_ref(np.uint64)(a, b), (a, b), "eu64_divmod")


# op -> its NumPy reference of (a, b) (wgarray/_ops.py); a unary op ignores b.
SMALL_OPS = {n: (lambda a, b, f=getattr(np, OPS[n].numpy), k=OPS[n].arity: f(*(a, b)[:k]))
             for n in ("floor_divide", "remainder", "pow", "bitwise_left_shift", "bitwise_right_shift", "abs",
                       "sign", "minimum", "maximum")}


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("op", list(SMALL_OPS))
def test_small_ints_computed_in_32_bits_then_wrapped(dtype, op):
    """The caller's recipe for 8/16-bit dtypes: widen, the i32/u32 function, wrap."""
    info = np.iinfo(dtype)
    signed = info.kind == "i"
    rng = np.random.default_rng(info.bits)
    if info.bits == 8:  # every pair
        a, b = (x.ravel() for x in np.meshgrid(np.arange(info.min, info.max + 1), np.arange(info.min, info.max + 1)))
    else:
        a, b = rng.integers(info.min, info.max + 1, (2, 40000))
        b[::3] = rng.integers(-2 if signed else 0, 20, len(b[::3]))
    if op == "pow":
        b = np.abs(b) % 20  # NumPy refuses negative exponents
    a, b = a.astype(dtype), b.astype(dtype)
    t, wide = ("i32", np.int32) if signed else ("u32", np.uint32)
    call_ = f"{t}_{op}(in0[i], in1[i])" if op not in ("abs", "sign") else f"{t}_{op}(in0[i]) + in1[i] * {t}(0)"
    expr = f"wrap_{'i' if signed else 'u'}{info.bits}({call_})"
    prelude = resolve(LIBRARY, [f"{t}_{op}", f"wrap_{'i' if signed else 'u'}{info.bits}"])
    got = run_wgsl(expr, [(t, a.astype(wide)), (t, b.astype(wide))], t, wide, prelude)
    with np.errstate(all="ignore"):
        want = SMALL_OPS[op](a, b).astype(wide)
    assert_same(got, want, (a, b), f"{op} on {np.dtype(dtype).name}")
