"""eigh / eigvalsh of real matrices past order 64: the tridiagonal route (Householder
reduction, bisection, inverse iteration; implicit QL without float64,
``wgarray/_kernels/linalg_trd.py``) against NumPy's LAPACK: backward error,
orthogonality and value errors each within 10x of NumPy's own on the same input
(measured against float64), on inputs that stress the reduction (zero columns, graded
entries), the splitting of T (diagonal, identity, block-diagonal input: exact results)
and inverse iteration (clusters, repeated values, Wilkinson's matrices, glued Wilkinson
matrices whose eigenvalues pair up to the last digits).
"""
import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from wgarray import linalg as la

F64 = xp.float64 in xp.__array_namespace_info__().dtypes().values()
needs_f64 = pytest.mark.skipif(not F64, reason="the device has no float64")


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _sym(n, kind, dtype, seed):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    if kind == "random":
        a = rng.standard_normal((n, n))
        return ((a + a.T) / 2).astype(dtype)
    if kind == "identity_perturbed":
        a = rng.standard_normal((n, n)) * 1e-7
        return (np.eye(n) + (a + a.T) / 2).astype(dtype)
    if kind == "repeated":  # three distinct values, many times each
        w = np.array([-1.0, 0.5, 2.0])[np.arange(n) % 3]
    elif kind == "clustered":
        w = np.repeat(rng.standard_normal(-(-n // 4)), 4)[:n] + rng.standard_normal(n) * 1e-6
    elif kind == "rankdef":
        w = rng.standard_normal(n)
        w[: n // 2] = 0
    elif kind == "ill":
        w = np.logspace(0, -6, n) * rng.choice([-1, 1], n)
    elif kind == "graded":  # D A D, D from 1 down to 1e-6: entries over twelve decades
        a = rng.standard_normal((n, n))
        d = np.logspace(0, -6, n)
        return (d[:, None] * ((a + a.T) / 2) * d[None, :]).astype(dtype)
    elif kind == "diagonal":  # T is diagonal from the start: every reflector the identity
        return np.diag(rng.standard_normal(n)).astype(dtype)
    elif kind == "zero":
        return np.zeros((n, n), dtype)
    h = (q * w) @ q.T
    return ((h + h.T) / 2).astype(dtype)


def _errors(h, w, v):
    hh = h.astype(np.float64)
    w0 = np.linalg.eigvalsh(hh)
    nrm = max(np.abs(w0).max(), np.finfo(np.float64).tiny)
    out = {"values": np.abs(np.sort(w.astype(np.float64)) - w0).max() / nrm}
    if v is not None:
        vv = v.astype(np.float64)
        out["backward"] = np.linalg.norm(hh - (vv * w) @ vv.T) / max(np.linalg.norm(hh), 1e-300)
        out["orthogonality"] = np.abs(vv.T @ vv - np.eye(h.shape[0])).max()
    return out


def _check(ours, theirs, dtype):
    for k, e in ours.items():
        assert e <= 10 * max(theirs[k], _eps(dtype)), (k, e, theirs[k])


def _check_stack(a):
    """eigh of a float32 stack, each matrix against LAPACK's errors on it."""
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(a)))
    for k in range(a.shape[0]):
        w0, v0 = np.linalg.eigh(a[k])
        _check(_errors(a[k], w[k], v[k]), _errors(a[k], w0, v0), np.float32)


def _case(dtype, n, kind):
    marks = [needs_f64] if dtype is np.float64 else []
    return pytest.param(dtype, n, kind, marks=marks, id=f"{np.dtype(dtype).name}-{n}-{kind}")


KINDS = ("random", "identity_perturbed", "repeated", "clustered", "rankdef", "ill", "graded", "diagonal")
CASES = [_case(d, n, "random") for d in (np.float32, np.float64) for n in (65, 100, 129)] + \
    [_case(d, 70, k) for d in (np.float32, np.float64) for k in KINDS[1:]]


@pytest.mark.parametrize("dtype,n,kind", CASES)
def test_eigh_eigvalsh_tridiagonal_route_vs_lapack(dtype, n, kind):
    h = _sym(n, kind, dtype, seed=n + len(kind))
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert w.dtype == dtype and v.dtype == dtype and w.shape == (n,) and v.shape == (n, n)
    assert np.all(np.diff(w) >= 0)
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), dtype)
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    assert wv.dtype == dtype and np.all(np.diff(wv) >= 0)
    _check(_errors(h, wv, None), _errors(h, w0, None), dtype)


def test_zero_matrix_gives_zero_values_and_orthonormal_vectors():
    h = _sym(80, "zero", np.float32, 0)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert np.all(w == 0)
    assert np.abs(v.T @ v - np.eye(80)).max() <= 10 * 80 * _eps(np.float32)


