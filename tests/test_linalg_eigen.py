"""eigh / eigvalsh / svd / svdvals against NumPy's LAPACK: backward error, orthogonality
and value errors each within 10x of NumPy's own on the same input (both measured
against a float64 / complex128 reference), on well-conditioned, ill-conditioned,
rank-deficient and clustered inputs, at sizes on both sides of the block size."""
import numpy as np
import pytest

import wgarray as xp
from wgarray import linalg as la

F64 = xp.float64 in xp.__array_namespace_info__().dtypes().values()
needs_f64 = pytest.mark.skipif(not F64, reason="the device has no float64")


def _hi(dtype):
    return np.complex128 if np.issubdtype(dtype, np.complexfloating) else np.float64


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _orthogonal(n, rng, dtype):
    z = rng.standard_normal((n, n))
    if np.issubdtype(dtype, np.complexfloating):
        z = z + 1j * rng.standard_normal((n, n))
    q, _ = np.linalg.qr(z)
    return q


def _hermitian(n, kind, dtype, seed):
    """A Hermitian matrix of the given spectrum kind, rounded to ``dtype``."""
    rng = np.random.default_rng(seed)
    q = _orthogonal(n, rng, dtype)
    if kind == "random":
        a = rng.standard_normal((n, n))
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal((n, n))
        h = (a + a.conj().T) / 2
        return h.astype(dtype)
    cond = 1e6 if np.finfo(dtype).bits <= 64 and _eps(dtype) > 1e-10 else 1e12
    if kind == "ill":
        w = np.logspace(0, -np.log10(cond), n) * rng.choice([-1, 1], n)
    elif kind == "rankdef":
        w = rng.standard_normal(n)
        w[: n // 2] = 0
    else:  # clustered and repeated
        w = np.repeat(rng.standard_normal(-(-n // 4)), 4)[:n] + rng.standard_normal(n) * 1e-6
        if n > 3:
            w[:3] = 2.0
    h = (q * w) @ q.conj().T
    h = (h + h.conj().T) / 2
    return h.astype(dtype)


def _eig_errors(h, w, v):
    hh = h.astype(_hi(h.dtype))
    w0 = np.linalg.eigvalsh(hh)
    nrm = max(np.abs(w0).max(), np.finfo(np.float64).tiny)
    out = {"values": np.abs(np.sort(w.astype(np.float64)) - w0).max() / nrm}
    if v is not None:
        vv = v.astype(_hi(h.dtype))
        out["backward"] = np.linalg.norm(hh - (vv * w) @ vv.conj().T) / max(np.linalg.norm(hh), 1e-300)
        out["orthogonality"] = np.abs(vv.conj().T @ vv - np.eye(h.shape[0])).max()
    return out


def _check(ours, theirs, dtype):
    # within 10x of NumPy's error, or of one unit roundoff where NumPy's is exactly 0
    for k, e in ours.items():
        assert e <= 10 * max(theirs[k], _eps(dtype)), (k, e, theirs[k])


KINDS = ("ill", "rankdef", "clustered")


def _case(dtype, *args, slow=False):
    """A parameter set; float64 ones need the device's float64, and the blocked
    float64 runs past 100 (10-40 s each on lavapipe) go behind -m slow."""
    marks = []
    if dtype is np.float64:
        marks.append(needs_f64)
        if slow:
            marks.append(pytest.mark.slow)
    name = "-".join([np.dtype(dtype).name] + [str(a) for a in args])
    return pytest.param(dtype, *args, marks=marks, id=name)


EIG_CASES = [_case(d, n, "random", slow=n > 100) for d in (np.float32, np.float64)
             for n in (1, 2, 7, 33, 64, 100, 130)] + \
    [_case(d, n, kind, slow=n >= 100) for d in (np.float32, np.float64) for n in (7, 64, 100) for kind in KINDS]


@pytest.mark.parametrize("dtype,n,kind", EIG_CASES)
def test_eigh_backward_orthogonality_values_vs_lapack(dtype, n, kind):
    h = _hermitian(n, kind, dtype, seed=n)
    w, v = la.eigh(xp.asarray(h))
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == dtype and v.dtype == dtype
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, w, v), _eig_errors(h, w0, v0), dtype)
    # ascending, and eigvalsh agrees
    assert np.all(np.diff(w) >= 0)
    _check(_eig_errors(h, np.asarray(la.eigvalsh(xp.asarray(h))), None), _eig_errors(h, w0, None), dtype)


@pytest.mark.parametrize("n", [7, 64, 100])
def test_eigh_complex_hermitian_vs_lapack(n):
    h = _hermitian(n, "random", np.complex64, seed=n + 1)
    w, v = la.eigh(xp.asarray(h))
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, w, v), _eig_errors(h, w0, v0), np.complex64)


