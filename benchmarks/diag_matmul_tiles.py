"""Device time (timestamp queries) of the tiled matmul kernel under several tile shapes,
for float64 and float32: which (BM, BN, BK, RM, CN) suits a device. Each shape is forced
through the driver's tile choice, so the kernel and its parameters are the ones a
product would get; the row marked * is the driver's own choice.

    python benchmarks/diag_matmul_tiles.py [float64|float32] [M K N ...]

Default: float64 at 4096^3 and at scikit-learn's euclidean_distances block
(2000x64 @ 64x20000). Prints ms and TFLOP/s per shape, and the max relative error
against NumPy (float64) of each.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import heat, table  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray._kernels import matmul as kmm  # noqa: E402

# (BM, BN, the deepest BK tried, RM, CN), 256 threads each (WebGPU's default limit); each
# runs with the deepest slab up to BK that fits the 16 KiB of workgroup memory
SHAPES = [(128, 128, 32, 8, 8), (128, 64, 16, 8, 4), (64, 128, 16, 4, 8), (64, 64, 16, 4, 4),
          (256, 64, 16, 16, 4), (64, 256, 16, 4, 16), (128, 128, 8, 8, 8), (64, 64, 8, 4, 4)]


def main() -> None:
    args = sys.argv[1:]
    dtype = np.float32 if "float32" in args else np.float64
    nums = [int(a) for a in args if a not in ("float32", "float64")]
    problems = [tuple(nums[i:i + 3]) for i in range(0, len(nums) - 2, 3)] or [(4096, 4096, 4096),
                                                                               (2000, 64, 20000)]
    dev = xp.__array_namespace_info__().default_device()
    rt = dev.runtime
    itemsize = np.dtype(dtype).itemsize
    chosen = kmm._tile_config
    print(f"device: {dev}; {np.dtype(dtype).name}; device time per product (timestamp queries)")
    for M, K, N in problems:
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)
        want = a.astype(np.float64) @ b
        A, B = xp.asarray(a), xp.asarray(b)
        own = chosen(M, N, 1, itemsize, kmm._wide_smem(dev))
        rows = []
        for bm, bn, bk, rm, cn in SHAPES:
            smem = kmm._wide_smem(dev) if (bm, bn) == (128, 128) else kmm.SMEM_BYTES
            fits = [k for k in (32, 16, 8, 4) if k <= bk and (bm + bn) * k * itemsize <= smem]
            if not fits or (bm, bn, fits[0], rm, cn) in [r[0] for r in rows]:
                continue
            bk = fits[0]
            tile = (bm, bn, bk, rm, cn)
            kmm._tile_config = lambda *_, t=tile: t
            try:
                got = np.asarray(A @ B)
                err = float(np.abs(got - want).max() / np.abs(want).max())
                reps = max(1, min(20, int(2e11 // (2 * M * K * N))))
                for _ in range(2):
                    xp.evaluate(A @ B)
                rt.sync()
                heat(rt)
                with rt.gpu_timer() as t:
                    for _ in range(reps):
                        xp.evaluate(A @ B)
                sec = t.seconds / reps
            finally:
                kmm._tile_config = chosen
            mark = " *" if tile == own else ""
            rows.append(((bm, bn, bk, rm, cn), f"{bm}x{bn}x{bk} r{rm}x{cn}{mark}", f"{sec * 1e3:.3f}", f"{2 * M * K * N / sec / 1e12:.2f}",
                         f"{err:.1e}"))
        print(f"\n{M}x{K} @ {K}x{N}")
        print(table([r[1:] for r in rows], ["tile (BMxBNxBK, RMxCN)", "ms", "TFLOP/s", "max rel. error"]))


if __name__ == "__main__":
    main()
