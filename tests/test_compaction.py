"""Stream compaction and scans on the device: nonzero against NumPy, the reusable
kernel-family API (compact.nonzero_flat, scan.exclusive_scan, scan.scan_rows,
reduce.reduce_rows), and
that compaction reads back only the count."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from wgarray._graph import node as g
from wgarray._kernels import compact as kcompact
from wgarray._kernels import reduce as kr
from wgarray._kernels import scan as kscan
from wgarray import debug
from wgarray._utility_functions import nonzero
from conftest import DTYPES, assert_exact, ids, npdt, sample


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_nonzero_every_dtype_vs_numpy(d):
    rng = np.random.default_rng(1)
    a = rng.choice(sample(d, 32, 1), 60)
    a = np.where(rng.random(60) < 0.4, np.zeros((), npdt(d)), a).astype(npdt(d)).reshape(3, 4, 5)
    got = nonzero(xp.asarray(a))
    want = np.nonzero(a)
    assert len(got) == len(want)
    for gi, wi in zip(got, want):
        assert_exact(gi, wi.astype(np.int64), dtype=xp.int64)


@pytest.mark.parametrize("shape", [(1,), (7,), (0,), (2, 0, 3), (5000,), (300, 701), (2, 3, 4, 5)], ids=str)
def test_nonzero_shapes(shape):
    rng = np.random.default_rng(2)
    a = (rng.random(shape) < 0.3).astype(np.float32) * rng.standard_normal(shape).astype(np.float32)
    for gi, wi in zip(nonzero(xp.asarray(a)), np.nonzero(a)):
        assert_exact(gi, wi.astype(np.int64))


def test_nonzero_all_none_and_fused_and_0d():
    assert_exact(nonzero(xp.asarray(np.zeros(10, np.int32)))[0], np.zeros(0, np.int64))
    assert_exact(nonzero(xp.asarray(np.ones(4100, bool)))[0], np.arange(4100, dtype=np.int64))
    a = np.arange(-50, 50, dtype=np.int32).reshape(10, 10)
    r = nonzero(xp.asarray(a) % 7 == 3)
    for gi, wi in zip(r, np.nonzero(a % 7 == 3)):
        assert_exact(gi, wi.astype(np.int64))
    with pytest.raises(ValueError):
        nonzero(xp.asarray(np.float32(1.0)))


def test_compaction_reads_back_only_the_count():
    rng = np.random.default_rng(3)
    x = xp.asarray(rng.standard_normal(100_000).astype(np.float32))
    x._realize()
    kcompact.nonzero_flat((x > 0.5)._node)  # first use: kernels compiled, the device's probes run
    debug.reset_counters()
    flat, count = kcompact.nonzero_flat((x > 1.0)._node)
    c = debug.counters()
    assert c["readbacks"] == 1 and c["bytes_downloaded"] == 4
    assert c["dispatches"] <= 4
    want = np.nonzero(np.asarray(x) > 1.0)[0]
    assert count == want.size and flat.shape == (count,) and flat.dtype == xp.int64
    assert_exact(xp.Array._new(flat), want.astype(np.int64))


@pytest.mark.parametrize("n", [1, 5, 2048, 2049, 70_000, 4_500_000])
def test_exclusive_scan_u32_any_length(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 4, n).astype(np.uint32)
    out = kscan.exclusive_scan(xp.asarray(a)._node)
    assert out.shape == (n + 1,) and out.dtype == xp.uint32
    want = np.concatenate([[0], np.cumsum(a, dtype=np.uint32)]).astype(np.uint32)
    assert_exact(xp.Array._new(out), want)


def test_scan_rows_and_reduce_rows_api():
    rng = np.random.default_rng(4)
    a = rng.integers(-5, 5, (6, 3000)).astype(np.int32)
    node = xp.asarray(a)._node
    s = kscan.scan_rows(node, 6, 3000, "sum", include_initial=True)
    assert s.shape == (6, 3001)
    assert_exact(xp.Array._new(s), np.cumulative_sum(a, axis=1, include_initial=True, dtype=np.int32))
    v, i = kr.reduce_rows(node, 6, 3000, "argmax")
    assert_exact(xp.Array._new(i), np.argmax(a, axis=1).astype(np.uint32))
    assert_exact(xp.Array._new(v), a.max(axis=1))
    v, i = kr.reduce_axes(g.make_op("cast", [node], xp.int64), (0,), "sum")
    assert i is None
    assert_exact(xp.Array._new(v), a.sum(axis=0, dtype=np.int64))
    i8 = xp.asarray(a.astype(np.int8))._node
    assert kr.store_dtype(xp.int8, xp.asarray(a).device) == xp.int32
    v, _ = kr.reduce_rows(i8, 6, 3000, "min")
    assert v.dtype == xp.int32
    assert_exact(xp.Array._new(v), a.min(axis=1).astype(np.int32))


# ------------------------------------------------------------ tallied label masks

def _readbacks():
    return debug.counters().get("readbacks", 0)


@pytest.mark.parametrize("label_dtype", ["int64", "int32", "uint8", "int16"])
def test_class_masks_of_unique_labels_read_back_once(label_dtype):
    # the loops of a class-wise fit (scikit-learn's LDA): X[inverse == i] for each value
    # number, then X[y == c] for each class value c (an element of the classes array),
    # and the complements; one readback per loop (the counts, then the classes' values)
    if label_dtype not in {d.name for d in DTYPES}:
        pytest.skip(f"{label_dtype} is not offered by this device")
    rng = np.random.default_rng(3)
    yh = (rng.integers(0, 7, 900) * 3 + 2).astype(label_dtype)  # classes 2, 5, ..., 20
    Xh = rng.standard_normal((900, 3)).astype(np.float32)
    y, X = xp.asarray(yh), xp.asarray(Xh)
    classes, inverse = xp.unique_inverse(y)
    xp.evaluate(classes)  # the inverse stays a lazy cast of the unique's value numbers
    debug.reset_counters()
    got = [X[inverse == i] for i in range(classes.shape[0])]
    assert _readbacks() <= 1
    want_classes = np.unique(yh)
    for i, r in enumerate(got):
        np.testing.assert_array_equal(np.asarray(r), Xh[yh == want_classes[i]])
    debug.reset_counters()
    masked = [(X[y == c], X[y != c]) for c in classes]
    assert _readbacks() <= 1
    for c, (eq, ne) in zip(want_classes, masked):
        np.testing.assert_array_equal(np.asarray(eq), Xh[yh == c])
        np.testing.assert_array_equal(np.asarray(ne), Xh[yh != c])
    debug.reset_counters()
    assert X[y == 1].shape == (0, 3)  # a value that is no class (a Python scalar)
    assert X[inverse == 100].shape == (0, 3) and X[inverse != -1].shape == (900, 3)
    assert X[2 == y].shape == ((yh == 2).sum(), 3)
    assert _readbacks() == 0


def test_tallied_labels_see_in_place_writes():
    # a write into the labels (or into the classes array) after the counts were read
    # must give the new counts
    yh = np.array([0, 1, 1, 2, 2, 2, 3, 3, 3, 3], np.int64)
    y = xp.asarray(yh)
    classes = xp.unique_values(y)
    xp.evaluate(classes)
    assert xp.nonzero(y == 2)[0].shape == (3,)
    y[0] = 2
    yh[0] = 2
    for c in range(5):
        np.testing.assert_array_equal(np.asarray(xp.nonzero(y == c)[0]), np.nonzero(yh == c)[0])
    c3 = classes[3]
    assert xp.nonzero(y == c3)[0].shape == (4,)
    classes[3] = 1
    np.testing.assert_array_equal(np.asarray(xp.nonzero(y == classes[3])[0]), np.nonzero(yh == 1)[0])
    np.testing.assert_array_equal(np.asarray(xp.nonzero(y == c3)[0]), np.nonzero(yh == 3)[0])


def test_tally_leaves_other_masks_to_the_device():
    # float labels, a cast that could wrap, and a mask of another shape: counted on the device
    yh = np.array([0.0, -0.0, 1.0, np.nan, 1.0], np.float32)
    y = xp.asarray(yh)
    xp.unique_values(y)
    np.testing.assert_array_equal(np.asarray(xp.nonzero(y == 0.0)[0]), np.nonzero(yh == 0.0)[0])
    zh = np.arange(300, dtype=np.int64) % 260
    z = xp.asarray(zh)
    xp.unique_values(z)
    small = xp.astype(z, xp.uint8)  # 256..259 wrap to 0..3
    np.testing.assert_array_equal(np.asarray(xp.nonzero(small == 2)[0]), np.nonzero(zh.astype(np.uint8) == 2)[0])
    inverse = xp.unique_inverse(z).inverse_indices
    np.testing.assert_array_equal(np.asarray(xp.nonzero(xp.astype(inverse, xp.uint8) == 3)[0]),
                                  np.nonzero(np.unique_inverse(zh).inverse_indices.astype(np.uint8) == 3)[0])


def test_a_mask_used_twice_is_compacted_and_counted_once():
    sh = np.array([3.0, 0.0, 2.0, 1e-20, 5.0], np.float32)
    s = xp.asarray(sh)
    idx = s > 1e-15
    first = s[idx]
    debug.reset_counters()
    again = s[idx]
    d = xp.zeros((5,), dtype=xp.float32)
    d[idx] = first * 2.0
    assert _readbacks() == 0
    np.testing.assert_array_equal(np.asarray(again), sh[sh > 1e-15])
    want = np.zeros(5, np.float32)
    want[sh > 1e-15] = sh[sh > 1e-15] * 2
    np.testing.assert_array_equal(np.asarray(d), want)
    m = xp.asarray(np.array([True, False, True, True, False]))
    assert s[m].shape == (3,)
    m[1] = True  # a write into a realized mask: the memo's mask keeps its old value
    np.testing.assert_array_equal(np.asarray(s[m]), sh[[0, 1, 2, 3]])


def test_tallied_label_masks_are_slices_of_the_sorting_permutation():
    # after a unique of the labels, X[y == c] and X[inverse == i] gather the rows of a
    # run of the stable sorting permutation: one dispatch (the gather), no scan or
    # compaction, and the rows in their original order
    rng = np.random.default_rng(11)
    yh = rng.integers(-3, 4, 5000).astype(np.int64)
    Xh = rng.standard_normal((5000, 6)).astype(np.float32)
    y, X = xp.asarray(yh), xp.asarray(Xh)
    classes, inverse = xp.unique_inverse(y)
    xp.evaluate(classes)
    X[inverse == 0], X[y == classes[0]]  # the counts and the classes' values read once
    for i, c in enumerate(np.unique(yh)):
        debug.reset_counters()
        got = X[inverse == i]
        again = X[y == classes[i]]
        counts = debug.counters()
        assert counts["dispatches"] == 2 and counts["readbacks"] == 0, counts
        np.testing.assert_array_equal(np.asarray(got), Xh[yh == c])
        np.testing.assert_array_equal(np.asarray(again), Xh[yh == c])
        np.testing.assert_array_equal(np.asarray(xp.nonzero(y == classes[i])[0]), np.nonzero(yh == c)[0])
    # a strided view of rows, a 1-D X, a complement (compacted), a value of no class
    view = X[:, ::2]
    np.testing.assert_array_equal(np.asarray(view[y == 2]), Xh[:, ::2][yh == 2])
    np.testing.assert_array_equal(np.asarray(X[:, 3][inverse == 6]), Xh[:, 3][yh == 3])
    np.testing.assert_array_equal(np.asarray(X[y != -3]), Xh[yh != -3])
    assert X[y == 9].shape == (0, 6) and xp.nonzero(y == 9)[0].shape == (0,)


def test_tallied_labels_of_a_strided_view():
    # the unique of a view (every other label): its rows index the view, not the base
    yh = np.random.default_rng(12).integers(0, 5, 2001).astype(np.int32)
    base = xp.asarray(yh)
    y = base[::2]
    Xh = np.random.default_rng(13).standard_normal((1001, 3))
    X = xp.asarray(Xh.astype(np.float32))
    xp.unique_values(y)
    for c in np.unique(yh[::2]):
        np.testing.assert_array_equal(np.asarray(X[y == int(c)]), Xh.astype(np.float32)[yh[::2] == c])
    base[0] = 4  # a write into the labels' buffer drops what was known of it
    yh[0] = 4
    np.testing.assert_array_equal(np.asarray(X[y == 4]), Xh.astype(np.float32)[yh[::2] == 4])


def test_labels_past_the_kept_permutation_size_are_compacted(monkeypatch):
    # the sorting permutation is kept for labels up to MAX_PERM_ELEMENTS: longer ones
    # (here a lowered bound) still count from the tally but compact each mask
    from wgarray import _tally
    monkeypatch.setattr(_tally, "MAX_PERM_ELEMENTS", 100)
    rng = np.random.default_rng(14)
    yh = rng.integers(0, 4, 500)
    Xh = rng.standard_normal((500, 2)).astype(np.float32)
    y, X = xp.asarray(yh), xp.asarray(Xh)
    classes = xp.unique_values(y)
    xp.evaluate(classes)
    X[y == 0]
    debug.reset_counters()
    got = X[y == 3]
    assert debug.counters()["dispatches"] > 2 and _readbacks() == 0  # compacted, counted from the tally
    np.testing.assert_array_equal(np.asarray(got), Xh[yh == 3])