@pytest.mark.parametrize("n", [33, 64, 100])
def test_eigh_gpu_workgroup_size_vs_lapack(n, monkeypatch):
    # GPUs run jeig with 1024 threads (lavapipe 256): the same rounds, other thread layout
    from wgarray._kernels import linalg_eigen as le
    monkeypatch.setattr(le, "_jeig_threads", lambda device, ns: 1024 if ns > 32 else 256)
    h = _hermitian(n, "random", np.float32, seed=n + 2)
    w, v = la.eigh(xp.asarray(h))
    w, v = np.asarray(w), np.asarray(v)
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, w, v), _eig_errors(h, w0, v0), np.float32)


@pytest.mark.parametrize("dtype,n", [_case(np.float32, 33), _case(np.float64, 50), _case(np.complex64, 17)])
def test_jeig_pair_slots_give_the_same_bits(dtype, n, monkeypatch):
    # GPUs number jeig's items by the capacity's pair slots (shifts, idle slots past the
    # pairs) where lavapipe divides by the pair count: the same operations per entry
    from wgarray._kernels import linalg_eigen as le
    h = _hermitian(n, "random", dtype, seed=n + 5)
    out = {}
    for slots in (0, 2):
        monkeypatch.setattr(le, "JEIG_SLOTS", slots)
        w, v = la.eigh(xp.asarray(h))
        out[slots] = (np.asarray(w), np.asarray(v))
    np.testing.assert_array_equal(out[0][0], out[2][0])
    np.testing.assert_array_equal(out[0][1], out[2][1])
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, *out[2]), _eig_errors(h, w0, v0), dtype)


def test_eigh_reads_the_lower_triangle_as_lapack():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 40)).astype(np.float32)
    w, v = la.eigh(xp.asarray(a))
    w0 = np.linalg.eigvalsh(a.astype(np.float64))  # NumPy reads the lower triangle too
    assert np.abs(np.asarray(w) - w0).max() <= 10 * 6e-7 * np.abs(w0).max()


def test_eigh_batched_small_and_large():
    rng = np.random.default_rng(4)
    for n in (5, 70):
        a = rng.standard_normal((3, n, n)).astype(np.float32)
        h = (a + np.swapaxes(a, -1, -2)) / 2
        w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
        assert w.shape == (3, n) and v.shape == (3, n, n)
        for k in range(3):
            w0, v0 = np.linalg.eigh(h[k])
            _check(_eig_errors(h[k], w[k], v[k]), _eig_errors(h[k], w0, v0), np.float32)


def _svd_errors(a, u, s, vh):
    aa = a.astype(_hi(a.dtype))
    s0 = np.linalg.svd(aa, compute_uv=False)
    nrm = max(s0.max(), 1e-300)
    out = {"values": np.abs(np.sort(s.astype(np.float64))[::-1] - s0).max() / nrm}
    if u is not None:
        uu, vv = u.astype(aa.dtype), vh.astype(aa.dtype)
        out["backward"] = np.linalg.norm(aa - (uu * s) @ vv) / max(np.linalg.norm(aa), 1e-300)
        out["orthogonality"] = np.abs(vv @ vv.conj().T - np.eye(vv.shape[0])).max()
    return out


