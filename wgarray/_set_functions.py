"""Set functions: the ``unique_*`` family and ``isin``, on the device.

unique: the flattened input is radix-sorted, each sorted element that differs from its
predecessor (every NaN does) is flagged, the flags are scanned into output positions
and compacted; only the number of unique values is read back. isin: the second
operand is sorted and each element of the first is binary-searched among its keys.
"""
from __future__ import annotations

import collections
from typing import NamedTuple

from . import _core
from . import _dtypes as dt
from . import _tally
from ._graph import node as g
from ._graph import slabs
from ._kernels import gather as kg
from ._kernels import sort as ks
from ._array import Array
from ._creation_functions import arange, asarray, ones
from ._data_type_functions import astype
from ._elementwise_functions import equal, imag, logical_not, real
from ._graph.fusion import FusedInput
from ._indexing_functions import take
from ._manipulation_functions import concat, reshape
from ._searching_functions import nonzero
from ._sorting_functions import argsort
from ._statistical_functions import cumulative_sum
from ._utility_functions import diff
from ._validation import as_bool

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique_complex(x: Array, with_inverse: bool):
    """unique of complex input: a lexicographic (real, then imaginary) stable argsort,
    then the steps of ``_unique_composed``."""

    def lexicographic(flat):
        by_imag = argsort(imag(flat), stable=True)
        return take(by_imag, argsort(take(real(flat), by_imag), stable=True))
    return _unique_composed(x, lexicographic, with_inverse)


def _unique_composed(x: Array, order, with_inverse: bool):
    """unique composed of device primitives (complex input; real input past the binding
    limit): the stable sorting permutation ``order(flat)``, flags where a sorted value
    differs from its predecessor (every NaN does), and the flagged positions (one count
    read back; past the limit by a mask read of the positions, a slab at a time)."""
    flat = reshape(x, (-1,))
    n = flat.shape[0]
    perm = order(flat)
    ordered = take(flat, perm)
    same = equal(ordered[1:], ordered[:-1])  # NaN compares unequal, so every NaN is kept
    flags = concat([ones(1, dtype=dt.bool, device=x.device), logical_not(same)])
    if 8 * n > slabs.budget_of(x.device):  # the compaction's positions would pass a binding
        starts = arange(n, dtype=dt.int64, device=x.device)[flags]
    else:
        (starts,) = nonzero(flags)
    values = take(ordered, starts)
    indices = take(perm, starts)
    counts = diff(concat([starts, asarray([n], dtype=starts.dtype, device=x.device)]))
    inverse = None
    if with_inverse:
        rank = cumulative_sum(astype(flags, dt.int64)) - 1
        inverse = reshape(take(rank, argsort(perm, stable=True)), x.shape)
    return values, indices, inverse, counts


# unique of a realized array, by the buffer it reads: scikit-learn asks for the classes
# of one label array several times per fit (unique_labels, type_of_target, the fit
# itself), each a full sort. Holding the buffer here makes an in-place write to it
# copy first (``_inplace.own``), so a memoized result can never go stale.
MEMO_ENTRIES = 4
_MEMO: collections.OrderedDict = collections.OrderedDict()


def _memo_key(flat: g.Node, with_inverse: bool):
    if type(flat) is not g.Data or flat.buf is None:
        return None
    return (id(flat.buf), flat.offset, flat.shape, flat.strides, flat.dtype.name, with_inverse)


