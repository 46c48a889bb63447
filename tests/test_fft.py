"""The fft extension against numpy.fft (pocketfft), for the complex dtypes this device offers.

Accuracy: the largest error, relative to the largest magnitude of the reference, is
within a few eps * log2(n) (pocketfft's own bound is of that order). References are
computed in complex128 from the same (rounded) input.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import wgarray as xp
from conftest import COMPLEX, HAS_F64, REAL_FLOAT, assert_exact, ids, npdt, to_np

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 16, 17, 64, 100, 1024, 1000]
NORMS = ["backward", "ortho", "forward"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}


def tol(dtype_name: str, n: int) -> float:
    eps = 1e-6 if dtype_name in ("complex64", "float32") else 1e-14
    return eps * max(1.0, math.log2(max(n, 2)))


def check(got, want, dtype_name: str, n: int, msg: str = ""):
    """``got`` (wgarray) has ``want``'s shape, the expected dtype, and values within tol."""
    h = to_np(got)
    assert h.dtype == np.dtype(dtype_name), f"{msg}: dtype {h.dtype}, expected {dtype_name}"
    assert h.shape == want.shape, f"{msg}: shape {h.shape}, expected {want.shape}"
    if want.size == 0:
        return
    scale = max(float(np.abs(want).max()), 1e-30)
    err = float(np.abs(h.astype(np.complex128) - want).max()) / scale
    assert err <= tol(dtype_name, n), f"{msg}: relative error {err:.3g} > {tol(dtype_name, n):.3g}"


def rand_complex(shape, cdtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npdt(cdtype))