def _matrix(m, n, kind, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal((m, n))
    if kind == "random":
        return a.astype(dtype)
    k = min(m, n)
    qu = np.linalg.qr(rng.standard_normal((m, k)))[0]
    qv = np.linalg.qr(rng.standard_normal((n, k)))[0]
    if kind == "ill":
        s = np.logspace(0, -6 if _eps(dtype) > 1e-10 else -12, k)
    else:  # rank deficient
        s = rng.random(k) + 0.5
        s[k // 2:] = 0
    return ((qu * s) @ qv.T).astype(dtype)


SVD_CASES = [_case(d, m, n, kind, slow=m > 100) for d in (np.float32, np.float64) for m, n, kind in
             [(33, 33, "random"), (64, 64, "random"), (100, 100, "random"), (130, 130, "random"),
              (100, 40, "random"), (40, 100, "random"), (64, 64, "ill"), (64, 64, "rankdef")]]


@pytest.mark.parametrize("dtype,m,n,kind", SVD_CASES)
def test_svd_backward_orthogonality_values_vs_lapack(dtype, m, n, kind):
    a = _matrix(m, n, kind, dtype, seed=m + n)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    assert np.all(np.diff(s) <= 0)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, u0, s0, vh0), dtype)
    _check(_svd_errors(a, None, np.asarray(la.svdvals(xp.asarray(a))), None), _svd_errors(a, None, s0, None), dtype)


def _count(fn):
    from wgarray import debug
    debug.reset_counters()
    out = fn()
    return out, debug.counters()


@pytest.mark.parametrize("func", ["eigh", "svd"])
def test_whole_matrix_path_needs_no_readback_and_few_dispatches(func, no_early_submit):
    # n <= SMALL / SMALL_SVD: one Jacobi dispatch (one more per loop-bound chunk on
    # lavapipe) and the refinement's handful, no host round trip before the result
    # is read (the blocked solver read a flag back every sweep)
    n = 48
    a = _matrix(n, n, "random", np.float32, seed=5)
    if func == "eigh":
        a = (a + a.T) / 2
    x = xp.asarray(a)
    res, c = _count(lambda: la.eigh(x) if func == "eigh" else la.svd(x, full_matrices=False))
    # svd reads one flag back: whether U has columns of zero singular values to complete
    rank_check = 1 if func == "svd" else 0
    assert c.get("readbacks", 0) == rank_check and c.get("submits", 0) == rank_check, c
    # a real matrix this small: jeig / ojac, then the refinement and sort in one (svd:
    # and the flag's reduction and the zero test, and |S| 0, which spreads a NaN value
    # into U and Vh)
    assert c.get("dispatches", 0) <= 3 + 4 * rank_check, c
    if func == "eigh":
        w, v = (np.asarray(r) for r in res)
        w0, v0 = np.linalg.eigh(a)
        _check(_eig_errors(a, w, v), _eig_errors(a, w0, v0), np.float32)
    else:
        u, s, vh = (np.asarray(r) for r in res)
        _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), np.float32)


@pytest.mark.parametrize("dtype", [np.complex64, pytest.param(np.complex128, marks=needs_f64)])
@pytest.mark.parametrize("n", [1, 9, 40])
def test_svd_complex_whole_matrix_vs_lapack(dtype, n):
    a = _matrix(n + 3, n, "random", dtype, seed=n + 7)  # tall: QR first, then the square core
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert u.dtype == dtype and s.dtype == np.finfo(dtype).dtype
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), dtype)
    r = _matrix(n, n, "rankdef", dtype, seed=n + 8)
    u, s, vh = (np.asarray(x) for x in la.svd(xp.asarray(r), full_matrices=False))
    _check(_svd_errors(r, u, s, vh), _svd_errors(r, *np.linalg.svd(r, full_matrices=False)), dtype)


