"""Counts of label values known on the host: the length of a mask index without a
readback of its own.

A mask index (``X[y == c]``) has a length that depends on the data, so it is read back
from the device: one round trip each (~250 us on an H200). Class-wise code asks it once
per class of one label array: scikit-learn's LinearDiscriminantAnalysis fit takes
``X[y == i]`` for each value i of the inverse of ``unique_inverse(y)`` and then
``X[y == c]`` for each class value c, 20 round trips for 10 classes. The unique of a
label array already holds every value's count on the device (where each value's run
begins in sorted order); read to the host once, with the values, it answers each of
those masks, so the loop costs one readback instead of one per class. The unique's
stable sorting permutation is kept too: value v's positions are one run of it, in
their original order, so ``X[y == v]`` gathers the rows of that run with no scan and
no compaction (one dispatch, where compacting the mask took five).

What is known is kept per device buffer (weakly: it goes with the buffer) and dropped
when an in-place write reaches the buffer (``forget``, called by ``_inplace.own``, the
one door of every in-place write), so a count can never describe older contents.

- ``register(...)``: the unique results of a label array (``_set_functions``);
- ``mask(node)``: the number of True elements of ``equal(labels, v)`` /
  ``not_equal(labels, v)`` where labels is a registered array (or the inverse, cast to
  a wider integer) and v a scalar (a Python scalar, or an element of a small device
  array: read once, with the counts when those are not on the host yet), and for
  ``equal`` the flat indices of the True elements (a slice of the permutation).
"""
from __future__ import annotations

import weakref

from . import _dtypes as dt
from ._graph import node as g

# a label array of more distinct values than this is not tallied (its counts and values
# are read in one small readback)
MAX_VALUES = 4096
# a scalar's buffer up to this size is read whole (and kept): the next element of the
# same small array (the next class value) is then known too
SMALL_BUFFER = 4096

_TALLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceBuffer -> {view key: _Tally}
_HOST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceBuffer -> its bytes (uint8)


class _Counts:
    """The counts of one unique (and its values), read to the host on first use."""

    __slots__ = ("starts", "values", "k", "perm", "number", "begins")

    def __init__(self, starts, values: g.Data, k: int, perm=None):
        self.starts = starts  # DeviceBuffer: k + 1 uint32 run starts in sorted order
        self.values = values  # Data (k,): the sorted unique values
        self.k = k
        # DeviceBuffer or None: the stable sorting permutation of the labels (n uint32),
        # so value number j's positions, in increasing order, are perm[begins[j]:begins[j + 1]]
        self.perm = perm
        self.number = None  # {value: its value number j}, once read
        self.begins = None  # [run start of value number j in sorted order], k + 1 of them

    def parts(self):
        v = self.values
        item = v.dtype.itemsize
        return [(self.starts, 0, 4 * (self.k + 1)), (v.buf, v.offset * item, self.k * item)]

    def take(self, starts_bytes, value_bytes) -> None:
        values = value_bytes.view(self.values.dtype.numpy).tolist()
        self.number = {v: j for j, v in enumerate(values)}
        self.begins = starts_bytes.view("<u4").tolist()


class _Tally:
    __slots__ = ("counts", "inverse")

    def __init__(self, counts: _Counts, inverse: bool):
        self.counts = counts
        self.inverse = inverse  # the labels are value numbers 0..k-1 (an inverse)


def _key(node: g.Data):
    return (node.offset, node.shape, node.strides, node.dtype.name)


# the sorting permutation of labels up to this many elements is kept with their tally
# (4 bytes an element, at most 64 MiB, alive as long as the labels and the unique's
# memo): larger ones are compacted per mask
MAX_PERM_ELEMENTS = 1 << 24


def register(flat: g.Node, inv, starts, values: g.Node, k: int, perm=None) -> None:
    """Record the unique of the (n,) labels ``flat``: ``starts`` (k + 1 uint32 run
    starts), ``values`` (a Data of the k sorted values), ``inv`` (the uint32 value
    number of each element, or None) and ``perm`` (the stable sorting permutation, n
    uint32, or None)."""
    if (type(flat) is not g.Data or flat.buf is None or type(values) is not g.Data or k > MAX_VALUES
            or flat.dtype.kind not in "biu"):
        return
    found = _TALLIES.get(flat.buf, {}).get(_key(flat))
    if found is not None and found.counts.starts is starts:
        return  # the same unique (a memoized one): what was read stays
    counts = _Counts(starts, values, k, perm if flat.shape[0] <= MAX_PERM_ELEMENTS else None)
    _TALLIES.setdefault(flat.buf, {})[_key(flat)] = _Tally(counts, False)
    if inv is not None:
        n = flat.shape[0]
        _TALLIES.setdefault(inv, {})[(0, (n,), (1,), "uint32")] = _Tally(counts, True)