def test_reads_the_lower_triangle_only():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((90, 90)).astype(np.float32)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(a)))
    low = np.tril(a) + np.tril(a, -1).T
    w0, v0 = np.linalg.eigh(a)  # NumPy reads the lower triangle too
    _check(_errors(low, w, v), _errors(low, w0, v0), np.float32)


def test_batched_each_matrix_as_alone_and_nan_stays_in_its_matrix():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 2, 70, 70)).astype(np.float32)
    h = (a + np.swapaxes(a, -1, -2)) / 2
    h[0, 1] = _sym(70, "repeated", np.float32, 1)
    h[1, 0, 5, 3] = np.nan
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert w.shape == (2, 2, 70) and v.shape == (2, 2, 70, 70)
    assert np.all(np.isnan(w[1, 0]))
    for i, j in ((0, 0), (0, 1), (1, 1)):
        w0, v0 = np.linalg.eigh(h[i, j])
        _check(_errors(h[i, j], w[i, j], v[i, j]), _errors(h[i, j], w0, v0), np.float32)
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    assert np.all(np.isnan(wv[1, 0]))
    np.testing.assert_allclose(wv[0, 1], np.linalg.eigvalsh(h[0, 1].astype(np.float64)),
                               atol=10 * 70 * _eps(np.float32) * 2)


@pytest.mark.parametrize("scale", [1e25, 1e-25])
def test_huge_and_tiny_entries(scale):
    # the kernel scales each matrix by a power of two as it loads it
    h = (_sym(72, "random", np.float64, 3) * scale).astype(np.float32)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(v))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


needs_no_f64 = pytest.mark.skipif(F64, reason="QL serves the vectors only without float64")


@needs_no_f64
@pytest.mark.parametrize("n", [70, 101])
def test_ql_rows_of_q_split_over_workgroups_as_on_gpus(n, monkeypatch):
    # GPUs cut Q's rows over several workgroups a matrix, each running the same QL
    # steps on its own copy of the tridiagonal: forced here, uneven chunks included
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "row_chunks", lambda device, n, napply: 3)
    _check_stack(np.stack([_sym(n, "random", np.float32, n), _sym(n, "clustered", np.float32, n + 1)]))


@needs_no_f64
def test_ql_gpu_workgroup_sizes_vs_lapack(monkeypatch):
    # GPUs run trd with up to 1024 invocations and tql with 256 (lavapipe: 64 each):
    # the same passes, another thread layout
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "_trd_threads", lambda device: 256)
    monkeypatch.setattr(lt, "_threads", lambda device: 128)
    h = _sym(97, "clustered", np.float32, 4)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


@needs_f64
@pytest.mark.parametrize("kind", ["clustered", "identity_perturbed"])
def test_inverse_iteration_cut_over_many_dispatches(kind, monkeypatch):
    # a budget of about one inverse iteration a dispatch: every cluster's leader stops
    # and resumes mid-cluster, mid-vector (identity_perturbed: one cluster of all 70)
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "_stein_budget", lambda device, n: 3 * n)
    monkeypatch.setattr(lt, "STEIN_MAX_CLUSTER", 10 ** 9)  # stein even for the cluster of 70
    _check_stack(np.stack([_sym(70, kind, np.float32, 11), _sym(70, "random", np.float32, 12)]))


@needs_f64
def test_inverse_iteration_in_one_dispatch_as_on_gpus(monkeypatch):
    # GPUs run stein in one dispatch without a budget (the loops here stay short of
    # lavapipe's bound), and trd with up to 1024 invocations, stein with 128
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "_stein_budget", lambda device, n: None)
    monkeypatch.setattr(lt, "STEIN_MAX_CLUSTER", 10 ** 9)
    monkeypatch.setattr(lt, "_trd_threads", lambda device: 256)
    monkeypatch.setattr(lt, "_stein_threads", lambda device, n: 128)
    h = _sym(97, "clustered", np.float32, 4)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


@pytest.mark.parametrize("threads", [64, 7])
def test_multisection_as_on_gpus_vs_lapack(threads, monkeypatch):
    # GPUs find the eigenvalues by multisection (a workgroup an eigenvalue; 7: a width
    # that is no power of two), eigvalsh's and eigh's: the same values as bisection's,
    # a 1 x 1 block's exactly
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "_multisect_threads", lambda device: threads)
    h = np.stack([_sym(70, "clustered", np.float32, 30), _sym(70, "diagonal", np.float32, 31),
                  _hard("wilkinson_padded")[:70, :70].astype(np.float32)])
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    for k in range(3):
        w0, v0 = np.linalg.eigh(h[k])
        _check(_errors(h[k], w[k], v[k]), _errors(h[k], w0, v0), np.float32)
        _check(_errors(h[k], wv[k], None), _errors(h[k], w0, None), np.float32)
    np.testing.assert_array_equal(wv[1], np.sort(np.diag(h[1])))
    monkeypatch.setattr(lt, "_multisect_threads", lambda device: 0)
    np.testing.assert_allclose(np.asarray(la.eigvalsh(xp.asarray(h))), wv, rtol=0, atol=4 * _eps(np.float32) * 8)


