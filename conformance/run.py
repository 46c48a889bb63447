#!/usr/bin/env python
"""Run the official Array API test suite (data-apis/array-api-tests) against wgarray.

Usage (from the repository root)::

    python conformance/run.py                       # full + nof64 (+ gpu if present)
    python conformance/run.py --modes full --max-examples 20 --tests test_creation_functions.py
    python conformance/run.py --module array_api_strict --max-examples 5 --out /tmp/c.md

Each mode runs pytest in its own subprocess, with the suite checkout as working
directory.  Per-test outcomes are collected by a tiny pytest plugin that lives
in this very module (loaded in the child with ``-p conformance.run``), written
incrementally as JSON lines so that a crashing GPU driver still leaves partial
results (and the test that was running is reported as crashed).

Outputs: a Markdown report (``--out``, default ``docs/conformance.md``), and per
mode a pytest log plus the raw JSON-lines results under ``--results-dir``
(default ``.aat/results``), which also hold the one-line failure messages.

Exit status: 0 when every failing test is covered by the xfails file, 1 when
there are failures/errors not in it, 2 when a mode could not run at all
(module not importable, pytest usage/internal error, crash, timeout).

This module must only import the standard library at top level: it is also
imported inside the pytest subprocess as a plugin.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SUITE = REPO_ROOT / ".aat" / "array-api-tests"
DEFAULT_XFAILS = REPO_ROOT / "conformance" / "xfails.txt"
DEFAULT_OUT = REPO_ROOT / "docs" / "conformance.md"
DEFAULT_RESULTS_DIR = REPO_ROOT / ".aat" / "results"
API_VERSION = "2025.12"

ALL_MODES = ("full", "nof64", "gpu")
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
BAD_OUTCOMES = ("failed", "error")
ALL_DTYPE_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
)
# Environment variables that select wgarray's device/features; the runner
# controls them per mode, so values inherited from the caller are dropped.
WGARRAY_ENV_VARS = ("WGARRAY_DEVICE", "WGARRAY_DISABLE_FEATURES")
NOF64_FEATURES = "shader-f64,shader-int64"
RESULTS_ENV_VAR = "WGARRAY_CONFORMANCE_RESULTS"
RESUME_ENV_VAR = "WGARRAY_CONFORMANCE_RESUME"


# --------------------------------------------------------------------------
# pytest plugin (runs inside the pytest subprocess, loaded via -p)
# --------------------------------------------------------------------------

def _plugin_write(record: dict) -> None:
    path = os.environ.get(RESULTS_ENV_VAR)
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # under pytest-xdist only the controller (which sees every report) writes
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _crash_message(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    else:
        text = str(report.longrepr or "")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def pytest_runtest_logstart(nodeid, location):
    _plugin_write({"event": "start", "nodeid": nodeid})


def pytest_runtest_logfinish(nodeid, location):
    _plugin_write({"event": "finish", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    """Map pytest's (when, outcome, wasxfail) triple to one outcome word."""
    xfail = hasattr(report, "wasxfail")
    outcome = None
    if report.when == "call":
        if report.passed:
            outcome = "xpassed" if xfail else "passed"
        elif report.failed:
            outcome = "failed"
        else:
            outcome = "xfailed" if xfail else "skipped"
    elif report.failed:  # setup or teardown failure
        outcome = "error"
    elif report.when == "setup" and report.skipped:
        outcome = "xfailed" if xfail else "skipped"
    if outcome is None:
        return
    record = {"event": "result", "nodeid": report.nodeid, "when": report.when,
              "outcome": outcome, "duration": round(report.duration, 4)}
    if outcome in BAD_OUTCOMES:
        record["message"] = _crash_message(report)
    _plugin_write(record)


def pytest_collection_modifyitems(config, items):
    """When resuming after a crash, deselect the tests the earlier attempts already ran."""
    path = os.environ.get(RESULTS_ENV_VAR)
    if not os.environ.get(RESUME_ENV_VAR) or not path or not os.path.exists(path):
        return
    _, done, _ = _read_records(Path(path))
    kept = [item for item in items if item.nodeid not in done]
    deselected = [item for item in items if item.nodeid in done]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_collectreport(report):
    if report.failed:
        _plugin_write({"event": "result", "nodeid": report.nodeid or "<collection>",
                       "when": "collect", "outcome": "error",
                       "message": _crash_message(report)})


