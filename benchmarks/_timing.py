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


def cuda_torch():
    """torch when it imports and sees a CUDA device, else None."""
    torch = try_import("torch")
    return torch if torch is not None and torch.cuda.is_available() else None


def table(rows, headers) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def device_seconds(fn, runtime, warmup: int = 2) -> float:
    """Device time of the compute passes ``fn`` records (timestamp queries), after
    ``warmup`` untimed runs; falls back to wall time where timestamps are missing."""
    for _ in range(warmup):
        fn()
    runtime.sync()
    try:
        with runtime.gpu_timer() as t:
            fn()
        return t.seconds
    except RuntimeError:
        return best_of(fn, runtime.sync, repeat=1, warmup=0)
