"""The fusion planner: cut pending elementwise graphs into fused kernels.

``realize(node)`` makes one kernel for the whole elementwise DAG under ``node``;
``realize_many(nodes)`` fuses every pending node of one shape and device into a single
kernel with several outputs, each run by ``_kernels.elementwise.run``. A kernel's cache
key is ``("elementwise", spec)`` (ops, dtypes, layout classes, rank), so sizes, offsets,
strides and scalar values never cause a recompile. ``FusedInput`` is the planner's
reader for other kernel families: a node's elementwise producer, fused into them.
"""
from __future__ import annotations

import math
import os
import struct

from .. import _dtypes as dt
from . import node as g
from . import slabs
from .._kernels.elementwise import run as run_elementwise
from .._runtime.numerics import float32_behaviour
from .._runtime.runtime import Straddle
from .._wgsl import elementwise as ew
from .._wgsl import types as ty

# float32 division's short fma path on devices whose fma is fused (realmath's
# f32_divide_fma); WGARRAY_FMA_DIVISION=0 keeps the fma-free exact path everywhere
FMA_DIVISION = os.environ.get("WGARRAY_FMA_DIVISION", "1") != "0"
_FMA_OPS = frozenset(("divide", "reciprocal"))


def realize(node: g.Node) -> g.Data:
    node = g.settle(node)
    if isinstance(node, g.Data):
        return node
    if isinstance(node, (g.Const, g.Iota)):
        node = g.Op("copy", [node], node.dtype)
    with node.device.runtime.lock:  # realize_many's work for one node, without its grouping
        if node.realized is None:
            _run_within_binding_limit([node])
    return node.realized


g._realizer = realize  # make_op and g.realize call the planner (see node.realize)


def realize_many(nodes) -> None:
    """Realize pending ops, one fused kernel per (device, shape) group."""
    groups: dict = {}
    for node in nodes:
        node = g.settle(node)
        if isinstance(node, g.Op) and node.realized is None:
            groups.setdefault((node.device, node.shape), {})[id(node)] = node
    for (device, _), group in groups.items():
        with device.runtime.lock:  # one thread realizes a node; the others then see its data
            pending = [n for n in group.values() if n.realized is None]
            if pending:
                _run_within_binding_limit(pending)


def binding_limit(device) -> int:
    """Storage bindings one kernel may have on ``device``: every binding counts against
    both limits (lavapipe: 32 storage buffers; the H200: 524288, and 1000 bindings)."""
    limits = device.limits
    return min(limits.get("max-storage-buffers-per-shader-stage") or 8,
               limits.get("max-bindings-per-bind-group") or 1000)


def _run_within_binding_limit(nodes) -> None:
    """Run ``nodes`` as few kernels as the device's storage-binding limit allows
    (inputs, outputs and the parameter block, or two, per kernel): a group too wide for
    one kernel is split, each part planned after the previous ran."""
    limit = binding_limit(nodes[0].device)
    i = 0
    while i < len(nodes):
        k = min(len(nodes) - i, max(1, limit - 2))
        while True:
            part = [n for n in nodes[i:i + k] if g.settle(n) is n and n.realized is None]
            if not part:
                break
            if slabs.too_big(part):
                for n in part:
                    realize_in_slabs(n)
                break
            plan = _plan(part)
            if k == 1 or len(plan.buffers) + len(part) + 1 + plan.spec.has_f64_params <= limit:
                run_elementwise(plan)
                break
            k //= 2
        i += k