@pytest.mark.parametrize("dtype", [np.complex128])
def test_eigh_complex128_clustered_vs_lapack(dtype):
    if not F64:
        pytest.skip("the device has no float64")
    h = _hermitian(24, "clustered", dtype, seed=11)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, w, v), _eig_errors(h, w0, v0), dtype)


def test_svd_batched_whole_matrix_each_as_alone():
    # one workgroup per matrix: a batch gives each matrix its own result, repeated
    # singular values (an orthogonal matrix: all ones) included
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 20, 20)).astype(np.float32)
    a[1] = np.linalg.qr(a[1])[0]
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert s.shape == (3, 20) and u.shape == (3, 20, 20)
    for k in range(3):
        _check(_svd_errors(a[k], u[k], s[k], vh[k]), _svd_errors(a[k], *np.linalg.svd(a[k], full_matrices=False)),
               np.float32)
    np.testing.assert_allclose(s[1], np.ones(20), atol=10 * _eps(np.float32) * 20)


@pytest.mark.parametrize("func", ["eigh", "eigvalsh", "svd", "svdvals"])
def test_nan_input_gives_nan_and_leaves_batch_neighbours_alone(func):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 12, 12)).astype(np.float32)
    a = (a + np.swapaxes(a, -1, -2)) / 2
    a[1, 4, 2] = np.nan
    out = getattr(la, func)(xp.asarray(a))
    vals = np.asarray({"eigh": lambda: out.eigenvalues, "svd": lambda: out.S}.get(func, lambda: out)())
    assert np.all(np.isnan(vals[1]))
    for k in (0, 2):
        ref = np.linalg.eigvalsh(a[k]) if func.startswith("eig") else np.linalg.svd(a[k], compute_uv=False)
        got = np.sort(vals[k])
        assert np.abs(got - np.sort(ref)).max() <= 10 * _eps(np.float32) * 12 * np.abs(ref).max()


@pytest.mark.slow
@pytest.mark.parametrize("func", ["eigh", "svd"])
@pytest.mark.parametrize("n", [256, 257])
def test_both_sides_of_the_whole_matrix_threshold_vs_lapack(func, n):
    from wgarray._kernels import linalg_eigen as le
    assert le.SMALL == le.SMALL_SVD == 256
    a = _matrix(n, n, "random", np.float32, seed=n)
    if func == "eigh":
        a = (a + a.T) / 2
        w, v = (np.asarray(r) for r in la.eigh(xp.asarray(a)))
        w0, v0 = np.linalg.eigh(a)
        _check(_eig_errors(a, w, v), _eig_errors(a, w0, v0), np.float32)
    else:
        u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
        _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, pytest.param(np.float64, marks=needs_f64)])
@pytest.mark.parametrize("n", [40, 70])
def test_blocked_solver_vs_lapack(dtype, n, monkeypatch):
    # past SMALL / SMALL_SVD (256) the block Jacobi solver runs: here it is forced at
    # sizes that the default run can afford, on both sides of one block pair (32)
    from wgarray._kernels import linalg_eigen as le
    monkeypatch.setattr(le, "SMALL", 0)
    monkeypatch.setattr(le, "SMALL_SVD", 0)
    monkeypatch.setattr(le, "TRD_MIN", 1 << 30)  # real eigh: not the tridiagonal route
    h = _hermitian(n, "clustered", dtype, seed=n + 3)
    w, v = (np.asarray(r) for r in la.eigh(xp.asarray(h)))
    w0, v0 = np.linalg.eigh(h)
    _check(_eig_errors(h, w, v), _eig_errors(h, w0, v0), dtype)
    a = _matrix(n, n, "rankdef", dtype, seed=n + 4)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), dtype)


