"""Random programs against NumPy, and regressions for silent wrong results found by use.

The differential tester runs random programs (lazy and realized arrays mixed, views of
views, empty and negative-step slices, reductions of views, in-place adds, host reads at
random points) on wgarray and on NumPy side by side, with small integer values in
float32 so that every result is exact. ``-m slow`` runs a long version.
"""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._runtime import runtime as _runtime


# ------------------------------------------------------------ shaped constants

def test_imag_of_real_broadcasts_as_an_array():
    x = xp.asarray(np.ones((3, 1), np.float32))
    y = xp.asarray(np.arange(4, dtype=np.float32).reshape(1, 4))
    r = xp.imag(x) + y
    assert r.shape == (3, 4)
    assert np.array_equal(np.asarray(r), np.broadcast_to(np.arange(4, dtype=np.float32), (3, 4)))
    assert (xp.imag(x).T + y.T).shape == (4, 3)
    assert (xp.imag(x)[1:] + y).shape == (2, 4)
    assert xp.where(xp.imag(x) == 0, y, 1.0).shape == (3, 4)
    with pytest.raises(ValueError, match="add"):
        xp.imag(xp.ones((3,))) + xp.ones((4,))


def test_empty_axis_reductions_and_scans_broadcast_as_arrays():
    z = xp.zeros((2, 0, 3))
    s, p = xp.sum(z, axis=1), xp.prod(z, axis=1)
    assert (s + xp.ones((4, 1, 1))).shape == (4, 2, 3)
    assert np.array_equal(np.asarray(p + xp.ones((4, 1, 1))), np.full((4, 2, 3), 2.0))
    c = xp.cumulative_sum(xp.zeros((0, 3)), axis=0)
    assert (c + xp.ones((2, 1, 1))).shape == (2, 0, 3)
    with pytest.raises(ValueError):
        s + xp.ones((5,))


# ------------------------------------------------------------ other regressions

def test_empty_negative_step_slices_of_a_mirrored_array():
    h = np.arange(4.0, dtype=np.float32)
    x = xp.asarray(h)
    np.asarray(x)  # the host mirror now exists
    for key in (slice(-5, None, -1), slice(0, 3, -1), slice(-6, -5, -2), slice(4, 9, 1), slice(2, 2)):
        got = np.asarray(x[key])
        assert got.shape == h[key].shape and np.array_equal(got, h[key]), key


