"""The planned fft tiles (``_wgsl/fft._planned_pass``) against numpy.fft: every radix
(16, 8, 4, 2, 3, 5, 7) as a first pass that reads the source, a middle pass through
workgroup memory and a last pass that writes the destination; the pass-ordered twiddle
table; the four-step twiddle stepped along a butterfly's outputs; lanes past the batch;
every load and store hook. Errors are relative to the largest magnitude of the
reference, as in test_fft.py; the rms error of a planned tile is checked against the
generic kernel's (today's passes of 8 and 4, read from the table by j k ts).
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

import wgarray as xp
from conftest import COMPLEX, HAS_F64, ids, npdt
from test_fft import REAL_OF, check, rand_complex, rand_real
from wgarray._array import Array
from wgarray._graph import node as g
from wgarray._kernels import fft as kfft
from wgarray._wgsl import fft as wf

C64 = COMPLEX[0]


def ref_c(a):
    return a.astype(np.complex128)


# ------------------------------------------------------------------ plans and rendering (no device work)

@pytest.mark.parametrize("n,cap,want", [
    (16, 4096, [16]), (32, 4096, [8, 4]), (128, 4096, [16, 8]), (512, 4096, [8, 8, 8]),
    (2048, 4096, [16, 16, 8]), (4096, 4096, [16, 16, 16]), (3072, 4096, [16, 8, 8, 3]),
    (1000, 4096, [8, 5, 5, 5]), (2187, 4096, [3] * 7), (2048, 2048, [8, 8, 8, 4]), (16, 2048, [4, 4]),
    (4099, 4096, None),
], ids=str)
def test_tile_radices_take_passes_of_16_where_a_thread_holds_one_butterfly(n, cap, want):
    assert kfft._tile_radices(n, cap) == want


def test_planned_tile_loads_and_stores_in_its_first_and_last_pass():
    # 4096 = 16^3: the first pass reads the source, the last writes the destination, two
    # exchanges through workgroup memory (three barriers) in between
    text = wf.render_tile(wf.TileSpec("complex64", 4096, radices=(16, 16, 16)), lambda code: "")
    main = text[text.index("fn main("):]
    assert main.count("workgroupBarrier()") == 3
    assert main.count("fft_load(") == 16 and main.count("fft_put(") == 16
    assert main.count("fft_sput(") == 32 and main.count("fft_sget(") == 32
    assert "TW[256u + k]" in main and "TW[3840u + k]" in main  # the pass table at j p + k
    # the r2c split needs the whole tile: the last pass writes workgroup memory too
    r2c = wf.render_tile(wf.TileSpec("complex64", 4096, store="r2c", radices=(16, 16, 16)), lambda code: "")
    main = r2c[r2c.index("fn main("):]
    assert main.count("workgroupBarrier()") == 5 and main.count("fft_sput(") == 48


# ------------------------------------------------------------------ the pass table

@pytest.mark.parametrize("radices", [(16, 16, 16), (8, 4), (16, 8, 8, 3), (5, 5, 7), (2,)], ids=str)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_pass_twiddle_table_holds_each_pass_twiddles_at_j_p_plus_k(c, radices):
    device = xp.__array_namespace_info__().default_device()
    L = int(np.prod(radices))
    buf = kfft._pass_twiddles(device, tuple(radices), c.name)
    got = np.asarray(Array._new(g.Data(buf, (L,), c, device)))
    table = np.asarray(Array._new(g.Data(kfft._twiddles(device, L, c.name), (L,), c, device)))
    want = np.ones(L, np.complex128)
    same = np.ones(L, table.dtype)  # the generic kernel's entries for the same twiddles
    p = 1
    for R in radices:
        for j in range(1, R):
            k = np.arange(p)
            want[j * p + k] = np.exp(-2j * np.pi * j * k / (p * R))
            same[j * p + k] = table[j * k * (L // (p * R))]
        p *= R
    eps = 2e-7 if c == C64 else 4e-15
    assert np.abs(got - want).max() <= eps
    assert np.array_equal(got, same)  # the same exact-angle values as today's table


# ------------------------------------------------------------------ every radix, every place

# lengths that put each radix first, between and last (planned passes in the comment)
TILE_LENGTHS = [
    2, 3, 4, 5, 7, 8,
    16,          # 16 alone: load, butterfly, store, no workgroup memory
    32,          # 8 4
    128,         # 16 8
    256,         # 16 16
    1024,        # 16 8 8
    2048,        # 16 16 8
    4096,        # 16 16 16
    3072,        # 16 8 8 3
    2 * 3 * 5 * 7,
    49 * 8,      # 8 7 7
    3 ** 7,      # 3 x 7
    625 * 4,     # 4 5 5 5 5
]


@pytest.mark.parametrize("n", TILE_LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_planned_tiles_every_radix_forward_and_inverse(c, n):
    a = rand_complex((3, n), c, seed=n)
    x = xp.asarray(a)
    check(xp.fft.fft(x), np.fft.fft(ref_c(a)), c.name, n, "fft")
    check(xp.fft.ifft(x, norm="ortho"), np.fft.ifft(ref_c(a), norm="ortho"), c.name, n, "ifft")


@pytest.mark.parametrize("n", [16, 128, 1024, 2048, 4096, 3072])
def test_planned_tiles_rms_error_at_most_the_generic_kernels(n):
    """Passes of 16 keep today's accuracy: the rms error against a float64 reference is
    within 2% of the generic kernel's (passes of 8 and 4; measured on lavapipe: 0.95-1.0
    of it)."""
    a = rand_complex((64, n), C64, seed=n + 1)
    want = np.fft.fft(ref_c(a))

    def rms():
        d = np.asarray(xp.fft.fft(xp.asarray(a))).astype(np.complex128) - want
        return np.sqrt(np.mean(np.abs(d) ** 2) / np.mean(np.abs(want) ** 2))

    planned = rms()
    with mock.patch.object(kfft, "PLANNED", False):
        generic = rms()
    assert planned <= 1.02 * generic, f"n={n}: rms error {planned:.3g}, generic kernel {generic:.3g}"


# ------------------------------------------------------------------ lanes, strides and the four-step twiddle

LANE_CASES = [
    ((5, 16), -1, "16 alone, 5 of 256 lanes used"),
    ((3, 40, 7), 1, "7 of 8 inner lanes"),
    ((1000, 8), 1, "256 short rows a tile"),
    ((257, 3), 1, "a partial last tile of rows of 3"),
    ((4096, 5), 0, "four-step with 5 neighbours, radix 16 tiles"),
    ((3 * 4096, 4), 0, "four-step with a radix-3 level, strided"),
    ((2, 5 * 4096, 3), 1, "four-step with a radix-5 level, inner 3"),
    ((2, 3 ** 5 * 4096), -1, "three kernels, odd inner levels (243 = 81 x 3)"),
]


@pytest.mark.parametrize("shape,axis,what", LANE_CASES, ids=[w for _, _, w in LANE_CASES])
def test_planned_tiles_along_any_axis_and_past_the_batch(shape, axis, what):
    a = rand_complex(shape, C64, seed=len(shape) + shape[0])
    x = xp.asarray(a)
    n = shape[axis]
    check(xp.fft.fft(x, axis=axis), np.fft.fft(ref_c(a), axis=axis), "complex64", n, f"fft {what}")
    check(xp.fft.ifft(x, axis=axis, n=n - 1), np.fft.ifft(ref_c(a), axis=axis, n=n - 1), "complex64", n - 1,
          f"ifft cropped {what}")


def test_four_step_twiddle_stepped_and_per_output_both_match_numpy():
    """The four-step twiddle of a planned last pass steps 4 t = q N + r by additions;
    the same transform with planning off computes it per output (fft_store): both
    against NumPy, on a plan whose twiddle levels have non-power-of-two N1."""
    n = 7 * 5 * 4096
    a = rand_complex((1, n), C64, seed=3)
    want = np.fft.fft(ref_c(a))
    got = xp.fft.fft(xp.asarray(a))
    check(got, want, "complex64", n, "planned")
    with mock.patch.object(kfft, "PLANNED", False):
        check(xp.fft.fft(xp.asarray(a)), want, "complex64", n, "generic")


@pytest.mark.skipif(not HAS_F64, reason="needs shader-f64")
@pytest.mark.parametrize("shape,axis", [((2, 2048), -1), ((2048, 3), 0), ((2, 3 * 2048), -1), ((40, 16, 5), 1)],
                         ids=str)
def test_planned_tiles_complex128(shape, axis):
    a = rand_complex(shape, xp.complex128, seed=5)
    n = shape[axis]
    check(xp.fft.fft(xp.asarray(a), axis=axis), np.fft.fft(a, axis=axis), "complex128", n, "fft")
    check(xp.fft.ifft(xp.asarray(a), axis=axis), np.fft.ifft(a, axis=axis), "complex128", n, "ifft")


# ------------------------------------------------------------------ the load and store hooks

# even lengths whose half is a radix-16 tile (the r2c split in it), odd lengths at full
# length (the Hermitian load, the real store), half lengths past the tile, Bluestein
HOOK_LENGTHS = [32, 256, 8192, 33, 4095, 2 * 3072, 2 * 4097, 1031]


@pytest.mark.parametrize("n", HOOK_LENGTHS)
@pytest.mark.parametrize("c", COMPLEX, ids=ids(COMPLEX))
def test_real_transforms_through_planned_tiles(c, n):
    f = REAL_OF[c.name]
    r = rand_real((2, n), xp.float32 if c == C64 else xp.float64, seed=n)
    h = rand_complex((2, n // 2 + 1), c, seed=n + 1)
    check(xp.fft.rfft(xp.asarray(r)), np.fft.rfft(r.astype(np.float64)), c.name, n, "rfft")
    check(xp.fft.ihfft(xp.asarray(r), norm="ortho"), np.fft.ihfft(r.astype(np.float64), norm="ortho"), c.name, n,
          "ihfft")
    check(xp.fft.irfft(xp.asarray(h), n=n), np.fft.irfft(ref_c(h), n=n), f, n, "irfft")
    check(xp.fft.hfft(xp.asarray(h), n=n, norm="forward"), np.fft.hfft(ref_c(h), n=n, norm="forward"), f, n, "hfft")


def test_fused_input_and_padding_through_the_first_pass():
    # the first pass reads the input's elementwise producer, zero past the input's end
    a = rand_complex((4, 3000), C64, seed=9)
    x = xp.asarray(a)
    check(xp.fft.fft(x * 2 - 1j, n=4096), np.fft.fft(ref_c(a) * 2 - 1j, n=4096), "complex64", 4096, "padded")
    r = rand_real((4, 5000), xp.float32, seed=10)
    y = xp.asarray(r)
    check(xp.fft.rfft(xp.exp(y * 0.1), n=8192), np.fft.rfft(np.exp(r.astype(np.float64) * 0.1), n=8192),
          "complex64", 8192, "rfft of a fused producer, padded")
    check(xp.fft.fft(x[:, ::2]), np.fft.fft(ref_c(a)[:, ::2]), "complex64", 1500, "strided view")
