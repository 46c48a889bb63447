"""Statistics of an array larger than one GPU buffer, on cubed with wgarray chunks.

A float32 matrix X of ROWS x COLS, generated chunk-wise from a counter hash (so no
chunk is ever read from disk and both backends see the same bits), gives its mean,
its standard deviation and its Gram matrix X.T @ X. The same cubed plan runs twice,
each in a fresh process: with NumPy chunks on the host, then with wgarray chunks
(``CUBED_BACKEND_ARRAY_API_MODULE=wgarray.cubed_backend``, one device per worker).
It prints both times, the peak memory of a worker, and how far the results agree.

    python3 examples/cubed_stats.py                 # small: seconds on lavapipe
    python3 examples/cubed_stats.py --full          # 32 GiB: 2**23 x 1024, 16 workers

See docs/cubed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

WGARRAY_BACKEND = "wgarray.cubed_backend"
SEED = 0x5EED
FULL = dict(rows=1 << 23, cols=1024, chunk_rows=1 << 16, workers=16)


def _mix(h):
    """A 32-bit integer finalizer (xor-shift-multiply): a well-spread hash of h."""
    h = h ^ (h >> 16)
    h = h * 0x7FEB352D
    h = h ^ (h >> 15)
    h = h * 0x846CA68B
    return h ^ (h >> 16)


def _generate(x, block_id=None, chunk_rows=None, seed=SEED):
    """The chunk at block_id: uniform [0, 1) float32 from a hash of (row, column).
    Written against the chunk namespace, so it runs on wgarray or NumPy alike (on
    wgarray all of it fuses into the kernel that consumes the chunk)."""
    from cubed.backend_array_api import namespace as xp

    rows, cols = x.shape
    r0 = block_id[0] * chunk_rows
    i = xp.reshape(xp.arange(r0, r0 + rows, dtype=xp.uint32), (rows, 1))
    j = xp.reshape(xp.arange(cols, dtype=xp.uint32), (1, cols))
    h = _mix(_mix(i + seed) ^ j)
    return xp.astype(h >> 8, xp.float32) * (1.0 / (1 << 24))


def _chunk_gram(b):
    """b.T @ b of one row chunk, as a (1, COLS, COLS) block of the partial sums."""
    from cubed.backend_array_api import namespace as xp

    cols = b.shape[1]
    return xp.reshape(xp.matmul(xp.permute_dims(b, (1, 0)), b), (1, cols, cols))


def _run_one(args) -> dict:
    """One backend, in this process: build the plan, compute it, report."""
    import cubed
    import cubed.array_api as cxp
    from cubed.runtime.types import Callback
    from cubed.utils import normalize_chunks

    class PeakMemory(Callback):
        """The largest resident set a worker reached, over every task."""

        def __init__(self):
            self.peak = 0

        def on_task_end(self, event):
            if event.peak_measured_mem_end:
                self.peak = max(self.peak, event.peak_measured_mem_end)

    chunk_bytes = args.chunk_rows * args.cols * 4
    spec = cubed.Spec(work_dir=args.work_dir, allowed_mem=args.allowed_mem or max(12 * chunk_bytes, 1 << 30),
                      executor_name=args.executor,
                      executor_options={"max_workers": args.workers} if args.executor == "processes" else {})
    chunks = normalize_chunks((args.chunk_rows, args.cols), shape=(args.rows, args.cols), dtype=np.float32)

    def generated():
        return cubed.map_blocks(_generate, dtype=np.float32, chunks=chunks, spec=spec, chunk_rows=args.chunk_rows)

    # Each statistic reads its own (identical) generated X: an array that two operations
    # of a plan read is stored whole in the work dir first, while an array with one
    # reader is fused into it, so its chunks never leave the worker (nor the device).
    # X.T @ X is the sum of per-chunk Gram matrices for the same reason: cubed's matmul
    # reads X twice (as X.T and as X).
    nblocks = len(chunks[0])
    partial = cubed.map_blocks(_chunk_gram, generated(), dtype=np.float32, new_axis=2,
                               chunks=((1,) * nblocks, (args.cols,), (args.cols,)))
    peak = PeakMemory()
    t0 = time.perf_counter()
    m, s, g = cubed.compute(cxp.mean(generated()), cxp.std(generated()), cxp.sum(partial, axis=0),
                            callbacks=[peak])
    seconds = time.perf_counter() - t0
    g = np.asarray(g)
    np.save(os.path.join(args.work_dir, f"gram-{args.backend}.npy"), g)
    out = dict(backend=args.backend, seconds=seconds, mean=float(np.asarray(m)), std=float(np.asarray(s)),
               peak_worker_bytes=peak.peak, gram_trace=float(np.trace(g, dtype=np.float64)))
    if args.backend == "wgarray":
        import wgarray

        dev = wgarray.__array_namespace_info__().default_device()
        out.update(device=str(dev), devices=len(wgarray.devices()), max_buffer_bytes=dev.max_buffer_bytes)
    return out


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=50_000)
    p.add_argument("--cols", type=int, default=48)
    p.add_argument("--chunk-rows", type=int, default=9_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--full", action="store_true", help=f"the GPU size: {FULL}")
    p.add_argument("--executor", default="processes", choices=["processes", "single-threaded", "threads"])
    p.add_argument("--backend", default="both", choices=["both", "numpy", "wgarray"])
    p.add_argument("--allowed-mem", default=None, help="cubed's memory bound per task (default: 12 chunks)")
    p.add_argument("--work-dir", default=None, help="cubed's intermediate store (default: a temp dir)")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one backend's report, for main()
    args = p.parse_args()
    if args.full:
        for k, v in FULL.items():
            setattr(args, k, v)

    if args.backend != "both":  # a child run: the backend must be chosen before cubed is imported
        if args.backend == "wgarray":
            os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] = WGARRAY_BACKEND
        else:
            os.environ.pop("CUBED_BACKEND_ARRAY_API_MODULE", None)
        out = _run_one(args)
        print(json.dumps(out) if args.json else out)
        return 0

    nbytes = args.rows * args.cols * 4
    print(f"X: {args.rows} x {args.cols} float32 = {_gib(nbytes)}, chunks of {args.chunk_rows} rows "
          f"({_gib(args.chunk_rows * args.cols * 4)}), {args.executor} executor, {args.workers} workers")
    print("computing mean(X), std(X) and X.T @ X on the same cubed plan:")
    reports = {}
    with tempfile.TemporaryDirectory(prefix="cubed-stats-", dir=args.work_dir) as work:
        for backend in ("numpy", "wgarray"):
            cmd = [sys.executable, os.path.abspath(__file__), "--backend", backend, "--json",
                   "--rows", str(args.rows), "--cols", str(args.cols), "--chunk-rows", str(args.chunk_rows),
                   "--workers", str(args.workers), "--executor", args.executor,
                   "--work-dir", os.path.join(work, backend)]
            if args.allowed_mem:
                cmd += ["--allowed-mem", args.allowed_mem]
            os.makedirs(os.path.join(work, backend))
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode:
                sys.stderr.write(run.stdout + run.stderr)
                return run.returncode
            r = reports[backend] = json.loads(run.stdout.strip().splitlines()[-1])
            peak = _gib(r["peak_worker_bytes"]) if r["peak_worker_bytes"] else "n/a (processes executor only)"
            where = f"  [{r['device']}; {r['devices']} adapter(s)]" if backend == "wgarray" else ""
            print(f"  cubed + {backend:8s} {r['seconds']:8.2f} s   mean {r['mean']:.6f}   std {r['std']:.6f}   "
                  f"peak worker RSS {peak}{where}")
        g_np = np.load(os.path.join(work, "numpy", "gram-numpy.npy"))
        g_wg = np.load(os.path.join(work, "wgarray", "gram-wgarray.npy"))
    wg, npr = reports["wgarray"], reports["numpy"]
    rel = float(np.max(np.abs(g_wg.astype(np.float64) - g_np)) / np.max(np.abs(g_np)))
    print(f"speed-up of wgarray chunks: {npr['seconds'] / wg['seconds']:.2f}x")
    print(f"X is {nbytes / wg['max_buffer_bytes']:.1f}x the device's largest buffer ({_gib(wg['max_buffer_bytes'])})")
    print(f"agreement: |mean diff| {abs(wg['mean'] - npr['mean']):.2e}, |std diff| {abs(wg['std'] - npr['std']):.2e}, "
          f"max |gram diff| / max |gram| {rel:.2e}  (expected mean 0.5, std {np.sqrt(1 / 12):.6f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
