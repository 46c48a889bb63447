"""matmul, tensordot, vecdot and matrix_transpose against NumPy: every numeric dtype of
this device, batched broadcasting, 1-D operands, transposed and sliced (strided) views,
tile edges of the tiled float32 / float64 kernel, empty dims, promotion and errors."""
from __future__ import annotations

import numpy as np
import pytest

import wgarray as xp
from conftest import COMPLEX, INTEGER, NUMERIC, REAL_FLOAT, ids, npdt, to_np


def rand(shape, d, seed=0):
    rng = np.random.default_rng(seed)
    t = npdt(d)
    if d.kind in "iu":
        lo = 0 if d.kind == "u" else -20
        return rng.integers(lo, 20, shape).astype(t)
    x = rng.standard_normal(shape)
    if d.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(t)


def check(got, want, d=None):
    got = to_np(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-10
        scale = max(1.0, float(np.abs(want).max(initial=0)))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_matmul_batched_broadcast_every_dtype(d):
    a, b = rand((3, 1, 4, 5), d, 1), rand((2, 5, 6), d, 2)
    got = xp.asarray(a) @ xp.asarray(b)
    assert got.dtype == d
    check(got, a @ b)


@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_matmul_1d_operands(d):
    v, w, m = rand((7,), d, 1), rand((7,), d, 2), rand((3, 7, 5), d, 3)
    check(xp.matmul(xp.asarray(v), xp.asarray(w)), np.matmul(v, w))
    check(xp.asarray(v) @ xp.asarray(m), v @ m)
    mt = np.ascontiguousarray(np.swapaxes(m, -1, -2))
    check(xp.asarray(mt) @ xp.asarray(v), mt @ v)


# The tiled kernel's element types (float64 only where the device has it): one renderer.
TILED = [d for d in REAL_FLOAT + INTEGER if d.name in ("float32", "float64", "int32", "uint32")]


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
@pytest.mark.parametrize("mkn", [(5, 7, 3), (130, 70, 129), (64, 64, 64), (33, 1, 17), (1, 9, 8), (9, 8, 1),
                                 (131, 67, 259), (257, 129, 130)])
def test_matmul_tiled_tile_edges(mkn, d):
    M, K, N = mkn
    a, b = rand((M, K), d, 1), rand((K, N), d, 2)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
def test_matmul_tiled_kernel_is_used(d, monkeypatch):
    # float32, float64, int32 and uint32 products of 2-D outputs run the tiled kernel,
    # never the generic one; values bit-exact where every product and partial sum is an
    # exact integer (integers: wrapping past 2^32 as NumPy's do)
    import wgarray._wgsl.matmul as km

    def generic(*args):
        raise AssertionError(f"the generic matmul kernel was built for {args}")

    monkeypatch.setattr(km, "render_generic", generic)
    for M, K, N, batch in ((300, 70, 260, ()), (2000, 64, 500, ()), (33, 9, 70, (3,))):
        a = np.arange(M * K * int(np.prod(batch))).reshape(*batch, M, K) % 7 - 3
        b = np.arange(K * N).reshape(K, N) % 5 - 2
        got = to_np(xp.asarray(a.astype(npdt(d))) @ xp.asarray(b.astype(npdt(d))))
        np.testing.assert_array_equal(got, (a @ b).astype(npdt(d)))
    if d.kind in "iu":
        a = (np.arange(130 * 300).reshape(130, 300) * 7919 % 1000003).astype(npdt(d))
        b = (np.arange(300 * 70).reshape(300, 70) * 104729 % 65537).astype(npdt(d))
        got = to_np(xp.asarray(a) @ xp.asarray(b))
        np.testing.assert_array_equal(got, a @ b)


@pytest.mark.parametrize("d", REAL_FLOAT, ids=ids(REAL_FLOAT))
def test_long_matrix_vector_products_are_reductions(d, monkeypatch):
    # M or N of 1 with K past MATVEC_REDUCE_K: a row reduction of the fused products,
    # never the generic kernel (whose few threads each walked a whole K chunk); batched,
    # broadcast, transposed and strided views, non-finite entries propagated as NumPy's
    import wgarray._kernels.matmul as mm
    import wgarray._wgsl.matmul as km

    def generic(*args):
        raise AssertionError(f"the generic matmul kernel was built for {args}")

    monkeypatch.setattr(km, "render_generic", generic)
    K = mm.MATVEC_REDUCE_K + 77
    a, v = rand((64, K), d, 1), rand((K, 1), d, 2)
    check(xp.asarray(a) @ xp.asarray(v), a @ v)
    check(xp.asarray(v.T) @ xp.asarray(a.T), v.T @ a.T)  # M of 1, B transposed
    s = rand((3, 1, 5, 2 * K), d, 3)
    w = rand((2, 2 * K, 1), d, 4)
    check(xp.asarray(s)[..., ::2] @ xp.asarray(w)[:, ::2], s[..., ::2] @ w[:, ::2])
    check(xp.matmul(xp.asarray(a), xp.asarray(v[:, 0])), a @ v[:, 0])  # 1-D operand
    bad = a.copy()
    bad[3, 5], bad[7, 0], bad[9, 1], bad[9, 2] = np.nan, np.inf, np.inf, -np.inf
    got = to_np(xp.asarray(bad) @ xp.asarray(np.abs(v)))
    want = bad @ np.abs(v)
    assert np.isnan(got[3, 0]) and got[7, 0] == np.inf and np.isnan(got[9, 0])
    ok = np.isfinite(want[:, 0])
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4 if d == xp.float32 else 1e-10, atol=1e-3)


