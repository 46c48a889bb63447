"""The host path: synchronizing steps, Python cost per op, element writes, and the
scikit-learn / SciPy jobs they add up to; wgarray beside NumPy and PyTorch on CUDA.

    python -m pytest benchmarks/bench_host_path.py -p no:cacheprovider \\
        --benchmark-group-by=param:case --benchmark-columns=min,median,mean,rounds

Groups (``case``):

- ``step_mul_add_read``: ``y = y * 0.5 + 1.0; float(y[3])`` on 1000 float32;
- ``step_add_sum_read``: ``y = y + 1.0; float(xp.sum(y))`` on 1000 float32;
- ``roundtrip``: one tiny dispatch + copy + map + read, in raw wgpu (``raw_wgpu_map_sync``:
  wgpu-py's ``map_sync``; ``raw_wgpu_poll``: mapped without wgpu-py's extra submit and
  polled on the calling thread, as wgarray does) beside wgarray's ``float(y * 2)[0]``;
- ``host_lazy_op`` / ``host_reduction``: host time only (no sync) of building a lazy
  elementwise op, and of a reduction call with a fused prologue (axis sets (0,), (1,),
  None), on a realized 1000 x 64 float32 (the prologue ``(x - 1.5) ** 2`` built in the
  step: two lazy ops and the reduction); ``host_reduction_call``: the reduction call
  alone, of the prologue built once before (pending, never realized);
- ``fill_diagonal``: 3000 x 3000 float32, 300 element writes ``X[i, i] = 0`` then one read;
- ``euclidean_distances`` (20k x 64), ``standard_scaler_fit`` (2M x 64),
  ``gaussian_nb_fit`` (1M x 32, 5 classes): scikit-learn with array_api_dispatch;
- ``logsumexp_zscore``: SciPy ``logsumexp(axis=1)`` + ``zscore(axis=0)`` on 4M x 16.

Each wgarray case records the work counters of one step (dispatches, submits,
readbacks, realizations, element stores) in the benchmark's extra_info (``--benchmark-json``) and prints
them. WGARRAY_BENCH_SMALL=1 shrinks the large cases for a run on lavapipe, where only
host-time figures and counters mean anything.
"""
from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before SciPy or scikit-learn is imported

import sys

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import wgpu  # noqa: E402

import wgarray as wx  # noqa: E402
from wgarray import debug  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import cuda_torch, heat, raw_dispatch, raw_roundtrip_setup  # noqa: E402

SMALL = os.environ.get("WGARRAY_BENCH_SMALL", "") not in ("", "0")
SIZES = {
    "euclidean_distances": (2000, 64) if SMALL else (20000, 64),
    "standard_scaler_fit": (100_000, 64) if SMALL else (2_000_000, 64),
    "gaussian_nb_fit": (50_000, 32) if SMALL else (1_000_000, 32),
    "logsumexp_zscore": (200_000, 16) if SMALL else (4_000_000, 16),
    "fill_diagonal": (3000, 300),
}


# ----------------------------------------------------------------- libraries

TORCH = cuda_torch()
LIBS = ["numpy", "wgarray"] + (["torch"] if TORCH is not None else [])


def _ns(lib):
    if lib == "numpy":
        return np
    if lib == "wgarray":
        return wx
    import array_api_compat.torch as tns

    return tns


def _to(lib, host):
    if lib == "numpy":
        return host
    if lib == "wgarray":
        a = wx.asarray(host)
        wx.evaluate(a)
        return a
    return TORCH.from_numpy(host).cuda()


def _sync(lib, *arrays):
    """Wait for ``arrays`` (and everything before them) to be computed."""
    if lib == "wgarray":
        wx.evaluate(*[a for a in arrays if isinstance(a, wx.Array)])
        default_device().runtime.sync()
    elif lib == "torch":
        TORCH.cuda.synchronize()


def _heat(lib):
    """The GPU's clocks up before a GPU library's timed rounds: the host-time rounds and
    NumPy's jobs before them leave it idle, and a job of a few milliseconds with host
    gaps never clocks it up again (the same jobs measured 3-5x apart on an H200 run
    alone and after the rest of this file, the library timed first the slower)."""
    if lib != "numpy":
        heat(default_device().runtime)


def _counters(benchmark, lib, step):
    """Run ``step`` once more and record its work counters (wgarray only)."""
    if lib != "wgarray":
        return
    default_device().runtime.sync()
    debug.reset_counters()
    step()
    c = debug.counters()
    info = {k: c.get(k, 0) for k in ("dispatches", "stores", "submits", "readbacks", "realizations", "buffers_created")}
    benchmark.extra_info.update(info)
    print(f"\n  wgarray counters per step: {info}")


# --------------------------------------------------------------- step loops

@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ["step_mul_add_read", "step_add_sum_read"])
def test_step_loop(benchmark, case, lib):
    xp = _ns(lib)
    state = {"y": _to(lib, np.arange(1000, dtype=np.float32) * np.float32(1e-3))}
    if case == "step_mul_add_read":
        def step():
            y = state["y"] * 0.5 + 1.0
            state["y"] = y
            return float(y[3])
    else:
        def step():
            y = state["y"] + 1.0
            state["y"] = y
            return float(xp.sum(y))
    for _ in range(20):
        step()
    _heat(lib)
    benchmark.pedantic(step, rounds=300, iterations=1, warmup_rounds=20)
    _counters(benchmark, lib, step)
    assert np.isfinite(step())


