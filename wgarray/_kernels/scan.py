"""Scan (prefix sum / product) kernels on the device; the WGSL is ``_wgsl/scan.py``.

``scan_rows(node, rows, length, kind="sum", include_initial=False) -> Data``
    Inclusive prefix sum/product of each of ``rows`` consecutive runs of ``length``
    elements (flat C order of ``node``), shape ``(rows, length + include_initial)``, in
    the accumulator storage dtype (``reduce.store_dtype``: int32/uint32 for 8/16-bit
    values). With ``include_initial`` slot 0 of each row is the identity: entries
    ``[:length]`` are the *exclusive* scan and entry ``[length]`` the row's total.
``scan_axis(node, axis, kind="sum", include_initial=False) -> Data``
    The same along any ``axis`` of ``node``, in ``node``'s axis order (no transposes):
    shape ``node.shape`` with the axis ``include_initial`` longer.
``exclusive_scan(node, out=None) -> Data``
    The one exclusive scan: ``size + 1`` elements (the exclusive prefix sums, then the
    total) of the flat ``node``, into ``out`` (a buffer of at least that many elements)
    where given. Cast the node to uint32 first for u32 offsets (sort's digit counts,
    unique, compaction).

Every argument is a graph node whose elementwise producer is fused into the first
kernel that reads it; kernels are keyed ``("scan", spec)`` by structure only.
"""
from __future__ import annotations

import struct

from .. import _dtypes as dt
from .._graph import node as g
from .._graph.fusion import FusedInput
from .._runtime.launch import pad_even
from .._wgsl import reduce as rd
from .._wgsl import scan as sc
from .._wgsl import types as ty
from .reduce import REALIZE_PRODUCER_NODES, fused_input, reduce_pass

__all__ = ["scan_rows", "scan_axis", "exclusive_scan", "FAMILY"]

FAMILY = "scan"

# Rows up to this long take the thread layout even when contiguous: a workgroup of the
# tile layout would leave most of its 256 threads idle.
SCAN_THREAD_MAX = 256


def use_subgroups(rt) -> bool:
    """Whether workgroup-wide scans go through subgroup operations (the runtime found
    full subgroups of consecutive invocations); the workgroup-memory path otherwise."""
    return rt.subgroup_size is not None


def scan_rows(node: g.Node, rows: int, length: int, kind: str = "sum", include_initial: bool = False,
              out=None) -> g.Data:
    """``out``: the DeviceBuffer to write (large enough), else a new one."""
    out = _scan(node, rows, length, 1, kind, include_initial, None, out)
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


def exclusive_scan(node: g.Node, out=None) -> g.Data:
    return _scan(node, 1, node.size, 1, "sum", True, None, out)


_HEAD = struct.Struct(f"<{sc.HEADER_WORDS}I")


def scan_params(M: int, L: int, NC: int, R: int, S: int, C: int, flag: int, inner: int, inp: bytes) -> bytes:
    """A scan's parameter block as ``sc.launch_record`` lays it out (the header words,
    then the fused input's at word 8), packed by hand: every sort pass scans its digit
    counts, so this is on a hot path (``record.pack`` gives the same bytes; a
    device-free test checks it)."""
    return _HEAD.pack(M, L, NC, R, S, C, flag, inner) + pad_even(inp)


# One 16-byte buffer per runtime bound as the offsets of a scan that has none (never
# read): a fresh one per call would give every dispatch a new bind group.
_NO_OFFSETS: dict = {}  # runtime -> buffer (a runtime lives as long as its device)


def _no_offsets(rt):
    buf = _NO_OFFSETS.get(rt)
    if buf is None:
        buf = _NO_OFFSETS[rt] = rt.alloc(16)
    return buf


