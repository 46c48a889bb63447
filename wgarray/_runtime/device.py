"""Devices: one per wgpu adapter, opened lazily with the adapter's full limits.

``WGARRAY_DEVICE`` picks the default device by index or name substring, or
``per-process[:i,j,...]`` for one device per worker of a process pool;
``WGARRAY_DISABLE_FEATURES`` (comma separated) hides adapter features, so that a test
run on a full-featured driver sees what a Metal- or browser-class device offers.
"""
from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import threading

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # silences a Mesa warning on headless hosts

import wgpu  # noqa: E402

from .. import _dtypes as dt  # noqa: E402
from .runtime import Runtime  # noqa: E402

# Features wgarray uses when an adapter offers them.
WANTED_FEATURES = ("shader-f64", "shader-int64", "shader-f16", "subgroup", "timestamp-query")

_ADAPTER_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 1, "BrowserWebGPU": 0}


def _disabled_features() -> frozenset[str]:
    raw = os.environ.get("WGARRAY_DISABLE_FEATURES", "")
    names = frozenset(f.strip() for f in raw.split(",") if f.strip())
    # A misspelled name would silently test the wrong mode.
    unknown = sorted(names - set(WANTED_FEATURES))
    if unknown:
        raise ValueError(
            f"WGARRAY_DISABLE_FEATURES: expected comma-separated names from "
            f"{', '.join(sorted(WANTED_FEATURES))}, got {', '.join(map(repr, unknown))}")
    return names


