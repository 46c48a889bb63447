"""mean / var / std with their post-maps (division, square root) computed by the
reduction's last pass: mean has the bits of the sum followed by the division; var and
std are one pass over the data (Welford per chunk, Chan et al.'s merge), at least as
accurate as the centred two-pass formula and with its NaN/inf pattern. No dispatch
for the post-maps and no recompilation for another divisor."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from conftest import COMPLEX, REAL_FLOAT, assert_exact, ids, npdt, to_np

FLOATS = REAL_FLOAT + COMPLEX
CASES = [(((1 << 16) + 5,), None), ((300, 1001), None), ((300, 1001), 0), ((300, 1001), 1), ((5, 6, 7), (0, 2)),
         ((3000, 40), 0), ((4,), 0)]


def data(d, shape, seed=0):
    rng = np.random.default_rng(seed)
    rt = np.float32 if d.name in ("float32", "complex64") else np.float64
    a = rng.standard_normal(shape).astype(rt)
    if d.kind == "c":
        a = (a + 1j * rng.standard_normal(shape)).astype(npdt(d))
    if a.size >= 64:
        flat = a.reshape(-1)
        idx = rng.choice(flat.size, 4, replace=False)
        flat[idx] = np.array([np.nan, np.inf, -np.inf, -0.0], rt)
    return a


def bits(x) -> np.ndarray:
    return np.asarray(x).copy()


def unfused_mean(x, axis, keepdims=False):
    n = int(np.prod([x.shape[a] for a in (range(x.ndim) if axis is None else np.atleast_1d(axis))]))
    total = xp.sum(x, axis=axis, keepdims=keepdims)
    xp.evaluate(total)  # the division as its own kernel over the stored sum
    return total / float(n)


@pytest.mark.parametrize("d", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("shape,axis", CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_mean_bits_equal_the_unfused_ops_and_std_is_sqrt_of_var(d, shape, axis):
    x = xp.asarray(data(d, shape, seed=len(shape)))
    for keepdims in (False, True):
        assert_exact(xp.mean(x, axis=axis, keepdims=keepdims), bits(unfused_mean(x, axis, keepdims)))
    for correction in (0, 1, 2.5):
        v = xp.var(x, axis=axis, correction=correction)
        xp.evaluate(v)
        assert_exact(xp.std(x, axis=axis, correction=correction), bits(xp.sqrt(v)))
        assert_exact(xp.var(x, axis=axis, correction=correction, keepdims=True),
                     bits(v).reshape(xp.mean(x, axis=axis, keepdims=True).shape))


def two_pass_var(x, axis, correction=0):
    """The variance as the elementwise ops and sums compute it: the centred formula."""
    axes = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    n = int(np.prod([x.shape[a] for a in axes]))
    dev = x - unfused_mean(x, axes, keepdims=True)
    sq = xp.real(dev) * xp.real(dev) + xp.imag(dev) * xp.imag(dev) if x.dtype.kind == "c" else dev * dev
    ss = xp.sum(sq, axis=axes)
    xp.evaluate(ss)
    return np.asarray(ss / float(max(n - correction, 0)))


HARD = {  # (data, axis): offsets far beyond the spread, a constant, huge and tiny values
    "offset": (lambda t: (1e4 + np.random.default_rng(1).standard_normal(200_003)).astype(t), None),
    "offset_columns": (lambda t: (1e6 + np.random.default_rng(2).standard_normal((3000, 70))).astype(t), 0),
    "offset_rows": (lambda t: (-3e5 + np.random.default_rng(3).standard_normal((70, 3000))).astype(t), 1),
    "constant": (lambda t: np.full(50_001, 7.1, t), None),
    "huge": (lambda t: (1e15 * np.random.default_rng(4).standard_normal(9001)).astype(t), None),
    "tiny": (lambda t: (1e-15 * np.random.default_rng(5).standard_normal(9001)).astype(t), None),
}


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
@pytest.mark.parametrize("case", list(HARD))
def test_one_pass_var_at_least_as_accurate_as_the_centred_formula(d, case):
    make, axis = HARD[case]
    a = make(npdt(d))
    x = xp.asarray(a)
    exact = np.var(a.astype(np.float64), axis=axis, ddof=1)
    eps = np.finfo(npdt(d)).eps
    got = np.asarray(xp.var(x, axis=axis, correction=1)).astype(np.float64)
    old = two_pass_var(x, axis, correction=1).astype(np.float64)
    err_got = np.abs(got - exact)
    err_old = np.abs(old - exact)
    assert np.all(err_got <= 2 * err_old + 8 * eps * exact), (case, err_got.max(), err_old.max())


def test_var_special_values_match_the_centred_formula():
    a = data(xp.float32, (300, 77), seed=7)
    rng = np.random.default_rng(8)
    a.flat[rng.choice(a.size, 150, replace=False)] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], np.float32),
                                                               150)
    a[5] = np.inf  # a column of infinities only, and rows with both signs
    x = xp.asarray(a)
    for axis in (None, 0, 1):
        got = np.asarray(xp.var(x, axis=axis))
        old = two_pass_var(x, axis)
        assert np.array_equal(np.isnan(got), np.isnan(old)) and np.array_equal(np.isinf(got), np.isinf(old))
        with np.errstate(all="ignore"):
            assert np.array_equal(np.isnan(got), np.isnan(np.var(a, axis=axis)))
        fin = np.isfinite(old)
        np.testing.assert_allclose(got[fin], old[fin], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [1 << 16, (1 << 16) + 3])
def test_mean_of_tall_columns_bits_equal_the_unfused_ops(rows):
    # the coalesced column-sum path (past 2^21 elements), with and without leftover rows
    x = xp.asarray(data(xp.float32, (rows, 32), seed=rows))
    assert_exact(xp.mean(x, axis=0), bits(unfused_mean(x, 0)))
    assert_exact(xp.mean(x, axis=0, keepdims=True), bits(unfused_mean(x, 0, keepdims=True)))


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_mean_var_std_against_numpy_with_special_cases(d):
    a = data(d, (40, 700), seed=3)
    clean = data(d, (40, 700), seed=4)
    clean[np.isnan(clean) | np.isinf(clean)] = 1.0
    x, c = xp.asarray(a), xp.asarray(clean)
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1):
            got = np.asarray(xp.mean(x, axis=axis))
            assert np.array_equal(np.isnan(got), np.isnan(np.mean(a, axis=axis)))
            np.testing.assert_allclose(np.asarray(xp.mean(c, axis=axis)), np.mean(clean.astype(np.float64), axis=axis),
                                       rtol=2e-6 if d == xp.float32 else 1e-13,
                                       atol=1e-6 if d == xp.float32 else 1e-14)  # means near 0 cancel
            np.testing.assert_allclose(np.asarray(xp.var(c, axis=axis, correction=1)),
                                       np.var(clean.astype(np.float64), axis=axis, ddof=1),
                                       rtol=2e-5 if d == xp.float32 else 1e-12)
            np.testing.assert_allclose(np.asarray(xp.std(c, axis=axis)), np.std(clean.astype(np.float64), axis=axis),
                                       rtol=2e-5 if d == xp.float32 else 1e-12)
    empty = xp.asarray(np.zeros((0, 3), npdt(d)))
    assert_exact(xp.mean(empty, axis=0), np.full(3, np.nan, npdt(d)))
    assert_exact(xp.var(empty, axis=0), np.full(3, np.nan, npdt(d)))
    assert_exact(xp.std(xp.asarray(np.ones(3, npdt(d))), correction=3), np.array(np.nan, npdt(d)))
    assert_exact(xp.mean(xp.asarray(np.array([-0.0, -0.0], npdt(d)))), np.mean(np.array([-0.0, -0.0], npdt(d))))
    assert_exact(xp.mean(xp.asarray(np.array(2.5, npdt(d)))), np.array(2.5, npdt(d)))


def _dispatches(f, *args, **kw):
    xp.evaluate(f(*args, **kw))
    # the same values in new buffers: a repeat on the same uploaded array is memoized
    # (wgarray/_known.py) and would dispatch nothing
    args = [xp.asarray(np.asarray(a)) if isinstance(a, xp.Array) else a for a in args]
    xp.evaluate(*[a for a in args if isinstance(a, xp.Array)])
    debug.reset_counters()
    r = f(*args, **kw)
    xp.evaluate(r)
    c = debug.counters()
    return c["dispatches"], c.get("realizations", 0)


def test_post_maps_cost_no_dispatch():
    small = xp.asarray(np.random.default_rng(5).random(10_000, dtype=np.float32))
    big = xp.asarray(np.random.default_rng(6).random(1 << 20, dtype=np.float32))
    xp.evaluate(small, big)
    # (dispatches, elementwise kernels): one pass per reduction up to 16384 elements
    assert _dispatches(xp.mean, small) == (1, 0)
    assert _dispatches(xp.var, small) == (1, 0)  # one pass over the data: count, mean, deviations
    assert _dispatches(xp.std, small, correction=1) == (1, 0)
    assert _dispatches(xp.mean, big) == (2, 0)
    assert _dispatches(xp.var, big) == (2, 0)
    assert _dispatches(xp.std, big) == (2, 0)
    assert _dispatches(xp.sum, big) == (2, 0)
    m = xp.reshape(big, (1024, 1024))
    assert _dispatches(xp.mean, m, axis=1) == (1, 0)
    assert _dispatches(xp.std, m, axis=0) == (1, 0)
    c = xp.asarray(np.ones((1 << 18,), np.complex64))
    assert _dispatches(xp.var, c) == (2, 0)


def test_post_map_pipelines_keyed_by_structure_not_divisor():
    for n in (5000, 7000):
        xp.evaluate(xp.std(xp.asarray(np.ones(n, np.float32)), correction=1))
    debug.reset_counters()
    for n in (4004, 6000, 9996):
        x = xp.asarray(np.full(n, 3.0, np.float32))
        assert float(xp.mean(x)) == 3.0
        assert float(xp.std(x, correction=1)) == 0.0
    assert debug.counters()["pipelines_compiled"] == 0


@pytest.mark.parametrize("d", FLOATS, ids=ids(FLOATS))
def test_var_of_single_values_and_broadcast_inputs(d):
    t = npdt(d)
    with np.errstate(all="ignore"):
        for v in (np.nan, np.inf, -np.inf, 5.0, -0.0):
            for a in (np.array(v, t), np.array([v], t)):
                assert_exact(xp.var(xp.asarray(a)), np.var(a).astype(np.real(a).dtype))
                assert_exact(xp.std(xp.asarray(a)), np.std(a).astype(np.real(a).dtype))
            b = np.broadcast_to(np.array(v, t), (5, 3))
            x = xp.broadcast_to(xp.asarray(np.array(v, t)), (5, 3))
            assert_exact(xp.var(x, axis=0), np.var(b, axis=0).astype(np.real(b).dtype))
            assert_exact(xp.var(x, axis=1, correction=1), np.var(b, axis=1, ddof=1).astype(np.real(b).dtype))


# An input that is costly to compile (a loop, or a big helper library: float32 tan and
# sin, float64 sin, complex exp) is called from one place in the reduction's loop rather
# than from its unrolled steps; the combines keep the unrolled loop's order, so every
# kind has the bits of the same reduction over the stored input. Lengths on both sides
# of the 4-step loop's bounds (G = 64 and 256 lanes), contiguous (vec4 quads) and strided.
HEAVY_CASES = [((1,), None), ((3,), None), ((191,), None), ((193,), None), ((1029,), None), (((1 << 16) + 5,), None),
               (((1 << 16) + 8,), None), ((300, 1001), 0), ((300, 1001), 1), ((37, 260), 1), ((3000, 40), 0)]


def _heavy(f, x):
    from wgarray._graph.fusion import FusedInput
    from wgarray._wgsl import reduce as rd
    assert rd.heavy_input(FusedInput(f(x)._node).spec)
    stored = f(x)
    xp.evaluate(stored)
    return stored


@pytest.mark.parametrize("shape,axis", HEAVY_CASES, ids=[f"{s}-{a}" for s, a in HEAVY_CASES])
def test_heavy_input_sums_have_the_bits_of_the_stored_input(shape, axis):
    x = xp.asarray(data(xp.float32, shape, seed=len(shape)) * 3)
    stored = _heavy(xp.tan, x)
    assert_exact(xp.sum(xp.tan(x), axis=axis), bits(xp.sum(stored, axis=axis)))
    np.testing.assert_allclose(to_np(xp.sum(xp.tan(x), axis=axis)), np.tan(to_np(x)).sum(axis=axis),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape,axis", [((1029,), None), ((300, 1001), 1), ((3000, 40), 0)])
def test_heavy_input_reductions_of_every_kind(shape, axis):
    x = xp.asarray(data(xp.float32, shape, seed=1) * 3)
    stored = _heavy(xp.tan, x)
    for fn in (xp.mean, xp.var, xp.max, xp.argmin):
        assert_exact(fn(xp.tan(x), axis=axis), bits(fn(stored, axis=axis)), msg=fn.__name__)


HEAVY = [(name, d) for name, ds in (("sin", REAL_FLOAT), ("exp", COMPLEX)) for d in ds]


@pytest.mark.parametrize("name,d", HEAVY, ids=[f"{n}-{d.name}" for n, d in HEAVY])
def test_heavy_inputs_of_every_dtype(name, d):
    x = xp.asarray(data(d, (1 << 12) + 3, seed=2) * 3)
    f = getattr(xp, name)
    stored = _heavy(f, x)
    assert_exact(xp.sum(f(x)), bits(xp.sum(stored)))
    assert_exact(xp.var(f(x)), bits(xp.var(stored)))
    want = getattr(np, name)(to_np(x))
    np.testing.assert_allclose(to_np(xp.sum(f(x))), np.sum(want),
                               rtol=1e-4 if d.name in ("float32", "complex64") else 1e-12)


def test_heavy_inputs_are_called_from_one_place():
    # the WGSL itself: one call of the input in the main loop for a heavy input (quads
    # or elements), the unrolled steps for a light one
    from wgarray._graph.fusion import FusedInput
    from wgarray._wgsl import reduce as rd
    x = xp.asarray(np.ones(1024, np.float32))
    for node, heavy in ((xp.tan(x)._node, True), (xp.exp(x - 1)._node, False)):
        for quad in (False, True):
            inp = FusedInput(node, vec4=quad).spec
            assert rd.heavy_input(inp) is heavy
            spec = rd.ReduceSpec("sum", "f32", 64, quad, inp, None, x.device.has_int64)
            src = rd.render(spec, 8)
            main = src[src.index("fn main"):]
            calls = main.count("in0_at4(" if quad else "in0_at(")
            assert calls == (1 if heavy else 5), (heavy, quad, calls)
            at = src[src.index("fn in0_at4" if quad else "fn in0_at"):src.index("fn main")]
            assert at.count("in0_compute(") == (1 if heavy or not quad else 4)
