"""Plot benchmark figures recorded in docs/results/*.json into docs/*.png.

    python benchmarks/plot.py      # needs matplotlib (a developer tool, not a dependency)
"""
from __future__ import annotations

import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def bar_chart(result: pathlib.Path) -> pathlib.Path:
    data = json.loads(result.read_text())
    labels = [row["name"] for row in data["rows"]]
    values = [row["value"] for row in data["rows"]]
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(labels) + 1.2))
    bars = ax.barh(labels, values, color=["#2b7bba" if "wgarray" in n else "#999999" for n in labels])
    ax.invert_yaxis()
    ax.set_xlabel(data["unit"])
    ax.set_title(data["title"], fontsize=10)
    for bar, v in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {v:g}", va="center", fontsize=9)
    ax.set_xlim(0, max(values) * 1.18)
    fig.tight_layout()
    out = ROOT / "docs" / (result.stem + ".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def size_scaling(result: pathlib.Path) -> pathlib.Path:
    """Throughput (GB/s moved) against array size per case of ``bench_large.py``, one
    line per library: what holds as arrays pass the binding and buffer limits."""
    data = json.loads(result.read_text())
    series: dict = {}
    for b in data["benchmarks"]:
        p = b["params"]
        nbytes = b["extra_info"]["bytes"]
        series.setdefault(p["case"], {}).setdefault(p["lib"], []).append((p["gib"], nbytes / b["stats"]["median"] / 1e9))
    names = {"ew": "y = x * 2 + 1 (read + write)", "sum": "sum (read)", "gram": "X.T @ X, X (n, 256) (read)"}
    fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.4))
    for ax, (case, libs) in zip(axes, sorted(series.items())):
        for lib, pts in sorted(libs.items()):
            pts.sort()
            ax.plot([g for g, _ in pts], [v for _, v in pts], marker="o", label=lib,
                    color="#2b7bba" if lib == "wgarray" else "#999999")
        ax.set_xscale("log", base=2)
        ax.axvline(2, color="#cc6666", lw=0.8, ls="--")  # the H200's binding limit
        ax.axvline(4, color="#cc6666", lw=0.8, ls=":")  # its largest buffer
        ax.set_xlabel("array size (GiB, float32)")
        ax.set_ylabel("GB/s")
        ax.set_ylim(bottom=0)
        ax.set_title(names.get(case, case), fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = ROOT / "docs" / "plots" / (result.stem + ".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


if __name__ == "__main__":
    for path in sorted((ROOT / "docs" / "results").glob("*.json")):
        data = json.loads(path.read_text())
        if "rows" in data:
            print("wrote", bar_chart(path).relative_to(ROOT))
        elif path.stem.endswith("-large"):
            print("wrote", size_scaling(path).relative_to(ROOT))
