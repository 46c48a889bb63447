"""The namespace cubed computes its chunks with:
``CUBED_BACKEND_ARRAY_API_MODULE=wgarray.cubed_backend`` (set before cubed is imported).

It is wgarray's own namespace with the few calls cubed makes of its backend as it would
of NumPy, outside the standard:

- ``nansum`` (cubed's ``nansum`` and ``nanmean`` call it on every chunk);
- ``mean(x, dtype=...)`` (cubed's ``var``/``std`` accumulate the chunk mean in float64);
- ``take(x, 0, axis=...)`` with a Python int (NumPy's form: the axis is removed);
- ``__array_namespace_info__().default_dtypes(device="cpu")``: cubed passes its own
  array's device, the string ``"cpu"``, which names no wgarray device; it means the
  process's default device here.

Importing it also makes ``WGARRAY_DEVICE=per-process`` the default (an explicit
``WGARRAY_DEVICE`` wins): each worker of cubed's ``processes`` executor then opens its
own device, one per GPU in turn. See docs/cubed.md.
"""
from __future__ import annotations

import builtins
import os

os.environ.setdefault("WGARRAY_DEVICE", "per-process")  # before any device is chosen

import wgarray as _wg  # noqa: E402
from wgarray import *  # noqa: E402,F401,F403
from wgarray import __array_api_version__, __all__ as _wg_all  # noqa: E402,F401
from wgarray._validation import normalize_axis  # noqa: E402

# cubed's own arrays report this device; it stands for "wherever the chunk runs".
_CUBED_DEVICE = "cpu"


def _chunk_device(device):
    return None if isinstance(device, str) and device == _CUBED_DEVICE else device


class __array_namespace_info__(_wg.__array_namespace_info__):  # noqa: N801 - the standard's name
    def default_dtypes(self, *, device=None) -> dict:
        return super().default_dtypes(device=_chunk_device(device))

    def dtypes(self, *, device=None, kind=None) -> dict:
        return super().dtypes(device=_chunk_device(device), kind=kind)


def mean(x, /, *, axis=None, keepdims: builtins.bool = False, dtype=None):
    """``wgarray.mean`` computed in ``dtype`` when given (NumPy's keyword)."""
    if dtype is not None:
        x = _wg.astype(x, dtype)
    return _wg.mean(x, axis=axis, keepdims=keepdims)


def take(x, indices, /, *, axis=None):
    """``wgarray.take``; a Python int index selects one position and drops the axis,
    as NumPy's ``take`` does."""
    if isinstance(indices, int) and not isinstance(indices, builtins.bool):
        if axis is None:
            return _wg.reshape(x, (-1,))[indices]
        axis = normalize_axis(axis, x.ndim, "take")
        return x[(slice(None),) * axis + (indices,)]
    return _wg.take(x, indices, axis=axis)


nansum = _wg.nansum  # NumPy's semantics, on the device (wgarray's extra functions)

__all__ = list(_wg_all) + ["mean", "nansum", "take"]
