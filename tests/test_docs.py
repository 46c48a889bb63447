"""The README's and the user guide's examples run as written, and the commands they name
behave as they say.

Every ```python block of README.md and docs/guide.md runs in a fresh interpreter (some
set SCIPY_ARRAY_API before importing SciPy, which only works in a new process) from
the project root. A block that needs a GPU or takes long is marked in the Markdown, on
the line before its fence, with ``<!-- docs-test: skip (the reason) -->``; those are
the only ones skipped.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/guide.md")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")


def python_blocks(path: pathlib.Path):
    """(first line number, code, skip reason or None) of each ```python block."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group("lang"):
            i += 1
            continue
        start, lang = i, m.group("lang")
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if lang == "python":
            prev = lines[start - 1] if start else ""
            skip = SKIP.match(prev.strip())
            blocks.append((start + 1, "\n".join(body) + "\n", skip.group("reason") if skip else None))
    return blocks


CASES = [pytest.param(code, reason, id=f"{doc}:{line}")
         for doc in DOCS for line, code, reason in python_blocks(ROOT / doc)]


def _python(args, env=None, timeout=300):
    full_env = dict(os.environ, XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"), **(env or {}))
    # the project root first on sys.path, as for a user who runs from a checkout
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def test_the_docs_have_python_examples():
    # the parser finds the blocks: a change of fence style must not turn this test into nothing
    assert len([c for c in CASES if c.values[1] is None]) >= 4


@pytest.mark.parametrize("code, skip_reason", CASES)
def test_doc_python_block_runs_as_written(code, skip_reason):
    if skip_reason:
        pytest.skip(skip_reason)
    out = _python(["-c", code])
    assert out.returncode == 0, f"stdout:\n{out.stdout[-2000:]}\nstderr:\n{out.stderr[-3000:]}"


def test_readme_fused_example_prints_the_numpy_value():
    import numpy as np

    out = _python(["-c", python_blocks(ROOT / "README.md")[0][1]])
    x = np.linspace(0, 1, 1_000_000, dtype=np.float32)
    want = float(np.sum(np.exp(-(x - 0.5) ** 2 / 2) * 3 + x, dtype=np.float64))
    assert out.returncode == 0, out.stderr[-3000:]
    assert float(out.stdout.split()[-1]) == pytest.approx(want, rel=1e-5)


def test_explain_prints_the_fused_kernel_and_returns_nothing(capsys):
    import io

    import wgarray as xp

    y = xp.sqrt(xp.arange(8, dtype=xp.float32)) * 2 + 1
    assert xp.debug.explain(y) is None
    printed = capsys.readouterr().out
    assert printed.startswith("1 kernel:") and "@compute" in printed
    buf = io.StringIO()
    xp.debug.explain(y, file=buf)
    assert buf.getvalue() == printed
    assert capsys.readouterr().out == ""


def test_help_is_plain_text():
    out = _python(["-m", "wgarray", "--help"])
    assert out.returncode == 0, out.stderr
    assert "kmeans" in out.stdout and "WGARRAY_DEVICE" in out.stdout
    assert "``" not in out.stdout


def test_a_bad_device_name_is_one_line_naming_the_devices():
    out = _python(["-m", "wgarray", "info"], env={"WGARRAY_DEVICE": "no-such-gpu"})
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "WGARRAY_DEVICE: no device matches 'no-such-gpu'; devices are: 0: " in lines[0]
    assert "Traceback" not in out.stderr


def test_a_misspelled_feature_name_is_an_error_naming_the_valid_ones():
    out = _python(["-m", "wgarray", "info"], env={"WGARRAY_DISABLE_FEATURES": "shader-f64,shader-in64"})
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "python -m wgarray: WGARRAY_DISABLE_FEATURES: expected comma-separated names from "
        "shader-f16, shader-f64, shader-int64, subgroup, timestamp-query, got 'shader-in64'")
    api = _python(["-c", "import wgarray as xp; xp.ones(3)"], env={"WGARRAY_DISABLE_FEATURES": "subgroups"})
    assert api.returncode == 1
    assert "ValueError: WGARRAY_DISABLE_FEATURES: expected comma-separated names from" in api.stderr
    assert "got 'subgroups'" in api.stderr


def test_main_job_names_the_device_reports_medians_and_agrees():
    import wgarray as xp

    dev = xp.__array_namespace_info__().default_device()
    out = _python(["-m", "wgarray", "kmeans", "--n", "3000", "--k", "4", "--iters", "3", "--repeat", "3"])
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "median of 3 timed runs per side, each after one untimed warm-up run" in text
    assert f"device: {dev.name} ({dev.backend}, {dev.adapter_type})" in text
    assert re.search(r"numpy +\d+\.\d{3} s \(min \d+\.\d{3}, max \d+\.\d{3}\)", text)
    assert re.search(r"wgarray is \d+\.\d\dx (faster|slower) than NumPy here", text)
    assert "agreement: OK" in text
    assert ("CPU software driver" in text) == (dev.adapter_type == "CPU")
