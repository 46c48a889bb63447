"""The pieces of stdtr and gdtr (whose argument wgarray forms in the type and whose
rounding error goes back in to first order) evaluated one by one on this device, each
as its own kernel, beside the whole function through ``wgarray.special``: where a
device's value departs from lavapipe's (the same script run there), the piece that
departs first is the culprit.

    python benchmarks/diag_formed_parts.py
"""
from __future__ import annotations

import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # this tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import wgarray as xp  # noqa: E402
from wgarray._wgsl.snippets import resolve  # noqa: E402
from wgarray._wgsl.realmath import LIBRARY as REAL  # noqa: E402
from wgarray._wgsl.specialmath import LIBRARY as SPECIAL  # noqa: E402
from wgsl_kernel import run_wgsl  # noqa: E402

TYPES = {"f32": np.float32, "f64": np.float64}

# (function, type, arguments): the worst points of an H100 run
POINTS = [("stdtr", "f64", (1232.8467394420659, -26.366508987303554)),
          ("stdtr", "f32", (3511.191650390625, -12.74275016784668)),
          ("gdtr", "f32", (3.0, 316.2277526855469, 48.06380844116211))]

# the pieces, as WGSL expressions of in0, in1, in2 (one kernel each)
PIECES = {
    "stdtr": [
        ("t2 = two_prod(t, t)", "{T}_two_prod(in1[i], in1[i])"),
        ("s = two_sum(df, t2.x)", "{T}_two_sum(in0[i], {T}_two_prod(in1[i], in1[i]).x)"),
        ("w = div_dd(df, 0, s.x, s.y + t2.y)",
         "{T}_div_dd(in0[i], 0.0, {T}_two_sum(in0[i], {T}_two_prod(in1[i], in1[i]).x).x, "
         "{T}_two_sum(in0[i], {T}_two_prod(in1[i], in1[i]).x).y + {T}_two_prod(in1[i], in1[i]).y)"),
        # div_dd's own steps (diag_dd below), on the same n, d, dl
        ("q = n / d, p.x of two_prod(q, d)", "diag_dd(in0[i], in1[i], 0)"),
        ("p.y, r1 = n - p.x", "diag_dd(in0[i], in1[i], 1)"),
        ("r2 = r1 - p.y, r3 = 0 - q dl", "diag_dd(in0[i], in1[i], 2)"),
        ("r2 + r3, (r2 + r3) / d", "diag_dd(in0[i], in1[i], 3)"),
        ("stdtr (one kernel)", "vec2<{T}>({T}_stdtr(in0[i], in1[i]), 0.0)"),
    ],
    "gdtr": [
        ("y = two_prod(a, x)", "{T}_two_prod(in0[i], in2[i])"),
        ("igam_pqf(b, y.x).xy", "{T}_igam_pqf(in1[i], {T}_two_prod(in0[i], in2[i]).x).xy"),
        ("igam_pqf(b, y.x).z, 0", "vec2<{T}>({T}_igam_pqf(in1[i], {T}_two_prod(in0[i], in2[i]).x).z, 0.0)"),
        ("gdtr (one kernel)", "vec2<{T}>({T}_gdtr(in0[i], in1[i], in2[i]), 0.0)"),
    ],
}


# div_dd(df, 0, d, dl) for stdtr's d = df + t^2 (double length) step by step
DIAG_DD = """
fn diag_dd(df: {T}, t: {T}, which: i32) -> vec2<{T}> {
    let t2 = {T}_two_prod(t, t);
    let s = {T}_two_sum(df, t2.x);
    let dh = s.x;
    let dl = s.y + t2.y;
    let q = {T}_launder(df / dh);
    let p = {T}_two_prod(q, dh);
    let r1 = {T}_launder(df - p.x);   // (as div_dd)
    let r2 = r1 - p.y;
    let r3 = 0.0 - q * dl;
    if (which == 0) { return vec2<{T}>(q, p.x); }
    if (which == 1) { return vec2<{T}>(p.y, r1); }
    if (which == 2) { return vec2<{T}>(r2, r3); }
    return vec2<{T}>(r2 + r3, (r2 + r3) / dh);
}"""


def piece(expr: str, T: str, args) -> np.ndarray:
    dt = TYPES[T]
    extra = DIAG_DD.replace("{T}", T) if "diag_dd" in expr else ""
    prelude = resolve({**REAL, **SPECIAL}, sorted(set(re.findall(rf"\b{T}_\w+", expr + extra)))) + extra
    used = [k for k in range(len(args)) if f"in{k}[i]" in expr]  # (layout "auto" drops the rest)
    for j, k in enumerate(used):
        expr = expr.replace(f"in{k}[i]", f"in{j}_[i]")
    expr = expr.replace("_[i]", "[i]")
    # two elements each: out is read as 2n scalars (vec2 per element)
    return run_wgsl(expr, [(T, np.asarray([args[k]] * 2, dt)) for k in used], f"vec2<{T}>", dt, prelude, n=2)


def main():
    dev = xp.__array_namespace_info__().default_device()
    print(f"device: {dev.name}")
    for name, T, args in POINTS:
        dt = TYPES[T]
        print(f"## {name} {T} {args}")
        for label, expr in PIECES[name]:
            v = piece(expr.replace("{T}", T), T, args)
            print(f"   {label:40s} {float(v[0])!r:26} {float(v[1])!r}")
        whole = getattr(xp.special, name)(*[xp.asarray(np.asarray([a], dt)) for a in args])
        print(f"   {'wgarray.special.' + name:40s} {float(np.asarray(whole)[0])!r}")


if __name__ == "__main__":
    main()