# --------------------------------------------------------- raw wgpu round trip

def _raw_setup():
    dev = default_device().wgpu_device
    return (dev,) + raw_roundtrip_setup(dev)


@pytest.mark.parametrize("lib", ["raw_wgpu_map_sync", "raw_wgpu_poll", "wgarray"] + (["torch"] if TORCH else []))
@pytest.mark.parametrize("case", ["roundtrip"])
def test_roundtrip(benchmark, case, lib):
    if lib.startswith("raw"):
        dev, buf, staging, pipeline, bind = _raw_setup()
        poll = lib == "raw_wgpu_poll"

        def step():
            enc = dev.create_command_encoder()
            raw_dispatch(enc, pipeline, bind)
            enc.copy_buffer_to_buffer(buf, 0, staging, 0, 16)
            dev.queue.submit([enc.finish()])
            if poll:
                promise = staging.map_async("READ_NOSYNC", 0, 16)
                dev._poll_wait()
                promise.sync_wait()
            else:
                staging.map_sync(wgpu.MapMode.READ, 0, 16)
            v = np.frombuffer(staging.read_mapped(0, 16), np.float32)[0]
            staging.unmap()
            return float(v)
    else:
        xp = _ns(lib)
        y = _to(lib, np.arange(1000, dtype=np.float32))

        def step():
            return float((y * 2.0)[0])
    for _ in range(20):
        step()
    benchmark.pedantic(step, rounds=300, iterations=1, warmup_rounds=20)
    _counters(benchmark, lib, step)


# ------------------------------------------------------------ host time only

@pytest.mark.parametrize("case", ["host_lazy_op", "host_reduction", "host_reduction_call"])
@pytest.mark.parametrize("axis", [None, (0,), (1,)], ids=["all", "axis0", "axis1"])
def test_host_time(benchmark, case, axis):
    """Python cost on the calling thread of one call (building the op, or planning and
    recording the reduction's dispatch), no waiting."""
    if case == "host_lazy_op" and axis is not None:
        pytest.skip("one lazy-op case is enough")
    x = _to("wgarray", np.random.default_rng(0).random((1000, 64), dtype=np.float32))
    if case == "host_lazy_op":
        def step():
            return x * 2.0
    elif case == "host_reduction_call":
        pending = (x - 1.5) ** 2

        def step():
            return wx.sum(pending, axis=axis)
    else:
        def step():
            return wx.sum((x - 1.5) ** 2, axis=axis)
    rt = default_device().runtime
    for _ in range(50):
        step()
    # each round starts from a synchronized device (untimed), as a step of a loop does:
    # the buffers of earlier rounds are back in the pool
    benchmark.pedantic(step, setup=rt.sync, rounds=1000, warmup_rounds=20)
    _counters(benchmark, "wgarray", step)


# ------------------------------------------------------------ element writes

@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ["fill_diagonal"])
def test_fill_diagonal(benchmark, case, lib):
    n, writes = SIZES["fill_diagonal"]
    host = np.random.default_rng(0).random((n, n), dtype=np.float32)
    x = _to(lib, host)

    def step():
        for i in range(writes):
            x[i, i] = 0.0
        return float(x[writes - 1, writes - 2])
    benchmark.pedantic(step, rounds=5, iterations=1, warmup_rounds=1)
    _counters(benchmark, lib, step)
    assert float(x[writes - 1, writes - 1]) == 0.0


# -------------------------------------------------------- scikit-learn, SciPy

def _job(case):
    import sklearn

    sklearn.set_config(array_api_dispatch=True)
    if case == "euclidean_distances":
        from sklearn.metrics.pairwise import euclidean_distances

        return lambda X, y: (euclidean_distances(X),)
    if case == "standard_scaler_fit":
        from sklearn.preprocessing import StandardScaler

        def fit(X, y):
            s = StandardScaler().fit(X)
            return s.mean_, s.scale_
        return fit
    if case == "gaussian_nb_fit":
        from sklearn.naive_bayes import GaussianNB

        def fit(X, y):
            m = GaussianNB().fit(X, y)
            return m.theta_, m.var_
        return fit
    if case == "logsumexp_zscore":
        from scipy.special import logsumexp
        from scipy.stats import zscore

        return lambda X, y: (logsumexp(X, axis=1), zscore(X, axis=0))
    raise AssertionError(case)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ["euclidean_distances", "standard_scaler_fit", "gaussian_nb_fit",
                                  "logsumexp_zscore"])
def test_job(benchmark, case, lib):
    rows, cols = SIZES[case]
    rng = np.random.default_rng(0)
    host = rng.standard_normal((rows, cols)).astype(np.float32)
    labels = rng.integers(0, 5, rows).astype(np.int64)
    X = _to(lib, host)
    y = _to(lib, labels)
    job = _job(case)

    def step():
        out = job(X, y)
        _sync(lib, *out)
        return out
    step()
    _heat(lib)
    benchmark.pedantic(step, rounds=5, iterations=1, warmup_rounds=2)
    _counters(benchmark, lib, step)
