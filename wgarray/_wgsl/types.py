"""How each dtype lives in WGSL: its compute tag, storage binding and load/store code.

A *tag* names the WGSL type a kernel computes in:

    b     bool                      i32 / u32  also int8/16, uint8/16 (wrapped after ops)
    i64 / u64   native 64-bit ints  ei64 / eu64  emulated: vec2<u32> (low, high)
    f32 / f64   floats              c64 / c128   vec2<f32> / vec2<f64> (re, im)

Storage is NumPy's byte layout: bool and 8/16-bit integers are packed into u32 words.
"""
from __future__ import annotations

from .. import _dtypes as dt

WGSL_TYPE = {
    "b": "bool", "i32": "i32", "u32": "u32", "i64": "i64", "u64": "u64",
    "ei64": "vec2<u32>", "eu64": "vec2<u32>", "f32": "f32", "f64": "f64",
    "c64": "vec2<f32>", "c128": "vec2<f64>",
}

NARROW = {"int8": ("i32", 8), "int16": ("i32", 16), "uint8": ("u32", 8), "uint16": ("u32", 16)}


def tag(dtype_name: str, int64_native: bool) -> str:
    """The compute tag of a dtype (by name) on a device with or without shader-int64."""
    if dtype_name == "bool":
        return "b"
    if dtype_name in NARROW:
        return NARROW[dtype_name][0]
    if dtype_name in ("int64", "uint64"):
        base = "i64" if dtype_name == "int64" else "u64"
        return base if int64_native else "e" + base
    return {"int32": "i32", "uint32": "u32", "float32": "f32", "float64": "f64",
            "complex64": "c64", "complex128": "c128"}[dtype_name]


def wgsl_type(dtype_name: str, int64_native: bool) -> str:
    return WGSL_TYPE[tag(dtype_name, int64_native)]


def storage_type(dtype_name: str, int64_native: bool) -> str:
    """Element type of the ``array<...>`` a buffer of this dtype is bound as."""
    if dtype_name == "bool" or dtype_name in NARROW:
        return "u32"
    return wgsl_type(dtype_name, int64_native)


def is_vec4able(dtype_name: str) -> bool:
    return dtype_name in ("int32", "uint32", "float32")


def load(dtype_name: str, buf: str, index: str, int64_native: bool) -> str:
    """WGSL expression loading element ``index`` (u32) of binding ``buf``."""
    if dtype_name == "bool":
        return f"((({buf}[({index}) >> 2u] >> ((({index}) & 3u) * 8u)) & 0xffu) != 0u)"
    if dtype_name in NARROW:
        t, bits = NARROW[dtype_name]
        per = 32 // bits
        shift = f"((({index}) & {per - 1}u) * {bits}u)"
        word = f"{buf}[({index}) >> {per.bit_length() - 1}u]"
        if t == "u32":
            return f"(({word} >> {shift}) & {(1 << bits) - 1}u)"
        return f"(bitcast<i32>({word} << ({32 - bits}u - {shift})) >> {32 - bits}u)"
    return f"{buf}[{index}]"


def const(dtype_name: str, word: int, int64_native: bool) -> str:  # noqa: C901
    """WGSL expression for a scalar parameter stored at u32 word ``word`` of ``P``
    (f64 parameters are also visible as ``PD``, the same bytes as array<f64>)."""
    p = f"P[{word}]"
    p1 = f"P[{word + 1}]"
    t = tag(dtype_name, int64_native)
    if t == "b":
        return f"({p} != 0u)"
    if t == "u32":
        return p
    if t == "i32":
        return f"bitcast<i32>({p})"
    if t == "f32":
        return f"bitcast<f32>({p})"
    if t == "f64":
        return f"PD[{word // 2}]"
    if t == "i64":
        return f"i64((u64({p1}) << 32u) | u64({p}))"  # i64(u32) would sign-extend on naga
    if t == "u64":
        return f"((u64({p1}) << 32u) | u64({p}))"
    if t in ("ei64", "eu64"):
        return f"vec2<u32>({p}, {p1})"
    if t == "c64":
        return f"vec2<f32>(bitcast<f32>({p}), bitcast<f32>({p1}))"
    if t == "c128":
        return f"vec2<f64>(PD[{word // 2}], PD[{word // 2 + 1}])"
    raise AssertionError(t)


def const_words(dtype_name: str) -> int:
    """How many u32 parameter words a scalar of this dtype takes (f64-based: aligned to 2)."""
    return {"float64": 2, "int64": 2, "uint64": 2, "complex64": 2, "complex128": 4}.get(dtype_name, 1)


def const_bytes(dtype: dt.DType, value) -> bytes:
    """The parameter bytes of a Python scalar already checked to fit ``dtype``."""
    import numpy as np

    if dtype is dt.bool:
        return (1 if value else 0).to_bytes(4, "little")
    if dtype.kind in "iu":
        v = int(value)
        if dtype.itemsize < 4:  # computed in 32 bits: sign- or zero-extend
            v = np.array(v).astype(dtype.numpy).astype(np.int64 if dtype.kind == "i" else np.uint64)
            v = int(v)
            return (v & 0xFFFFFFFF).to_bytes(4, "little")
        return (v & ((1 << dtype.bits) - 1)).to_bytes(dtype.itemsize, "little")
    return np.array(value, dtype=dtype.numpy).tobytes()
