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
    for make in (lambda: xp.asarray(np.arange(1000, dtype=np.float32)), lambda: xp.arange(1000, dtype=xp.float32) * 2.0,
                 lambda: xp.ones(1000, dtype=xp.float32)):
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
    x = xp.asarray(np.zeros((6, 5), np.float32))
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
    x = xp.asarray(np.arange(4, dtype=np.float32))
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


def test_pending_op_reading_a_view_keeps_the_value_it_was_given():
    for make in (lambda x: x[4:8:2], lambda x: x[2:8][::2][1:], lambda x: x.__getitem__((None, slice(4, 8, 2)))[0]):
        x = xp.asarray(np.arange(12, dtype=np.float32))
        v = make(x)
        y = v + 0  # pending: reads the view's elements of x's buffer
        z = v[...]
        v[0] = 7.0
        x[6] = -1.0
        np.testing.assert_array_equal(np.asarray(y), [4.0, 6.0])
        np.testing.assert_array_equal(np.asarray(v), [7.0, -1.0])
        np.testing.assert_array_equal(np.asarray(z), [7.0, -1.0])  # a view: follows
        assert float(x[4]) == 7.0


# ------------------------------------------------------ svd of rank-deficient input

SVD_DTYPES = ["float32", "complex64"] + (["float64", "complex128"] if HAS_F64 else [])


def _rank_deficient(rng, shape, rank, dtype):
    """A random matrix (stack) of ``rank`` (0: zeros), with an exactly zero column too."""
    *batch, m, n = shape
    if rank == 0:
        return np.zeros(shape, dtype)
    def draw(*s):
        a = rng.standard_normal(s)
        return a + 1j * rng.standard_normal(s) if np.dtype(dtype).kind == "c" else a
    a = draw(*batch, m, rank) @ draw(*batch, rank, n)
    a[..., :, n // 2] = 0  # a zero column keeps the rank and adds an exact zero value
    return a.astype(dtype)


def _check_svd(a, full_matrices):
    x = xp.asarray(a)
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(x, full_matrices=full_matrices))
    nu, ns, nvh = np.linalg.svd(a, full_matrices=full_matrices)
    assert u.shape == nu.shape and s.shape == ns.shape and vh.shape == nvh.shape
    m, n = a.shape[-2:]
    eps = np.finfo(a.dtype).eps
    tol = 32 * eps * max(m, n)
    scale = max(float(np.abs(ns).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(s, ns, rtol=0, atol=tol * scale)
    uh = np.conj(np.swapaxes(u, -1, -2))
    np.testing.assert_allclose(uh @ u, np.broadcast_to(np.eye(u.shape[-1]), uh.shape[:-2] + (u.shape[-1],) * 2),
                               rtol=0, atol=tol)
    v = np.conj(np.swapaxes(vh, -1, -2))
    np.testing.assert_allclose(vh @ v, np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2),
                               rtol=0, atol=tol)
    k = s.shape[-1]
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("dtype", SVD_DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4), (300, 20), (20, 300)])
@pytest.mark.parametrize("rank", [0, 2])
def test_svd_of_rank_deficient_input_gives_orthonormal_u_and_v(dtype, shape, rank):
    rng = np.random.default_rng(rank + len(shape))
    a = _rank_deficient(rng, shape, rank, dtype)
    for full_matrices in (True, False):
        _check_svd(a, full_matrices)


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_of_a_stack_mixing_full_rank_zero_and_rank_one_matrices(full_matrices):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 5, 4)).astype(np.float32)
    a[1] = 0
    a[2, :, 1:] = 0
    _check_svd(a, full_matrices)
    _check_svd(np.ascontiguousarray(np.swapaxes(a, -1, -2)), full_matrices)
    c = (rng.standard_normal((3, 40, 36)) + 1j * rng.standard_normal((3, 40, 36))).astype(np.complex64)
    c[1] = 0
    c[2, :, 3:] = 0
    _check_svd(c, full_matrices)


@pytest.mark.parametrize("n", [16, 64])
def test_singular_values_below_rounding_are_nonnegative_and_sorted(n):
    rng = np.random.default_rng(n)
    qu = np.linalg.qr(rng.standard_normal((n, n)))[0]
    qv = np.linalg.qr(rng.standard_normal((n, n)))[0]
    a = ((qu * np.logspace(0, -12, n)) @ qv.T).astype(np.float32)
    for s in (np.asarray(xp.linalg.svdvals(xp.asarray(a))), np.asarray(xp.linalg.svd(xp.asarray(a))[1])):
        assert not np.signbit(s).any(), s
        assert np.all(np.diff(s) <= 0)
    _check_svd(a, False)


