"""Reductions and sorting on the device, beside PyTorch (CUDA) in the same run.

- sum over 2^28 float32: time, and bandwidth as a fraction of a vec4 read roofline;
- sort of 2^24 float32 beside torch.sort.

    python benchmarks/bench_reduce_sort.py
"""
from __future__ import annotations

import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import COPY_WGSL, best_of, device_seconds, table, try_import  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402



def main() -> None:
    device = default_device()
    rt = device.runtime
    rng = np.random.default_rng(0)
    rows = []
    torch = try_import("torch")
    cuda = torch is not None and torch.cuda.is_available()

    # --- sum
    n = 1 << 28
    host = rng.random(n, dtype=np.float32)
    x = xp.asarray(host)
    xp.evaluate(x)
    holder = {}
    reps = 10

    def wsum():  # reps sums in one submission: device throughput, not submit latency
        holder["s"] = [xp.sum(x) for _ in range(reps)]
        xp.evaluate(*holder["s"])

    wsum()
    got = float(holder["s"][-1])
    ref = float(host.astype(np.float64).sum())
    out = rt.alloc(4 * n)
    kernel = rt.kernel(("bench", "copy-roofline"), lambda: ("copy_roofline", COPY_WGSL, [False, True], False))
    params = (n // 4).to_bytes(4, "little")

    def roof():
        for _ in range(reps):
            rt.dispatch(kernel, [x._node.buf, out], params, -(-(n // 4) // 256))
        rt.flush()

    # a cold GPU clocks low for its first few hundred milliseconds: keep it busy first
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.5:
        roof()
        wsum()
    rt.sync()
    t_sum = best_of(wsum, rt.sync) / reps
    t_copy = best_of(roof, rt.sync) / reps
    # device time from timestamp queries: what the GPU spends, without Python or submits
    d_sum = device_seconds(wsum, rt) / reps
    d_copy = device_seconds(roof, rt) / reps
    bw_copy = 8 * n / d_copy
    bw_sum = 4 * n / d_sum
    rows.append(("sum 2^28 float32 (device time)", f"{d_sum * 1e3:.3f}", f"{bw_sum / 1e12:.2f} TB/s read",
                 f"{bw_sum / bw_copy:.0%} of copy roofline ({bw_copy / 1e12:.2f} TB/s)",
                 f"rel. err {abs(got - ref) / ref:.1e}"))
    rows.append(("sum 2^28 float32 (wall, incl. Python)", f"{t_sum * 1e3:.3f}", f"{4 * n / t_sum / 1e12:.2f} TB/s read",
                 f"copy wall {8 * n / t_copy / 1e12:.2f} TB/s", ""))
    if cuda:
        tx = torch.from_numpy(host).cuda()
        t_t = best_of(lambda: [tx.sum() for _ in range(reps)], torch.cuda.synchronize) / reps
        rows.append(("torch.sum 2^28 float32", f"{t_t * 1e3:.3f}", f"{4 * n / t_t / 1e12:.2f} TB/s",
                     f"wgarray / torch time {t_sum / t_t:.2f}x", ""))
    del x

    # --- sort
    n = 1 << 24
    host = rng.standard_normal(n).astype(np.float32)
    x = xp.asarray(host)
    xp.evaluate(x)

    def wsort():
        holder["o"] = xp.sort(x)
        xp.evaluate(holder["o"])

    t_sort = best_of(wsort, rt.sync, repeat=5)
    d_sort = device_seconds(wsort, rt)
    ok = np.array_equal(np.asarray(holder["o"]), np.sort(host))
    rows.append(("sort 2^24 float32 (wall)", f"{t_sort * 1e3:.3f}", f"{n / t_sort / 1e9:.2f} Gkeys/s",
                 f"device time {d_sort * 1e3:.3f} ms", f"matches NumPy: {ok}"))
    if cuda:
        tx = torch.from_numpy(host).cuda()
        t_t = best_of(lambda: torch.sort(tx), torch.cuda.synchronize, repeat=5)
        rows.append(("torch.sort 2^24 float32", f"{t_t * 1e3:.3f}", f"{n / t_t / 1e9:.2f} Gkeys/s",
                     f"wgarray / torch time {t_sort / t_t:.2f}x", ""))
    print(f"device: {device.name} ({device.backend}); median of repeated runs after warm-up")
    print(table(rows, ["operation", "ms", "throughput", "comparison", "check"]))


if __name__ == "__main__":
    main()
