"""Arrays past the storage-binding limit: slabs and windows.

A buffer may be as large as the device's ``max-buffer-size``, but one kernel binding
covers at most ``max-storage-buffer-binding-size`` bytes of it (2 GiB on an H200, 128
MiB on lavapipe). Work over a larger array is cut into slabs: ranges of one axis (the
outermost whose single index fits, the axes before it taken one index at a time) small
enough that every leaf's part of a slab fits one binding. Each slab is the same graph
seen through an index view (pushed down to the leaves, as every view is), its leaves
rebound to windows (``Runtime.window``) of their buffers that cover what the slab reads,
their element offsets counted from the window's start. The kernels themselves never
see more than one binding's worth, and need no 64-bit indices.

Who uses it: the fusion planner (an elementwise group whose output or leaves are past
the limit runs slab by slab into windows of its output buffers, ``realize_in_slabs``)
and the reductions (partials per slab, then a reduction of the partials:
``kernels.reduce``). Every other kernel family binds whole buffers, and the runtime
raises a MemoryError naming the call when one of them is given a buffer past the limit.
"""
from __future__ import annotations

import math

from . import node as g
from .._runtime.runtime import Straddle, public_caller


def limit_of(device) -> int:
    return device.max_binding_bytes


def data_leaves(nodes):
    """The Data leaves under ``nodes`` (pending ops walked, each node once)."""
    out, seen, stack = [], set(), list(nodes)
    while stack:
        nd = g.settle(stack.pop())
        if id(nd) in seen:
            continue
        seen.add(id(nd))
        if type(nd) is g.Op:
            stack.extend(nd.srcs)
        elif type(nd) is g.Data:
            out.append(nd)
    return out


def too_big(nodes) -> bool:
    """Whether a group of pending ops of one shape must run in slabs: an output, or a
    leaf's buffer, past the device's binding limit."""
    node = nodes[0]
    device = node.device
    n = g.prod(node.shape)
    if not device.big and n <= _SURE_FITS:  # the common case, without the device's limits
        return False
    limit = device.max_binding_bytes
    if any(n * nd.dtype.itemsize > limit for nd in nodes):
        return True
    return device.big and any(leaf.buf.size > limit for leaf in data_leaves(nodes))


# Elements that fit any binding of any device in any dtype (16-byte complex128 at the
# WebGPU floor of 128 MiB a binding); a lowered limit (debug.binding_limit) sets
# ``device.big``, which turns the full test on.
_SURE_FITS = (128 << 20) // 16


def spread(node: g.Node) -> int:
    """The most bytes one leaf of ``node`` on a buffer past the binding limit reads (0
    where none is): past ``budget_of``, the node must be read a slab at a time."""
    limit = node.device.max_binding_bytes
    out = 0
    for leaf in data_leaves([node]):
        if leaf.buf.size > limit:
            lo, hi = extent(leaf)
            out = max(out, (hi - lo) * leaf.dtype.itemsize)
    return out


def extent(leaf: g.Data) -> tuple[int, int]:
    """The element range [lo, hi) of its buffer that a strided Data reads."""
    lo = hi = leaf.offset
    for n, st in zip(leaf.shape, leaf.strides):
        if n == 0:
            return leaf.offset, leaf.offset
        if st > 0:
            hi += (n - 1) * st
        else:
            lo += (n - 1) * st
    return lo, hi + 1


