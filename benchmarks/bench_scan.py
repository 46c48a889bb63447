"""Scans and the fused statistics on the device, beside PyTorch (CUDA) in the same run.

- cumulative_sum / cumulative_prod over 2^28 float32 (the single-pass look-back):
  device time and bandwidth (8 bytes per element: one read, one write, the least any
  scan moves), as a fraction of the vec4 copy roofline; the same scan through the
  three-pass reduce-then-scan, the look-back without its window of predecessors, and through the look-back's fallback alone (0 polls,
  on 2^20), for comparison;
- cumulative_sum along each axis of a 2^14 x 2^14 float32 array (batched rows, columns);
- sum (the roofline check: it must stay at >= 90% of copy), mean, var, std over 2^28
  float32, with the dispatches each takes.

    python benchmarks/bench_scan.py            # 2^28 (a GPU); WGARRAY_BENCH_LOG2=20 for a quick run
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import COPY_WGSL, best_of, cuda_torch, device_seconds, table  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402
from wgarray._wgsl import scan as sc  # noqa: E402

REPS = 5


HOLD: dict = {}


def rate(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e12:.2f} TB/s" if bytes_per_s >= 1e11 else f"{bytes_per_s / 1e9:.2f} GB/s"


def dispatches(run) -> int:
    run()
    debug.reset_counters()
    run()
    return debug.counters()["dispatches"] // REPS


def timed(rt, make):
    """Device and wall seconds per call of ``make`` (REPS calls in one submission)."""
    def run():
        HOLD["r"] = [make() for _ in range(REPS)]
        xp.evaluate(*HOLD["r"])

    return device_seconds(run, rt) / REPS, best_of(run, rt.sync, repeat=5) / REPS, dispatches(run)


def main() -> None:
    log2 = int(os.environ.get("WGARRAY_BENCH_LOG2", "28"))
    n = 1 << log2
    device = default_device()
    rt = device.runtime
    torch = cuda_torch()
    rng = np.random.default_rng(0)
    rows = []

    bits = (rng.random(n) < 1 / 64).astype(np.float32)  # partial sums below 2^24: exact in float32
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(np.float32)  # partial products exact
    x = xp.asarray(bits)
    s = xp.asarray(signs)
    xp.evaluate(x, s)

    out = rt.alloc(4 * n)
    kernel = rt.kernel(("bench", "copy-roofline"), lambda: ("copy_roofline", COPY_WGSL, [False, True], False))

    def roof():
        for _ in range(REPS):
            rt.dispatch(kernel, [x._node.buf, out], (n // 4).to_bytes(4, "little"), -(-(n // 4) // 256))
        rt.flush()

    for _ in range(20):  # a cold GPU clocks low at first: keep it busy
        roof()
    rt.sync()
    d_copy = device_seconds(roof, rt) / REPS
    bw_copy = 8 * n / d_copy
    rows.append((f"vec4 copy 2^{log2} float32", f"{d_copy * 1e3:.3f}", rate(bw_copy), "roofline", "", ""))

    def scan_row(name, make, nbytes, check):
        d, w, k = timed(rt, make)
        bw = nbytes / d
        rows.append((name, f"{d * 1e3:.3f}", rate(bw), f"{bw / bw_copy:.0%} of copy",
                     f"wall {w * 1e3:.3f} ms, {k} dispatches", check()))
        return d

    def check_sum():
        got = np.asarray(HOLD["r"][-1])
        want = np.cumsum(bits, dtype=np.float64).astype(np.float32)
        return f"matches NumPy: {np.array_equal(got, want)}"

    def check_prod():
        got = np.asarray(HOLD["r"][-1])
        return f"matches NumPy: {np.array_equal(got, np.cumprod(signs))}"

    scan_row(f"cumulative_sum 2^{log2} float32", lambda: xp.cumulative_sum(x), 8 * n, check_sum)
    scan_row(f"cumulative_prod 2^{log2} float32", lambda: xp.cumulative_prod(s), 8 * n, check_prod)

    window = sc.LOOKBACK_WINDOW
    sc.LOOKBACK_WINDOW = 0
    try:  # the look-back one predecessor a step: each tile waits for the prefix before it
        scan_row("  the same, look-back without its window", lambda: xp.cumulative_sum(x), 8 * n, check_sum)
    finally:
        sc.LOOKBACK_WINDOW = window
    # the same scan through reduce-then-scan (the path of 64-bit and complex
    # accumulators): tile sums, their scan, the rescan
    saved = sc.LOOKBACK_TAGS
    sc.LOOKBACK_TAGS = ()
    try:
        scan_row("  the same, three passes (reduce-then-scan)", lambda: xp.cumulative_sum(x), 8 * n, check_sum)
    finally:
        sc.LOOKBACK_TAGS = saved
    polls = sc.LOOKBACK_POLLS
    sc.LOOKBACK_POLLS = 0
    try:  # every workgroup reduces the tiles before it itself: the no-progress worst case
        m0 = 1 << min(log2, 20)
        x0 = xp.asarray(bits[:m0])
        d0, _, _ = timed(rt, lambda: xp.cumulative_sum(x0))
        rows.append((f"  look-back fallback only, 2^{min(log2, 20)}", f"{d0 * 1e3:.3f}", rate(8 * m0 / d0), "", "", ""))
    finally:
        sc.LOOKBACK_POLLS = polls

    side = 1 << (log2 // 2)
    m_host = rng.integers(0, 2, (side, side)).astype(np.float32)  # rows of 2^14: exact
    m = xp.asarray(m_host)
    xp.evaluate(m)
    for axis in (1, 0):
        scan_row(f"cumulative_sum {side}x{side} float32 axis={axis}", lambda: xp.cumulative_sum(m, axis=axis),
                 8 * side * side,
                 lambda: f"matches NumPy: {np.array_equal(np.asarray(HOLD['r'][-1]), np.cumsum(m_host, axis=axis))}")
    del m

    r_host = rng.random(n, dtype=np.float32)
    r = xp.asarray(r_host)
    xp.evaluate(r)
    ref = {"sum": float(np.sum(r_host, dtype=np.float64))}
    for op in ("sum", "mean", "var", "std"):
        fn = getattr(xp, op)
        # a lazy `r * 1` each call: a reduction of the unchanged upload is answered
        # from wgarray's memo (``_known``) without a dispatch
        d, w, k = timed(rt, lambda: fn(r * 1.0))
        if d == 0:
            continue
        bw = 4 * n / d  # each reads the data once (var/std: one pass of moments)
        rows.append((f"{op} 2^{log2} float32", f"{d * 1e3:.3f}", rate(bw) + " read",
                     f"{bw / bw_copy:.0%} of copy", f"wall {w * 1e3:.3f} ms, {k} dispatches",
                     f"value {float(HOLD['r'][-1]):.6g}" + (f" (NumPy {ref['sum']:.6g})" if op == "sum" else "")))

    if torch is not None:
        tb = torch.from_numpy(bits).cuda()
        tr = torch.from_numpy(r_host).cuda()
        for name, f, nbytes in ((f"torch.cumsum 2^{log2} float32", lambda: torch.cumsum(tb, 0), 8 * n),
                                (f"torch.cumprod 2^{log2} float32", lambda: torch.cumprod(tb, 0), 8 * n),
                                (f"torch.sum 2^{log2} float32", lambda: tr.sum(), 4 * n),
                                (f"torch.var 2^{log2} float32", lambda: tr.var(), 4 * n)):
            t = best_of(lambda: [f() for _ in range(REPS)], torch.cuda.synchronize) / REPS
            rows.append((name, f"{t * 1e3:.3f}", rate(nbytes / t), "", "wall", ""))
    print(f"device: {device.name} ({device.backend}); device time from timestamp queries, {REPS} calls per submit")
    print(table(rows, ["operation", "ms", "bandwidth", "vs copy", "detail", "check"]))


if __name__ == "__main__":
    main()
