"""Recorded programs (``_kernels/program.py``): a blocked factorization is recorded on
its first call for an input layout and replayed on the next; a replay gives the
driver's bits, and a routine that needs the host (an upload, a readback) is never
replayed."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from wgarray._array import Array
from wgarray._graph import node as g
from wgarray._kernels import program

from conftest import HAS_F64

RNG = np.random.default_rng(7)


def _spd(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    n = shape[-1]
    a = a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n)
    return a.astype(dtype)


CALLS = {
    "cholesky": (lambda a, b: xp.linalg.cholesky(a), 1),
    "solve": (lambda a, b: xp.linalg.solve(a, b), 2),
    "inv": (lambda a, b: xp.linalg.inv(a), 1),
    "det": (lambda a, b: xp.linalg.det(a), 1),
    "slogdet": (lambda a, b: xp.linalg.slogdet(a)[1], 1),
    "qr": (lambda a, b: xp.linalg.qr(a)[0], 1),
}
DTYPES = [np.float32, np.complex64] + ([np.float64] if HAS_F64 else [])


def _run(name, a, b):
    debug.reset_counters()
    out = np.asarray(CALLS[name][0](xp.asarray(a), xp.asarray(b)))
    return out, debug.counters().get("programs_replayed", 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("shape", [(130, 130), (2, 97, 97)], ids=["130", "2x97"])
def test_a_replay_gives_the_drivers_bits(name, shape, dtype, monkeypatch):
    if name == "qr" and np.dtype(dtype).kind == "c":
        pytest.skip("complex qr takes the CholeskyQR path, which reads a flag back (not recorded)")
    inputs = [(_spd(shape, dtype), RNG.standard_normal(shape[:-1] + (3,)).astype(dtype)) for _ in range(3)]
    monkeypatch.setattr(program, "PROGRAMS", False)
    want = [_run(name, a, b)[0] for a, b in inputs]
    monkeypatch.setattr(program, "PROGRAMS", True)
    got = [_run(name, a, b) for a, b in inputs]
    assert [replayed for _, replayed in got] == [0, 1, 1]  # recorded, then replayed for new data
    for (out, _), ref in zip(got, want):
        np.testing.assert_array_equal(out, ref)
    a, b = inputs[2]  # and right, not only the same: against NumPy
    a64 = a.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    tol = 1e-9 if np.dtype(dtype).itemsize == 8 and np.dtype(dtype).kind == "f" else 2e-3
    if name == "cholesky":
        np.testing.assert_allclose(got[2][0], np.linalg.cholesky(a64), atol=tol, rtol=tol)
    elif name == "solve":
        np.testing.assert_allclose(got[2][0], np.linalg.solve(a64, b), atol=tol, rtol=tol)
    elif name == "inv":
        np.testing.assert_allclose(got[2][0], np.linalg.inv(a64), atol=tol, rtol=tol)
    elif name == "slogdet":
        np.testing.assert_allclose(got[2][0], np.linalg.slogdet(a64)[1], atol=tol, rtol=tol)


def test_each_input_layout_has_its_own_program():
    a = _spd((120, 120), np.float32)
    views = [lambda x: x, lambda x: x.T, lambda x: x[:100, :100], lambda x: x[10:110, 10:110], lambda x: x[::2, ::2]]
    for view in views:
        for _ in range(2):
            base = xp.asarray(a + RNG.random((120, 120), dtype=np.float32) * 1e-3)
            host = np.asarray(view(np.asarray(base)))  # the factor reads its lower triangle only
            debug.reset_counters()
            got = np.asarray(xp.linalg.cholesky(view(base)))
            replayed = debug.counters().get("programs_replayed", 0)
            np.testing.assert_allclose(np.tril(got) @ np.tril(got).T,
                                       np.tril(host) + np.tril(host, -1).T, atol=1e-4)
        assert replayed == 1  # the second call of each layout; the first was recorded


def test_a_replayed_result_is_its_own_buffer_and_the_input_stays():
    a = _spd((150, 150), np.float32)
    x = xp.asarray(a)
    first = xp.linalg.cholesky(x)
    second = xp.linalg.cholesky(x)  # replayed
    assert first._node.buf is not second._node.buf
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(x), a)
    y = xp.linalg.inv(x)
    y[0, 0] = 5.0  # writing one result leaves the next replay's alone
    z = xp.linalg.inv(x)
    assert float(z[0, 0]) != 5.0
    np.testing.assert_allclose(np.asarray(z) @ a, np.eye(150), atol=1e-3)


def test_a_routine_uploading_is_not_recorded_and_one_reading_is_guarded():
    x = xp.asarray(np.arange(64, dtype=np.float32))

    def uploads(d):
        extra = xp.asarray(np.ones(64, np.float32))  # data from the host: not repeatable
        return g.realize((Array_of(d) + extra)._node)

    def reads(d):
        if float(xp.sum(Array_of(d))) > 0:  # a decision on device data
            return g.realize((Array_of(d) * 2.0)._node)
        return g.realize((Array_of(d) * 3.0)._node)

    def pure(d):
        return g.realize((Array_of(d) * 2.0)._node)

    for name, routine, want in (("uploads", uploads, np.arange(64) + 1.0), ("reads", reads, np.arange(64) * 2.0),
                                ("pure", pure, np.arange(64) * 2.0)):
        counts = []
        for _ in range(2):
            debug.reset_counters()
            out = program.run("test_" + name, (), [x._node], routine)
            counts.append(debug.counters().get("programs_replayed", 0))
            np.testing.assert_array_equal(np.asarray(Array_of(out)), want.astype(np.float32))
        # a readback is a guard of the replay: replayed while its bytes are the same
        assert counts == ([0, 0] if name == "uploads" else [0, 1]), (name, counts)


def test_a_failed_guard_runs_the_routine_and_stops_replays_after_two():
    def reads(d):
        if float(xp.sum(Array_of(d))) > 0:  # a decision on device data
            return g.realize((Array_of(d) * 2.0)._node)
        return g.realize((Array_of(d) * 3.0)._node)

    key = ("signs", RNG.random())
    signs = [1, 1, -1, -1, 1, 1, -1]
    got = []
    for sign in signs:
        h = sign * np.arange(1, 65, dtype=np.float32)
        debug.reset_counters()
        out = np.asarray(Array_of(program.run("test_guard", key, [xp.asarray(h)._node], reads)))
        c = debug.counters()
        got.append((c.get("programs_replayed", 0), c.get("programs_diverged", 0)))
        np.testing.assert_array_equal(out, h * (2.0 if sign > 0 else 3.0))
    # recorded (positive); replayed; the guard fails, recorded again (negative);
    # replayed; fails again: from then on the routine just runs
    assert got == [(0, 0), (1, 0), (0, 1), (1, 0), (0, 1), (0, 0), (0, 0)], got


@pytest.mark.parametrize("shape", [(3000, 8), (40, 7), (7, 40), (3, 50, 6)], ids=str)
def test_a_replayed_svd_gives_the_drivers_bits(shape, monkeypatch):
    # the svd's readbacks (CholeskyQR's convergence, the rank test) are the guards
    inputs = [RNG.standard_normal(shape).astype(np.float32) for _ in range(3)]
    monkeypatch.setattr(program, "PROGRAMS", False)
    want = [[np.asarray(r) for r in xp.linalg.svd(xp.asarray(a), full_matrices=False)] for a in inputs]
    monkeypatch.setattr(program, "PROGRAMS", True)
    replays = []
    for a, ref in zip(inputs, want):
        debug.reset_counters()
        got = [np.asarray(r) for r in xp.linalg.svd(xp.asarray(a), full_matrices=False)]
        replays.append(debug.counters().get("programs_replayed", 0))
        for x, y in zip(got, ref):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_allclose(got[1], np.linalg.svd(a.astype(np.float64), compute_uv=False), rtol=1e-5,
                                   atol=1e-5 * np.abs(a).max())
    assert replays == [0, 1, 1]


def test_a_replayed_svd_follows_the_data_where_its_decisions_change():
    # recorded on well-conditioned tall input; then a rank-deficient one of the same
    # layout, where CholeskyQR breaks down and the driver takes another path: the
    # replay's guard fails, the driver runs, and the values are right
    good = RNG.standard_normal((3000, 8)).astype(np.float32)
    bad = good.copy()
    bad[:, 5] = bad[:, 2]  # rank 7
    for a in (good, good * 2):
        xp.linalg.svdvals(xp.asarray(a))
        xp.linalg.svd(xp.asarray(a), full_matrices=False)
    debug.reset_counters()
    u, s, vh = xp.linalg.svd(xp.asarray(bad), full_matrices=False)
    assert debug.counters().get("programs_diverged", 0) == 1
    want = np.linalg.svd(bad.astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(np.asarray(s), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), bad, atol=1e-4)
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), np.eye(8), atol=1e-5)


def Array_of(node):
    return Array._new(node)
