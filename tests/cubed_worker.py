"""A task for spawned pool workers in test_cubed.py, in a module of its own so that a
worker imports only wgarray's device module, not the test module and cubed."""
from __future__ import annotations

import os
import time


def device_index(pause: float) -> tuple[int, int]:
    """(pid, index of the device this process would use), after keeping the worker busy
    for ``pause`` seconds so that the next task goes to another worker."""
    from wgarray._runtime import device as _device

    time.sleep(pause)
    return os.getpid(), _device.default_device().index
