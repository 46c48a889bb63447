"""Where a device's float32 division and sqrt go wrong, step by step (the WGSL
library's divide, its pieces, and signed-zero selects), against NumPy.

    python benchmarks/diag_f32_division.py
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/tests")
from test_wgsl_realmath import gpu_expr  # noqa: E402


def report(label, got, want):
    bad = ~((got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want)))
    print(f"{label:60s} {int(bad.sum()):6d} of {bad.size} differ", end="")
    i = np.flatnonzero(bad)[:3]
    print("" if not len(i) else f"   e.g. index {i.tolist()}: got {got[i].tolist()} want {want[i].tolist()}")
    return bad


def main() -> None:
    rng = np.random.default_rng(0)
    n = 4096
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    y = (rng.standard_normal(n) * 100).astype(np.float32)
    ones = np.ones(n, np.float32)
    want = (x.astype(np.float64) / y).astype(np.float32)
    rec = (1.0 / y.astype(np.float64)).astype(np.float32)
    report("x / y (device)", gpu_expr("in0[i] / in1[i]", "f32", [x, y]), want)
    report("f32_divide(x, y)", gpu_expr("f32_divide(in0[i], in1[i])", "f32", [x, y]), want)
    report("f32_div_rn(x, y)", gpu_expr("f32_div_rn(in0[i], in1[i])", "f32", [x, y]), want)
    report("f32_div_rn(ones, y)  (runtime 1.0)", gpu_expr("f32_div_rn(in0[i], in1[i])", "f32", [ones, y]), rec)
    report("f32_div_rn(1.0, y)   (constant 1.0)", gpu_expr("f32_div_rn(1.0, in0[i])", "f32", [y]), rec)
    report("f32_reciprocal(y)", gpu_expr("f32_reciprocal(in0[i])", "f32", [y]), rec)
    a = np.abs(x) / np.exp2(np.floor(np.log2(np.abs(x)))).astype(np.float32)
    b = np.abs(y) / np.exp2(np.floor(np.log2(np.abs(y)))).astype(np.float32)
    a, b = a.astype(np.float32), b.astype(np.float32)
    wab = (a.astype(np.float64) / b).astype(np.float32)
    report("a / b in [1, 2) (device)", gpu_expr("in0[i] / in1[i]", "f32", [a, b]), wab)
    report("f32_div_fix(a, b, a / b)", gpu_expr("f32_div_fix(in0[i], in1[i], in0[i] / in1[i])", "f32", [a, b]), wab)
    report("f32_div_fix(1.0, b, 1.0 / b)", gpu_expr("f32_div_fix(1.0, in0[i], 1.0 / in0[i])", "f32", [b]),
           (1.0 / b.astype(np.float64)).astype(np.float32))
    zero_want = np.where(x < 0, np.float32(-0.0), np.float32(0.0))
    report("select(0.0, -0.0, x < 0)", gpu_expr("select(0.0, -0.0, in0[i] < 0.0)", "f32", [x]), zero_want)
    report("bitcast<f32>(select(0u, 0x80000000u, x < 0))",
           gpu_expr("bitcast<f32>(select(0u, 0x80000000u, in0[i] < 0.0))", "f32", [x]), zero_want)
    neg = (x < 0).astype(np.float32)
    report("select(1.0, 2.0, x < 0)", gpu_expr("select(1.0, 2.0, in0[i] < 0.0)", "f32", [x]), 1 + neg)
    report("sign bit of select(0.0, -0.0, x < 0), as 0/1",
           gpu_expr("f32(bitcast<u32>(select(0.0, -0.0, in0[i] < 0.0)) >> 31u)", "f32", [x]), neg)
    report("sign bit of bitcast(select(0u, 1u << 31, x < 0)), as 0/1",
           gpu_expr("f32(bitcast<u32>(bitcast<f32>(select(0u, 0x80000000u, in0[i] < 0.0))) >> 31u)", "f32", [x]), neg)
    aq = (np.abs(x).astype(np.float64) / np.abs(y)).astype(np.float32)
    report("f32_div_rn(|x|, |y|)", gpu_expr("f32_div_rn(abs(in0[i]), abs(in1[i]))", "f32", [x, y]), aq)
    report("-f32_div_rn(|x|, |y|) where x / y < 0",
           gpu_expr("select(1.0, -1.0, (in0[i] < 0.0) != (in1[i] < 0.0)) * f32_div_rn(abs(in0[i]), abs(in1[i]))",
                    "f32", [x, y]), want)
    s = np.abs(x)
    report("sqrt(x) (device)", gpu_expr("sqrt(in0[i])", "f32", [s]), np.sqrt(s.astype(np.float64)).astype(np.float32))
    report("f32_sqrt(x)", gpu_expr("f32_sqrt(in0[i])", "f32", [s]), np.sqrt(s.astype(np.float64)).astype(np.float32))


if __name__ == "__main__":
    main()