@pytest.mark.parametrize("lower", [False, True], ids=["full", "lower"])
@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
def test_subtract_product_in_place_into_a_strided_block(d, lower):
    # the tiled kernel's update mode (the blocked factorizations' trailing updates):
    # dst -= a @ b straight into a strided block of another array's buffer, batched,
    # every element outside the block (and above its diagonal for ``lower``) untouched;
    # taken even after arrays past the binding limit exist elsewhere on the device
    from wgarray._graph import node as g
    from wgarray._kernels.matmul import subtract_product

    nb, M, N, K = 3, 70, 37, 33
    device = xp.asarray(0).device
    big, device.big = device.big, True
    a, b = rand((nb, M, K), d, 1), rand((1, K, N), d, 2)
    base = rand((nb, M + 5, 2 * N + 9), d, 3)
    W = xp.asarray(base)
    data = g.realize(W._node)
    row, col = data.strides[1:]
    block = g.Data(data.buf, (nb, M, N), data.dtype, data.device, data.offset + 2 * row + 3 * col,
                   (data.strides[0], row, 2 * col))  # rows 2.., every other column from 3
    try:
        assert subtract_product(xp.asarray(a)._node, xp.asarray(b)._node, block, lower)
    finally:
        device.big = big
    want = base.copy()
    prod = (a @ b).astype(npdt(d))
    view = want[:, 2:2 + M, 3:3 + 2 * N:2]
    if lower:
        keep = np.tril(np.ones((M, N), bool))
        view[:, keep] = view[:, keep] - prod[:, keep]
    else:
        view -= prod
    check(W, want)


def test_subtract_product_declines_an_operand_in_the_destination_buffer():
    # WebGPU binds a buffer either read-only or writable in one dispatch: an operand
    # that lives in the destination's buffer is declined and nothing is written
    from wgarray._graph import node as g
    from wgarray._kernels.matmul import subtract_product

    x = xp.asarray(rand((1, 40, 40), xp.float32, 1))
    data = g.realize(x._node)
    before = to_np(x)
    top = g.Data(data.buf, (1, 20, 40), data.dtype, data.device, data.offset, data.strides)
    other = xp.asarray(rand((1, 20, 40), xp.float32, 2))._node
    assert not subtract_product(other, data, top)
    np.testing.assert_array_equal(to_np(x), before)