# --------------------------------------------------------------------------
# Runner: argument parsing and environment probing
# --------------------------------------------------------------------------

def xdist_available() -> bool:
    return importlib.util.find_spec("xdist") is not None


def parse_args(argv: list[str]) -> argparse.Namespace:
    if "--" in argv:
        split = argv.index("--")
        argv, extra = argv[:split], argv[split + 1:]
    else:
        extra = []
    p = argparse.ArgumentParser(
        description="Run data-apis/array-api-tests against wgarray and write docs/conformance.md.",
        epilog="Arguments after a bare '--' are passed to pytest unchanged.")
    p.add_argument("suite", nargs="?", default=None,
                   help=f"path of an array-api-tests checkout (default: {DEFAULT_SUITE.relative_to(REPO_ROOT)})")
    p.add_argument("--suite", dest="suite_opt", default=None, help="same as the positional argument")
    p.add_argument("--module", default="wgarray",
                   help="value of ARRAY_API_TESTS_MODULE (default: wgarray; array_api_strict checks the machinery)")
    p.add_argument("--max-examples", type=int, default=100, help="Hypothesis max examples (default: 100)")
    p.add_argument("--modes", nargs="+", choices=ALL_MODES, default=None,
                   help="modes to run (default: full nof64, plus gpu when a non-CPU wgpu adapter exists)")
    p.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    p.add_argument("--tests", nargs="+", default=[], metavar="FILE_OR_ID",
                   help="test files or ids, relative to the suite's array_api_tests/ "
                        "(e.g. test_linalg.py or test_linalg.py::test_matmul); default: the whole suite")
    p.add_argument("--xfails", default=str(DEFAULT_XFAILS), help="xfails file (default: conformance/xfails.txt)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="Markdown report (default: docs/conformance.md)")
    p.add_argument("--results-dir", default=str(DEFAULT_RESULTS_DIR),
                   help="where per-mode logs and JSON-lines results go (default: .aat/results)")
    p.add_argument("--mode-timeout", type=float, default=None, metavar="SECONDS",
                   help="kill a mode's pytest after this many seconds (default: no limit)")
    p.add_argument("--max-restarts", type=int, default=20,
                   help="when pytest crashes, resume after the crashing test at most this often (default: 20)")
    p.add_argument("-v", "--verbose", action="store_true", help="stream pytest's output to the terminal")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: write the report from the results of earlier runs in --results-dir "
                        "(e.g. a gpu mode run on another machine and copied here); give the same "
                        "--max-examples and --tests as those runs")
    if xdist_available():
        p.add_argument("--workers", default=None, help="pytest-xdist -n value (e.g. 4 or auto)")
    args = p.parse_args(argv)
    if args.suite and args.suite_opt:
        p.error("give the suite path either positionally or with --suite, not both")
    args.suite = Path(args.suite or args.suite_opt or DEFAULT_SUITE).resolve()
    args.pytest_extra = extra
    if not hasattr(args, "workers"):
        args.workers = None
    if not (args.suite / "array_api_tests").is_dir():
        p.error(f"{args.suite} is not an array-api-tests checkout (see conformance/README.md)")
    if not (args.suite / "array-api" / "spec").is_dir():
        p.error(f"{args.suite}/array-api is empty: the suite needs the spec checked out there (its submodule)")
    return args


ADAPTERS_SCRIPT = r"""
import json, wgpu
print("ADAPTERS-JSON " + json.dumps([dict(a.info) for a in wgpu.gpu.enumerate_adapters_sync()]))
"""


