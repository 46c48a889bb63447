"""``__array_namespace_info__``: what the library and each device support."""
from __future__ import annotations

from . import _dtypes as dt
from ._runtime.device import default_device, devices, resolve_device

_KIND_CATEGORY = {
    "bool": "bool", "signed integer": "signed integer", "unsigned integer": "unsigned integer",
    "integral": "integer", "real floating": "real floating-point",
    "complex floating": "complex floating-point", "numeric": "numeric",
}


class __array_namespace_info__:  # noqa: N801 - the standard's name
    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return default_device()

    def default_dtypes(self, *, device=None) -> dict:
        dev = resolve_device(device, "default_dtypes")
        return {
            "real floating": dev.default_float,
            "complex floating": dev.default_complex,
            "integral": dt.int64,
            "indexing": dt.int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        dev = resolve_device(device, "dtypes")
        available = dev.dtypes
        if kind is None:
            chosen = available
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            chosen = []
            for k in kinds:
                if isinstance(k, dt.DType):
                    members = (k,)
                elif k in _KIND_CATEGORY:
                    members = dt.CATEGORIES[_KIND_CATEGORY[k]]
                else:
                    raise ValueError(f"dtypes: unknown kind {k!r}; expected one of {', '.join(_KIND_CATEGORY)}")
                chosen.extend(m for m in members if m in available and m not in chosen)
        return {d.name: d for d in dt.ALL if d in chosen}

    def devices(self) -> tuple:
        return _Devices(devices())


class _Devices(tuple):
    """The standard's tuple of devices, which also concatenates with a list (SciPy's test
    fixtures write ``devices() + [None]``, which NumPy's and CuPy's lists allow)."""

    def __add__(self, other):
        return _Devices(tuple(self) + tuple(other)) if isinstance(other, (list, tuple)) else NotImplemented

    def __radd__(self, other):
        return _Devices(tuple(other) + tuple(self)) if isinstance(other, (list, tuple)) else NotImplemented
