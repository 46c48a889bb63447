"""The fused elementwise kernel's driver: one dispatch for a plan of the fusion planner
(``_graph.fusion``), whose spec is the kernel's structure and whose buffers, shape,
views and scalars are its arguments."""
from __future__ import annotations

from .._graph import node as g
from .._runtime.counters import count
from .._wgsl import elementwise as ew

FAMILY = "elementwise"


def run(plan, out_bufs=None) -> None:
    """Compute the plan's output nodes into new buffers (or into ``out_bufs``, windows
    of larger buffers holding a multiple of 4 elements or ending at their buffer's
    padded end: the kernel stores 4 elements an invocation) and make them Data nodes."""
    rt = plan.device.runtime
    spec = plan.spec
    n = g.prod(plan.shape)
    count("realizations")
    if out_bufs is None:
        out_bufs = []
        for node in plan.nodes:
            nbytes = -(-max(n, 1) // ew.PER_THREAD) * ew.PER_THREAD * node.dtype.itemsize
            out_bufs.append(rt.alloc(nbytes))
    if n > 0:
        # the plan cache keeps each runtime's kernel beside the spec (no hash of the spec
        # per call); the buffers are in the record's order by construction (the spec's
        # bindings, then its outputs), so only their count is checked
        kernel = plan.kernels.get(rt)
        if kernel is None:
            kernel = plan.kernels[rt] = rt.compile((FAMILY, spec), lambda: (ew.launch_record(spec), ew.render(spec)))
        threads = -(-n // ew.PER_THREAD)
        rt.launch_ordered(kernel, plan.buffers + out_bufs, plan.params, -(-threads // ew.WORKGROUP))
    for node, buf in zip(plan.nodes, out_bufs):
        node.realized = g.Data(buf, node.shape, node.dtype, node.device)
        node.srcs = ()  # the graph below is no longer needed; let its buffers go
