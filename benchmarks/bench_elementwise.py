"""The fused elementwise chain ``exp(-(a - b)**2 / 2) * c + a`` over 2^27 float32:
wgarray (one fused kernel) beside a hand-written vec4 WGSL kernel moving the same bytes
(3 inputs + 1 output: the roofline), PyTorch eager and CuPy when present; and the
Python cost of building one lazy op.

    python benchmarks/bench_elementwise.py [--log2n 27]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of, table, try_import  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray._runtime.numerics import float32_behaviour  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402

# Two hand-written kernels moving the same bytes with trivial math; the faster one is the
# roofline. (One vec4 per invocation, and a grid-stride loop over vec4s.)
ROOFLINE_WGSL = """
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> C: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> O: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> P: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * 65535u) * 256u + lid;
    if (i >= P[0]) { return; }
    O[i] = A[i] + B[i] + C[i];
}
"""
ROOFLINE_STRIDE_WGSL = ROOFLINE_WGSL.replace(
    "    if (i >= P[0]) { return; }\n    O[i] = A[i] + B[i] + C[i];",
    "    let stride = P[1];\n    for (var j = i; j < P[0]; j += stride) { O[j] = A[j] + B[j] + C[j]; }")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=27)
    parser.add_argument("--reps", type=int, default=20, help="kernels per timed batch")
    args = parser.parse_args()
    n = 1 << args.log2n
    reps = args.reps
    device = default_device()
    rt = device.runtime
    rng = np.random.default_rng(0)
    host = [rng.random(n, dtype=np.float32) for _ in range(3)]
    a, b, c = (xp.asarray(h) for h in host)
    xp.evaluate(a, b, c)

    def chain():
        for _ in range(reps):  # each result is dropped, so its buffer is reused from the pool
            xp.evaluate(xp.exp(-(a - b) ** 2 / 2) * c + a)

    t_w = best_of(chain, rt.sync) / reps
    res = np.asarray(xp.exp(-(a - b) ** 2 / 2) * c + a)
    ref = np.exp(-(host[0] - host[1]) ** 2 / 2) * host[2] + host[0]
    err = float(np.max(np.abs(res - ref) / np.maximum(np.abs(ref), 1e-30)))

    # the same chain with a divisor that is not a power of two: the full correctly
    # rounded float32 division (fma-corrected where the device's fma is fused)
    def chain3():
        for _ in range(reps):
            xp.evaluate(xp.exp(-(a - b) ** 2 / 3) * c + a)

    t_w3 = best_of(chain3, rt.sync) / reps
    exact3 = bool(np.array_equal(np.asarray((a - b) ** 2 / 3), np.square(host[0] - host[1]) / np.float32(3)))

    # roofline: same bytes, trivial math
    out = rt.alloc(4 * n)
    bufs = [a._node.buf, b._node.buf, c._node.buf, out]
    t_roof = float("inf")
    for name, src, groups in (("roofline", ROOFLINE_WGSL, -(-(n // 4) // 256)),
                              ("roofline-stride", ROOFLINE_STRIDE_WGSL, 132 * 16)):
        kernel = rt.kernel(("bench", name), lambda: (name, src, [False, False, False, True], False))
        params = (n // 4).to_bytes(4, "little") + (groups * 256).to_bytes(4, "little")

        def roof():
            for _ in range(reps):
                rt.dispatch(kernel, bufs, params, groups)
            rt.flush()

        t_roof = min(t_roof, best_of(roof, rt.sync) / reps)
    nbytes = 16 * n
    rows = [("wgarray fused", f"{t_w * 1e3:.3f}", f"{nbytes / t_w / 1e12:.2f}", "1.00"),
            ("wgarray fused, / 3 instead of / 2", f"{t_w3 * 1e3:.3f}", f"{nbytes / t_w3 / 1e12:.2f}", f"{t_w3 / t_w:.2f}"),
            ("WGSL vec4 roofline (same bytes)", f"{t_roof * 1e3:.3f}", f"{nbytes / t_roof / 1e12:.2f}", f"{t_roof / t_w:.2f}")]

    torch = try_import("torch")
    if torch is not None and torch.cuda.is_available():
        ta, tb, tc = (torch.from_numpy(h).cuda() for h in host)

        def tchain():
            for _ in range(reps):
                torch.exp(-(ta - tb) ** 2 / 2) * tc + ta

        t_t = best_of(tchain, torch.cuda.synchronize) / reps
        rows.append(("PyTorch eager (CUDA)", f"{t_t * 1e3:.3f}", f"{nbytes / t_t / 1e12:.2f}", f"{t_t / t_w:.2f}"))
    cp = try_import("cupy")
    if cp is not None:
        try:
            ca, cb, cc = (cp.asarray(h) for h in host)

            def cchain():
                for _ in range(reps):
                    cp.exp(-(ca - cb) ** 2 / 2) * cc + ca

            t_c = best_of(cchain, cp.cuda.Device().synchronize) / reps
            rows.append(("CuPy (CUDA)", f"{t_c * 1e3:.3f}", f"{nbytes / t_c / 1e12:.2f}", f"{t_c / t_w:.2f}"))
        except Exception as exc:  # no CUDA device
            print("cupy skipped:", exc)

    # Python cost of building one lazy op (no realization)
    samples = []
    for _ in range(2000):
        t = time.perf_counter()
        _ = a * 1.5
        samples.append(time.perf_counter() - t)
    build_us = statistics.median(samples) * 1e6

    print(f"device: {device.name} ({device.backend}); n = 2^{args.log2n} float32; "
          f"{reps} kernels per timed batch, median of 7; max rel. error vs NumPy {err:.1e}")
    print(table(rows, ["implementation", "ms per chain", "TB/s (16 B/elem)", "time relative to wgarray"]))
    print(f"wgarray / roofline time: {t_w / t_roof:.3f}x (with / 3: {t_w3 / t_roof:.3f}x); "
          f"Python cost of one lazy op: {build_us:.2f} us (median)")
    print(f"{float32_behaviour(device).describe()}; (a - b)**2 / 3 bit-equal to NumPy: {exact3}")


if __name__ == "__main__":
    main()
