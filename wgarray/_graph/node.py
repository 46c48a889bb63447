"""The lazy graph: what an Array holds until its data is needed.

Three node kinds, immutable once built:

- ``Data``: a strided view (element offset and strides) of a device buffer;
- ``Const``: a Python scalar of a known dtype (its value travels as a kernel parameter);
- ``Op``: an elementwise operation over sources that all have the op's shape
  (the namespace broadcasts before it builds the node; nodes never broadcast).

Views (broadcast, permute, slice, reshape) of an ``Op`` are pushed down to its
``Data`` leaves, so ``exp(x).T + y`` is still one kernel. A view that would make an
op recompute its values for more elements than it has (a broadcast that grows it)
realizes the op first instead.
"""
from __future__ import annotations

import math

from .. import _dtypes as dt
from .._runtime.runtime import public_caller

# An elementwise chain longer than this is realized, so that the pending graph (and
# the generated kernel) stays small: a loop `x = x * 2 + 1` must not grow forever.
MAX_FUSED_NODES = 64
MAX_FUSED_LEAVES = 12


def prod(shape) -> int:
    return math.prod(shape)


_CONTIGUOUS: dict = {}  # shape -> its C-order strides: every Data and view asks


def contiguous_strides(shape) -> tuple[int, ...]:
    if type(shape) is not tuple:
        shape = tuple(shape)
    found = _CONTIGUOUS.get(shape)
    if found is not None:
        return found
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    found = tuple(reversed(strides))
    if len(_CONTIGUOUS) >= 4096:
        _CONTIGUOUS.clear()
    _CONTIGUOUS[shape] = found
    return found


class Node:
    __slots__ = ("shape", "dtype", "device")

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Data(Node):
    __slots__ = ("buf", "offset", "strides")

    def __init__(self, buf, shape, dtype, device, offset=0, strides=None):
        self.buf = buf
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.offset = offset
        self.strides = contiguous_strides(self.shape) if strides is None else tuple(strides)

    n_nodes = 1
    n_leaves = 1

    @property
    def is_contiguous(self) -> bool:
        strides = self.strides
        expect = contiguous_strides(self.shape)
        if strides == expect:
            return True
        return all(st == c for st, c, n in zip(strides, expect, self.shape) if n != 1)

    def __repr__(self):
        return f"Data(#{self.buf.uid}, {self.shape}, {self.dtype}, off={self.offset}, strides={self.strides})"


class Iota(Node):
    """The flat index ``offset + sum(i_d * strides[d])`` of each element, as uint32.

    It behaves like a Data leaf without a buffer, so views compose with it: arange,
    eye, tril and friends are built from it and computed on the device.
    """

    __slots__ = ("offset", "strides")

    def __init__(self, shape, device, offset=0, strides=None, dtype=None):
        self.shape = tuple(shape)
        self.strides = contiguous_strides(self.shape) if strides is None else tuple(strides)
        self.dtype = dt.uint32
        self.device = device
        self.offset = offset
        # its values are u32: a grid past 2**32 elements is taken where its largest
        # value fits (a row or column index of a wide grid), never where one would wrap
        if prod(self.shape) > _IOTA_MAX and offset + sum((n - 1) * st for n, st in zip(self.shape, self.strides)) \
                >= _IOTA_MAX:
            raise MemoryError(f"{_caller()}: expected an index grid whose values fit 32 bits, got shape {self.shape} "
                              f"and strides {self.strides}")

    n_nodes = 1
    n_leaves = 0

    def __repr__(self):
        return f"Iota({self.shape}, off={self.offset}, strides={self.strides})"


_IOTA_MAX = 1 << 32


def _caller() -> str:
    return public_caller()


class Const(Node):
    __slots__ = ("value",)

    def __init__(self, value, dtype, device, shape=()):
        self.value = value
        self.dtype = dtype
        self.device = device
        self.shape = tuple(shape)

    n_nodes = 1
    n_leaves = 0