def _strided_case(layout, a, b, sliced, offset):
    """(x @ y, expected) with operands viewed by ``layout``, never copied on the device:
    transposed (TN/NT/TT), strided (``sliced`` keys), reversed, or offset (``offset`` keys)."""
    A, B = xp.asarray(a), xp.asarray(b)
    if layout in ("TN", "NT", "TT"):
        x = xp.asarray(a.T.copy()).T if layout[0] == "T" else A
        y = xp.asarray(b.T.copy()).T if layout[1] == "T" else B
        return x @ y, a @ b
    if layout == "negative":
        return A[::-1] @ B[:, ::-1], a[::-1] @ b[:, ::-1]
    ka, kb = sliced if layout == "sliced" else offset
    return A[ka] @ B[kb], a[ka] @ b[kb]


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
@pytest.mark.parametrize("layout", ["TN", "NT", "TT", "sliced", "negative", "offset"])
def test_matmul_tiled_strided_views_without_copies(layout, d):
    a, b = rand((68, 36), d, 1), rand((36, 44), d, 2)
    check(*_strided_case(layout, a, b, (np.s_[::2, 1::3], np.s_[1::3, ::2]),
                         (np.s_[1:, 3:35], np.s_[2:34, 1:])))


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
def test_matmul_tiled_large_tiles_batched(d):
    # enough outputs for the 128x128 tile variant
    a, b = rand((10, 400, 12), d, 1), rand((12, 400), d, 2)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


def test_matmul_fuses_pending_elementwise_operand():
    a, b = rand((6, 8), xp.float32, 1), rand((8, 5), xp.float32, 2)
    got = (xp.asarray(a) * 2.0 + 1.0) @ xp.asarray(b).T.T
    check(got, (a * 2 + 1) @ b)


def test_matmul_promotion():
    a = rand((3, 4), xp.int8, 1)
    b = rand((4, 2), xp.float32, 2)
    got = xp.asarray(a) @ xp.asarray(b)
    assert got.dtype == xp.float32
    check(got, a.astype(np.float32) @ b)
    c = rand((4, 2), xp.int16, 3)
    got = xp.asarray(a) @ xp.asarray(c)
    assert got.dtype == xp.int16
    check(got, a.astype(np.int16) @ c)