def test_svd_of_zeros_gives_orthogonal_u_as_numpy():
    u, s, vh = xp.linalg.svd(xp.zeros((3, 3)))
    u = np.asarray(u)
    np.testing.assert_array_equal(np.asarray(s), np.zeros(3))
    np.testing.assert_allclose(u.T @ u, np.eye(3), rtol=0, atol=1e-6)


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_of_large_square_rank_deficient_input_is_orthonormal(full_matrices):
    rng = np.random.default_rng(5)
    _check_svd(_rank_deficient(rng, (70, 70), 3, np.float32), full_matrices)


@pytest.mark.parametrize("dtype", ["complex64"] + (["complex128"] if HAS_F64 else []))
def test_complex_svd_with_repeated_values_is_unitary(dtype):
    rng = np.random.default_rng(2)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)))
    for a in (np.eye(4), q, np.diag([2.0, 2.0, 1.0, 1.0]) @ q, np.stack([q, 3 * np.eye(4)])):
        _check_svd(a.astype(dtype), True)


# ----------------------------------------------- results past the largest array

DEV = xp.asarray(0.0).device
LIMIT = 1 << 28  # the largest array, as WGARRAY_MAX_ARRAY_BYTES sets it for these tests
PAST = LIMIT // 4 + 1  # float32 elements one past the largest array
needs_32_bit_lengths = pytest.mark.skipif(PAST >= 2**32, reason="the 2**32-element limit comes first")


@pytest.fixture
def small_arrays(monkeypatch):
    monkeypatch.setenv("WGARRAY_MAX_ARRAY_BYTES", str(LIMIT))
    assert DEV.max_array_bytes == LIMIT


def _message_names(exc, func, nbytes):
    msg = str(exc.value)
    assert msg.startswith(func + ":"), msg
    assert str(nbytes) in msg and str(LIMIT) in msg, msg


@needs_32_bit_lengths
def test_creation_past_the_largest_array_raises_at_the_call(small_arrays):
    for func, make in (("ones", lambda: xp.ones((PAST,), dtype=xp.float32)),
                       ("zeros", lambda: xp.zeros((PAST,), dtype=xp.float32)),
                       ("full", lambda: xp.full((PAST,), 2.0, dtype=xp.float32)),
                       ("empty", lambda: xp.empty((PAST,), dtype=xp.float32)),
                       ("arange", lambda: xp.arange(PAST, dtype=xp.float32))):
        with pytest.raises(MemoryError) as exc:
            make()
        msg = str(exc.value)
        assert msg.startswith(func + ":") and str(LIMIT) in msg, msg
    assert xp.ones((PAST - 1,), dtype=xp.float32).shape == (PAST - 1,)  # at the limit: fine


