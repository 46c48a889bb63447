"""Stream compaction on the device: keep the elements whose flag is set, in order.

One compaction for every user: ``positions(flags)`` scans the uint32 0/1 ``flags``
(a lazy node, fused into the scan) into each kept element's output slot and reads back
one word, the count; a scatter kernel of the caller's then writes each kept element
at its slot. ``nonzero_flat`` scatters flat indices; ``sort.unique`` scatters the
first occurrence, run start and inverse of each unique value.

``nonzero_flat(node) -> (Data, int)``
    The flat C-order indices (int64, shape ``(count,)``) of the nonzero elements of
    ``node``, and ``count``: one scan of the fused flags, one read of 4 bytes (none
    where the caller knows the count and passes it), one scatter; nothing else
    crosses to the host.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import node as g
from .._graph.fusion import FusedInput
from .._runtime.launch import workgroups
from .._wgsl import scan as sc
from .scan import exclusive_scan

__all__ = ["nonzero_flags", "positions", "nonzero_flat", "FAMILY"]

FAMILY = "compact"


def nonzero_flags(node: g.Node) -> g.Node:
    """uint32 1/0 flags of the nonzero elements (lazy, fused into the next kernel)."""
    flags = node if node.dtype is dt.bool else g.make_op("cast", [node], dt.bool)
    return g.make_op("cast", [flags], dt.uint32)


def positions(flags: g.Node, count: int | None = None) -> tuple[g.Data, int]:
    """The exclusive scan of the (n,) uint32 0/1 ``flags`` (``n + 1`` words: each kept
    element's output slot, then the count) and the count, read back unless the caller
    knows it (``count``)."""
    pos = exclusive_scan(flags)
    n = flags.size
    if count is None:
        count = int(pos.device.runtime.read(pos.buf, 4 * n, 4).view("<u4")[0])
    return pos, count


def nonzero_flat(node: g.Node, count: int | None = None) -> tuple[g.Data, int]:
    device = node.device
    rt = device.runtime
    n = node.size
    if n == 0:
        return g.Data(rt.alloc(8), (0,), dt.int64, device), 0
    flags = nonzero_flags(node)
    pos, count = positions(flags, count)
    out = rt.alloc(max(count, 1) * 8)
    if count:
        inp = FusedInput(flags)
        spec = inp.spec
        kernel = rt.compile((FAMILY, spec), lambda: (sc.scatter_record(spec), sc.render_scatter(spec)))
        rt.launch(kernel, {"in0": inp.buffers, "POS": pos.buf, "OUT": out}, kernel.record.pack(n=n, in0=inp.params),
                  workgroups(n, sc.WORKGROUP))
    return g.Data(out, (count,), dt.int64, device), count