@pytest.mark.parametrize("d", INTEGER, ids=ids(INTEGER))
def test_matmul_integer_wraparound(d):
    info = np.iinfo(npdt(d))
    a = np.full((2, 3), info.max, npdt(d))
    b = np.full((3, 2), info.max // 3 + 1, npdt(d))
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


def test_matmul_empty_dims():
    d = REAL_FLOAT[0]
    check(xp.asarray(rand((0, 3), d)) @ xp.asarray(rand((3, 4), d)), np.zeros((0, 4), npdt(d)))
    check(xp.asarray(rand((2, 0), d)) @ xp.asarray(rand((0, 3), d)), np.zeros((2, 3), npdt(d)))
    check(xp.asarray(rand((0, 2, 3), d)) @ xp.asarray(rand((3, 4), d)), np.zeros((0, 2, 4), npdt(d)))


def test_matmul_errors_name_function_and_shapes():
    a, b = xp.ones((2, 3)), xp.ones((4, 5))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        xp.matmul(a, b)
    with pytest.raises(ValueError, match="matmul"):
        xp.matmul(xp.ones(()), b)
    with pytest.raises(ValueError, match="matmul"):
        xp.ones((2, 2, 3)) @ xp.ones((3, 3, 4))
    with pytest.raises(TypeError, match="matmul"):
        xp.asarray([[True]]) @ xp.asarray([[True]])


@pytest.mark.parametrize("d", [REAL_FLOAT[0], INTEGER[0], COMPLEX[0]], ids=lambda d: d.name)
def test_tensordot(d):
    a, b = rand((3, 4, 5), d, 1), rand((4, 5, 2), d, 2)
    A, B = xp.asarray(a), xp.asarray(b)
    check(xp.tensordot(A, B), np.tensordot(a, b))
    c = rand((5, 6), d, 3)
    check(xp.tensordot(A, xp.asarray(c), axes=1), np.tensordot(a, c, axes=1))
    check(xp.tensordot(A, B, axes=0), np.tensordot(a, b, axes=0))
    check(xp.tensordot(A, B, axes=([1, 2], [0, 1])), np.tensordot(a, b, axes=([1, 2], [0, 1])))
    e = rand((5, 3), d, 4)
    check(xp.tensordot(A, xp.asarray(e), axes=([0, 2], [1, 0])), np.tensordot(a, e, axes=([0, 2], [1, 0])))


def test_tensordot_errors():
    with pytest.raises(ValueError, match="tensordot"):
        xp.tensordot(xp.ones((3, 4)), xp.ones((5, 4)), axes=1)
    with pytest.raises(ValueError, match="tensordot"):
        xp.tensordot(xp.ones((3, 4)), xp.ones((4, 5)), axes=3)


@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_vecdot_conjugates_x1(d):
    a, b = rand((3, 1, 6), d, 1), rand((4, 6), d, 2)
    want = np.sum(np.conj(a) * b, axis=-1) if d.kind == "c" else np.sum(a * b, axis=-1).astype(npdt(d))
    check(xp.vecdot(xp.asarray(a), xp.asarray(b)), want)


def test_vecdot_axis_and_errors():
    d = REAL_FLOAT[0]
    a, b = rand((5, 3), d, 1), rand((5, 3), d, 2)
    check(xp.vecdot(xp.asarray(a), xp.asarray(b), axis=-2), np.sum(a * b, axis=0))
    with pytest.raises(ValueError, match="vecdot"):
        xp.vecdot(xp.ones((3,)), xp.ones((4,)))


def test_matrix_transpose_is_a_view():
    a = rand((2, 3, 4), REAL_FLOAT[0])
    check(xp.matrix_transpose(xp.asarray(a)), np.swapaxes(a, -1, -2))
    check(xp.asarray(a).mT, np.swapaxes(a, -1, -2))


# ------------------------------------------------------------------ split-K and narrow tiles

def _dispatches(fn):
    from wgarray import debug

    debug.reset_counters()
    out = fn()
    xp.evaluate(out)
    return out, debug.counters()["dispatches"]


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
@pytest.mark.parametrize("mkn", [(16, 5000, 32), (3, 4099, 5), (2, 1031, 2), (16, 3000, 16), (40, 2500, 9)])
def test_matmul_tiled_split_k(mkn, d):
    # few output tiles, long K: K is cut into chunks over many workgroups, then summed
    M, K, N = mkn
    a, b = rand((M, K), d, 1), rand((K, N), d, 2)
    A, B = xp.asarray(a), xp.asarray(b)
    got, n = _dispatches(lambda: A @ B)
    assert n >= 2  # the partial products and their sum
    check(got, a.astype(np.float64) @ b)


@pytest.mark.parametrize("layout", ["TN", "NT", "TT", "sliced", "negative", "offset"])
def test_matmul_float32_split_k_strided_views(layout):
    a, b = rand((20, 1300), xp.float32, 1), rand((1300, 12), xp.float32, 2)
    check(*_strided_case(layout, a, b, (np.s_[::2, 1::2], np.s_[1::2, ::3]),
                         (np.s_[1:, 3:1203], np.s_[2:1202, 1:])))


def test_matmul_float32_split_k_batched_broadcast():
    a, b = rand((3, 1, 8, 1200), xp.float32, 1), rand((2, 1200, 12), xp.float32, 2)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)
    # a broadcast (stride-0) batch operand and a batch of one
    c = rand((1, 1200, 8), xp.float32, 3)
    check(xp.asarray(a) @ xp.asarray(c), a @ c)


