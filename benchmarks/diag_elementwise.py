"""Diagnose the fused chain: Python vs device time, per-op cost (developer aid)."""
import time
import numpy as np
import wgarray as xp
from wgarray._runtime.device import default_device

n = 1 << 27
rt = default_device().runtime
a, b, c = (xp.asarray(np.random.rand(n).astype(np.float32)) for _ in range(3))
xp.evaluate(a, b, c); rt.sync()
variants = {
    "full": lambda: xp.exp(-(a - b) ** 2 / 2) * c + a,
    "noexp": lambda: (-(a - b) ** 2 / 2) * c + a,
    "nodiv": lambda: xp.exp(-(a - b) ** 2 * 0.5) * c + a,
    "add3": lambda: a + b + c,
    "exp": lambda: xp.exp(a),
    "div": lambda: a / b,
    "pow": lambda: xp.pow(a, b),
}
for name, f in variants.items():
    o = f(); xp.evaluate(o); rt.sync()
    xp.debug.reset_counters()
    t0 = time.perf_counter()
    outs = []
    for _ in range(20):
        o = f(); xp.evaluate(o); outs.append(o)
    t1 = time.perf_counter()
    rt.sync()
    t2 = time.perf_counter()
    print(f"{name:6s} python+submit {1e3*(t1-t0)/20:.3f} ms/it, total {1e3*(t2-t0)/20:.3f} ms/it", xp.debug.counters()["pipelines_compiled"], xp.debug.counters()["dispatches"])
