"""The linalg extension (Array API 2025.12), on the device: validation and composition.

Compositions of namespace ops where natural (outer, cross, diagonal as a strided view,
matrix_power by repeated squaring, pinv and matrix_rank from the SVD, trace and the
norms through the statistical reductions); the choice of algorithm by shape (blocked
or one workgroup per matrix, tall-skinny QR, QR before Jacobi for tall SVDs). The
factorizations run as the kernel families of ``_kernels/``: ``linalg.py`` (LU,
Householder QR, Jacobi, eig, one workgroup per matrix), ``linalg_blocked.py``
(matmul-bound blocked LU, Cholesky and QR) and ``linalg_eigen.py`` (the eigen and
SVD solvers).
"""
from __future__ import annotations

import functools
import math
import operator
from typing import NamedTuple

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._graph import slabs
from ._kernels import linalg as kla
from ._kernels import linalg_blocked as blk
from ._kernels import program
from . import _manipulation_functions as mf
from . import _creation_functions as cf
from . import _data_type_functions as dtf
from . import _elementwise_functions as ew
from ._kernels import gather as kg
from . import _searching_functions as sf
from . import _sorting_functions as srt
from . import _statistical_functions as stf
from . import _utility_functions as uf
from ._kernels import linalg_eigen as _linalg_eigen
from ._array import Array
from ._runtime.runtime import PastBindingLimit
from ._validation import normalize_axes, normalize_axis
from ._linear_algebra_functions import matmul, matrix_transpose, tensordot, vecdot

__all__ = [
    "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult",
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]

class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# ------------------------------------------------------------------ helpers

# A stack of matrices past the storage-binding limit runs a run of matrices at a time,
# each run copied into a buffer of its own, of at most 1 / PART_SHARE of a slab
# counted at 8 bytes an element (the float64 refinement copies and the workspaces of
# the solvers are a few times the input), the runs' results joined by concat.
PART_SHARE = 4


