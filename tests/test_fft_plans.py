"""The fft's tile plans against numpy.fft (pocketfft) past every threshold of the planner:
one tile (lengths up to 4096 complex64 / 2048 complex128 elements of workgroup memory),
several short rows per tile, strided axes with few or many neighbouring sequences, the
four-step plans of two and three kernels, the half-length real transforms (split in the
tile or in a pass of its own) and Bluestein around all of them. Errors are relative to
the largest magnitude of the reference, as in test_fft.py; dispatch and pipeline counts
check that the plans are the ones intended.
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

import wgarray as xp
from conftest import COMPLEX, HAS_F64, ids, npdt
from test_fft import NORMS, REAL_OF, check, rand_complex, rand_real
from wgarray import debug
from wgarray._kernels import fft as kfft

C64 = COMPLEX[0]
# (length, what the planner does with it for complex64 rows)
C64_LENGTHS = [
    (4096, "the longest single tile"),
    (8192, "four-step 4096 x 2"),
    (3 * 4096, "four-step with a radix-3 level"),
    (5 ** 6, "four-step of odd radices"),
    (7 ** 5, "four-step of radix 7"),
    (1 << 20, "three kernels: 128 x 2 inside x 4096"),
    (4099, "Bluestein past one tile (M = 16384)"),
]


def ref_c(a):
    return a.astype(np.complex128)


@pytest.mark.parametrize("n,what", C64_LENGTHS, ids=[str(n) for n, _ in C64_LENGTHS])
def test_complex64_lengths_past_the_tile(n, what):
    rows = 2 if n <= 1 << 14 else 1
    a = rand_complex((rows, n), C64, seed=n)
    x = xp.asarray(a)
    check(xp.fft.fft(x), np.fft.fft(ref_c(a)), "complex64", n, f"fft {what}")
    check(xp.fft.ifft(x, norm="ortho"), np.fft.ifft(ref_c(a), norm="ortho"), "complex64", n, f"ifft {what}")


@pytest.mark.skipif(not HAS_F64, reason="needs shader-f64")
@pytest.mark.parametrize("n", [2048, 4096, 3 * 2048, 1 << 16, 2053])
def test_complex128_lengths_past_the_tile(n):
    a = rand_complex((2, n), xp.complex128, seed=n)
    check(xp.fft.fft(xp.asarray(a)), np.fft.fft(a), "complex128", n, "fft")
    check(xp.fft.ifft(xp.asarray(a), norm="forward"), np.fft.ifft(a, norm="forward"), "complex128", n, "ifft")


# even lengths whose half is one tile (split in the tile), past it (split pass), or not
# smooth (Bluestein at half length); odd lengths run at full length
REAL_LENGTHS = [2, 4, 6, 8190, 8192, 16384, 2 * 4099, 4097, pytest.param(1 << 20, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n", REAL_LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_real_transforms_half_length_every_path(c, n):
    f = REAL_OF[c.name]
    rows = 1 if n >= 1 << 16 else 2
    a = rand_real((rows, n), xp.float32 if c == C64 else xp.float64, seed=n)
    h = rand_complex((rows, n // 2 + 1), c, seed=n + 1)
    norms = NORMS if n < 1 << 16 else ["backward"]
    for norm in norms:
        check(xp.fft.rfft(xp.asarray(a), norm=norm), np.fft.rfft(a.astype(np.float64), norm=norm), c.name, n,
              f"rfft {norm}")
        check(xp.fft.ihfft(xp.asarray(a), norm=norm), np.fft.ihfft(a.astype(np.float64), norm=norm), c.name, n,
              f"ihfft {norm}")
        check(xp.fft.irfft(xp.asarray(h), n=n, norm=norm), np.fft.irfft(ref_c(h), n=n, norm=norm), f, n,
              f"irfft {norm}")
        check(xp.fft.hfft(xp.asarray(h), n=n, norm=norm), np.fft.hfft(ref_c(h), n=n, norm=norm), f, n,
              f"hfft {norm}")


def test_real_transforms_pad_and_crop_at_half_length():
    a = rand_real((3, 50), xp.float32)
    h = rand_complex((3, 30), C64)
    for n in (40, 64, 100, 58):  # crop, pad, pad past the input, crop the half spectrum
        check(xp.fft.rfft(xp.asarray(a), n=n), np.fft.rfft(a.astype(np.float64), n=n), "complex64", n, f"rfft {n}")
        check(xp.fft.irfft(xp.asarray(h), n=n), np.fft.irfft(ref_c(h), n=n), "float32", n, f"irfft {n}")


def test_irfft_ignores_imaginary_dc_and_nyquist_like_numpy():
    h = np.zeros((1, 5), np.complex64)
    h[0, 0] = 1 + 7j
    h[0, 4] = 2 - 3j
    h[0, 2] = 0.5 + 0.25j
    check(xp.fft.irfft(xp.asarray(h)), np.fft.irfft(ref_c(h)), "float32", 8, "irfft")
    check(xp.fft.hfft(xp.asarray(h)), np.fft.hfft(ref_c(h)), "float32", 8, "hfft")


# ------------------------------------------------------------------ strided axes, short rows

STRIDED = [
    ((512, 40), 0, "four-step along a strided axis, 40 of 64 lanes used"),
    ((3, 300, 7), 1, "one tile, 7 of 8 lanes"),
    ((2, 4096, 3), 1, "four-step with 3 neighbours"),
    ((8192, 2), 0, "four-step, 2 neighbours"),
    ((1000, 8), 1, "256 short rows per tile"),
    ((777, 3), 1, "rows of 3, a partial last tile"),
    ((5, 1, 33), 1, "length 1"),
]


@pytest.mark.parametrize("shape,axis,what", STRIDED, ids=[w for _, _, w in STRIDED])
def test_complex_transforms_along_any_axis(shape, axis, what):
    a = rand_complex(shape, C64, seed=len(shape))
    x = xp.asarray(a)
    n = shape[axis]
    check(xp.fft.fft(x, axis=axis), np.fft.fft(ref_c(a), axis=axis), "complex64", n, f"fft {what}")
    check(xp.fft.ifft(x, axis=axis, n=n + 3), np.fft.ifft(ref_c(a), axis=axis, n=n + 3), "complex64", n + 3,
          f"ifft padded {what}")


@pytest.mark.parametrize("shape,axis", [((8192, 3), 0), ((16, 40, 6), 1), ((300, 10), 0), ((2, 9, 3), 1)],
                         ids=str)
def test_real_transforms_along_any_axis(shape, axis):
    a = rand_real(shape, xp.float32, seed=3)
    n = shape[axis]
    h = rand_complex(shape[:axis] + (n // 2 + 1,) + shape[axis + 1:], C64, seed=4)
    check(xp.fft.rfft(xp.asarray(a), axis=axis), np.fft.rfft(a.astype(np.float64), axis=axis), "complex64", n,
          "rfft")
    check(xp.fft.irfft(xp.asarray(h), n=n, axis=axis), np.fft.irfft(ref_c(h), n=n, axis=axis), "float32", n,
          "irfft")


@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_fftn_2d_3d_past_the_tile(c):
    a = rand_complex((256, 256), c, seed=1)
    check(xp.fft.fftn(xp.asarray(a)), np.fft.fftn(ref_c(a)), c.name, 256 * 256, "fftn 256^2")
    check(xp.fft.ifftn(xp.asarray(a), norm="ortho"), np.fft.ifftn(ref_c(a), norm="ortho"), c.name, 256 * 256,
          "ifftn 256^2")
    b = rand_complex((6, 40, 130), c, seed=2)
    check(xp.fft.fftn(xp.asarray(b), axes=(0, 2)), np.fft.fftn(ref_c(b), axes=(0, 2)), c.name, 780, "fftn 3-d")
    r = rand_real((12, 34, 20), xp.float32 if c == C64 else xp.float64, seed=3)
    check(xp.fft.rfftn(xp.asarray(r)), np.fft.rfftn(r.astype(np.float64)), c.name, 8160, "rfftn 3-d")
    s = np.fft.rfftn(r.astype(np.float64)).astype(npdt(c))
    want = np.fft.irfftn(ref_c(s), s=r.shape, axes=(0, 1, 2))
    check(xp.fft.irfftn(xp.asarray(s), s=r.shape), want, REAL_OF[c.name], 8160, "irfftn 3-d")


# ------------------------------------------------------------------ plans: dispatches and pipelines

def dispatches(fn) -> int:
    """Dispatches of ``fn()`` realized, after a first call filled the tables and pipelines."""
    xp.evaluate(fn())
    debug.reset_counters()
    xp.evaluate(fn())
    return debug.counters()["dispatches"]


def test_dispatch_counts_of_the_plans():
    rows = xp.asarray(rand_complex((4, 4096), C64))
    assert dispatches(lambda: xp.fft.fft(rows)) == 1
    real = xp.asarray(rand_real((8192,), xp.float32))
    assert dispatches(lambda: xp.fft.rfft(real)) == 1  # packed, one tile, split in it
    half = xp.asarray(rand_complex((4097,), C64))
    assert dispatches(lambda: xp.fft.irfft(half)) == 1
    square = xp.asarray(rand_complex((1024, 1024), C64))
    assert dispatches(lambda: xp.fft.fftn(square)) == 3  # rows: one tile; columns: four-step
    a = rand_real((1 << 20,), xp.float32)
    long_real = xp.asarray(a)
    assert dispatches(lambda: xp.fft.rfft(long_real)) == 3  # four-step at 2**19, then the split
    check(xp.fft.rfft(long_real), np.fft.rfft(a.astype(np.float64)), "complex64", 1 << 20, "rfft 2**20")


def test_pipelines_depend_on_structure_and_tile_length_only():
    """A tile kernel is compiled once per tile length (its passes planned): another
    batch, other data, the inverse transform and a longer transform whose pieces are
    tiles seen before compile nothing; with planning off every length shares one
    generic kernel."""
    def run(batch, n, seed=0, inverse=False):
        z = xp.asarray(rand_complex((batch, n), C64, seed=seed + n))
        xp.evaluate(xp.fft.ifft(z) if inverse else xp.fft.fft(z))

    for n in (96, 1000, 4096):
        run(2, n)
    debug.reset_counters()
    for batch in (1, 3, 7):
        for n in (96, 1000, 4096):
            run(batch, n, seed=batch, inverse=batch == 3)
    assert debug.counters()["pipelines_compiled"] == 0
    with mock.patch.object(kfft, "PLANNED", False):
        run(2, 100)
        debug.reset_counters()
        for n in (1000, 2187, 3 * 5 * 7 * 9, 4000):
            run(3, n)
        assert debug.counters()["pipelines_compiled"] == 0


@pytest.mark.parametrize("n", [64, 1000, 4096, 8192, 4099, 1 << 16])
def test_float32_error_within_a_few_times_pocketfft(n):
    """wgarray's complex64 error against a float64 reference stays within 8x of NumPy's
    own single-precision pocketfft on the same input (measured: 3-6x)."""
    a = rand_complex((n,), C64, seed=n + 7)
    if np.fft.fft(a[:2]).dtype != np.complex64:
        pytest.skip("this NumPy computes float32 transforms in float64")
    want = np.fft.fft(ref_c(a))
    scale = float(np.abs(want).max())
    ours = float(np.abs(np.asarray(xp.fft.fft(xp.asarray(a))).astype(np.complex128) - want).max()) / scale
    theirs = float(np.abs(np.fft.fft(a).astype(np.complex128) - want).max()) / scale
    assert ours <= 8 * theirs, f"n={n}: error {ours:.3g}, pocketfft float32 {theirs:.3g}"
    r = rand_real((n,), xp.float32, seed=n + 8)
    want = np.fft.rfft(r.astype(np.float64))
    scale = float(np.abs(want).max())
    ours = float(np.abs(np.asarray(xp.fft.rfft(xp.asarray(r))).astype(np.complex128) - want).max()) / scale
    theirs = float(np.abs(np.fft.rfft(r).astype(np.complex128) - want).max()) / scale
    assert ours <= 8 * theirs, f"rfft n={n}: error {ours:.3g}, pocketfft float32 {theirs:.3g}"
