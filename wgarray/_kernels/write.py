"""The region writer (kernel family ``write``): stores into part of a realized array's
buffer, with work proportional to the part (``write``, ``write_element``); and
``along_last``, which runs a function along the last axis of an array past the binding
limit a slab of rows at a time, writing each result into its place. The namespace's
in-place writes (``wgarray._inplace``) and the slab drivers of other kernel families
(matmul, concat, fft, sort, scans) use them."""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph import slabs
from .._graph.fusion import FusedInput
from .._runtime.launch import param_bases, workgroups
from .._runtime.runtime import Straddle
from .._wgsl import types as ty
from .._wgsl import write as wk

FAMILY = "write"


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
    if device.big and index is None and max(slabs.spread(value), 0 if pred is None else slabs.spread(pred)) > \
            slabs.budget_of(device):
        # a value read from past the binding limit, more than a binding's worth: a slab at a time
        probe = value if pred is None else g.make_op("logical_and", [pred, g.make_op("cast", [value], dt.bool)],
                                                     dt.bool)
        for items, _, _ in slabs.plan(probe)[0]:
            write(g.index_view(dst, items), g.index_view(value, items),
                  None if pred is None else g.index_view(pred, items))
        return
    if device.big and dst.buf.size > device.max_binding_bytes:
        lo, hi = slabs.extent(dst)
        if index is not None and ((hi - lo) * dst.dtype.itemsize > slabs.budget_of(device)
                                  or _crosses(dst.buf, lo * dst.dtype.itemsize, hi * dst.dtype.itemsize)):
            _indexed_in_windows(dst, value, pred, index)
            return
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


def _crosses(buf, lo: int, hi: int) -> bool:
    """Whether bytes [lo, hi) of ``buf`` lie in two segments of a segmented buffer."""
    seg = getattr(buf, "seg", None)
    return seg is not None and lo // seg != (hi - 1) // seg


def _indexed_in_windows(dst: g.Data, value: g.Node, pred: g.Node | None, index: g.Node) -> None:
    """An indexed write into an array past the binding limit: one pass over the updates
    per slab-sized window of the (contiguous) destination, each writing the updates whose
    index falls in it."""
    device = dst.device
    if not dst.is_contiguous:
        raise MemoryError(f"{slabs.rt_caller()}: an indexed write into a strided view of an array past the "
                          f"storage-binding limit ({device.max_binding_bytes} bytes) is not supported yet")
    flat = g.reshape_view(dst, (dst.size,))
    idt = index.dtype

    def c(v):
        return g.Const(v, idt, device, index.shape)

    per = max(slabs.slab_bytes(device) // dst.dtype.itemsize, 1)
    for base in range(0, dst.size, per):
        w = min(per, dst.size - base)
        inside = g.make_op("logical_and", [g.make_op("greater_equal", [index, c(base)], dt.bool),
                                           g.make_op("less", [index, c(base + w)], dt.bool)], dt.bool)
        keep = inside if pred is None else g.make_op("logical_and", [pred, inside], dt.bool)
        local = g.make_op("where", [inside, g.make_op("subtract", [index, c(base)], idt), c(0)], idt)
        write(g.index_view(flat, [("slice", base, 1, w)]), value, keep, local)


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


def along_last(node: g.Node, fn, last: int | None = None, row_bytes: int = 0) -> g.Data:
    """``fn`` (rows of a node -> a node of those rows, ``last`` long each) over a node
    past the binding limit, a slab of whole rows at a time (a row counted as at least
    ``row_bytes``: what ``fn`` binds of it), each result written into its place: sort,
    argsort, scans and transforms along the last axis, whose rows are independent."""
    last = node.shape[-1] if last is None else last
    device = node.device
    if node.ndim == 1:  # one row (a view into an array past the limit, say): a stack of one
        out = along_last(g.reshape_view(node, (1,) + node.shape), fn, last, row_bytes)
        return g.Data(out.buf, (last,), out.dtype, device)
    shape = node.shape[:-1] + (last,)
    out = None
    try:
        parts = slabs.plan(node, whole_last=True, row_bytes=row_bytes)[0]
    except slabs.Spread:  # rows strided across the buffer (a transpose): made contiguous first, in slabs
        node = g.realize(g.Op("copy", [node], node.dtype))
        parts = slabs.plan(node, whole_last=True, row_bytes=row_bytes)[0]
    for items, _, _ in parts:
        res = fn(slabs.windowed(g.index_view(node, items)))
        if out is None:
            out = g.Data(device.runtime.alloc(max(g.prod(shape), 1) * res.dtype.itemsize), shape, res.dtype, device)
        write(g.index_view(out, items[:-1] + [("slice", 0, 1, last)]), res)
    return out