def realize_in_slabs(node: g.Op) -> None:
    """Realize an elementwise ``node`` whose output or leaves are past the binding limit
    slab by slab (``slabs``): each slab's graph, its leaves rebound to windows, runs
    into a window of the whole output buffer, or, where that window's start is not
    aligned for a binding, into a temporary copied into place."""
    device = node.device
    rt = device.runtime
    shape = node.shape
    n = node.size
    isz_out = node.dtype.itemsize
    align = device.binding_alignment
    quantum = ew.PER_THREAD * (align // math.gcd(align, ew.PER_THREAD * isz_out))
    out = rt.alloc(-(-max(n, 1) // ew.PER_THREAD) * ew.PER_THREAD * isz_out)
    try:
        parts, _ = slabs.plan(node, quantum)
    except slabs.Spread:  # slabs too narrow for aligned windows: unaligned ones, copied into place
        parts, _ = slabs.plan(node, 4 // math.gcd(4, isz_out))
    for items, start, count in parts:
        part = slabs.windowed(g.index_view(node, items))
        if type(part) is not g.Op:
            part = g.Op("copy", [part], part.dtype)
        end = start + count
        padded = end if end < n else -(-n // ew.PER_THREAD) * ew.PER_THREAD
        if (start * isz_out) % align == 0 and (padded - start) % ew.PER_THREAD == 0:
            try:
                window = rt.window(out, start * isz_out, (padded - start) * isz_out)
            except Straddle:  # across two segments of the result: computed apart, copied into place
                window = None
            if window is not None:
                run_elementwise(_plan([part]), [window])
                continue
        if (start * isz_out) % 4 or (count * isz_out) % 4:
            raise MemoryError(f"{slabs.rt_caller()}: cannot split a result of shape {shape} and dtype {node.dtype} "
                              f"past the storage-binding limit ({device.max_binding_bytes} bytes) into word-aligned "
                              f"slabs")
        run_elementwise(_plan([part]))
        piece = part.realized
        rt.copy(piece.buf, 0, out, start * isz_out, count * isz_out)
    node.realized = g.Data(out, shape, node.dtype, device)
    node.srcs = ()


class _Plan:
    __slots__ = ("spec", "nodes", "shape", "buffers", "leaf_views", "const_blobs", "device", "params", "kernels")


def _simplify(shape, leaf_strides):
    """Drop unit dims and merge dims that every leaf walks contiguously."""
    dims = [d for d, n in enumerate(shape) if n != 1]
    new_shape = [shape[d] for d in dims]
    strides = [[st[d] for d in dims] for st in leaf_strides]
    d = len(new_shape) - 1
    while d > 0:
        if all(st[d - 1] == st[d] * new_shape[d] for st in strides):
            new_shape[d - 1] *= new_shape[d]
            del new_shape[d]
            for st in strides:
                st[d - 1] = st[d]
                del st[d]
        d -= 1
    return tuple(new_shape), [tuple(st) for st in strides]


PLAN_CACHE_ENTRIES = 4096
_PLANS: dict = {}


def _derive(out_shape, leaves, slots, n_buffers, vec4, native, fma_fused, instrs, const_dtypes, out_refs):
    """(spec, simplified shape, simplified leaf strides) of a visited graph."""
    shape, leaf_strides = _simplify(out_shape, [leaf.strides for leaf in leaves])
    contiguous = g.contiguous_strides(shape)
    classes = []
    for leaf, strides in zip(leaves, leaf_strides):
        if type(leaf) is g.Iota:
            classes.append("ic" if strides == contiguous else "ig")
        elif all(st == 0 for st in strides):
            classes.append("s")
        elif strides == contiguous:
            classes.append("v" if ty.is_vec4able(leaf.dtype.name) and leaf.offset % 4 == 0 else "c")
        else:
            classes.append("g")
    binding_vec4 = [vec4] * n_buffers
    binding_dtype = {}
    for leaf, cls, b in zip(leaves, classes, slots):
        if b >= 0:
            binding_dtype[b] = leaf.dtype.name
            if cls != "v":
                binding_vec4[b] = False
    spec_leaves = []
    for cls, b in zip(classes, slots):
        if cls == "v" and not binding_vec4[b]:
            cls = "c"
        spec_leaves.append((cls, b))
    spec = ew.ElementwiseSpec(
        ndim=len(shape),
        int64_native=native,
        bindings=tuple((binding_dtype[b], binding_vec4[b]) for b in range(n_buffers)),
        leaves=tuple(spec_leaves),
        consts=const_dtypes,
        instrs=instrs,
        outputs=out_refs,
        fma_fused=fma_fused,
    )
    return spec, shape, leaf_strides


def signature(outputs, vec4: bool = True):
    """One walk of the pending graph of ``outputs``: ``(key, leaves, consts, buffers,
    slots)``. ``key`` is the graph's structure and layout (ops, dtypes, the sharing of
    nodes, each leaf's binding, dtype, strides and vec4 alignment, the shape), never
    buffers, offsets or scalar values: two graphs of one key plan to one spec, and the
    planners that memoize by it (``_PLANS``, the reduction driver's) read only
    ``leaves`` (offsets), ``consts`` (values) and ``buffers`` per call."""
    device = outputs[0].device
    seen: dict[int, tuple] = {}
    instrs: list = []  # (op, dtype, arg, operand refs) in post order
    leaves: list = []
    leaf_index: dict = {}
    leaf_keys: list = []
    slots: list = []  # per leaf: its buffer's binding, -1 for an index leaf
    buffers: list = []
    buffer_index: dict[int, int] = {}
    consts: list = []
    const_dtypes: list = []
    divides: list = []  # the result dtypes of the float division ops (see fma_fused)
    Op, Data, Const, Iota = g.Op, g.Data, g.Const, g.Iota

    def visit(node):
        """The operand ref of ``node``: each op after its sources (in order), each leaf
        and scalar where it is first reached."""
        if type(node) is Op and node.realized is not None:  # settle
            node = node.realized
        ref = seen.get(id(node))
        if ref is not None:
            return ref
        t = type(node)
        if t is Op:
            # the sources as seen now: another thread may realize an op (and drop its
            # sources) while this plan is made
            # (one and two sources spelled out: a comprehension is a call of its own, and
            # every lazy op's reduction or realization walks here)
            srcs = node.srcs
            if len(srcs) == 1:
                refs = (visit(srcs[0]),)
            elif len(srcs) == 2:
                refs = (visit(srcs[0]), visit(srcs[1]))
            else:
                refs = tuple([visit(s) for s in srcs])
            ref = ("I", len(instrs))
            op = node.op
            instrs.append((op, node.dtype.name, node.arg, refs))
            if op in _FMA_OPS:
                divides.append(node.dtype.name)
        elif t is Const:
            ref = ("K", len(consts))
            consts.append(node)
            const_dtypes.append(node.dtype.name)
        else:  # Data or Iota
            key = (node.buf.uid if t is Data else None, node.offset, node.strides)
            i = leaf_index.get(key)
            if i is None:
                i = leaf_index[key] = len(leaves)
                leaves.append(node)
                if t is Iota:
                    slots.append(-1)
                    leaf_keys.append((-1, node.strides))
                else:
                    b = buffer_index.get(node.buf.uid)
                    if b is None:
                        b = buffer_index[node.buf.uid] = len(buffers)
                        buffers.append(node.buf)
                    slots.append(b)
                    leaf_keys.append((b, node.dtype.name, node.offset % 4 == 0, node.strides))
            ref = ("L", i)
        seen[id(node)] = ref
        return ref

    try:
        if len(outputs) == 1:
            out_refs = ((visit(outputs[0]), outputs[0].dtype.name),)
        else:
            out_refs = tuple([(visit(o), o.dtype.name) for o in outputs])
    finally:
        # visit refers to itself through its closure cell: clearing the cell breaks
        # that cycle, which would otherwise hold this walk's leaves (and their buffers)
        # until the cyclic collector runs, so a loop step could not reuse them
        visit = None  # noqa: F841
    const_dtypes = tuple(const_dtypes)
    # the device's fma matters to float32 division alone (its short fma path): probed,
    # and part of the key, only for kernels that divide float32
    fma_fused = bool(FMA_DIVISION and "float32" in divides and float32_behaviour(device).fma_fused)
    key = (outputs[0].shape, device.has_int64, fma_fused, vec4, tuple(instrs), tuple(leaf_keys), const_dtypes,
           out_refs)
    return key, leaves, consts, buffers, slots


_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def const_blob(c: g.Const) -> bytes:
    """``ty.const_bytes`` of a scalar node, float32 and float64 packed by ``struct``
    (the same C conversion as NumPy's; ~0.3 us instead of ~1.5 for a NumPy scalar on
    the path of every loop step). A float32 overflow is NumPy's: infinity."""
    dtype = c.dtype
    if type(c.value) is float:
        try:
            if dtype is dt.float32:
                return _F32.pack(c.value)
            if dtype is dt.float64:
                return _F64.pack(c.value)
        except OverflowError:
            pass
    return ty.const_bytes(dtype, c.value)


def _plan(outputs, vec4: bool = True) -> _Plan:
    key, leaves, consts, buffers, slots = signature(outputs, vec4)
    # A graph planned before (same ops, dtypes, leaf layouts and shape; buffers and
    # scalar values may differ) takes its spec from here instead of being classified
    # again: the step of a loop plans once.
    found = _PLANS.get(key)
    if found is None:
        shape, native, fma_fused, vec4, instrs, _, const_dtypes, out_refs = key
        found = _PlanEntry(*_derive(shape, leaves, slots, len(buffers), vec4, native, fma_fused, instrs,
                                    const_dtypes, out_refs))
        if len(_PLANS) >= PLAN_CACHE_ENTRIES:
            _PLANS.clear()
        _PLANS[key] = found
    plan = _Plan()
    plan.spec = found.spec
    plan.nodes = outputs
    plan.shape = found.shape
    plan.buffers = buffers
    plan.leaf_views = [(leaf.offset, st) for leaf, st in zip(leaves, found.leaf_strides)]
    plan.const_blobs = blobs = [const_blob(c) for c in consts]
    plan.device = outputs[0].device
    plan.params = found.params(leaves, blobs)
    plan.kernels = found.kernels
    return plan


class _PlanEntry:
    """What ``_PLANS`` keeps for a graph signature: the spec, the simplified shape and
    leaf strides, the elementwise kernel of each runtime, and the parameter block of
    the elementwise kernel (``ew.param_words``) but for the leaf offsets and scalar
    values, which are written in per call at their places."""

    __slots__ = ("spec", "shape", "leaf_strides", "kernels", "template", "leaf_at", "const_at")

    def __init__(self, spec, shape, leaf_strides):
        self.spec = spec
        self.shape = shape
        self.leaf_strides = leaf_strides
        self.kernels: dict = {}  # runtime -> Kernel
        cwords, _ = ew.const_layout(spec)
        blobs = [b"\0" * 4 * ty.const_words(name) for name in spec.consts]
        self.template = ew.param_words(spec, max(g.prod(shape), 1), shape, blobs,
                                       [(0, st) for st in leaf_strides])
        self.leaf_at = [4 * w for w in ew.leaf_layout(spec)]
        self.const_at = [4 * w for w in cwords]

    def params(self, leaves, blobs) -> bytes:
        words = bytearray(self.template)
        for at, leaf in zip(self.leaf_at, leaves):
            words[at:at + 4] = (leaf.offset & 0xFFFFFFFF).to_bytes(4, "little")
        for at, blob in zip(self.const_at, blobs):
            words[at:at + len(blob)] = blob
        return bytes(words)


# Plain loads of a contiguous Data (a realized array, a previous pass's partials) plan
# to one spec per (dtype, vec4-aligned offset, vec4, int64 mode) whatever the size: the
# shape simplifies to (n,). Cached here, such an input costs a dict lookup and its
# parameter words instead of a graph walk (the reduction of a realized array, and
# every second pass, take this path).
_CONTIGUOUS_SPECS: dict = {}


class FusedInput:
    """An input of a non-elementwise kernel, with its elementwise producer fused in.

    ``spec`` renders (``elementwise.render_input``) to ``fn {prefix}at(e: u32) -> T``,
    the value at flat C-order index ``e`` of ``shape``; ``buffers`` are bound in order
    from the binding base the kernel chose; ``params`` go at an even word of its P.
    With ``vec4`` the contiguous 32-bit leaves at 4-aligned offsets are planned as vec4
    loads (``has_vec4`` says whether any is; ``reduce.render_input_quad`` reads them).
    """

    __slots__ = ("spec", "buffers", "params", "shape", "dtype", "has_vec4")

    def __init__(self, node: g.Node, vec4: bool = False):
        node = g.settle(node)
        if node.device.big:  # leaves on buffers past the binding limit: their windows
            node = slabs.windowed(node)
        self.shape = node.shape
        self.dtype = node.dtype
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
            # a scalar, an index grid or a strided Data: 'copy' lowers to the value itself
            node = g.Op("copy", [node], node.dtype)
        plan = _plan([node], vec4=vec4)
        self.spec = plan.spec
        self.buffers = plan.buffers
        self.params = plan.params
        self.has_vec4 = vec4 and any(cls == "v" for cls, _ in plan.spec.leaves)

    @property
    def n_words(self) -> int:
        return len(self.params) // 4


def explain(x) -> str:
    node = g.settle(x._node if hasattr(x, "_node") else x)
    if not isinstance(node, g.Op):
        return f"{node!r}: already realized, nothing to run"
    plan = _plan([node])
    spec = plan.spec
    return f"1 kernel: {spec.name} over shape {plan.shape}\n{ew.render(spec)}"
