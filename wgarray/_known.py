"""Small results already computed from a buffer, kept by that buffer: a repeated check
on unchanged data costs no new readback.

Validation code asks the same question of the same array more than once: scikit-learn's
``check_array`` reads ``isfinite(sum(X))`` for X and y in ``check_X_y`` and again in
``_preprocess_data`` (Ridge: four round trips of ~250 us each on an H200 per fit), and
a model fitted twice on one X asks again. Two memos answer the repeats:

- ``reduction``/``keep_reduction``: a reduction of a realized array with a small result
  (``sum(X)``) gives the same result node each time, so what is computed from it has the
  same structure and leaves each time;
- ``read``/``keep_read``: the host values of a small node (at most ``MAX_READ``
  elements) computed from one buffer, by the node's structure (the fusion planner's
  signature), leaf offsets and scalar bits, so ``bool(isfinite(s))`` reads once.

Only buffers whose contents change by the namespace's in-place writes alone are
memoized by (``DeviceBuffer.sealed``: uploads and the results held here), never a
kernel family's workspace that its own steps rewrite. Both are kept weakly by the buffer the values came from and dropped when an in-place
write reaches it (``forget``, called by ``_inplace.own``, the one door of every in-place
write), so a memoized value can never describe older contents. Results held here are
values like any other: an in-place write to one copies it first (``_inplace.own``
counts this memo's reference).
"""
from __future__ import annotations

import weakref

import numpy as np

from ._graph import node as g
from ._graph.fusion import const_blob, signature

MAX_READ = 16  # elements of a node whose host values are kept
MAX_RESULT = 1024  # elements of a reduction result that is kept
MAX_GRAPH = 16  # nodes of a graph whose read is looked up (a signature walk per read)
ENTRIES = 16  # per buffer and memo: the oldest go first

_READS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceBuffer -> {key: host array}
_RESULTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceBuffer -> {key: Node}


def _put(table, buf, key, value) -> None:
    entries = table.get(buf)
    if entries is None:
        entries = table[buf] = {}
    elif len(entries) >= ENTRIES:
        del entries[next(iter(entries))]
    entries[key] = value


_RANGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceBuffer -> (lo, hi) of its integers


def forget(buf) -> None:
    """Drop what is memoized from ``buf`` (an in-place write is about to change it)."""
    _READS.pop(buf, None)
    _RESULTS.pop(buf, None)
    _RANGES.pop(buf, None)


# ------------------------------------------------------------ integer ranges
#
# Indices computed on the device from values of a known range need no bounds check,
# which costs a readback at the call (the kernel's flag word): scikit-learn's svd_flip
# takes ``take(ravel(u), argmax(abs(u), axis=0) + arange(n) * m)``, in bounds by
# construction. A buffer whose integers are known to lie in [lo, hi] (an arange, the
# positions of an argmax) says so here; ``value_range`` carries ranges through the
# integer arithmetic of a small graph, refusing anything that could wrap.

def keep_range(buf, lo: int, hi: int) -> None:
    """Record that every integer of ``buf`` (a fresh output) lies in [lo, hi]."""
    _RANGES[buf] = (lo, hi)


def _fits(dtype, lo: int, hi: int) -> bool:
    info = np.iinfo(dtype.numpy)
    return info.min <= lo and hi <= info.max


def value_range(node: g.Node, depth: int = 0):
    """(lo, hi) bounding every value of the integer ``node``, or None where unknown."""
    node = g.settle(node)
    t = type(node)
    if t is g.Const:
        v = node.value
        return (int(v), int(v)) if type(v) in (int, bool) else None
    if node.dtype.kind not in "iu":
        return None
    if t is g.Data:
        return _RANGES.get(node.buf) if node.buf is not None else None
    if t is g.Iota:
        if any(n == 0 for n in node.shape):
            return None
        hi = node.offset + sum((n - 1) * st for n, st in zip(node.shape, node.strides))
        return (node.offset, hi) if hi < 2 ** 32 else None
    if t is not g.Op or depth > MAX_GRAPH:
        return None
    srcs = [value_range(s, depth + 1) for s in node.srcs]
    if any(r is None for r in srcs):
        return None
    op = node.op
    if op == "cast" or op == "copy":
        out = srcs[0]
    elif op == "add":
        out = (srcs[0][0] + srcs[1][0], srcs[0][1] + srcs[1][1])
    elif op == "subtract":
        out = (srcs[0][0] - srcs[1][1], srcs[0][1] - srcs[1][0])
    elif op == "multiply":
        products = [a * b for a in srcs[0] for b in srcs[1]]
        out = (min(products), max(products))
    else:
        return None
    # every intermediate in its own dtype, unwrapped (the sources' too, by recursion)
    return out if _fits(node.dtype, *out) else None


def reduction(node: g.Node, key):
    """``(buf, key, result)`` for a reduction of ``node`` described by ``key`` (kind,
    axes, ...): ``result`` the memoized node or None, ``buf`` None where ``node`` is no
    realized array (nothing to memoize by)."""
    if type(node) is not g.Data or node.buf is None or not node.buf.sealed:
        return None, None, None
    key = (key, node.offset, node.shape, node.strides, node.dtype.name)
    entries = _RESULTS.get(node.buf)
    return node.buf, key, (entries.get(key) if entries is not None else None)


def keep_reduction(buf, key, result: g.Node) -> g.Node:
    """Memoize ``result`` (where small and data) as the reduction ``key`` of ``buf``."""
    result = g.settle(result)
    # only a result that is data already: one still to compute (a cast of an index, of
    # a 32-bit partial back to 8 bits) stays lazy, to fuse into what reads it
    if buf is not None and type(result) is g.Data and g.prod(result.shape) <= MAX_RESULT:
        if result.buf is not buf:  # (a result on buf itself would keep it alive from here)
            result.buf.sealed = True  # a fresh output: only arrays and this memo reach it
            _put(_RESULTS, buf, key, result)
    return result


def read(node: g.Node):
    """``(buf, key, host)`` for the host values of ``node``: ``host`` those read before
    or None; ``buf`` None where ``node`` is not one to memoize (too large, or not
    computed from exactly one buffer)."""
    node = g.settle(node)
    if g.prod(node.shape) > MAX_READ:
        return None, None, None
    if type(node) is g.Data:
        if node.buf is None or not node.buf.sealed:
            return None, None, None
        buf, key = node.buf, ("data", node.offset, node.shape, node.strides, node.dtype.name)
    elif type(node) is g.Op and node.n_nodes <= MAX_GRAPH:
        sig, leaves, consts, buffers, _ = signature([node])
        if len(buffers) != 1 or not buffers[0].sealed:
            return None, None, None
        buf = buffers[0]
        key = ("op", sig, tuple([leaf.offset for leaf in leaves]), tuple([const_blob(c) for c in consts]))
    else:
        return None, None, None
    entries = _READS.get(buf)
    return buf, key, (entries.get(key) if entries is not None else None)


def keep_read(buf, key, host) -> None:
    if buf is not None:
        _put(_READS, buf, key, host)


__all__ = ["forget", "reduction", "keep_reduction", "read", "keep_read", "keep_range", "value_range"]
