"""Reduction kernels on the device (no host computation); scans are in ``scan.py``,
stream compaction in ``compact.py``.

Reusable API for other kernel families (every argument is a graph node; the node's
elementwise producer is fused into the first kernel that reads it, never realized):

``reduce_rows(node, rows, length, kind) -> (Data, Data | None)``
    Reduce each of ``rows`` consecutive runs of ``length`` elements (flat C order of
    ``node``) with ``kind`` in sum, prod, min, max, argmin, argmax. Returns a Data of
    shape ``(rows,)`` in the accumulator's storage dtype (int32/uint32 for 8/16-bit
    values) and, for arg kinds, a uint32 Data of positions within each run.
``reduce_axes(node, axes, kind, post=None) -> (Node, Data | None)``
    The same over arbitrary ``axes`` (permuted last as a view); result shape is the
    kept axes' shape. ``post`` (non-arg kinds): a function building an elementwise map
    of the result node with Python scalars (``lambda t: t / n``), computed by the last
    pass before it stores, so it costs no dispatch of its own (``reduce_rows`` too).
``moments_axes(node, axes, post) -> Data``
    ``post`` of the sum of squared deviations from the mean over ``axes`` (real or
    complex floating ``node``), in one pass over the data: var and std.
``reduce_pass(...)``
    One pass of partials per chunk (the first pass of a scan is one).

Kernels are keyed ``("reduce", (ReduceSpec, input words, index words))``: structure
(ops, dtypes, layout classes, group size), never sizes, which travel as parameters.
"""
from __future__ import annotations

import struct

from .. import _dtypes as dt
from .._graph import node as g
from .._graph import slabs
from .._graph.fusion import FusedInput, const_blob, signature
from .._runtime.launch import pad_even
from .._wgsl import elementwise as ew
from .._wgsl import reduce as rd
from .._wgsl import types as ty

__all__ = ["reduce_rows", "reduce_axes", "moments_axes", "reduce_pass", "fused_input", "store_dtype", "FAMILY"]

FAMILY = "reduce"

# Elements one lane reads per chunk: enough to hide latency, short float chains. On an
# H200 (Vulkan) sum over 2^28 float32 reads 4.1 TB/s with 64 (~98% of a vec4 copy kernel's
# 4.2 TB/s); 32 gives 3.4 TB/s, 128 and 256 the same as 64.
PER_LANE = 64
THREAD_ROWS_MIN = 2048  # rows at which one thread per row beats cooperating lanes (strided rows)


def fused_input(node: g.Node, quad: bool) -> FusedInput:
    """``node`` as a fused input, read as vec4 quads where ``quad`` and its leaves allow
    (``has_vec4``); planned again without vec4 leaves where they do not."""
    inp = FusedInput(node, vec4=quad)
    if not (quad and inp.has_vec4) and any(cls == "v" for cls, _ in inp.spec.leaves):
        inp = FusedInput(node)
    return inp


def store_dtype(dtype: dt.DType, device) -> dt.DType:
    """The dtype the kernels here store values of ``dtype`` in (8/16-bit -> 32-bit)."""
    return dt.BY_NAME[rd.STORE_DTYPE[ty.tag(dtype.name, device.has_int64)]]


def _leaves(node: g.Node):
    stack, seen = [node], set()
    while stack:
        n = g.settle(stack.pop())
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, g.Op):
            stack.extend(n.srcs)
        elif isinstance(n, (g.Data, g.Iota)):
            yield n


def _inner_strided(node: g.Node) -> bool:
    """Whether some leaf walks the last axis with a stride (lanes of one row would not
    read adjacent memory)."""
    if not node.shape or node.shape[-1] == 1:
        return False
    return any(abs(leaf.strides[-1]) > 1 for leaf in _leaves(node) if isinstance(leaf, g.Data))