def rand_real(shape, fdtype, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(npdt(fdtype))


def real_dtype(c):
    return xp.float32 if c == xp.complex64 else xp.float64


# ------------------------------------------------------------------ 1-D, every length

@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_fft_ifft_batched_every_length_and_norm(c, n):
    a = rand_complex((3, n), c, seed=n)
    x = xp.asarray(a)
    for norm in NORMS:
        check(xp.fft.fft(x, norm=norm), np.fft.fft(a.astype(np.complex128), norm=norm), c.name, n, f"fft {norm}")
        check(xp.fft.ifft(x, norm=norm), np.fft.ifft(a.astype(np.complex128), norm=norm), c.name, n, f"ifft {norm}")


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_rfft_irfft_batched_every_length_and_norm(c, n):
    f = real_dtype(c)
    a = rand_real((2, n), f, seed=n)
    x = xp.asarray(a)
    for norm in NORMS:
        spec = np.fft.rfft(a.astype(np.float64), norm=norm)
        check(xp.fft.rfft(x, norm=norm), spec, c.name, n, f"rfft {norm}")
        s = xp.asarray(spec.astype(npdt(c)))
        check(xp.fft.irfft(s, n=n, norm=norm), np.fft.irfft(spec.astype(npdt(c)).astype(np.complex128), n=n, norm=norm),
              f.name, n, f"irfft {norm}")


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_hfft_ihfft_batched_every_length_and_norm(c, n):
    f = real_dtype(c)
    a = rand_real((2, n), f, seed=n + 1)
    h = rand_complex((2, n // 2 + 1), c, seed=n + 2)
    for norm in NORMS:
        check(xp.fft.ihfft(xp.asarray(a), norm=norm), np.fft.ihfft(a.astype(np.float64), norm=norm), c.name, n,
              f"ihfft {norm}")
        check(xp.fft.hfft(xp.asarray(h), n=n, norm=norm), np.fft.hfft(h.astype(np.complex128), n=n, norm=norm),
              f.name, n, f"hfft {norm}")


def test_irfft_hfft_default_length_is_2m_minus_2():
    c = COMPLEX[0]
    h = rand_complex((3, 9), c)
    check(xp.fft.irfft(xp.asarray(h)), np.fft.irfft(h.astype(np.complex128)), REAL_OF[c.name], 16)
    check(xp.fft.hfft(xp.asarray(h)), np.fft.hfft(h.astype(np.complex128)), REAL_OF[c.name], 16)


# ------------------------------------------------------------------ n: padding and cropping, axes

@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_fft_n_pads_and_crops_along_any_axis(c):
    a = rand_complex((4, 6, 10), c)
    x = xp.asarray(a)
    ref = a.astype(np.complex128)
    for axis in (0, 1, 2, -1, -3):
        for n in (1, 3, 7, 16, 21):
            check(xp.fft.fft(x, n=n, axis=axis), np.fft.fft(ref, n=n, axis=axis), c.name, n, f"fft n={n} axis={axis}")
        check(xp.fft.ifft(x, n=11, axis=axis, norm="ortho"), np.fft.ifft(ref, n=11, axis=axis, norm="ortho"),
              c.name, 11, f"ifft axis={axis}")


@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_real_transforms_n_and_axis(c):
    f = real_dtype(c)
    a = rand_real((5, 8, 3), f)
    h = rand_complex((5, 8, 3), c)
    x, y = xp.asarray(a), xp.asarray(h)
    ra, rh = a.astype(np.float64), h.astype(np.complex128)
    for axis in (0, 1, -1):
        for n in (2, 5, 9, 14):
            check(xp.fft.rfft(x, n=n, axis=axis), np.fft.rfft(ra, n=n, axis=axis), c.name, n, f"rfft {n} {axis}")
            check(xp.fft.irfft(y, n=n, axis=axis), np.fft.irfft(rh, n=n, axis=axis), f.name, n, f"irfft {n} {axis}")
            check(xp.fft.hfft(y, n=n, axis=axis), np.fft.hfft(rh, n=n, axis=axis), f.name, n, f"hfft {n} {axis}")
            check(xp.fft.ihfft(x, n=n, axis=axis), np.fft.ihfft(ra, n=n, axis=axis), c.name, n, f"ihfft {n} {axis}")


# ------------------------------------------------------------------ n-D

def np_axes(s, axes, ndim):
    """The standard's default axes for ``s`` (NumPy 2 deprecates leaving them implicit)."""
    if axes is None and s is not None:
        return tuple(range(ndim - len(s), ndim))
    return axes


ND_CASES = [
    (None, None), ((5, 17), (0, 2)), (None, (1, 0)), ((3,), None), ((4, 6), None), (None, (-1,)),
    ((2, 3, 7), (2, 0, 1)),
]


@pytest.mark.parametrize("s,axes", ND_CASES, ids=str)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_fftn_ifftn_s_axes_norm(c, s, axes):
    a = rand_complex((4, 6, 10), c)
    x = xp.asarray(a)
    ref = a.astype(np.complex128)
    for norm in NORMS:
        check(xp.fft.fftn(x, s=s, axes=axes, norm=norm), np.fft.fftn(ref, s=s, axes=np_axes(s, axes, 3), norm=norm), c.name, 240,
              f"fftn {norm}")
        check(xp.fft.ifftn(x, s=s, axes=axes, norm=norm), np.fft.ifftn(ref, s=s, axes=np_axes(s, axes, 3), norm=norm), c.name, 240,
              f"ifftn {norm}")


@pytest.mark.parametrize("s,axes", ND_CASES, ids=str)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_rfftn_irfftn_s_axes_norm(c, s, axes):
    f = real_dtype(c)
    a = rand_real((4, 6, 10), f)
    h = rand_complex((4, 6, 10), c)
    for norm in NORMS:
        check(xp.fft.rfftn(xp.asarray(a), s=s, axes=axes, norm=norm),
              np.fft.rfftn(a.astype(np.float64), s=s, axes=np_axes(s, axes, 3), norm=norm), c.name, 240, f"rfftn {norm}")
        check(xp.fft.irfftn(xp.asarray(h), s=s, axes=axes, norm=norm),
              np.fft.irfftn(h.astype(np.complex128), s=s, axes=np_axes(s, axes, 3), norm=norm), f.name, 240, f"irfftn {norm}")


def test_fftn_roundtrip_identity():
    c = COMPLEX[-1]
    a = rand_complex((8, 12, 5), c)
    x = xp.asarray(a)
    check(xp.fft.ifftn(xp.fft.fftn(x)), a.astype(np.complex128), c.name, 480, "ifftn(fftn(x))")
    r = rand_real((6, 10), real_dtype(c))
    check(xp.fft.irfftn(xp.fft.rfftn(xp.asarray(r)), s=(6, 10)), r.astype(np.float64), real_dtype(c).name, 60,
          "irfftn(rfftn(x))")


# ------------------------------------------------------------------ dtypes, fusion, views, empty

@pytest.mark.parametrize("f", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_real_input_gives_complex_of_same_precision(f):
    a = rand_real((3, 12), f)
    x = xp.asarray(a)
    want_c = "complex64" if f == xp.float32 else "complex128"
    for fn in (xp.fft.fft, xp.fft.ifft, xp.fft.rfft, xp.fft.ihfft, xp.fft.fftn, xp.fft.rfftn):
        got = fn(x)
        assert got.dtype.name == want_c, (fn.__name__, got.dtype)
        check(got, getattr(np.fft, fn.__name__)(a.astype(np.float64)), want_c, 36, fn.__name__)


def test_fused_producers_views_and_strides():
    c = COMPLEX[0]
    a = rand_complex((6, 16), c)
    x = xp.asarray(a)
    ref = a.astype(np.complex128)
    check(xp.fft.fft(x * 2 + 1), np.fft.fft(ref * 2 + 1), c.name, 16, "fused producer")
    check(xp.fft.fft(x.T, axis=0), np.fft.fft(ref.T, axis=0), c.name, 16, "transposed")
    check(xp.fft.fft(x[1::2, ::3]), np.fft.fft(ref[1::2, ::3]), c.name, 6, "strided slice")
    check(xp.fft.fft(xp.fft.fft(x), axis=0), np.fft.fft(np.fft.fft(ref), axis=0), c.name, 96, "chained")
    f = real_dtype(c)
    r = rand_real((5, 9), f)
    check(xp.fft.rfft(xp.asarray(r) - 0.5), np.fft.rfft(r.astype(np.float64) - 0.5), c.name, 9, "fused real")


@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_empty_batches_and_zero_length_axis_padded(c):
    x = xp.asarray(np.zeros((0, 8), npdt(c)))
    for fn in (xp.fft.fft, xp.fft.ifft, xp.fft.fftn):
        got = fn(x) if fn is not xp.fft.fftn else fn(x, axes=(1,))
        assert got.shape == (0, 8) and got.dtype == c
    assert xp.fft.rfft(xp.asarray(np.zeros((2, 0, 6), REAL_OF[c.name]))).shape == (2, 0, 4)
    assert xp.fft.irfft(x).shape == (0, 14)
    got = xp.fft.fft(xp.asarray(np.zeros((4, 0), npdt(c))), n=4)
    assert_exact(got, np.zeros((4, 4), npdt(c)))


def test_large_lengths_power_of_two_and_bluestein():
    c = COMPLEX[0]
    for n in (1 << 14, 3 * 5 * 7 * 64, 4099):
        a = rand_complex((n,), c, seed=n)
        check(xp.fft.fft(xp.asarray(a)), np.fft.fft(a.astype(np.complex128)), c.name, n, f"n={n}")
        check(xp.fft.ifft(xp.asarray(a)), np.fft.ifft(a.astype(np.complex128)), c.name, n, f"ifft n={n}")


@pytest.mark.skipif(not HAS_F64, reason="needs shader-f64")
def test_complex128_accuracy_large_bluestein():
    n = 10007
    a = rand_complex((n,), xp.complex128, seed=3)
    check(xp.fft.fft(xp.asarray(a)), np.fft.fft(a), "complex128", n)


# ------------------------------------------------------------------ errors

def test_errors_are_raised_at_the_call():
    c = COMPLEX[0]
    x = xp.asarray(rand_complex((3, 4), c))
    r = xp.asarray(rand_real((3, 4), real_dtype(c)))
    with pytest.raises(ValueError, match="fft: expected norm"):
        xp.fft.fft(x, norm="bogus")
    with pytest.raises(ValueError, match="n >= 1"):
        xp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="out of bounds"):
        xp.fft.fft(x, axis=2)
    with pytest.raises(TypeError, match="rfft: expected x to have a real floating-point dtype"):
        xp.fft.rfft(x)
    with pytest.raises(TypeError, match="ihfft"):
        xp.fft.ihfft(x)
    with pytest.raises(TypeError, match="floating-point"):
        xp.fft.fft(xp.asarray(np.arange(4, dtype=np.int32)))
    with pytest.raises(ValueError, match="at least 1 dimension"):
        xp.fft.fft(xp.asarray(np.complex64(1)))
    with pytest.raises(ValueError, match="output length 0"):
        xp.fft.irfft(x[:, :1])
    with pytest.raises(ValueError, match="same length"):
        xp.fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="distinct"):
        xp.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match="length 0"):
        xp.fft.fft(xp.asarray(np.zeros((2, 0), npdt(c))))
    with pytest.raises(TypeError, match="rfftfreq: expected a real floating-point dtype"):
        xp.fft.rfftfreq(4, dtype=xp.complex64)
    with pytest.raises(ValueError, match="fftfreq"):
        xp.fft.fftfreq(0)
    del r


# ------------------------------------------------------------------ frequencies and shifts

@pytest.mark.parametrize("f", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_fftfreq_rfftfreq(f):
    for n in (1, 2, 5, 8, 17, 100):
        for d in (1.0, 0.1, 3):
            got = xp.fft.fftfreq(n, d=d, dtype=f)
            want = np.fft.fftfreq(n, d=d)
            h = to_np(got)
            assert h.dtype == npdt(f)
            np.testing.assert_allclose(h, want, rtol=2e-7 if f == xp.float32 else 1e-15, atol=0)
            h = to_np(xp.fft.rfftfreq(n, d=d, dtype=f))
            np.testing.assert_allclose(h, np.fft.rfftfreq(n, d=d), rtol=2e-7 if f == xp.float32 else 1e-15, atol=0)


def test_fftfreq_default_dtype_and_device():
    dev = xp.__array_namespace_info__().default_device()
    got = xp.fft.fftfreq(6, device=dev)
    assert got.dtype == xp.__array_namespace_info__().default_dtypes()["real floating"]
    assert got.device == dev
    assert xp.fft.rfftfreq(6).dtype == got.dtype


SHIFT_AXES = [None, 0, -1, (0, 2), (2, 1, 0), (1,)]


@pytest.mark.parametrize("axes", SHIFT_AXES, ids=str)
def test_fftshift_ifftshift_match_numpy(axes):
    for shape in ((5, 4, 7), (2, 1, 6)):
        for dname in ("float32", "complex64", "int8", "int64", "bool") + (("float64", "complex128") if HAS_F64 else ()):
            a = (np.arange(np.prod(shape)).reshape(shape) % 11).astype(dname)
            x = xp.asarray(a)
            assert_exact(xp.fft.fftshift(x, axes=axes), np.fft.fftshift(a, axes=axes), msg=f"fftshift {dname}")
            assert_exact(xp.fft.ifftshift(x, axes=axes), np.fft.ifftshift(a, axes=axes), msg=f"ifftshift {dname}")


def test_shift_inverts_and_handles_empty_and_1d():
    a = np.arange(9.0, dtype=np.float32)
    x = xp.asarray(a)
    assert_exact(xp.fft.ifftshift(xp.fft.fftshift(x)), a)
    assert_exact(xp.fft.fftshift(xp.fft.fftfreq(9, dtype=xp.float32)), np.fft.fftshift(np.fft.fftfreq(9)).astype(np.float32))
    e = xp.asarray(np.zeros((0, 3), np.float32))
    assert xp.fft.fftshift(e).shape == (0, 3)


def test_namespace_lists_all_fourteen_functions():
    names = {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
             "fftfreq", "rfftfreq", "fftshift", "ifftshift"}
    assert set(xp.fft.__all__) == names
    assert all(callable(getattr(xp.fft, n)) for n in names)