def find_gpu_adapter() -> tuple[str | None, str]:
    """Return (name of the first non-CPU wgpu adapter or None, description of all adapters).

    Enumerates in a child process: it keeps the native libraries' stderr noise
    (and any crash) out of the runner.
    """
    try:
        proc = subprocess.run([sys.executable, "-c", ADAPTERS_SCRIPT], capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "wgpu adapter enumeration timed out"
    infos = next((json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines()
                  if line.startswith("ADAPTERS-JSON ")), None)
    if infos is None:
        return None, "wgpu adapter enumeration failed: " + " | ".join(proc.stderr.strip().splitlines()[-2:])
    seen = []
    for info in infos:
        name, kind, backend = info.get("device", ""), info.get("adapter_type", ""), info.get("backend_type", "")
        seen.append(f"{name} ({kind}, {backend})")
        if kind != "CPU" and name:
            return name, "; ".join(seen)
    return None, "; ".join(seen) or "no adapters"


PROBE_SCRIPT = r"""
import importlib, json, sys
name = sys.argv[1]
out = {}
try:
    try:
        xp = importlib.import_module(name)
    except ImportError:
        top, _, rest = name.partition(".")
        xp = importlib.import_module(top)
        for part in rest.split(".") if rest else []:
            xp = getattr(xp, part)
    out["version"] = str(getattr(xp, "__version__", "unknown"))
    out["api_version"] = str(getattr(xp, "__array_api_version__", "unknown"))
    if not hasattr(xp, "__array_namespace_info__") or not hasattr(xp, "asarray"):
        out["error"] = f"{name} imports but is not an array namespace yet (no __array_namespace_info__/asarray)"
    else:
        info = xp.__array_namespace_info__()
        out["dtypes"] = sorted(info.dtypes())
        dev = info.default_device()
        out["device"] = str(dev)
        out["devices"] = [str(d) for d in info.devices()]
        out["dtypes_per_device"] = {str(d): sorted(info.dtypes(device=d)) for d in info.devices()}
        out["capabilities"] = {str(k): repr(v) for k, v in info.capabilities().items()}
        names = {getattr(xp, n): n for n in ("bool", "int8", "int16", "int32", "int64", "uint8",
                 "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128")
                 if hasattr(xp, n)}
        out["default_dtypes"] = {k: names.get(v, str(v)) for k, v in info.default_dtypes().items()}
except BaseException as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print("PROBE-JSON " + json.dumps(out))
"""


def probe_module(module: str, env: dict, cwd: Path) -> dict:
    """Import the module in a child with the mode's environment and ask it what it supports."""
    proc = subprocess.run([sys.executable, "-c", PROBE_SCRIPT, module], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    for line in proc.stdout.splitlines():
        if line.startswith("PROBE-JSON "):
            return json.loads(line[len("PROBE-JSON "):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"error": f"probe exited with {proc.returncode}: " + " | ".join(tail)}


# --------------------------------------------------------------------------
# Runner: one mode
# --------------------------------------------------------------------------

def mode_env_overrides(mode: str, gpu_name: str | None) -> dict:
    if mode == "nof64":
        return {"WGARRAY_DISABLE_FEATURES": NOF64_FEATURES}
    if mode == "gpu":
        return {"WGARRAY_DEVICE": gpu_name}
    return {}


def base_env(module: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in WGARRAY_ENV_VARS}
    env["ARRAY_API_TESTS_MODULE"] = module
    env["ARRAY_API_TESTS_VERSION"] = API_VERSION
    # The working tree's wgarray (and this module, as the plugin) must be importable.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def skip_dtypes_for(probe: dict) -> list[str]:
    """Dtypes the module does not report in info.dtypes(), plus any the caller already skips.

    The suite decides which dtypes to test from getattr(xp, name), not from
    __array_namespace_info__().dtypes(); ARRAY_API_TESTS_SKIP_DTYPES is its switch.
    """
    skip = {d for d in os.environ.get("ARRAY_API_TESTS_SKIP_DTYPES", "").split(",") if d}
    if "dtypes" in probe:
        skip |= {d for d in ALL_DTYPE_NAMES if d not in probe["dtypes"] and d != "bool"}
    return [d for d in ALL_DTYPE_NAMES if d in skip]


def test_targets(args) -> list[str]:
    if not args.tests:
        return ["array_api_tests"]
    targets = []
    for t in args.tests:
        t = t.removeprefix("array-api-tests/").removeprefix("array_api_tests/")
        targets.append("array_api_tests/" + t)
    return targets


def build_pytest_command(args, xfails_path: Path | None = None) -> list[str]:
    xfails = os.path.relpath(Path(xfails_path or args.xfails).resolve(), args.suite)
    # pytest picks its rootdir/config from every existing path on the command line,
    # option values included: a separate "--xfails-file ../../conformance/xfails.txt"
    # would make this repository the rootdir (our pyproject's pytest config, node ids
    # prefixed with .aat/array-api-tests/ that no xfail entry matches). Hence the
    # "--opt=value" form and the explicit -c.
    cmd = [sys.executable, "-m", "pytest", *test_targets(args), "-c", "pytest.ini",
           f"--max-examples={args.max_examples}", "--hypothesis-disable-deadline",
           f"--xfails-file={xfails}", "-p", "no:cacheprovider", "-p", "conformance.run",
           "-q", "-rfE", "--tb=line"]
    if args.keyword:
        cmd += ["-k", args.keyword]
    if args.workers:
        cmd += ["-n", str(args.workers)]
    return cmd + list(args.pytest_extra)


def reproduce_line(cmd: list[str], env_overrides: dict) -> str:
    env_part = " ".join(f"{k}={shlex.quote(v)}" for k, v in env_overrides.items())
    shown = ["python" if cmd[0] == sys.executable else cmd[0], *cmd[1:]]
    return f"{env_part} {shlex.join(shown)}".strip()


def run_pytest(cmd: list[str], env: dict, cwd: Path, log_path: Path, verbose: bool,
               timeout: float | None) -> tuple[int, bool]:
    """Run pytest, teeing its output to log_path. Returns (returncode, timed_out)."""
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        fired = threading.Event()

        def kill_on_timeout():
            fired.set()
            proc.kill()

        watchdog = threading.Timer(timeout, kill_on_timeout) if timeout else None
        if watchdog:
            watchdog.start()
        try:
            for line in proc.stdout:
                log.write(line)
                if verbose:
                    sys.stdout.write(line)
                    sys.stdout.flush()
            rc = proc.wait()
        finally:
            if watchdog:
                watchdog.cancel()
    return rc, fired.is_set()


def _read_records(path: Path) -> tuple[dict, set, list]:
    """Fold the JSON-lines records into ({nodeid: record}, ids started, ids started but never finished)."""
    results: dict[str, dict] = {}
    started: dict[str, None] = {}
    finished: set[str] = set()
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line after a crash
                nodeid, event = rec["nodeid"], rec["event"]
                if event == "start":
                    started[nodeid] = None
                elif event == "finish":
                    finished.add(nodeid)
                elif nodeid not in results or rec["outcome"] == "error":
                    # A teardown error overrides the call outcome; otherwise the first outcome wins.
                    results[nodeid] = rec
    return results, set(started), [n for n in started if n not in finished]


def read_results(path: Path) -> tuple[dict, list]:
    """Results per test, with the tests during which pytest died recorded as errors."""
    results, _, crashed = _read_records(path)
    for nodeid in crashed:
        results[nodeid] = {"nodeid": nodeid, "outcome": "error", "when": "call",
                           "message": "pytest died or was killed while running this test"}
    return results, crashed


def last_error_line(log_file: Path) -> str:
    """The last 'E   ...' line of a pytest log (the exception of a conftest/collection failure)."""
    lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    return errors[-1] if errors else (lines[-1].strip() if lines else "no output")


def run_mode(mode: str, args, gpu_name: str | None) -> dict:
    overrides = mode_env_overrides(mode, gpu_name)
    env = base_env(args.module)
    env.update(overrides)
    probe = probe_module(args.module, env, args.suite)
    skip_dtypes = skip_dtypes_for(probe)
    if skip_dtypes:
        overrides["ARRAY_API_TESTS_SKIP_DTYPES"] = ",".join(skip_dtypes)
        env["ARRAY_API_TESTS_SKIP_DTYPES"] = overrides["ARRAY_API_TESTS_SKIP_DTYPES"]
    results_dir = Path(args.results_dir).resolve()  # the suite runs in its own directory
    results_dir.mkdir(parents=True, exist_ok=True)
    cmd = build_pytest_command(args, mode_xfails_file(args, mode, probe, results_dir))
    shown_overrides = {"ARRAY_API_TESTS_MODULE": args.module, "ARRAY_API_TESTS_VERSION": API_VERSION,
                       "PYTHONPATH": os.path.relpath(REPO_ROOT, args.suite), **overrides}
    summary = {"mode": mode, "probe": probe, "skip_dtypes": skip_dtypes, "env": overrides,
               "reproduce": reproduce_line(cmd, shown_overrides), "results": {}, "problem": None,
               "returncode": None, "seconds": 0.0}
    if "error" in probe:
        summary["problem"] = f"module not usable: {probe['error']}"
        return summary
    unusable = {k: v for k, v in probe.get("default_dtypes", {}).items() if v in skip_dtypes}
    if unusable:
        # The suite looks default dtypes up among the tested ones: a skipped default int
        # stops it at import, a skipped default float makes many tests fail with KeyError.
        summary["warning"] = ("default dtype(s) " + ", ".join(f"{k}={v}" for k, v in unusable.items())
                              + " are not among the dtypes the module reports; the suite "
                              "cannot test such a configuration sensibly")
        print(f"[{mode}] warning: {summary['warning']}")
    results_file = results_dir / f"{mode}.jsonl"
    results_file.unlink(missing_ok=True)
    for old_log in results_dir.glob(f"{mode}.*log"):
        old_log.unlink()
    env[RESULTS_ENV_VAR] = str(results_file)

    print(f"[{mode}] device: {probe.get('device')}; skipped dtypes: {','.join(skip_dtypes) or 'none'}")
    print(f"[{mode}] cd {args.suite} && {summary['reproduce']}")
    start = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        log_file = results_dir / (f"{mode}.log" if attempts == 1 else f"{mode}.{attempts}.log")
        remaining = None if not args.mode_timeout else max(1.0, args.mode_timeout - (time.monotonic() - start))
        rc, timed_out = run_pytest(cmd, env, args.suite, log_file, args.verbose, remaining)
        results, crashed = read_results(results_file)
        if rc >= 0 or timed_out or attempts > args.max_restarts:
            break
        # pytest died (a driver crash, say): resume with the tests not yet run.
        print(f"[{mode}] pytest killed by signal {-rc} in {crashed[-1] if crashed else '?'}; resuming")
        env[RESUME_ENV_VAR] = "1"
    summary["seconds"] = time.monotonic() - start
    summary["returncode"] = rc
    summary["results"] = results
    summary["crashed"] = crashed
    if timed_out:
        summary["problem"] = f"timed out after {args.mode_timeout:g} s (see {log_file})"
    elif rc < 0:
        summary["problem"] = f"pytest was killed by signal {-rc} {attempts} time(s), giving up (see {log_file})"
    elif rc == 5 and attempts == 1:
        summary["problem"] = "no tests were collected (check --tests / -k)"
    elif rc not in (0, 1, 5):
        summary["problem"] = f"pytest exited with status {rc}: {last_error_line(log_file)} (see {log_file})"
    meta = {k: v for k, v in summary.items() if k != "results"}
    (results_dir / f"{mode}.summary.json").write_text(json.dumps(meta, indent=1, default=str))
    return summary


def load_mode(mode: str, args) -> dict:
    """A mode's summary from an earlier run (``--report-only``), e.g. one made on a GPU
    machine whose results directory was copied here."""
    results_dir = Path(args.results_dir)
    meta_file = results_dir / f"{mode}.summary.json"
    if not meta_file.exists():
        raise SystemExit(f"--report-only: no earlier run of mode {mode!r} in {results_dir}")
    summary = json.loads(meta_file.read_text())
    summary["results"], _ = read_results(results_dir / f"{mode}.jsonl")
    return summary


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def counts_by_file(results: dict) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(OUTCOMES, 0))
    for nodeid, rec in results.items():
        table[file_of(nodeid)][rec["outcome"]] += 1
    return dict(sorted(table.items()))


def totals(results: dict) -> dict[str, int]:
    total = dict.fromkeys(OUTCOMES, 0)
    for rec in results.values():
        total[rec["outcome"]] += 1
    return total


def git_describe(path: Path) -> str:
    """The commit of the checkout at ``path`` (a copy without .git may name it in a
    COMMIT file); never that of a repository the path merely lies inside."""
    def git(*cmd):
        return subprocess.run(["git", "-C", str(path), *cmd], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() == Path(path).resolve():
            return git("log", "-1", "--format=%H (%cs)") or "unknown"
    except (OSError, subprocess.CalledProcessError):
        pass
    marker = Path(path) / "COMMIT"
    return marker.read_text().strip() if marker.is_file() else "unknown"


def package_version(name: str) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "not installed"


def runner_command_line(args) -> str:
    parts = ["python", "conformance/run.py"]
    if args.suite != DEFAULT_SUITE.resolve():
        parts.append(str(args.suite))
    if args.module != "wgarray":
        parts += ["--module", args.module]
    parts += ["--max-examples", str(args.max_examples), "--modes", *args.modes_run]
    if args.keyword:
        parts += ["-k", args.keyword]
    if args.tests:
        parts += ["--tests", *args.tests]
    if args.workers:
        parts += ["--workers", str(args.workers)]
    if Path(args.out).resolve() != DEFAULT_OUT.resolve():
        parts += ["--out", args.out]
    if args.pytest_extra:
        parts += ["--", *args.pytest_extra]
    return shlex.join(parts)


def markdown_table(results: dict) -> list[str]:
    header = "| file | " + " | ".join(OUTCOMES) + " | total |"
    lines = [header, "|" + "---|" * (len(OUTCOMES) + 2)]
    for fname, counts in counts_by_file(results).items():
        short = fname.removeprefix("array_api_tests/")
        lines.append(f"| {short} | " + " | ".join(str(counts[o]) for o in OUTCOMES)
                     + f" | {sum(counts.values())} |")
    total = totals(results)
    lines.append("| **total** | " + " | ".join(f"**{total[o]}**" for o in OUTCOMES)
                 + f" | **{sum(total.values())}** |")
    return lines


def ids_with_outcome(summaries: list[dict], outcomes: tuple[str, ...]) -> dict[str, dict[str, list[str]]]:
    """{file: {nodeid: [modes]}} for tests with one of the outcomes in some mode."""
    grouped: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for s in summaries:
        for nodeid, rec in s["results"].items():
            if rec["outcome"] in outcomes:
                grouped[file_of(nodeid)][nodeid].append(s["mode"])
    return {f: dict(sorted(ids.items())) for f, ids in sorted(grouped.items())}


def write_report(args, summaries: list[dict], skipped_modes: dict[str, str], started: _dt.datetime) -> str:
    lines = ["# Array API conformance", ""]
    if args.module != "wgarray":
        lines += [f"> **Placeholder:** generated against `{args.module}` only to check the runner's "
                  "machinery, not against wgarray. Regenerate with `python conformance/run.py`.", ""]
    if args.tests or args.keyword:
        lines += ["> **Partial run:** only part of the suite was selected (see the command below).", ""]
    lines += [
        "Generated by `conformance/run.py` from the official suite "
        "[data-apis/array-api-tests](https://github.com/data-apis/array-api-tests). Do not edit by hand.",
        "",
        f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Suite commit: `{git_describe(args.suite)}`; spec (`array-api/`) commit: "
        f"`{git_describe(args.suite / 'array-api')}`",
        f"- Module: `{args.module}`; ARRAY_API_TESTS_VERSION={API_VERSION}; "
        f"Hypothesis max examples: {args.max_examples} (the suite divides it by 10 for its "
        "`unvectorized` tests); deadline disabled",
        f"- Python {sys.version.split()[0]}, pytest {package_version('pytest')}, "
        f"hypothesis {package_version('hypothesis')}, wgpu {package_version('wgpu')}",
        f"- Xfails file: `conformance/xfails.txt` ({len(read_xfail_ids(Path(args.xfails)))} entries); "
        "suite defects xfailed only in the modes they break: see the last section",
        "",
        "Reproduce (from the repository root):",
        "",
        "```sh",
        runner_command_line(args),
        "```",
        "",
    ]
    lines += ["## Summary", "", "| mode | device | skipped dtypes | passed | failed | error | skipped "
              "| xfailed | xpassed | time |", "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        t = totals(s["results"])
        device = s["probe"].get("device", "?")
        lines.append(f"| {s['mode']} | {device} | {', '.join(s['skip_dtypes']) or 'none'} | "
                     + " | ".join(str(t[o]) for o in OUTCOMES) + f" | {s['seconds']:.0f} s |")
    for mode, why in skipped_modes.items():
        lines.append(f"| {mode} | not run: {why} | | | | | | | | |")
    lines.append("")

    for s in summaries:
        lines += [f"## Mode `{s['mode']}`", ""]
        probe = s["probe"]
        lines.append(f"- Device: `{probe.get('device', '?')}` (devices: "
                     f"{', '.join('`%s`' % d for d in probe.get('devices', [])) or '?'})")
        if probe.get("default_dtypes"):
            lines.append("- Default dtypes: " + ", ".join(f"{k}={v}" for k, v in probe["default_dtypes"].items()))
        lines.append(f"- Module version {probe.get('version', '?')}, reports API version "
                     f"{probe.get('api_version', '?')}; dtypes reported by "
                     f"`__array_namespace_info__().dtypes()`: {', '.join(probe.get('dtypes', [])) or '?'}")
        if s["mode"] == "nof64" and {"float64", "complex128"} & set(probe.get("dtypes", [])):
            lines.append("- **Warning:** with f64 disabled the module still reports float64/complex128.")
        lines.append(f"- Time: {s['seconds']:.1f} s; pytest exit status {s['returncode']}")
        if s.get("crashed"):
            lines.append("- **pytest crashed** (and was resumed after) in: "
                         + ", ".join(f"`{n}`" for n in s["crashed"]))
        if s.get("warning"):
            lines.append(f"- **Warning:** {s['warning']}")
        if s["problem"]:
            lines.append(f"- **Problem:** {s['problem']}")
        lines += ["- pytest command (run inside the suite checkout):", "", "  ```sh",
                  f"  {s['reproduce']}", "  ```", ""]
        if s["results"]:
            lines += markdown_table(s["results"]) + [""]

    failing = ids_with_outcome(summaries, BAD_OUTCOMES)
    lines += ["## Failing tests", ""]
    if not failing:
        lines += ["None.", ""]
    else:
        lines += ["Test ids as pytest prints them (run one with `pytest '<id>'` inside the suite "
                  "checkout); the modes in which it fails follow the id. One-line messages are in "
                  "`.aat/results/<mode>.jsonl` after a run.", ""]
        for fname, ids in failing.items():
            lines += [f"### {fname.removeprefix('array_api_tests/')} ({len(ids)})", ""]
            lines += [f"- `{nodeid}` — {', '.join(modes)}" for nodeid, modes in ids.items()]
            lines.append("")
    xpassed = {f: {t: m for t, m in ids.items() if t not in SUITE_DEFECTS}
               for f, ids in ids_with_outcome(summaries, ("xpassed",)).items()}
    xpassed = {f: ids for f, ids in xpassed.items() if ids}
    if xpassed:
        lines += ["## Xfailed entries that passed (candidates for removal from xfails.txt)", ""]
        for fname, ids in xpassed.items():
            lines += [f"- `{nodeid}` — {', '.join(modes)}" for nodeid, modes in ids.items()]
        lines.append("")
    lines += ["## Suite defects", "",
              "Tests that fail by the suite's own construction in some modes, whatever the "
              "implementation returns. They are xfailed in those modes only (the runner's "
              "`SUITE_DEFECTS`), so a draw that happens to be harmless shows as xpassed; in "
              "every other mode they run as usual.", ""]
    reasons: dict[str, list[str]] = defaultdict(list)
    for tid, (_, why) in SUITE_DEFECTS.items():
        reasons[why].append(tid)
    for why, tids in reasons.items():
        lines.append(f"- Reason: {why}.")
        for tid in tids:
            xfailed_in = [s["mode"] for s in summaries if tid in mode_defects(s["mode"], s.get("probe", {}))]
            seen = ", ".join(f"{s['mode']}: {s['results'][tid]['outcome']}"
                             for s in summaries if tid in s["results"])
            lines.append(f"  - `{tid}` — xfailed in: {', '.join(xfailed_in) or 'none of these modes'}"
                         + (f" (this report: {seen})" if seen else ""))
    lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# Tests of the suite that fail by their own construction in some modes, whatever the
# implementation does: xfailed in those modes only (with this reason, listed in the
# report), never in conformance/xfails.txt, which is for wgarray's own failures.
_IS_INTEGER_DRAW = (
    "the test draws integers up to the largest float with `st.integers().map(float)` and "
    "`.example()` (random every run); without float64 many are not representable in "
    "float32, so the correctly rounded input differs from the draw the result is compared with")
_MIXED_DEVICES = (
    "the test moves an array of any dtype to any of `info.devices()`; where the devices "
    "offer different dtypes (a software OpenGL adapter without float64 beside a Vulkan "
    "one with it), moving float64 to the other raises TypeError, as it must")


def _devices_differ(mode: str, probe: dict) -> bool:
    return len({tuple(v) for v in probe.get("dtypes_per_device", {}).values()}) > 1


# test id -> (applies(mode, probe), reason)
SUITE_DEFECTS = {
    **{f"array_api_tests/test_special_cases.py::test_unary[{f}(x_i.is_integer()) -> x_i]":
       (lambda mode, probe: mode == "nof64", _IS_INTEGER_DRAW) for f in ("floor", "ceil", "trunc", "round")},
    "array_api_tests/test_dlpack.py::test_from_dlpack": (_devices_differ, _MIXED_DEVICES),
}


def mode_defects(mode: str, probe: dict) -> list[str]:
    """The ids of the suite defects that apply to a mode on this machine."""
    return [tid for tid, (applies, _) in SUITE_DEFECTS.items() if applies(mode, probe)]


def mode_xfails_file(args, mode: str, probe: dict, results_dir: Path) -> Path:
    """The xfails file of a mode: conformance/xfails.txt, plus the suite defects of
    that mode (written next to the mode's results)."""
    base = Path(args.xfails).resolve()
    defects = mode_defects(mode, probe)
    if not defects:
        return base
    text = base.read_text(encoding="utf-8") if base.exists() else ""
    path = results_dir / f"{mode}.xfails.txt"
    path.write_text(text.rstrip("\n") + "\n\n# suite defects of this mode (conformance/run.py SUITE_DEFECTS)\n"
                    + "".join(f"{tid}\n" for tid in defects), encoding="utf-8")
    return path


def read_xfail_ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line.rstrip("\n") for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def check_xfails_file(path: Path) -> list[str]:
    """Warn about entries the suite would silently fail to match, or entries with no reason.

    An entry needs a '# reason' comment directly above it (a block of entries may share one).
    """
    if not path.exists():
        return [f"xfails file {path} does not exist"]
    warnings = []
    has_reason = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            has_reason = False
        elif line.startswith("#"):
            has_reason = True
        else:
            if line != line.strip() or "#" in line:
                warnings.append(f"{path.name}:{n}: the suite matches whole lines; remove "
                                "surrounding spaces and inline comments")
            if not has_reason:
                warnings.append(f"{path.name}:{n}: entry without a '# reason' line above it")
    return warnings


def print_summary(summaries: list[dict], skipped_modes: dict[str, str]) -> None:
    print()
    print(f"{'mode':<6} {'time':>8}  " + " ".join(f"{o:>8}" for o in OUTCOMES) + "  problem")
    for s in summaries:
        t = totals(s["results"])
        print(f"{s['mode']:<6} {s['seconds']:>7.1f}s  " + " ".join(f"{t[o]:>8}" for o in OUTCOMES)
              + f"  {s['problem'] or ''}")
    for mode, why in skipped_modes.items():
        print(f"{mode:<6} not run: {why}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = _dt.datetime.now(_dt.timezone.utc)
    for w in check_xfails_file(Path(args.xfails)):
        print(f"warning: {w}")

    gpu_name, adapters = find_gpu_adapter()
    modes = args.modes or (["full", "nof64"] + (["gpu"] if gpu_name else []))
    skipped_modes = {}
    if "gpu" in modes and not gpu_name:
        skipped_modes["gpu"] = f"no non-CPU wgpu adapter ({adapters})"
        modes = [m for m in modes if m != "gpu"]
    args.modes_run = modes + list(skipped_modes)

    summaries = []
    if args.report_only:
        modes, skipped_modes = args.modes or ["full", "nof64", "gpu"], {}
        args.modes_run = modes
        summaries = [load_mode(mode, args) for mode in modes]
        for s in summaries:
            print(f"[{s['mode']}] from {args.results_dir}: "
                  + ", ".join(f"{v} {k}" for k, v in totals(s["results"]).items() if v))
    for mode in modes if not args.report_only else ():
        summaries.append(run_mode(mode, args, gpu_name))
        s = summaries[-1]
        print(f"[{mode}] done in {s['seconds']:.1f} s: "
              + ", ".join(f"{v} {k}" for k, v in totals(s["results"]).items() if v)
              + (f"; PROBLEM: {s['problem']}" if s["problem"] else ""))

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(write_report(args, summaries, skipped_modes, started), encoding="utf-8")
    print_summary(summaries, skipped_modes)
    print(f"\nreport written to {out}")

    if any(s["problem"] for s in summaries):
        return 2
    unexpected = sum(totals(s["results"])[o] for s in summaries for o in BAD_OUTCOMES)
    if unexpected:
        print(f"{unexpected} failing test(s) not covered by {args.xfails}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