class Op(Node):
    __slots__ = ("op", "srcs", "arg", "realized", "n_nodes", "n_leaves")

    def __init__(self, op: str, srcs, dtype, arg=None, shape=None):
        srcs = tuple(srcs)
        self.op = op
        self.srcs = srcs
        self.arg = arg
        self.dtype = dtype
        if shape is None:  # Consts are scalars: the shape comes from another source
            shape = next((s.shape for s in srcs if not isinstance(s, Const)), srcs[0].shape)
        self.shape = shape
        self.device = srcs[0].device
        self.realized: Data | None = None
        n_nodes, n_leaves = 1, 0
        for s in srcs:  # a loop, not two sum()s over generators: every lazy op pays this
            n_nodes += s.n_nodes
            n_leaves += s.n_leaves
        self.n_nodes = n_nodes
        self.n_leaves = n_leaves

    def __repr__(self):
        return f"Op({self.op}, {self.dtype}, {self.shape})"


def settle(node: Node) -> Node:
    """A realized op's data in place of the op itself."""
    if isinstance(node, Op) and node.realized is not None:
        return node.realized
    return node


_new_op = object.__new__


def make_op(op: str, srcs, dtype, arg=None) -> Node:
    """An Op over ``srcs`` (all of one shape), realizing sources that make it too big."""
    srcs = [s.realized if type(s) is Op and s.realized is not None else s for s in srcs]  # settle
    shape = None
    n_nodes, n_leaves = 1, 0
    for s in srcs:
        n_nodes += s.n_nodes
        n_leaves += s.n_leaves
        if shape is None and not isinstance(s, Const):
            shape = s.shape
    if shape is None:
        shape = srcs[0].shape
    if n_nodes <= MAX_FUSED_NODES and n_leaves <= MAX_FUSED_LEAVES:
        # Op(op, srcs, dtype, arg, shape) with the counts just made, not made again
        # (every lazy op of the namespace passes here)
        node = _new_op(Op)
        node.op = op
        node.srcs = tuple(srcs)
        node.arg = arg
        node.dtype = dtype
        node.shape = shape
        node.device = srcs[0].device
        node.realized = None
        node.n_nodes = n_nodes
        node.n_leaves = n_leaves
        return node
    while 1 + sum(s.n_nodes for s in srcs) > MAX_FUSED_NODES or sum(s.n_leaves for s in srcs) > MAX_FUSED_LEAVES:
        i = max(range(len(srcs)), key=lambda k: (isinstance(srcs[k], Op), srcs[k].n_nodes))
        if not isinstance(srcs[i], Op):
            break
        srcs[i] = realize(srcs[i])
    return Op(op, srcs, dtype, arg, shape)


def realize(node: Node) -> Data:
    """Compute ``node`` into a Data (a no-op for one). Realizing is the fusion planner's
    work (fusion.py, which imports this module and installs its ``realize`` here when it
    loads), so the graph itself depends on nothing above it."""
    return _realizer(node)


_realizer = None


# ---------------------------------------------------------------- views
#
# A view is a function from a Data's (shape, offset, strides) to a new triple, or None
# when it cannot be expressed as strides (some reshapes of non-contiguous data).

def view(node: Node, fn, new_shape) -> Node:
    """``node`` seen through the strided view ``fn`` (pushed down to the leaves)."""
    node = settle(node)
    if isinstance(node, (Data, Iota)):
        res = fn(node.shape, node.offset, node.strides)
        if res is None:
            raise _NotStrided
        shape, offset, strides = res
        if isinstance(node, Iota):
            return Iota(shape, node.device, offset, strides)
        return Data(node.buf, shape, node.dtype, node.device, offset, strides)
    if isinstance(node, Const):
        return Const(node.value, node.dtype, node.device, new_shape)
    grows = prod(new_shape) > node.size
    if not grows:
        try:
            memo: dict[int, Node] = {}
            return _view_op(node, fn, new_shape, memo)
        except _NotStrided:
            pass
    return view(realize(node), fn, new_shape)


class _NotStrided(Exception):
    pass