def test_searchsorted_checks_the_sorter():
    x = xp.asarray([3.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="searchsorted"):
        xp.searchsorted(x, xp.asarray([2.0]), sorter=xp.asarray([1, 2, 3]))
    with pytest.raises(ValueError, match="searchsorted"):
        xp.searchsorted(x, xp.asarray([2.0]), sorter=xp.asarray([-1, 2, 0]))
    got = xp.searchsorted(x, xp.asarray([2.0, 2.5]), sorter=xp.asarray([1, 2, 0]))
    assert np.array_equal(np.asarray(got), np.searchsorted([3.0, 1, 2], [2.0, 2.5], sorter=[1, 2, 0]))


def test_argmax_over_a_nonempty_axis_of_an_empty_array():
    z = xp.zeros((0, 3))
    assert xp.argmax(z, axis=1).shape == (0,)
    assert xp.argmin(z, axis=1, keepdims=True).shape == (0, 1)
    with pytest.raises(ValueError, match="argmax"):
        xp.argmax(z, axis=0)


def test_arange_of_numpy_scalars_and_infinite_bounds():
    assert np.array_equal(np.asarray(xp.arange(np.int64(3))), np.arange(3))
    assert np.array_equal(np.asarray(xp.arange(np.float32(0.5), np.int32(3))), np.arange(0.5, 3))
    with pytest.raises(ValueError, match="arange"):
        xp.arange(float("inf"))


def test_iter_of_a_0d_array_raises_at_iter():
    with pytest.raises(TypeError):
        iter(xp.asarray(1.0))
    assert [float(v) for v in xp.asarray([1.0, 2.0])] == [1.0, 2.0]


def test_result_type_agrees_with_the_operators():
    a, b = xp.asarray([1], dtype=xp.int32), xp.asarray([1.0], dtype=xp.float32)
    assert xp.result_type(xp.int32, xp.float32) == (a + b).dtype


def test_evaluate_many_outputs_and_inputs_within_the_binding_limit():
    a = xp.asarray(np.arange(10, dtype=np.float32))
    xs = [a * i for i in range(40)]
    xp.evaluate(*xs)
    assert all(np.array_equal(np.asarray(x), np.arange(10, dtype=np.float32) * i) for i, x in enumerate(xs))
    bs = [xp.asarray(np.full(5, i, np.float32)) for i in range(40)]
    ys = [b * 2 + 1 for b in bs]
    xp.evaluate(*ys)
    assert [float(y[4]) for y in ys] == [2.0 * i + 1 for i in range(40)]
    c = xp.concat([b + 1 for b in bs])
    assert np.array_equal(np.asarray(c), np.repeat(np.arange(40, dtype=np.float32) + 1, 5))


def test_pool_bounds_the_number_of_cached_buffers():
    dev = xp.asarray(0.0).device
    arrays = [xp.asarray(np.full(3, i, np.float32)) for i in range(_runtime.POOL_CACHE_BUFFERS + 200)]
    del arrays
    dev.runtime.flush()
    xp.evaluate(xp.asarray([1.0]) + 1)  # a submit recycles what was released
    assert len(dev.runtime.pool.order) <= _runtime.POOL_CACHE_BUFFERS


# ------------------------------------------------------------ differential tester

class Program:
    """One random program run on wgarray and NumPy side by side."""

    def __init__(self, rng):
        self.rng = rng
        self.pairs: list = []  # (wgarray array, NumPy array)

    def new_input(self):
        rng = self.rng
        shape = tuple(int(n) for n in rng.integers(0, 5, size=int(rng.integers(0, 4))))
        if rng.random() < 0.7:
            shape = tuple(max(n, 1) for n in shape)
        h = rng.integers(-4, 5, size=shape).astype(np.float32)
        a = xp.asarray(h)
        if rng.random() < 0.5:
            xp.evaluate(a + 0)  # mixed realized / lazy history
        self.pairs.append((a, h))

    def pick(self):
        return self.pairs[int(self.rng.integers(len(self.pairs)))]

    def random_slice(self, n):
        rng = self.rng
        step = int(rng.choice([1, 1, 2, -1, -2, 3]))
        start = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 2))
        stop = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 2))
        return slice(start, stop, step)

    def step(self):
        rng = self.rng
        a, h = self.pick()
        r = rng.random()
        if r < 0.25 and h.ndim:  # a view
            key = tuple(self.random_slice(n) if rng.random() < 0.8 else int(rng.integers(n)) if n else slice(None)
                        for n in h.shape)
            self.pairs.append((a[key], h[key]))
        elif r < 0.32 and h.ndim >= 2:
            self.pairs.append((a.T if h.ndim == 2 else xp.permute_dims(a, tuple(reversed(range(h.ndim)))),
                               np.transpose(h)))
        elif r < 0.37:
            self.pairs.append((a[None], h[None]))
        elif r < 0.55:  # broadcasting binary op
            b, hb = self.pick()
            try:
                shape = np.broadcast_shapes(h.shape, hb.shape)
            except ValueError:
                with pytest.raises(ValueError):
                    a + b
                return
            op = str(rng.choice(["add", "subtract", "multiply", "maximum"]))
            self.pairs.append((getattr(xp, op)(a, b), getattr(np, op)(h, hb)))
            assert self.pairs[-1][0].shape == shape
        elif r < 0.62:
            s = float(rng.integers(-3, 4))
            self.pairs.append((a * s - 1, h * np.float32(s) - 1))
        elif r < 0.72 and h.ndim:  # reduction of whatever it is (views included)
            axis = int(rng.integers(h.ndim))
            kind = str(rng.choice(["sum", "max", "min", "prod"]))
            if kind in ("max", "min") and h.shape[axis] == 0:
                return
            self.pairs.append((getattr(xp, kind)(a, axis=axis), getattr(np, kind)(h, axis=axis)))
        elif r < 0.76:
            self.pairs.append((xp.imag(a) + a, h))
        elif r < 0.8 and h.size:
            self.pairs.append((xp.cumulative_sum(xp.reshape(a, (-1,))), np.cumsum(h.reshape(-1))))
        elif r < 0.85:  # an in-place add on a fresh copy
            c, hc = a + 0, h.copy()
            b, hb = self.pick()
            try:
                np.broadcast_to(hb, hc.shape)
            except ValueError:
                return
            c += b
            hc += hb
            self.pairs.append((c, hc))
        elif r < 0.93:  # host read at a random point
            self.check(a, h)
        else:
            xp.evaluate(a)

    def check(self, a, h):
        assert a.shape == h.shape, (a.shape, h.shape)
        got = np.asarray(a)
        assert np.array_equal(got, h), (got, h)

    def run(self, n_steps):
        for _ in range(3):
            self.new_input()
        for _ in range(n_steps):
            if self.rng.random() < 0.08:
                self.new_input()
            self.step()
        for a, h in self.pairs:
            self.check(a, h)


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_match_numpy(seed):
    Program(np.random.default_rng(seed)).run(40)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_random_programs_long(seed):
    Program(np.random.default_rng(seed)).run(300)