def test_matmul_kmeans_shapes_with_lazy_onehot():
    # the k-means update: onehot.T @ X with onehot a pending elementwise node
    n, d, k = 6000, 32, 16
    X = rand((n, d), xp.float32, 1)
    labels = np.random.default_rng(2).integers(0, k, n)
    Xw = xp.asarray(X)
    onehot = xp.astype(xp.asarray(labels)[:, None] == xp.arange(k)[None, :], xp.float32)
    oh = (labels[:, None] == np.arange(k)[None, :]).astype(np.float32)
    check(onehot.T @ Xw, oh.T.astype(np.float64) @ X)
    # the distances: X @ C.T, a narrow (N = 16) output
    C = rand((k, d), xp.float32, 3)
    check(Xw @ xp.asarray(C).T, X @ C.T)


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
@pytest.mark.parametrize("mkn", [(1000, 32, 16), (300, 20, 13), (5, 40, 300), (33, 70, 17), (700, 9, 30),
                                  (17, 33, 64), (3, 8, 1000)])
def test_matmul_tiled_narrow_tiles(mkn, d):
    M, K, N = mkn
    a, b = rand((M, K), d, 1), rand((K, N), d, 2)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)
    check(xp.asarray(a.T.copy()).T @ xp.asarray(b.T.copy()).T, a @ b)


@pytest.mark.parametrize("d", NUMERIC, ids=ids(NUMERIC))
def test_matmul_split_k_every_dtype(d):
    # the generic kernel's split-K: tiny outputs, long K (integers wrap like NumPy)
    a, b = rand((2, 3, 1100), d, 1), rand((1100, 2), d, 2)
    A, B = xp.asarray(a), xp.asarray(b)
    got, n = _dispatches(lambda: A @ B)
    assert n >= 2
    check(got, a @ b)
    v, w = rand((1500,), d, 3), rand((1500,), d, 4)
    check(xp.matmul(xp.asarray(v), xp.asarray(w)), np.matmul(v, w))
    mt = rand((1300, 3), d, 5)
    check(xp.asarray(mt).T @ xp.asarray(w[:1300]), mt.T @ w[:1300])


@pytest.mark.parametrize("d", INTEGER, ids=ids(INTEGER))
def test_matmul_split_k_integer_wraparound(d):
    info = np.iinfo(npdt(d))
    a = np.full((2, 1200), info.max, npdt(d))
    b = np.full((1200, 3), info.max // 3 + 1, npdt(d))
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


def test_vecdot_split_k():
    d = REAL_FLOAT[0]
    a, b = rand((2, 3000), d, 1), rand((2, 3000), d, 2)
    check(xp.vecdot(xp.asarray(a), xp.asarray(b)), np.sum(a * b, axis=-1))


def test_k_is_split_to_respect_a_per_invocation_loop_bound():
    from wgarray._kernels.matmul import _splits

    # a busy GPU (no occupancy split) still splits K where loops are bounded (lavapipe)
    chunk, n = _splits(100_000, 1 << 22, 1, max_chunk=8000)
    assert chunk <= 8000 and chunk * n >= 100_000
    assert _splits(100_000, 1 << 22, 1) == (100_000, 1)
    chunk, n = _splits(100_000, 1 << 22, 16, max_chunk=8000)
    assert chunk % 16 == 0 and chunk <= 8000 + 15 and chunk * n >= 100_000


@pytest.mark.parametrize("d", TILED, ids=ids(TILED))
@pytest.mark.parametrize("layout", ["nn", "tn", "nt"])
def test_matmul_wide_tiles_with_deep_slabs(d, layout):
    # outputs of at least 128 x 128 x 96 elements take the 128 x 128 tiles, whose slabs
    # are deeper (float32 BK 32) where the device has 32 KiB of workgroup memory: a
    # ragged M, N and K (none a multiple of a tile or a slab), transposed operands
    from wgarray._kernels import matmul as kmm
    M, K, N = 1283, 77, 1251
    assert kmm._tile_config(M, N, 1, 4, kmm.WIDE_SMEM_BYTES)[:3] == (128, 128, 32)
    a, b = rand((M, K), d, 7), rand((K, N), d, 8)
    A = xp.asarray(np.ascontiguousarray(a.T)).T if layout[0] == "t" else xp.asarray(a)
    B = xp.asarray(np.ascontiguousarray(b.T)).T if layout[1] == "t" else xp.asarray(b)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(a.dtype) if d.kind == "f" else a @ b
    check(A @ B, want)
