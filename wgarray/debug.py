"""Introspection for developers: work counters and the fusion plan of an array."""
from __future__ import annotations

import sys

from ._graph.fusion import explain as _explain
from ._runtime import counters as _counters
from ._runtime.device import default_device
from ._runtime import launch as _launch


def counters() -> dict[str, int]:
    """A snapshot of the work done since the last reset (dispatches, submits, ...)."""
    return _counters.snapshot()


def reset_counters() -> None:
    _counters.COUNTERS.clear()


def explain(x, *, file=None) -> None:
    """Print the kernels that realizing ``x`` would run now, with their WGSL, to ``file``
    (default: standard output; pass an ``io.StringIO`` to keep the text)."""
    print(_explain(x), file=sys.stdout if file is None else file)


def log_kernels(file=sys.stderr) -> None:
    """Write every kernel compiled from now on to ``file`` (its cache key, then its
    WGSL); ``None`` stops. The environment variable WGARRAY_LOG_KERNELS=1 turns it on
    from the start."""
    _launch.log_kernels(file)


def profile(device=None):
    """Device time per kernel of the work recorded inside the block, from timestamp
    queries (the device needs the 'timestamp-query' feature)::

        with wgarray.debug.profile() as p:
            float(wgarray.linalg.eigh(x)[0][0])
        print(p.table())            # kernels by total device time
        p.kernels                   # {kernel name: [dispatches, seconds]}

    Every dispatch gets a compute pass of its own while profiling, so the block runs
    slower than it normally would; the figures are for finding where time goes."""
    if device is None:
        device = default_device()
    return device.runtime.gpu_profile()