def _runs(batch, core, dtype, device) -> int:
    """Matrices of ``core`` elements a run holds (0: the stack needs no runs)."""
    nb = g.prod(batch)
    per = core * max(dtype.itemsize, 8) * PART_SHARE
    if nb <= 1 or not device.big or nb * per <= device.max_binding_bytes:
        return 0
    run = max(1, slabs.slab_bytes(device) // per)
    return run if run < nb else 0


def _own(node: g.Node) -> Array:
    return Array._new(g.realize(g.Op("copy", [node], node.dtype)))


def _in_runs(fn, arrays, batch, run: int, *args, **kwargs):
    """``fn(*parts, *args, **kwargs)`` over runs of ``run`` matrices of the common batch
    of ``arrays`` (each broadcast to ``batch`` + its own last two axes), the results
    (an array or a tuple of them, batch-leading) joined along the batch."""
    nb = g.prod(batch)
    flat = [g.reshape_view(g.broadcast_view(a._node, batch + a.shape[-2:]), (nb,) + a.shape[-2:]) for a in arrays]
    outs = []
    for i in range(0, nb, run):
        k = min(run, nb - i)
        parts = [_own(g.index_view(f, [("slice", i, 1, k)] + [("slice", 0, 1, n) for n in f.shape[1:]]))
                 for f in flat]
        outs.append(fn(*parts, *args, **kwargs))

    def join(pieces):
        whole = mf.concat(pieces, axis=0)
        return mf.reshape(whole, batch + whole.shape[1:])

    if isinstance(outs[0], tuple):
        return type(outs[0])(*[join([o[j] for o in outs]) for j in range(len(outs[0]))])
    return join(outs)


def _stacks_in_runs(fn):
    """``fn(x, ...)`` of a stack of matrices: a stack past the binding limit in runs."""
    @functools.wraps(fn)
    def _run_or_call(x, /, *args, **kwargs):
        if _core.is_array(x) and x.ndim > 2:
            run = _runs(x.shape[:-2], x.shape[-1] * x.shape[-2], x.dtype, x.device)
            if run:
                return _in_runs(fn, [x], x.shape[:-2], run, *args, **kwargs)
        return fn(x, *args, **kwargs)
    return _run_or_call


def _float_input(x, func: str, min_ndim: int = 2, square: bool = False) -> Array:
    _core.check_array(x, func)
    if x.dtype not in dt.FLOATING:
        raise TypeError(f"{func}: expected a floating-point dtype, got {x.dtype}")
    if x.ndim < min_ndim:
        raise ValueError(f"{func}: expected an array of at least {min_ndim} dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{func}: expected square matrices in the last two dimensions, got shape {x.shape}")
    return x


def _zeros(shape, dtype, device) -> Array:
    return Array._new(g.Const(0, dtype, device, tuple(shape)))


# Above this order solve, inv, det and slogdet run the blocked LU (``_kernels/linalg_blocked``,
# matmul-bound); at and below it the one-workgroup kernel, fewer dispatches for stacks
# of small matrices.
BLOCKED_MIN = 64
# qr of a matrix at least TALL_RATIO times taller than wide (and of TALL_MIN elements)
# runs the tall-skinny CholeskyQR, and svd/svdvals the SVD of its square R.
TALL_RATIO = 4
TALL_MIN = 4096
TSQR_ROWS = 1024  # rows of a TSQR leaf block (at least TALL_RATIO n)


def _reduce_axes(node: g.Node, axes, op: str) -> g.Node:
    """``op`` ('sum', 'max', 'min') of ``node`` over ``axes``, in its own dtype (the
    statistical reductions, with ``node``'s elementwise producer fused in)."""
    x = Array._new(node)
    axes = tuple(axes)
    if op == "sum":
        return stf.sum(x, axis=axes, dtype=node.dtype)._node
    return (stf.max if op == "max" else stf.min)(x, axis=axes)._node


def _reduce_last(node: g.Node, op: str) -> g.Node:
    return _reduce_axes(node, (node.ndim - 1,), op)


# ------------------------------------------------------------------ simple functions

def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    _core.check_array(x, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal: expected an array of at least 2 dimensions, got shape {x.shape}")
    offset = operator.index(offset)
    M, N = x.shape[-2:]
    length = max(0, min(M, N - offset) if offset >= 0 else min(M + offset, N))
    shape = x.shape[:-2] + (length,)
    if length == 0 or x.size == 0:
        return _zeros(shape, x.dtype, x.device)
    data = g.realize(x._node)
    sm, sn = data.strides[-2:]
    start = data.offset + (offset * sn if offset >= 0 else -offset * sm)
    return Array._new(g.Data(data.buf, shape, data.dtype, data.device, start, data.strides[:-2] + (sm + sn,)))


def trace(x: Array, /, *, offset: int = 0, dtype=None) -> Array:
    _core.check_array(x, "trace")
    if x.dtype not in dt.NUMERIC:
        raise TypeError(f"trace: expected a numeric dtype, got {x.dtype}")
    if dtype is None:
        if x.dtype in dt.SIGNED:
            dtype = dt.int64
        elif x.dtype in dt.UNSIGNED:
            dtype = dt.uint64
        else:
            dtype = x.dtype
    elif not isinstance(dtype, dt.DType):
        raise TypeError(f"trace: expected dtype to be a wgarray dtype or None, got {dtype!r}")
    x.device.check_dtype(dtype, "trace")
    d = diagonal(x, offset=offset)
    return Array._new(_reduce_last(_core.cast_node(d._node, dtype), "sum"))


def outer(x1: Array, x2: Array, /) -> Array:
    _core.check_array(x1, "outer", "x1")
    _core.check_array(x2, "outer", "x2")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: expected 1-D arrays, got shapes {x1.shape} and {x2.shape}")
    if dt.promote(x1.dtype, x2.dtype, "outer") not in dt.NUMERIC:
        raise TypeError(f"outer: expected numeric dtypes, got {x1.dtype} and {x2.dtype}")
    return ew.multiply(x1[:, None], x2[None, :])


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    _core.check_array(x1, "cross", "x1")
    _core.check_array(x2, "cross", "x2")
    device = _core.same_device([x1, x2], "cross")
    dtype = dt.promote(x1.dtype, x2.dtype, "cross")
    if dtype not in dt.NUMERIC:
        raise TypeError(f"cross: expected numeric dtypes, got {x1.dtype} and {x2.dtype}")
    shape = _core.broadcast_shapes(x1.shape, x2.shape, func="cross")
    ax = normalize_axis(axis, len(shape), "cross")
    for x in (x1, x2):
        d = ax - (len(shape) - x.ndim)
        if d < 0 or x.shape[d] != 3:
            raise ValueError(f"cross: expected size 3 along axis {axis}, got shapes {x1.shape} and {x2.shape}")
    perm = [d for d in range(len(shape)) if d != ax] + [ax]
    inv = [perm.index(d) for d in range(len(shape))]
    pshape = tuple(shape[d] for d in perm)
    if g.prod(pshape) == 0:
        return _zeros(shape, dtype, device)

    def parts(x):
        data = g.realize(g.permute_view(g.broadcast_view(g.realize(_core.cast_node(x._node, dtype)), shape), perm))
        s = data.strides[-1]
        return [g.Data(data.buf, pshape, dtype, device, data.offset + j * s, data.strides[:-1] + (0,))
                for j in range(3)]

    a, b = parts(x1), parts(x2)
    idx = g.Iota(pshape, device, 0, (0,) * (len(pshape) - 1) + (1,))

    def sel(v0, v1, v2):
        is0 = g.make_op("equal", [idx, g.Const(0, dt.uint32, device, pshape)], dt.bool)
        is1 = g.make_op("equal", [idx, g.Const(1, dt.uint32, device, pshape)], dt.bool)
        return g.make_op("where", [is0, v0, g.make_op("where", [is1, v1, v2], dtype)], dtype)

    a1, a2 = sel(a[1], a[2], a[0]), sel(a[2], a[0], a[1])
    b1, b2 = sel(b[1], b[2], b[0]), sel(b[2], b[0], b[1])
    out = g.make_op("subtract", [g.make_op("multiply", [a1, b2], dtype), g.make_op("multiply", [a2, b1], dtype)],
                    dtype)
    return Array._new(g.permute_view(g.realize(out), inv))


def matrix_power(x: Array, n: int, /) -> Array:
    _core.check_array(x, "matrix_power")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power: expected square matrices in the last two dimensions, got shape {x.shape}")
    if x.dtype not in dt.NUMERIC:
        raise TypeError(f"matrix_power: expected a numeric dtype, got {x.dtype}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: expected n to be an int, got {type(n).__name__} {n!r}") from None
    if n == 0:
        e = cf.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return Array._new(g.realize(g.broadcast_view(e._node, x.shape)))
    if n < 0:
        x = inv(x)
        n = -n
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


# ------------------------------------------------------------------ LU family

def _lu(x: Array, rhs, mode: str, func: str):
    """The LU of x's batch (already checked square, floating): the output buffer."""
    n = x.shape[-1]
    if n > BLOCKED_MIN:
        res = blk.lu(x._node, rhs, mode)
        if not res.is_contiguous or res.offset:
            res = g.realize(g.Op("copy", [res], res.dtype))
        return res.buf
    return kla.lu(x._node, rhs, mode)


def _lu_past_limit(n: int, r: int, dtype, device) -> bool:
    """Whether the blocked LU's work matrix [A | B] of one n x n matrix (r right-hand
    sides) would pass the binding limit: then it runs by panels."""
    return n * (n + r) * dtype.itemsize > device.max_binding_bytes


def _one_past_limit(x: Array, r: int) -> bool:
    """Whether ``x`` is one non-empty square matrix (batch dims of 1 allowed) whose LU
    with r right-hand sides runs by panels."""
    n = x.shape[-1]
    return bool(n) and g.prod(x.shape[:-2]) == 1 and _lu_past_limit(n, r, x.dtype, x.device)


def _matrix(x: Array) -> Array:
    return mf.reshape(x, x.shape[-2:])


def _panel_width(n: int, dtype, device) -> int:
    """Columns of an n-row panel of a matrix past the binding limit: a binding holds
    PART_SHARE of its copies at 8 bytes an element."""
    return max(1, min(n, slabs.slab_bytes(device) // (PART_SHARE * n * max(dtype.itemsize, 8))))


def _take_rows(x: Array, order: Array) -> Array:
    """x[order] for a valid row order (no bounds flag, so no readback)."""
    rows, cols = x.shape
    idx = g.make_op("multiply", [_core.cast_node(order._node, dt.uint32), g.Const(cols, dt.uint32, x.device, ())],
                    dt.uint32)
    flat = g.make_op("add", [g.broadcast_view(g.reshape_view(idx, (rows, 1)), (rows, cols)),
                             g.Iota((rows, cols), x.device, 0, (0, 1))], dt.uint32)
    return Array._new(kg.gather(_own(x._node)._node, flat))


def _lu_by_panels(a: Array, b: Array | None, mode: str):
    """solve ('solve', b (n, r)), inv ('inv') or det's parts ('det': the diagonal of U
    and the parity of the row swaps) of one n x n matrix past the binding limit, by
    panels of columns that each fit a binding (right-looking): panel k's rows from its
    diagonal down are factored with partial pivoting (``blk.lu_tall``), and every later
    panel and right-hand side panel takes the same row order, its block row of U from a
    unit lower solve and its rows below less a matrix product. Then U X = L^-1 P B
    block row by block row, from the last. The work is matrix products but for the
    panels' own factorizations."""
    n = a.shape[-1]
    dtype, device = a.dtype, a.device
    width = _panel_width(n, dtype, device)
    starts = list(range(0, n, width))
    ends = [min(n, j + width) for j in starts]
    cols = [_own(a[:, j:e]._node) for j, e in zip(starts, ends)]
    if mode == "solve":
        rhs = [_own(b[:, j:j + width]._node) for j in range(0, b.shape[-1], width)]
    elif mode == "inv":
        rhs = [cf.eye(n, e - j, k=-j, dtype=dtype, device=device) for j, e in zip(starts, ends)]
    else:
        rhs = []
    diags, parity = [], []
    for k, (j, e) in enumerate(zip(starts, ends)):
        factors, order, fl = blk.lu_tall(cols[k][j:]._node)
        lu = Array._new(factors)
        order = Array._new(order)
        cols[k][j:] = lu
        diags.append(diagonal(lu[:e - j]))
        parity.append(Array._new(fl))
        for x in cols[k + 1:] + rhs:
            rest = _take_rows(x[j:], order)
            u = Array._new(blk.triangular_solve(lu[:e - j]._node, rest[:e - j]._node, lower=True, unit=True))
            x[j:e] = u
            if e < n:
                x[e:] = rest[e - j:] - matmul(lu[e - j:], u)
    if mode == "det":
        return mf.concat(diags), functools.reduce(operator.add, parity)
    for x in rhs:
        for i in reversed(range(len(starts))):
            i0, i1 = starts[i], ends[i]
            y = x[i0:i1]
            for jdx in range(i + 1, len(starts)):
                y = y - matmul(cols[jdx][i0:i1], x[starts[jdx]:ends[jdx]])
            x[i0:i1] = Array._new(blk.triangular_solve(cols[i][i0:i1]._node, y._node, lower=False))
    if len(rhs) == 1:
        return rhs[0]
    out = cf.empty((n, sum(x.shape[1] for x in rhs)), dtype=dtype, device=device)
    c = 0
    for x in rhs:
        out[:, c:c + x.shape[1]] = x
        c += x.shape[1]
    return out


def _det_of_panels(diag: Array, parity: Array):
    """(sign, log|det|, det) from U's diagonal and the swaps' parity, as the blocked
    LU's fold gives them: a zero pivot makes the sign 0 and log|det| -inf."""
    zero = uf.any(diag == 0)
    flip = (parity % 2) == 1
    sgn = stf.prod(ew.sign(diag))
    sgn = sf.where(flip, -sgn, sgn)
    logabs = stf.sum(ew.log(ew.abs(diag)))
    d = stf.prod(diag)
    d = sf.where(flip, -d, d)
    return sf.where(zero, 0, sgn), sf.where(zero, -math.inf, logabs), sf.where(zero, 0, d)


def solve(x1: Array, x2: Array, /) -> Array:
    _float_input(x1, "solve", square=True)
    _core.check_array(x2, "solve", "x2")
    device = _core.same_device([x1, x2], "solve")
    dtype = dt.promote(x1.dtype, x2.dtype, "solve")
    if dtype not in dt.FLOATING:
        raise TypeError(f"solve: expected floating-point dtypes, got {x1.dtype} and {x2.dtype}")
    n = x1.shape[-1]
    vec = x2.ndim == 1
    if vec:
        if x2.shape[0] != n:
            raise ValueError(f"solve: x1 shape {x1.shape} and x2 shape {x2.shape} do not match")
        batch = x1.shape[:-2]
        b_node = g.broadcast_view(g.reshape_view(_core.cast_node(x2._node, dtype), (n, 1)), batch + (n, 1))
    else:
        if x2.shape[-2] != n:
            raise ValueError(f"solve: x1 shape {x1.shape} and x2 shape {x2.shape} do not match "
                             f"(x2 needs {n} rows)")
        batch = _core.broadcast_shapes(x1.shape[:-2], x2.shape[:-2], func="solve")
        b_node = g.broadcast_view(_core.cast_node(x2._node, dtype), batch + x2.shape[-2:])
    a = Array._new(g.broadcast_view(_core.cast_node(x1._node, dtype), batch + (n, n)))
    run = _runs(batch, n * (n + b_node.shape[-1]), dtype, device)
    if run:  # a stack past the binding limit: runs of it
        res = _in_runs(solve, [a, Array._new(b_node)], batch, run)
        return mf.reshape(res, batch + (n,)) if vec else res
    r = b_node.shape[-1]
    if _one_past_limit(a, r):
        res = _lu_by_panels(_matrix(a), _matrix(Array._new(b_node)), "solve")
        return mf.reshape(res, batch + ((n,) if vec else (n, r)))
    rhs = kla.contig(b_node)
    out = _lu(a, rhs, "solve", "solve")
    res = g.Data(out, batch + (n, r), dtype, device)
    if vec:
        return Array._new(g.reshape_view(res, batch + (n,)))
    return Array._new(res)


@_stacks_in_runs
def inv(x: Array, /) -> Array:
    _float_input(x, "inv", square=True)
    if _one_past_limit(x, x.shape[-1]):
        return mf.reshape(_lu_by_panels(_matrix(x), None, "inv"), x.shape)
    out = _lu(x, None, "inv", "inv")
    return Array._new(g.Data(out, x.shape, x.dtype, x.device))


def _det_parts(x: Array, func: str):
    _float_input(x, func, square=True)
    batch = x.shape[:-2]
    if _one_past_limit(x, 0):
        parts = _det_of_panels(*_lu_by_panels(_matrix(x), None, "det"))
        return lambda j: mf.reshape(parts[j], batch)._node
    out = _lu(x, None, "det", func)
    d = g.Data(out, batch + (3,), x.dtype, x.device)

    def part(j):
        return g.index_view(d, [("slice", 0, 1, n) for n in batch] + [("int", j)])

    return part


@_stacks_in_runs
def det(x: Array, /) -> Array:
    part = _det_parts(x, "det")
    if x.shape[-1] == 0:
        return Array._new(g.Const(1, x.dtype, x.device, x.shape[:-2]))
    return Array._new(part(2))


@_stacks_in_runs
def slogdet(x: Array, /) -> SlogdetResult:
    part = _det_parts(x, "slogdet")
    rdt = dt.real_of(x.dtype)
    if x.shape[-1] == 0:
        return SlogdetResult(Array._new(g.Const(1, x.dtype, x.device, x.shape[:-2])),
                             _zeros(x.shape[:-2], rdt, x.device))
    logabs = part(1)
    if logabs.dtype.kind == "c":
        logabs = g.make_op("real", [logabs], rdt)
    return SlogdetResult(Array._new(part(0)), Array._new(logabs))


# ------------------------------------------------------------------ Cholesky, QR

@_stacks_in_runs
def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    _float_input(x, "cholesky", square=True)
    if x.ndim == 2 and x.device.big and slabs.too_big([x._node]):
        L = _cholesky_by_panels(x)
    else:
        L = Array._new(blk.cholesky(x._node))
    if upper:
        return ew.conj(matrix_transpose(L))
    return L


def _cholesky_by_panels(x: Array) -> Array:
    """The Cholesky factor of one matrix past the binding limit, a panel of columns at
    a time (left-looking): the panel less the product of the factor's rows found so far
    (a matmul that runs in blocks), the Cholesky factor of its top square, the rows below
    from a solve with it, both written into their place in the factor. Each panel fits
    a binding; the work is matrix products but for the panels' own factorizations."""
    n = x.shape[-1]
    device = x.device
    width = max(1, min(n, slabs.slab_bytes(device) // (PART_SHARE * n * max(x.dtype.itemsize, 8))))
    L = cf.zeros((n, n), dtype=x.dtype, device=device)
    for j in range(0, n, width):
        w = min(width, n - j)
        panel = _own(x[j:, j:j + w]._node)
        if j:
            left = L[j:, :j]
            panel = panel - matmul(left, ew.conj(matrix_transpose(left[:w])))
        top = cholesky(panel[:w])
        L[j:j + w, j:j + w] = top
        if j + w < n:
            L[j + w:, j:j + w] = ew.conj(matrix_transpose(solve(top, ew.conj(matrix_transpose(panel[w:])))))
    return L


@_stacks_in_runs
def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    _float_input(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: expected mode 'reduced' or 'complete', got {mode!r}")
    m, n = x.shape[-2:]
    nb = g.prod(x.shape[:-2])
    if not (nb and m and n):
        return _qr_householder(x, mode)
    if m > n and _is_tall(x.shape):
        return _spread_nonfinite(*_qr_in_binding(x, mode))
    # by panels where x, or the in-binding solver's workspace, is past the binding limit
    return _or_divided(x, lambda: _spread_nonfinite(*_qr_in_binding(x, mode)), lambda a: _qr_by_panels(a, mode))


def _qr_in_binding(x: Array, mode: str) -> QRResult:
    m, n = x.shape[-2:]
    if (min(m, n) > BLOCKED_MIN and x.dtype.kind == "f" and not (m > n and _is_tall(x.shape))
            and blk.qr_householder_fits(m, n, x.device)):
        # blocked Householder (compact WY, matmul-bound): square, moderately tall, wide
        q, r = blk.qr_householder(x._node, mode)
        return QRResult(Array._new(q), Array._new(r))
    if (mode == "reduced" or m == n) and (_is_tall(x.shape) and m > n or m >= n > BLOCKED_MIN):
        # matmul-bound shifted CholeskyQR, for tall matrices and large complex square
        # ones; TSQR or Householder below when it reports failure
        # (rank deficiency, condition near 1 / eps); a scalar read back per step
        if m > n:
            return _qr_tall(x, True)
        res = blk.qr_tall(x._node)
        if res is not None:
            return QRResult(Array._new(res[0]), Array._new(res[1]))
    return _qr_householder(x, mode)


def _spread_nonfinite(q: Array, r: Array) -> QRResult:
    """Q's columns and R's (on and above the diagonal) from the first column of R
    holding a NaN or an infinity on, as NaN: LAPACK's reflections spread a non-finite
    entry of x so, while the kernels' norms and comparisons pass over it (Q came out
    finite; R's column of it, a norm and products with it, is not). Read from R (n x n:
    two small sums of |R| 0, +0 or NaN), and subtracted (x - (+0) is x, -0 included):
    lazy maps, fused into what reads Q and R."""
    n = r.shape[-1]

    def at_or_before(rows: int) -> Array:  # (rows, n): row index <= column index
        i, j = cf._row_col(rows, n, r.device)
        return Array._new(g.make_op("less_equal", [i, j], dt.bool))

    bad = stf.sum(ew.abs(r) * 0, axis=-2)   # per column of R: +0, or NaN
    cols = stf.sum(sf.where(at_or_before(n), mf.expand_dims(bad, axis=-1), 0), axis=-2)   # from the first on
    kq = q.shape[-1]
    qcols = cols[..., :kq] if kq <= n else mf.concat(
        [cols, mf.broadcast_to(cols[..., n - 1:], cols.shape[:-1] + (kq - n,))], axis=-1)
    q = q - mf.expand_dims(qcols, axis=-2)
    r = r - sf.where(at_or_before(r.shape[-2]), mf.expand_dims(cols, axis=-2), 0)
    return QRResult(q, r)


# a panel whose columns kept less than this share of their norms through the projections
# is projected a third time
REPROJECT_BELOW = 0.5


def _qr_by_panels(x: Array, mode: str) -> QRResult:
    """QR of one matrix past the binding limit, by panels of columns that each fit a
    binding: block classical Gram-Schmidt, twice. Each panel is projected out of Q's
    columns before it (a product by their conjugate transpose and one by them: matmuls
    that run in blocks), then again (orthogonal to working precision whatever the first
    projection cancelled; a third time where a column kept less than
    ``REPROJECT_BELOW`` of its norm: one scalar read back), and factored by the
    in-binding QR; R's block column is the projections' coefficients above the panel's
    own R. Wide matrices factor their first m columns so; R's other columns are Q^H A.

    Rank deficiency: where a column lies in the span of the panel's others or of the
    columns before it, the panel's QR makes up a direction for it from rounding noise,
    which need not be orthogonal to the earlier columns. So where the panel's least
    |R_ii| against its column's norm is below sqrt(eps) (a second scalar read back), the
    panel is factored again by ``_deficient_panel``, with no readback of its own."""
    batch = x.shape[:-2]
    m, n = x.shape[-2:]
    dtype, device = x.dtype, x.device
    k = min(m, n)
    if mode == "complete" and m > n:
        raise MemoryError(f"qr: mode='complete' of one {m} x {n} matrix past the storage-binding limit of "
                          f"{device.name!r} is not supported (its Q would be {m} x {m}); mode='reduced' is")
    a = _matrix(x)
    tiny = math.sqrt(_eps(dtype))
    width = _panel_width(m, dtype, device)
    q = cf.empty((m, k), dtype=dtype, device=device)
    r = cf.zeros((k, n), dtype=dtype, device=device)
    for j in range(0, k, width):
        e = min(k, j + width)
        y = _own(a[:, j:e]._node)
        norms = vector_norm(y, axis=0)
        if j:
            y, coef = _project_out(y, q[:, :j], norms)
        qj, rj = qr(y)
        if not _least_share(ew.abs(diagonal(rj)), norms) >= tiny:
            qj, rj, c = _deficient_panel(y, norms, q[:, :j] if j else None, j)
            if j:
                coef = coef + c
        if j:
            r[:j, j:e] = coef
        q[:, j:e] = qj
        r[j:e, j:e] = rj
    if n > k:
        r[:, k:] = matmul(ew.conj(matrix_transpose(q)), a[:, k:])
    return QRResult(mf.reshape(q, batch + (m, k)), mf.reshape(r, batch + (k, n)))


def _least_share(part: Array, whole: Array) -> float:
    """min over columns of part / whole, 0 for a zero column of whole, NaN where either
    holds a NaN (one readback)."""
    nan = ew.isnan(part) | ew.isnan(whole)
    return float(stf.min(sf.where(nan, math.nan, sf.where(whole > 0, part / sf.where(whole > 0, whole, 1), 0))))


def _project_out(y: Array, done: Array, norms: Array | None):
    """(y less its projection on the columns of ``done``, the coefficients): twice, and
    a third time where a column of y (of norms ``norms``) kept less than
    ``REPROJECT_BELOW`` of its norm (one readback); once without ``norms``."""
    done_h = ew.conj(matrix_transpose(done))
    coef = None
    for step in range(3 if norms is not None else 1):
        s = matmul(done_h, y)
        y = y - matmul(done, s)
        coef = s if coef is None else coef + s
        if step == 1 and _least_share(vector_norm(y, axis=0), norms) >= REPROJECT_BELOW:
            break
    return y, coef


def _deficient_panel(y: Array, norms: Array, done: Array | None, seed: int):
    """(Q_j, R_jj, C) of a rank-deficient panel y, already projected out of the
    orthonormal columns ``done`` (None for the first panel) with original column norms
    ``norms``: y = Q_j R_jj + done C, Q_j orthonormal and orthogonal to done, R_jj upper
    triangular with 0 where a column lies in the span of those before it.

    First a column at a time within the panel only (classical Gram-Schmidt twice against
    the panel's own earlier columns, m x w products, no readback): a column keeping less
    than eps of its norm gets R_cc = 0 and a pseudo-random column in its place (rounding
    noise normalized would make up a direction that need not be orthogonal to anything),
    any other is normalized, so y = P R exactly but for the dropped noise. Then P,
    independent but not yet orthogonal to done where its columns cancelled, is projected
    out of done twice as a block (P = W + done C) and factored, W = Q T, by the in-binding
    QR, which has no deficiency left to make up directions for: R_jj = T R."""
    m, w = y.shape
    dtype, device = y.dtype, y.device
    eps = _eps(dtype)
    z = _pseudo_random(m, w, seed, dtype, device)
    p = cf.empty((m, w), dtype=dtype, device=device)
    rl = cf.zeros((w, w), dtype=dtype, device=device)
    for c in range(w):
        v, zc = y[:, c:c + 1], z[:, c:c + 1]
        if c:
            v, s1 = _project_out(v, p[:, :c], None)
            v, s2 = _project_out(v, p[:, :c], None)
            zc = _project_out(_project_out(zc, p[:, :c], None)[0], p[:, :c], None)[0]
            rl[:c, c:c + 1] = s1 + s2
        nrm = vector_norm(v, axis=0)
        lost = nrm <= eps * norms[c:c + 1]  # a zero column too; NaN is kept, and spreads
        p[:, c:c + 1] = sf.where(lost, zc / vector_norm(zc, axis=0), v / sf.where(lost, 1, nrm))
        rl[c:c + 1, c:c + 1] = mf.reshape(sf.where(lost, 0, nrm), (1, 1))
    coef = None
    if done is not None:
        p, c1 = _project_out(p, done, None)
        p, c2 = _project_out(p, done, None)
        coef = matmul(c1 + c2, rl)
    qj, t = qr(p)   # (a NaN column of P spreads into Q, as y's makes NumPy's Q NaN)
    return qj, matmul(t, rl), coef


def _pseudo_random(m: int, w: int, seed: int, dtype, device) -> Array:
    """An m x w matrix of deterministic pseudo-random entries in [0, 1), computed on the
    device: an integer hash (xor-shift-multiply rounds, exact on every device) of each
    entry's index and ``seed``, its top 24 bits as a fraction. Each seed gives another
    matrix."""
    u32 = dt.uint32
    h = cf.arange(m * w, dtype=u32, device=device) + ((seed * 0x9E3779B9) & 0xFFFFFFFF)
    for mult in (0x7FEB352D, 0x846CA68B):
        h = ew.bitwise_xor(h, ew.bitwise_right_shift(h, 16)) * mult
    h = ew.bitwise_xor(h, ew.bitwise_right_shift(h, 16))
    v = dtf.astype(ew.bitwise_right_shift(h, 8), dt.float32) * (1.0 / (1 << 24))
    return dtf.astype(mf.reshape(v, (m, w)), dtype)


def _qr_tall(x: Array, rounded: bool) -> QRResult:
    """The tall path: CholeskyQR, else TSQR, both in the refinement precision
    (``blk.tall_work_dtype``: float64 for float32 input where the device has it), the result
    rounded to x's dtype or (``rounded`` False, for svd's U = Q U_R) left in it."""
    res = blk.qr_tall(x._node, rounded)
    if res is not None:
        return QRResult(Array._new(res[0]), Array._new(res[1]))
    work = blk.tall_work_dtype(x._node)
    q, r = _positive_diagonal(_qr_tsqr(dtf.astype(x, work)))
    if rounded and work is not x.dtype:
        return QRResult(dtf.astype(q, x.dtype), dtf.astype(r, x.dtype))
    return QRResult(q, r)


def _positive_diagonal(res: QRResult) -> QRResult:
    """The tall path's convention, which CholeskyQR gives by construction: R's diagonal
    non-negative (TSQR's Householder leaves have LAPACK's signs, real ones any sign)."""
    q, r = res
    if q.dtype.kind == "c":  # the complex Householder kernel's diagonal is non-negative
        return res
    s = 1 - 2 * dtf.astype(diagonal(r) < 0, r.dtype)  # +-1, and 1 where R_kk is 0
    return QRResult(q * mf.expand_dims(s, axis=-2), r * mf.expand_dims(s, axis=-1))


def _qr_tsqr(x: Array) -> QRResult:
    """Reduced QR of a tall x (batch..., m, n) by a tree of Householder QRs (TSQR):
    blocks of TSQR_ROWS rows factored side by side (a workgroup each), their stacked
    R's factored the same way, Q = Q_block Q_stack by one batched matmul. Stable on
    any input (rank-deficient included), so it backs the CholeskyQR path."""
    batch = x.shape[:-2]
    m, n = x.shape[-2:]
    nb = g.prod(batch)
    h = max(TSQR_ROWS, TALL_RATIO * n)
    p = -(-m // h)
    if p == 1:
        return _qr_householder(x, "reduced")
    xs = mf.reshape(x, (nb, m, n))
    if p * h > m:
        xs = mf.concat([xs, _zeros((nb, p * h - m, n), x.dtype, x.device)], axis=1)
    q1, r1 = _qr_householder(mf.reshape(xs, (nb * p, h, n)), "reduced")
    q2, r = _qr_tsqr(mf.reshape(r1, (nb, p * n, n)))
    q = matmul(q1, mf.reshape(q2, (nb * p, n, n)))
    q = mf.reshape(q, (nb, p * h, n))[:, :m, :]
    return QRResult(mf.reshape(q, batch + (m, n)), mf.reshape(r, batch + (n, n)))


def _qr_householder(x: Array, mode: str) -> QRResult:
    """The one-workgroup-per-matrix Householder kernel (row-blocked phases where tall)."""
    q, r = kla.qr_householder(x._node, mode)
    return QRResult(Array._new(q), Array._new(r))


# ------------------------------------------------------------------ Jacobi: SVD and eigh

def _jacobi(node: g.Node, mode: str):
    """Run the Jacobi kernel on a (batch..., m, n) node with m >= n: returns nodes of
    the values (batch..., n) and, by mode, U (batch..., m, n) and V (batch..., n, n).

    A taller than wide is first factored A = QR (`qr`, which picks its own path by shape)
    and Jacobi runs on the n x n R, U = Q U_R: the rotations then loop over n rows, not
    m (lavapipe ends every loop of an invocation past 65535 iterations, so a rotation
    of two columns of 20000 rows in one invocation went silently wrong), each sweep is
    cheaper, and Jacobi converges faster on R (Drmac and Veselic's preconditioning)."""
    dtype = node.dtype
    m, n = node.shape[-2:]
    nb = g.prod(node.shape[:-2])
    if m > n and n and nb and mode in ("svd", "vals"):
        if _is_tall(node.shape):
            # Q in the refinement precision, U = Q U_R formed there and rounded once
            # (max |U^T U - I| on 4000 x 64 PCA-like float32 data: 1.6e-7 from float32
            # Q and product, 5.9e-8 without the Newton-Schulz step, 4.2e-9 with it;
            # NumPy's 2.9e-9)
            q, r = _qr_tall(Array._new(node), False)
            res = _jacobi(dtf.astype(r, dtype)._node, mode)
            if mode == "svd":
                ur = dtf.astype(Array._new(res[1]), q.dtype)
                if q.dtype is not dtype:
                    ur = _orthonormalized(ur)
                res[1] = dtf.astype(matmul(q, ur), dtype)._node
            return res
        # (svd spreads a non-finite value into U itself)
        q, r = _qr_in_binding(Array._new(node), "reduced")
        res = _jacobi(r._node, mode)
        if mode == "svd":
            res[1] = matmul(q, Array._new(res[1]))._node
        return res
    # complex vectors too: the Jacobi kernel embeds complex A as a real matrix, whose
    # singular vectors for a repeated value need not pair into orthogonal complex ones
    # (svd(eye(4) + 0j) gave U^H U != I); its values are right
    if _linalg_eigen.handles(node, mode) or (mode == "svd" and dtype.kind == "c"):
        return _scaled_eigen_jacobi(node, mode)
    return kla.jacobi(node, mode)


def _orthonormalized(u: Array) -> Array:
    """One Newton-Schulz step towards the nearest orthonormal matrix, U + U (I - U^H U) / 2,
    for a square U in a precision wider than the one it was computed in: its error
    max |U^H U - I| = d becomes ~d^2 while U moves by ~d. The square core's U_R of
    float32 input is orthonormal to ~0.5 eps (5.9e-8 at 64 x 64), which U = Q U_R would
    keep; NumPy's float32 U, computed in float64 and rounded, to ~3e-9."""
    n = u.shape[-1]
    e = cf.eye(n, dtype=u.dtype, device=u.device) - matmul(ew.conj(matrix_transpose(u)), u)
    return u + 0.5 * matmul(u, e)


def _scaled_eigen_jacobi(node: g.Node, mode: str):
    """``_linalg_eigen.jacobi`` of A / s, the values times s, where s is max |a_ij| of
    each matrix if that lies outside [2^-30, 2^30] (float32; 2^+-250 for float64), else
    1 (exact): its solver squares entries unscaled, and svdvals of a 40 x 40 float32
    matrix of entries near 1e25 (or 1e-25) came out wrong in every value."""
    whole = _linalg_eigen.SMALL_SVD if mode in ("svd", "vals") else _linalg_eigen.SMALL
    if node.size == 0 or node.shape[-1] <= whole or _linalg_eigen.uses_trd(node, mode):
        # the whole-matrix kernels (and the tridiagonal route) scale each matrix by a
        # power of two as they load it
        return _linalg_eigen.jacobi(node, mode)
    a = Array._new(node)
    mag = ew.abs(a)
    if mode in ("eigh", "eigvals"):  # only the lower triangle is read
        mag = cf.tril(mag)
    amax = stf.max(mag, axis=(-2, -1), keepdims=True)
    lo, hi = (2.0 ** -30, 2.0 ** 30) if dt.real_of(node.dtype) is dt.float32 else (2.0 ** -250, 2.0 ** 250)
    far = ew.logical_and(ew.isfinite(amax), ew.logical_or(amax > hi, ew.logical_and(amax < lo, amax > 0)))
    scale = sf.where(far, amax, 1.0)
    res = _linalg_eigen.jacobi((a / scale)._node, mode)
    res[0] = (Array._new(res[0]) * scale[..., 0])._node
    return res


def _conj_t(node: g.Node) -> g.Node:
    axes = tuple(range(node.ndim - 2)) + (node.ndim - 1, node.ndim - 2)
    node = g.permute_view(node, axes)
    return g.make_op("conj", [node], node.dtype) if node.dtype.kind == "c" else node


def _is_tall(shape) -> bool:
    m, n = max(shape[-2:]), min(shape[-2:])
    return n > 0 and g.prod(shape[:-2]) > 0 and m >= TALL_RATIO * n and m * n >= TALL_MIN


@_stacks_in_runs
def svdvals(x: Array, /) -> Array:
    _float_input(x, "svdvals")
    m, n = x.shape[-2:]
    node = x._node if m >= n else _conj_t(x._node)
    return _or_divided(x, lambda: _nonnegative(_jacobi(node, "vals")[0]), lambda a: _svd_divided(a, False, False)[1])


def _nonnegative(S: g.Node) -> Array:
    """Singular values with those at or below zero as +0: the block solver can leave a
    value at rounding level (about 1e-9 of the largest in float32) negative."""
    zero = g.Const(0.0, S.dtype, S.device, S.shape)
    return Array._new(g.make_op("where", [g.make_op("less_equal", [S, zero], dt.bool), zero, S], S.dtype))


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    _float_input(x, "svd")
    return _svd(x, full_matrices, True)


@_stacks_in_runs
def _svd(x: Array, full_matrices: bool, complete: bool) -> SVDResult:
    """svd; ``complete`` False leaves U's columns of negligible singular values as the
    Jacobi kernel gives them (zero for zero values), for callers that never use them.

    A recorded program (``_kernels/program.py``): the driver's ~40 dispatches of a tall
    svd (CholeskyQR, Jacobi on R, U = Q U_R) cost ~2600 Python calls, and its two
    readbacks (CholeskyQR's convergence, the rank test of ``_complete_u``) are guards
    of the replay."""
    if not x.size:
        u, s, vh = _svd_nodes(x._node, full_matrices, complete)
    else:
        if _one_too_big(x):
            return _svd_divided(x, True, full_matrices)
        try:
            u, s, vh = program.run("svd", (full_matrices, complete), [x._node],
                                   lambda a: tuple(g.realize(o) for o in _svd_nodes(a, full_matrices, complete)))
        except PastBindingLimit:
            if g.prod(x.shape[:-2]) != 1:
                raise
            return _svd_divided(x, True, full_matrices)
    S = _nonnegative(s)
    if not x.size:
        return SVDResult(Array._new(u), S, Array._new(vh))
    # a NaN value (from a NaN or an infinity of x) makes its singular vectors NaN, as
    # LAPACK's and torch's are: the rotations pass over it and had left them finite.
    # |S| 0 is +0 or NaN, and v - (+0) is v (-0 included): a lazy map fused into readers
    U, Vh = Array._new(u), Array._new(vh)
    p = Array._new(g.realize((ew.abs(Array._new(s)) * 0)._node))   # once, for both readers

    def spread(count: int) -> Array:  # p for `count` vectors: full_matrices' completed ones too
        if count == p.shape[-1]:
            return p
        rest = mf.broadcast_to(stf.sum(p, axis=-1, keepdims=True), p.shape[:-1] + (count - p.shape[-1],))
        return mf.concat([p, rest], axis=-1)

    return SVDResult(U - mf.expand_dims(spread(U.shape[-1]), axis=-2), S,
                     Vh - mf.expand_dims(spread(Vh.shape[-2]), axis=-1))


def _svd_nodes(x: g.Node, full_matrices: bool, complete: bool):
    """(U, S, Vh) of ``_svd`` as nodes, S as the solver gives it (``_nonnegative`` is the
    caller's: a lazy map, fused into what reads S, not a dispatch of the program's)."""
    m, n = x.shape[-2:]
    tall = m >= n
    node = x if tall else _conj_t(x)
    S, U, V = _jacobi(node, "svd")
    Sa = _nonnegative(S)
    Ua = Array._new(U)
    wide_u = full_matrices and node.shape[-2] > node.shape[-1]
    if complete or wide_u:
        Ua = _complete_u(Ua, Sa, wide_u)
    if tall:
        return Ua._node, S, _conj_t(V)
    return V, S, _conj_t(Ua._node)


def _complete_u(U: Array, S: Array, wide: bool) -> Array:
    """U (batch..., m, n), m >= n, with orthonormal columns wherever S (descending) is
    not negligible, made orthonormal in every column and, ``wide``, widened to m x m.

    The Jacobi kernels give column j as A v_j / s_j: zero for a zero s_j. Those columns
    (the last ones, S being sorted) are zeroed and the matrix factored by Householder
    QR: Q's first columns span the kept ones and the rest is an orthonormal basis of
    their complement, which replaces the zeroed columns. Square and reduced U skip this
    (one flag read back) when no value is negligible."""
    batch = U.shape[:-2]
    m, n = U.shape[-2:]
    device = U.device
    # Kept: every value the solvers resolve (their columns stay orthonormal even for
    # values far below eps * max(S), measured down to 1e-10 of it in float32); what
    # is below eps^2 * max(S) is a zero or an underflow, with a zero or noise column.
    keep = S > S[..., :1] * (_eps(S.dtype) ** 2)  # S[..., 0] is the largest
    if not wide and bool(uf.all(keep)):
        return U
    mask = g.broadcast_view(g.reshape_view(keep._node, batch + (1, n)), U.shape)
    zero = g.Const(0, U.dtype, device, U.shape)
    C = Array._new(g.make_op("where", [mask, U._node, zero], U.dtype))
    Q = _q_of_deficient(C, "complete" if wide else "reduced")
    kept = Array._new(g.make_op("where", [mask, C._node, Q[..., :n]._node], U.dtype))
    return mf.concat([kept, Q[..., n:]], axis=-1) if wide else kept


def _q_of_deficient(c: Array, mode: str) -> Array:
    """Q of a QR of ``c``, whose columns are rank-deficient by construction: the paths
    of ``qr`` that hold for any rank, skipping its CholeskyQR attempt."""
    m, n = c.shape[-2:]
    tall = m > n and _is_tall(c.shape)
    if mode == "reduced" and tall:
        return _qr_tsqr(c).Q
    if (g.prod(c.shape[:-2]) and min(m, n) > BLOCKED_MIN and c.dtype.kind == "f" and not tall
            and blk.qr_householder_fits(m, n, c.device)):
        return Array._new(blk.qr_householder(c._node, mode)[0])
    return _qr_householder(c, mode).Q


@_stacks_in_runs
def eigh(x: Array, /) -> EighResult:
    _float_input(x, "eigh", square=True)

    def in_binding():
        w, V = _jacobi(x._node, "eigh")
        return EighResult(Array._new(w), Array._new(V))
    return _or_divided(x, in_binding, lambda a: EighResult(*_eigh_divided(a, True)))


@_stacks_in_runs
def eigvalsh(x: Array, /) -> Array:
    _float_input(x, "eigvalsh", square=True)
    return _or_divided(x, lambda: Array._new(_jacobi(x._node, "eigvals")[0]), lambda a: _eigh_divided(a, False)[0])


# ------------------------------------------------------------------ past the binding limit: spectral division
#
# eigh, eigvalsh, svd and svdvals (and so pinv, matrix_rank and the 2 and nuclear norms)
# of one matrix that the in-binding solvers cannot hold run as matrix products and QRs
# past the limit (Nakatsukasa and Higham's QDWH-eig and QDWH-SVD): the polar factor U of
# A - sigma I by the QR-based dynamically weighted Halley iteration; (I + U) / 2 projects
# onto the eigenvectors of eigenvalues above sigma, (I - U) / 2 onto the others; bases of
# the two ranges split A into two Hermitian blocks of about half the order, each solved
# the same way until it fits. svd: A = U H (polar), H = V diag(s) V^H by eigh.

# QDWH iterations at most (from a lower bound of eps / sqrt(n) on the smallest singular
# value: 6 in float64, 5 in float32, one or two more to confirm convergence)
QDWH_MAX_ITERATIONS = 12
# split points tried before giving up (the median of the diagonal, then nudged)
SPLIT_TRIES = 3


def _one_too_big(x: Array) -> bool:
    """One matrix (batch dims of 1 allowed) whose own buffer is past the binding limit."""
    return bool(x.size) and g.prod(x.shape[:-2]) == 1 and x.device.big and slabs.too_big([x._node])


def _or_divided(x: Array, in_binding, divided):
    """``in_binding()``, or ``divided(x)`` for one matrix that it cannot hold: past the
    binding limit itself, or with the solver's workspaces past it (the solver raises
    ``PastBindingLimit`` before it records anything)."""
    if _one_too_big(x):
        return divided(x)
    try:
        return in_binding()
    except PastBindingLimit:
        if not x.size or g.prod(x.shape[:-2]) != 1:
            raise
        return divided(x)


def _ct(a: Array) -> Array:
    t = matrix_transpose(a)
    return ew.conj(t) if a.dtype.kind == "c" else t


def _qdwh_weights(lo: float) -> tuple[float, float, float, float]:
    """The dynamically weighted Halley iteration's (a, b, c) for singular values in
    [lo, 1], and the new lower bound those map lo to."""
    lo2 = lo * lo
    d = (4.0 * (1.0 - lo2) / (lo2 * lo2)) ** (1.0 / 3.0)
    sd = math.sqrt(1.0 + d)
    a = sd + 0.5 * math.sqrt(max(0.0, 8.0 - 4.0 * d + 8.0 * (2.0 - lo2) / (lo2 * sd)))
    b = (a - 1.0) ** 2 / 4.0
    c = a + b - 1.0
    return a, b, c, min(1.0, lo * (a + b * lo2) / (1.0 + c * lo2))


def _polar(a: Array, scale: float) -> Array:
    """The unitary polar factor of an m x n matrix ``a`` (m >= n, full rank, ||a||_2 <=
    ``scale``): QDWH, each step a QR of [sqrt(c) X; I] and X' = (b / c) X + (a - b / c) /
    sqrt(c) Q1 Q2^H. Readbacks: ||X' - X|| once the weights have reached Halley's."""
    m, n = a.shape
    eps = _eps(a.dtype)
    eye = cf.eye(n, dtype=a.dtype, device=a.device)
    x = a * (1.0 / scale)
    lo = eps / math.sqrt(n)
    for _ in range(QDWH_MAX_ITERATIONS):
        wa, wb, wc, lo = _qdwh_weights(lo) if lo < 1.0 - 10 * eps else (3.0, 1.0, 3.0, 1.0)
        q = qr(mf.concat([x * math.sqrt(wc), eye], axis=0)).Q
        step = matmul(q[:m], _ct(q[m:])) * ((wa - wb / wc) / math.sqrt(wc))
        new = _own((x * (wb / wc) + step)._node)
        if lo >= 1.0 - 10 * eps and not float(matrix_norm(new - x)) > (5 * eps) ** (1.0 / 3.0):
            return new
        x = new
    return x


def _range_basis(p: Array, k: int, seed: int) -> Array:
    """Orthonormal columns spanning the range of ``p``, a projector (orthogonal, or
    oblique for eigvals) of rank ``k``: p applied to k pseudo-random columns, twice,
    each time orthonormalized."""
    n = p.shape[0]
    v = qr(matmul(p, _pseudo_random(n, k, seed, p.dtype, p.device) - 0.5)).Q
    return qr(matmul(p, v)).Q


def _hermitian_part(a: Array) -> Array:
    """The Hermitian matrix of ``a``'s lower triangle (what eigh reads)."""
    low = cf.tril(a, k=-1)
    d = diagonal(a)
    if a.dtype.kind == "c":
        d = dtf.astype(ew.real(d), a.dtype)
    return low + _ct(low) + cf.eye(a.shape[0], dtype=a.dtype, device=a.device) * mf.expand_dims(d, axis=0)


def _nan_like(shape, dtype, device) -> Array:
    return cf.full(shape, math.nan, dtype=dtype, device=device)


def _eigh_divided(x: Array, vectors: bool):
    """(w, V or None) of one Hermitian matrix by spectral division (above): w ascending.
    Readbacks: ||A||, the split point, trace(U) and the split's residual per level."""
    batch = x.shape[:-2]
    a = _hermitian_part(_matrix(x))
    n = a.shape[0]
    rdt, device = dt.real_of(a.dtype), a.device
    eye = cf.eye(n, dtype=a.dtype, device=device)

    def out(w, v):
        w = mf.reshape(w, batch + (n,))
        return w, (mf.reshape(v, batch + (n, n)) if vectors else None)

    norm = float(matrix_norm(a))
    if not math.isfinite(norm):   # LAPACK's values and vectors are NaN here too
        return out(_nan_like((n,), rdt, device), _nan_like((n, n), a.dtype, device))
    d, sigma, spread = _split_start(a, eye, norm)
    if d is not None:   # diagonal to working precision (zero included): sorted, the answer
        return out(srt.sort(d), _take_columns(eye, srt.argsort(d)) if vectors else None)
    for attempt in range(SPLIT_TRIES):
        u = _polar(a - eye * sigma, 2.0 * norm)
        u = (u + _ct(u)) * 0.5
        k = round((n + float(ew.real(trace(u)) if a.dtype.kind == "c" else trace(u))) / 2)   # eigenvalues above sigma
        if 0 < k < n:
            hi = _range_basis((eye + u) * 0.5, k, 2 * attempt)
            lo = _range_basis((eye - u) * 0.5, n - k, 2 * attempt + 1)
            a_lo = matmul(_ct(lo), a)
            off = float(matrix_norm(matmul(a_lo, hi)))
            if off <= 8 * n * _eps(rdt) * norm:
                break
        # sigma sat on an eigenvalue (U is not unitary there) or the split is poor: nudge it
        sigma = sigma + (0.1 + 0.37 * attempt) * spread / n
    else:
        raise ArithmeticError(f"eigh: the spectral division of a {n} x {n} matrix past the storage-binding limit "
                              f"found no split point in {SPLIT_TRIES} tries")
    pieces = []
    for basis, block in ((lo, matmul(a_lo, lo)), (hi, matmul(matmul(_ct(hi), a), hi))):
        block = (block + _ct(block)) * 0.5
        if vectors:
            w, v = eigh(block)
            pieces.append((w, matmul(basis, v)))
        else:
            pieces.append((eigvalsh(block), None))
    w = mf.concat([pieces[0][0], pieces[1][0]])
    v = mf.concat([pieces[0][1], pieces[1][1]], axis=1) if vectors else None
    if not float(pieces[0][0][-1]) <= float(pieces[1][0][0]):   # rounding across sigma: sort
        order = srt.argsort(w)
        w = srt.sort(w)
        v = _take_columns(v, order) if vectors else None
    return out(w, v)


def _split_start(a: Array, eye: Array, norm: float):
    """(the real diagonal of ``a`` if ``a`` is diagonal to working precision, else None;
    the first split point, the diagonal's median; the step its nudges scale with, the
    diagonal's range): readbacks of both and of ||a - diag(a)||."""
    n = a.shape[0]
    d = _own((ew.real(diagonal(a)) if a.dtype.kind == "c" else diagonal(a))._node)
    off = float(matrix_norm(a - eye * mf.expand_dims(dtf.astype(d, a.dtype), axis=0)))
    ds = srt.sort(d)
    return (None if off > n * _eps(a.dtype) * norm else d), float(ds[n // 2]), float(ds[-1] - ds[0]) or norm


def _take_columns(v: Array, order: Array) -> Array:
    return matrix_transpose(_take_rows(matrix_transpose(v), order))


def _svd_divided(x: Array, vectors: bool, full_matrices: bool) -> SVDResult:
    """svd (U, S, Vh; S only without ``vectors``) of one matrix through its polar
    decomposition A = U_p H and eigh(H): S descending, U = U_p V."""
    batch = x.shape[:-2]
    a = _matrix(x)
    m, n = a.shape
    wide = m < n
    if wide:
        a = _own(_ct(a)._node)
        m, n = n, m
    if vectors and full_matrices and m != n:
        raise MemoryError(f"svd: full_matrices=True of one {x.shape[-2]} x {x.shape[-1]} matrix past the "
                          f"storage-binding limit of {x.device.name!r} is not supported (its "
                          f"{'U' if not wide else 'Vh'} would be {m} x {m}); full_matrices=False is")
    rdt, device = dt.real_of(a.dtype), a.device
    norm = float(matrix_norm(a))
    if not math.isfinite(norm) or norm == 0:
        fill = math.nan if not math.isfinite(norm) else 0.0
        s = cf.full((n,), fill, dtype=rdt, device=device)
        up = _nan_like((m, n), a.dtype, device) if fill else cf.eye(m, n, dtype=a.dtype, device=device)
        vh = _nan_like((n, n), a.dtype, device) if fill else cf.eye(n, dtype=a.dtype, device=device)
    else:
        up = _polar(a, norm)
        h = matmul(_ct(up), a)
        w, v = eigh((h + _ct(h)) * 0.5) if vectors else (eigvalsh((h + _ct(h)) * 0.5), None)
        w = mf.flip(w)
        s = sf.where(w > 0, w, 0.0)
        if vectors:
            v = mf.flip(v, axis=1)
            up = matmul(up, v)
            vh = _ct(v)
    s = mf.reshape(s, batch + (n,))
    if not vectors:
        return SVDResult(None, s, None)
    u, vh = (up, vh) if not wide else (_ct(vh), _ct(up))
    return SVDResult(mf.reshape(u, batch + u.shape), s, mf.reshape(vh, batch + vh.shape))


# eig and eigvals past the limit: the same division with the matrix sign function of A - sigma I
# (scaled Newton: an inverse by panels a step) in place of the polar factor; (I + S) / 2
# projects (obliquely) onto the invariant subspace of the eigenvalues right of sigma, an
# orthonormal basis V1 of it and V2 of its complement make [V1 V2]^H A [V1 V2] block upper
# triangular, and the spectrum is that of V1^H A V1 with that of V2^H A V2.
SIGN_MAX_ITERATIONS = 40


def _sign(a: Array) -> Array | None:
    """The matrix sign function of ``a`` by Newton's iteration X' = (mu X + (mu X)^-1) / 2,
    mu = sqrt(||X^-1|| / ||X||) while far from convergence (Higham's norm scaling), 1
    after; None where an inverse is not finite or it does not settle (an eigenvalue on or
    next to the imaginary axis). Readbacks: three norms a step."""
    eps = _eps(a.dtype)
    tol = math.sqrt(a.shape[0] * eps)
    x, scaled, last = a, True, False
    for _ in range(SIGN_MAX_ITERATIONS):
        xi = inv(x)
        nx, ni = float(matrix_norm(x)), float(matrix_norm(xi))
        if not (math.isfinite(ni) and ni > 0 and nx > 0):
            return None
        mu = math.sqrt(ni / nx) if scaled else 1.0
        new = _own(((x * mu + xi * (1.0 / mu)) * 0.5)._node)
        if last:
            return new
        change = float(matrix_norm(new - x)) / float(matrix_norm(new))
        x = new
        scaled = scaled and change > 1e-2
        last = change <= tol   # quadratic from here: one more step reaches eps
    return None


def _eig_divided(x: Array, vectors: bool):
    """(w, V or None): eig of one square matrix by spectral division (above); the values
    in no particular order, as LAPACK's; a real matrix's come in exact conjugate pairs
    (each block's do, and a pair never straddles sigma), with conjugate vectors, real
    ones for real values. With [V1 V2]^H A [V1 V2] = [[A11, A12], [0, A22]], a vector y
    of A11 is V1 y for A; one of A22 is (V2 + V1 X) y, X solving A11 X - X A22 = -A12,
    which the sign function already holds: V1^H S V2 = -2 X. Readbacks: ||A||, the split
    point, the sign iteration's norms, trace(S) and the split's residual per level."""
    batch = x.shape[:-2]
    a = _matrix(x)
    n = a.shape[0]
    dtype = a.dtype
    cdt = dt.complex_of(dtype)
    device = a.device

    def out(w, v):
        return mf.reshape(w, batch + (n,)), (mf.reshape(v, batch + (n, n)) if vectors else None)

    # the split in the refinement precision where the device has it (float64 for
    # float32): Newton's inverses lose what the shifted matrix's condition costs (a
    # float32 split of a 150 x 150 Gaussian matrix left its blocks coupled at 4e-6 of
    # ||A||, a float64 one at 6e-15), and the blocks are rounded back to the input's
    work = blk.work_dtype(dtype, device)
    a = dtf.astype(a, work)
    eye = cf.eye(n, dtype=work, device=device)
    coupled = 8 * n * _eps(dtype)   # the coupling a split may leave, against ||A||
    norm = float(matrix_norm(a))
    if not math.isfinite(norm):
        return out(_nan_like((n,), cdt, device), _nan_like((n, n), cdt, device))
    d, sigma, spread = _split_start(a, eye, norm)
    if d is not None:   # diagonal to working precision: its entries, with the unit vectors
        return out(dtf.astype(d, cdt), cf.eye(n, dtype=cdt, device=device))
    for attempt in range(SPLIT_TRIES):
        s = _sign(a - eye * sigma)
        if s is not None:
            tr = trace(s)
            k = round((n + float(ew.real(tr) if a.dtype.kind == "c" else tr)) / 2)   # eigenvalues right of sigma
            if 0 < k < n:
                right = _range_basis((eye + s) * 0.5, k, 2 * attempt)
                left = _range_basis(eye - matmul(right, _ct(right)), n - k, 2 * attempt + 1)
                a_left = matmul(_ct(left), a)
                if float(matrix_norm(matmul(a_left, right))) <= coupled * norm:
                    break
        sigma = sigma + (0.1 + 0.37 * attempt) * spread / n
    else:
        name = "eig" if vectors else "eigvals"
        raise ArithmeticError(f"{name}: the spectral division of a {n} x {n} matrix past the storage-binding "
                              f"limit found no split point in {SPLIT_TRIES} tries")
    blocks = [dtf.astype(matmul(a_left, left), dtype), dtf.astype(matmul(matmul(_ct(right), a), right), dtype)]
    if not vectors:
        return out(mf.concat([dtf.astype(eigvals(b), cdt) for b in blocks]), None)
    (w2, y2), (w1, y1) = (eig(b) for b in blocks)
    lifted = left - matmul(right, matmul(matmul(_ct(right), s), left)) * 0.5   # V2 + V1 X
    v2 = matmul(dtf.astype(lifted, cdt), dtf.astype(y2, cdt))
    v2 = v2 / vector_norm(v2, axis=0, keepdims=True)
    v1 = matmul(dtf.astype(right, cdt), dtf.astype(y1, cdt))
    return out(mf.concat([dtf.astype(w2, cdt), dtf.astype(w1, cdt)]), mf.concat([v2, v1], axis=1))


# ------------------------------------------------------------------ general eigenproblem

def _eig(x: Array, vectors: bool):
    """The Hessenberg + complex shifted QR kernel over the batch of x (checked square,
    floating): nodes of the eigenvalues (batch..., n) and, with ``vectors``, the unit
    eigenvectors as columns (batch..., n, n), complex of x's precision.

    float32 and complex64 run in the refinement precision where the device has it and
    are rounded once: the kernel's float32 values of a 150 x 150 Gaussian matrix were
    6.0e-6 of ||A|| off (LAPACK's: 4.4e-8), its float64 ones rounded 4.4e-8."""
    wide = kla.refine_dtype(x.dtype, x.device)
    if wide is x.dtype:
        return kla.eig(x._node, vectors)
    cdt = dt.complex_of(x.dtype)
    return [_core.cast_node(r, cdt) for r in kla.eig(_core.cast_node(x._node, wide), vectors)]


@_stacks_in_runs
def eig(x: Array, /) -> EigResult:
    _float_input(x, "eig", square=True)

    def in_binding():
        w, v = _eig(x, True)
        w, v = Array._new(w), Array._new(v)
        return _real_spectrum(w, v) if x.dtype.kind != "c" else (w, v)
    return EigResult(*_or_divided(x, in_binding, lambda a: _eig_divided(a, True)))


def _take_last(x: Array, idx: Array) -> Array:
    """x[..., idx[..., j]] along the last axis (idx's leading axes broadcast to x's), for
    indices known to be valid: no bounds flag, so no readback."""
    n = x.shape[-1]
    shape = x.shape[:-1] + idx.shape[-1:]
    idx = g.broadcast_view(idx._node, shape)
    rows = g.Iota(shape, x.device, 0, tuple(st * n for st in g.contiguous_strides(shape[:-1])) + (0,))
    flat = g.make_op("add", [rows, _core.cast_node(idx, dt.uint32)], dt.uint32)
    return Array._new(kg.gather(x._node, flat))


def _real_spectrum(w: Array, v: Array | None):
    """The eigenvalues (and eigenvectors) of real matrices as LAPACK gives them: real
    values exactly real, with real vectors, the others in exact conjugate pairs, with
    conjugate vectors. The complex shifted QR leaves rounding-level asymmetry: each
    value is matched with the value nearest its conjugate (itself, for a real one);
    mutual matches are settled a round at a time (the globally nearest match always is
    one, so every round settles some; one count read back per round), a pair becoming
    the mean of one value and the other's conjugate, which IEEE arithmetic makes exact
    (a + b = b + a, a - b = -(b - a))."""
    n = w.shape[-1]
    if w.size == 0:
        return w, v
    ids = cf.arange(n, dtype=dt.int64, device=w.device)
    # dist[..., i, j] = |w_j - conj(w_i)|, symmetric; dist[..., i, i] = 2 |Im w_i|
    dist = ew.abs(w[..., None, :] - ew.conj(w)[..., :, None])
    free = ew.isfinite(w)  # a value that did not converge is left as it is
    partner = ids
    left = w.size  # at most: the first round's count reads back how many remain
    while left:
        d = sf.where(ew.logical_and(free[..., :, None], free[..., None, :]), dist, float("inf"))
        p = stf.argmin(d, axis=-1)
        mutual = ew.logical_and(free, _take_last(p, p) == ids)
        wp = _take_last(w, p)
        settled = sf.where(p == ids, ew.real(w), (w + ew.conj(wp)) * 0.5)
        w = sf.where(mutual, dtf.astype(settled, w.dtype), w)
        partner = sf.where(mutual, p, partner)
        free = ew.logical_and(free, ew.logical_not(mutual))
        now = int(stf.count_nonzero(free))
        if now == left:  # only non-finite distances remain
            break
        left = now
    if v is None:
        return w, v
    # a real value: its vector turned to make its largest entry real, then real
    k = stf.argmax(ew.abs(v), axis=-2, keepdims=True)
    vk = matrix_transpose(_take_last(matrix_transpose(v), matrix_transpose(k)))
    turned = ew.real(v * (ew.conj(vk) / ew.abs(vk)))
    turned = dtf.astype(turned / vector_norm(turned, axis=-2, keepdims=True), v.dtype)
    # the member of a pair below the real axis: the conjugate of its partner's vector
    mate = ew.conj(_take_last(v, partner[..., None, :]))
    is_real = ew.logical_or(partner == ids, ew.imag(w) == 0)[..., None, :]
    below = ew.logical_and(ew.logical_not(is_real), (ew.imag(w) < 0)[..., None, :])
    v = sf.where(is_real, turned, sf.where(below, mate, v))
    return w, v


@_stacks_in_runs
def eigvals(x: Array, /) -> Array:
    _float_input(x, "eigvals", square=True)

    def in_binding():
        w = Array._new(_eig(x, False)[0])
        return _real_spectrum(w, None)[0] if x.dtype.kind != "c" else w
    return _or_divided(x, in_binding, lambda a: _eig_divided(a, False)[0])


def _eps(d: dt.DType) -> float:
    return 1.1920928955078125e-07 if dt.real_of(d) is dt.float32 else 2.220446049250313e-16


def _cutoff(S: Array, x: Array, rtol, func: str) -> g.Node:
    """rtol * max(S) per matrix, shaped (batch..., 1) to compare with S."""
    rdt = S.dtype
    if rtol is None:
        rtol = max(x.shape[-2:]) * _eps(x.dtype)
    smax = _reduce_last(S._node, "max")
    if _core.is_array(rtol):
        if rtol.dtype not in dt.REAL_NUMERIC:
            raise TypeError(f"{func}: expected a real-valued rtol, got {rtol.dtype}")
        shape = _core.broadcast_shapes(smax.shape, rtol.shape, func=func)
        r = g.broadcast_view(_core.cast_node(rtol._node, rdt), shape)
        tol = g.make_op("multiply", [g.broadcast_view(smax, shape), r], rdt)
    else:
        tol = g.make_op("multiply", [smax, g.Const(float(rtol), rdt, x.device, smax.shape)], rdt)
    return g.reshape_view(tol, tol.shape + (1,))


def matrix_rank(x: Array, /, *, rtol=None) -> Array:
    _float_input(x, "matrix_rank")
    S = svdvals(x)
    if S.shape[-1] == 0:
        return _zeros(x.shape[:-2], dt.int64, x.device)
    tol = g.broadcast_view(_cutoff(S, x, rtol, "matrix_rank"), S.shape)
    big = g.make_op("greater", [S._node, tol], dt.bool)
    return Array._new(_reduce_last(_core.cast_node(big, dt.int64), "sum"))


def pinv(x: Array, /, *, rtol=None) -> Array:
    _float_input(x, "pinv")
    rdt = dt.real_of(x.dtype)
    U, S, Vh = _svd(x, False, False)  # U's columns of the values cut off are never used
    if S.shape[-1] == 0:
        return _zeros(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.dtype, x.device)
    tol = g.broadcast_view(_cutoff(S, x, rtol, "pinv"), S.shape)
    keep = g.make_op("greater", [S._node, tol], dt.bool)
    recip = g.make_op("divide", [g.Const(1.0, rdt, x.device, S.shape), S._node], rdt)
    sinv = g.make_op("where", [keep, recip, g.Const(0.0, rdt, x.device, S.shape)], rdt)
    sinv = _core.cast_node(sinv, x.dtype)
    # pinv = V diag(sinv) U^H: scale the rows of U^H, then one matmul
    uh = _conj_t(U._node)
    scaled = g.make_op("multiply", [g.broadcast_view(g.reshape_view(sinv, sinv.shape + (1,)), uh.shape), uh],
                       x.dtype)
    return matmul(Array._new(_conj_t(Vh._node)), Array._new(scaled))


# ------------------------------------------------------------------ norms

def vector_norm(x: Array, /, *, axis=None, keepdims: bool = False, ord=2) -> Array:
    _core.check_array(x, "vector_norm")
    if x.dtype not in dt.FLOATING:
        raise TypeError(f"vector_norm: expected a floating-point dtype, got {x.dtype}")
    if axis is None:
        axes = list(range(x.ndim))
    else:
        axes = list(normalize_axes(axis, x.ndim, "vector_norm"))
    rdt = dt.real_of(x.dtype)
    device = x.device
    shape = x.shape if x.ndim else (1,)
    node = x._node if x.ndim else g.reshape_view(x._node, (1,))
    if not x.ndim:
        axes = [0]
    a = g.make_op("abs", [node], rdt)

    def c(v):
        return g.Const(v, rdt, device, shape)

    if ord == 2:
        red = _reduce_axes(g.make_op("multiply", [a, a], rdt), axes, "sum")
        out = g.make_op("sqrt", [red], rdt)
    elif ord == 1:
        out = _reduce_axes(a, axes, "sum")
    elif ord == math.inf:
        out = _reduce_axes(a, axes, "max")
    elif ord == -math.inf:
        out = _reduce_axes(a, axes, "min")
    elif ord == 0:
        nz = g.make_op("cast", [g.make_op("not_equal", [a, c(0.0)], dt.bool)], rdt)
        out = _reduce_axes(nz, axes, "sum")
    elif isinstance(ord, (int, float)) and not isinstance(ord, bool):
        red = _reduce_axes(g.make_op("pow", [a, c(float(ord))], rdt), axes, "sum")
        out = g.make_op("pow", [red, g.Const(1.0 / ord, rdt, device, red.shape)], rdt)
    else:
        raise ValueError(f"vector_norm: unsupported ord {ord!r}")
    if keepdims:
        kshape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
        out = g.reshape_view(out, kshape)
    return Array._new(out)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord="fro") -> Array:
    _float_input(x, "matrix_norm")
    rdt = dt.real_of(x.dtype)
    nd = x.ndim
    if ord == "fro":
        out = vector_norm(x, axis=(nd - 2, nd - 1))._node
    elif ord == "nuc":
        out = _reduce_last(svdvals(x)._node, "sum")
    elif ord in (2, -2):
        out = _reduce_last(svdvals(x)._node, "max" if ord == 2 else "min")
    elif ord in (1, -1, math.inf, -math.inf):
        a = g.make_op("abs", [x._node], rdt)
        if ord in (1, -1):
            sums = _reduce_axes(a, [nd - 2], "sum")
        else:
            sums = _reduce_last(a, "sum")
        out = _reduce_last(sums, "max" if ord in (1, math.inf) else "min")
    else:
        raise ValueError(f"matrix_norm: unsupported ord {ord!r}; expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
    if keepdims:
        out = g.reshape_view(out, x.shape[:-2] + (1, 1))
    return Array._new(out)
