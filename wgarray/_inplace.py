"""In-place writes: storing into the buffer of a realized array, copying it first only
when something else still needs the old contents.

Nodes are values, so a buffer may be read by more than the array being written: another
array holding the same node, a pending lazy op with it as a leaf, an element copy, a
plain array made by a function that returns a strided view (``x.T``, ``reshape``). The
owner test counts who refers to the array's node and to its buffer: the array itself,
its views (they follow their base by versions, so they see the write, as in NumPy) and
the pending batch (its recorded commands run before the write, in queue order). Any other
reference means another live value needs the old contents, and the array first moves to
a copy of its own (copy-on-write); the other holders keep the old buffer, so a loop of
writes copies at most once.

All of it runs under the device's runtime lock, so writes from several threads take
effect one at a time, in some serial order, and writes to disjoint regions never undo
each other.
"""
from __future__ import annotations

import sys

from . import _known
from . import _tally
from ._graph import node as g
from ._graph import slabs
from ._runtime.runtime import Straddle
from ._array import _NODE, Array
from ._graph.fusion import FusedInput
from ._runtime.launch import param_bases, workgroups
from ._wgsl import types as ty
from ._wgsl import write as wk

FAMILY = "write"


def root_of(x: Array) -> Array:
    """The array whose buffer a view writes into (the end of its chain of bases)."""
    while x._view is not None:
        x = x._view[0]
    return x


def _view_refs(root: Array, buf) -> int:
    """How many live views of ``root`` (views of views included) hold a node on ``buf``
    that nothing else holds."""
    n = 0
    stack = [root]
    while stack:
        a = stack.pop()
        views = a._views
        if not views:
            continue
        for ref in views:
            v = ref()
            if v is None:
                continue
            node = _NODE.__get__(v, Array)
            # only while the view alone holds its node: a pending op that reads the view
            # (y = v + 0) holds the same node, and still needs the old contents
            if type(node) is g.Data and node.buf is buf and sys.getrefcount(node) <= 3:
                n += 1
            stack.append(v)
    return n


def _exclusive(root: Array) -> bool:
    """Whether writing into the buffer of ``root``'s Data node changes no other value."""
    node = _NODE.__get__(root, Array)
    # references to the node: root's slot, this local, getrefcount's argument
    if sys.getrefcount(node) > 3:
        return False
    buf = node.buf
    # references to the buffer: node.buf, this local, the argument, then the known holders
    others = sys.getrefcount(buf) - 3
    others -= buf.runtime.batch_refs(buf)
    others -= _view_refs(root, buf)
    return others == 0


def own(root: Array) -> bool:
    """Make ``root``'s node a contiguous Data on a buffer only it (and its views) uses.
    True when the node changed (a realization or a copy-on-write)."""
    node = _NODE.__get__(root, Array)
    changed = False
    if not (type(node) is g.Data and node.buf is not None and node.is_contiguous):
        data = g.realize(g.Op("copy", [node], node.dtype) if isinstance(node, g.Data) else node)
        del node
        _NODE.__set__(root, data)
        del data
        changed = True
    else:
        del node
    if not _exclusive(root):
        node = _NODE.__get__(root, Array)
        data = g.realize(g.Op("copy", [node], node.dtype))
        del node
        _NODE.__set__(root, data)
        del data
        changed = True
    if changed:  # views re-derive their nodes (on the new buffer) and drop host mirrors
        root._version += 1
        root._host = None
    buf = _NODE.__get__(root, Array).buf  # the write goes into this buffer: what is known of it goes
    _tally.forget(buf)
    _known.forget(buf)
    return changed


def written(root: Array, x: Array) -> None:
    """Record a change of value made in place (through ``x``, ``root`` or a view of it)."""
    root._version += 1
    root._host = None
    root._origin = None
    x._origin = None
    if x is not root:
        x._host = None


def _detached(node: g.Node) -> g.Node:
    """``node`` computed into a buffer of its own (an input that reads the buffer being
    written cannot be bound beside it in one dispatch)."""
    return g.realize(g.Op("copy", [node], node.dtype))