def _wilkinson(m=21):
    k = (m - 1) // 2
    return np.diag(np.abs(np.arange(-k, k + 1)).astype(float)) + np.diag(np.ones(m - 1), 1) + \
        np.diag(np.ones(m - 1), -1)


def _glued(copies, glue, m=21):
    # copies of W21+ on the diagonal, each coupled to the next by ``glue``: pairs of
    # eigenvalues agree to ~1e-14 within a copy, and the copies' values cluster
    a = np.zeros((copies * m, copies * m))
    for c in range(copies):
        a[c * m:(c + 1) * m, c * m:(c + 1) * m] = _wilkinson(m)
    for c in range(1, copies):
        a[c * m - 1, c * m] = a[c * m, c * m - 1] = glue
    return a


def _rotated(a, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal(a.shape))
    h = q @ a @ q.T
    return (h + h.T) / 2


def _hard(kind):
    if kind == "wilkinson_tridiagonal":  # T itself: the reduction leaves it as it is
        return _wilkinson(105)
    if kind == "wilkinson_padded":  # W21+ and a spread spectrum beside it
        return np.diag(np.r_[np.zeros(21), np.arange(60) * 0.1 + 20]) + np.pad(_wilkinson(), ((0, 60), (0, 60)))
    if kind == "glued_1e-8":
        return _rotated(_glued(4, 1e-8), 1)
    if kind == "glued_eps":
        return _rotated(_glued(5, 2.2e-16), 2)
    if kind == "glued_tridiagonal":
        return _glued(5, 1e-14)
    if kind == "two_values":  # Q diag(1, ..., 1, 2, ..., 2) Q^T: two eigenspaces of 48 and 49
        w = np.r_[np.ones(48), 2 * np.ones(49)]
        q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((97, 97)))
        h = (q * w) @ q.T
        return (h + h.T) / 2
    raise ValueError(kind)


HARD = ("wilkinson_tridiagonal", "wilkinson_padded", "glued_1e-8", "glued_eps", "glued_tridiagonal", "two_values")


@pytest.mark.parametrize("route", ["chosen", "stein"])
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
@pytest.mark.parametrize("kind", HARD)
def test_clusters_and_wilkinson_matrices_vs_lapack(kind, dtype, route, monkeypatch):
    # "chosen": the route eigh takes (QL past STEIN_MAX_CLUSTER: two_values' clusters of
    # 48 and 49); "stein": inverse iteration whatever the clusters
    if route == "stein":
        from wgarray._kernels import linalg_trd as lt
        monkeypatch.setattr(lt, "STEIN_MAX_CLUSTER", 10 ** 9)
    h = _hard(kind).astype(dtype)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert np.all(np.diff(w) >= 0)
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), dtype)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
def test_diagonal_and_identity_exact(dtype):
    # T splits into 1 x 1 blocks: each value is its entry and each vector a unit
    # vector, exactly (repeated entries included)
    d = np.repeat(np.arange(20.0) - 7.5, 4)[np.random.default_rng(5).permutation(80)].astype(dtype)
    for h in (np.diag(d), np.eye(97, dtype=dtype)):
        w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
        np.testing.assert_array_equal(w, np.sort(np.diag(h)))
        assert np.all((v == 0) | (np.abs(v) == 1)) and np.all(np.abs(v).sum(axis=0) == 1)
        np.testing.assert_array_equal((v * w) @ v.T, h)
        np.testing.assert_array_equal(np.asarray(la.eigvalsh(xp.asarray(h))), np.sort(np.diag(h)))


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
def test_block_diagonal_vectors_stay_in_their_blocks(dtype):
    # a zero coupling splits T exactly: every vector is zero outside one block, and
    # 1 x 1 blocks give their entry and a unit vector
    rng = np.random.default_rng(6)
    sizes = (1, 5, 17, 1, 30, 2, 1, 73)
    n = sum(sizes)
    h = np.zeros((n, n), dtype)
    starts = np.cumsum((0,) + sizes[:-1])
    for s0, m in zip(starts, sizes):
        a = rng.standard_normal((m, m))
        h[s0:s0 + m, s0:s0 + m] = (a + a.T) / 2
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), dtype)
    block = np.repeat(np.arange(len(sizes)), sizes)
    for c in range(n):
        assert len(set(block[v[:, c] != 0])) == 1, c
    for s0, m in zip(starts, sizes):
        if m == 1:
            assert h[s0, s0] in w
            assert np.any(np.all(v == np.eye(n, dtype=dtype)[:, [s0]], axis=0))


