"""Work counters (dispatches, submits, readbacks, bytes moved, ...): the runtime and the
fusion planner count here; ``wgarray.debug`` reads and resets them."""
from __future__ import annotations

import collections
import contextlib

COUNTERS: collections.Counter = collections.Counter()
KEYS = ("dispatches", "submits", "pipelines_compiled", "readbacks", "bytes_uploaded",
        "bytes_downloaded", "uploads", "buffers_created", "realizations")


def count(name: str, n: int = 1) -> None:
    COUNTERS[name] += n


def snapshot() -> dict[str, int]:
    return {k: COUNTERS.get(k, 0) for k in sorted(set(KEYS) | set(COUNTERS))}


@contextlib.contextmanager
def uncounted():
    """Work done inside the block (device probes) leaves the counters as they were."""
    saved = collections.Counter(COUNTERS)
    try:
        yield
    finally:
        COUNTERS.clear()
        COUNTERS.update(saved)
