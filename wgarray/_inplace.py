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
from ._array import _NODE, Array
from ._kernels.write import _detached, write, write_element  # noqa: F401 - the writers, used as _inplace.*


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