def test_batched_stack_of_kinds_each_as_alone():
    # matrices of one stack split differently (diagonal, clusters, none): each comes
    # out as alone, eigvalsh too
    kinds = ("clustered", "diagonal", "random", "repeated")
    h = np.stack([_sym(65, k, np.float32, 20 + i) for i, k in enumerate(kinds)]).reshape(2, 2, 65, 65)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    for i in range(2):
        for j in range(2):
            w0, v0 = np.linalg.eigh(h[i, j])
            _check(_errors(h[i, j], w[i, j], v[i, j]), _errors(h[i, j], w0, v0), np.float32)
            _check(_errors(h[i, j], wv[i, j], None), _errors(h[i, j], w0, None), np.float32)


@pytest.mark.parametrize("func", ["eigh", "eigvalsh"])
def test_dispatches_stay_few_and_independent_of_sweeps(func):
    # a few dozen dispatches at most (the reduction, bisection, inverse iteration, Q's
    # WY blocks applied to Z, casts and the sort, and without float64 the refinement;
    # lavapipe cuts the reduction over a few more), not the O(n^2 / block) rounds of
    # block Jacobi (hundreds here), and at most two host round trips (eigh: the largest
    # cluster of the eigenvalues, which picks stein or QL; lavapipe's check that inverse
    # iteration finished)
    n = 129
    x = xp.asarray(_sym(n, "random", np.float32, 5))
    getattr(la, func)(x)  # compile
    debug.reset_counters()
    out = getattr(la, func)(x)
    c = debug.counters()
    assert c.get("dispatches", 0) <= 40, c
    assert c.get("readbacks", 0) <= (2 if func == "eigh" else 1), c
    w = np.asarray(out.eigenvalues if func == "eigh" else out)
    assert np.abs(w - np.linalg.eigvalsh(np.asarray(x).astype(np.float64))).max() <= 10 * n * _eps(np.float32) * 20


@pytest.mark.slow
@pytest.mark.parametrize("n", [256, 257, 300])
def test_larger_orders_vs_lapack(n):
    h = _sym(n, "clustered", np.float32, n)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_inf_or_nan_entry_gives_nan_values_at_once(bad):
    # no inverse iterations on a NaN tridiagonal (they would run to the iteration
    # limit, its cluster to all n): every value NaN (without float64, the float32
    # refinement step after it turns some of them into infinities; none stays finite)
    h = _sym(75, "random", np.float32, 6)
    h[9, 4] = bad
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    if F64:
        assert np.all(np.isnan(w)) and np.all(np.isnan(wv))
    assert not np.any(np.isfinite(w)) and not np.any(np.isfinite(wv))


