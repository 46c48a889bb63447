"""Manipulation functions against NumPy, for every dtype the device offers."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from wgarray import debug
from conftest import DTYPES, assert_exact, ids, sample


def base(d, shape=(2, 3, 4), seed=0):
    return np.resize(sample(d, 64, seed), int(np.prod(shape))).reshape(shape)


def no_kernel(fn):
    before = debug.counters()["dispatches"]
    out = fn()
    assert debug.counters()["dispatches"] == before, "expected a view"
    return out


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_views_every_dtype(d):
    a = base(d)
    x = xp.asarray(a)
    assert_exact(no_kernel(lambda: xp.flip(x)), np.flip(a))
    assert_exact(no_kernel(lambda: xp.flip(x, axis=(0, -1))), np.flip(a, axis=(0, -1)))
    assert_exact(no_kernel(lambda: xp.permute_dims(x, (2, 0, 1))), np.transpose(a, (2, 0, 1)))
    assert_exact(no_kernel(lambda: xp.moveaxis(x, (0, 1), (-1, 0))), np.moveaxis(a, (0, 1), (-1, 0)))
    assert_exact(no_kernel(lambda: xp.expand_dims(x, axis=(0, 3))), np.expand_dims(a, (0, 3)))
    assert_exact(no_kernel(lambda: xp.expand_dims(x, axis=-1)), np.expand_dims(a, -1))
    assert_exact(no_kernel(lambda: xp.squeeze(x[:, :1, None], axis=(1, 2))), a[:, 0])
    assert_exact(no_kernel(lambda: xp.reshape(x, (4, -1))), a.reshape(4, -1))
    assert_exact(no_kernel(lambda: xp.broadcast_to(x[:1], (5, 2, 3, 4))), np.broadcast_to(a[:1], (5, 2, 3, 4)))
    parts = no_kernel(lambda: xp.unstack(x, axis=1))
    assert len(parts) == 3
    for got, want in zip(parts, np.moveaxis(a, 1, 0)):
        assert_exact(got, want)
    b1, b2 = no_kernel(lambda: xp.broadcast_arrays(x, xp.asarray(a[0, :, :1])))
    assert_exact(b2, np.broadcast_to(a[0, :, :1], a.shape))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_concat_stack_every_dtype(d):
    a = base(d)
    b = base(d, (2, 1, 4), seed=2)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_exact(xp.concat([x, y, x], axis=1), np.concatenate([a, b, a], axis=1))
    assert_exact(xp.concat([x, x[:, :, ::-1]], axis=-1), np.concatenate([a, a[:, :, ::-1]], axis=-1))
    assert_exact(xp.concat([x, y], axis=None), np.concatenate([a.ravel(), b.ravel()]))
    assert_exact(xp.concat([x]), a)
    many = [x[:, :, i:i + 1] for i in range(4)] * 4  # more inputs than one kernel binds
    assert_exact(xp.concat(many, axis=2), np.concatenate([a[:, :, i:i + 1] for i in range(4)] * 4, axis=2))
    assert_exact(xp.stack([x, xp.asarray(a)], axis=-1), np.stack([a, a], axis=-1))
    assert_exact(xp.stack([x[0], x[1], x[0]], axis=1), np.stack([a[0], a[1], a[0]], axis=1))
    assert_exact(xp.stack([xp.asarray(a[0, 0, 0])] * 3), np.stack([a[0, 0, 0]] * 3))


def test_concat_promotes_and_handles_empty():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.arange(3, dtype=np.int32).reshape(1, 3)
    assert_exact(xp.concat([xp.asarray(a), xp.asarray(b)]), np.concatenate([a, b]).astype(np.int32))
    e = np.zeros((0, 3), np.int8)
    assert_exact(xp.concat([xp.asarray(e), xp.asarray(a), xp.asarray(e)]), a)
    assert_exact(xp.concat([xp.asarray(e), xp.asarray(e)]), np.zeros((0, 3), np.int8))


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_roll_tile_repeat_every_dtype(d):
    a = base(d)
    x = xp.asarray(a)
    assert_exact(xp.roll(x, 5), np.roll(a, 5))
    assert_exact(xp.roll(x, -1, axis=2), np.roll(a, -1, axis=2))
    assert_exact(xp.roll(x, (1, 2, -7), axis=(0, 2, 2)), np.roll(a, (1, 2, -7), axis=(0, 2, 2)))
    assert_exact(xp.tile(x, (2, 1, 3)), np.tile(a, (2, 1, 3)))
    assert_exact(xp.tile(x, (2, 1, 1, 2)), np.tile(a, (2, 1, 1, 2)))
    assert_exact(xp.tile(x[0, 0], (3,)), np.tile(a[0, 0], 3))
    assert_exact(xp.repeat(x, 2, axis=1), np.repeat(a, 2, axis=1))
    assert_exact(xp.repeat(x, 3), np.repeat(a, 3))
    r = np.array([2, 0, 1, 3])
    assert_exact(xp.repeat(x, xp.asarray(r) + 0, axis=2), np.repeat(a, r, axis=2))
    assert_exact(xp.repeat(x, xp.asarray(np.array([2])), axis=0), np.repeat(a, 2, axis=0))


def test_roll_tile_repeat_fuse_their_input():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = xp.asarray(a)
    debug.reset_counters()
    y = xp.roll(x * 2 + 1, 3, axis=1)
    z = xp.tile(x - 1, (2, 2))
    w = xp.repeat(x.T, 2, axis=0)
    c = debug.counters()
    assert c["dispatches"] == 3 and c["readbacks"] == 0
    assert_exact(y, np.roll(a * 2 + 1, 3, axis=1))
    assert_exact(z, np.tile(a - 1, (2, 2)))
    assert_exact(w, np.repeat(a.T, 2, axis=0))


def test_zero_d_and_empty():
    s = xp.asarray(np.int16(7))
    assert_exact(xp.reshape(s, (1, 1)), np.full((1, 1), 7, np.int16))
    assert_exact(xp.expand_dims(s, axis=0), np.array([7], np.int16))
    assert_exact(xp.flip(s), np.int16(7))
    assert_exact(xp.roll(s, 3), np.int16(7))
    assert_exact(xp.tile(s, (2, 2)), np.full((2, 2), 7, np.int16))
    assert_exact(xp.repeat(s, 3), np.full(3, 7, np.int16))
    e = np.zeros((2, 0), np.float32)
    x = xp.asarray(e)
    assert_exact(xp.roll(x, 1), e)
    assert_exact(xp.tile(x, (2, 2)), np.zeros((4, 0), np.float32))
    assert_exact(xp.repeat(x, 2, axis=0), np.zeros((4, 0), np.float32))
    assert_exact(xp.reshape(x, (0, 5)), e.reshape(0, 5))
    assert xp.unstack(x, axis=1) == ()


def test_reshape_copy_modes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(a)
    assert_exact(xp.reshape(x.T, (12,)), a.T.reshape(12))
    assert_exact(xp.reshape(x, (2, 6), copy=True), a.reshape(2, 6))
    assert_exact(xp.reshape(x, (6, 2), copy=False), a.reshape(6, 2))
    with pytest.raises(ValueError, match="copy=False"):
        xp.reshape(x.T, (12,), copy=False)


def test_broadcast_shapes():
    assert xp.broadcast_shapes((2, 1, 3), (4, 1), ()) == (2, 4, 3)
    assert xp.broadcast_shapes() == ()
    assert xp.broadcast_shapes((0, 1), (1, 5)) == (0, 5)
    with pytest.raises(ValueError, match="broadcast_shapes"):
        xp.broadcast_shapes((2, 3), (3, 2))


def test_errors_name_the_function():
    x = xp.asarray(np.zeros((2, 3), np.float32))
    cases = [
        (ValueError, "reshape", lambda: xp.reshape(x, (4, 2))),
        (ValueError, "reshape", lambda: xp.reshape(x, (-1, -1))),
        (ValueError, "squeeze", lambda: xp.squeeze(x, axis=0)),
        (IndexError, "squeeze", lambda: xp.squeeze(x, axis=2)),
        (ValueError, "concat", lambda: xp.concat([x, x.T])),
        (ValueError, "concat", lambda: xp.concat([x, x[0]])),
        (ValueError, "stack", lambda: xp.stack([x, x[:, :2]])),
        (ValueError, "broadcast_to", lambda: xp.broadcast_to(x, (3, 3))),
        (ValueError, "permute_dims", lambda: xp.permute_dims(x, (0,))),
        (ValueError, "permute_dims", lambda: xp.permute_dims(x, (0, 0))),
        (IndexError, "expand_dims", lambda: xp.expand_dims(x, axis=3)),
        (ValueError, "expand_dims", lambda: xp.expand_dims(x, axis=(0, 0))),
        (ValueError, "moveaxis", lambda: xp.moveaxis(x, (0, 1), 0)),
        (ValueError, "tile", lambda: xp.tile(x, (-1,))),
        (ValueError, "repeat", lambda: xp.repeat(x, -1)),
        (ValueError, "repeat", lambda: xp.repeat(x, xp.asarray(np.array([1, -1, 1])) + 0, axis=1)),
        (ValueError, "repeat", lambda: xp.repeat(x, xp.asarray(np.array([1, 1])), axis=1)),
        (ValueError, "roll", lambda: xp.roll(x, (1, 2), axis=(0,))),
        (TypeError, "concat", lambda: xp.concat(x)),
    ]
    for exc, name, fn in cases:
        with pytest.raises(exc, match=name):
            fn()


@given(st.data())
def test_hypothesis_reshape_permute_flip_roll(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = xp.asarray(a)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    assert_exact(xp.permute_dims(x, perm), np.transpose(a, perm))
    assert_exact(xp.reshape(xp.permute_dims(x, perm), (-1,)), np.transpose(a, perm).reshape(-1))
    if shape:
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        shift = data.draw(st.integers(-10, 10))
        assert_exact(xp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
        assert_exact(xp.flip(x, axis=axis), np.flip(a, axis=axis))
        reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
        assert_exact(xp.tile(x, reps), np.tile(a, reps))


@pytest.mark.parametrize("n_inputs", [4, 6, 13])
def test_stack_of_pending_graphs_past_the_binding_limit(n_inputs):
    # SciPy's quaternion product stacks four pending 0-d graphs of eight leaves each
    # (0-d elements of two pending arrays): one concat kernel would bind them all, 33
    # storage buffers on lavapipe's 32 (a wgpu validation error); inputs with the most
    # leaves are realized first, and the result is NumPy's
    rng = np.random.default_rng(n_inputs)
    a0, b0, c0, d0 = (rng.standard_normal(4).astype(np.float32) for _ in range(4))
    p0, q0 = a0 * b0 + c0, d0 - a0 * c0
    a, b, c, d = (xp.asarray(v) for v in (a0, b0, c0, d0))
    p, q = a * b + c, d - a * c  # pending: each element of them brings their leaves
    parts, want = [], []
    for k in range(n_inputs):
        i, j = k % 4, (k + 1) % 4
        parts.append(p[i] * q[j] + p[j] * q[i] - p[(i + 2) % 4] * q[(j + 2) % 4] + p[3] * q[0] * float(k))
        want.append(p0[i] * q0[j] + p0[j] * q0[i] - p0[(i + 2) % 4] * q0[(j + 2) % 4] + p0[3] * q0[0] * float(k))
    got = xp.stack(parts, axis=-1)
    np.testing.assert_allclose(np.asarray(got), np.array(want), rtol=1e-5, atol=1e-6)
    got2 = xp.concat([xp.reshape(a, (1,)) for a in parts])
    np.testing.assert_allclose(np.asarray(got2), np.array(want), rtol=1e-5, atol=1e-6)