class Device:
    """A wgpu adapter as an Array API device.

    The wgpu device behind it is created on first use, with every feature in
    ``WANTED_FEATURES`` that the adapter has (less the disabled ones) and the adapter's
    own limits, so large buffers and many bindings are available.
    """

    def __init__(self, index: int, adapter):
        info = adapter.info
        self.index = index
        self.adapter = adapter
        self.name: str = info["device"] or info["description"] or f"adapter {index}"
        self.backend: str = info["backend_type"]
        self.adapter_type: str = info["adapter_type"]
        disabled = _disabled_features()
        self._features = frozenset(f for f in WANTED_FEATURES if f in adapter.features and f not in disabled)
        self.limits = dict(adapter.limits)
        self._wgpu_device = None
        self._runtime = None
        self._has_int64 = None
        self._binding_override = None  # wgarray.debug.binding_limit's lowered binding size
        self._buffer_override = None  # wgarray.debug.segment_limit's lowered buffer size
        # True once a buffer past the binding limit exists: only then do the planners
        # look for leaves that must be bound through windows (``_graph.slabs``)
        self.big = False
        self._lock = threading.RLock()

    # -- capabilities ------------------------------------------------------------
    @property
    def features(self) -> frozenset[str]:
        """The optional features in use: those of WANTED_FEATURES the adapter reports,
        less the disabled ones and any the driver then refuses to enable (the device is
        opened to find out)."""
        if self._wgpu_device is None:
            self.wgpu_device
        return self._features

    @property
    def has_f64(self) -> bool:
        return "shader-f64" in self.features

    @property
    def has_int64(self) -> bool:
        # asked by every graph walk (the planner's key): kept once the device is open
        # (``features`` opens it; its features are final then)
        found = self._has_int64
        if found is None:
            found = self._has_int64 = "shader-int64" in self.features
        return found

    @property
    def has_subgroups(self) -> bool:
        return "subgroup" in self.features

    def supports(self, dtype: dt.DType) -> bool:
        return self.has_f64 or dtype not in dt.NEEDS_F64

    @property
    def dtypes(self) -> tuple[dt.DType, ...]:
        return tuple(d for d in dt.ALL if self.supports(d))

    @property
    def default_float(self) -> dt.DType:
        return dt.float64 if self.has_f64 else dt.float32

    @property
    def default_complex(self) -> dt.DType:
        return dt.complex128 if self.has_f64 else dt.complex64

    def check_dtype(self, dtype: dt.DType, func: str) -> None:
        if not self.supports(dtype):
            raise TypeError(
                f"{func}: dtype {dtype} is not available on device {self.name!r} "
                f"(it lacks the 'shader-f64' feature); use float32/complex64"
            )

    @property
    def max_loop_iterations(self) -> int | None:
        """Loop iterations one invocation may run in total, where a driver cuts loops
        short without an error: Mesa's lavapipe stops them after 65535. Kernels that
        loop over data split the work over more invocations or dispatches there."""
        return 65535 if "llvmpipe" in self.name.lower() else None

    @property
    def max_buffer_bytes(self) -> int:
        """The largest array in bytes: one buffer (``max-buffer-size``, a multiple of 16
        for the 16-byte vector reads), which kernels bind a window of at a time where it
        is past the binding limit (``max_binding_bytes``). Larger arrays are stored in
        segments of buffers (lowered for tests by ``wgarray.debug.segment_limit``)."""
        limit = self._buffer_override or self.limits["max-buffer-size"]
        return limit - limit % 16

    @property
    def max_array_bytes(self) -> int:
        """The largest array a call may ask for, checked when a lazy result is made
        (``WGARRAY_MAX_ARRAY_BYTES`` sets it): on a CPU adapter half the host's memory,
        which it allocates from; on a GPU, whose memory wgpu does not report, no bound
        before the allocation itself, which raises MemoryError when the device refuses."""
        env = os.environ.get("WGARRAY_MAX_ARRAY_BYTES")
        if env:
            return int(env)
        if self.adapter_type == "CPU":
            try:
                return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
            except (ValueError, OSError, AttributeError):
                pass
        return 1 << 50

    @property
    def max_binding_bytes(self) -> int:
        """The largest range of a buffer one kernel binding may cover
        (``max-storage-buffer-binding-size``, a multiple of 16; lowered for tests by
        ``wgarray.debug.binding_limit``). Arrays past it are bound in windows: the
        elementwise kernels and the reductions run over them a slab at a time."""
        limit = self._binding_override
        if limit is None:
            limit = min(self.limits["max-storage-buffer-binding-size"], self.max_buffer_bytes)
        return limit - limit % 16

    @property
    def binding_alignment(self) -> int:
        """The byte multiple a binding's offset must be (``min-storage-buffer-offset-alignment``)."""
        return max(self.limits.get("min-storage-buffer-offset-alignment", 256), 16)

    # -- lazily opened GPU state ---------------------------------------------------
    @property
    def wgpu_device(self):
        if _forked_child:
            _refuse_after_fork()
        if self._wgpu_device is None:
            with self._lock:
                if self._wgpu_device is None:
                    self._wgpu_device = self._open()
        return self._wgpu_device

    def _open(self):
        """The wgpu device with the adapter's full limits and wanted features. Some
        backends (OpenGL) refuse what they report: fall back to WebGPU's default limits,
        then to no optional features as well (float32 only), then say why."""
        request = self.adapter.request_device_sync
        label = f"wgarray:{self.name}"
        features = sorted(self._features)
        attempts = [(features, self.limits), (features, {})] + ([([], {})] if features else [])
        error = None
        for feats, limits in attempts:
            try:
                dev = request(label=label, required_features=feats, required_limits=limits)
            except Exception as exc:
                error = exc
                continue
            self._features = frozenset(feats)
            self.limits = dict(dev.limits)
            return dev
        raise RuntimeError(f"wgarray: cannot open device {self.name!r} ({self.backend}): {error}") from None

    @property
    def runtime(self):
        if _forked_child:
            _refuse_after_fork()
        if self._runtime is None:
            with self._lock:
                if self._runtime is None:
                    self._runtime = Runtime(self)
        return self._runtime

    # -- identity ------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Device({self.index}: {self.name!r}, {self.backend}, {self.adapter_type})"

    def __str__(self) -> str:
        return f"{self.name} ({self.backend})"

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return hash(("wgarray.Device", self.index))

    def __reduce__(self):
        return (_device_by_index, (self.index,))


# A wgpu instance and its devices do not survive fork(): the child has the parent's
# handles but none of the driver's threads. A child forked after adapters were
# enumerated is refused with a clear error rather than left to hang or crash.
_forked_child = False


def _mark_forked_child() -> None:
    global _forked_child
    _forked_child = devices.cache_info().currsize > 0


def _refuse_after_fork():
    raise RuntimeError(
        "wgarray: this process was forked from one that had already opened WebGPU "
        "devices, which cannot cross fork(); start worker processes with the 'spawn' "
        "method (multiprocessing.get_context('spawn'); cubed's processes executor "
        "spawns by default)"
    )


def _device_by_index(index: int) -> Device:
    return devices()[index]


def _can_compute(adapter) -> bool:
    """Whether the adapter runs compute shaders of wgarray's 256-invocation workgroups:
    an OpenGL context older than 4.3 (or ES 3.1) reports zero compute limits."""
    limits = adapter.limits
    return (limits.get("max-compute-workgroups-per-dimension", 0) > 0
            and limits.get("max-compute-invocations-per-workgroup", 0) >= 256)


