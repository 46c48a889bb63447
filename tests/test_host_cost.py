"""Host cost of repeated calls: a reduction or a step of a loop repeated with the same
structure but a new size or scalar compiles no pipeline and plans no new reduction
kernel, and still gives NumPy's values."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._graph import fusion
from wgarray._kernels import reduce as kr
from wgarray import debug


def _ints(shape, seed):
    """float32 values that are small integers, so sums of a million are exact."""
    return np.random.default_rng(seed).integers(-4, 8, shape).astype(np.float32)


def _realized(host):
    a = xp.asarray(host)
    xp.evaluate(a)
    return a


# (description, call on (xp or np, array, scalar), first shape, second shape). The two
# shapes keep the same lanes-per-row class (a structural choice), so nothing is new.
REPEATS = [
    ("sum_all", lambda ns, a, s: ns.sum(a), (1000, 1000), (700, 900)),
    ("sum_axis0", lambda ns, a, s: ns.sum(a, axis=0), (1000, 1000), (900, 700)),
    ("sum_axis1_scaled", lambda ns, a, s: ns.sum(a * s, axis=1), (300, 1000), (200, 900)),
    ("mean_axis1_scaled", lambda ns, a, s: ns.mean(a * s, axis=1), (300, 1000), (200, 900)),
    ("max_axis0_shifted", lambda ns, a, s: ns.max(a - s, axis=0), (500, 64), (400, 48)),
    ("argmax_all", lambda ns, a, s: ns.argmax(a), (600, 700), (600, 800)),
]


@pytest.mark.parametrize("name,call,shape1,shape2", REPEATS, ids=[r[0] for r in REPEATS])
def test_reduction_repeat_with_new_size_and_scalar_compiles_and_plans_nothing(name, call, shape1, shape2):
    h1, h2 = _ints(shape1, 1), _ints(shape2, 2)
    a1, a2 = _realized(h1), _realized(h2)
    first = call(xp, a1, 2.0)
    np.testing.assert_array_equal(np.asarray(first), call(np, h1, np.float32(2.0)))
    kernels, specs = len(kr._KERNELS), len(fusion._CONTIGUOUS_SPECS)
    debug.reset_counters()
    second = call(xp, a2, 3.0)
    xp.evaluate(second)
    assert debug.counters().get("pipelines_compiled", 0) == 0
    assert len(kr._KERNELS) == kernels
    assert len(fusion._CONTIGUOUS_SPECS) == specs
    np.testing.assert_array_equal(np.asarray(second), call(np, h2, np.float32(3.0)))


def test_reduction_of_contiguous_view_with_offset_matches_numpy():
    # a row block of a realized array: a contiguous Data with an element offset,
    # aligned (4) and unaligned (3) for the vec4 loads
    host = _ints((64, 1000), 3)
    a = _realized(host)
    for start in (4, 3):
        got = xp.sum(a[start:start + 40], axis=1)
        np.testing.assert_array_equal(np.asarray(got), host[start:start + 40].sum(axis=1))
        got = xp.sum(a[start:start + 40])
        assert float(got) == float(host[start:start + 40].sum(dtype=np.float64))


def test_reduction_special_values_through_cached_path():
    host = np.array([1.0, np.nan, 2.0, -0.0] * 300, np.float32)
    a = _realized(host)
    assert np.isnan(float(xp.sum(a)))
    assert np.isnan(float(xp.max(a)))
    neg_host = np.full(1000, -0.0, np.float32)
    # NumPy's sum of negative zeros is +0.0 (its reduction starts from the identity 0.0)
    assert np.signbit(float(xp.sum(_realized(neg_host)))) == np.signbit(neg_host.sum())
    inf = _realized(np.array([np.inf, 1.0] * 500, np.float32))
    assert float(xp.sum(inf)) == np.inf


def test_contiguous_integer_and_small_dtypes_reduce_through_cache():
    for dtype in (np.int32, np.uint8, np.int16):
        host = np.random.default_rng(4).integers(0, 50, (300, 70)).astype(dtype)
        a = _realized(host)
        np.testing.assert_array_equal(np.asarray(xp.sum(a, axis=1)), host.sum(axis=1))
        np.testing.assert_array_equal(np.asarray(xp.max(a, axis=0)), host.max(axis=0))


def test_unique_of_same_array_sorts_once_and_sees_later_writes():
    host = np.random.default_rng(5).integers(0, 5, 20_000).astype(np.int64)
    y = _realized(host)
    np.testing.assert_array_equal(np.asarray(xp.unique_values(y)), np.unique(host))
    debug.reset_counters()
    again = xp.unique_values(y)
    counts = xp.unique_counts(y).counts
    xp.evaluate(again, counts)
    assert debug.counters().get("readbacks", 0) == 0  # no second sort (it reads its count)
    np.testing.assert_array_equal(np.asarray(again), np.unique(host))
    np.testing.assert_array_equal(np.asarray(counts), np.unique(host, return_counts=True)[1])
    y[3] = 9  # the memoized result must not survive a write
    host[3] = 9
    np.testing.assert_array_equal(np.asarray(xp.unique_values(y)), np.unique(host))
    view = y[100:200]  # another view of the same buffer is another key
    np.testing.assert_array_equal(np.asarray(xp.unique_values(view)), np.unique(host[100:200]))
    inv = xp.unique_inverse(y).inverse_indices
    np.testing.assert_array_equal(np.asarray(inv), np.unique(host, return_inverse=True)[1])


def test_unique_of_a_copy_of_unique_values_is_memoized_and_sees_writes():
    # scikit-learn's unique_labels: unique_values(concat([unique_values(y)])); from the
    # second call on, neither sort runs (each reads a count back)
    host = np.random.default_rng(6).integers(-3, 7, 5000).astype(np.int64)
    y = _realized(host)
    first = xp.unique_values(xp.concat([xp.unique_values(y)]))
    np.testing.assert_array_equal(np.asarray(first), np.unique(host))
    debug.reset_counters()
    values = xp.unique_values(y)
    again = xp.unique_values(xp.concat([values]))
    xp.evaluate(again)
    assert debug.counters().get("readbacks", 0) == 0
    np.testing.assert_array_equal(np.asarray(again), np.unique(host))
    values[0] = 100  # a write into the memoized values copies them first
    np.testing.assert_array_equal(np.asarray(values), np.concatenate([[100], np.unique(host)[1:]]))
    np.testing.assert_array_equal(np.asarray(xp.unique_values(y)), np.unique(host))
    np.testing.assert_array_equal(np.asarray(xp.unique_values(xp.concat([values]))),
                                  np.unique(np.concatenate([[100], np.unique(host)[1:]])))


@pytest.mark.parametrize("shape", [(40_000, 32), (2048 * 3 + 77, 5), (257 * 16, 128)], ids=str)
def test_column_sums_of_tall_arrays_match_numpy(shape, monkeypatch):
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)  # the path at test sizes
    # tall arrays with few columns are summed as (P, Q, F) plus leftover rows
    host = _ints(shape, 6)
    host[5, 1] = np.nan
    host[7, 2] = np.inf
    host[9, 3 % shape[1]] = -np.inf
    a = _realized(host)
    got = np.asarray(xp.sum(a, axis=0))
    np.testing.assert_array_equal(got, host.sum(axis=0, dtype=np.float64).astype(np.float32))
    zeros_host = np.full(shape, -0.0, np.float32)
    np.testing.assert_array_equal(np.signbit(np.asarray(xp.sum(_realized(zeros_host), axis=0))),
                                  np.signbit(zeros_host.sum(axis=0)))
    clean = _ints(shape, 7)
    c = _realized(clean)
    np.testing.assert_array_equal(np.asarray(xp.sum((c - 1.0) * 2.0, axis=0)), ((clean - 1.0) * 2.0).sum(axis=0))
    np.testing.assert_allclose(np.asarray(xp.var(c, axis=0)), clean.astype(np.float64).var(axis=0), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16, np.int64])
def test_column_sums_of_tall_integer_arrays_match_numpy(dtype, monkeypatch):
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)
    host = np.random.default_rng(8).integers(0, 100, (30_000, 7)).astype(dtype)
    a = _realized(host)
    got = xp.sum(a, axis=0)
    assert got.dtype == xp.asarray(host.sum(axis=0)).dtype
    np.testing.assert_array_equal(np.asarray(got), host.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(xp.sum(a[1000:], axis=0)), host[1000:].sum(axis=0))


def test_column_sum_takes_the_tall_path_only_for_large_arrays(monkeypatch):
    host = _ints((40_000, 32), 11)
    a = _realized(host)
    debug.reset_counters()
    xp.evaluate(xp.sum(a, axis=0))
    direct = debug.counters()["dispatches"]
    monkeypatch.setattr(kr, "COLUMNS_MIN_ELEMENTS", 0)
    a = _realized(host)  # another buffer: a repeat on the same one is memoized (wgarray/_known.py)
    debug.reset_counters()
    got = xp.sum(a, axis=0)
    xp.evaluate(got)
    assert debug.counters()["dispatches"] > direct  # (P, Q, F) partials, then their sum
    np.testing.assert_array_equal(np.asarray(got), host.sum(axis=0))


def test_loop_reducing_its_state_keeps_the_pending_chain_short():
    from wgarray._graph import node as g

    host = _ints((1000,), 9)
    y = _realized(host)
    for step in range(1, 41):
        y = y + 1.0
        assert float(xp.sum(y)) == float((host + step).sum(dtype=np.float64))
        assert g.settle(y._node).n_nodes <= kr.REALIZE_PRODUCER_NODES + 1
    np.testing.assert_array_equal(np.asarray(y), host + 40)


def test_reduction_of_a_long_chain_matches_numpy_and_realizes_it_once():
    host = _ints((300, 50), 10)
    x = _realized(host)
    chain, ref = x, host.copy()
    for i in range(30):
        chain = chain * 1.0 + float(i % 3)
        ref = ref * np.float32(1.0) + np.float32(i % 3)
    debug.reset_counters()
    got = xp.sum(chain, axis=1)
    xp.evaluate(got)
    assert debug.counters()["realizations"] == 1  # the chain, once; the reduction reads it
    np.testing.assert_array_equal(np.asarray(got), ref.sum(axis=1))


# ------------------------------------------------------------ the host path
#
# Host time is checked by counting Python-level work (planner walks, plans derived,
# views built, names checked), which a loaded CI machine cannot make flaky; the values
# are compared with NumPy (exactly: small integers) and with the unmemoized path (bits).

from wgarray import _core  # noqa: E402
from wgarray._array import Array  # noqa: E402
from wgarray._graph import node as gnode  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402


class _Calls:
    """Counts the calls of ``module.name`` (wrapped in place by monkeypatch)."""

    def __init__(self, monkeypatch, module, name):
        self.n = 0
        inner = getattr(module, name)

        def counted(*args, **kwargs):
            self.n += 1
            return inner(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_repeated_reduction_walks_its_graph_once_and_plans_nothing(axis, monkeypatch):
    h1, h2 = _ints((300, 70), 20), _ints((300, 70), 21)
    a1, a2 = _realized(h1), _realized(h2)
    np.testing.assert_array_equal(np.asarray(xp.sum((a1 - 1.5) ** 2, axis=axis)),
                                  ((h1 - np.float32(1.5)) ** 2).sum(axis=axis))
    walks = _Calls(monkeypatch, kr, "signature")
    plans = _Calls(monkeypatch, fusion, "_plan")
    views = _Calls(monkeypatch, gnode, "view")
    names = _Calls(monkeypatch, default_device().runtime, "launch")
    got = xp.sum((a2 - 2.5) ** 2, axis=axis)  # another buffer and scalar, the same structure
    assert (walks.n, plans.n, views.n, names.n) == (1, 0, 0, 0)
    np.testing.assert_array_equal(np.asarray(got), ((h2 - np.float32(2.5)) ** 2).sum(axis=axis))


STATS = [
    ("mean", lambda ns, a, axis: ns.mean(a, axis=axis)),
    ("var", lambda ns, a, axis: ns.var(a, axis=axis)),
    ("var_corrected", lambda ns, a, axis: ns.var(a, axis=axis, correction=1) if ns is xp
     else ns.var(a, axis=axis, ddof=1)),
    ("std", lambda ns, a, axis: ns.std(a, axis=axis)),
]


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
@pytest.mark.parametrize("name,call", STATS, ids=[s[0] for s in STATS])
def test_repeated_mean_var_std_walk_their_graph_once_and_plan_nothing(name, call, axis, monkeypatch):
    h1, h2 = _ints((300, 70), 40), _ints((300, 70), 41)
    a1, a2 = _realized(h1), _realized(h2)
    np.testing.assert_allclose(np.asarray(call(xp, (a1 - 1.5) * 2.0, axis)),
                               call(np, ((h1 - np.float32(1.5)) * np.float32(2.0)).astype(np.float64), axis),
                               rtol=1e-5)
    walks = _Calls(monkeypatch, kr, "signature")
    plans = _Calls(monkeypatch, fusion, "_plan")
    views = _Calls(monkeypatch, gnode, "view")
    names = _Calls(monkeypatch, default_device().runtime, "launch")
    posts = _Calls(monkeypatch, kr, "_Post")  # the post-map (division, square root) planned again
    got = call(xp, (a2 - 2.5) * 3.0, axis)  # another buffer and scalars, the same structure
    assert (walks.n, plans.n, views.n, names.n, posts.n) == (1, 0, 0, 0, 0)
    np.testing.assert_allclose(np.asarray(got),
                               call(np, ((h2 - np.float32(2.5)) * np.float32(3.0)).astype(np.float64), axis),
                               rtol=1e-5)


def test_replayed_mean_and_var_give_the_bits_of_planned_ones():
    host = np.random.default_rng(42).standard_normal((257, 300)).astype(np.float32)
    host[3, 4] = np.nan
    host[100, 7] = np.inf
    x = _realized(host)
    for call in (lambda a, axis: xp.mean(a, axis=axis), lambda a, axis: xp.var(a, axis=axis),
                 lambda a, axis: xp.std(a, axis=axis, correction=1)):
        for axis in (None, 0, 1):
            kr._CALLS.clear()
            kr._MOMENTS.clear()
            kr._POSTS.clear()
            planned = np.asarray(call(x * 0.5 - 1.0, axis))
            replayed = np.asarray(call(x * 0.5 - 1.0, axis))
            assert planned.tobytes() == replayed.tobytes()
    clean = host[:, 8:]  # no NaN or inf: compared with NumPy in float64
    xc = _realized(np.ascontiguousarray(clean))
    for axis in (None, 0, 1):
        for corr in (0, 1, 2.5):
            for _ in range(2):  # planned, then replayed
                got = np.asarray(xp.var(xc, axis=axis, correction=corr))
                np.testing.assert_allclose(got, np.var(clean.astype(np.float64), axis=axis, ddof=corr), rtol=1e-5)


def test_replayed_reduction_gives_the_bits_of_a_planned_one():
    host = np.random.default_rng(22).standard_normal((257, 300)).astype(np.float32)
    x = _realized(host)
    for axis in (None, 0, 1):
        for c in (0.25, -3.0):
            kr._CALLS.clear()
            planned = np.asarray(xp.sum(x * c - 1.0, axis=axis))
            replayed = np.asarray(xp.sum(x * c - 1.0, axis=axis))
            assert planned.tobytes() == replayed.tobytes()
            np.testing.assert_allclose(replayed, (host * np.float32(c) - np.float32(1.0)).sum(axis=axis),
                                       rtol=1e-4, atol=1e-3)


# Inputs that differ from a plain contiguous (64, 48) float32 array in one structural
# trait, each made on the device as user code would: the memo must give each its own
# program (a plan for one must never serve another), and each must match NumPy exactly.
def _plain(h):
    return _realized(h), h


def _other_dtype(h):
    return _realized(h.astype(np.int32)), h.astype(np.int32)


def _other_rank(h):
    return _realized(h.reshape(8, 8, 48)), h.reshape(8, 8, 48)


def _broadcast_row(h):
    return xp.broadcast_to(_realized(h[:1].copy()), h.shape), np.broadcast_to(h[:1], h.shape)


def _strided(h):
    wide = np.repeat(h, 2, axis=1)
    wide[:, 1::2] = 99
    return _realized(wide)[:, ::2], h


def _transposed(h):
    return xp.permute_dims(_realized(np.ascontiguousarray(h.T)), (1, 0)), h


TRAITS = [_other_dtype, _other_rank, _broadcast_row, _strided, _transposed]


@pytest.mark.parametrize("other", TRAITS, ids=[t.__name__.strip("_") for t in TRAITS])
def test_reduction_memo_keeps_structures_apart(other):
    base = _ints((64, 48), 30)
    for make in (_plain, other, _plain, other):
        arr, host = make(base)
        for axis in (None, 0, -1):
            got = np.asarray(xp.sum(arr * 2 - 1, axis=axis))
            want = (host * 2 - 1).sum(axis=axis)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want.astype(got.dtype))


def test_reduction_memo_tells_scalar_from_array_operand_and_sharing():
    h, k = _ints((40, 30), 32), _ints((40, 30), 33)
    x, y = _realized(h), _realized(k)
    cases = [
        (lambda a, b: xp.sum(a - 3.0, axis=0), lambda a, b: (a - np.float32(3.0)).sum(axis=0)),
        (lambda a, b: xp.sum(a - b, axis=0), lambda a, b: (a - b).sum(axis=0)),
        (lambda a, b: xp.sum(a - a, axis=0), lambda a, b: (a - a).sum(axis=0)),
        (lambda a, b: xp.sum(a * b - b, axis=0), lambda a, b: (a * b - b).sum(axis=0)),
        (lambda a, b: xp.sum(a * b - a, axis=0), lambda a, b: (a * b - a).sum(axis=0)),
        # b * a - a is a * b - b with the buffers swapped: one structure, one program
        (lambda a, b: xp.sum(b * a - a, axis=0), lambda a, b: (b * a - a).sum(axis=0)),
    ]
    before = len(kr._CALLS)
    for _ in range(2):
        for ours, ref in cases:
            np.testing.assert_array_equal(np.asarray(ours(x, y)), ref(h, k))
    assert len(kr._CALLS) == before + len(cases) - 1  # a program per structure, reused the second time


def test_reduction_memo_writes_in_each_calls_offsets():
    host = _ints((4000,), 34)
    x = _realized(host)
    # same length and offset class (mod 4), other offsets: one program, new offsets
    for start in (3, 7, 11, 4, 8):
        np.testing.assert_array_equal(np.asarray(xp.sum(x[start:start + 3000] * 2.0)),
                                      (host[start:start + 3000] * 2).sum())
        np.testing.assert_array_equal(np.asarray(xp.sum(x[start:start + 3000])), host[start:start + 3000].sum())


def test_reduction_memo_sees_writes_to_its_input():
    host = _ints((50, 60), 35)
    x = _realized(host)
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(xp.sum(x + 1.0, axis=1)), (host + 1).sum(axis=1))
        x[i, 2 * i] = 100.0
        host[i, 2 * i] = 100.0


def test_reduction_with_a_shared_scalar_node_under_a_permutation_is_right():
    # one Const object read by two ops: a permuting view splits it in two, so the
    # recorded passes do not replay onto this graph's scalars and it is planned anew
    h = _ints((30, 20), 36)
    x = _realized(h)
    dev = x.device
    for v in (1.5, 2.5, 1.5):
        c = gnode.Const(v, xp.float32, dev)
        n = gnode.make_op("multiply", [gnode.make_op("subtract", [x._node, c], xp.float32), c], xp.float32)
        got = Array._new(kr.reduce_axes(n, (0,), "sum")[0])
        np.testing.assert_array_equal(np.asarray(got), ((h - np.float32(v)) * np.float32(v)).sum(axis=0))


def test_replayed_reductions_with_post_maps_and_arg_kinds_match_numpy():
    for rows, cols in ((3, 40_000), (200, 30)):
        for seed in (37, 38):
            host = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
            host[0, 5] = np.nan if seed == 38 else host[0, 5]
            x = _realized(host)
            np.testing.assert_array_equal(np.asarray(xp.argmax(x, axis=1)), host.argmax(axis=1))
            np.testing.assert_array_equal(np.asarray(xp.argmin(x * -1.0, axis=0)), (host * -1).argmin(axis=0))
            ints = _ints((rows, cols), seed)
            xi = _realized(ints)
            np.testing.assert_array_equal(np.asarray(xp.mean(xi * 2.0, axis=1)),
                                          (ints * 2).astype(np.float64).mean(axis=1).astype(np.float32))
    # two post-maps of one structure of input: each its own result
    h = _ints((20, 8), 39)
    x = _realized(h)
    halves = kr.reduce_axes(x._node, (1,), "sum", post=lambda t: gnode.make_op("multiply", [t, gnode.Const(
        0.5, xp.float32, x.device)], xp.float32))[0]
    roots = kr.reduce_axes(x._node, (1,), "sum", post=lambda t: gnode.make_op("abs", [t], xp.float32))[0]
    np.testing.assert_array_equal(np.asarray(Array._new(halves)), h.sum(axis=1) * np.float32(0.5))
    np.testing.assert_array_equal(np.asarray(Array._new(roots)), np.abs(h.sum(axis=1)))


def test_repeated_loop_step_derives_no_plan(monkeypatch):
    y = _realized(np.arange(1000, dtype=np.float32))
    y = y * 0.5 + 1.0
    float(y[3])
    derived = _Calls(monkeypatch, fusion, "_derive")
    compiled = debug.counters().get("pipelines_compiled", 0)
    ref = np.arange(1000, dtype=np.float32) * np.float32(0.5) + np.float32(1.0)
    for _ in range(5):
        y = y * 0.5 + 1.0
        ref = ref * np.float32(0.5) + np.float32(1.0)
        assert float(y[3]) == float(ref[3])
    assert derived.n == 0
    assert debug.counters().get("pipelines_compiled", 0) == compiled


def test_lazy_op_fast_path_builds_without_the_general_operand_checks(monkeypatch):
    x = _realized(np.arange(12, dtype=np.float32).reshape(3, 4))
    general = _Calls(monkeypatch, _core, "operands")
    x * 2.0
    1.0 - x
    x + x
    x < 3
    x ** 2
    assert general.n == 0


def test_lazy_op_fast_path_matches_numpy_and_the_general_path():
    f = np.array([[1.5, -0.0, np.nan], [np.inf, -np.inf, 0.0]], np.float32)
    i = np.array([[1, -7, 3], [0, 2**31 - 1, -(2**31)]], np.int32)
    u = np.array([[1, 7, 3], [0, 255, 128]], np.uint8)
    xf, xi, xu = _realized(f), _realized(i), _realized(u)
    real = np.dtype(str(xp.__array_namespace_info__().default_dtypes(device=xf.device)["real floating"]))
    with np.errstate(all="ignore"):
        checks = [
            (xf * 2.0, f * np.float32(2.0)), (1.0 - xf, np.float32(1.0) - f), (xf / 3, f / np.float32(3)),
            (xf + xf, f + f), (xf < 1.5, f < np.float32(1.5)), (2 ** 0.5 * xf, np.float32(2 ** 0.5) * f),
            (xi + 5, i + np.int32(5)), (xi * xi, i * i), (3 - xi, np.int32(3) - i), (xi > 0, i > 0),
            (xu + 200, u + np.uint8(200)), (xu - xu, u - u), (xi / 2, (i / 2).astype(real)),
            (xf * 1, f * np.float32(1)), (xf - True, f - np.float32(1)),
            (xf ** 2, f * f), (xf ** 1, f), (xi ** 2, i * i), (xf ** 2.0, f * f),
        ]
    for got, want in checks:
        assert got.dtype == xp.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(OverflowError, match="add"):
        xu + 300
    with pytest.raises(TypeError, match="subtract"):
        xp.asarray(np.array([True])) - True  # bool has no subtraction: the general path says so
    zeros = xp.zeros((2, 3)) * 2.0  # a lazy Const array: still an op with an array source
    np.testing.assert_array_equal(np.asarray(zeros), np.zeros((2, 3), np.float32))


def test_repeated_loop_step_reuses_its_buffers_and_bind_groups(monkeypatch):
    # the pool hands out each size's oldest free buffer, so a step that allocates the
    # same sizes in the same order gets the same buffers whatever order the last step
    # freed them in, and finds its bind groups cached
    from wgarray._runtime import runtime as rtmod

    h = _ints((500, 64), 50)
    x = _realized(h)

    def step(c):
        t = x * c + 1.0
        u = xp.sum(t * t, axis=1)
        v = xp.max(t - u[:, None], axis=1)
        out = np.asarray(v)
        del t, u, v
        return out

    for c in (2.0, 3.0):
        step(c)
    made = _Calls(monkeypatch, rtmod._NATIVE, "bind_group")
    debug.reset_counters()
    got = step(4.0)
    assert made.n == 0 and debug.counters().get("buffers_created", 0) == 0
    t = h * np.float32(4.0) + np.float32(1.0)
    np.testing.assert_array_equal(got, (t - (t * t).sum(axis=1)[:, None]).max(axis=1))


def test_loop_step_frees_its_buffers_without_the_cyclic_collector():
    # a reference cycle (a recursive closure, say) holding a step's graph would keep
    # its buffers until the collector runs: each step would then take fresh buffers
    import gc

    h = _ints((400, 48), 51)
    x = _realized(h)
    rt = default_device().runtime

    def step(c):
        t = x * c + 1.0
        u = xp.sum(t * t, axis=1)
        w = xp.sum(t - u[:, None], axis=1)
        return np.asarray(xp.mean(w) + xp.var(w) + xp.max(w, axis=0))

    step(1.0)
    gc.collect()
    gc.disable()
    try:
        live = []
        for c in (2.0, 3.0, 4.0, 5.0):
            got = step(c)
            live.append(len(rt.pool.live))
        assert len(set(live[1:])) == 1
        assert gc.collect() == 0
    finally:
        gc.enable()
    t = h * np.float32(5.0) + np.float32(1.0)
    w = (t - (t * t).sum(axis=1)[:, None]).sum(axis=1)
    np.testing.assert_allclose(got, w.mean() + w.var() + w.max(), rtol=1e-5)


# ----------------------------------------------- repeated checks on unchanged data

def test_repeated_finite_check_of_an_uploaded_array_reads_back_once():
    # scikit-learn's check_array: bool(isfinite(sum(X))), asked again for the same X
    host = np.random.default_rng(7).standard_normal((300, 7)).astype(np.float32)
    X = xp.asarray(host)
    assert bool(xp.isfinite(xp.sum(X)))
    debug.reset_counters()
    for _ in range(3):
        assert bool(xp.isfinite(xp.sum(X)))
    assert float(xp.sum(X)) == float(xp.sum(X))
    assert debug.counters().get("readbacks", 0) == 1  # the sum itself, once
    assert debug.counters().get("dispatches", 0) == 0
    np.testing.assert_allclose(float(xp.sum(X)), host.sum(dtype=np.float64), rtol=1e-5)
    X[3, 2] = float("nan")  # an in-place write: the memos of X are dropped
    assert not bool(xp.isfinite(xp.sum(X)))
    X[3, 2] = 1.0
    assert bool(xp.isfinite(xp.sum(X)))
    host[3, 2] = 1.0
    np.testing.assert_allclose(float(xp.sum(X)), host.sum(dtype=np.float64), rtol=1e-5)


def test_memoized_reductions_keep_their_keys_apart_and_copy_on_write():
    host = np.random.default_rng(8).integers(-5, 9, (40, 30)).astype(np.float32)
    X = xp.asarray(host)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(xp.sum(X, axis=0)), host.sum(axis=0))
        np.testing.assert_array_equal(np.asarray(xp.sum(X, axis=1)), host.sum(axis=1))
        np.testing.assert_array_equal(np.asarray(xp.sum(X, axis=1, keepdims=True)), host.sum(axis=1, keepdims=True))
        np.testing.assert_array_equal(np.asarray(xp.max(X, axis=1)), host.max(axis=1))
        np.testing.assert_array_equal(np.asarray(xp.mean(X, axis=1)), host.mean(axis=1))
        np.testing.assert_array_equal(np.asarray(xp.sum(X[1:], axis=1)), host[1:].sum(axis=1))
        assert float(xp.min(X)) == host.min() and float(xp.sum(X)) == host.sum()
    s = xp.sum(X)
    s[...] = 5.0  # written in place: the memoized result is copied first
    assert float(s) == 5.0 and float(xp.sum(X)) == host.sum()
    Y = X + 1.0  # a computed array is not memoized by (its buffer may be a workspace)
    np.testing.assert_array_equal(np.asarray(xp.sum(Y, axis=0)), (host + 1).sum(axis=0))


def test_memoized_small_read_is_by_structure_offsets_and_scalars():
    host = np.array([1.0, -2.0, np.inf, 4.0], np.float32)
    x = xp.asarray(host)
    assert bool(x[0] > 0.5) and not bool(x[1] > 0.5) and not bool(x[0] > 1.5)
    assert not bool(xp.isfinite(x[2])) and bool(xp.isfinite(x[3]))
    assert bool(x[0] > 0.5) and not bool(x[0] > 1.5) and bool(x[0] >= 1.0)
    for zero in (-0.0, 0.0, -0.0):  # scalars by their bits: -0.0 is not 0.0
        got, want = np.asarray(x * zero), host * np.float32(zero)
        # inf * 0 is NaN, whose sign and payload the device chooses (the H200: 0x7fffffff)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))
    x[0] = -1.0
    assert not bool(x[0] > 0.5)


def test_take_of_indices_of_known_range_skips_the_bounds_readback():
    # scikit-learn's svd_flip: take(ravel(u), argmax(abs(u), axis=0) + arange(n) * m)
    host = np.random.default_rng(9).standard_normal((6, 5)).astype(np.float32)
    u = xp.asarray(host)
    xp.evaluate(u)
    rows = xp.argmax(xp.abs(u), axis=0)
    shift = xp.arange(5)
    debug.reset_counters()
    picked = xp.take(xp.reshape(u, (-1,)), rows * 5 + shift)  # row r, column c of u
    assert debug.counters().get("readbacks", 0) == 0
    want_rows = np.argmax(np.abs(host), axis=0)
    np.testing.assert_array_equal(np.asarray(picked), host.ravel()[want_rows * 5 + np.arange(5)])
    back = xp.take(xp.arange(10), xp.arange(5) - 5)  # negative, in range: -5..-1
    np.testing.assert_array_equal(np.asarray(back), np.arange(5, 10))
    with pytest.raises(IndexError):
        xp.take(xp.arange(5), xp.arange(5) + 1)  # one past the end: still checked
    with pytest.raises(IndexError):
        xp.take(xp.arange(5), xp.arange(5) - 6)
    small = xp.astype(xp.arange(200), xp.int8)  # a cast that wraps: no range, checked
    with pytest.raises(IndexError):
        xp.take(xp.arange(100), small)  # 100..127 (and -128..-101) are out of bounds
    r = xp.arange(4)
    r[0] = 7  # an in-place write drops the range
    with pytest.raises(IndexError):
        xp.take(xp.arange(5), r)


def test_one_element_read_moves_one_element_and_a_loop_two_round_trips():
    # float(L[0, 0]) of a large result reads that element alone; a second element read of
    # the same value reads the whole array (a loop over elements: two round trips); an
    # in-place write starts over; a small array is read whole at once. Views, a lazy
    # base and -0.0 / NaN elements give NumPy's values
    host = np.arange(3 * 20000, dtype=np.float32).reshape(3, 20000)
    host[1, 5], host[2, 7] = -0.0, np.nan
    x = _realized(host)
    debug.reset_counters()
    assert float(x[0, 3]) == 3.0
    c = debug.counters()
    assert c["readbacks"] == 1 and c["bytes_downloaded"] == 4
    debug.reset_counters()
    got = [float(x[i, j]) for i in range(3) for j in range(10)]
    np.testing.assert_array_equal(got, host[:, :10].ravel())
    assert np.signbit(float(x[1, 5]))
    c = debug.counters()
    assert c["readbacks"] == 1 and c["bytes_downloaded"] == host.nbytes
    x[2, 2] = 5.0  # a new value: one element again
    debug.reset_counters()
    assert float(x[2, 2]) == 5.0 and debug.counters()["bytes_downloaded"] == 4
    row = x[1]  # a view's elements, after a write through the base
    x[1, 9] = -2.5
    assert float(row[9]) == -2.5 and float(row[8]) == host[1, 8]
    lazy = x * 2.0
    assert float(lazy[0, 11]) == 22.0 and np.isnan(float(lazy[2, 7]))
    small = _realized(host[0, :100])
    debug.reset_counters()
    assert [float(small[i]) for i in range(100)] == host[0, :100].tolist()
    c = debug.counters()
    assert c["readbacks"] == 1 and c["bytes_downloaded"] == 400