def _unique(x, func: str, with_inverse: bool):
    """(values, indices, inverse, counts) as lazy arrays."""
    _core.check_array(x, func)
    if x.dtype.kind == "c" and x.size:
        return _unique_complex(x, with_inverse)
    if x.dtype not in dt.ALL:
        raise TypeError(f"{func}: expected an Array API dtype, got {x.dtype}")
    device = x.device
    n = x.size

    def empty(shape, dtype):
        return Array._new(g.realize(g.Const(0, dtype, device, shape)))

    if n == 0:
        return empty((0,), x.dtype), empty((0,), dt.int64), empty(x.shape, dt.int64), empty((0,), dt.int64)
    flat = g.reshape_view(x._node, (n,))
    if slabs.too_big([flat]):  # past the binding limit: composed of the primitives that run past it
        return _unique_composed(x, lambda f: argsort(f, stable=True), with_inverse)
    if type(flat) is g.Op and flat.op == "copy" and flat.realized is None:
        # a copy has its source's values (concat of one array: scikit-learn's
        # unique_labels takes the unique of concat([unique_values(y)])), so its unique
        # is memoized by the source's buffer
        src = g.settle(flat.srcs[0])
        if type(src) is g.Data and src.dtype is flat.dtype:
            flat = src
    memo_key = _memo_key(flat, with_inverse)
    with device.runtime.lock:  # the memo is shared by threads
        found = _MEMO.get(memo_key) if memo_key is not None else None
        if found is not None and found[0] is flat.buf:
            _MEMO.move_to_end(memo_key)
            k, src, starts, inv, perm, values_node = found[1]
        else:
            k, src, starts, inv, perm = ks.unique(flat, with_inverse)
            if n > _tally.MAX_PERM_ELEMENTS:
                perm = None  # not kept (``_tally``): the memo would hold 4 bytes a label
            values_node = kg.gather(flat, g.Data(src, (k,), dt.uint32, device))
            if memo_key is not None:
                # the values too: a memoized unique gives the same values buffer each
                # time, so a unique of those values (above) is memoized in turn
                _MEMO[memo_key] = (flat.buf, (k, src, starts, inv, perm, values_node))
                if len(_MEMO) > MEMO_ENTRIES:
                    _MEMO.popitem(last=False)
    _tally.register(flat, inv, starts, values_node, k, perm)  # mask counts and rows of these labels (``_tally``)
    values = Array._new(values_node)
    src_node = g.Data(src, (k,), dt.uint32, device)
    indices = Array._new(g.make_op("cast", [src_node], dt.int64))
    starts_node = g.Data(starts, (k + 1,), dt.uint32, device)
    nxt = g.index_view(starts_node, [("slice", 1, 1, k)])
    cur = g.index_view(starts_node, [("slice", 0, 1, k)])
    run = g.make_op("subtract", [nxt, cur], dt.uint32)
    counts = Array._new(g.make_op("cast", [run], dt.int64))
    inverse = None
    if inv is not None:
        inv_node = g.make_op("cast", [g.Data(inv, (n,), dt.uint32, device)], dt.int64)
        inverse = Array._new(g.reshape_view(inv_node, x.shape))
    return values, indices, inverse, counts


def unique_all(x: Array, /) -> UniqueAllResult:
    values, indices, inverse, counts = _unique(x, "unique_all", True)
    return UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x: Array, /) -> UniqueCountsResult:
    values, _, _, counts = _unique(x, "unique_counts", False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    values, _, inverse, _ = _unique(x, "unique_inverse", True)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Array, /) -> Array:
    return _unique(x, "unique_values", False)[0]


def isin(x1, x2, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` occurs in ``x2`` (NaN never does), or not (invert)."""
    func = "isin"
    as_bool(invert, func, "invert")
    device, common, (a, b) = _core.operands([x1, x2], func, ("x1", "x2"))
    if common.kind not in "biuf":
        raise TypeError(f"{func}: expected real-valued inputs, got {common}")
    shape = a.shape
    n, m = g.prod(shape), g.prod(b.shape)
    if n == 0 or m == 0:
        return Array._new(g.realize(g.Const(invert, dt.bool, device, shape)))

    def flat(node, size):
        if isinstance(node, g.Const):
            return g.Const(node.value, node.dtype, device, (size,))
        return g.reshape_view(node, (size,))

    keys2 = ks.KeySource(flat(b, m))
    perm = ks.radix_perm(keys2, m, m, False)
    order = FusedInput(g.Data(perm, (m,), dt.uint32, device))
    found = ks.search(keys2, m, order, ks.KeySource(flat(a, n)), n, "isin", invert, device)
    node = g.make_op("cast", [found], dt.bool)
    return Array._new(g.reshape_view(node, shape))