def _leaf_window(leaf: g.Data, limit: int) -> g.Data:
    rt = leaf.device.runtime
    isz = leaf.dtype.itemsize
    lo, hi = extent(leaf)
    try:
        win = rt.window(leaf.buf, lo * isz, max(hi - lo, 1) * isz)
    except Straddle:  # across a segment boundary: the bytes it reads, copied into a buffer of their own
        b0 = lo * isz - lo * isz % 4
        b1 = hi * isz + (-hi * isz) % 4
        if b1 - b0 > limit:
            raise
        tmp = rt.alloc(b1 - b0)
        rt.copy(leaf.buf, b0, tmp, 0, b1 - b0)
        return g.Data(tmp, leaf.shape, leaf.dtype, leaf.device, leaf.offset - b0 // isz, leaf.strides)
    if win.size > limit:
        raise MemoryError(
            f"{rt_caller()}: expected each kernel's part of an array to fit the storage-binding limit of "
            f"{leaf.device.name!r} ({limit} bytes), got a view of shape {leaf.shape} and strides {leaf.strides} "
            f"spanning {win.size} bytes of its buffer: elementwise operations, reductions and transfers take arrays "
            f"past that limit, this function does not yet")
    return g.Data(win, leaf.shape, leaf.dtype, leaf.device, leaf.offset - win.base // isz, leaf.strides)


def rt_caller() -> str:
    return public_caller()


def windowed(node: g.Node, memo: dict | None = None) -> g.Node:
    """``node`` with every Data leaf on a buffer past the binding limit rebound to the
    window of it that the leaf reads (a new graph; ``node`` is unchanged)."""
    memo = {} if memo is None else memo
    limit = node.device.max_binding_bytes
    return _windowed(node, limit, memo)


def _windowed(node, limit, memo):
    node = g.settle(node)
    t = type(node)
    if t is g.Op:
        found = memo.get(id(node))
        if found is None:
            srcs = [_windowed(s, limit, memo) for s in node.srcs]
            same = all(a is b for a, b in zip(srcs, node.srcs))  # no leaf rebound: the node itself
            found = memo[id(node)] = node if same else g.Op(node.op, srcs, node.dtype, node.arg, node.shape)
        return found
    if t is g.Data and node.buf.size > limit:
        found = memo.get(id(node))
        if found is None:
            found = memo[id(node)] = _leaf_window(node, limit)
        return found
    return node


def slabs(shape, itemsize: int, budget: int, quantum: int = 1):
    """Cut ``shape`` into slabs of at most ``budget`` bytes at ``itemsize`` bytes an
    element: a list of (index items for ``g.index_view``, flat start, element count).
    Each slab is a range of one axis ``a`` (the outermost whose single index fits) with
    one index of each axis before it; its element count is a multiple of ``quantum``
    but for the last slab of each run of axis ``a``."""
    nd = len(shape)
    if nd == 0:  # one element: one slab
        return [([], 0, 1)], 0
    inner = [1] * (nd + 1)
    for d in range(nd - 1, -1, -1):
        inner[d] = inner[d + 1] * shape[d]
    a = next((d for d in range(nd) if inner[d + 1] * itemsize <= budget), nd - 1)
    row = inner[a + 1]
    q = quantum // math.gcd(row, quantum)  # rows per slab: a multiple of this
    rows = max(budget // (row * itemsize), 1)
    rows = max(rows - rows % q, q)
    out = []
    outer = shape[:a]
    for o in range(g.prod(outer)):
        idx, rem = [], o
        for n in reversed(outer):
            idx.append(rem % n)
            rem //= n
        idx.reverse()
        base = sum(i * inner[d + 1] for d, i in enumerate(idx))
        for r0 in range(0, shape[a], rows):
            r = min(rows, shape[a] - r0)
            items = ([("slice", i, 1, 1) for i in idx] + [("slice", r0, 1, r)]
                     + [("slice", 0, 1, n) for n in shape[a + 1:]])
            out.append((items, base + r0 * row, r * row))
    return out, a


def budget_of(device) -> int:
    """Bytes one slab's binding may take: the limit less a window's alignment slack."""
    return device.max_binding_bytes - 2 * device.binding_alignment - 64


def slab_bytes(device) -> int:
    """The bytes a slab is cut to: the largest power of two within ``budget_of``, so
    that slabs of contiguous arrays meet the power-of-two boundaries of segmented
    buffers."""
    return 1 << (budget_of(device).bit_length() - 1)


def plan(node: g.Node, quantum: int = 1, whole_last: bool = False, row_bytes: int = 0):
    """``slabs`` of ``node``'s shape whose every leaf's part fits one binding: sized by
    the widest dtype first, then narrowed while a strided leaf (a view with steps, a
    transpose) reads more of its buffer per slab than a binding holds. Returns the
    slabs and their axis. ``whole_last``: every slab holds whole rows of the last axis
    (the starts and counts are then in rows), each counted as at least ``row_bytes``.
    The budget is a power of two, so that the slabs of contiguous arrays meet the
    power-of-two boundaries of segmented buffers (``Runtime.window``)."""
    device = node.device
    limit = device.max_binding_bytes
    leaves = data_leaves([node])
    isz = max([node.dtype.itemsize] + [leaf.dtype.itemsize for leaf in leaves])
    budget = slab_bytes(device)
    shape = node.shape
    if whole_last:
        isz = max(isz * shape[-1], row_bytes)
        shape = shape[:-1]
        if not shape or isz > budget:
            raise MemoryError(f"{rt_caller()}: expected rows of at most {budget} bytes along the axis it works on "
                              f"for an array past the storage-binding limit ({limit} bytes) of {device.name!r}, "
                              f"got shape {node.shape} of {node.dtype}")
    floor = quantum * isz
    while True:
        parts, axis = slabs(shape, isz, budget, quantum)
        if whole_last:
            parts = [(items + [("slice", 0, 1, node.shape[-1])], start, count) for items, start, count in parts]
        spread = 0
        for leaf in data_leaves([g.index_view(node, parts[0][0])]):
            if leaf.buf.size > limit:
                lo, hi = extent(leaf)
                spread = max(spread, (hi - lo) * leaf.dtype.itemsize)
        if spread <= budget_of(device):
            return parts, axis
        if budget <= floor:
            raise Spread(f"{rt_caller()}: expected each slab of a view of an array past the storage-binding limit "
                          f"({limit} bytes) of {device.name!r} to fit one binding, got a view of shape {node.shape} "
                          f"whose slab of {parts[0][2]} elements reads {spread} bytes of its buffer")
        budget = max(budget * budget_of(device) // (2 * spread), floor)


class Spread(MemoryError):
    """The smallest slab of a strided view reads more of its buffer than a binding holds."""
