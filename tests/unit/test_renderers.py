"""The WGSL renderers of every kernel family, without a device: each kernel's text is
the same every time and in every process, holds no size, offset or scalar value of the
arrays it was planned for, and is structurally sound (tests/unit/wgsl_check.py)."""
from __future__ import annotations

import json
import os
import pathlib
import re
import struct
import subprocess
import sys

import pytest

from wgarray._wgsl import fft as wf

from . import catalogue
from .wgsl_check import assert_wgsl, called_functions, defined_functions, problems

KERNELS = catalogue.kernels(0)
OTHER_SIZES = catalogue.kernels(1)
NAMES = sorted(KERNELS)
TESTS_DIR = pathlib.Path(__file__).resolve().parent.parent


def test_catalogue_covers_every_family():
    families = {name.split("/")[0] for name in NAMES}
    assert families == {"elementwise", "reduce", "scan", "sort", "gather", "write", "matmul", "linalg",
                        "linalg_blocked", "linalg_eigen", "linalg_trd", "linalg_tsqr", "fft"}
    assert sorted(OTHER_SIZES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_rendering_twice_gives_the_same_text(name):
    first = KERNELS[name]()
    assert isinstance(first, str) and first
    assert KERNELS[name]() == first
    assert catalogue.kernels(0)[name]() == first  # and from specs built anew


def _literals(value) -> list[str]:
    """Ways a number could appear in WGSL text: decimal, and for floats the hex words
    of its float32 and float64 bits."""
    if isinstance(value, int):
        return [str(value), hex(value)]
    f32 = struct.unpack("<I", struct.pack("<f", value))[0]
    lo, hi = struct.unpack("<II", struct.pack("<d", value))
    return [repr(value), f"{value:.6g}", hex(f32), hex(lo), hex(hi)]


VALUES = [v for pair in (catalogue.OFFSETS, catalogue.SCALARS, catalogue.INT_SCALARS) for v in pair]
VALUES += [n for shape in catalogue.SIZES for n in shape if n > 1000]
VALUES += [catalogue.SIZES[0][0] * catalogue.SIZES[0][1], catalogue.SIZES[1][0] * catalogue.SIZES[1][1]]
# A literal with WGSL's suffixes (7919u, 1237i, 2.718281f) counts too.
FORBIDDEN = re.compile(r"(?<![\w.])(" + "|".join(re.escape(s) for v in VALUES for s in _literals(v))
                       + r")(?:u|i|f|h|li|lu)?(?![\w.])", re.I)


def test_forbidden_values_are_found():
    size, scalar = catalogue.SIZES[0][1], catalogue.SCALARS[0]
    text = f"let n = {size}u; let c = {scalar}f; let b = bitcast<f32>({_literals(scalar)[2]}u);"
    assert len(FORBIDDEN.findall(text)) == 3
    assert not FORBIDDEN.findall(f"let n = {size}7u; let c = 0.{size};")


@pytest.mark.parametrize("name", NAMES)
def test_text_holds_no_size_or_scalar(name):
    text = KERNELS[name]()
    found = FORBIDDEN.findall(text)
    assert not found, f"{name}: the text holds {found}"
    assert OTHER_SIZES[name]() == text, f"{name}: other sizes and scalars change the text"


@pytest.mark.parametrize("name", NAMES)
def test_text_is_well_formed(name):
    assert_wgsl(KERNELS[name](), what=name)


def test_elementwise_text_calls_its_library():
    """The check sees the library calls (it is not vacuous): exp's helper is called and
    defined once."""
    text = KERNELS["elementwise/float_chain/native"]()
    calls = called_functions(text)
    assert any(c.startswith("f32_") for c in calls), calls
    assert calls <= set(defined_functions(text))


def test_heavy_kernels_call_compute_once_in_a_loop():
    """A kernel with loops in its ops (betainc) calls ``compute`` once, in a loop over
    the invocation's 4 elements (Mesa inlines every call: 4 copies took lavapipe's LLVM
    minutes), and keeps the strided leaf's carry step; a cheap chain stays unrolled."""
    heavy = KERNELS["elementwise/heavy_strided/native"]()
    main = heavy[heavy.index("fn main("):]
    assert main.count("compute(") == 1 and "for (var j = 0u; j < 4u;" in main
    assert "if (j > 0u) {" in main and "ys[j] = compute(" in main
    assert "ys[3].o1" in main  # the second output is stored from the loop's results
    cheap = KERNELS["elementwise/float_chain/native"]()
    assert cheap[cheap.index("fn main("):].count("compute(") == 4


def test_digests_agree_across_processes():
    """Two interpreters with different hash seeds (set and dict orders of strings
    differ) render every kernel, and the helper libraries, to the same bytes as this
    process does."""
    here = catalogue.digests(0)
    root = TESTS_DIR.parent
    runs = []
    for seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed,
                   PYTHONPATH=os.pathsep.join([str(root), str(TESTS_DIR)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        runs.append(subprocess.Popen([sys.executable, "-m", "unit.catalogue", "0"], cwd=TESTS_DIR, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-2000:]
        other = json.loads(out)
        assert sorted(other) == sorted(here)
        differ = sorted(k for k in here if other[k] != here[k])
        assert not differ, differ


# ------------------------------------------------------------------ the check itself

GOOD = """
@group(0) @binding(0) var<storage, read_write> O: array<u32>;
struct Pair { a: u32, b: u32 }
fn helper(x: u32) -> u32 { return max(x, 1u) + bitcast<u32>(f32(x)); }
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let p = Pair(1u, 2u);
    let v = array<vec2<u32>, 2>(vec2<u32>(0u), vec2<u32>(1u));
    if (g.x < 4u) { O[g.x] = helper(p.a) + v[0].x; }  // other(1) in a comment
}
"""


def test_check_passes_a_sound_kernel():
    assert problems(GOOD) == []


@pytest.mark.parametrize("broken, says", [
    (GOOD.replace("return max(x, 1u)", "return other(x)"), "called but not defined: other"),
    (GOOD + "fn helper(y: u32) -> u32 { return y; }\n", "defined more than once: helper"),
    (GOOD.replace("{ O[g.x]", "O[g.x]"), "unbalanced"),
    (GOOD.replace("@binding(0) var<storage, read_write> O",
                  "@binding(0) var<storage, read> I: array<u32>;\n@group(0) @binding(0) var<storage, read_write> O"),
     "a binding declared twice"),
    (GOOD.replace("@compute", ""), "no @compute entry point"),
])
def test_check_finds_what_is_wrong(broken, says):
    assert any(says in p for p in problems(broken)), problems(broken)


def test_fft_tile_spec_refuses_unknown_load_and_store():
    with pytest.raises(ValueError, match="TileSpec: expected load"):
        wf.TileSpec("complex64", 512, load="hermitian")
    with pytest.raises(ValueError, match="TileSpec: expected load"):
        wf.TileSpec("complex64", 512, store="imag")


def test_fft_planned_tiles_run_their_passes_as_constants():
    # a planned tile: one block per pass, its sizes literal, no per-pass switch over
    # parameter radices (whose largest case's registers the generic kernel holds)
    planned = wf.render_tile(wf.TileSpec("complex64", 4096, radices=(8, 8, 8, 8)), lambda code: "")
    generic = wf.render_tile(wf.TileSpec("complex64", 4096), lambda code: "")
    assert "switch" not in planned and "switch" in generic
    assert planned.count("// radix 8, after passes of") == 4
    for p, ts in ((1, 512), (8, 64), (64, 8), (512, 1)):
        assert f"let p = {p}u;" in planned and f"let ts = {ts}u;" in planned
    assert "let L = 4096u;" in planned and "let L = P[1];" in generic
    assert wf.TileSpec("complex64", 4096, radices=(8, 8, 8, 8)).name.endswith("_r8888_complex")
