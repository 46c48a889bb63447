"""cubed with wgarray chunks (``CUBED_BACKEND_ARRAY_API_MODULE=wgarray.cubed_backend``)
against NumPy: elementwise, reductions (nan-reductions too), matmul, indexing,
concat/stack and rechunk, on arrays whose chunk boundaries do not divide their shape,
with the single-threaded and the processes executors; the per-process device choice
and the refusal of a forked child."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

_had_device_env = "WGARRAY_DEVICE" in os.environ
os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] = "wgarray.cubed_backend"
cubed = pytest.importorskip("cubed", reason="cubed is not installed (pip install -e .[test])")

import cubed.array_api as cxp  # noqa: E402
from cubed.backend_array_api import namespace as chunk_namespace  # noqa: E402
from cubed.runtime.executors.local import ProcessesExecutor, ThreadsExecutor  # noqa: E402

import wgarray  # noqa: E402
from wgarray._runtime import device as _device  # noqa: E402
from conftest import HAS_F64  # noqa: E402

if chunk_namespace.__name__ != "wgarray.cubed_backend":
    pytest.skip(f"cubed was imported before with backend {chunk_namespace.__name__}", allow_module_level=True)

# cubed's mean, var and std (and nanmean) accumulate chunk results in float64.
needs_f64 = pytest.mark.skipif(not HAS_F64, reason="cubed accumulates mean/var in float64, absent on this device")


@pytest.fixture(scope="module", autouse=True)
def _restore_device_env():
    yield
    if not _had_device_env:  # importing wgarray.cubed_backend set the per-process default
        os.environ.pop("WGARRAY_DEVICE", None)


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return cubed.Spec(work_dir=str(tmp_path_factory.mktemp("cubed")), allowed_mem="100MB",
                      executor_name="single-threaded")


def _host(shape, seed, specials=False):
    """Integer-valued float32 data, so sums and products are exact in any order."""
    a = np.random.default_rng(seed).integers(-8, 9, shape).astype(np.float32)
    if specials:
        flat = a.reshape(-1)
        flat[[1, 5, 11]] = [np.nan, np.inf, -np.inf]
        flat[[2, 3]] = [-0.0, 0.0]
    return a


def _check(result, expected, signed_zeros=True):
    """cubed's result is a wgarray array holding exactly NumPy's values (``signed_zeros``
    False: a zero's sign is left open, as for the exact-zero sums of a matrix product,
    whose sign depends on the order and fusing of the products)."""
    assert isinstance(result, wgarray.Array), type(result)
    got = np.asarray(result)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype)
    np.testing.assert_array_equal(got, expected)
    if signed_zeros and np.issubdtype(expected.dtype, np.floating):  # -0.0 stays -0.0
        # (a NaN's sign is left open: x86 makes inf - inf negative, NVIDIA positive)
        keep = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(got)[keep], np.signbit(expected)[keep])


A = _host((11, 7), 0, specials=True)
B = _host((7, 5), 1)
R = _host((11, 7), 2)  # finite


def test_chunk_namespace_is_wgarray_and_dtypes_read_as_numpy(spec):
    assert np.dtype(wgarray.int32) == np.int32 and np.dtype(wgarray.float32) == np.float32
    assert np.zeros(2, dtype=wgarray.uint8).dtype == np.uint8
    seen = []

    def probe(block):
        seen.append(type(block))
        return block

    cubed.map_blocks(probe, cubed.from_array(R, chunks=(4, 3), spec=spec), dtype=R.dtype).compute()
    assert seen and all(t is wgarray.Array for t in seen), seen


@pytest.mark.parametrize("name, build, reference", [
    ("arith-specials", lambda x, r: x * 2 + r - 1.5, lambda x, r: x * np.float32(2) + r - np.float32(1.5)),
    ("broadcast-row", lambda x, r: x + r[3], lambda x, r: x + r[3]),
    ("where-isnan", lambda x, r: cxp.where(cxp.isnan(x), r, cxp.maximum(x, r)),
     lambda x, r: np.where(np.isnan(x), r, np.maximum(x, r))),
    ("astype-int", lambda x, r: cxp.astype(r, cxp.int32) // 3, lambda x, r: r.astype(np.int32) // 3),
    ("negate-zero", lambda x, r: -x, lambda x, r: -x),
])
def test_elementwise(spec, name, build, reference):
    x, r = cubed.from_array(A, chunks=(4, 3), spec=spec), cubed.from_array(R, chunks=(5, 2), spec=spec)
    _check(build(x, r).compute(), reference(A, R))


@pytest.mark.parametrize("name, build, reference", [
    ("sum-axis0", lambda x: cxp.sum(x, axis=0), lambda a: a.sum(0)),
    ("sum-all", lambda x: cxp.sum(x), lambda a: a.sum()),
    ("sum-int32-to-int64", lambda x: cxp.sum(cxp.astype(x, cxp.int32), axis=1),
     lambda a: a.astype(np.int32).sum(1, dtype=np.int64)),
    ("prod-axis1", lambda x: cxp.prod(x[:, :4] * 0 + 2, axis=1), lambda a: (a[:, :4] * 0 + 2).prod(1)),
    ("max-axis1", lambda x: cxp.max(x, axis=1), lambda a: a.max(1)),
    ("min-keepdims", lambda x: cxp.min(x, axis=0, keepdims=True), lambda a: a.min(0, keepdims=True)),
    ("argmax-axis0", lambda x: cxp.argmax(x, axis=0), lambda a: a.argmax(0)),
    ("any-axis0", lambda x: cxp.any(x > 7, axis=0), lambda a: (a > 7).any(0)),
])
def test_reductions(spec, name, build, reference):
    _check(build(cubed.from_array(R, chunks=(4, 3), spec=spec)).compute(), reference(R))


def test_reductions_propagate_nan_and_inf(spec):
    x = cubed.from_array(A, chunks=(4, 3), spec=spec)
    _check(cxp.sum(x, axis=0).compute(), A.sum(0))
    _check(cxp.max(x, axis=0).compute(), A.max(0))


def test_nansum_counts_nan_as_zero(spec):
    x = cubed.from_array(A, chunks=(4, 3), spec=spec)
    _check(cubed.nansum(x, axis=0).compute(), np.nansum(A, axis=0))
    # cubed's combine step is a nansum too, so an inf - inf of one chunk is dropped
    # later: keep the whole-array sum to one sign of infinity
    a = np.where(np.isneginf(A), np.float32(3), A)
    _check(cubed.nansum(cubed.from_array(a, chunks=(4, 3), spec=spec)).compute(), np.nansum(a))
    i = cubed.from_array(R.astype(np.int32), chunks=(4, 3), spec=spec)  # no NaN: a plain int64 sum
    _check(cubed.nansum(i, axis=1).compute(), np.nansum(R.astype(np.int32), axis=1, dtype=np.int64))


@needs_f64
def test_nanmean_mean_var_std(spec):
    a = A.copy()
    a[np.isinf(a)] = np.nan  # finite or NaN, so the exact results are finite
    x = cubed.from_array(a, chunks=(4, 3), spec=spec)
    r = cubed.from_array(R, chunks=(4, 3), spec=spec)
    # float64 accumulation, rounded to float32 once: within one float32 rounding of NumPy's
    np.testing.assert_allclose(np.asarray(cubed.nanmean(x, axis=0).compute()), np.nanmean(a, 0), rtol=2**-23)
    np.testing.assert_allclose(np.asarray(cxp.mean(r, axis=1).compute()), R.mean(1), rtol=2**-23)
    np.testing.assert_allclose(np.asarray(cxp.var(r, axis=0).compute()), R.var(0), rtol=2**-22)
    np.testing.assert_allclose(np.asarray(cxp.std(r, correction=1).compute()), R.std(ddof=1), rtol=2**-22)


def test_matmul_and_gram(spec):
    x = cubed.from_array(R, chunks=(4, 3), spec=spec)
    y = cubed.from_array(B, chunks=(3, 2), spec=spec)
    _check((x @ y).compute(), R @ B)
    _check((x.T @ x).compute(), R.T @ R)
    v = cubed.from_array(B[:, 0].copy(), chunks=3, spec=spec)
    _check((x @ v).compute(), R @ B[:, 0])


def test_indexing(spec):
    x = cubed.from_array(A, chunks=(4, 3), spec=spec)
    _check(x[1:10:3, 2].compute(), A[1:10:3, 2])
    _check(x[5].compute(), A[5])
    _check(x[-4:, 1:6].compute(), A[-4:, 1:6])
    _check(x[None, 2:3, :].compute(), A[None, 2:3, :])
    _check(x[3, 4].compute(), A[3, 4])  # 0-d


def test_concat_stack_rechunk_transpose(spec):
    x = cubed.from_array(A, chunks=(4, 3), spec=spec)
    r = cubed.from_array(R, chunks=(4, 3), spec=spec)  # cubed's concat wants equal chunks
    _check(cxp.concat([x, r], axis=0).compute(), np.concatenate([A, R], 0))
    _check(cxp.concat([x, r], axis=1).compute(), np.concatenate([A, R], 1))
    _check(cxp.stack([x, r], axis=1).compute(), np.stack([A, R], 1))
    y = x.rechunk((6, 5))
    assert y.chunks == ((6, 5), (5, 2))
    _check(y.compute(), A)
    _check(cxp.permute_dims(x, (1, 0)).compute(), A.T)


def test_creation_and_empty(spec):
    _check(cxp.arange(3, 20, 2, chunks=4, spec=spec).compute(), np.arange(3, 20, 2))
    _check(cxp.full((5, 3), 2.5, chunks=2, dtype=cxp.float32, spec=spec).compute(),
           np.full((5, 3), 2.5, np.float32))
    e = cubed.from_array(np.zeros((0, 3), np.float32), chunks=(2, 2), spec=spec)
    _check(cxp.sum(e, axis=0).compute(), np.zeros(3, np.float32))


def test_threads_executor(spec):
    """cubed's default executor: tasks on threads share the process's device."""
    x = cubed.from_array(R, chunks=(4, 3), spec=spec)
    _check(cxp.sum(x * x, axis=0).compute(executor=ThreadsExecutor(), max_workers=3), (R * R).sum(0))


def test_processes_executor(tmp_path):
    """Two spawned workers, each with its own wgarray device, give NumPy's values."""
    spec = cubed.Spec(work_dir=str(tmp_path), allowed_mem="100MB")
    x = cubed.from_array(R, chunks=(4, 3), spec=spec)
    gram = (x.T @ (x + 1)) * 0.5
    total = cxp.sum(cubed.nansum(cubed.from_array(A, chunks=(4, 3), spec=spec), axis=1))
    g, t = cubed.compute(gram, total, executor=ProcessesExecutor(), max_workers=2)
    _check(g, (R.T @ (R + np.float32(1))) * np.float32(0.5), signed_zeros=False)
    _check(t, np.nansum(A, axis=1).sum())