def _mat(m, n, kind, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    if kind != "random":
        k = min(m, n)
        qu = np.linalg.qr(rng.standard_normal((m, k)))[0]
        qv = np.linalg.qr(rng.standard_normal((n, k)))[0]
        s = np.logspace(0, -6, k) if kind == "ill" else np.r_[rng.random(k - k // 2) + 0.5, np.zeros(k // 2)]
        a = (qu * s) @ qv.T
    return a.astype(dtype)


def _svd_errors(a, u, s, vh):
    aa = a.astype(np.float64)
    s0 = np.linalg.svd(aa, compute_uv=False)
    out = {"values": np.abs(np.sort(s.astype(np.float64))[::-1] - s0).max() / s0.max()}
    if u is not None:
        out["backward"] = np.linalg.norm(aa - (u.astype(np.float64) * s) @ vh.astype(np.float64)) / np.linalg.norm(aa)
        out["orthogonality"] = max(np.abs(vh.astype(np.float64) @ vh.T.astype(np.float64) - np.eye(a.shape[1])).max(),
                                   np.abs(u.T.astype(np.float64) @ u.astype(np.float64) - np.eye(a.shape[1])).max())
    return out


SVD_CASES = [pytest.param(np.float32, m, n, k, id=f"float32-{m}x{n}-{k}")
             for m, n, k in [(70, 70, "random"), (100, 100, "ill"), (90, 90, "rankdef"), (150, 80, "random")]] + \
    [pytest.param(np.float64, 100, 100, "ill", marks=needs_f64, id="float64-100x100-ill")]


@pytest.mark.parametrize("dtype,m,n,kind", SVD_CASES)
def test_svd_preconditioned_by_eigh_vs_lapack(dtype, m, n, kind):
    # past order 64 (and up to 256) svd runs one-sided Jacobi on A V0, V0 the
    # eigenvectors of A^T A by the tridiagonal route
    from wgarray._kernels import linalg_eigen as le
    assert le.SVD_PRECONDITION
    a = _mat(m, n, kind, dtype, m + n)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert u.dtype == dtype and s.dtype == dtype and np.all(np.diff(s) <= 0)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), dtype)
    sv = np.asarray(la.svdvals(xp.asarray(a)))
    _check(_svd_errors(a, None, sv, None), _svd_errors(a, None, np.linalg.svd(a, compute_uv=False), None), dtype)


@pytest.mark.parametrize("scale", [1e25, 1e-25])
def test_svd_preconditioned_huge_and_tiny_entries(scale):
    # A^T A is formed from A / max|a_ij|: unscaled, its float32 entries would overflow
    a = (_mat(80, 80, "random", np.float64, 13) * scale).astype(np.float32)
    s = np.asarray(la.svdvals(xp.asarray(a)))
    s0 = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.all(np.isfinite(s))
    assert np.abs(s - s0).max() <= 10 * _eps(np.float32) * 80 * s0.max()


def test_svd_preconditioned_batched_and_nan():
    a = np.stack([_mat(72, 72, "random", np.float32, 1), _mat(72, 72, "ill", np.float32, 2)])
    a[1, 3, 3] = np.nan
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert np.all(np.isnan(s[1]))
    _check(_svd_errors(a[0], u[0], s[0], vh[0]), _svd_errors(a[0], *np.linalg.svd(a[0], full_matrices=False)),
           np.float32)


def test_eigh_and_eigvalsh_take_the_route_up_to_the_kernels_limit():
    # eigh's vectors take the tridiagonal route as far as eigvalsh does (up to the
    # kernels' workgroup memory and MAX_N; past that, block Jacobi); without float64
    # (QL) up to TRD_MAX_VECTORS_QL
    from wgarray._kernels import linalg_eigen, linalg_trd
    from wgarray._kernels import linalg_sytrd
    assert linalg_eigen.TRD_MAX_VECTORS == linalg_trd.MAX_BLOCKED
    top = linalg_eigen.TRD_MAX_VECTORS if F64 else linalg_eigen.TRD_MAX_VECTORS_QL
    for n in (384, 385, 512, linalg_trd.MAX_N, linalg_trd.MAX_N + 1):
        node = xp.asarray(np.eye(n, dtype=np.float32))._node
        fits = linalg_eigen._trd_order(node.device, node.dtype, n)
        assert linalg_eigen.uses_trd(node, "eigvals") == fits
        assert linalg_eigen.uses_trd(node, "eigh") == (fits and n <= top)
    # past the one-workgroup kernels' MAX_N only the blocked reduction's route (GPUs)
    device = node.device
    n = linalg_trd.MAX_N + 1
    assert linalg_eigen._trd_order(device, node.dtype, n) == linalg_sytrd.wanted(device, 1, n)
    assert not linalg_eigen._trd_order(device, node.dtype, linalg_trd.MAX_BLOCKED + 1)


@needs_f64
@pytest.mark.parametrize("kind", ["pca_gram", "random", "two_values"])
def test_large_clusters_iterate_alone_then_orthonormalize(kind, monkeypatch):
    # a Gram matrix of PCA-like data (rank 8 plus noise: 92 eigenvalues ~1e-11 ||T||
    # apart) makes one cluster that stein would orthogonalize one vector after another;
    # eigh runs each slot's inverse iteration alone and orthonormalizes the vectors by
    # CholeskyQR2 instead (two_values: eigenspaces of 48 and 49, exactly repeated),
    # stein's clusters otherwise; QL serves none of them
    from wgarray._kernels import linalg_trd as lt
    calls, ql = [], []
    orth, tql = lt._orthonormal, lt._tql
    monkeypatch.setattr(lt, "_orthonormal", lambda x: calls.append(1) or orth(x))
    monkeypatch.setattr(lt, "_tql", lambda *a: ql.append(1) or tql(*a))
    rng = np.random.default_rng(5)
    n = 100
    if kind == "pca_gram":
        x = rng.standard_normal((2000, 8)) * 30 @ rng.standard_normal((8, n)) + rng.standard_normal((2000, n))
        h = (x.T @ x).astype(np.float32)
    elif kind == "two_values":
        h = _hard("two_values").astype(np.float32)
    else:
        h = _sym(n, "random", np.float32, 6)
    big = kind != "random"
    assert (lt._largest_cluster_of(np.linalg.eigvalsh(h.astype(np.float64))[None]) > lt.STEIN_MAX_CLUSTER) == big
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert (len(calls), len(ql)) == ((1, 0) if big else (0, 0))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


@needs_f64
def test_large_clusters_fall_back_to_ql_where_cholesky_fails(monkeypatch):
    # where CholeskyQR cannot orthonormalize the lone vectors (qr_tall gives None),
    # the vectors come from QL
    from wgarray._kernels import linalg_trd as lt
    ql = []
    tql = lt._tql
    monkeypatch.setattr(lt, "_orthonormal", lambda x: None)
    monkeypatch.setattr(lt, "_tql", lambda *a: ql.append(1) or tql(*a))
    h = _hard("two_values").astype(np.float32)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert ql == [1]
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


# ----------------------------------------------------- the blocked reduction
# GPUs reduce matrices from order linalg_sytrd.BLOCKED_MIN by panels over the whole
# device (``_kernels/linalg_sytrd.py``); forced here at small orders, panel edges
# (orders around multiples of its 32 columns, plus 2) included

@pytest.fixture
def blocked(monkeypatch):
    from wgarray._kernels import linalg_eigen as le, linalg_sytrd as ls
    calls = []
    reduce = ls.reduce
    monkeypatch.setattr(le, "TRD_MIN", 2)  # the tridiagonal route from order 3
    monkeypatch.setattr(ls, "wanted", lambda device, nz, n: True)
    monkeypatch.setattr(ls, "reduce", lambda *a: calls.append(a[3:5]) or reduce(*a))
    return calls


BLOCKED = [_case(d, n, "random") for d in (np.float32, np.float64) for n in (3, 4, 33, 34, 35, 66, 67, 100)] + \
    [_case(d, 70, k) for d in (np.float32, np.float64) for k in KINDS[1:] + ("zero",)]


@pytest.mark.parametrize("dtype,n,kind", BLOCKED)
def test_blocked_reduction_vs_lapack(dtype, n, kind, blocked):
    h = _sym(n, kind, dtype, seed=n + len(kind))
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert blocked == [(1, n)]
    assert np.all(np.diff(w) >= 0)
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), dtype)
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    _check(_errors(h, wv, None), _errors(h, w0, None), dtype)


