"""Indexing: ``__getitem__`` and ``__setitem__``, and the index nodes (normalized,
embedded, coordinates) that ``take``, ``take_along_axis`` and the manipulation functions
share; the gather and scatter kernels they run are the gather family's
(``_kernels/gather.py``).

How each kind of key runs (all on the device):

- basic (ints, slices, Ellipsis, None): a view (``g.index_view``), no kernel;
- integer arrays (NumPy's rules: one index array per axis, broadcast together; ints
  mixed with arrays count as arrays; the broadcast dims replace the indexed axes when
  those are adjacent, else they come first): an elementwise graph turns the indices into
  one flat uint32 index into ``x`` (negative indices normalized, invalid ones mapped to
  ``INVALID``), and one gather kernel reads ``x`` through it. Both are fused inputs of
  the gather, so ``x[i + 1]`` is one dispatch;
- a boolean mask: device-side ``nonzero`` gives integer arrays, then as above.

Assignment into a realized array is in place (``setitem_inplace``, ``_inplace.write``):
one dispatch over the region of a basic key, over the array with the mask as predicate,
or over the updates of an index that names distinct elements (a mask's, or host indices
without repeats). Otherwise, and for pending arrays (so the write fuses), it is
functional (``setitem`` returns the new array):

- ``x[mask] = v`` with ``v`` not depending on the position among the selected elements
  is ``where(mask, v, x)``: elementwise, lazy, no readback;
- basic keys: an elementwise membership test over index leaves (``g.Iota``) selects the
  region; a scalar value is then a plain ``where``, an array value a gather from the
  value (its region coordinates computed from the same leaves) with ``x`` elsewhere;
- integer arrays (and masks with position-dependent values): a scatter in two kernels,
  a *winner* pass (atomicMax of update number per target element: the last write wins,
  deterministically, as in NumPy) and a gather that takes the winning update or ``x``.
  Each invocation writes whole u32 words of the output, so 8/16-bit dtypes need no
  atomics on the data.

Bounds: ints are checked on the host. Integer index arrays whose values are already on
the host (a NumPy array, or an Array with a host mirror) are checked there; otherwise
the kernel flags invalid indices in one u32 word that is read back at the call, so an
IndexError is raised by the call itself (this costs one small readback, only for
device-resident indices).
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from . import _core
from . import _dtypes as dt
from ._graph import node as g
from ._graph import slabs
from . import _inplace
from . import _known
from . import _tally
from ._array import _NODE, Array, Permuted, Reshaped, _View
from ._graph.transfer import upload
from ._kernels import gather as kg
from ._kernels.compact import nonzero_flat
from ._kernels.gather import INVALID


# ============================================================= index nodes

def u32(value, device, shape) -> g.Const:
    return g.Const(value & 0xFFFFFFFF, dt.uint32, device, shape)


def _op(op, a, b, dtype=dt.uint32):
    return g.make_op(op, [a, b], dtype)


def coordinate(shape, axis: int, device) -> g.Iota:
    """The uint32 index of each element along ``axis``."""
    strides = [0] * len(shape)
    strides[axis] = 1
    return g.Iota(shape, device, 0, strides)


def normalized_index(idx: g.Node, n: int, need_check: bool):
    """(uint32 index in [0, n) for valid entries, bool validity node or None)."""
    d = idx.dtype
    device = idx.device
    shape = idx.shape
    u = idx if d is dt.uint32 else g.make_op("cast", [idx], dt.uint32)
    if d.kind == "i":
        neg = g.make_op("less", [idx, g.Const(0, d, device, shape)], dt.bool)
        u = g.make_op("where", [neg, _op("add", u, u32(n, device, shape)), u], dt.uint32)
    if not need_check:
        return u, None
    info = np.iinfo(d.numpy)
    ok = None
    if n <= info.max:
        ok = g.make_op("less", [idx, g.Const(n, d, device, shape)], dt.bool)
    if d.kind == "i" and -n >= info.min:
        lo = g.make_op("greater_equal", [idx, g.Const(-n, d, device, shape)], dt.bool)
        ok = lo if ok is None else g.make_op("logical_and", [ok, lo], dt.bool)
    if ok is None:
        ok = g.Const(True, dt.bool, device, shape)
    return u, ok


def embed(node: g.Node, shape, at: int) -> g.Node:
    """``node`` (of a shape broadcastable to shape[at:at + k]) seen over ``shape``."""
    full = [1] * len(shape)
    full[at:at + node.ndim] = node.shape
    return g.broadcast_view(g.reshape_view(node, tuple(full)), tuple(shape))


# ================================================================== parsing

class _Adv:
    """An advanced index of one axis (axis None: a new axis added by a 0-d mask), or
    ``stride`` set: flat indices over several axes (a mask's nonzero), known valid."""

    __slots__ = ("node", "axis", "host", "trusted", "stride")

    def __init__(self, node, axis, host=None, trusted=False, stride=None):
        self.node = node
        self.axis = axis
        self.host = host
        self.trusted = trusted
        self.stride = stride


def _host_values(a: Array):
    return a._host


def _as_index_array(k, device, func):
    """An index that is an array (wgarray or NumPy), as (Array, host values or None)."""
    if isinstance(k, Array):
        if k.device is not device:
            raise ValueError(f"{func}: the index array is on {k.device}, the array on {device}")
        return k, _host_values(k)
    host = np.asarray(k)
    if host.dtype.kind not in "biu":
        raise IndexError(f"{func}: index arrays must have an integer or bool dtype, got {host.dtype}")
    arr = Array._new(upload(host, device))
    arr._host = host
    return arr, host


def _split_key(x_shape, key, device, func):
    """Entries of ``key`` with the Ellipsis expanded and masks still whole:
    ('new',), ('slice', k), ('int', i), ('arr', Array, host), ('mask', Array, host)."""
    if not isinstance(key, tuple):
        key = (key,)
    entries = []
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            entries.append(k)
        elif isinstance(k, builtins.bool) or isinstance(k, np.bool_):
            entries.append(("mask0", builtins.bool(k)))
        elif isinstance(k, (Array, np.ndarray)):
            arr, host = _as_index_array(k, device, func)
            if arr.dtype is dt.bool:
                entries.append(("mask", arr, host) if arr.ndim else ("mask0", arr))
            elif arr.dtype.kind in "iu":
                entries.append(("arr", arr, host))
            else:
                raise IndexError(f"{func}: index arrays must have an integer or bool dtype, got {arr.dtype}")
        elif isinstance(k, (list, tuple)):
            raise TypeError(f"{func}: a {type(k).__name__} is not a valid index; "
                            f"use an integer or boolean Array (wgarray.asarray({k!r}))")
        else:
            try:
                entries.append(("int", operator.index(k)))
            except TypeError:
                raise IndexError(f"{func}: expected an int, slice, Ellipsis, None or integer/boolean array "
                                 f"index, got {type(k).__name__}") from None
    n_ell = sum(1 for e in entries if e is Ellipsis)
    if n_ell > 1:
        raise IndexError(f"{func}: an index can only have a single Ellipsis, got {key!r}")
    used = 0
    for e in entries:
        if isinstance(e, tuple):
            if e[0] == "mask":
                used += e[1].ndim
            elif e[0] in ("int", "arr"):
                used += 1
        elif isinstance(e, slice):
            used += 1
    if used > len(x_shape):
        raise IndexError(f"{func}: too many indices for an array of {len(x_shape)} dimensions: {key!r}")
    out = []
    for e in entries:
        if e is Ellipsis:
            out += [slice(None)] * (len(x_shape) - used)
        else:
            out.append(e)
    if n_ell == 0:
        out += [slice(None)] * (len(x_shape) - used)
    return out


def _is_basic(entries) -> bool:
    return all(not isinstance(e, tuple) or e[0] == "int" for e in entries)


def _basic_items(x_shape, entries, func):
    items = []
    d = 0
    for e in entries:
        if e is None:
            items.append(("new",))
        elif isinstance(e, slice):
            start, stop, step = e.indices(x_shape[d])
            items.append(("slice", start, step, len(range(start, stop, step))))
            d += 1
        else:
            i, n = e[1], x_shape[d]
            if not -n <= i < n:
                raise IndexError(f"{func}: index {i} is out of bounds for axis {d} with size {n}")
            items.append(("int", i % n))
            d += 1
    return items


def host_key(items) -> tuple:
    """The NumPy index of ``_basic_items`` (a trailing Ellipsis keeps 0-d results arrays)."""
    key = []
    for it in items:
        if it[0] == "int":
            key.append(it[1])
        elif it[0] == "new":
            key.append(None)
        else:
            _, start, step, length = it
            if length == 0:  # an empty slice: its start may lie outside the axis
                key.append(slice(0, 0))
                continue
            stop = start + step * length
            key.append(slice(start, stop if stop >= 0 else None, step))
    return (*key, Ellipsis)


def numpy_strides(x: Array):
    """The element strides NumPy would give ``x``: a new array is C-contiguous, and a
    view has its base's strides indexed, permuted or reshaped (``reshape`` is a view
    where these allow it, as in NumPy)."""
    view = x._view
    if view is None:
        return g.contiguous_strides(x.shape)
    base, key, _ = view
    if type(key) is Reshaped:
        return key.strides
    strides = numpy_strides(base)
    if type(key) is Permuted:
        return tuple(strides[a] for a in key.axes)
    out = []
    d = 0
    for it in _basic_items(base.shape, _split_key(base.shape, key, base.device, "reshape"), "reshape"):
        if it[0] == "new":
            out.append(0)
            continue
        if it[0] == "slice":
            out.append(strides[d] * it[2])
        d += 1
    return tuple(out)


def compose_view_key(root_shape, outer, view_shape, inner):
    """The basic key on the root that picks what ``inner`` picks from the view
    ``root[outer]`` (of shape ``view_shape``), or None where one key cannot say it (an
    empty slice of a new axis). A view of a view then refers to the root itself, so a
    chain of views never grows deeper than one."""
    func = "__getitem__"
    first = _basic_items(root_shape, _split_key(root_shape, outer, None, func), func)
    second = iter(_basic_items(view_shape, _split_key(view_shape, inner, None, func), func))
    out = []
    for it in first:
        if it[0] == "int":  # a root axis that the view does not have
            out.append(it)
            continue
        it2 = next(second)
        while it2[0] == "new":  # axes the inner key adds before this one
            out.append(it2)
            it2 = next(second)
        if it[0] == "new":  # the view's axis of length 1 that no root axis backs
            if it2[0] == "slice":
                if it2[3] == 0:
                    return None
                out.append(it)
            continue
        _, start, step, _ = it
        if it2[0] == "int":
            out.append(("int", start + it2[1] * step))
        else:
            out.append(("slice", start + it2[1] * step, step * it2[2], it2[3]))
    out += list(second)  # new axes at the end
    return host_key(out)


# The flat indices of the last few masks, by the mask's node (held here, so its id
# stays its own and an in-place write to a realized mask copies first): one mask used
# twice (scikit-learn's Ridge: ``s[idx]``, then ``d[idx] = ...``) is compacted, and
# its count read back, once.
MASK_MEMO_ENTRIES = 4
_MASKS: list = []  # [(node, flat indices)], the newest last


def _mask_flat_indices(mask: Array) -> g.Node:
    """The flat C-order indices (int64, or uint32 from a tally) of the True entries of
    ``mask``: device-side stream compaction. Its count is the one readback a mask index
    needs, unless the mask is one of the last few (``_MASKS``) or a tallied label test
    (``_tally``: then no compaction either, where the labels' sorting permutation is kept)."""
    node = mask._node
    with mask.device.runtime.lock:
        for i, (held, flat) in enumerate(_MASKS):
            if held is node:
                return flat
        flat, count = _tally.mask(node)  # a tallied label test: a slice of its sorting permutation
        if flat is None:
            flat = nonzero_flat(node, count)[0]
        if _small_graph(node):
            _MASKS.append((node, flat))
            if len(_MASKS) > MASK_MEMO_ENTRIES:
                del _MASKS[0]
    return flat


MASK_MEMO_BYTES = 1 << 20


def _small_graph(node: g.Node) -> bool:
    """Whether ``node`` is a small graph over small buffers (at most MASK_MEMO_BYTES in
    all): what the mask memo may hold without keeping large arrays alive."""
    node = g.settle(node)
    if g.prod(node.shape) * 8 > MASK_MEMO_BYTES or getattr(node, "n_nodes", 1) > 16:
        return False
    stack, total, seen = [node], 0, set()
    while stack:
        n = g.settle(stack.pop())
        if type(n) is g.Op:
            stack.extend(n.srcs)
        elif type(n) is g.Data and n.buf is not None and n.buf.uid not in seen:
            seen.add(n.buf.uid)
            total += n.buf.size
    return total <= MASK_MEMO_BYTES


def _plan_advanced(x_shape, entries, device, func):
    """The advanced-indexing plan: (out_shape, flat uint32 index node into x over
    out_shape, flag or None). Entries hold at least one array or mask."""
    cs = g.contiguous_strides(x_shape)
    # Each V entry: ('new',) / ('slice', axis, start, step, length) / ('adv', _Adv) / ('int', axis, i)
    ventries = []
    d = 0
    for e in entries:
        if e is None:
            ventries.append(("new",))
        elif isinstance(e, slice):
            start, stop, step = e.indices(x_shape[d])
            ventries.append(("slice", d, start, step, len(range(start, stop, step))))
            d += 1
        elif e[0] == "int":
            i, n = e[1], x_shape[d]
            if not -n <= i < n:
                raise IndexError(f"{func}: index {i} is out of bounds for axis {d} with size {n}")
            ventries.append(("int", d, i % n))
            d += 1
        elif e[0] == "arr":
            ventries.append(("adv", _Adv(e[1]._node, d, e[2])))
            d += 1
        elif e[0] == "mask":
            mask = e[1]
            want = x_shape[d:d + mask.ndim]
            # a mask with a zero-length dim selects nothing, whatever the axis length
            if len(mask.shape) != len(want) or not all(m in (w, 0) for m, w in zip(mask.shape, want)):
                raise IndexError(f"{func}: boolean index of shape {mask.shape} does not match the indexed "
                                 f"dimensions {want} (axes {d}..{d + mask.ndim - 1})")
            # flat positions in the mask are flat positions over x's axes d..d+k-1
            stride = g.prod(x_shape[d + mask.ndim:])
            ventries.append(("adv", _Adv(_mask_flat_indices(mask), d, None, trusted=True, stride=stride)))
            for k in range(1, mask.ndim):
                ventries.append(("masked",))
            d += mask.ndim
        else:  # 0-d mask: a new axis of length 1 (True) or 0 (False)
            v = e[1] if isinstance(e[1], builtins.bool) else builtins.bool(e[1])
            idx = np.zeros(1 if v else 0, np.int64)
            arr, h = _as_index_array(idx, device, func)
            ventries.append(("adv", _Adv(arr._node, None, h, trusted=True)))
    adv_pos = [i for i, v in enumerate(ventries) if v[0] in ("adv", "int", "masked")]
    advs = [v[1] for v in ventries if v[0] == "adv"]
    bshape = _core.broadcast_shapes(*(a.node.shape for a in advs), func=func)
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    # output dims: (source of dim) for non-adv entries
    if adjacent:
        before, rest = ventries[:adv_pos[0]], ventries[adv_pos[-1] + 1:]
    else:
        before, rest = [], ventries
    rest = [v for v in rest if v[0] in ("new", "slice")]
    out_shape = []
    strides = []
    offset = 0
    for v in ventries:
        if v[0] == "int":
            offset += v[2] * cs[v[1]]
        elif v[0] == "slice":
            offset += v[2] * cs[v[1]] if v[4] else 0
    for v in before:
        out_shape.append(1 if v[0] == "new" else v[4])
        strides.append(0 if v[0] == "new" else v[3] * cs[v[1]])
    b_at = len(out_shape)
    out_shape += list(bshape)
    strides += [0] * len(bshape)
    for v in rest:
        out_shape.append(1 if v[0] == "new" else v[4])
        strides.append(0 if v[0] == "new" else v[3] * cs[v[1]])
    out_shape = tuple(out_shape)
    n_out = g.prod(out_shape)
    # bounds
    flag = None
    device_check = False
    for a in advs:
        if a.trusted or a.axis is None:
            continue
        n = x_shape[a.axis]
        if a.host is not None:
            h = np.asarray(a.host)
            if h.size and (h.min() < -n or h.max() >= n):
                bad = h[(h < -n) | (h >= n)].ravel()[0]
                raise IndexError(f"{func}: index {bad} is out of bounds for axis {a.axis} with size {n}")
        elif a.node.size and n_out:
            # indices of a known range (an arange, an argmax, arithmetic of them) are in
            # bounds without the device's check and its readback (``_known``)
            known = _known.value_range(a.node)
            if known is None or known[0] < -n or known[1] >= n:
                device_check = True
    flat = g.Iota(out_shape, device, offset & 0xFFFFFFFF, tuple(s & 0xFFFFFFFF for s in strides))
    ok_all = None
    for a in advs:
        if a.axis is None:
            continue
        n = x_shape[a.axis]
        check = device_check and not a.trusted and a.host is None
        if a.trusted:  # uint32 already (a tallied mask's rows): a view, broadcast without a pass
            u, ok = (a.node if a.node.dtype is dt.uint32 else g.make_op("cast", [a.node], dt.uint32)), None
        else:
            u, ok = normalized_index(a.node, n, check)
        stride = cs[a.axis] if a.stride is None else a.stride
        term = embed(u, out_shape, b_at + len(bshape) - u.ndim)
        if stride != 1:
            term = _op("multiply", term, u32(stride, device, out_shape))
        flat = _op("add", flat, term)
        if ok is not None:
            ok = embed(ok, out_shape, b_at + len(bshape) - ok.ndim)
            ok_all = ok if ok_all is None else g.make_op("logical_and", [ok_all, ok], dt.bool)
    if ok_all is not None:
        flat = g.make_op("where", [ok_all, flat, u32(INVALID, device, out_shape)], dt.uint32)
        flag = kg.Flag(device)
    if x_shape and g.prod(x_shape) == 0 and n_out and any(a.axis is not None for a in advs):
        raise IndexError(f"{func}: cannot take indices from an axis of size 0 (array shape {x_shape})")
    return out_shape, flat, flag


def _check_flag(flag, func, x_shape):
    if flag is not None and flag.raised():
        raise IndexError(f"{func}: an index is out of bounds for the array of shape {x_shape}")


# ================================================================= getitem

# Reading one element of an array up to this size reads (and mirrors) the whole array,
# so that element-by-element loops cost one GPU round trip, not one per element.
ELEMENT_READ_MIRRORS = 1 << 20


def _element_items(x_shape, key, func):
    """The items of a key of one Python int per axis (an element read, the index of
    loops over elements), or None for any other key."""
    if type(key) is int:
        key = (key,)
    elif type(key) is not tuple:
        return None
    if len(key) != len(x_shape):
        return None
    items = []
    for d, i in enumerate(key):
        if type(i) is not int:
            return None
        n = x_shape[d]
        if not -n <= i < n:
            raise IndexError(f"{func}: index {i} is out of bounds for axis {d} with size {n}")
        items.append(("int", i % n))
    return items


def getitem(x: Array, key) -> Array:
    func = "__getitem__"
    items = _element_items(x.shape, key, func)
    entries = _split_key(x.shape, key, x.device, func) if items is None else None
    if items is not None or _is_basic(entries):
        if items is None:
            items = _basic_items(x.shape, entries, func)
        out = Array._new(g.index_view(x._node, items))
        if x._host is not None:  # the host mirror: element reads after a readback stay on the host
            out._host = x._host[host_key(items)]
        elif out.size == 1 and x.size <= ELEMENT_READ_MIRRORS:
            out._origin = (x, x._sync(), host_key(items))
        return out
    if x.device.big and isinstance(key, Array) and key.dtype is dt.bool and slabs.too_big([x._node]):
        return _mask_in_slabs(x, key)
    out_shape, flat, flag = _plan_advanced(x.shape, entries, x.device, func)
    data = kg.gather(x._node, flat, None, flag)
    _check_flag(flag, func, x.shape)
    return Array._new(data)


def _mask_in_slabs(x: Array, mask: Array) -> Array:
    """``x[mask]`` of an array past the binding limit (``_graph.slabs``): each slab's
    selection (a count read back per slab), joined in order. The slabs cut only axes
    that ``mask`` covers."""
    k = mask.ndim
    parts, _ = slabs.plan(x._node)
    if any(it[3] != n for items, _, _ in parts for it, n in zip(items[k:], x.shape[k:])):
        raise MemoryError(f"__getitem__: expected rows of the axes after a boolean mask's to fit the storage-binding "
                          f"limit ({x.device.max_binding_bytes} bytes) of {x.device.name!r}, got shape {x.shape} "
                          f"with a mask of shape {mask.shape}")
    pieces = []
    for items, _, _ in parts:
        sub = Array._new(slabs.windowed(g.index_view(x._node, items)))
        m = Array._new(slabs.windowed(g.index_view(mask._node, items[:k])))
        pieces.append(getitem(sub, m))
    if len(pieces) == 1:
        return pieces[0]
    rows = sum(p.shape[0] for p in pieces)
    return Array._new(kg.concat_nodes([p._node for p in pieces], 0, (rows,) + pieces[0].shape[1:]))


# ================================================================= setitem

def _value_node(x: Array, value, func) -> g.Node:
    """``value`` as a node of x's dtype (not yet broadcast)."""
    if isinstance(value, Array):
        _core.same_device([x, value], func)
        if value.dtype is not x.dtype:
            if dt.PROMOTION.get((value.dtype, x.dtype)) is not x.dtype:
                raise TypeError(f"{func}: cannot assign a {value.dtype} value to a {x.dtype} array "
                                f"(it would change the array's dtype)")
            return _core.cast_node(value._node, x.dtype)
        return value._node
    if isinstance(value, (builtins.bool, int, float, complex)):
        return g.Const(_core.check_scalar_fits(value, x.dtype, func), x.dtype, x.device, ())
    raise TypeError(f"{func}: expected the value to be an Array or a Python scalar, got {type(value).__name__}")


def _broadcast_value(v: g.Node, shape, func) -> g.Node:
    try:
        bshape = _core.broadcast_shapes(v.shape, shape, func=func)
    except ValueError:
        bshape = None
    if bshape != tuple(shape):
        raise ValueError(f"{func}: a value of shape {v.shape} cannot be broadcast to the indexed shape {tuple(shape)}")
    if isinstance(v, g.Const):
        return g.Const(v.value, v.dtype, v.device, shape)
    return g.broadcast_view(v, shape)


def _where(cond, a, b, dtype):
    return g.make_op("where", [cond, a, b], dtype)


def _region(x_shape, items, device):
    """(membership bool node or None for all, flat uint32 index into the region) over x."""
    inside = None
    flat = None
    rshape = [it[3] if it[0] == "slice" else 1 for it in items if it[0] != "int"]
    rstrides = g.contiguous_strides(rshape)
    r = 0
    d = 0
    for it in items:
        if it[0] == "new":
            r += 1
            continue
        c = coordinate(x_shape, d, device)
        n = x_shape[d]
        cond = None
        if it[0] == "int":
            cond = _op("equal", c, u32(it[1], device, x_shape), dt.bool)
            coord = None
        else:
            _, start, step, length = it
            if step == 1 and start == 0 and length == n:
                coord = c
            else:
                s = abs(step)
                t = _op("subtract", c, u32(start, device, x_shape)) if step > 0 else \
                    _op("subtract", u32(start, device, x_shape), c)
                cond = _op("less", t, u32(s * length, device, x_shape), dt.bool)
                if s != 1:
                    mod = _op("remainder", t, u32(s, device, x_shape))
                    cond = g.make_op("logical_and", [cond, _op("equal", mod, u32(0, device, x_shape), dt.bool)],
                                     dt.bool)
                    coord = _op("floor_divide", t, u32(s, device, x_shape))
                else:
                    coord = t
            if rstrides[r] != 1:
                coord = _op("multiply", coord, u32(rstrides[r], device, x_shape))
            r += 1
        if coord is not None and rshape[r - 1] > 1:
            flat = coord if flat is None else _op("add", flat, coord)
        if cond is not None:
            inside = cond if inside is None else g.make_op("logical_and", [inside, cond], dt.bool)
        d += 1
    if flat is None:
        flat = u32(0, device, x_shape)
    return inside, flat, tuple(rshape)


def _mask_where(x: Array, mask: Array, v: g.Node, func):
    """``where(mask, v, x)`` when v does not depend on the position among the selected
    elements; None otherwise."""
    parts = _mask_parts(x, mask, v, func)
    return None if parts is None else _where(parts[0], parts[1], x._node, x.dtype)


def _mask_parts(x: Array, mask: Array, v: g.Node, func):
    """(mask, value), both over x's shape, when v does not depend on the position among
    the selected elements; None otherwise."""
    k = mask.ndim
    if k > x.ndim or not all(m in (w, 0) for m, w in zip(mask.shape, x.shape)):
        raise IndexError(f"{func}: boolean index of shape {mask.shape} does not match the indexed dimensions "
                         f"{x.shape[:k]}")
    if mask.shape != x.shape[:k]:  # a zero-length mask dim: nothing is selected
        return None
    rest = x.shape[k:]
    vshape = v.shape
    if len(vshape) == len(rest) + 1:
        if vshape[0] != 1:
            return None
        v = g.reshape_view(v, vshape[1:]) if not isinstance(v, g.Const) else g.Const(v.value, v.dtype, v.device, ())
    elif len(vshape) > len(rest) + 1:
        raise ValueError(f"{func}: a value of shape {vshape} cannot be broadcast to the indexed shape "
                         f"(n,) + {rest}")
    try:
        _core.broadcast_shapes(v.shape, rest, func=func)
    except ValueError:
        return None
    if _core.broadcast_shapes(v.shape, rest) != rest:
        raise ValueError(f"{func}: a value of shape {vshape} cannot be broadcast to the indexed shape (n,) + {rest}")
    m = g.broadcast_view(g.reshape_view(mask._node, mask.shape + (1,) * len(rest)), x.shape)
    vb = _broadcast_value(v, x.shape, func)
    return m, vb



def _single_leading_mask(entries, device):
    """(True, mask) when the key is one boolean mask over the leading dimensions and
    nothing else (``x[mask] = v``; a 0-d True/False key becomes a 0-d bool array),
    (False, None) otherwise."""
    masks = [e for e in entries if isinstance(e, tuple) and e[0] in ("mask", "mask0")]
    plain = [e for e in entries if not (isinstance(e, slice) and e == slice(None))]
    if not (len(masks) == 1 and len(plain) == 1 and entries[0] is masks[0]):
        return False, None
    kind, value = masks[0][:2]
    if kind == "mask":
        return True, value
    return True, value if isinstance(value, Array) else Array._new(g.Const(value, dt.bool, device, ()))

def setitem(x: Array, key, value) -> Array:
    func = "__setitem__"
    v = _value_node(x, value, func)
    entries = _split_key(x.shape, key, x.device, func)
    if _is_basic(entries):
        items = _basic_items(x.shape, entries, func)
        rshape = tuple(it[3] if it[0] == "slice" else 1 for it in items if it[0] != "int")
        vb = _broadcast_value(v, rshape, func)
        if g.prod(rshape) == 0:
            return x
        inside, flat, _ = _region(x.shape, items, x.device)
        if inside is None:  # the whole array
            node = g.reshape_view(vb, x.shape) if not isinstance(vb, g.Const) else g.Const(vb.value, x.dtype,
                                                                                             x.device, x.shape)
            return Array._new(g.make_op("copy", [node], x.dtype))
        if isinstance(v, g.Const) or v.size == 1:
            scalar = g.Const(v.value, x.dtype, x.device, x.shape) if isinstance(v, g.Const) else \
                g.broadcast_view(g.reshape_view(v, ()), x.shape)
            return Array._new(_where(inside, scalar, x._node, x.dtype))
        idx = _where(inside, flat, u32(INVALID, x.device, x.shape), dt.uint32)
        return Array._new(kg.gather(vb, idx, x._node))
    single, mask = _single_leading_mask(entries, x.device)
    if single:
        node = _mask_where(x, mask, v, func)
        if node is not None:
            return Array._new(node)
    out_shape, flat, flag = _plan_advanced(x.shape, entries, x.device, func)
    vb = _broadcast_value(v, out_shape, func)
    node = kg.scatter(x._node, flat, vb, flag)
    _check_flag(flag, func, x.shape)
    return Array._new(node)


# ========================================================= in-place setitem

def _reads(node: g.Node, buf) -> bool:
    """Whether computing ``node`` reads ``buf``."""
    stack = [node]
    while stack:
        nd = g.settle(stack.pop())
        if type(nd) is g.Data:
            if nd.buf is buf:
                return True
        elif type(nd) is g.Op:
            stack.extend(nd.srcs)
    return False


def _root_buffer(root: Array):
    node = _NODE.__get__(root, Array)
    return node.buf if type(node) is g.Data else None


def _unique_index(entries, x_shape) -> bool:
    """Whether the single advanced entry of ``entries`` picks distinct elements (a mask,
    or integer indices known on the host without repeats): only then can an indexed
    write go in place with no ordering between its updates."""
    adv = [(d, e) for d, e in _entry_axes(entries) if isinstance(e, tuple) and e[0] in ("arr", "mask", "mask0")]
    if len(adv) != 1:
        return False
    axis, e = adv[0]
    if e[0] != "arr":
        return True
    host = e[2]
    if host is None:
        return False
    h = np.asarray(host).ravel().astype(np.int64) % max(x_shape[axis], 1)
    return np.unique(h).size == h.size


def _entry_axes(entries):
    """(axis of x, entry) for each entry of a split key."""
    d = 0
    for e in entries:
        yield d, e
        if e is None or (isinstance(e, tuple) and e[0] == "mask0"):
            continue
        d += e[1].ndim if isinstance(e, tuple) and e[0] == "mask" else 1


# A pending array this large (in graph nodes) is realized before a write, which then
# goes in place: a loop of writes into a pending array (say the result of a maximum,
# then a fill of its diagonal) would otherwise grow a chain of whole-array selects.
PENDING_WRITE_NODES = 8


def _element_write(x: Array, key, value) -> bool:
    """``x[i, j, ...] = scalar`` on a realized array that is not a view: the lean path of
    element-write loops (one tiny dispatch, or one buffer copy from a 0-d array of the
    same dtype); False when the write is not of that form."""
    if type(x) is not Array:
        return False
    node = _NODE.__get__(x, Array)
    if type(node) is not g.Data or node.buf is None:
        return False
    shape = node.shape
    del node
    items = key if type(key) is tuple else (key,)
    if len(items) != len(shape) or not all(type(i) is int for i in items):
        return False
    src = None
    if type(value) in (float, int, bool):
        value = _core.check_scalar_fits(value, x.dtype, "__setitem__")
    elif isinstance(value, Array) and type(value) is Array and value.ndim == 0 and value.dtype is x.dtype:
        src = g.settle(_NODE.__get__(value, Array))
        if type(src) is not g.Data or src.buf is None or src.dtype.itemsize < 4 or value.device is not x.device:
            return False
    else:
        return False
    flat = 0
    for d, (i, n) in enumerate(zip(items, shape)):
        if not -n <= i < n:
            raise IndexError(f"__setitem__: index {i} is out of bounds for axis {d} with size {n}")
        flat = flat * n + (i % n)
    _inplace.own(x)
    node = _NODE.__get__(x, Array)  # contiguous now
    t = node.offset + flat
    if src is not None and src.buf is node.buf:
        return False  # the value is an element of x itself: the general path copies it first
    if src is not None:
        size = src.dtype.itemsize
        x.device.runtime.store_from(src.buf, src.offset * size, node.buf, t * size, size)
    else:
        _inplace.write_element(node, t, value)
    del node
    _inplace.written(x, x)
    return True


def setitem_inplace(x: Array, key, value) -> bool:
    """``x[key] = value`` written into x's buffer (its base's, for a view) with work
    proportional to the written region; False (nothing done) where that is not possible
    (indexed writes that may repeat an element, or whose indices need a device check),
    and ``setitem`` then gives the new value functionally."""
    func = "__setitem__"
    if _element_write(x, key, value):
        return True
    v = _value_node(x, value, func)
    entries = _split_key(x.shape, key, x.device, func)
    basic = _is_basic(entries)
    if basic:
        items = _basic_items(x.shape, entries, func)
        rshape = tuple(it[3] if it[0] == "slice" else 1 for it in items if it[0] != "int")
        _broadcast_value(v, rshape, func)  # a bad value shape raises before any work
        if g.prod(rshape) == 0:
            return True
    elif not _unique_index(entries, x.shape):
        return False
    if x.size == 0:
        return False
    root = _inplace.root_of(x)
    pending = g.settle(_NODE.__get__(root, Array))
    if type(pending) is not g.Data and pending.n_nodes < PENDING_WRITE_NODES:
        return False  # a small pending value: the functional form stays lazy and fuses
    del pending
    with x.device.runtime.lock:
        buf = _root_buffer(root)
        for e in entries:  # a mask computed from x itself, say
            if isinstance(e, tuple) and e[0] in ("mask", "arr") and buf is not None:
                idx = _NODE.__get__(e[1], Array) if not isinstance(e[1], _View) else None
                if type(idx) is g.Op and idx.realized is None and _reads(idx, buf):
                    g.realize(idx)
                del idx
        if buf is not None and _reads(v, buf):
            # the value reads what is about to be written: compute it first, into a
            # buffer of its own (and let its sources go, so they do not count as users)
            if type(g.settle(v)) is g.Op:
                g.realize(v)
            elif isinstance(value, Array) and not isinstance(value, _View):
                _NODE.__set__(value, _inplace._detached(v))
                v = value._node
        del buf
        _inplace.own(root)
        node = x._node
        if type(node) is not g.Data or node.buf is not _root_buffer(root):
            return False  # not a strided view of its base's buffer: take the functional path
        if basic:
            _inplace.write(g.index_view(node, items), _broadcast_value(v, rshape, func))
            _inplace.written(root, x)
            return True
        single, mask = _single_leading_mask(entries, x.device)
        if single:
            parts = _mask_parts(x, mask, v, func)
            if parts is not None:
                _inplace.write(node, parts[1], pred=parts[0])
                _inplace.written(root, x)
                return True
        out_shape, flat, flag = _plan_advanced(x.shape, entries, x.device, func)
        if flag is not None:
            return False
        _inplace.write(node, _broadcast_value(v, out_shape, func), index=flat)
        _inplace.written(root, x)
        return True
