"""The early submit on and off: wall time of workloads whose host records many
dispatches before it waits (``runtime.EARLY_SUBMIT_US``: a batch recorded for that long
is submitted at its next dispatch, so the device starts while the host records the
rest; the interval doubles with each such submit until the host waits again).

    python benchmarks/diag_early_submit.py cholesky:1024 solve:1024 qr:1024 lda
    python benchmarks/diag_early_submit.py --us 0,100,250,500 --torch cholesky:1024 cholesky:4096
    python benchmarks/diag_early_submit.py --no-programs cholesky:1024   # factorizations' drivers run each call

Each setting is timed in turn within every round (7 rounds; the median is shown), so a
clock or host drift falls on all of them alike; workloads and torch's figures as in
``diag_profile.py`` (wall ms, synchronized by a readback of one element).
"""
from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diag_profile import KERNELS, torch_ms, workload, xp  # noqa: E402
from _timing import heat, table  # noqa: E402
from wgarray import debug  # noqa: E402


def main(specs, settings, with_torch):
    rt = xp.asarray(0.0).device.runtime
    print(f"device: {xp.asarray(0.0).device.name}")
    rows = []
    for spec in specs:
        label, fn = workload(spec)
        walls = {us: [] for us in settings}
        submits = {}
        for us in settings:  # warm: pipelines compiled, pools filled, each setting twice
            rt.early_submit_s = rt._early_s = us * 1e-6 if us > 0 else None
            for _ in range(2):
                complex(fn())
        heat(rt)
        for _ in range(7):
            for us in settings:
                rt.early_submit_s = rt._early_s = us * 1e-6 if us > 0 else None
                debug.reset_counters()
                t = time.perf_counter()
                complex(fn())
                walls[us].append(time.perf_counter() - t)
                submits[us] = debug.counters()["submits"]
        # where the off setting's wall goes: the host's call alone (recording, and any
        # readback inside it), and the device's compute passes (timestamps around each
        # pass: kernels and the gaps between them, not the time between submits)
        rt.early_submit_s = rt._early_s = None
        calls, passes = [], []
        for _ in range(5):
            t = time.perf_counter()
            out = fn()
            calls.append(time.perf_counter() - t)
            complex(out)
            with rt.gpu_timer() as timer:
                complex(fn())
            passes.append(timer.seconds)
        torch = torch_ms(spec) if with_torch and spec.partition(":")[0] in KERNELS else None
        rows.append([label] + [f"{statistics.median(walls[us]) * 1e3:.2f} ({submits[us]})" for us in settings]
                    + [f"{statistics.median(calls) * 1e3:.2f}", f"{statistics.median(passes) * 1e3:.2f}"]
                    + ([f"{torch:.3f}" if torch is not None else "-"] if with_torch else []))
    rt.early_submit_s = rt._early_s = None
    heads = ["workload"] + [("off" if us <= 0 else f"{us:g} us") + " ms (submits)" for us in settings]
    heads += ["host call ms", "device passes ms"]
    print(table(rows, heads + (["torch ms"] if with_torch else [])))


if __name__ == "__main__":
    args = sys.argv[1:]
    settings = [0.0, 250.0]
    if "--us" in args:
        i = args.index("--us")
        settings = [float(v) for v in args[i + 1].split(",")]
        del args[i:i + 2]
    with_torch = "--torch" in args
    if "--no-programs" in args:  # recorded programs off (``_kernels/program.py``)
        from wgarray._kernels import program
        program.PROGRAMS = False
    main([a for a in args if a not in ("--torch", "--no-programs")] or ["cholesky:1024", "solve:1024", "qr:1024"], settings, with_torch)