@pytest.mark.parametrize("scale", [1e25, 1e-25])
def test_huge_and_tiny_entries_whole_matrix_vs_lapack(scale):
    # ojac scales each matrix by a power of two first: the squares of float32 entries
    # past 1e19 would overflow, those of tiny ones underflow
    a = (_matrix(40, 40, "random", np.float64, seed=12) * scale).astype(np.float32)
    s = np.asarray(la.svdvals(xp.asarray(a)))
    s0 = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.all(np.isfinite(s))
    assert np.abs(s - s0).max() <= 10 * _eps(np.float32) * 40 * s0.max()
    h = (a + a.T) / 2
    w = np.asarray(la.eigvalsh(xp.asarray(h)))
    w0 = np.linalg.eigvalsh(h.astype(np.float64))
    assert np.all(np.isfinite(w))
    assert np.abs(w - w0).max() <= 10 * _eps(np.float32) * 40 * np.abs(w0).max()


# ------------------------------------------------- ojac's convergence on clustered values

def _spectrum_matrix(m, n, kind, dtype, seed):
    """m x n with a chosen spectrum: 'pca' as the R of PCA's data (16 strong
    directions, geometric from 1 to 0.1, then n - 16 values within 5% of 1e-3: the
    noise), 'repeated' (groups of four equal values, a few thousandths apart)."""
    rng = np.random.default_rng(seed)
    qu = np.linalg.qr(rng.standard_normal((m, n)))[0]
    qv = np.linalg.qr(rng.standard_normal((n, n)))[0]
    if kind == "pca":
        s = np.concatenate([np.geomspace(1, 0.1, 16), 1e-3 * (1 + 0.05 * rng.random(n - 16))])
    else:
        s = np.repeat(1 + 0.003 * np.arange(-(-n // 4)), 4)[:n]
    return ((qu * s) @ qv.T).astype(dtype)


def _ojac_sweeps(monkeypatch):
    """Wrap ``_ojac`` so that each call's flags (converged, active, sweeps run per
    matrix) can be read after the result: returns the list the reader fills."""
    from wgarray._kernels import linalg_eigen as le
    calls = []
    orig = le._ojac

    def wrapped(device, t, A0, nz, m, n):
        res = orig(device, t, A0, nz, m, n)
        calls.append((device, res[2], nz))
        return res

    monkeypatch.setattr(le, "_ojac", wrapped)

    def read():
        return [device.runtime.read(fl, 0, 12 * nz).view(np.uint32).reshape(nz, 3).copy()
                for device, fl, nz in calls]
    return read


# a solve that ends: sweeps measured on lavapipe stay at or below 13 (see the tests),
# OUTER_SWEEPS is 30
SWEEPS_ENDED = 20


def _assert_ended(read, fast: bool) -> None:
    """The preconditioned route's ojac: skipped where the columns of A V0 are already
    orthogonal to its bound (so always with ``fast``: float32 input, the Gram matrix and
    V0 in float64), else run once to the end of its solve, well before OUTER_SWEEPS."""
    calls = read()
    if fast or not calls:
        assert calls == [], calls
        return
    fl, = calls
    assert fl[0, 0] == 1 and fl[0, 2] <= SWEEPS_ENDED, fl


def _u_orthogonality(u):
    uu = u.astype(_hi(u.dtype))
    return float(np.abs(uu.conj().T @ uu - np.eye(u.shape[1])).max())


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
@pytest.mark.parametrize("kind,n", [("pca", 100), ("repeated", 100), ("pca", 48), ("repeated", 40)])
def test_ojac_ends_on_clustered_values_and_matches_lapack(dtype, kind, n, monkeypatch):
    # n > 64 (TRD_MIN), float32 on a device with float64: ojac on A V0, V0 from
    # eigh(A^T A) formed in float64, whose columns are orthogonal to ~2 eps: one sweep
    # that rotates nothing ends the solve (with A^T A in float32: 7 sweeps at order
    # 128, 9 at 256). Otherwise (float64, no float64 on the device, n <= 64: ojac on A
    # itself) a dozen sweeps at most, measured 13 for float64 'pca' at 48; the test
    # is that the solve ends well before OUTER_SWEEPS, which a sweep flag raised by
    # couplings just past the tolerance (a clustered pair's rotation turns by up to 45
    # degrees and mixes every coupling of its two columns) need not allow
    from wgarray._kernels import linalg_eigen as le
    read = _ojac_sweeps(monkeypatch)
    a = _spectrum_matrix(n, n, kind, dtype, seed=n + 21)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    _assert_ended(read, n > le.TRD_MIN and F64 and dtype is np.float32)
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, u0, s0, vh0), dtype)
    assert _u_orthogonality(u) <= 10 * max(_u_orthogonality(u0), _eps(dtype))


@pytest.mark.parametrize("dtype,n", [(np.float32, 48), (np.float32, 7), (np.complex64, 32),
                                     pytest.param(np.float64, 31, marks=needs_f64)])
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("shuffles", [False, True])
def test_ojac_in_workgroup_memory_matches_storage_bit_for_bit(dtype, n, split, shuffles, monkeypatch):
    # orders whose A and V fit in workgroup memory run the rounds there; the arithmetic
    # is the storage kernel's, so U, S, V agree bit for bit, also where the rounds are
    # cut over dispatches (``split``: each resumes from the storage copies), and both
    # match LAPACK on a batch of clustered ('pca') and random inputs; the pair sums by
    # subgroup shuffles (where the device has subgroups) or by a tree in workgroup memory
    from wgarray._kernels import linalg_eigen as le
    monkeypatch.setattr(le, "OJAC_SUBGROUPS", shuffles)
    device = xp.asarray(np.zeros(1, np.float32))._node.device
    wg, tpp, cap = le._ojac_layout(device, n, n, getattr(xp, np.dtype(dtype).name))
    assert cap >= n and cap % 16 == 0 and wg <= le._ojac_threads(device)
    rng = np.random.default_rng(n)
    real = np.dtype(dtype).char.lower() if np.issubdtype(dtype, np.complexfloating) else dtype
    a = np.stack([_spectrum_matrix(n, n, "pca", real, seed=n) if n > 16 else _matrix(n, n, "random", real, 3),
                  rng.standard_normal((n, n)).astype(real)])
    if np.issubdtype(dtype, np.complexfloating):
        a = (a + 1j * rng.standard_normal(a.shape)).astype(dtype)
    if split:  # a few rounds a dispatch
        monkeypatch.setattr(le, "loop_bound", lambda device: 4000)
    shared = [np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False)]
    layout = le._ojac_layout
    monkeypatch.setattr(le, "_ojac_layout", lambda *args: layout(*args)[:2] + (0,))
    storage = [np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False)]
    for x, y in zip(shared, storage):
        np.testing.assert_array_equal(x, y)
    for k in range(2):
        u0, s0, vh0 = np.linalg.svd(a[k], full_matrices=False)
        u, s, vh = (r[k] for r in shared)
        _check(_svd_errors(a[k], u, s, vh), _svd_errors(a[k], u0, s0, vh0), dtype)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