class _FakeProcess:
    def __init__(self, identity):
        self._identity = identity


@pytest.mark.parametrize("identity, listing, expected", [
    ((), "1,0,1", 1),  # the parent keeps the first of the list
    ((1,), "1,0,1", 1),
    ((2,), "1,0,1", 0),
    ((3,), "1,0,1", 1),
    ((4,), "1,0,1", 1),  # the fourth worker started wraps round
    ((2, 5), "0,1", 0),  # a worker of a worker: its own position counts
])
def test_per_process_device_takes_the_worker_position(monkeypatch, identity, listing, expected):
    import multiprocessing

    devs = _device.devices()
    if len(devs) < 2:
        pytest.skip("needs two adapters to tell choices apart")
    monkeypatch.setattr(multiprocessing, "current_process", lambda: _FakeProcess(identity))
    assert _device._per_process_device(listing, devs) is devs[expected]


def test_per_process_device_unknown_entry_names_the_variable():
    with pytest.raises(ValueError, match="WGARRAY_DEVICE: no device matches 'no-such-gpu'"):
        _device._per_process_device("0,no-such-gpu", _device.devices())


def test_per_process_device_default_pool_is_the_best_kind(monkeypatch):
    import multiprocessing

    devs = _device.devices()
    best = min(devs, key=_device._rank)
    for k in range(1, 4):
        monkeypatch.setattr(multiprocessing, "current_process", lambda: _FakeProcess((k,)))
        got = _device._per_process_device("", devs)
        assert _device._rank(got)[:2] == _device._rank(best)[:2]


