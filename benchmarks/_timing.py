"""Timing helpers shared by the benchmark scripts: warm-up, then the median of
several device-synchronized repetitions."""
from __future__ import annotations

import statistics
import time


def best_of(fn, sync=lambda: None, repeat: int = 7, warmup: int = 2) -> float:
    """Median wall seconds of ``fn(); sync()`` after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def try_import(name):
    try:
        return __import__(name)
    except Exception:
        return None


def table(rows, headers) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