def test_lengths_past_32_bits_are_views_and_past_63_bits_refused_at_the_call():
    x = xp.ones((1,), dtype=xp.float32) * 3
    big = xp.broadcast_to(x, (2**32 + 8,))  # a view: nothing allocated
    assert big.shape == (2**32 + 8,) and float(big[2**32 + 7]) == 3.0
    with pytest.raises(ValueError, match="broadcast_to: expected at most 2\\*\\*63 - 1 elements"):
        xp.broadcast_to(x, (2**62, 4))
    with pytest.raises(ValueError, match="add: expected at most 2\\*\\*63 - 1 elements"):
        xp.broadcast_to(x, (2**32, 1)) + xp.broadcast_to(x, (1, 2**31 + 1))
    assert xp.broadcast_shapes((2**40,), (1,)) == (2**40,)  # shapes alone are not arrays


def test_a_lazy_result_larger_than_the_largest_array_is_refused_at_the_call(monkeypatch):
    # refused where it is made, not at its first read (which could only fail)
    monkeypatch.setenv("WGARRAY_MAX_ARRAY_BYTES", str(1 << 28))
    dev = xp.asarray(0.0).device
    rows = 2 ** ((dev.max_array_bytes // 4).bit_length() // 2 + 1)
    a = xp.ones((rows, 1), dtype=xp.float32)
    b = xp.ones((1, rows), dtype=xp.float32)
    assert 4 * rows * rows > dev.max_array_bytes
    with pytest.raises(MemoryError, match=f"multiply: expected a result of at most {dev.max_array_bytes} bytes"):
        a * b
    assert float(xp.sum(xp.sum(a[: rows // 16] * b, axis=1) / rows)) == rows // 16  # one that fits


def test_bad_arguments_name_the_function_and_the_value():
    with pytest.raises(TypeError, match="eye: expected n_rows to be an int, got float 2.5"):
        xp.eye(2.5)
    with pytest.raises(TypeError, match="matrix_power: expected n to be an int"):
        xp.linalg.matrix_power(xp.eye(2), 1.5)
    with pytest.raises(TypeError, match=str(2**100)):
        xp.asarray([1, 2**100])


def test_ops_of_constants_only_take_the_broadcast_shape():
    e = xp.sum(xp.zeros((0, 1)), axis=0)  # a shaped constant, (1,)
    z = xp.prod(xp.zeros((2, 0)), axis=1)  # ones, (2,)
    one = xp.prod(xp.zeros((0,)))  # 0-d
    assert (one * xp.sum(xp.zeros((3, 0)), axis=1)).shape == (3,)
    assert np.array_equal(np.asarray(one * z), [1.0, 1.0])
    assert (e + xp.sum(xp.zeros((0, 4, 0)), axis=(0, 2))).shape == (4,)
    w = xp.where(xp.all(xp.zeros((0,))), z, one)  # a 0-d constant condition
    assert w.shape == (2,) and np.array_equal(np.asarray(w), [1.0, 1.0])


def test_evaluate_of_many_pending_arrays_is_linear():
    import time

    a = xp.asarray(np.arange(8, dtype=np.float32))
    zs = [a + i for i in range(10_000)]
    t = time.perf_counter()
    xp.evaluate(*zs)
    assert time.perf_counter() - t < 60  # a group wider than a kernel was planned whole before
    assert float(zs[-1][1]) == 10_000.0 and float(zs[123][7]) == 130.0
