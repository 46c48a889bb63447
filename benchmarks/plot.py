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


if __name__ == "__main__":
    for path in sorted((ROOT / "docs" / "results").glob("*.json")):
        print("wrote", bar_chart(path).relative_to(ROOT))