def test_per_process_device_in_spawned_workers(monkeypatch):
    """Workers of a spawn pool (as cubed's processes executor starts them) take the
    devices of the list in turn; choosing does not open the device."""
    import concurrent.futures
    import multiprocessing

    import cubed_worker

    if len(_device.devices()) < 2:
        pytest.skip("needs two adapters to tell choices apart")
    monkeypatch.setenv("WGARRAY_DEVICE", "per-process:1,0")
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        got = dict(pool.map(cubed_worker.device_index, [1.0, 1.0]))
    assert len(got) == 2 and sorted(got.values()) == [0, 1], got


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")
def test_forked_child_is_refused_with_a_clear_error():
    wgarray.asarray([1.0, 2.0]) + 1  # the parent has devices open
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what using wgarray does, then leave at once
        try:
            np.asarray(wgarray.asarray([1.0]) * 3)
            msg = b"no error"
        except RuntimeError as exc:
            msg = str(exc).encode()
        except BaseException as exc:  # noqa: BLE001 - anything else is the failure to report
            msg = repr(exc).encode()
        os.write(write, msg[:1000])
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        msg = f.read().decode()
    os.waitpid(pid, 0)
    assert "cannot cross fork()" in msg and "spawn" in msg, msg
    assert np.asarray(wgarray.asarray([1.0]) * 3)[0] == 3.0  # the parent still works


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