@pytest.mark.parametrize("kind", ["ill", "rankdef", "random"])
def test_preconditioned_svd_ends_and_matches_lapack(dtype, kind, monkeypatch):
    # order 100 (not a multiple of 32): ill-conditioned (1e6 float32, 1e12 float64),
    # rank deficient and random through the preconditioned path. Random float32 with
    # float64 A^T A: one sweep; the null columns of a rank-deficient matrix (rounding
    # noise, which Jacobi still makes orthogonal for U) take ~9, a float64 A^T A of
    # condition 1e24 leaves the small values' vectors to Jacobi (13; 30 from A itself)
    read = _ojac_sweeps(monkeypatch)
    a = _matrix(100, 100, kind, dtype, seed=31)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    _assert_ended(read, kind == "random" and F64 and dtype is np.float32)
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, u0, s0, vh0), dtype)
    assert _u_orthogonality(u) <= 10 * max(_u_orthogonality(u0), _eps(dtype))


def test_tall_pca_data_svd_ends_and_matches_lapack(monkeypatch):
    # the shape of PCA(svd_solver="full"): centered low-rank-plus-noise data, QR first,
    # then ojac on the R's preconditioned columns
    read = _ojac_sweeps(monkeypatch)
    rng = np.random.default_rng(41)
    n = 72
    x = (rng.standard_normal((3000, 16)) * np.geomspace(10, 1, 16)) @ rng.standard_normal((16, n)) \
        + 0.1 * rng.standard_normal((3000, n))
    a = (x - x.mean(0)).astype(np.float32)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    _assert_ended(read, F64)
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, u0, s0, vh0), np.float32)


