"""Reduction, scan and stream-compaction kernels on the device (no host computation).

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
``scan_rows(node, rows, length, kind="sum", include_initial=False) -> Data``
    Inclusive prefix sum/product of each run, shape ``(rows, length + include_initial)``,
    in the accumulator storage dtype (see ``reduce_rows``). With ``include_initial``
    slot 0 of each row is the identity: entries ``[:length]`` are the *exclusive* scan
    and entry ``[length]`` the row's total.
``scan_axis(node, axis, kind="sum", include_initial=False) -> Data``
    The same along any ``axis`` of ``node``, in ``node``'s axis order (no transposes):
    shape ``node.shape`` with the axis ``include_initial`` longer.
``exclusive_scan(node) -> Data``
    ``scan_rows(node, 1, node.size, "sum", include_initial=True)`` flattened: a Data of
    ``size + 1`` elements (exclusive prefix sums, then the total). Cast the node to
    uint32 first for u32 offsets (sort, unique, compaction).
``nonzero_flat(node) -> (Data, int)``
    Stream compaction: the flat C-order indices (int64, shape ``(count,)``) of the
    nonzero elements of ``node``, and ``count``. One scan of the fused flags, one read
    of 4 bytes (the count), one scatter; nothing else crosses to the host.

All pipelines are keyed by structure (ops, dtypes, layout classes, group size), never
by sizes, which travel as parameters.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph.fusion import _plan
from .._runtime.runtime import pack_params
from .._wgsl import elementwise as ew
from .._wgsl import reduce as rd
from .._wgsl import scan as sc
from .._wgsl import types as ty

__all__ = ["reduce_rows", "reduce_axes", "moments_axes", "scan_rows", "scan_axis", "exclusive_scan", "nonzero_flat",
           "store_dtype"]

# Elements one lane reads per chunk: enough to hide latency, short float chains. On an
# H200 (Vulkan) sum over 2^28 float32 reads 4.1 TB/s with 64 (~98% of a vec4 copy kernel's
# 4.2 TB/s); 32 gives 3.4 TB/s, 128 and 256 the same as 64.
PER_LANE = 64
THREAD_ROWS_MIN = 2048  # rows at which one thread per row beats cooperating lanes (strided rows)


# Plain loads of a contiguous Data (a realized array, a previous pass's partials) plan
# to one spec per (dtype, vec4-aligned offset, vec4, int64 mode) whatever the size: the
# shape simplifies to (n,). Cached here, such an input costs a dict lookup and its
# parameter words instead of a graph walk (the reduction of a realized array, and
# every second pass, take this path).
_CONTIGUOUS_SPECS: dict = {}


class _Input:
    """A fused input (like ``_realize.FusedInput``), optionally planned with vec4 leaves."""

    __slots__ = ("spec", "buffers", "params", "has_vec4")

    def __init__(self, node: g.Node, vec4: bool = False):
        node = g.settle(node)
        if type(node) is g.Data and node.buf is not None and node.size > 1 and node.is_contiguous:
            key = (node.dtype.name, node.offset % 4 == 0, vec4, node.device.has_int64)
            found = _CONTIGUOUS_SPECS.get(key)
            if found is None:
                plan = _plan([g.Op("copy", [node], node.dtype)], vec4=vec4)
                found = _CONTIGUOUS_SPECS[key] = (plan.spec, any(cls == "v" for cls, _ in plan.spec.leaves))
            n = node.size
            self.spec, self.has_vec4 = found
            self.buffers = [node.buf]
            self.params = ew.param_words(self.spec, n, (n,), (), ((node.offset, (1,)),))
            return
        if not isinstance(node, g.Op):
            node = g.Op("copy", [node], node.dtype)
        plan = _plan([node], vec4=vec4)
        self.spec = plan.spec
        self.buffers = plan.buffers
        self.params = ew.param_words(plan.spec, max(g.prod(node.shape), 1), plan.shape,
                                     plan.const_blobs, plan.leaf_views)
        self.has_vec4 = any(cls == "v" for cls, _ in plan.spec.leaves)


def store_dtype(dtype: dt.DType, device) -> dt.DType:
    """The dtype the kernels here store values of ``dtype`` in (8/16-bit -> 32-bit)."""
    return dt.BY_NAME[rd.STORE_DTYPE[ty.tag(dtype.name, device.has_int64)]]


def _pad_even(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 8)


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
    kernel = rt.kernel(("reduce", spec), lambda: (spec.name, rd.render(spec, in_words, idx_words), spec.writes,
                                                   spec.has_f64_params))
    if len(_KERNELS) >= 4096:
        _KERNELS.clear()
    _KERNELS[key] = kernel
    return kernel


# A fused producer with more nodes than this is realized before it is reduced. A loop
# `y = y + 1; float(sum(y))` never realizes y otherwise: each step would plan (and
# compute) the whole chain again, up to MAX_FUSED_NODES ops, inside the reduction.
# Realizing it once makes y a buffer that the next steps' short chains start from.
REALIZE_PRODUCER_NODES = 16


def reduce_rows(node: g.Node, rows: int, length: int, kind: str, _idx: g.Node | None = None, post=None):
    node = g.settle(node)
    if type(node) is g.Op and node.n_nodes > REALIZE_PRODUCER_NODES:
        node = g.realize(node)
    G, C = _choose(rows, length, _inner_strided(node))
    last = length <= C
    vals, ids, NC = _reduce_pass(node, rows, length, kind, G, C, _idx, post if last else None)
    if not last:
        return reduce_rows(vals, rows, NC, kind, ids, post)
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
        plan = _plan([node], vec4=False)
        if plan.buffers != [out] or len(plan.spec.leaves) != 1 or node.dtype.itemsize < 4:
            raise ValueError("reduce_rows: expected a post-map of the result and scalars only, "
                             "with a 32- or 64-bit result")
        self.spec = plan.spec
        self.params = ew.param_words(plan.spec, rows, plan.shape, plan.const_blobs, plan.leaf_views)
        self.dtype = node.dtype


def _reduce_pass(node: g.Node, rows: int, length: int, kind: str, G: int, C: int, _idx: g.Node | None = None,
                 post=None, scan=False):
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
    inp = _Input(node, vec4=quad)
    quad = quad and inp.has_vec4
    if not quad and any(cls == "v" for cls, _ in inp.spec.leaves):
        inp = _Input(node)
    idx = _Input(_idx) if _idx is not None else None
    n_out = rows * NC
    if post is not None:
        assert NC == 1 and not is_arg
        out = rt.alloc(max(n_out, 1) * out_dtype.itemsize)
        planned = _Post(post, out, rows, out_dtype, device)
        if planned.dtype.itemsize > out_dtype.itemsize:  # the map widens: the results need room
            out = rt.alloc(max(n_out, 1) * planned.dtype.itemsize)
            planned = _Post(post, out, rows, out_dtype, device)
        post, out_dtype = planned, planned.dtype
    else:
        out = rt.alloc(max(n_out, 1) * out_dtype.itemsize)
    kernel = _reduce_kernel(rt, kind, tag, G, quad, inp, idx, native, post, scan)
    bufs = inp.buffers + (idx.buffers if idx else []) + [out]
    out_idx = None
    if is_arg:
        out_idx = rt.alloc(max(n_out, 1) * 4)
        bufs.append(out_idx)
    params = (pack_params([rows, length, C, NC, 0, 0, 0, 0]) + _pad_even(inp.params)
              + (_pad_even(idx.params) if idx else b"") + (post.params if post else b""))
    groups = -(-rows // (rd.WORKGROUP // G)) * NC
    if rows > 0:
        rt.dispatch(kernel, bufs, params, groups)
    vals = g.Data(out, (n_out,), out_dtype, device)
    ids = g.Data(out_idx, (n_out,), dt.uint32, device) if is_arg else None
    return vals, ids, NC


def moments_axes(node: g.Node, axes, post) -> g.Data:
    """``post`` of the sum of squared deviations from the mean of ``node`` (real or
    complex floating) over ``axes``, in one pass over the data (then passes over the
    partials): the core of var and std. Result shape: the kept axes'."""
    axes = tuple(sorted(axes))
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
            inp = _Input(node, vec4=quad)
            quad = quad and inp.has_vec4
            if not quad and any(cls == "v" for cls, _ in inp.spec.leaves):
                inp = _Input(node)
            in_bufs, in_params, in_spec = inp.buffers, inp.params, inp.spec
        else:
            quad, in_bufs, in_params, in_spec = False, list(parts), b"", None
        n_out = rows * NC
        if last:
            out = rt.alloc(max(n_out, 1) * real.itemsize)
            planned = _Post(post, out, rows, real, device)
            outs = [out]
        else:
            planned = None
            outs = [rt.alloc(max(n_out, 1) * 4), rt.alloc(max(n_out, 1) * val_dtype.itemsize),
                    rt.alloc(max(n_out, 1) * val_dtype.itemsize)]
        spec = rd.ReduceSpec("moments", tag, G, quad, in_spec, None, native,
                             planned.spec if planned else None, False, parts is not None)
        words = rd.input_words(in_spec, in_params)
        kernel = rt.kernel(("reduce", spec), lambda: (spec.name, rd.render(spec, words), spec.writes,
                                                       spec.has_f64_params))
        params = (pack_params([rows, length, C, NC, 0, 0, 0, 0]) + _pad_even(in_params)
                  + (planned.params if planned else b""))
        rt.dispatch(kernel, in_bufs + outs, params, -(-rows // (rd.WORKGROUP // G)) * NC)
        if last:
            return g.Data(out, (rows,), planned.dtype, device)
        parts, length = outs, NC


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


def reduce_axes(node: g.Node, axes, kind: str, post=None):
    axes = tuple(sorted(axes))
    if (kind == "sum" and axes == (0,) and node.ndim == 2 and 1 < node.shape[1] < THREAD_ROWS_MIN
            and node.size >= COLUMNS_MIN_ELEMENTS):
        total = _columns_sum(node, post)
        if total is not None:
            return total, None
    keep = tuple(d for d in range(node.ndim) if d not in axes)
    rows = g.prod(node.shape[d] for d in keep)
    length = g.prod(node.shape[d] for d in axes)
    vals, ids = reduce_rows(g.permute_view(node, keep + axes), rows, length, kind, post=post)
    shape = tuple(node.shape[d] for d in keep)
    vals = g.reshape_view(vals, shape)
    return vals, (g.reshape_view(ids, shape) if ids is not None else None)


# ------------------------------------------------------------------------ scans

# Rows up to this long take the thread layout even when contiguous: a workgroup of the
# tile layout would leave most of its 256 threads idle.
SCAN_THREAD_MAX = 256


def scan_rows(node: g.Node, rows: int, length: int, kind: str = "sum", include_initial: bool = False) -> g.Data:
    out = _scan(node, rows, length, 1, kind, include_initial, None)
    return g.Data(out.buf, (rows, length + (1 if include_initial else 0)), out.dtype, node.device)


def scan_axis(node: g.Node, axis: int, kind: str = "sum", include_initial: bool = False) -> g.Data:
    """The scan of ``node`` along ``axis``: a contiguous Data of ``node``'s shape (the
    axis one longer with ``include_initial``), in the accumulator storage dtype."""
    shape = node.shape
    outer, inner = g.prod(shape[:axis]), g.prod(shape[axis + 1:])
    moved = None
    if inner > 1:
        perm = tuple(d for d in range(node.ndim) if d != axis) + (axis,)
        moved = g.permute_view(node, perm)
    out = _scan(node, outer, shape[axis], inner, kind, include_initial, moved)
    out_shape = shape[:axis] + (shape[axis] + (1 if include_initial else 0),) + shape[axis + 1:]
    return g.Data(out.buf, out_shape, out.dtype, node.device)


def _scan(node: g.Node, outer: int, length: int, inner: int, kind: str, include_initial: bool,
          moved: g.Node | None) -> g.Data:
    """Scan rows of ``node`` whose element ``l`` of row ``(o, i)`` is at flat index
    ``(o * length + l) * inner + i``; ``moved`` is ``node`` with the scanned axis
    permuted last (needed when ``inner > 1``). Output rows are laid out the same way."""
    node = g.settle(node)
    if type(node) is g.Op and node.n_nodes > REALIZE_PRODUCER_NODES:
        node = g.realize(node)
        moved = None
    device = node.device
    native = device.has_int64
    tag = ty.tag(node.dtype.name, native)
    if tag == "b":
        raise TypeError("scan_rows: cast bool values to uint32 first")
    out_dtype = dt.BY_NAME[rd.STORE_DTYPE[tag]]
    rt = device.runtime
    inc = 1 if include_initial else 0
    rows = outer * inner
    R = length + inc
    result = rt.alloc(max(rows * R, 1) * out_dtype.itemsize)
    flat = g.Data(result, (rows * R,), out_dtype, device)
    if rows == 0:
        return flat
    tile = inner == 1 and length > SCAN_THREAD_MAX
    if tile and tag in sc.LOOKBACK_TAGS and length > sc.ROUND:
        return _scan_lookback(node, rows, length, kind, tag, inc, result, flat)
    C = sc.TILE if tile else sc.CHUNK
    NC = max(1, -(-length // C))  # one chunk for an empty row: it writes the initial slot
    offsets = None
    if NC > 1:
        # Pass 1 (one partial per chunk) over the rows with the scanned axis last.
        src = node if inner == 1 else (moved if moved is not None else _moved(node, outer, length, inner))
        partials, _, _ = _reduce_pass(src, rows, length, kind, rd.WORKGROUP if tile else 1, C, scan=True)
        # Pass 2: offsets[m, c] = the combine of row m's chunks up to c (chunk c + 1's offset).
        offsets = _scan(g.Data(partials.buf, (rows, NC), out_dtype, device), rows, NC, 1, kind, False, None)
    quad = tile and length % 4 == 0
    inp = _Input(node, vec4=quad)
    quad = quad and inp.has_vec4
    if not quad and any(cls == "v" for cls, _ in inp.spec.leaves):
        inp = _Input(node)
    sub = tag in sc.SUBGROUP_TAGS and rt.subgroup_size is not None
    vec_out = tile and tag in sc.VEC4_TAGS and length % 4 == 0 and not inc
    spec = sc.ScanSpec(kind, tag, inp.spec, native, "tile" if tile else "thread", quad, vec_out, tile and sub)
    kernel = rt.kernel(("scan", spec), lambda: (spec.name, sc.render(spec), spec.writes, inp.spec.has_f64_params))
    head = pack_params([rows, length, NC, R, inc, C, 1 if offsets is not None else 0, inner])
    x_buf = offsets.buf if offsets is not None else rt.alloc(16)  # not read without offsets
    groups = rows * NC if tile else -(-(rows * NC) // sc.WORKGROUP)
    rt.dispatch(kernel, inp.buffers + [result, x_buf], head + _pad_even(inp.params), groups)
    return flat


def _scan_lookback(node, rows, length, kind, tag, inc, result, flat):
    """Single-pass scan of contiguous rows (``sc.render`` layout ``lookback``): one fill
    of the tiles' state words, one dispatch that reads and writes each element once."""
    device = node.device
    rt = device.runtime
    C = sc.ROUND
    NC = -(-length // C)
    n_state = 1 + 2 * rows * NC
    state = rt.alloc(4 * n_state)
    fill = rt.kernel(("scan_fill",), lambda: ("scan_fill", sc.render_fill(), [True], False))
    rt.dispatch(fill, [state], pack_params([n_state, 0]), -(-n_state // sc.WORKGROUP))
    quad = length % 4 == 0
    inp = _Input(node, vec4=quad)
    quad = quad and inp.has_vec4
    if not quad and any(cls == "v" for cls, _ in inp.spec.leaves):
        inp = _Input(node)
    sub = rt.subgroup_size is not None
    spec = sc.ScanSpec(kind, tag, inp.spec, device.has_int64, "lookback", quad, length % 4 == 0 and not inc, sub)
    kernel = rt.kernel(("scan", spec), lambda: (spec.name, sc.render(spec), spec.writes, inp.spec.has_f64_params))
    head = pack_params([rows, length, NC, length + inc, inc, C, sc.LOOKBACK_POLLS, 1])
    rt.dispatch(kernel, inp.buffers + [result, state], head + _pad_even(inp.params), rows * NC)
    return flat


def _moved(node: g.Node, outer: int, length: int, inner: int) -> g.Node:
    return g.permute_view(g.reshape_view(node, (outer, length, inner)), (0, 2, 1))


def exclusive_scan(node: g.Node) -> g.Data:
    n = node.size
    return g.reshape_view(scan_rows(node, 1, n, "sum", include_initial=True), (n + 1,))


# ----------------------------------------------------------- stream compaction

def nonzero_flags(node: g.Node) -> g.Node:
    """uint32 1/0 flags of the nonzero elements (lazy, fused into the next kernel)."""
    flags = node if node.dtype is dt.bool else g.make_op("cast", [node], dt.bool)
    return g.make_op("cast", [flags], dt.uint32)


def nonzero_flat(node: g.Node) -> tuple[g.Data, int]:
    device = node.device
    rt = device.runtime
    n = node.size
    if n == 0:
        return g.Data(rt.alloc(8), (0,), dt.int64, device), 0
    flags = nonzero_flags(node)
    pos = scan_rows(flags, 1, n, "sum", include_initial=True)
    count = int(rt.read(pos.buf, 4 * n, 4).view("<u4")[0])
    out = rt.alloc(max(count, 1) * 8)
    if count:
        inp = _Input(flags)
        spec = inp.spec
        kernel = rt.kernel(("compact", spec), lambda: ("compact", sc.render_scatter(spec),
                                                        [False] * len(inp.buffers) + [False, True],
                                                        spec.has_f64_params))
        head = pack_params([n, 0, 0, 0, 0, 0, 0, 0])
        rt.dispatch(kernel, inp.buffers + [pos.buf, out], head + inp.params, -(-n // 256))
    return g.Data(out, (count,), dt.int64, device), count