def _pow2ceil(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _choose(rows: int, length: int, strided: bool) -> tuple[int, int]:
    """(lanes per row G, chunk length C)."""
    if length <= 8 or (strided and rows >= THREAD_ROWS_MIN):
        return 1, max(length, 1) if length <= 8 else PER_LANE
    G = min(256, _pow2ceil(-(-length // 16)))
    return G, G * PER_LANE


# (runtime, kind, tag, G, quad, input spec, index spec) -> kernel: the structure of a
# pass, never its sizes (those are in the parameters), so a repeated reduction of a new
# size or scalar finds its kernel here without building a ReduceSpec.
_KERNELS: dict = {}


def _reduce_kernel(rt, kind, tag, G, quad, inp, idx, native, post=None, scan=False):
    idx_spec = idx.spec if idx is not None else None
    post_spec = post.spec if post is not None else None
    key = (rt, kind, tag, G, quad, inp.spec, idx_spec, post_spec, scan)
    kernel = _KERNELS.get(key)
    if kernel is not None:
        return kernel
    spec = rd.ReduceSpec(kind, tag, G, quad, inp.spec, idx_spec, native, post_spec, scan)
    in_words = rd.input_words(inp.spec, inp.params)
    idx_words = rd.input_words(idx.spec, idx.params) if idx is not None else 0
    kernel = rt.compile((FAMILY, (spec, in_words, idx_words)),
                        lambda: (rd.launch_record(spec, in_words, idx_words), rd.render(spec, in_words, idx_words)))
    if len(_KERNELS) >= 4096:
        _KERNELS.clear()
    _KERNELS[key] = kernel
    return kernel


# A fused producer with more nodes than this is realized before it is reduced. A loop
# `y = y + 1; float(sum(y))` never realizes y otherwise: each step would plan (and
# compute) the whole chain again, up to MAX_FUSED_NODES ops, inside the reduction.
# Realizing it once makes y a buffer that the next steps' short chains start from.
REALIZE_PRODUCER_NODES = 16


def reduce_rows(node: g.Node, rows: int, length: int, kind: str, _idx: g.Node | None = None, post=None,
                _rec=None):
    node = g.settle(node)
    if type(node) is g.Op and node.n_nodes > REALIZE_PRODUCER_NODES:
        node = g.realize(node)
    G, C = _choose(rows, length, _inner_strided(node))
    last = length <= C
    vals, ids, NC = reduce_pass(node, rows, length, kind, G, C, _idx, post if last else None, _rec=_rec)
    if not last:
        return reduce_rows(vals, rows, NC, kind, ids, post, _rec)
    return vals, ids


class _Post:
    """A post-map planned over the output ``out`` of a last pass: ``post(node) -> node``
    built on a Data of ``out``, whose one leaf the kernel fills with its result."""

    __slots__ = ("spec", "params", "dtype")

    def __init__(self, post, out, rows: int, dtype: dt.DType, device):
        result = g.Data(out, (rows,), dtype, device)
        node = g.settle(post(result))
        if not isinstance(node, g.Op):
            raise ValueError("reduce_rows: expected a post-map that is an elementwise op of the result")
        fi = FusedInput(node)
        if fi.buffers != [out] or len(fi.spec.leaves) != 1 or node.dtype.itemsize < 4:
            raise ValueError("reduce_rows: expected a post-map of the result and scalars only, "
                             "with a 32- or 64-bit result")
        self.spec = fi.spec
        self.params = fi.params
        self.dtype = node.dtype


# (post key, rows, result dtype, device) -> _Post: the plan of a post-map that states
# its structure and values in ``post.key`` (mean's and var's division), made once per
# size instead of per call (a namespace divide, a graph walk and a plan: ~20 us).
_POSTS: dict = {}


def _post_for(post, out, rows: int, dtype: dt.DType, device) -> _Post:
    """``_Post(post, out, rows, dtype, device)``, memoized where ``post`` has a ``key``
    (a plan holds no buffer: ``out`` is only the leaf it is planned over)."""
    key = getattr(post, "key", None)
    if key is None:
        return _Post(post, out, rows, dtype, device)
    key = (key, rows, dtype, device)
    planned = _POSTS.get(key)
    if planned is None:
        planned = _Post(post, out, rows, dtype, device)
        if len(_POSTS) >= 4096:
            _POSTS.clear()
        _POSTS[key] = planned
    return planned


def pass_params(rows: int, length: int, C: int, NC: int, inp: bytes, idx: bytes = b"", post: bytes = b"") -> bytes:
    """A pass's parameter block, laid out as ``rd.launch_record`` states it (M, L, C, NC,
    the zero word, then each input's words from an even word): packed by hand, since a
    reduction's host time is on the path of every loop step (``record.pack`` gives
    the same bytes; a device-free test checks it)."""
    return _HEAD.pack(rows, length, C, NC) + pad_even(inp) + pad_even(idx) + pad_even(post)


_HEAD = struct.Struct(f"<4I{4 * (rd.HEADER_WORDS - 4)}x")


def reduce_pass(node: g.Node, rows: int, length: int, kind: str, G: int, C: int, _idx: g.Node | None = None,
                 post=None, scan=False, _rec=None):
    """One pass: ``G`` lanes per row reduce chunks of ``C`` elements. Returns the
    partials (and, for arg kinds, their positions), ``(rows * NC,)``, and ``NC``.
    ``post`` (a function of a node; only where ``NC == 1``) maps the results before
    they are stored; ``scan``: sums start from -0.0, as a running sum does (the chunk
    sums of a scan: a chunk of -0.0 sums to -0.0)."""
    device = node.device
    native = device.has_int64
    tag = ty.tag(node.dtype.name, native)
    if tag == "b":
        raise TypeError(f"reduce_rows: cast bool values to uint32 first (kind {kind})")
    out_dtype = dt.BY_NAME[rd.STORE_DTYPE[tag]]
    is_arg = kind in rd.ARG_KINDS
    rt = device.runtime
    NC = -(-length // C) if length else 1
    quad = G > 1 and length % 4 == 0 and rows * length > 0
    inp = fused_input(node, quad)
    quad = quad and inp.has_vec4
    idx = FusedInput(_idx) if _idx is not None else None
    n_out = rows * NC
    store = out_dtype
    if post is not None:
        assert NC == 1 and not is_arg
        out = rt.alloc(max(n_out, 1) * out_dtype.itemsize)
        planned = _post_for(post, out, rows, out_dtype, device)
        if planned.dtype.itemsize > out_dtype.itemsize:  # the map widens: the results need room
            out = rt.alloc(max(n_out, 1) * planned.dtype.itemsize)
            planned = _post_for(post, out, rows, out_dtype, device)
        post, out_dtype = planned, planned.dtype
    else:
        out = rt.alloc(max(n_out, 1) * out_dtype.itemsize)
    kernel = _reduce_kernel(rt, kind, tag, G, quad, inp, idx, native, post, scan)
    bufs = {"in0": inp.buffers}
    if idx is not None:
        bufs["ix"] = idx.buffers
    bufs["O"] = out
    out_idx = None
    if is_arg:
        out_idx = bufs["OI"] = rt.alloc(max(n_out, 1) * 4)
    params = pass_params(rows, length, C, NC, inp.params, idx.params if idx else b"", post.params if post else b"")
    groups = -(-rows // (rd.WORKGROUP // G)) * NC
    if rows > 0:
        rt.launch(kernel, bufs, params, groups)
    vals = g.Data(out, (n_out,), out_dtype, device)
    ids = g.Data(out_idx, (n_out,), dt.uint32, device) if is_arg else None
    if _rec is not None:
        _rec.append((kernel, bufs, params, groups, rows, inp.spec, store, out_dtype, post))
    return vals, ids, NC


def moments_axes(node: g.Node, axes, post) -> g.Node:
    """``post`` of the sum of squared deviations from the mean of ``node`` (real or
    complex floating) over ``axes``, in one pass over the data (then passes over the
    partials): the core of var and std. Result shape: the kept axes'.

    Memoized as ``reduce_axes`` is: a graph of a signature seen before (with a post-map
    of the same key) replays the recorded passes (``_Moments``)."""
    axes = tuple(sorted(axes))
    node = g.settle(node)
    kept = tuple(n for d, n in enumerate(node.shape) if d not in axes)
    if slabs.too_big([node]):
        return g.reshape_view(_moments_in_slabs(node, axes, post), kept)
    post_key = getattr(post, "key", None)
    memo = post_key is not None and (type(node) is g.Data
                                     or (type(node) is g.Op and node.n_nodes <= REALIZE_PRODUCER_NODES))
    if memo:
        sig = signature([node])
        key = (node.device.runtime, axes, post_key, sig[0])
        program = _MOMENTS.get(key)
        if program is not None:
            return program.run(node.device, sig)
    rec = [] if memo else None
    out = _moments(node, axes, post, rec)
    if memo:
        if len(_MOMENTS) >= 4096:
            _MOMENTS.clear()
        _MOMENTS[key] = _Moments.of(rec, sig, out, kept)
    return g.reshape_view(out, kept)


def _moments(node: g.Node, axes, post, _rec) -> g.Data:
    keep = tuple(d for d in range(node.ndim) if d not in axes)
    rows = g.prod(node.shape[d] for d in keep)
    length = g.prod(node.shape[d] for d in axes)
    node = g.settle(g.permute_view(node, keep + axes))
    if type(node) is g.Op and node.n_nodes > REALIZE_PRODUCER_NODES:
        node = g.realize(node)
    device = node.device
    rt = device.runtime
    native = device.has_int64
    tag = ty.tag(node.dtype.name, native)
    real = dt.BY_NAME[rd.STORE_DTYPE[{"c64": "f32", "c128": "f64"}.get(tag, tag)]]
    val_dtype = dt.BY_NAME[rd.STORE_DTYPE[tag]]
    inp, parts = None, None
    while True:
        G, C = _choose(rows, length, parts is None and _inner_strided(node))
        NC = -(-length // C)
        last = NC == 1
        if parts is None:
            quad = G > 1 and length % 4 == 0
            inp = fused_input(node, quad)
            quad = quad and inp.has_vec4
            bufs, in_params, in_spec = {"in0": inp.buffers}, inp.params, inp.spec
        else:
            quad, in_params, in_spec = False, b"", None
            bufs = dict(zip(("PN", "PM", "PS"), parts))
        n_out = rows * NC
        if last:
            out = bufs["O"] = rt.alloc(max(n_out, 1) * real.itemsize)
            planned = _post_for(post, out, rows, real, device)
        else:
            planned = None
            bufs["ON"] = rt.alloc(max(n_out, 1) * 4)
            bufs["OM"] = rt.alloc(max(n_out, 1) * val_dtype.itemsize)
            bufs["OS"] = rt.alloc(max(n_out, 1) * val_dtype.itemsize)
        spec = rd.ReduceSpec("moments", tag, G, quad, in_spec, None, native,
                             planned.spec if planned else None, False, parts is not None)
        words = rd.input_words(in_spec, in_params)
        kernel = rt.compile((FAMILY, (spec, words, 0)), lambda: (rd.launch_record(spec, words), rd.render(spec, words)))
        params = kernel.record.pack(M=rows, L=length, C=C, NC=NC, in0=in_params,
                                    post=planned.params if planned else b"")
        groups = -(-rows // (rd.WORKGROUP // G)) * NC
        rt.launch(kernel, bufs, params, groups)
        if _rec is not None:
            _rec.append((kernel, dict(bufs), params, groups, in_spec))
        if last:
            return g.Data(out, (rows,), planned.dtype, device)
        parts, length = (bufs["ON"], bufs["OM"], bufs["OS"]), NC


# Below this many elements the two or three dispatches of a column sum cost more host
# time than the strided reads they save (a 1000 x 1000 sum over axis 0 stays one pass).
COLUMNS_MIN_ELEMENTS = 1 << 21


def _columns_sum(node: g.Node, post=None):
    """The sum over axis 0 of a 2-D ``node`` with few columns, read coalesced, or None.

    Summing the columns of a tall (N, F) array directly gives each row of the reduction
    (a column) to a group of lanes that read it with a stride of F elements: every lane
    touches its own cache line, and each line is fetched once per column. Seen as
    (P, Q, F) with Q * F >= THREAD_ROWS_MIN, the sum over P runs one thread per (q, f),
    adjacent threads reading adjacent elements; the (Q, F) partials and the N - P * Q
    leftover rows are then summed as small reductions."""
    length, cols = node.shape
    Q = _pow2ceil(-(-THREAD_ROWS_MIN // cols))
    P = length // Q
    if P < 2 * PER_LANE or not _inner_strided(g.permute_view(node, (1, 0))):
        return None
    main = g.index_view(node, [("slice", 0, 1, P * Q), ("slice", 0, 1, cols)])
    main = g.reshape_view(main, (P, Q, cols))  # splits axis 0 only: a view of every leaf
    rest = length - P * Q
    partial, _ = reduce_rows(g.permute_view(main, (1, 2, 0)), Q * cols, P, "sum")
    total, _ = reduce_rows(g.permute_view(g.reshape_view(partial, (Q, cols)), (1, 0)), cols, Q, "sum",
                           post=None if rest else post)
    if rest:
        tail = g.index_view(node, [("slice", P * Q, 1, rest), ("slice", 0, 1, cols)])
        extra, _ = reduce_rows(g.permute_view(tail, (1, 0)), cols, rest, "sum")
        total = g.make_op("add", [total, extra], total.dtype)
        if post is not None:
            total = post(total)
    return total


# the elementwise op that merges two partial results of a reduction kind
_MERGE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def _reduce_in_slabs(node: g.Node, axes, kind: str, post=None) -> g.Node:
    """``reduce_axes`` of a node past the binding limit (``slabs``): each slab reduced
    on its own; slabs that differ only along reduced axes give partials of one part of
    the result, merged elementwise (``_MERGE``); each part is copied into its place in
    the result (contiguous there: a slab is one index of the axes before its own). The
    partials are of the reductions' 32-bit or wider storage dtypes, whole words."""
    if kind in rd.ARG_KINDS and len(axes) == node.ndim:
        return _arg_in_slabs(node, kind)
    device = node.device
    rt = device.runtime
    shape = node.shape
    parts, _ = slabs.plan(node)
    kept_dims = [d for d in range(node.ndim) if d not in axes]
    kept = tuple(shape[d] for d in kept_dims)
    kstrides = g.contiguous_strides(kept)
    if kind in rd.ARG_KINDS:
        whole = all(items[d][3] == shape[d] for items, _, _ in parts for d in axes)
        if not whole:
            return _arg_runs_in_slabs(node, axes, kind, parts, kept_dims, kept, kstrides)
        return _arg_rows_in_slabs(node, axes, kind, parts, kept_dims, kept, kstrides)
    acc: dict[int, g.Node] = {}  # flat start in the result -> merged partial
    for items, _, _ in parts:
        part = slabs.windowed(g.index_view(node, items))
        vals = reduce_axes(part, axes, kind)[0]
        start = sum(items[d][1] * st for d, st in zip(kept_dims, kstrides))
        prev = acc.get(start)
        acc[start] = vals if prev is None else g.make_op(_MERGE[kind], [prev, vals], vals.dtype)
    pdt = next(iter(acc.values())).dtype
    out = rt.alloc(max(g.prod(kept), 1) * pdt.itemsize)
    for start, vals in acc.items():
        vals = _contig(vals)
        rt.copy(vals.buf, vals.offset * pdt.itemsize, out, start * pdt.itemsize, vals.size * pdt.itemsize)
    total = g.Data(out, kept, pdt, device)
    return (post(total) if post is not None else total), None


def _arg_rows_in_slabs(node, axes, kind, parts, kept_dims, kept, kstrides):
    """argmax / argmin over ``axes`` past the binding limit where every slab holds whole
    runs of the reduced axes: each slab's values and positions are already the final
    ones of its part of the result, copied into place (positions as int64)."""
    device = node.device
    rt = device.runtime
    vout = pout = None
    for items, _, _ in parts:
        vals, ids = reduce_axes(slabs.windowed(g.index_view(node, items)), axes, kind)
        vals = _contig(vals)
        ids = _contig(g.make_op("cast", [ids], dt.int64))
        if vout is None:
            vout = rt.alloc(max(g.prod(kept), 1) * vals.dtype.itemsize)
            pout = rt.alloc(max(g.prod(kept), 1) * 8)
        start = sum(items[d][1] * st for d, st in zip(kept_dims, kstrides))
        rt.copy(vals.buf, vals.offset * vals.dtype.itemsize, vout, start * vals.dtype.itemsize,
                vals.size * vals.dtype.itemsize)
        rt.copy(ids.buf, ids.offset * 8, pout, start * 8, ids.size * 8)
    return g.Data(vout, kept, vals.dtype, device), g.Data(pout, kept, dt.int64, device)


def _arg_runs_in_slabs(node, axes, kind, parts, kept_dims, kept, kstrides):
    """argmax / argmin over ``axes`` past the binding limit where slabs cut the reduced
    axes: each slab's positions made global over the reduced axes (a slab holds one index
    of the axes before its own, a range of its own, the rest whole, so a constant per
    slab does it), and the slabs of one part of the result merged in order (``_better``),
    each part then copied into its place."""
    device = node.device
    rt = device.runtime
    red_shape = tuple(node.shape[d] for d in axes)
    rstrides = dict(zip(axes, g.contiguous_strides(red_shape)))
    acc: dict[int, tuple] = {}
    for items, _, _ in parts:
        vals, ids = reduce_axes(slabs.windowed(g.index_view(node, items)), axes, kind)
        shift = sum(items[d][1] * rstrides[d] for d in axes)
        gid = g.make_op("add", [g.make_op("cast", [ids], dt.int64), g.Const(shift, dt.int64, device, ids.shape)],
                        dt.int64)
        start = sum(items[d][1] * st for d, st in zip(kept_dims, kstrides))
        prev = acc.get(start)
        acc[start] = (vals, gid) if prev is None else _better(prev[0], prev[1], vals, gid, kind)
    vals0 = next(iter(acc.values()))[0]
    vout = rt.alloc(max(g.prod(kept), 1) * vals0.dtype.itemsize)
    pout = rt.alloc(max(g.prod(kept), 1) * 8)
    for start, (vals, gid) in acc.items():
        vals, gid = _contig(vals), _contig(gid)
        isz = vals.dtype.itemsize
        rt.copy(vals.buf, vals.offset * isz, vout, start * isz, vals.size * isz)
        rt.copy(gid.buf, gid.offset * 8, pout, start * 8, gid.size * 8)
    return g.Data(vout, kept, vals0.dtype, device), g.Data(pout, kept, dt.int64, device)


def _better(best, pos, vals, gid, kind):
    """(values, positions) merged with a later slab's: the later wins only where it is
    strictly more extreme, or a NaN where the earlier is not (NumPy's first-NaN rule)."""
    better = g.make_op("greater" if kind == "argmax" else "less", [vals, best], dt.bool)
    if best.dtype.kind in "fc":
        nan_v = g.make_op("isnan", [vals], dt.bool)
        nan_b = g.make_op("isnan", [best], dt.bool)
        better = g.make_op("logical_and", [g.make_op("logical_not", [nan_b], dt.bool),
                                           g.make_op("logical_or", [better, nan_v], dt.bool)], dt.bool)
    return (g.realize(g.make_op("where", [better, vals, best], vals.dtype)),
            g.realize(g.make_op("where", [better, gid, pos], dt.int64)))


def _arg_in_slabs(node: g.Node, kind: str):
    """argmax / argmin over every axis of a node past the binding limit: each slab's
    value and first position (a slab is a contiguous range of the flattened array, so
    its positions plus its start are global ones), merged in slab order so that the
    first extreme wins, a NaN first of all (NumPy's rule). Positions are int64."""
    device = node.device
    best = pos = None
    for items, start, _ in slabs.plan(node)[0]:
        vals, ids = reduce_axes(slabs.windowed(g.index_view(node, items)), tuple(range(node.ndim)), kind)
        vals = g.reshape_view(vals, ())
        gid = g.make_op("add", [g.make_op("cast", [g.reshape_view(ids, ())], dt.int64),
                                g.Const(start, dt.int64, device, ())], dt.int64)
        if best is None:
            best, pos = vals, gid
            continue
        best, pos = _better(best, pos, vals, gid, kind)
    return best, pos


def _contig(node: g.Node) -> g.Data:
    node = g.settle(node)
    if type(node) is g.Data and node.is_contiguous:
        return node
    return g.realize(g.Op("copy", [node], node.dtype))


def _moments_in_slabs(node: g.Node, axes, post) -> g.Node:
    """``moments_axes`` past the binding limit: the mean first, then the sum of squared
    deviations from it, each reduced in slabs (two reads of the data where the
    one-pass kernel makes one)."""
    device = node.device
    length = g.prod(node.shape[d] for d in axes)
    real = dt.real_of(node.dtype)
    total = _reduce_in_slabs(node, axes, "sum")[0]
    mean = g.make_op("divide", [total, g.Const(float(length), node.dtype, device, total.shape)], node.dtype)
    kd = tuple(1 if d in axes else n for d, n in enumerate(node.shape))
    dev = g.make_op("subtract", [node, g.broadcast_view(g.reshape_view(mean, kd), node.shape)], node.dtype)
    mag = g.make_op("abs", [dev], real) if node.dtype.kind == "c" else dev
    return _reduce_in_slabs(g.make_op("multiply", [mag, mag], real), axes, "sum", post)[0]


def reduce_axes(node: g.Node, axes, kind: str, post=None):
    axes = tuple(sorted(axes))
    node = g.settle(node)
    if slabs.too_big([node]):
        return _reduce_in_slabs(node, axes, kind, post)
    columns = (kind == "sum" and axes == (0,) and node.ndim == 2 and 1 < node.shape[1] < THREAD_ROWS_MIN
               and node.size >= COLUMNS_MIN_ELEMENTS)
    memo = not columns and (type(node) is g.Data or (type(node) is g.Op and node.n_nodes <= REALIZE_PRODUCER_NODES))
    if memo:
        sig = signature([node])
        # a post-map with a key (mean's division) is part of the program: replayed as
        # recorded; one without is planned again per call
        post_key = None if post is None else getattr(post, "key", False)
        key = (node.device.runtime, kind, axes, post_key, sig[0])
        program = _CALLS.get(key)
        if program is not None:
            done = program.run(node, sig, post)
            if done is not None:
                return done
    if columns:
        total = _columns_sum(node, post)
        if total is not None:
            return total, None
    keep = tuple(d for d in range(node.ndim) if d not in axes)
    rows = g.prod(node.shape[d] for d in keep)
    length = g.prod(node.shape[d] for d in axes)
    rec = [] if memo else None
    vals, ids = reduce_rows(g.permute_view(node, keep + axes), rows, length, kind, post=post, _rec=rec)
    shape = tuple(node.shape[d] for d in keep)
    if memo:
        if len(_CALLS) >= 4096:
            _CALLS.clear()
        _CALLS[key] = _Program.of(rec, sig, shape, ids is not None, post_key)
    vals = g.reshape_view(vals, shape)
    return vals, (g.reshape_view(ids, shape) if ids is not None else None)


# ------------------------------------------------------- repeated reductions
#
# A reduction whose input graph has the structure and layout of one seen before (the
# fusion planner's ``signature``: ops, dtypes, node sharing, leaf strides and vec4
# alignment, shape) runs the passes recorded then: their kernels, workgroup counts,
# output sizes and parameter blocks, with only the first block's leaf offsets and
# scalar values written in from the new graph. No view is built, no graph re-planned
# and no kernel looked up; the buffers were checked against each kernel's launch record
# when the passes were recorded. A loop step `sum((x - c) ** 2, axis=1)` costs the
# graph walk and one dispatch per pass.

_CALLS: dict = {}


def _first_block_layout(spec, params: bytes, leaves, consts):
    """(byte positions of the leaf offsets, of the scalars) in a first pass's parameter
    block as recorded for the graph of ``leaves`` and ``consts`` (its fused input at
    ``rd.HEADER_WORDS``), or None where the block does not hold them there."""
    if len(spec.leaves) != len(leaves) or len(spec.consts) != len(consts):
        return None
    base = 4 * rd.HEADER_WORDS
    leaf_at = [base + 4 * w for w in ew.leaf_layout(spec)]
    const_at = [base + 4 * w for w in ew.const_layout(spec)[0]]
    for at, leaf in zip(leaf_at, leaves):
        if params[at:at + 4] != (leaf.offset & 0xFFFFFFFF).to_bytes(4, "little"):
            return None
    for at, c in zip(const_at, consts):
        blob = ty.const_bytes(c.dtype, c.value)
        if params[at:at + len(blob)] != blob:
            return None
    return leaf_at, const_at


def _first_block(params: bytes, leaf_at, const_at, leaves, consts, recorded=None) -> bytes:
    """A recorded first block with the offsets and scalars of another graph written in;
    the block itself where ``recorded`` (the offsets and scalar bytes it holds) equals
    the new graph's (a loop step reducing the same arrays with the same scalars)."""
    if recorded is not None:
        blobs = tuple([const_blob(c) for c in consts]) if consts else ()
        if recorded == (tuple([leaf.offset for leaf in leaves]), blobs):
            return params
    params = bytearray(params)
    for at, leaf in zip(leaf_at, leaves):
        params[at:at + 4] = (leaf.offset & 0xFFFFFFFF).to_bytes(4, "little")
    for at, c in zip(const_at, consts):
        blob = const_blob(c)
        params[at:at + len(blob)] = blob
    return bytes(params)


_MOMENTS: dict = {}


class _Moments:
    """The passes of one ``moments_axes``, replayed for another graph of the same
    signature: the first reads the graph's buffers, each later one the three partial
    outputs of the one before; the last block's post-map words are the recorded ones
    (the program's key holds the post-map's)."""

    __slots__ = ("steps", "leaf_at", "const_at", "shape", "dtype")

    @classmethod
    def of(cls, passes, sig, out: g.Data, shape):
        _, leaves, consts, buffers, _ = sig
        if not passes:
            return None
        kernel, bufs, params, groups, in_spec = passes[0]
        if in_spec is None or [b.uid for b in bufs.get("in0", ())] != [b.uid for b in buffers]:
            return None
        layout = _first_block_layout(in_spec, params, leaves, consts)
        if layout is None:
            return None
        steps = []
        prev = None
        for i, (kernel, bufs, params, groups, in_spec) in enumerate(passes):
            if tuple(bufs) != kernel.record.arg_names:
                return None
            names = tuple(bufs)
            if i > 0 and (names[:3] != ("PN", "PM", "PS") or [bufs[n] for n in names[:3]] != prev):
                return None
            outs = [n for n in names if n in ("ON", "OM", "OS", "O")]
            steps.append((kernel, [bufs[n].size for n in outs], groups, params))
            prev = [bufs[n] for n in outs]
        if len(prev) != 1 or prev[0] is not out.buf:
            return None
        program = cls()
        program.steps = steps
        program.leaf_at, program.const_at = layout
        program.shape = shape
        program.dtype = out.dtype
        return program

    def run(self, device, sig) -> g.Data:
        _, leaves, consts, buffers, _ = sig
        rt = device.runtime
        prev = None
        for i, (kernel, out_sizes, groups, params) in enumerate(self.steps):
            if i == 0:
                params = _first_block(params, self.leaf_at, self.const_at, leaves, consts)
                bufs = list(buffers)
            else:
                bufs = list(prev)
            prev = [rt.alloc(size) for size in out_sizes]
            bufs += prev
            rt.launch_ordered(kernel, bufs, params, groups)
        return g.Data(prev[0], self.shape, self.dtype, device)


class _Program:
    """The passes of one reduction, replayed for another graph of the same signature."""

    __slots__ = ("steps", "shape", "arg", "leaf_at", "const_at", "post_spec", "dtype", "recorded")

    @classmethod
    def of(cls, passes, sig, shape, arg, post_key=None):
        """The program of ``passes`` (as recorded for the graph of ``sig``), or None where
        they do not follow the one pattern it replays: every pass launched, the first
        reads exactly the graph's buffers, leaves and scalars (a view that split a
        shared scalar in two would not), each later one the outputs of the one before."""
        _, leaves, consts, buffers, _ = sig
        if not passes or any(p[4] <= 0 for p in passes):  # a pass of no rows launched nothing
            return None
        kernel, bufs, params, groups, rows, spec, store, out_dtype, post = passes[0]
        if [b.uid for b in bufs["in0"]] != [b.uid for b in buffers] or "ix" in bufs:
            return None
        # the recorded block must hold this graph's own offsets and scalars where they
        # are written in later: a check that the layout read here is the one packed
        layout = _first_block_layout(spec, params, leaves, consts)
        if layout is None:
            return None
        steps = []
        prev = None
        for kernel, bufs, params, groups, rows, spec, store, out_dtype, post in passes:
            if prev is not None and (bufs["in0"] != [prev["O"]] or ("ix" in bufs) != arg
                                     or (arg and bufs["ix"] != [prev["OI"]])):
                return None
            # names checked once, here: the replay passes buffers in the record's order
            if tuple(bufs) != kernel.record.arg_names:
                return None
            post_words = len(pad_even(post.params)) if post is not None else 0
            steps.append((kernel, bufs["O"].size, bufs["OI"].size if arg else 0, groups, params, post_words))
            prev = bufs
        program = cls()
        program.steps = steps
        program.shape = shape
        program.arg = arg
        program.leaf_at, program.const_at = layout
        program.recorded = (tuple([leaf.offset for leaf in leaves]), tuple([const_blob(c) for c in consts]))
        last = passes[-1]
        # spec, rows, store of a post-map planned again per call; None for none, or for
        # one whose key holds it (then the last block's post words are replayed too)
        program.post_spec = (last[8].spec, last[4], last[6]) if last[8] is not None and not post_key else None
        program.dtype = last[7]
        return program

    def run(self, node, sig, post):
        """The reduction of ``node`` (whose ``signature`` is ``sig``), or None where its
        post-map plans to another structure than the recorded one."""
        _, leaves, consts, buffers, _ = sig
        device = node.device
        rt = device.runtime
        steps = self.steps
        last_out = planned = None
        if self.post_spec is not None:
            spec, rows, store = self.post_spec
            last_out = rt.alloc(steps[-1][1])
            planned = _Post(post, last_out, rows, store, device)
            if planned.spec != spec:
                return None
        arg = self.arg
        n = len(steps)
        prev_out = prev_idx = None
        for i, (kernel, out_bytes, idx_bytes, groups, params, post_words) in enumerate(steps):
            if i == 0:
                params = _first_block(params, self.leaf_at, self.const_at, leaves, consts, self.recorded)
                bufs = list(buffers)
            else:
                bufs = [prev_out, prev_idx] if arg else [prev_out]
            if i == n - 1 and planned is not None:
                params = params[:len(params) - post_words] + pad_even(planned.params)
                out = last_out
            else:
                out = rt.alloc(out_bytes)
            bufs.append(out)
            if arg:
                prev_idx = rt.alloc(idx_bytes)
                bufs.append(prev_idx)
            rt.launch_ordered(kernel, bufs, bytes(params), groups)
            prev_out = out
        vals = g.Data(prev_out, self.shape, planned.dtype if planned is not None else self.dtype, device)
        return vals, (g.Data(prev_idx, self.shape, dt.uint32, device) if arg else None)