def _heavy(node: g.Op) -> bool:
    """Whether ``node`` is heavy to compile as a fused input (``rd.heavy_input``): the
    scan kernels call their input from each of a thread's unrolled elements (lavapipe's
    LLVM took 38 s on a float64 cumulative_sum of sin, 306 s on a complex128 one of
    exp), so such a producer is stored by its own elementwise kernel first; it is
    compute-bound anyway."""
    return rd.heavy_input(FusedInput(node).spec)


def _scan(node: g.Node, outer: int, length: int, inner: int, kind: str, include_initial: bool,
          moved: g.Node | None, out=None) -> g.Data:
    """Scan rows of ``node`` whose element ``l`` of row ``(o, i)`` is at flat index
    ``(o * length + l) * inner + i``; ``moved`` is ``node`` with the scanned axis
    permuted last (needed when ``inner > 1``). Output rows are laid out the same way."""
    node = g.settle(node)
    if type(node) is g.Op and (node.n_nodes > REALIZE_PRODUCER_NODES or _heavy(node)):
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
    result = out if out is not None else rt.alloc(max(rows * R, 1) * out_dtype.itemsize)
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
        partials, _, _ = reduce_pass(src, rows, length, kind, rd.WORKGROUP if tile else 1, C, scan=True)
        # Pass 2: offsets[m, c] = the combine of row m's chunks up to c (chunk c + 1's offset).
        offsets = _scan(g.Data(partials.buf, (rows, NC), out_dtype, device), rows, NC, 1, kind, False, None)
    quad = tile and length % 4 == 0
    inp = fused_input(node, quad)
    quad = quad and inp.has_vec4
    sub = tag in sc.SUBGROUP_TAGS and use_subgroups(rt)
    vec_out = tile and tag in sc.VEC4_TAGS and length % 4 == 0 and not inc
    spec = sc.ScanSpec(kind, tag, inp.spec, native, "tile" if tile else "thread", quad, vec_out, tile and sub)
    kernel = rt.compile((FAMILY, spec), lambda: (sc.launch_record(spec), sc.render(spec)))
    params = scan_params(rows, length, NC, R, inc, C, int(offsets is not None), inner, inp.params)
    x_buf = offsets.buf if offsets is not None else _no_offsets(rt)
    groups = rows * NC if tile else -(-(rows * NC) // sc.WORKGROUP)
    rt.launch(kernel, {"in0": inp.buffers, "O": result, "X": x_buf}, params, groups)
    return flat


def _scan_lookback(node, rows, length, kind, tag, inc, result, flat):
    """Single-pass scan of contiguous rows (``sc.render`` layout ``lookback``): one fill
    of the tiles' state words, one dispatch that reads and writes each element once."""
    device = node.device
    rt = device.runtime
    C = sc.LOOKBACK_ROUND
    NC = -(-length // C)
    n_state = 1 + 2 * rows * NC
    state = rt.alloc(4 * n_state)
    fill = rt.compile((FAMILY, "fill"), lambda: (sc.FILL_RECORD, sc.render_fill()))
    rt.launch(fill, {"ST": state}, fill.record.pack(n=n_state), -(-n_state // sc.WORKGROUP))
    quad = length % 4 == 0
    inp = fused_input(node, quad)
    quad = quad and inp.has_vec4
    sub = use_subgroups(rt)
    spec = sc.ScanSpec(kind, tag, inp.spec, device.has_int64, "lookback", quad, length % 4 == 0 and not inc, sub,
                       sc.LOOKBACK_WINDOW)
    kernel = rt.compile((FAMILY, spec), lambda: (sc.launch_record(spec), sc.render(spec)))
    params = scan_params(rows, length, NC, length + inc, inc, C, sc.LOOKBACK_POLLS, 1, inp.params)
    rt.launch(kernel, {"in0": inp.buffers, "O": result, "ST": state}, params, rows * NC)
    return flat


def _moved(node: g.Node, outer: int, length: int, inner: int) -> g.Node:
    return g.permute_view(g.reshape_view(node, (outer, length, inner)), (0, 2, 1))
