"""The test suite's parts (tests/README.md): which marker each test file gets, that the
markers are registered, that the shared tests/conftest.py opens no device when it is
imported (its device names are found on first use), and that a device-free test cannot
reach a device."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

import conftest  # tests/conftest.py
import wgarray as xp

from .conftest import DeviceOpened

TESTS_DIR = pathlib.Path(__file__).resolve().parent.parent
ROOT = TESTS_DIR.parent


def test_every_kernel_test_file_exists():
    missing = sorted(name for name in conftest.KERNEL_TEST_FILES if not (TESTS_DIR / name).is_file())
    assert not missing, missing


def test_files_get_their_part():
    assert conftest.suite_part(TESTS_DIR / "unit" / "test_suite_parts.py") == "unit"
    assert conftest.suite_part(TESTS_DIR / "test_fusion.py") == "kernels"
    assert conftest.suite_part(TESTS_DIR / "test_creation.py") == "namespace"
    parts = {conftest.suite_part(p) for p in TESTS_DIR.glob("test_*.py")}
    assert parts == {"kernels", "namespace"}


def test_the_markers_are_registered():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    markers = {m.split(":")[0] for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"unit", "kernels", "namespace"} <= markers


def test_importing_the_shared_conftest_opens_no_device():
    """With every adapter request refused, tests/conftest.py imports and its plain
    helpers work; its first device name (HAS_F64) is what asks for the device."""
    script = "\n".join([
        "from unit.catalogue import refuse_adapters",
        "refuse_adapters()",
        "import numpy as np, conftest",
        "assert conftest.ALL_NAMES[0] == 'bool'",
        "assert conftest.same_values(np.array([np.nan, -0.0]), np.array([np.nan, -0.0])).all()",
        "try:",
        "    conftest.HAS_F64",
        "except RuntimeError as e:",
        "    print('asked:', e)",
        "else:",
        "    print('no device asked for')",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(TESTS_DIR)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    run = subprocess.run([sys.executable, "-c", script], cwd=TESTS_DIR, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "asked: catalogue: a device was asked for"


def test_a_device_free_test_cannot_reach_a_device():
    """The guard of tests/unit/conftest.py: computing anything raises, whether or not
    an earlier test of the process opened the device."""
    with pytest.raises(DeviceOpened, match="device-free test asked for"):
        float(xp.sum(xp.asarray([1.0, 2.0])))
