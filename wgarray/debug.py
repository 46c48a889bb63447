"""Introspection for developers: work counters and the fusion plan of an array."""
from __future__ import annotations

import contextlib as _contextlib
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


@_contextlib.contextmanager
def binding_limit(nbytes: int, device=None):
    """Lower ``device``'s storage-binding limit to ``nbytes`` (a multiple of 16) inside
    the block, so that small arrays take the paths of arrays past the real limit:
    elementwise work and reductions in slabs over windows of their buffers, and a
    MemoryError from the functions that do not handle such arrays yet."""
    device = default_device() if device is None else device
    if nbytes % 16 or nbytes < 4096:
        raise ValueError(f"binding_limit: expected a multiple of 16 bytes, at least 4096, got {nbytes}")
    with device.runtime.lock:
        old = device._binding_override
        device._binding_override = nbytes
        device.big = True
    try:
        yield
    finally:
        with device.runtime.lock:
            device.runtime.flush()
            device._binding_override = old


@_contextlib.contextmanager
def segment_limit(nbytes: int, device=None):
    """Lower ``device``'s largest buffer to ``nbytes`` (a power of two, at least 8192)
    inside the block, so that arrays past it are stored in segments of several
    buffers; the binding limit follows it down where it was larger."""
    device = default_device() if device is None else device
    if nbytes < 8192 or nbytes & (nbytes - 1):
        raise ValueError(f"segment_limit: expected a power of two of at least 8192 bytes, got {nbytes}")
    rt = device.runtime
    with rt.lock:
        old = device._buffer_override
        device._buffer_override = nbytes
        device.big = True
        rt.pool.limit = None
    try:
        yield
    finally:
        with rt.lock:
            rt.flush()
            device._buffer_override = old
            rt.pool.limit = None
