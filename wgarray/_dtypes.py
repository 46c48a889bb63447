"""The standard's 13 dtypes, their categories, and type promotion.

A dtype knows how it is stored on a WebGPU device: every buffer holds the same bytes
as NumPy's little-endian layout, so uploads and readbacks never convert. What differs
per dtype is the WGSL type a kernel computes in (see ``_wgsl.types.tag``).
"""
from __future__ import annotations

import numpy as np


class DType:
    """An array data type. Compare with ``==``; dtypes are singletons."""

    __slots__ = ("name", "numpy", "kind", "itemsize")

    def __init__(self, name: str, kind: str):
        self.name = name
        self.numpy = np.dtype(name)
        self.kind = kind  # 'b' bool, 'i' signed, 'u' unsigned, 'f' real float, 'c' complex
        self.itemsize = self.numpy.itemsize

    def __repr__(self) -> str:
        return f"wgarray.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: ``np.dtype(wgarray.int32)`` reads this attribute, so host
        code that normalizes dtypes through NumPy (scikit-learn's ``check_array``, cubed,
        zarr) accepts ours."""
        return self.numpy


def _by_name(name: str) -> DType:
    return BY_NAME[name]


bool = DType("bool", "b")  # noqa: A001 - the standard's name
int8 = DType("int8", "i")
int16 = DType("int16", "i")
int32 = DType("int32", "i")
int64 = DType("int64", "i")
uint8 = DType("uint8", "u")
uint16 = DType("uint16", "u")
uint32 = DType("uint32", "u")
uint64 = DType("uint64", "u")
float32 = DType("float32", "f")
float64 = DType("float64", "f")
complex64 = DType("complex64", "c")
complex128 = DType("complex128", "c")

ALL = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       float32, float64, complex64, complex128)
BY_NAME = {d.name: d for d in ALL}
_BY_NUMPY = {d.numpy: d for d in ALL}

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = (float32, float64)
COMPLEX_FLOATING = (complex64, complex128)
FLOATING = REAL_FLOATING + COMPLEX_FLOATING
NUMERIC = INTEGER + FLOATING
REAL_NUMERIC = INTEGER + REAL_FLOATING

# Categories by the names the standard uses; checks and error messages both read these.
CATEGORIES: dict[str, tuple[DType, ...]] = {
    "bool": (bool,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integer": INTEGER,
    "integer or boolean": INTEGER + (bool,),
    "real floating-point": REAL_FLOATING,
    "complex floating-point": COMPLEX_FLOATING,
    "floating-point": FLOATING,
    "real-valued": REAL_NUMERIC,
    "real-valued floating-point": REAL_FLOATING,
    "numeric": NUMERIC,
    "boolean or numeric": ALL,
    "any": ALL,
}

# Dtypes that need device features beyond core WebGPU.
NEEDS_F64 = (float64, complex128)


def from_numpy(dt) -> DType:
    """The wgarray dtype for a NumPy dtype (or anything ``np.dtype`` accepts)."""
    try:
        npdt = np.dtype(dt)
    except TypeError:
        raise TypeError(f"dtype: expected a dtype, got {dt!r}") from None
    npdt = npdt.newbyteorder("=") if npdt.byteorder not in "=|" else npdt
    try:
        return _BY_NUMPY[npdt]
    except KeyError:
        raise TypeError(f"dtype: NumPy dtype {npdt} has no Array API equivalent") from None


def as_dtype(dt, func: str = "dtype") -> DType:
    """Accept a wgarray dtype (the normal case) or a NumPy dtype / name as a courtesy."""
    if isinstance(dt, DType):
        return dt
    if isinstance(dt, str) and dt in BY_NAME:
        return BY_NAME[dt]
    if isinstance(dt, (np.dtype, type)) and not isinstance(dt, DType):
        try:
            return from_numpy(dt)
        except TypeError:
            pass
    raise TypeError(f"{func}: expected a dtype such as wgarray.float32, got {dt!r}")


def real_of(dt: DType) -> DType:
    """The real dtype of a complex dtype's components (identity for others)."""
    return {complex64: float32, complex128: float64}.get(dt, dt)


def complex_of(dt: DType) -> DType:
    return {float32: complex64, float64: complex128}.get(dt, dt)


# ---------------------------------------------------------------- promotion

def _build_promotion() -> dict[tuple[DType, DType], DType]:
    table: dict[tuple[DType, DType], DType] = {}
    signed = {8: int8, 16: int16, 32: int32, 64: int64}
    for a in ALL:
        for b in ALL:
            r = None
            if a is b:
                r = a
            elif a.kind in "iu" and b.kind in "iu":
                if a.kind == b.kind:
                    r = a if a.itemsize >= b.itemsize else b
                else:
                    s, u = (a, b) if a.kind == "i" else (b, a)
                    if s.itemsize > u.itemsize:
                        r = s
                    elif u.itemsize < 8:
                        r = signed[u.bits * 2]
                    # int64 with uint64 has no common type
            elif a.kind in "fc" and b.kind in "fc":
                bits = max(real_of(a).bits, real_of(b).bits)
                r = float64 if bits == 64 else float32
                if "c" in (a.kind, b.kind):
                    r = complex_of(r)
            if r is not None:
                table[a, b] = r
    return table


# The standard's table: within bool, within integers, within floating-point.
PROMOTION = _build_promotion()


def _mixed_kind(a: DType, b: DType, f64: bool) -> DType | None:
    """Cross-kind promotion, which the standard leaves to the implementation.

    As NumPy and CuPy: bool joins anything; an integer joins a floating dtype that holds
    all its values exactly, so int8/int16 (and unsigned) with float32 stay float32 while
    32- and 64-bit integers widen float32 to float64 (complex64 to complex128). On a
    device without float64 (``f64`` false) the widening stops at float32, as in PyTorch
    and JAX.
    """
    if a is bool:
        return b
    if b is bool:
        return a
    if a.kind in "fc" and b.kind in "iu":
        a, b = b, a
    if not (a.kind in "iu" and b.kind in "fc"):
        return None
    if a.itemsize < 4 or real_of(b).itemsize == 8 or not f64:
        return b
    return complex128 if b.kind == "c" else float64


def wide_floats() -> bool:
    """Whether the default device computes float64. This module sits below the device
    layer, which replaces this function with the default device's answer."""
    return True


def promote(a: DType, b: DType, func: str = "result_type", strict: bool = False,
            f64: bool | None = None) -> DType:
    """The common dtype of ``a`` and ``b``. ``f64``: whether the device that computes the
    result has float64 (an integer with float32 widens to float64 only there); None asks
    the default device, for dtypes that belong to no array."""
    r = PROMOTION.get((a, b))
    if r is None and not strict:
        r = _mixed_kind(a, b, wide_floats() if f64 is None else f64)
    if r is None:
        raise TypeError(f"{func}: no common dtype for {a} and {b}")
    return r