def _view_op(node: Node, fn, new_shape, memo) -> Node:
    node = settle(node)
    if not isinstance(node, Op):
        return view(node, fn, new_shape)
    found = memo.get(id(node))
    if found is None:
        srcs = [_view_op(s, fn, new_shape, memo) for s in node.srcs]
        found = Op(node.op, srcs, node.dtype, node.arg, new_shape)
        memo[id(node)] = found
    return found


def try_view(node: Node, fn, new_shape) -> Node:
    """Like ``view``, but realizes ``node`` when the view is not strided on its leaves."""
    try:
        return view(node, fn, new_shape)
    except _NotStrided:
        node = settle(node)
        if isinstance(node, Data):  # a non-contiguous Data: copy it to contiguous first
            node = Op("copy", [node], node.dtype)
        data = realize(node)
        return view(data, fn, new_shape)


def broadcast_view(node: Node, shape) -> Node:
    shape = tuple(shape)
    if node.shape == shape:
        return node

    def fn(old_shape, offset, strides):
        pad = len(shape) - len(old_shape)
        new = [0] * pad
        for n_old, st, n_new in zip(old_shape, strides, shape[pad:]):
            new.append(st if n_old == n_new else 0)
        return shape, offset, tuple(new)

    return view(node, fn, shape)


def permute_view(node: Node, axes) -> Node:
    axes = tuple(axes)
    if axes == tuple(range(len(axes))):
        return node
    new_shape = tuple(node.shape[a] for a in axes)

    def fn(old_shape, offset, strides):
        return new_shape, offset, tuple(strides[a] for a in axes)

    return view(node, fn, new_shape)


def reshape_strides(old_shape, old_strides, new_shape):
    """Strides giving ``new_shape`` over the same elements without a copy, or None."""
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    if prod(new_shape) == 0:
        return contiguous_strides(new_shape)
    new_strides = []
    oi = 0
    ni = 0
    new_shape = tuple(new_shape)
    # Walk both shapes, matching groups of dims with equal products.
    new_nontrivial = [(i, n) for i, n in enumerate(new_shape) if n != 1]
    result = [0] * len(new_shape)
    while oi < len(old) or ni < len(new_nontrivial):
        if oi >= len(old) or ni >= len(new_nontrivial):
            return None
        og = [old[oi]]
        ng = [new_nontrivial[ni]]
        po, pn = old[oi][0], new_nontrivial[ni][1]
        oi += 1
        ni += 1
        while po != pn:
            if po < pn:
                if oi >= len(old):
                    return None
                og.append(old[oi])
                po *= old[oi][0]
                oi += 1
            else:
                if ni >= len(new_nontrivial):
                    return None
                ng.append(new_nontrivial[ni])
                pn *= new_nontrivial[ni][1]
                ni += 1
        # The old group must be contiguous within itself.
        for k in range(len(og) - 1):
            if og[k][1] != og[k + 1][1] * og[k + 1][0]:
                return None
        stride = og[-1][1]
        for idx, n in reversed(ng):
            result[idx] = stride
            stride *= n
    del new_strides
    return tuple(result)


def reshape_view(node: Node, new_shape) -> Node:
    new_shape = tuple(new_shape)
    if node.shape == new_shape:
        return node

    def fn(old_shape, offset, strides):
        st = reshape_strides(old_shape, strides, new_shape)
        return None if st is None else (new_shape, offset, st)

    return try_view(node, fn, new_shape)


def index_view(node: Node, items) -> Node:
    """Basic indexing. ``items`` is normalized: one entry per output or removed dim,
    each ('int', i) / ('slice', start, step, length) / ('new',)."""
    new_shape = []
    for it in items:
        if it[0] == "slice":
            new_shape.append(it[3])
        elif it[0] == "new":
            new_shape.append(1)
    new_shape = tuple(new_shape)

    def fn(old_shape, offset, strides):
        st_out = []
        d = 0
        for it in items:
            if it[0] == "int":
                offset += it[1] * strides[d]
                d += 1
            elif it[0] == "slice":
                _, start, step, length = it
                if length:
                    offset += start * strides[d]
                st_out.append(strides[d] * step)
                d += 1
            else:
                st_out.append(0)
        return new_shape, offset, tuple(st_out)

    return view(node, fn, new_shape)
