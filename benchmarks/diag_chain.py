"""Device time (timestamp queries) of the fused chain ``exp(-(a - b)**2 / 2) * c + a``
over 2^27 float32 and of variants that leave one part out, of float32 division and of
broadcast differences (``X - C[None, :]``, ``X - v[:, None]``), beside the vec4 WGSL
kernels that move the same bytes: where a kernel's time above the roofline goes.

    python benchmarks/diag_chain.py [--log2n 27]

Prints one row per kernel: its mean device time over the rounds, and that time relative
to the roofline kernel of the same traffic (3 inputs + 1 output, 2 + 1, or a copy; a
broadcast row or column counts as no traffic). The divisions are timed twice: on the
device's own path (the short fma path where its fma is fused) and on the fma-free one.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import COPY_WGSL, heat, table  # noqa: E402
from bench_elementwise import ROOFLINE_WGSL  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray._graph import fusion  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402
from wgarray._runtime.numerics import float32_behaviour  # noqa: E402

ROOFLINE2_WGSL = (ROOFLINE_WGSL.replace("@group(0) @binding(2) var<storage, read> C: array<vec4<f32>>;\n", "")
                  .replace("binding(3)", "binding(2)").replace("binding(4)", "binding(3)")
                  .replace("A[i] + B[i] + C[i]", "A[i] + B[i]"))

VARIANTS = [
    ("chain: exp(-(a-b)**2 / 2) * c + a", 3, lambda a, b, c: xp.exp(-(a - b) ** 2 / 2) * c + a),
    ("chain with * 0.5 for / 2", 3, lambda a, b, c: xp.exp(-(a - b) ** 2 * 0.5) * c + a),
    ("chain with / 3", 3, lambda a, b, c: xp.exp(-(a - b) ** 2 / 3) * c + a),
    ("chain without exp: (-(a-b)**2 / 2) * c + a", 3, lambda a, b, c: (-(a - b) ** 2 / 2) * c + a),
    ("(a - b) * c + a", 3, lambda a, b, c: (a - b) * c + a),
    ("a / b (arrays)", 2, lambda a, b, c: a / b),
    ("a * b", 2, lambda a, b, c: a * b),
    ("exp(a - b)", 2, lambda a, b, c: xp.exp(a - b)),
    # broadcast operands (strided leaves): X = a as 8192 x 16384, a row and a column
    ("X - C[None, :] (row broadcast; X is a as 2-D)", 1,
     lambda a, b, c: _rows(a) - b[:_rows(a).shape[1]][None, :]),
    ("X - v[:, None] (column broadcast)", 1, lambda a, b, c: _rows(a) - c[:_rows(a).shape[0]][:, None]),
    ("X.T - v[:, None] (transposed and broadcast)", 1,
     lambda a, b, c: xp.matrix_transpose(_rows(a)) - c[:_rows(a).shape[1]][:, None]),
]


def _rows(a):
    n = a.shape[0]
    return xp.reshape(a, (1 << (n.bit_length() // 2 - 1), -1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=27)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    n = 1 << args.log2n
    device = default_device()
    rt = device.runtime
    rng = np.random.default_rng(0)
    a, b, c = (xp.asarray(rng.random(n, dtype=np.float32) + 0.5) for _ in range(3))
    xp.evaluate(a, b, c)

    def device_best(record) -> float:
        record()
        rt.sync()
        heat(rt)
        with rt.gpu_profile() as p:
            for _ in range(args.reps):
                record()
        rt.sync()
        secs = [s for _, s in p.kernels.values()]
        return sum(secs) / args.reps

    roof = {}
    out = rt.alloc(4 * n)
    for nin, src in ((3, ROOFLINE_WGSL), (2, ROOFLINE2_WGSL), (1, COPY_WGSL)):
        kernel = rt.kernel(("diag", "roof", nin), lambda: (f"roofline{nin}", src, [False] * nin + [True], False))
        groups = -(-(n // 4) // 256)
        params = (n // 4).to_bytes(4, "little") + b"\0" * 4 if nin > 1 else (n // 4).to_bytes(4, "little")
        bufs = [a._node.buf, b._node.buf, c._node.buf][:nin] + [out]
        roof[nin] = device_best(lambda: rt.dispatch(kernel, bufs, params, groups))
    rows = [(f"WGSL vec4 {'copy' if k == 1 else 'roofline'}, {k} in + 1 out", f"{t * 1e3:.3f}", f"{4 * (k + 1) * n / t / 1e12:.2f}", "1.00")
            for k, t in roof.items()]
    for label, nin, fn in VARIANTS:
        t = device_best(lambda: xp.evaluate(fn(a, b, c)))
        rows.append((label, f"{t * 1e3:.3f}", f"{4 * (nin + 1) * n / t / 1e12:.2f}", f"{t / roof[nin]:.2f}"))
    # the divisions again on the fma-free exact path (what a device without a fused fma
    # runs, and every device with WGARRAY_FMA_DIVISION=0)
    fusion.FMA_DIVISION = False
    try:
        for label, nin, fn in VARIANTS:
            if "/" in label and "/ 2" not in label:
                t = device_best(lambda: xp.evaluate(fn(a, b, c)))
                rows.append((label + ", fma-free path", f"{t * 1e3:.3f}", f"{4 * (nin + 1) * n / t / 1e12:.2f}",
                             f"{t / roof[nin]:.2f}"))
    finally:
        fusion.FMA_DIVISION = True
    print(f"device: {device.name} ({device.backend}); n = 2^{args.log2n} float32; device time per kernel "
          f"(timestamp queries, mean of {args.reps}); {float32_behaviour(device).describe()}")
    print(table(rows, ["kernel", "ms", "TB/s", "x roofline of its traffic"]))


if __name__ == "__main__":
    main()
