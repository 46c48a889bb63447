"""Moving data between the host (NumPy) and a device.

Buffers hold NumPy's own bytes, so an upload is one ``write_buffer`` of the array's
memory and a download is one copy into a pooled mapped staging buffer.
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from . import node as g


def upload(host: np.ndarray, device) -> g.Data:
    dtype = dt.from_numpy(host.dtype)
    device.check_dtype(dtype, "asarray")
    shape = host.shape  # np.ascontiguousarray makes 0-d arrays 1-d
    host = np.ascontiguousarray(host, dtype=host.dtype.newbyteorder("<"))
    buf = device.runtime.upload(host.reshape(-1).view(np.uint8) if host.size else b"")
    buf.sealed = True  # an array's data: written only through the namespace (wgarray/_known.py)
    return g.Data(buf, shape, dtype, device)


def download(data: g.Data) -> np.ndarray:
    """A new host array with the values of ``data`` (copied to contiguous on the device first)."""
    if data.size == 0:
        return np.empty(data.shape, data.dtype.numpy)
    if not data.is_contiguous:
        data = g.realize(g.Op("copy", [data], data.dtype))
    rt = data.device.runtime
    item = data.dtype.itemsize
    raw = rt.read(data.buf, data.offset * item, data.size * item)
    return raw.view(data.dtype.numpy).reshape(data.shape)
