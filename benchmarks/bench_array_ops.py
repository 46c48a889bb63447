"""Array operations side by side: the fused elementwise chain (with the vec4 copy
roofline), reductions, cumulative sum, sort/argsort/unique, matmul (4096^3 and the
k-means shapes), and FFTs. One benchmark group per workload; see conftest.py.

    python -m pytest benchmarks/bench_array_ops.py -o python_files='bench_*.py' --benchmark-only
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL, BACKENDS, SMALL, check_close, libs, measure, size

RNG = np.random.default_rng(0)

LOG2_EW = size(27, 16)
N_EW = 1 << LOG2_EW
LOG2_RED = size(27, 16)
N_RED = 1 << LOG2_RED
LOG2_SORT = size(24, 14)
N_SORT = 1 << LOG2_SORT
MAT = size(4096, 256)
KM_N, KM_D, KM_K = size((1_000_000, 32, 16), (20_000, 8, 4))
FFT2 = size(4096, 64)
LOG2_RFFT = size(24, 12)
# Ops per timed call where one op is well under a millisecond on a GPU: a sync per op
# would measure the round trip, not the kernel.
INNER = size(10, 1)

_host: dict = {}


def host(key: str) -> np.ndarray:
    """The NumPy input named ``key``, made once (all libraries get the same data)."""
    if key not in _host:
        make = {
            "a": lambda: RNG.random(N_EW, dtype=np.float32),
            "b": lambda: RNG.random(N_EW, dtype=np.float32),
            "c": lambda: RNG.random(N_EW, dtype=np.float32),
            "red": lambda: RNG.random(N_RED, dtype=np.float32),
            "bits": lambda: RNG.integers(0, 2, N_SORT).astype(np.float32),  # exact partial sums
            "sort": lambda: RNG.random(N_SORT, dtype=np.float32),
            "ints": lambda: RNG.integers(0, 1 << 16, N_SORT, dtype=np.int32),
            "m1": lambda: RNG.random((MAT, MAT), dtype=np.float32),
            "m2": lambda: RNG.random((MAT, MAT), dtype=np.float32),
            "kx": lambda: RNG.standard_normal((KM_N, KM_D), dtype=np.float32),
            "kc": lambda: RNG.standard_normal((KM_K, KM_D), dtype=np.float32),
            "konehot": lambda: np.eye(KM_K, dtype=np.float32)[RNG.integers(0, KM_K, KM_N)],
            "fft2": lambda: (RNG.standard_normal((FFT2, FFT2)) + 1j * RNG.standard_normal((FFT2, FFT2))
                             ).astype(np.complex64),
            "rfft": lambda: RNG.standard_normal(1 << LOG2_RFFT).astype(np.float32),
        }[key]
        _host[key] = make()
    return _host[key]


def inputs(lib, *keys):
    be = BACKENDS[lib]
    return be, be.xp, [be.put(k, host(k)) for k in keys]


def repeat(be, fn):
    """(call, ops): on a GPU, ``fn`` INNER times per call, each result queued on the device
    and the last one returned; elsewhere ``fn`` once."""
    inner = INNER if be.gpu else 1

    def run():
        for _ in range(inner - 1):
            be.evaluate(fn())
        return fn()
    return run, inner


# ---------------------------------------------------------------- elementwise

EW_GROUP = f"elementwise exp(-(a-b)**2/2)*c + a, 2^{LOG2_EW} float32"


@pytest.mark.parametrize("lib", libs(*ALL))
def test_elementwise_chain(benchmark, lib):
    be, xp, (a, b, c) = inputs(lib, "a", "b", "c")
    r = measure(benchmark, EW_GROUP, lib, *repeat(be, lambda: xp.exp(-(a - b) ** 2 / 2) * c + a),
                nbytes=16 * N_EW)
    ha, hb, hc = host("a"), host("b"), host("c")
    check_close(be.to_numpy(r), np.exp(-(ha - hb) ** 2 / 2) * hc + ha, rtol=1e-5, what=lib)


def test_elementwise_chain_roofline(benchmark):
    """A hand-written WGSL kernel moving the same 16 bytes per element (three vec4 reads,
    one write, trivial math) on wgarray's device: the memory roofline."""
    from bench_elementwise import ROOFLINE_WGSL

    be, _, (a, b, c) = inputs("wgarray", "a", "b", "c")
    rt = be.dev.runtime
    out = rt.alloc(4 * N_EW)
    bufs = [a._node.buf, b._node.buf, c._node.buf, out]
    groups = -(-(N_EW // 4) // 256)
    kernel = rt.kernel(("bench", "roofline"), lambda: ("roofline", ROOFLINE_WGSL, [False, False, False, True], False))
    params = (N_EW // 4).to_bytes(4, "little") + (groups * 256).to_bytes(4, "little")

    def run():
        for _ in range(INNER):
            rt.dispatch(kernel, bufs, params, groups)
        rt.flush()

    measure(benchmark, EW_GROUP, "WGSL vec4 roofline", run, ops=INNER, nbytes=16 * N_EW,
            sync=lambda r: rt.sync())


# ---------------------------------------------------------------- reductions and scan

@pytest.mark.parametrize("lib", libs(*ALL))
@pytest.mark.parametrize("op", ["sum", "mean", "var"])
def test_reduction(benchmark, lib, op):
    be, xp, (x,) = inputs(lib, "red")
    fn = getattr(xp, op)
    r = measure(benchmark, f"{op}, 2^{LOG2_RED} float32", lib, *repeat(be, lambda: fn(x)),
                 nbytes=4 * N_RED)
    want = getattr(np, op)(host("red").astype(np.float64))
    check_close(float(be.to_numpy(r)), want, rtol=1e-4, what=f"{lib} {op}")


@pytest.mark.parametrize("lib", libs(*ALL))
def test_cumulative_sum(benchmark, lib):
    be, xp, (x,) = inputs(lib, "bits")
    r = measure(benchmark, f"cumulative_sum, 2^{LOG2_SORT} float32", lib,
                *repeat(be, lambda: xp.cumulative_sum(x)), nbytes=8 * N_SORT)
    np.testing.assert_array_equal(be.to_numpy(r), np.cumsum(host("bits"), dtype=np.float64).astype(np.float32))


# ---------------------------------------------------------------- sort, argsort, unique

@pytest.mark.parametrize("lib", libs(*ALL))
def test_sort(benchmark, lib):
    be, xp, (x,) = inputs(lib, "sort")
    r = measure(benchmark, f"sort, 2^{LOG2_SORT} float32", lib, lambda: xp.sort(x), nbytes=8 * N_SORT)
    np.testing.assert_array_equal(be.to_numpy(r), np.sort(host("sort")))


@pytest.mark.parametrize("lib", libs(*ALL))
def test_argsort(benchmark, lib):
    be, xp, (x,) = inputs(lib, "sort")
    r = measure(benchmark, f"argsort, 2^{LOG2_SORT} float32", lib, lambda: xp.argsort(x), nbytes=8 * N_SORT)
    h = host("sort")
    np.testing.assert_array_equal(h[be.to_numpy(r)], np.sort(h))


@pytest.mark.parametrize("lib", libs(*ALL))
def test_unique_values(benchmark, lib):
    be, xp, (x,) = inputs(lib, "ints")
    r = measure(benchmark, f"unique_values, 2^{LOG2_SORT} int32 in [0, 2^16)", lib,
                lambda: xp.unique_values(x))
    got = np.sort(be.to_numpy(r))  # the standard leaves the order open
    np.testing.assert_array_equal(got, np.unique(host("ints")))


# ---------------------------------------------------------------- matmul

@pytest.mark.parametrize("lib", libs(*ALL))
def test_matmul_square(benchmark, lib):
    be, xp, (a, b) = inputs(lib, "m1", "m2")
    r = measure(benchmark, f"matmul {MAT}^3 float32", lib, lambda: a @ b, flops=2.0 * MAT ** 3,
                rounds=3 if lib == "numpy" and not SMALL else None)
    want = host("m1").astype(np.float64) @ host("m2").astype(np.float64)
    check_close(be.to_numpy(r), want, rtol=1e-4, atol_of_max=1e-5, what=lib)


@pytest.mark.parametrize("lib", libs(*ALL))
def test_matmul_kmeans_distances(benchmark, lib):
    be, xp, (x, c) = inputs(lib, "kx", "kc")
    r = measure(benchmark, f"matmul X @ C.T ({KM_N}x{KM_D} @ {KM_D}x{KM_K}) float32", lib,
                *repeat(be, lambda: x @ c.T), flops=2.0 * KM_N * KM_D * KM_K)
    want = host("kx").astype(np.float64) @ host("kc").T.astype(np.float64)
    check_close(be.to_numpy(r), want, rtol=1e-4, atol_of_max=1e-5, what=lib)


@pytest.mark.parametrize("lib", libs(*ALL))
def test_matmul_kmeans_sums(benchmark, lib):
    be, xp, (o, x) = inputs(lib, "konehot", "kx")
    r = measure(benchmark, f"matmul onehot.T @ X ({KM_K}x{KM_N} @ {KM_N}x{KM_D}) float32", lib,
                *repeat(be, lambda: o.T @ x), flops=2.0 * KM_N * KM_D * KM_K)
    want = host("konehot").T.astype(np.float64) @ host("kx").astype(np.float64)
    check_close(be.to_numpy(r), want, rtol=1e-4, atol_of_max=1e-5, what=lib)


# ---------------------------------------------------------------- fft

@pytest.mark.parametrize("lib", libs(*ALL))
def test_fftn(benchmark, lib):
    be, xp, (z,) = inputs(lib, "fft2")
    r = measure(benchmark, f"fftn {FFT2}x{FFT2} complex64", lib, *repeat(be, lambda: xp.fft.fftn(z)),
                nbytes=16 * FFT2 ** 2)
    check_close(be.to_numpy(r), np.fft.fftn(host("fft2").astype(np.complex128)), rtol=1e-3,
                atol_of_max=1e-5, what=lib)


@pytest.mark.parametrize("lib", libs(*ALL))
def test_rfft(benchmark, lib):
    be, xp, (x,) = inputs(lib, "rfft")
    r = measure(benchmark, f"rfft 2^{LOG2_RFFT} float32", lib, *repeat(be, lambda: xp.fft.rfft(x)),
                nbytes=12 * (1 << LOG2_RFFT))
    check_close(be.to_numpy(r), np.fft.rfft(host("rfft").astype(np.float64)), rtol=1e-3,
                atol_of_max=1e-5, what=lib)
