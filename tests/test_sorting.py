"""sort and argsort against NumPy's stable sort, for every real dtype the device offers:
NaN/±inf/±0, duplicates, both directions (NaNs last in both), batched along any axis,
multi-tile inputs, fused (lazy) inputs, empty and 0-d arrays."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgarray as xp
from conftest import DTYPES, assert_exact, ids, sample

REAL = [d for d in DTYPES if d.kind != "c"]


def values(d, n, seed=0, dups=True):
    """n values of dtype d: the edge values, random ones, and (dups) many repeats."""
    v = sample(d, n, seed)
    rng = np.random.default_rng(seed + 7)
    if dups:
        v = np.concatenate([v, rng.choice(v[: max(4, len(v) // 8)], n)])
    return rng.permutation(v)


def ref_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """NumPy's stable argsort; descending keeps ties in order and NaNs last."""
    if descending:
        a = ~a if a.dtype.kind in "biu" else -a
    return np.argsort(a, axis=axis, kind="stable")


def check(a: np.ndarray, axis: int = -1, descending: bool = False, x=None):
    x = xp.asarray(a) if x is None else x
    want = ref_argsort(a, axis, descending)
    assert_exact(xp.argsort(x, axis=axis, descending=descending), want, msg="argsort")
    assert_exact(xp.sort(x, axis=axis, descending=descending), np.take_along_axis(a, want, axis), msg="sort")


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
def test_sort_argsort_1d_specials_and_duplicates_match_numpy_stable(d, descending):
    check(values(d, 200), descending=descending)


@pytest.mark.parametrize("d", REAL, ids=ids(REAL))
def test_sort_batched_along_every_axis(d):
    a = values(d, 60, seed=3)[:120].reshape(4, 5, 6)
    for axis in (0, 1, 2, -1):
        check(a, axis, descending=axis == 1)


@pytest.mark.parametrize("d", [xp.float32, xp.int64, xp.uint8], ids=str)
def test_sort_many_tiles(d):
    # more than one radix tile per row; more than one scan level for the digit counts
    a = np.random.default_rng(1).permutation(np.resize(values(d, 20000, seed=5), 300_000))
    check(a)
    check(a, descending=True)


@pytest.mark.parametrize("path", ["subgroups", "workgroup-memory"])
@pytest.mark.parametrize("n", [1, 1023, 1024, 5000, 1024 * 1024 + 3])
def test_u32_scan_and_radix_digit_scan_on_both_paths(path, n, monkeypatch):
    # Workgroup-wide scans go through subgroup operations where the runtime's probe
    # found usable subgroups, else through workgroup memory: both must agree with NumPy.
    from wgarray._kernels import scan as kscan

    dev = xp.__array_namespace_info__().default_device()
    rt = dev.runtime
    sg = rt.subgroup_size
    if "subgroup" not in dev.features:
        assert sg is None
    else:
        assert sg is None or (256 % sg == 0 and 4 <= sg <= 128)
    if path == "subgroups" and sg is None:
        pytest.skip("the device has no usable subgroups")
    monkeypatch.setattr(kscan, "use_subgroups", lambda runtime: path == "subgroups")
    a = np.random.default_rng(n).integers(0, 1000, n, dtype=np.uint32)
    out = kscan.exclusive_scan(xp.asarray(a)._node)
    got = rt.read(out.buf, 0, 4 * (n + 1)).view("<u4")
    assert np.array_equal(got, np.concatenate([[0], np.cumsum(a)]).astype(np.uint32))
    # (family, spec) keys; kernels not yet on launch records have keys of their own shapes
    keys = [k for k in rt.kernels if isinstance(k, tuple) and len(k) == 2]
    if n > kscan.SCAN_THREAD_MAX:  # rows this long take the tile layout, whose workgroup scan is the one tested
        assert any(k[0] == "scan" and getattr(k[1], "tag", None) == "u32" and k[1].layout == "tile"
                   and k[1].subgroups == (path == "subgroups") for k in keys)
    b = np.random.default_rng(n + 1).integers(-50, 50, 9000).astype(np.int32)
    check(b)
    keys = [k for k in rt.kernels if isinstance(k, tuple) and len(k) == 2]
    assert any(k[0] == "sort" and k[1][0] == "radix8_down" and k[1][-1] == (path == "subgroups") for k in keys)


def test_sort_many_short_rows():
    # 1000 rows: the row number needs several radix passes of its own
    a = np.random.default_rng(2).standard_normal((1000, 7)).astype(np.float32)
    a[::3, 2] = np.nan
    check(a, axis=1)
    check(a.T.copy(), axis=0, descending=True)


def test_sort_float_zeros_keep_their_order_and_sign():
    a = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0, np.nan, -np.inf, np.inf, -np.nan], np.float32)
    check(a)
    check(a, descending=True)
    got = np.asarray(xp.sort(xp.asarray(a), descending=True))
    assert np.isnan(got[-2:]).all() and got[0] == np.inf


def test_sort_fused_and_strided_inputs():
    a = np.random.default_rng(4).standard_normal((5, 9)).astype(np.float32)
    x = xp.asarray(a)
    check((a * 2 - 1).T, axis=1, x=(x * 2 - 1).T)
    check(a[:, ::2], axis=0, x=x[:, ::2])


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4), (5, 1), (1,)], ids=str)
def test_sort_empty_and_unit_rows(shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)[..., ::-1].copy()
    check(a)
    check(a, axis=0)


def test_sort_rejects_bad_arguments():
    with pytest.raises(ValueError, match="sort"):
        xp.sort(xp.asarray(1.0))
    with pytest.raises(ValueError, match="axis"):
        xp.argsort(xp.asarray([1.0, 2.0]), axis=1)
    with pytest.raises(TypeError, match="complex|real"):
        xp.sort(xp.asarray([1 + 2j]))
    with pytest.raises(TypeError):
        xp.sort([1, 2])


@given(st.data())
def test_sort_random_shapes_hypothesis(data):
    d = data.draw(st.sampled_from(REAL), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3), label="shape"))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    descending = data.draw(st.booleans(), label="descending")
    n = int(np.prod(shape))
    pool = values(d, 16, seed=data.draw(st.integers(0, 1000)))
    a = np.resize(pool, n).reshape(shape)
    check(a, axis, descending)