@needs_32_bit_lengths
def test_broadcast_products_past_the_largest_array_raise_at_the_call(small_arrays):
    rows = 1 << ((PAST.bit_length() + 1) // 2)
    x = xp.ones((rows,), dtype=xp.float32)
    y = xp.ones((PAST // rows + 1,), dtype=xp.float32)
    nbytes = 4 * rows * y.shape[0]
    assert nbytes > LIMIT
    for func, make in (("multiply", lambda: x[:, None] * y[None, :]),
                       ("add", lambda: xp.add(x[:, None], y)),
                       ("outer", lambda: xp.linalg.outer(x, y))):
        with pytest.raises(MemoryError) as exc:
            make()
        _message_names(exc, func, nbytes)


@needs_32_bit_lengths
@pytest.mark.parametrize("func", ["matmul", "__matmul__", "tensordot"])
def test_matmul_results_past_the_largest_array_raise_at_the_call(small_arrays, func):
    rows = 1 << ((PAST.bit_length() + 1) // 2)
    a = xp.ones((rows, 2), dtype=xp.float32)
    b = xp.ones((2, PAST // rows + 1), dtype=xp.float32)
    nbytes = 4 * rows * b.shape[1]
    call = {"matmul": lambda: xp.matmul(a, b), "__matmul__": lambda: a @ b,
            "tensordot": lambda: xp.tensordot(a, b, axes=1)}[func]
    with pytest.raises(MemoryError) as exc:
        call()
    _message_names(exc, func, nbytes)


def test_broadcast_view_past_the_largest_buffer_stays_a_view():
    # a view of a buffer is not a new result: as NumPy's broadcast_to, it costs nothing
    x = xp.asarray(np.float32(3.0))
    n = DEV.max_buffer_bytes // 4 + 1
    v = xp.broadcast_to(x, (n,))
    assert v.shape == (n,)
    assert float(xp.max(v)) == 3.0


@pytest.mark.parametrize("dtype", SVD_DTYPES)
@pytest.mark.parametrize("scale", [1e25, 1e-25])
def test_svd_and_eigvalsh_of_huge_and_tiny_entries_past_32_columns(dtype, scale):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((40, 40))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((40, 40))
    a = (a * scale).astype(dtype)
    eps = np.finfo(dtype).eps
    s0 = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(xp.asarray(a))), s0, rtol=0, atol=64 * eps * s0[0])
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, a, rtol=0, atol=64 * eps * s0[0])
    h = a + np.conj(a.T)
    w0 = np.linalg.eigvalsh(h.astype(np.complex128))
    w = np.asarray(xp.linalg.eigvalsh(xp.asarray(h)))
    np.testing.assert_allclose(w, w0, rtol=0, atol=64 * eps * np.abs(w0).max())
    # only the lower triangle is read: a huge upper one must not scale it away
    g = np.tril(h) + np.triu(np.full(h.shape, 1e30 if scale < 1 else 1.0, h.dtype), 1)
    w = np.asarray(xp.linalg.eigvalsh(xp.asarray(g)))
    np.testing.assert_allclose(w, w0, rtol=0, atol=64 * eps * np.abs(w0).max())


# ------------------------------------------------- eig of real matrices

@pytest.mark.parametrize("dtype", ["float32"] + (["float64"] if HAS_F64 else []))
@pytest.mark.parametrize("n", [2, 5, 17, 40])
def test_eigvals_of_real_matrices_are_exact_conjugate_pairs_or_exactly_real(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((3, n, n)).astype(dtype)
    w = np.asarray(xp.linalg.eigvals(xp.asarray(a)))
    for b in range(3):
        ref = np.linalg.eigvals(a[b].astype(np.float64))
        assert np.sum(w[b].imag == 0) == np.sum(ref.imag == 0)
        for z in w[b][w[b].imag != 0]:
            assert np.sum(w[b] == np.conj(z)) == np.sum(w[b] == z)  # the exact conjugate, as often
        tol = 64 * np.finfo(dtype).eps * np.abs(ref).max() * n
        np.testing.assert_allclose(np.sort_complex(w[b]), np.sort_complex(ref), rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", ["float32"] + (["float64"] if HAS_F64 else []))
def test_eig_of_real_matrices_gives_real_and_conjugate_vectors(dtype):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 9, 9)).astype(dtype)
    w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(a)))
    np.testing.assert_array_equal(w, np.asarray(xp.linalg.eigvals(xp.asarray(a))))
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=0, atol=256 * eps * np.abs(a).max() * 9)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=0, atol=16 * eps)
    for b in range(2):
        assert np.all(v[b][:, w[b].imag == 0].imag == 0)
        for i in np.where(w[b].imag < 0)[0]:
            j = np.where(w[b] == np.conj(w[b][i]))[0][0]
            np.testing.assert_array_equal(v[b][:, i], np.conj(v[b][:, j]))


def test_eigvals_of_special_real_matrices():
    for a, ref in ((np.zeros((3, 3)), [0, 0, 0]), (np.diag([1.0, 1.0, 2.0]), [1, 1, 2]),
                   (np.array([[0.0, -1.0], [1.0, 0.0]]), [1j, -1j]), (np.array([[2.0, 0.0], [0.0, -3.0]]), [2, -3])):
        w = np.asarray(xp.linalg.eigvals(xp.asarray(a.astype(np.float32))))
        ref = np.asarray(ref, np.complex64)
        np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(ref), rtol=0, atol=1e-6)
        assert np.sum(w.imag == 0) == np.sum(ref.imag == 0)
        assert np.array_equal(np.sort_complex(w), np.sort_complex(np.conj(w)))
    w = np.asarray(xp.linalg.eigvals(xp.asarray(np.array([[np.nan, 0.0], [0.0, 1.0]], np.float32))))
    assert np.isnan(w).any()