@pytest.mark.parametrize("kind", HARD)
def test_blocked_reduction_hard_matrices_vs_lapack(kind, blocked):
    h = _hard(kind).astype(np.float32)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert blocked
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)


@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize("scale", [1e25, 1e-25])
def test_blocked_reduction_stack_scaled_and_nan(scale, spill, blocked, monkeypatch):
    # a stack: each matrix scaled on its own, a NaN kept to its matrix (inverse
    # iteration's rows in workgroup memory or in storage)
    from wgarray._kernels import linalg_trd as lt
    monkeypatch.setattr(lt, "SPILL_BELOW", 10 ** 6 if spill else 0)
    h = np.stack([_sym(67, "random", np.float64, 3) * scale, _sym(67, "graded", np.float64, 4),
                  _sym(67, "random", np.float64, 5)]).astype(np.float32)
    h[2, 9, 4] = np.nan
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert blocked == [(3, 67)]
    assert np.all(np.isnan(w[2])) and np.all(np.isfinite(w[:2])) and np.all(np.isfinite(v[:2]))
    for k in range(2):
        w0, v0 = np.linalg.eigh(h[k])
        _check(_errors(h[k], w[k], v[k]), _errors(h[k], w0, v0), np.float32)


def test_blocked_reduction_dispatches_and_no_readback(blocked, monkeypatch):
    # two dispatches a column, two a panel of 32, trd's init and the last 2 x 2 block:
    # all queued, nothing read back beyond what the one-workgroup reduction reads
    from wgarray._kernels import linalg_sytrd as ls
    h = xp.asarray(_sym(100, "random", np.float32, 9))
    seen = {}
    for route in ("blocked", "one workgroup"):
        la.eigvalsh(h)  # compiled
        debug.reset_counters()
        float(xp.sum(la.eigvalsh(h)))
        seen[route] = debug.counters()
        monkeypatch.setattr(ls, "wanted", lambda device, nz, n: False)
    n = 100
    assert len(blocked) == 2
    assert seen["blocked"]["dispatches"] >= 2 * (n - 2) + 2 * -(-(n - 2) // 32) + 2
    assert seen["blocked"]["readbacks"] == seen["one workgroup"]["readbacks"]


@needs_f64  # inverse iteration runs in float64 (without it, QL gives the vectors)
@pytest.mark.parametrize("kind", ["random", "repeated", "clustered"])
def test_stein_staged_block_gives_the_same_bits(kind, monkeypatch):
    # inverse iteration reading its block from workgroup memory (STEIN_STAGE) reads the
    # same values as from storage: the same vectors bit for bit, clusters included
    from wgarray._kernels import linalg_trd as lt
    h = _sym(150, kind, np.float64, seed=31)
    out = []
    for stage in (False, True):
        monkeypatch.setattr(lt, "STEIN_STAGE", stage)
        w, v = la.eigh(xp.asarray(h))
        out.append((np.asarray(w), np.asarray(v)))
    assert any(k[0] == "linalg_trd_stein" and k[1][4] for k in xp.asarray(0).device.runtime.kernels)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


@needs_f64  # inverse iteration runs in float64 (without it, QL gives the vectors)
@pytest.mark.parametrize("kind", ["random", "repeated", "clustered"])
def test_stein_rows_in_storage_give_the_same_bits(kind, monkeypatch):
    # inverse iteration with its rows in storage (``spill``: orders past what workgroup
    # memory holds, forced here) computes what the workgroup-memory form computes, bit
    # for bit, clusters and lavapipe's resumed dispatches included
    from wgarray._kernels import linalg_trd as lt
    h = _sym(150, kind, np.float64, seed=37)
    out = []
    for below in (0, 10 ** 6):
        monkeypatch.setattr(lt, "SPILL_BELOW", below)
        w, v = la.eigh(xp.asarray(h))
        out.append((np.asarray(w), np.asarray(v)))
    assert any(k[0] == "linalg_trd_stein" and k[1][-1] for k in xp.asarray(0).device.runtime.kernels)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["random", "big", "tiny", "zero", "nan", "stack"])
