"""float64 atan2 on this device: ulp error against NumPy of variants of the quotient
correction (a device that contracts a * b - c into an fma changes what the residual
expression computes).  python benchmarks/diag_atan_probe.py"""
import os
import subprocess
import sys

VARIANTS = {
    "current": None,
    "launder_p": ("($T_launder(ay - pe.x) - pe.y)", "($T_launder(ay - $T_launder(pe.x)) - pe.y)"),
    "fma": ("($T_launder(ay - pe.x) - pe.y)", "fma(-q, ax, ay)"),
    "none": ("c = ($T_launder(ay - pe.x) - pe.y) / ax / (1.0 + q * q);", "c = 0.0;"),
}


def run(name):
    import numpy as np
    from wgarray._wgsl import ops, realmath as rm
    if VARIANTS[name]:
        old, new = VARIANTS[name]
        for k, v in rm._GENERIC.items():
            if k == "atan2":
                assert old in v, name
                rm._GENERIC[k] = v.replace(old, new)
        lib = rm._make_library()
        rm.LIBRARY.clear()
        rm.LIBRARY.update(lib)
        ops.LIBRARY.update(lib)   # the merged library the renderer reads
    import wgarray as xp
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from conftest import ulp_distance
    rng = np.random.default_rng(7)
    n = 100_000
    y = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
    x = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
    e = ulp_distance(np.asarray(xp.atan2(xp.asarray(y), xp.asarray(x))), np.arctan2(y, x))
    pos = x > 0
    print(f"{name:10s} max {e.max()} mean {e.mean():.4f}  x>0 mean {e[pos].mean():.4f}  x<0 mean {e[~pos].mean():.4f}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(sys.argv[1])
    else:
        for name in VARIANTS:
            subprocess.run([sys.executable, __file__, name], check=False)
