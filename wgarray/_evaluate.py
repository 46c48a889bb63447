"""Explicit realization of pending work."""
from __future__ import annotations

from . import _core
from ._graph.fusion import realize_many


def evaluate(*arrays) -> None:
    """Run the kernels that the given arrays are waiting on (fused: one kernel per
    shape and device for all of them) and submit them to the device."""
    for a in arrays:
        _core.check_array(a, "evaluate", "each argument")
    realize_many([a._node for a in arrays])
    for a in arrays:
        a._realize()
    for dev in {a.device for a in arrays}:
        dev.runtime.flush()
