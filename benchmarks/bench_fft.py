"""FFTs side by side: wgarray vs NumPy (pocketfft, host) vs PyTorch on CUDA (cuFFT) and
CuPy where present. One benchmark group per workload; see conftest.py.

    python -m pytest benchmarks/bench_fft.py -o python_files='bench_*.py' --benchmark-only
    python benchmarks/bench_fft.py [--small]     # plain table: device time, wall time per
                                                  # op, torch, dispatches, bytes moved
    python benchmarks/bench_fft.py --generic      # and the device time of the generic tile
                                                  # kernel (radices as parameters) beside it
    python benchmarks/bench_fft.py --kernels      # and each kernel's device time (a pass
                                                  # of its own per dispatch: diagnosis only)

On a GPU each timed call queues ``INNER`` transforms and synchronizes once, and the
figure is per transform: one synchronization per transform would measure the host round
trip (~0.5 ms), not the transform. The plain script also gives wgarray's device time
(timestamp queries over the compute passes of one transform) and its dispatch count.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

if __name__ == "__main__" and "--small" in sys.argv:
    os.environ["WGARRAY_BENCH_SCALE"] = "small"  # read by conftest at its import
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from conftest import ALL, BACKENDS, check_close, libs, measure, size  # noqa: E402

RNG = np.random.default_rng(0)
SQ = size(4096, 128)
LOG2_R = size(24, 14)
SQ64 = size(2048, 64)
INNER = size(10, 1)

_host: dict = {}


def _complex(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def host(key: str) -> np.ndarray:
    """The NumPy input named ``key``, made once (every library gets the same data)."""
    if key not in _host:
        _host[key] = {
            "sq": lambda: _complex((SQ, SQ)),
            "sq64": lambda: _complex((SQ64, SQ64), np.complex128),
            "real": lambda: RNG.standard_normal(1 << LOG2_R).astype(np.float32),
            "half": lambda: _complex((1 << (LOG2_R - 1)) + 1),
            "realsq": lambda: RNG.standard_normal((SQ, SQ)).astype(np.float32),
        }[key]()
    return _host[key]


# name -> (input key, call on a namespace, NumPy reference on float64/complex128 input,
#          bytes of input + output, tolerance of the check)
WORKLOADS = {
    f"fftn {SQ}x{SQ} complex64": ("sq", lambda xp, z: xp.fft.fftn(z), lambda a: np.fft.fftn(a), 16 * SQ * SQ),
    f"fft rows {SQ}x{SQ} complex64 (axis -1)": ("sq", lambda xp, z: xp.fft.fft(z), lambda a: np.fft.fft(a),
                                                 16 * SQ * SQ),
    f"fft columns {SQ}x{SQ} complex64 (axis 0)": ("sq", lambda xp, z: xp.fft.fft(z, axis=0),
                                                   lambda a: np.fft.fft(a, axis=0), 16 * SQ * SQ),
    f"rfft 2^{LOG2_R} float32": ("real", lambda xp, x: xp.fft.rfft(x), lambda a: np.fft.rfft(a),
                                 12 * (1 << LOG2_R)),
    f"irfft 2^{LOG2_R} float32": ("half", lambda xp, h: xp.fft.irfft(h), lambda a: np.fft.irfft(a),
                                  12 * (1 << LOG2_R)),
    f"rfftn {SQ}x{SQ} float32": ("realsq", lambda xp, x: xp.fft.rfftn(x), lambda a: np.fft.rfftn(a),
                                 12 * SQ * SQ),
    f"fftn {SQ64}x{SQ64} complex128": ("sq64", lambda xp, z: xp.fft.fftn(z), lambda a: np.fft.fftn(a),
                                       32 * SQ64 * SQ64),
}


def _reference(name):
    key, _, ref, _ = WORKLOADS[name]
    a = host(key)
    return ref(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))


def _queued(be, fn):
    """(call, ops): on a GPU ``fn`` INNER times per call, each result queued."""
    inner = INNER if be.gpu else 1

    def run():
        for _ in range(inner - 1):
            be.evaluate(fn())
        return fn()
    return run, inner


@pytest.mark.parametrize("lib", libs(*ALL))
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_fft(benchmark, lib, name):
    key, call, _, nbytes = WORKLOADS[name]
    be = BACKENDS[lib]
    if name.endswith("complex128") and lib == "wgarray" and not be.dev.has_f64:
        pytest.skip("no shader-f64 on this device")
    xp = be.xp
    z = be.put(key, host(key))
    run, ops = _queued(be, lambda: call(xp, z))
    r = measure(benchmark, name, lib, run, ops=ops, nbytes=nbytes)
    check_close(be.to_numpy(r), _reference(name), rtol=1e-3, atol_of_max=1e-5, what=lib)


# ---------------------------------------------------------------- plain script

def _main() -> None:
    import time

    import wgarray as wx
    from _timing import cuda_torch, device_seconds, table
    from wgarray import debug
    from wgarray._kernels import fft as kfft

    dev = wx.__array_namespace_info__().default_device()
    rt = dev.runtime
    torch = cuda_torch()
    rows, per_kernel = [], []
    for name, (key, call, _, nbytes) in WORKLOADS.items():
        if name.endswith("complex128") and not dev.has_f64:
            continue
        a = host(key)
        z = wx.asarray(a)
        wx.evaluate(z)

        def one():
            wx.evaluate(call(wx, z))

        one()
        rt.sync()
        debug.reset_counters()
        one()
        rt.sync()
        n_disp = debug.counters()["dispatches"]
        dev_ms = device_seconds(one, rt) * 1e3
        generic_ms = "-"
        if "--generic" in sys.argv:
            kfft.PLANNED = False
            try:
                generic_ms = f"{device_seconds(one, rt) * 1e3:.3f}"
            finally:
                kfft.PLANNED = True

        if "--kernels" in sys.argv:
            with rt.gpu_profile() as prof:
                one()
                rt.sync()
            per_kernel += [(name, kname, n, f"{sec * 1e3:.3f}") for kname, (n, sec) in prof.kernels.items()]

        def many():
            for _ in range(INNER):
                one()
            rt.sync()

        many()
        t = time.perf_counter()
        many()
        wall_ms = (time.perf_counter() - t) * 1e3 / INNER
        got = np.asarray(call(wx, z))
        want = _reference(name)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        torch_ms = "-"
        if torch is not None:
            tz = torch.from_numpy(a).cuda()
            tcall = {"fftn": lambda: torch.fft.fftn(tz), "rfft": lambda: torch.fft.rfft(tz),
                     "irfft": lambda: torch.fft.irfft(tz), "rfftn": lambda: torch.fft.rfftn(tz)}
            if name.startswith("fft rows"):
                tf = lambda: torch.fft.fft(tz)  # noqa: E731
            elif name.startswith("fft columns"):
                tf = lambda: torch.fft.fft(tz, dim=0)  # noqa: E731
            else:
                tf = tcall[name.split()[0]]
            for _ in range(3):
                tf()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(INNER):
                tf()
            torch.cuda.synchronize()
            torch_ms = f"{(time.perf_counter() - t) * 1e3 / INNER:.3f}"
        rows.append((name, f"{dev_ms:.3f}", generic_ms, f"{wall_ms:.3f}", torch_ms, n_disp,
                     f"{nbytes / (dev_ms * 1e-3) / 1e9:.0f}", f"{err:.1e}"))
    print(f"device: {dev.name} ({dev.backend})")
    print(table(rows, ["workload", "wgarray device ms", "generic tiles device ms", f"wgarray ms/op ({INNER} queued)", "torch ms/op",
                       "dispatches", "GB/s (in+out / device time)", "max rel. error"]))
    if per_kernel:
        print(table(per_kernel, ["workload", "kernel", "dispatches", "device ms (all of them)"]))


if __name__ == "__main__":
    _main()
