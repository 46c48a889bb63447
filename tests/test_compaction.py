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