def write(dst: g.Data, value: g.Node, pred: g.Node | None = None, index: g.Node | None = None) -> None:
    """Store ``value`` into ``dst``'s elements in place: region mode (``index`` None)
    writes element u of dst (C order) for every u, indexed mode writes dst.flat[index[u]];
    ``pred`` skips the elements where it is False. ``value``, ``pred`` and ``index``
    share one shape (dst's in region mode); indices must be valid and distinct."""
    n = index.size if index is not None else dst.size
    if n == 0:
        return
    device = dst.device
    rt = device.runtime
    if device.big and dst.buf.size > device.max_binding_bytes:
        lo, hi = slabs.extent(dst)
        if index is None and (hi - lo) * dst.dtype.itemsize > slabs.budget_of(device):
            # a region wider than a binding: written a slab at a time
            for items, _, _ in slabs.plan(dst)[0]:
                write(g.index_view(dst, items), g.index_view(value, items),
                      None if pred is None else g.index_view(pred, items))
            return
        try:
            lo, hi = lo * dst.dtype.itemsize, hi * dst.dtype.itemsize
            window = device.runtime.window(dst.buf, lo - lo % 4, hi + (-hi % 4) - (lo - lo % 4))
        except Straddle:  # across two segments of a segmented buffer: each side written apart
            if index is not None:
                raise
            items = [("slice", 0, 1, n) for n in dst.shape]
            b = next(d for d, n in enumerate(dst.shape) if n > 1)
            h = dst.shape[b] // 2
            for start, length in ((0, h), (h, dst.shape[b] - h)):
                items[b] = ("slice", start, 1, length)
                write(g.index_view(dst, items), g.index_view(value, items),
                      None if pred is None else g.index_view(pred, items))
            return
        dst = slabs.windowed(dst)  # the region bound through a window of its buffer
    buf = dst.buf
    native = device.has_int64
    inputs = {}
    for name, node in zip(wk.INPUTS, (value, pred, index)):
        if node is None:
            continue
        fi = FusedInput(node)
        if any(b.buffer is buf.buffer for b in fi.buffers):
            fi = FusedInput(_detached(node))
        inputs[name] = fi
    ndim = dst.ndim
    pbases = tuple(param_bases(2 + 2 * ndim, [fi.n_words for fi in inputs.values()]))
    specs = tuple(fi.spec for fi in inputs.values())
    dname = dst.dtype.name
    has_pred = pred is not None
    has_index = index is not None
    key = (FAMILY, (specs, has_pred, has_index, dname, native, ndim, pbases))

    def build():
        it = iter(specs)
        vspec = next(it)
        pspec = next(it) if has_pred else None
        ispec = next(it) if has_index else None
        return wk.render_write(vspec, pspec, ispec, dname, native, ndim, pbases)

    kernel = rt.compile(key, build)
    layout = {f"shape{d}": s for d, s in enumerate(dst.shape)}
    layout.update((f"stride{d}", s & 0xFFFFFFFF) for d, s in enumerate(dst.strides))
    params = kernel.record.pack(n=n, offset=dst.offset & 0xFFFFFFFF, **layout,
                                **{name: fi.params for name, fi in inputs.items()})
    bufs = {name: fi.buffers for name, fi in inputs.items()}
    bufs["O"] = buf
    sources = [b for fi in inputs.values() for b in fi.buffers]
    rt.launch(kernel, bufs, params, workgroups(n), held=sources)


def write_element(dst: g.Data, t: int, value) -> None:
    """Store the Python scalar ``value`` (checked to fit) into element ``t`` of ``dst``'s
    buffer: a copy of its bytes, or for 8/16-bit and bool elements (which share a word)
    one invocation that merges them in."""
    device = dst.device
    rt = device.runtime
    dname = dst.dtype.name
    size = dst.dtype.itemsize
    blob = ty.const_bytes(dst.dtype, value)
    if size >= 4:  # whole words: copied in from the parameter ring, no dispatch
        rt.store(dst.buf, t * size, blob)
        return
    native = device.has_int64
    kernel = rt.compile((FAMILY, ("element", dname, native)), lambda: wk.render_write_element(dname, native))
    buf = dst.buf
    if buf.size > device.max_binding_bytes:  # the element's word, through a window
        buf = rt.window(buf, t * size, size)
        t -= buf.base // size
    rt.launch(kernel, {"O": buf}, t.to_bytes(4, "little") + blob + b"\0" * (-len(blob) % 4), 1, held=())