# ------------------------------------------------- many inputs, long lengths

def test_stack_and_concat_of_many_lazy_inputs_split_over_the_binding_limit():
    bs = [xp.asarray(np.full(3, i, np.float32)) for i in range(45)]
    got = xp.stack([b * 2 + 1 for b in bs], axis=1)
    expect = np.stack([np.full(3, 2.0 * i + 1, np.float32) for i in range(45)], axis=1)
    np.testing.assert_array_equal(np.asarray(got), expect)
    got = xp.concat([b - i for i, b in enumerate(bs)] + [bs[0][:0]])
    np.testing.assert_array_equal(np.asarray(got), np.zeros(135, np.float32))
    outs = [bs[i] * i for i in range(31)]
    xp.evaluate(*outs)
    assert [float(o[2]) for o in outs] == [float(i * i) for i in range(31)]


def test_threads_adding_to_their_own_rows_200_times():
    import threading

    x = xp.zeros((4, 6), dtype=xp.float32)
    x[0, 0] = 0.0  # realized, so the writes go in place

    def work(t):
        for _ in range(200):
            x[t, :] += 1

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(np.asarray(x), np.full((4, 6), 200, np.float32))


@pytest.mark.slow
def test_vecdot_and_matmul_over_broadcasts_past_2_to_32_elements_do_not_wrap():
    # the broadcast operands span 4096 * 4096 * 257 > 2**32 elements; each input is small
    rng = np.random.default_rng(0)
    ha = rng.integers(-3, 4, (4096, 257)).astype(np.float32)
    hb = rng.integers(-3, 4, (4096, 257)).astype(np.float32)
    a, b = xp.asarray(ha)[:, None, :], xp.asarray(hb)[None, :, :]
    expect = ha @ hb.T  # small integers: exact in float32
    np.testing.assert_array_equal(np.asarray(xp.vecdot(a, b)), expect)
    got = xp.matmul(a[:, :, None, :], b[:, :, :, None])
    np.testing.assert_array_equal(np.asarray(got)[..., 0, 0], expect)


@pytest.mark.slow
def test_reductions_of_2_to_32_minus_1_elements():
    v = xp.broadcast_to(xp.asarray(np.float32(1.5)), (2**32 - 1,))
    assert float(xp.max(v)) == 1.5
    assert int(xp.argmin(v)) == 0


# ------------------------------------------------- bad arguments: name, expected, given

@pytest.mark.parametrize("call,exc,message", [
    (lambda: xp.arange(float("inf")), ValueError, r"arange: expected finite start, stop and step, got 0, inf, 1"),
    (lambda: xp.arange(0, 1, 0), ValueError, r"arange: expected a nonzero step, got 0"),
    (lambda: xp.eye(2.5), TypeError, r"eye: expected n_rows to be an int, got float 2.5"),
    (lambda: xp.eye(3, 2.5), TypeError, r"eye: expected n_cols to be an int, got float 2.5"),
    (lambda: xp.linalg.matrix_power(xp.eye(2), 1.5), TypeError, r"matrix_power: expected n to be an int, got float 1.5"),
    (lambda: xp.linspace(0, 1, 2.5), TypeError, r"linspace: expected num to be an int, got float 2.5"),
    (lambda: xp.tril(xp.eye(3), k=1.5), TypeError, r"tril: expected k to be an int, got float 1.5"),
    (lambda: xp.triu(xp.eye(3), k="1"), TypeError, r"triu: expected k to be an int, got str '1'"),
    (lambda: xp.asarray([1, 2**100]), TypeError, r"asarray: expected numbers that fit a dtype, got " + str(2**100)),
    (lambda: xp.asarray([[1, 2], [-2**70, 3]]), TypeError, r"asarray: expected numbers that fit a dtype, got "
     + str(-2**70)),
    (lambda: xp.asarray([2**63, 2**64 - 1]), OverflowError, r"asarray: expected integers that fit int64, got "
     + str(2**63)),
    (lambda: xp.asarray(2**64), OverflowError, r"asarray: expected an int that fits int64, got " + str(2**64)),
])
def test_bad_arguments_raise_with_the_function_what_was_expected_and_what_was_given(call, exc, message):
    with pytest.raises(exc, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        call()
