"""Regression tests for correctness defects of the core: each test names the behaviour
it holds and compares with NumPy (or an exact expectation)."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp

from conftest import HAS_F64


# ------------------------------------------------------------- deep view chains

def _random_basic_key(rng, shape):
    """A random basic index for an array of ``shape``: ints, slices (negative steps,
    empty ones, out-of-range bounds), None and an Ellipsis."""
    key = []
    for n in shape:
        r = rng.random()
        if r < 0.2 and n:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.3:
            key.append(None)
            key.append(slice(None))
        else:
            start = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            stop = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            step = int(rng.choice([1, 1, 2, 3, -1, -2]))
            key.append(slice(start, stop, step))
    if rng.random() < 0.3:  # an Ellipsis standing for one axis, or (appended) for none
        at = int(rng.integers(0, len(key) + 1))
        if at < len(key) and isinstance(key[at], slice):
            key[at] = Ellipsis
        else:
            key.append(Ellipsis)
    if rng.random() < 0.15:
        key.append(None)
    return tuple(key)


def test_view_chain_of_600_slices_writes_through_without_recursion():
    for make in (lambda: xp.asarray(np.arange(1000.0)), lambda: xp.arange(1000.0) * 2.0,
                 lambda: xp.ones(1000)):
        x = make()
        ref = np.asarray(x).copy()
        x = make()  # pending again, as the chain is built on it
        v = x
        w = ref
        for _ in range(600):
            v = v[1:]
            w = w[1:]
        assert v._view[0] is x  # the chain refers to its root directly
        v += 5
        w += 5
        np.testing.assert_array_equal(np.asarray(v), w)
        np.testing.assert_array_equal(np.asarray(x), ref)
        v[0] = -1.0
        w[0] = -1.0
        x[601] = 7.0
        ref[601] = 7.0
        np.testing.assert_array_equal(np.asarray(v), w)
        np.testing.assert_array_equal(np.asarray(x), ref)


def test_view_chain_depth_stays_one_and_versions_follow_root():
    x = xp.asarray(np.zeros((6, 5)))
    v = x
    for _ in range(700):
        v = v[...]
    assert v._view[0] is x
    before = v._sync()
    x[2, 3] = 4.0
    assert v._sync() == before + 1  # one write of the root, one change of the view
    assert float(v[2, 3]) == 4.0


@pytest.mark.parametrize("seed", range(6))
def test_random_view_chains_read_and_write_as_numpy(seed):
    rng = np.random.default_rng(seed)
    base = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    x = xp.asarray(base)
    ref = base.copy()
    views = [(x, ref)]
    for _ in range(8):
        v, r = views[-1]
        key = _random_basic_key(rng, r.shape)
        nv, nr = v[key], r[key]
        assert nv.shape == nr.shape, key
        if nr.ndim == 0:  # an element copy, not a view: the chain ends
            break
        views.append((nv, nr))
    for step in range(4):
        k = int(rng.integers(1, len(views))) if len(views) > 1 else 0
        v, r = views[k]
        if step % 2:
            v += 100.0 * (step + 1)
            r += 100.0 * (step + 1)
        else:
            v[...] = -1.0 - step
            r[...] = -1.0 - step
        for v2, r2 in views:
            np.testing.assert_array_equal(np.asarray(v2), r2)


def test_view_of_empty_new_axis_slice_still_follows_base():
    x = xp.asarray(np.arange(4.0))
    e = x[None][0:0]  # no single key on x says this: it stays a view of the view
    assert e.shape == (0, 4)
    f = e[:, 1:]
    assert f.shape == (0, 3)
    x[1] = 9.0
    assert np.asarray(f).shape == (0, 3)
    v = x[None][:, 1:][0]  # a kept new axis, then dropped again: a view of x itself
    assert v._view[0] is x
    v[0] = -2.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, -2.0, 2.0, 3.0])