def test_blocked_init_matches_trd_init(dtype, case):
    # the blocked route's init over the device (``linalg_sytrd.init``) writes the same A
    # and SC as trd's one-workgroup init: the symmetric matrix of the lower triangle
    # scaled by a power of two, bit for bit; source at an offset, a stack
    from wgarray._kernels import linalg_sytrd as ls, linalg_trd as lt
    from wgarray._kernels.linalg import launch, tag
    from wgarray._wgsl import linalg_trd as kt
    if dtype == np.float64 and not F64:
        pytest.skip("the device has no float64")
    rng = np.random.default_rng(5)
    nz, n = (3, 70) if case == "stack" else (1, 67)
    a = rng.standard_normal((nz, n, n))
    a *= {"big": 1e30, "tiny": 1e-30, "zero": 0.0}.get(case, 1.0)
    if case == "nan":
        a[0, 40, 2] = np.nan
    if case == "stack":
        a[1] *= 2.0 ** 70
        a[2] *= 2.0 ** -70
    a = a.astype(dtype)
    x = xp.asarray(np.concatenate([np.zeros(5, dtype), a.ravel()]))[5:]
    src = x._node
    from wgarray._graph import node as g
    src = g.realize(src)
    device = src.device
    rt = device.runtime
    wt = tag(xp.float32 if dtype == np.float32 else xp.float64, device)
    isz = np.dtype(dtype).itemsize
    out = []
    for route in ("trd", "blocked"):
        A, SC = rt.alloc(nz * n * n * isz), rt.alloc(nz * isz)
        if route == "trd":
            cap = lt._cap(n)
            bufs = {"SRC": src.buf, "A": A, "Q": rt.alloc(4), "D": rt.alloc(nz * n * isz),
                    "E": rt.alloc(nz * n * isz), "TAU": rt.alloc(nz * n * isz), "SC": SC}
            launch(device, "linalg_trd", (wt, cap, lt._trd_threads(device)), kt.trd_record, kt.render_trd, bufs, nz,
                   nz=nz, n=n, off=src.offset, s_mat=n * n, phase=0, k0=0, k1=0, init=1)
        else:
            ls.init(device, wt, isz, nz, n, src, A, SC)
        out.append([rt.read(b, 0, size).view(dtype).copy() for b, size in ((A, nz * n * n * isz), (SC, nz * isz))])
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    low = np.tril(a) + np.swapaxes(np.tril(a, -1), 1, 2)
    np.testing.assert_array_equal(out[1][0].reshape(nz, n, n), low / out[1][1][:, None, None])


@pytest.mark.parametrize("dtype,kind", [(np.float32, "random"), (np.float32, "clustered"),
                                        (np.float64, "random"), (np.float32, "repeated")])
def test_route_past_the_one_workgroup_kernels(dtype, kind, blocked, monkeypatch):
    # orders past linalg_trd.MAX_N take the blocked reduction (its init over the
    # device) and inverse iteration with its rows in storage; here MAX_N lowered so
    # that order 100 goes past it
    from wgarray._kernels import linalg_trd as lt
    if dtype == np.float64 and not F64:
        pytest.skip("the device has no float64")
    monkeypatch.setattr(lt, "MAX_N", 64)
    monkeypatch.setattr(lt, "SPILL_BELOW", 10 ** 6)
    n = 100
    h = _sym(n, kind, dtype, seed=41)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    assert blocked == [(1, n)]
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), dtype)
    wv = np.asarray(la.eigvalsh(xp.asarray(h)))
    _check(_errors(h, wv, None), _errors(h, w0, None), dtype)
    if F64:
        spilled = [k[1] for k in xp.asarray(0).device.runtime.kernels if k[0] == "linalg_trd_stein"]
        assert any(spec[-1] for spec in spilled)