def forget(buf) -> None:
    """Drop what is known of ``buf``'s contents (an in-place write is about to change them)."""
    _TALLIES.pop(buf, None)
    _HOST.pop(buf, None)


def _tally_of(node: g.Node):
    """The tally of the labels ``node``: a registered Data, or an inverse cast to an
    integer dtype that holds every value number."""
    node = g.settle(node)
    if type(node) is g.Op and node.op == "cast" and node.dtype.kind in "iu" and node.dtype.itemsize >= 4:
        src = g.settle(node.srcs[0])
        if type(src) is g.Data and src.buf is not None:
            tally = _TALLIES.get(src.buf, {}).get(_key(src))
            if tally is not None and tally.inverse:
                return tally
        return None
    if type(node) is g.Data and node.buf is not None:
        return _TALLIES.get(node.buf, {}).get(_key(node))
    return None


def _scalar_of(node: g.Node):
    """('value', v) for a scalar whose value is on the host, ('read', Data) for one
    element of a device buffer (every stride zero), or None."""
    node = g.settle(node)
    if type(node) is g.Const:
        return ("value", node.value)
    if (type(node) is g.Data and node.buf is not None and node.dtype.kind in "biu"
            and all(st == 0 for st in node.strides)):
        host = _HOST.get(node.buf)
        item = node.dtype.itemsize
        if host is not None and (node.offset + 1) * item <= host.nbytes:
            return ("value", host[node.offset * item:(node.offset + 1) * item].view(node.dtype.numpy)[0].item())
        return ("read", node)
    return None


def _label_test(node: g.Node):
    """(counts, value number j or None for a value not among the labels) of the mask
    ``node`` where it is ``equal``/``not_equal`` of tallied labels and a scalar, its
    counts read to the host (at most one readback: counts and scalar together); else None."""
    if type(node) is not g.Op or node.op not in ("equal", "not_equal") or len(node.srcs) != 2:
        return None
    a, b = node.srcs
    for labels, other in ((a, b), (b, a)):
        tally = _tally_of(labels)
        if tally is None:
            continue
        scalar = _scalar_of(other)
        if scalar is None:
            return None
        counts = tally.counts
        parts = [] if counts.number is not None else counts.parts()
        leaf = scalar[1] if scalar[0] == "read" else None
        if leaf is not None:
            item = leaf.dtype.itemsize
            whole = leaf.buf.size <= SMALL_BUFFER
            parts.append((leaf.buf, 0, leaf.buf.size) if whole else (leaf.buf, leaf.offset * item, item))
        if parts:
            raw = node.device.runtime.read_many(parts)
            if counts.number is None:
                counts.take(raw[0], raw[1])
            if leaf is not None:
                host = raw[-1]
                if whole:
                    host.flags.writeable = False
                    _HOST[leaf.buf] = host
                    host = host[leaf.offset * item:(leaf.offset + 1) * item]
                value = host.view(leaf.dtype.numpy)[0].item()
        if leaf is None:
            value = scalar[1]
        if tally.inverse:
            j = value if type(value) is int and 0 <= value < counts.k else None
        else:
            j = counts.number.get(value)
        return counts, j
    return None


def mask(node: g.Node):
    """(rows, count) of the mask ``node`` where a tally answers it (see the module's
    docstring), reading at most once (counts and scalar together): ``count`` the number
    of its True elements, ``rows`` for ``labels == v`` whose labels keep their sorting
    permutation, the flat indices (uint32, increasing) of those elements, a slice of the
    permutation (the stable sort puts v's positions in one run, in order), else None.
    (None, None) where no tally answers: the caller counts and compacts the mask."""
    node = g.settle(node)
    test = _label_test(node)
    if test is None:
        return None, None
    counts, j = test
    n_true = 0 if j is None else counts.begins[j + 1] - counts.begins[j]
    if node.op == "not_equal":
        return None, node.size - n_true
    rows = None
    if n_true and counts.perm is not None:
        rows = g.Data(counts.perm, (n_true,), dt.uint32, node.device, offset=counts.begins[j])
    return rows, n_true


__all__ = ["register", "forget", "mask"]
