"""Why the host-path jobs of ``bench_host_path.py`` run 3-12x slower after the rest of
that file than alone (same work counters; the same on lavapipe in both orders; heating
the GPU does not close it). One process, each job timed (median of ROUNDS, synchronized
by a readback of its outputs) in three states:

    fresh     before anything else has run in the process
    after     after euclidean_distances 20k x 64 (the file's first job: a 1.6 GB result)
    emptied   the same, then the buffer pool and the bind-group cache emptied and gc run

with the wall time, the calling thread's CPU time (the host's share), the pool's cached
buffers and bytes, the bind groups cached and the Python objects tracked, so that what
grows beside the time shows. torch (CUDA) times the jobs once, in the same process.

    python benchmarks/diag_host_jobs.py [--rounds 5] [--small] [--torch-first]

``--torch-first`` runs torch's jobs before wgarray's (as bench_host_path.py interleaves
them): whether a live, used CUDA context in the process slows wgarray's Vulkan work.

``--small`` uses sizes that run in seconds on lavapipe (the numbers there are no claim).
The jobs and their sizes are ``bench_host_path.py``'s.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("SCIPY_ARRAY_API", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
import wgarray as wx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import cuda_torch, table  # noqa: E402


def _inputs(case, sizes, to):
    rows, cols = sizes[case]
    rng = np.random.default_rng(0)
    return to(rng.standard_normal((rows, cols)).astype(np.float32)), to(rng.integers(0, 5, rows).astype(np.int64))


def _time(step, sync, rounds):
    """(median wall s, median thread-CPU s) of ``sync(step())`` after two warm-up calls."""
    for _ in range(2):
        sync(step())
    walls, cpus = [], []
    for _ in range(rounds):
        w, c = time.perf_counter(), time.thread_time()
        sync(step())
        cpus.append(time.thread_time() - c)
        walls.append(time.perf_counter() - w)
    return statistics.median(walls), statistics.median(cpus)


def _wx_sync(out):
    for a in out:
        float(wx.sum(a))


def _state(rt):
    pool = rt.pool
    return (f"pool {len(pool.order)} buffers / {pool.cached_bytes / 2**20:.0f} MiB, "
            f"bind groups {len(rt._bind_groups)}, gc objects {len(gc.get_objects())}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--torch-first", action="store_true")
    args = parser.parse_args()
    if args.small:
        os.environ["WGARRAY_BENCH_SMALL"] = "1"
    import bench_host_path as bench  # its sizes read WGARRAY_BENCH_SMALL at import
    sizes, _job = bench.SIZES, bench._job
    rt = wx.__array_namespace_info__().default_device().runtime
    print(f"device: {wx.__array_namespace_info__().default_device().name}")
    jobs = ["standard_scaler_fit", "gaussian_nb_fit", "logsumexp_zscore"]
    data = {case: _inputs(case, sizes, wx.asarray) for case in jobs + ["euclidean_distances"]}
    rows = []

    def run(state):
        for case in jobs:
            X, y = data[case]
            fn = _job(case)
            wall, cpu = _time(lambda: fn(X, y), _wx_sync, args.rounds)
            rows.append([case, state, f"{wall * 1e3:.2f}", f"{cpu * 1e3:.2f}", _state(rt)])
            print(rows[-1], flush=True)

    torch = cuda_torch()

    def run_torch():
        for case in jobs:
            X, y = _inputs(case, sizes, lambda a: torch.as_tensor(a, device="cuda"))
            fn = _job(case)
            wall, cpu = _time(lambda: fn(X, y), lambda out: torch.cuda.synchronize(), args.rounds)
            rows.append([case, "torch", f"{wall * 1e3:.2f}", f"{cpu * 1e3:.2f}", ""])
            print(rows[-1], flush=True)

    if args.torch_first and torch is not None:
        run_torch()
    run("fresh")
    X, y = data["euclidean_distances"]
    euclid = _job("euclidean_distances")
    wall, _ = _time(lambda: euclid(X, y), _wx_sync, 2)
    print(f"euclidean_distances: {wall * 1e3:.1f} ms; {_state(rt)}", flush=True)
    run("after")
    rt.sync()
    rt.pool.trim(0, 0)
    rt._bind_groups.clear()
    gc.collect()
    run("emptied")

    if torch is not None and not args.torch_first:
        run_torch()
    print()
    print(table(rows, ["job", "state", "wall ms", "host CPU ms", "state after"]))


if __name__ == "__main__":
    main()
