"""Time each step of one k-means iteration on the device (developer aid)."""
import time
import numpy as np
import wgarray as xp
from wgarray._runtime.device import default_device
from wgarray._kmeans import synthetic, kmeans_pp

rt = default_device().runtime
X = xp.asarray(synthetic(1_000_000, 32, 16)); C = xp.asarray(kmeans_pp(np.asarray(X), 16))
x2 = xp.sum(X * X, axis=1, keepdims=True); ids = xp.arange(16)[None, :]
xp.evaluate(X, C, x2, ids); rt.sync()


def step(name, f):
    out = f(); xp.evaluate(out); rt.sync()  # warm
    t = time.perf_counter()
    for _ in range(5):
        out = f(); xp.evaluate(out)
    rt.sync()
    print(f"{name:28s} {1e3 * (time.perf_counter() - t) / 5:8.3f} ms")
    return out


xc = step("X @ C.T", lambda: X @ C.T)
dist = step("dist", lambda: x2 - 2 * xc + xp.sum(C * C, axis=1)[None, :])
labels = step("argmin(dist, axis=1)", lambda: xp.argmin(dist, axis=1))
onehot = step("onehot astype", lambda: xp.astype(labels[:, None] == ids, X.dtype))
counts = step("sum(onehot, axis=0)", lambda: xp.sum(onehot, axis=0))
sums = step("onehot.T @ X", lambda: onehot.T @ X)
step("lazy onehot.T @ X", lambda: xp.astype(labels[:, None] == ids, X.dtype).T @ X)
step("min(dist, axis=1)", lambda: xp.min(dist, axis=1))
step("sum(X*X, axis=1)", lambda: xp.sum(X * X, axis=1, keepdims=True))
