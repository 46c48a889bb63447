"""Turn a saved pytest-benchmark JSON file into Markdown tables and speed-up plots.

    python benchmarks/report.py docs/results/bench_h200.json [more.json ...] [--label h200]

For each benchmark group (one workload, a case per library) a table row per library:
the median time per operation, bandwidth or throughput where the benchmark records
bytes or flops, and the time ratios to NumPy and to torch. The tables replace the part
of docs/performance.md between ``<!-- report.py:begin LABEL -->`` and
``<!-- report.py:end LABEL -->`` (appended at the end when the markers are missing), and
each suite gets a PNG of speed-up bars per workload, docs/plots/LABEL_SUITE.png, linked
from the tables. Without matplotlib the tables are still written.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PERFORMANCE = ROOT / "docs" / "performance.md"
PLOTS = ROOT / "docs" / "plots"
ORDER = ["wgarray", "WGSL vec4 roofline", "torch", "cupy", "numpy"]
COLOURS = {"wgarray": "#2b7bba", "WGSL vec4 roofline": "#9ecae1", "torch": "#ee7733",
           "cupy": "#77aa44", "numpy": "#999999"}


def load(paths: list[pathlib.Path]):
    """(machine summary, {suite: {group: {library: row}}}) from pytest-benchmark files
    (several runs of parts of the suites make one report; machine details from the first)."""
    runs = [json.loads(p.read_text()) for p in paths]
    data = dict(runs[0], benchmarks=[b for run in runs for b in run["benchmarks"]])
    suites: dict = collections.defaultdict(lambda: collections.defaultdict(dict))
    devices: dict[str, str] = {}
    scale = None
    for b in data["benchmarks"]:
        extra = b.get("extra_info", {})
        param = re.search(r"\[(.*)\]$", b["name"])
        lib = extra.get("library") or (b.get("params") or {}).get("lib") or (param.group(1) if param else b["name"])
        group = b.get("group") or extra.get("workload") or (b.get("params") or {}).get("case") or b["name"]
        suite = pathlib.Path(b["fullname"].split("::")[0]).stem
        ops = extra.get("ops") or 1
        stats = b["stats"]
        suites[suite][group][lib] = {
            "median": stats["median"] / ops, "min": stats["min"] / ops, "max": stats["max"] / ops,
            "rounds": stats["rounds"], "bytes": extra.get("bytes"), "flops": extra.get("flops"),
        }
        if extra.get("device"):
            devices[lib] = extra["device"]
        scale = extra.get("scale") or scale
    info = data.get("machine_info", {})
    cpu = info.get("cpu", {}).get("brand_raw") or info.get("processor") or "?"
    summary = {"datetime": data.get("datetime", "?"), "cpu": cpu, "devices": devices,
               "scale": scale, "commit": (data.get("commit_info") or {}).get("id")}
    return summary, suites


def _libs(rows: dict) -> list[str]:
    return sorted(rows, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _rate(row) -> str:
    if row.get("flops"):
        return f"{row['flops'] / row['median'] / 1e12:.2f} TFLOP/s"
    if row.get("bytes"):
        return f"{row['bytes'] / row['median'] / 1e9:.1f} GB/s"
    return ""


def _ratio(row, rows, other) -> str:
    if other not in rows or row is rows[other]:
        return ""
    return f"{rows[other]['median'] / row['median']:.2f}x"


def tables(suites, plots: dict[str, str]) -> str:
    out = []
    for suite, groups in suites.items():
        out.append(f"### {suite}\n")
        if suite in plots:
            out.append(f"![speed-up over NumPy per workload, {suite}]({plots[suite]})\n")
        for group, rows in groups.items():
            out.append("#### " + re.sub(r"([*_\\`])", r"\\\1", group) + "\n")
            out.append("| library | median per op | range | rate | speed-up vs NumPy | speed-up vs torch |")
            out.append("|---|---|---|---|---|---|")
            for lib in _libs(rows):
                r = rows[lib]
                out.append(f"| {lib} | {_time(r['median'])} | {_time(r['min'])} – {_time(r['max'])} "
                           f"({r['rounds']} rounds) | {_rate(r)} | {_ratio(r, rows, 'numpy')} | "
                           f"{_ratio(r, rows, 'torch')} |")
            out.append("")
    return "\n".join(out)


def plot(suite: str, groups: dict, out: pathlib.Path) -> bool:
    """Horizontal bars: for each workload, each library's speed-up over NumPy (log scale).
    False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = [g for g, rows in groups.items() if "numpy" in rows]
    if not names:
        return False
    libs = [lib for lib in ORDER if lib != "numpy" and any(lib in groups[g] for g in names)]
    libs += sorted({lib for g in names for lib in groups[g]} - set(ORDER))
    height = 0.8 / max(1, len(libs))
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(names) * max(1, len(libs)) ** 0.5 + 1.5))
    for j, lib in enumerate(libs):
        ys, xs = [], []
        for i, g in enumerate(names):
            if lib in groups[g]:
                ys.append(i + (j - (len(libs) - 1) / 2) * height)
                xs.append(groups[g]["numpy"]["median"] / groups[g][lib]["median"])
        bars = ax.barh(ys, xs, height=height, color=COLOURS.get(lib, "#cc6677"), label=lib)
        for bar, x in zip(bars, xs):
            ax.text(x, bar.get_y() + bar.get_height() / 2, f" {x:.3g}x", va="center", fontsize=7)
    ax.set_yticks(range(len(names)), [_wrap(n) for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="#444444", linewidth=0.8)
    ax.set_xlabel("speed-up over NumPy on the host (NumPy's median time / the library's; log scale)")
    ax.set_title(suite, fontsize=10)
    if not ax.patches:  # no library beside NumPy in these groups
        plt.close(fig)
        return False
    lo = min(b.get_width() for b in ax.patches)
    hi = max(b.get_width() for b in ax.patches)
    ax.set_xlim(min(0.5, lo / 2), max(2.0, hi * 4))
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def _wrap(text: str, width: int = 38) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join(lines + [line])


def section(label: str, sources: list[pathlib.Path], summary, body: str) -> str:
    devices = "; ".join(f"{lib}: {dev}" for lib, dev in summary["devices"].items())
    names = " ".join(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in sources)
    head = (f"Generated by `python benchmarks/report.py {names} --label {label}` "
            f"from a run of {summary['datetime']}"
            f"{', commit ' + summary['commit'][:10] if summary.get('commit') else ''}"
            f"{', scale ' + summary['scale'] if summary.get('scale') else ''}. Host CPU: {summary['cpu']}. "
            f"Devices: {devices}. Times are per operation (a timed call of several operations "
            f"is divided by their count), medians of the rounds after warm-up; speed-up "
            f"vs X is X's median time divided by the library's.\n")
    return f"<!-- report.py:begin {label} -->\n{head}\n{body}\n<!-- report.py:end {label} -->"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", type=pathlib.Path, nargs="+", help="pytest-benchmark JSON files (--benchmark-json)")
    parser.add_argument("--label", help="names the section and the plots (default: the first file's stem)")
    parser.add_argument("--doc", type=pathlib.Path, default=PERFORMANCE, help="the Markdown file to update")
    parser.add_argument("--plots", type=pathlib.Path, default=PLOTS, help="folder for the PNGs")
    parser.add_argument("--commit", help="the commit measured, where the JSON's own is missing or stale "
                                         "(a GPU machine given a copy of the tree)")
    args = parser.parse_args(argv)
    label = args.label or args.json[0].stem.removeprefix("bench_")
    summary, suites = load(args.json)
    if args.commit:
        summary["commit"] = args.commit
    doc = args.doc.resolve()
    plots = {}
    for suite, groups in suites.items():
        png = args.plots.resolve() / f"{label}_{suite}.png"
        if plot(suite, groups, png):
            plots[suite] = pathlib.Path(_relpath(png, doc.parent)).as_posix()
            print("wrote", png)
    if not plots:
        print("report: matplotlib is not installed (or no group has NumPy): tables only")
    text = doc.read_text() if doc.exists() else ""
    new = section(label, [p.resolve() for p in args.json], summary, tables(suites, plots))
    pattern = re.compile(rf"<!-- report.py:begin {re.escape(label)} -->.*?<!-- report.py:end {re.escape(label)} -->",
                         re.S)
    if pattern.search(text):
        text = pattern.sub(lambda m: new, text)
    else:
        text = text.rstrip("\n") + "\n\n" + new + "\n"
    doc.write_text(text)
    print("wrote", doc, f"({sum(len(g) for g in suites.values())} workloads)")
    return 0


def _relpath(path: pathlib.Path, start: pathlib.Path) -> str:
    return os.path.relpath(path, start)


if __name__ == "__main__":
    raise SystemExit(main())
