"""Introspection for developers: work counters and the fusion plan of an array."""
from __future__ import annotations

import collections

_COUNTERS: collections.Counter = collections.Counter()
_KEYS = ("dispatches", "submits", "pipelines_compiled", "readbacks", "bytes_uploaded",
         "bytes_downloaded", "uploads", "buffers_created", "realizations")


def count(name: str, n: int = 1) -> None:
    _COUNTERS[name] += n


def counters() -> dict[str, int]:
    """A snapshot of the work done since the last reset (dispatches, submits, ...)."""
    return {k: _COUNTERS.get(k, 0) for k in sorted(set(_KEYS) | set(_COUNTERS))}


def reset_counters() -> None:
    _COUNTERS.clear()


def explain(x) -> str:
    """The kernels that realizing ``x`` would run now, with their WGSL."""
    from ._realize import explain as _explain

    return _explain(x)