class _DropLogRecords(logging.Filter):
    def filter(self, record) -> bool:
        return False


@functools.cache
def devices() -> tuple[Device, ...]:
    """The adapters that can run wgarray's kernels, in wgpu's order.

    OpenGL adapters are left out when a Vulkan, Metal or D3D12 GPU adapter exists (the
    same GPU through a weaker backend). Otherwise they are opened first to make sure:
    some report compute limits for a context that has no compute shaders (the NVIDIA
    driver's headless EGL one does), and wgpu-native's log lines from that probe
    (``indirect-validation error`` on NVIDIA) are dropped, since they read like
    failures of the user's program."""
    adapters = [a for a in wgpu.gpu.enumerate_adapters_sync() if _can_compute(a)]
    native_gpu = any(a.info["backend_type"] != "OpenGL" and a.info["adapter_type"] != "CPU"
                     for a in adapters)
    found: list[Device] = []
    for adapter in adapters:
        if adapter.info["backend_type"] == "OpenGL":
            if native_gpu:
                continue
            dev = Device(len(found), adapter)
            quiet = _DropLogRecords()
            wgpu_log = logging.getLogger("wgpu")
            wgpu_log.addFilter(quiet)
            try:
                dev.wgpu_device
            except RuntimeError:
                continue
            finally:
                wgpu_log.removeFilter(quiet)
        else:
            dev = Device(len(found), adapter)
        found.append(dev)
    return tuple(found)


os.register_at_fork(after_in_child=_mark_forked_child)


def _rank(d: Device):
    return (_ADAPTER_RANK.get(d.adapter_type, 5), _BACKEND_RANK.get(d.backend, 2), d.index)


def find_device(spec, func: str = "device") -> Device:
    """A device from an index, a name substring, or a Device."""
    if isinstance(spec, Device):
        return spec
    devs = devices()
    listing = "; ".join(f"{d.index}: {d}" for d in devs) or "none"
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        i = int(spec)
        if 0 <= i < len(devs):
            return devs[i]
        raise ValueError(f"{func}: no device with index {i}; devices are: {listing}")
    if isinstance(spec, str):
        needle = spec.lower()
        matches = sorted((d for d in devs if needle in str(d).lower()), key=_rank)
        if matches:
            return matches[0]
        raise ValueError(f"{func}: no device matches {spec!r}; devices are: {listing}")
    raise TypeError(f"{func}: expected a wgarray Device, a device name or an index, got {spec!r}")


def _default_has_f64() -> bool:
    return default_device().has_f64


dt.wide_floats = _default_has_f64  # cross-kind promotion widens to float64 only where it exists


@functools.cache
def default_device() -> Device:
    devs = devices()
    if not devs:
        raise RuntimeError(
            "wgarray: no WebGPU adapter found. Install a Vulkan driver (on Debian/Ubuntu: "
            "apt-get install mesa-vulkan-drivers for the software driver lavapipe)."
        )
    choice = os.environ.get("WGARRAY_DEVICE", "").strip()
    if choice.startswith(PER_PROCESS):
        return _per_process_device(choice[len(PER_PROCESS):].lstrip(":"), devs)
    if choice:
        return find_device(choice, "WGARRAY_DEVICE")
    return min(devs, key=_rank)


# ``WGARRAY_DEVICE=per-process[:i,j,...]``: each worker of a process pool takes its own
# device. Pools (multiprocessing, concurrent.futures) start their workers one after
# another from one counter, so N consecutive workers land on N different devices; the
# process that starts them (no pool identity) keeps the first. Without a list, the pool
# spreads over the adapters of the best kind (every discrete GPU on its best backend).
PER_PROCESS = "per-process"


def _per_process_device(listing: str, devs: tuple[Device, ...]) -> Device:
    if listing:
        pool = [find_device(p.strip(), "WGARRAY_DEVICE") for p in listing.split(",") if p.strip()]
    else:
        best = _rank(min(devs, key=_rank))[:2]
        pool = [d for d in devs if _rank(d)[:2] == best]
    identity = multiprocessing.current_process()._identity  # (k,) in the k-th worker started
    return pool[(identity[-1] - 1) % len(pool)] if identity else pool[0]


def resolve_device(device, func: str) -> Device:
    """The device named by a ``device=`` argument (None means the default device)."""
    if device is None:
        return default_device()
    return find_device(device, func)