def _spy_routes(monkeypatch):
    """Count the calls of ojac and of block Jacobi (with the first_check it was given)."""
    from wgarray._kernels import linalg_eigen as le
    seen = {"ojac": 0, "blocked": []}
    ojac, block_jacobi = le._ojac, le._block_jacobi

    def spy_ojac(*args, **kw):
        seen["ojac"] += 1
        return ojac(*args, **kw)

    def spy_block_jacobi(A0, mode, first_check):
        seen["blocked"].append(first_check)
        return block_jacobi(A0, mode, first_check)

    monkeypatch.setattr(le, "_ojac", spy_ojac)
    monkeypatch.setattr(le, "_block_jacobi", spy_block_jacobi)
    return seen


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=needs_f64)])
@pytest.mark.parametrize("kind", ["random", "ill", "rankdef"])
def test_svd_past_the_whole_matrix_order_preconditioned_vs_lapack(dtype, kind, monkeypatch):
    # past SMALL_SVD (lowered here so that order 100 is past it) a real svd on a device
    # with float64 runs on A V0 too: straight to the refinement where A V0's columns are
    # orthogonal already (float32 random: always), else block Jacobi on A V0 with a
    # convergence readback from its first sweep; without float64, block Jacobi on A
    from wgarray._kernels import linalg_eigen as le
    monkeypatch.setattr(le, "SMALL_SVD", 64)
    seen = _spy_routes(monkeypatch)
    a = _matrix(100, 100, kind, dtype, seed=51)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert seen["ojac"] == 0
    if not F64:
        assert seen["blocked"] == [le.FIRST_CHECK]
    elif kind == "random" and dtype is np.float32:
        assert seen["blocked"] == []
    else:
        assert seen["blocked"] in ([], [1])
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, u0, s0, vh0), dtype)
    assert _u_orthogonality(u) <= 10 * max(_u_orthogonality(u0), _eps(dtype))
    sv = np.asarray(la.svdvals(xp.asarray(a)))
    _check(_svd_errors(a, None, sv, None), _svd_errors(a, None, s0, None), dtype)


@needs_f64
def test_svd_preconditioned_falls_back_to_block_jacobi_on_a_v0(monkeypatch):
    # a check that never passes: block Jacobi then starts from A V0 (one convergence
    # readback a sweep from the first) and the result still matches LAPACK; a stack
    # with a NaN matrix fails the check too and leaves its neighbour alone
    from wgarray._kernels import linalg_eigen as le
    monkeypatch.setattr(le, "SMALL_SVD", 64)
    monkeypatch.setattr(le, "_columns_orthogonal", lambda B, work, tol: False)
    seen = _spy_routes(monkeypatch)
    a = _matrix(90, 90, "random", np.float32, seed=52)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    assert seen == {"ojac": 0, "blocked": [1]}
    _check(_svd_errors(a, u, s, vh), _svd_errors(a, *np.linalg.svd(a, full_matrices=False)), np.float32)
    monkeypatch.undo()
    monkeypatch.setattr(le, "SMALL_SVD", 64)
    seen = _spy_routes(monkeypatch)
    stack = np.stack([a, a])
    stack[0, 3, 7] = np.nan
    s2 = np.asarray(la.svdvals(xp.asarray(stack)))
    assert seen["blocked"] == [1]
    assert np.all(np.isnan(s2[0]))
    _check(_svd_errors(a, None, s2[1], None), _svd_errors(a, None, np.linalg.svd(a, compute_uv=False), None),
           np.float32)