def test_float32_reduces_in_float32_on_the_blocked_route(blocked, monkeypatch):
    # float32 input: the reduction and Q Z in float32 (as LAPACK's ssyevd), bisection
    # and inverse iteration on T in float64 where the device has it; both settings
    # within LAPACK's float32 bounds
    from wgarray._kernels import linalg_sytrd as ls, linalg_trd as lt
    h = _sym(90, "random", np.float32, seed=43)
    w0, v0 = np.linalg.eigh(h)
    tags, stein = [], []
    reduce, run_stein = ls.reduce, lt._stein
    monkeypatch.setattr(ls, "reduce", lambda device, wt, *a: tags.append(wt) or reduce(device, wt, *a))
    monkeypatch.setattr(lt, "_stein", lambda device, wt, *a, **k: stein.append(wt) or run_stein(device, wt, *a, **k))
    for same in (True, False):
        monkeypatch.setattr(lt, "REDUCE_IN_DTYPE", same)
        w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
        _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)
    if F64:
        assert tags == ["f32", "f64"] and stein == ["f64", "f64"]
    else:
        assert tags == ["f32", "f32"]


@pytest.mark.parametrize("n", [67, 130])
def test_tcol_sums_by_subgroups_and_by_trees(n, blocked, monkeypatch):
    # the blocked reduction's column kernel sums by subgroups (float32, devices with
    # them) or by trees in workgroup memory: both within LAPACK's bounds
    from wgarray._kernels import linalg_sytrd as ls
    h = _sym(n, "random", np.float32, seed=47)
    w0, v0 = np.linalg.eigh(h)
    seen = []
    for on in (True, False):
        monkeypatch.setattr(ls, "SUBGROUP_SUMS", on)
        seen.append(ls._tcol_subgroups(xp.asarray(0).device, "f32", ls._tcol_threads(xp.asarray(0).device)))
        w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
        _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)
    assert seen[1] == 0
    assert (seen[0] > 0) == (xp.asarray(0).device.runtime.subgroup_size is not None
                             and ls._tcol_threads(xp.asarray(0).device) // xp.asarray(0).device.runtime.subgroup_size
                             <= xp.asarray(0).device.runtime.subgroup_size)


@pytest.mark.parametrize("cw", [128, 256])
def test_symv_chunks_wider_than_the_default(cw, blocked, monkeypatch):
    # past order 16 CB symv's workgroups sum over wider column chunks (``chunk_cols``):
    # forced here at order 300 (chunks of 128 and 256, the last one partial)
    from wgarray._wgsl import linalg_sytrd as ks
    monkeypatch.setattr(ks, "chunk_cols", lambda n: cw)
    h = _sym(300, "random", np.float32, seed=53)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_errors(h, w, v), _errors(h, w0, v0), np.float32)
    assert any(k[0] == "linalg_sytrd_tsymv" and k[1][-1] == cw for k in xp.asarray(0).device.runtime.kernels)


def test_where_stein_keeps_its_rows_in_storage(monkeypatch):
    # in storage on GPUs from SPILL_GPU_MIN (occupancy), and wherever workgroup memory
    # cannot hold the three rows; in workgroup memory otherwise
    from wgarray._kernels import linalg_trd as lt
    device = xp.asarray(0).device
    lim = device.limits.get("max-compute-workgroup-storage-size", 16384)
    monkeypatch.setattr(lt, "loop_bound", lambda d: None)  # as on a GPU
    assert lt._stein_spills(device, "f32", lt.SPILL_GPU_MIN)
    assert not lt._stein_spills(device, "f32", 100)
    monkeypatch.setattr(lt, "loop_bound", lambda d: 65535)  # as on lavapipe
    assert not lt._stein_spills(device, "f32", lt.SPILL_GPU_MIN)
    big = 4096
    assert lt._stein_spills(device, "f64", big) == (lt.kt.stein_workgroup_bytes("f64", big, 128) > lim)


def test_svd_takes_the_preconditioned_route_as_far_as_eigh_goes():
    # svd of real orders past 1024 takes eigh(A^T A) as its preconditioner wherever the
    # tridiagonal route takes the order (GPUs with float64; block Jacobi on A elsewhere)
    from wgarray._kernels import linalg_eigen as le, linalg_trd as lt
    assert le.SVD_PRECONDITION_MAX == lt.MAX_BLOCKED
    for n in (lt.MAX_N + 1, 2048):
        node = xp.asarray(np.eye(4, dtype=np.float32))._node
        node = type(node)(node.buf, (n, n), node.dtype, node.device, 0, (n, 1))
        want = node.device.has_f64 and le._trd_order(node.device, node.dtype, n)
        assert le._preconditions_large(node) == want
