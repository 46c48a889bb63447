"""GPU runtime of one device: buffers, pipelines, command batches, readback.

Hot-path rules this module keeps:
- buffers come from a pool by size class; a freed buffer returns to the pool only
  after the batch that may still read it has been submitted;
- pipelines, bind-group layouts and bind groups are created once and cached;
- dispatches accumulate in one compute pass and are submitted together; a kernel's
  parameters (sizes, strides, scalar values) go into one shared parameter buffer per
  batch, bound with a dynamic offset, so a new scalar value never means a new pipeline;
- readback goes through pooled, mapped staging buffers;
- the hot path (encoder, pass, pipeline, bind group, dispatch, copy, finish, submit,
  parameter upload, readback map, poll, read and unmap) calls wgpu-native's C functions
  directly through wgpu-py's own cffi library (``_NativeCalls``), keeping wgpu-py's
  error capture only where errors surface (pass end, finish, submit); a wgpu-py whose
  internals differ takes the public calls;
- consecutive element stores into one buffer are gathered and recorded as a few
  scatter dispatches (``store``, ``store_from``).
"""
from __future__ import annotations

import collections
import contextlib
import functools
import os
import itertools
import operator
import struct
import sys
import threading
import time
import weakref

import numpy as np
import wgpu

from . import launch as _launch
from .counters import COUNTERS as _COUNTERS
from .counters import count, uncounted
from .errors import KernelCompileError

_STORAGE_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
_STAGING_USAGE = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
_UPLOAD_USAGE = wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC
UPLOAD_CHUNK = 32 << 20  # large uploads stream through a ring of mapped staging buffers
UPLOAD_DIRECT = 1 << 20  # below this, queue.write_buffer is cheapest
READ_CHUNK = 32 << 20
SMALL_READ = 64 << 10  # reads up to this size take the single-copy path

PARAM_WINDOW = 4096  # bytes of parameters one kernel may read
PARAM_RING = 1 << 20  # bytes of parameters one batch may hold before it is flushed
PARAMS_REMEMBERED = 16 << 10  # a batch's parameters up to this size are compared with the last upload
MAX_BATCH_DISPATCHES = 512
# A readback on a GPU polls the device for up to this many microseconds before it
# blocks in the driver: the wake-up from a blocking wait costs tens of microseconds,
# about the whole device time of a loop step's small kernels.
SPIN_WAIT_US = float(os.environ.get("WGARRAY_SPIN_US", 200))
STORE_RUN_COPIES = 2  # a run of up to this many element stores is recorded as buffer copies
# Buffer bytes a batch may bind before it is submitted: 256 MiB after the host last
# waited for the device (which is then idle: submit soon), doubling with each submit of
# a run of work that does not wait, up to BATCH_FLUSH_MAX_BYTES. H200, float32, the
# threshold held at 256 MiB / 1 / 4 / 16 GiB (``benchmarks/diag_flush.py``, two runs on
# two machines, ms): solve 4096 130-72 / 88-53 / 65-56 / 62-59 (386 / 119 / 30 / 8
# submits), inv 4096 178-100 / 103-66 / 64-63 / 71-64, cholesky 4096 23.6-22.7 /
# 11.7-14.1 / 11.9-10.3 / 20.6-18.2; but solve 2048 20.6-22.5 / 20.4-26.3 / 30.4-32.1 /
# 36.6-31.3: many submits cost ~0.1-0.2 ms each, few leave the device waiting while
# the host records a large batch.
BATCH_FLUSH_BYTES = 256 << 20
BATCH_FLUSH_MAX_BYTES = 1 << 30
# A batch the host has been recording for this many microseconds is submitted at its
# next dispatch, so the device starts on it while the host records the rest (a
# factorization records a few hundred dispatches, ~20-40 us each, before it would
# otherwise submit); the interval doubles with each such submit and starts again when
# the host next waits for the device. On GPUs only: a software device's shaders run on
# the cores the recording uses. 0 turns it off.
EARLY_SUBMIT_US = float(os.environ.get("WGARRAY_EARLY_SUBMIT_US", 250))
EARLY_SUBMIT_MIN_DISPATCHES = 4
POOL_CACHE_BYTES = int(os.environ.get("WGARRAY_POOL_CACHE_MB", 4096)) << 20
# ...and at most this many buffers: 100k small freed arrays must not stay as 100k GPU
# allocations (each costs driver memory well beyond its size)
POOL_CACHE_BUFFERS = 4096

_buffer_ids = itertools.count(1)
_UID = operator.attrgetter("uid")
_SIZE = operator.attrgetter("size")


def public_caller() -> str:
    """The name of the outermost public wgarray function on the stack (``multiply``
    for ``x * y``, ``outer`` for ``linalg.outer``, which calls ``multiply``)."""
    package = __name__.partition(".")[0]  # "wgarray": this module is wgarray._runtime.runtime
    name = "wgarray"
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").partition(".")[0] == package:
            fn = frame.f_code.co_name
            if not fn.startswith("_") or (fn.startswith("__") and fn.endswith("__") and len(fn) > 4):
                if fn not in ("op", "<lambda>", "<genexpr>", "<listcomp>"):
                    name = fn
        frame = frame.f_back
    return name


def size_class(nbytes: int) -> int:
    """Round a request up to a pooled size: powers of two up to 1 MiB, then steps of 1/8."""
    n = max(int(nbytes), 16)
    if n <= 1 << 20:
        return 1 << (n - 1).bit_length()
    step = 1 << ((n - 1).bit_length() - 3)
    return -(-n // step) * step


class DeviceBuffer:
    """A pooled storage buffer. Returned to its pool when the last reference goes."""

    __slots__ = ("runtime", "buffer", "size", "uid", "sealed", "__weakref__")
    offset = 0  # where a binding of it starts (a BufferWindow's is its own)

    def __init__(self, runtime: Runtime, buffer, size: int, uid: int):
        self.runtime = runtime
        self.buffer = buffer
        self.size = size
        self.uid = uid  # of the GPU buffer, kept across reuse so bind groups stay cached
        # True where the contents change only by the namespace's in-place writes (an
        # upload, a memoized result: see wgarray/_known.py), never by a kernel family's
        # own steps in place (a solver's workspace, a flag)
        self.sealed = False

    def __del__(self):
        rt = self.runtime
        if rt is not None and rt.pool is not None:
            rt.pool.release(self.buffer, self.size, self.uid)

    def __repr__(self) -> str:
        return f"<DeviceBuffer #{self.uid} {self.size} bytes>"


class BufferWindow:
    """A byte range of a DeviceBuffer that one kernel binding covers: how kernels reach an
    array stored past the device's binding limit (``Runtime.window``). It keeps its
    buffer alive and is never pooled itself; element offsets of the nodes bound through
    it count from its start."""

    __slots__ = ("runtime", "parent", "buffer", "offset", "size", "base", "uid", "sealed", "__weakref__")

    def __init__(self, parent: DeviceBuffer, offset: int, size: int, base: int | None = None):
        self.runtime = parent.runtime
        self.parent = parent
        self.buffer = parent.buffer
        self.offset = offset
        self.size = size
        # where the window starts in the array's bytes: its offset, or for a segment of a
        # SegmentedBuffer the segment's start plus its offset
        self.base = offset if base is None else base
        self.uid = next(_buffer_ids)
        self.sealed = False

    def __repr__(self) -> str:
        return f"<BufferWindow #{self.uid} [{self.offset}, {self.offset + self.size}) of #{self.parent.uid}>"


class PastBindingLimit(MemoryError):
    """A kernel's buffer past the device's storage-binding limit, raised before anything
    of that dispatch is recorded: a caller with another way may catch it and take it."""


class Straddle(MemoryError):
    """A range of a segmented buffer that crosses from one segment into the next: no one
    binding reaches it (the slab planners split such ranges)."""


class SegmentedBuffer:
    """An allocation past the device's largest buffer: consecutive segments of ``seg``
    bytes (the last one shorter), each a pooled DeviceBuffer. Never bound whole (it has
    no GPU buffer of its own); kernels bind windows inside one segment
    (``Runtime.window``), and the runtime's copies, reads, uploads and element stores
    split at segment boundaries."""

    __slots__ = ("runtime", "parts", "seg", "size", "uid", "sealed", "__weakref__")
    buffer = None
    offset = 0

    def __init__(self, runtime, parts, seg: int, size: int):
        self.runtime = runtime
        self.parts = parts
        self.seg = seg
        self.size = size
        self.uid = next(_buffer_ids)
        self.sealed = False

    def pieces(self, start: int, nbytes: int):
        """(segment, offset in it, bytes, offset from ``start``) covering [start, start + nbytes)."""
        out = []
        at = start
        end = start + nbytes
        while at < end:
            i = at // self.seg
            local = at - i * self.seg
            take = min(end - at, self.seg - local)
            out.append((self.parts[i], local, take, at - start))
            at += take
        return out

    def __repr__(self) -> str:
        return f"<SegmentedBuffer #{self.uid} {self.size} bytes in {len(self.parts)} segments of {self.seg}>"


def _pieces(buf, start: int, nbytes: int):
    """``SegmentedBuffer.pieces`` for any buffer (a plain one is its own single piece)."""
    if type(buf) is SegmentedBuffer:
        return buf.pieces(start, nbytes)
    return [(buf, start, nbytes, 0)]


def _first(item):
    return item[0]


class _OutOfMemory(Exception):
    """The device refused a buffer for want of memory."""


def _create_storage(device, size: int):
    """A storage buffer of ``size`` bytes, or _OutOfMemory where the device has no room.

    Drivers report that differently: a GPUOutOfMemoryError, or (wgpu-native on Vulkan,
    NVIDIA) a GPUValidationError "Not enough memory left" from wgpuDeviceCreateBuffer.
    """
    try:
        return device.create_buffer(size=size, usage=_STORAGE_USAGE)
    except wgpu.GPUOutOfMemoryError as exc:
        raise _OutOfMemory(str(exc)) from exc
    except wgpu.GPUValidationError as exc:
        if "memory" not in str(exc).lower():
            raise
        raise _OutOfMemory(str(exc)) from exc


class BufferPool:
    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.free: dict[int, list] = collections.defaultdict(list)
        self.pending: list = []  # released while a batch may still use them
        self.cached_bytes = 0
        self.limit = None  # the device's largest buffer (bytes), on first use
        # the largest segmented allocation so far: the cache keeps twice it, so that a
        # loop over arrays past the largest buffer reuses its segments (a fresh 2 GiB
        # buffer costs the H200's driver ~100 ms) instead of making them anew each step
        self.high = 0
        self.order: collections.OrderedDict = collections.OrderedDict()  # (size, uid) -> buffer, oldest first
        # uid -> GPU buffer of every DeviceBuffer alive. Holding them here keeps a GPU
        # buffer reachable when its DeviceBuffer dies in a reference cycle: otherwise the
        # cyclic GC runs the GPU buffer's own finalizer (releasing its handle) before
        # DeviceBuffer.__del__ hands it back to the pool.
        self.live: dict[int, object] = {}

    def acquire(self, nbytes: int) -> DeviceBuffer:
        rt = self.runtime
        limit = self.limit
        if limit is None:  # the device's, fixed once it is open (as it is here)
            limit = self.limit = rt.device.max_buffer_bytes
        if nbytes > 1 << 27 and nbytes > rt.device.max_array_bytes:
            largest = rt.device.max_array_bytes
            raise MemoryError(f"{public_caller()}: expected a result of at most {largest} bytes (the largest array "
                              f"of {rt.device.name!r}), got {nbytes} bytes")
        if nbytes > limit:
            return self._segmented(nbytes, limit)
        size = min(size_class(nbytes), max(limit - limit % 16, 16))
        binding = rt.device.max_binding_bytes
        if nbytes <= binding < size:
            # an array that fits a binding gets a buffer that does: kernels bind a buffer
            # whole, and a size class past the limit (a 1.9 GiB array's 2 GiB class on a
            # device that binds 2 GiB - 4 bytes) would refuse an array that fits
            size = max(binding - binding % 16, 16)
        bucket = self.free.get(size)
        if bucket:
            uid, buf = bucket.pop()
            del self.order[(size, uid)]
            self.cached_bytes -= size
            self.live[uid] = buf
            return DeviceBuffer(rt, buf, size, uid)
        try:
            buf = _create_storage(rt.wgpu, size)
        except _OutOfMemory:
            self.trim(0)  # the cached free buffers go back to the device: then once more
            try:
                buf = _create_storage(rt.wgpu, size)
            except _OutOfMemory as exc:
                raise MemoryError(f"{public_caller()}: cannot allocate {nbytes} bytes ({size} pooled) on "
                                  f"{rt.device.name!r}: the device is out of memory, with {self.live_bytes()} "
                                  f"bytes held by live wgarray arrays") from exc
        count("buffers_created")
        if size > rt.device.max_binding_bytes:
            rt.device.big = True
        uid = next(_buffer_ids)
        self.live[uid] = buf
        return DeviceBuffer(rt, buf, size, uid)

    def _segmented(self, nbytes: int, limit: int) -> SegmentedBuffer:
        """``nbytes`` in segments of the largest power of two of bytes a buffer holds (so
        that the power-of-two slabs of ``_graph.slabs`` seldom cross a boundary)."""
        seg = 1 << (limit.bit_length() - 1)
        self.high = max(self.high, nbytes)
        parts = []
        try:
            for at in range(0, nbytes, seg):
                parts.append(self.acquire(min(seg, nbytes - at)))
        except MemoryError as exc:
            got = sum(p.size for p in parts)
            held = self.live_bytes() - got
            del parts  # back to the pool
            raise MemoryError(f"{public_caller()}: cannot allocate {nbytes} bytes on {self.runtime.device.name!r} "
                              f"(in segments of {seg}): the device gave {got} bytes more before refusing, with "
                              f"{held} bytes held by live wgarray arrays") from exc
        return SegmentedBuffer(self.runtime, parts, seg, nbytes + (-nbytes % 16))

    def live_bytes(self) -> int:
        """Bytes of the device buffers that wgarray's arrays hold now."""
        return sum(buf.size for buf in self.live.values())

    def release(self, buf, size: int, uid: int) -> None:
        self.live.pop(uid, None)
        self.pending.append((buf, size, uid))

    def recycle_pending(self) -> None:
        """Called after a submit: buffers released before it may be reused now."""
        pending, self.pending = self.pending, []
        touched = set()
        for buf, size, uid in pending:
            self.free[size].append((uid, buf))
            self.order[(size, uid)] = buf
            self.cached_bytes += size
            touched.add(size)
        # each size's free buffers by falling uid, so a pop takes the oldest: a loop
        # that allocates the same sizes in the same order each step gets the same
        # buffers each step, whatever order the last step freed them in, and its
        # dispatches find their bind groups cached (a bind group is made per buffer set)
        for size in touched:
            self.free[size].sort(key=_first, reverse=True)
        cap = max(POOL_CACHE_BYTES, 2 * self.high)
        if self.cached_bytes > cap or len(self.order) > POOL_CACHE_BUFFERS:
            self.trim(cap // 2, POOL_CACHE_BUFFERS // 2)

    def trim(self, target: int, max_buffers: int | None = None) -> None:
        while self.order and (self.cached_bytes > target
                              or (max_buffers is not None and len(self.order) > max_buffers)):
            (size, uid), buf = self.order.popitem(last=False)
            self.free[size].remove((uid, buf))
            self.cached_bytes -= size
            buf.destroy()


class Kernel:
    """A compiled compute pipeline and how to bind it.

    bindings: one entry per storage binding, True where the kernel writes it.
    The parameter buffer follows them, bound read-only with a dynamic offset, once as
    ``array<u32>`` and, when ``f64_params``, a second time as ``array<f64>``.
    """

    __slots__ = ("name", "pipeline", "layout", "layout_key", "writes", "n_params_bindings", "source", "record")

    def __init__(self, name, pipeline, layout, layout_key, writes, n_params_bindings, source, record=None):
        self.record = record  # the Launch record (None for a kernel of the older 4-tuple path)
        self.name = name
        self.pipeline = pipeline
        self.layout = layout
        self.layout_key = layout_key
        self.writes = writes
        self.n_params_bindings = n_params_bindings
        self.source = source


class Runtime:
    def __init__(self, device):
        self.device = device
        self.wgpu = device.wgpu_device
        self.pool = BufferPool(self)
        self.lock = threading.RLock()
        self.kernels: dict = {}
        self._layouts: dict = {}
        self._bind_groups: collections.OrderedDict = collections.OrderedDict()
        self._windows = weakref.WeakValueDictionary()  # (buffer uid, offset, size) -> BufferWindow
        align = device.limits.get("min-storage-buffer-offset-alignment", 256)
        self.param_align = max(align, 16)
        self.params_buffer = self.wgpu.create_buffer(size=PARAM_RING + PARAM_WINDOW, usage=_STORAGE_USAGE)
        self._staging: dict[int, list] = collections.defaultdict(list)
        self._upload_ring: list = []
        self._timing = None  # the _Stamps of a running gpu_timer / gpu_profile
        self._upload_next = 0
        self._read_mode = "READ_NOSYNC"  # wgpu-py's read map without its extra submit
        self._params_uploaded = None  # the bytes at the start of params_buffer, when short
        self._flush_growth = 0  # the batch's bound bytes double this often (BATCH_FLUSH_BYTES)
        self._recorder = None  # the program.Recorder of a routine being recorded
        self.programs: collections.OrderedDict = collections.OrderedDict()  # recorded routines (program.run)
        # the early submit (EARLY_SUBMIT_US): seconds, None where it is off
        self.early_submit_s = EARLY_SUBMIT_US * 1e-6 if EARLY_SUBMIT_US > 0 and device.adapter_type != "CPU" else None
        self._early_s = self.early_submit_s
        self._batch_t0 = 0.0
        self._offsets_c = _NATIVE.ffi.new("uint32_t[2]") if _NATIVE is not None else None
        # the direct C calls of the batch's encoder, submit, parameter upload and
        # readback map (None: wgpu-py's public calls, as on another wgpu-py)
        self._native = _NATIVE
        self._map_slot = _NATIVE.map_slot() if _NATIVE is not None else None
        # seconds a readback polls before it blocks (see _NativeCalls.map_wait): none on
        # a software device, whose shaders run on the cores a spinning poll would take
        self._spin_s = (SPIN_WAIT_US if device.adapter_type != "CPU" else 0) * 1e-6
        self._reset_batch()

    # ------------------------------------------------------------------ subgroups
    @functools.cached_property
    def subgroup_size(self) -> int | None:
        """Lanes per compute subgroup, where the device has subgroups that are full, of
        one size, and made of consecutive invocations (lane = local index mod size) in a
        256-invocation workgroup, as probed once with a small kernel; None otherwise,
        and kernels then take their workgroup-memory paths."""
        return self._probe_subgroups() if self.device.has_subgroups else None

    @contextlib.contextmanager
    def unrecorded(self):
        """Work that is not the recorded routine's (``_kernels/program.py``): a device
        probe, run once and cached, which a replay must not repeat."""
        with self.lock:
            rec, self._recorder = self._recorder, None
            try:
                yield
            finally:
                self._recorder = rec

    def _probe_subgroups(self) -> int | None:
        # a one-time cost of opening the device, as numerics' probe: neither in the work
        # counters users read nor in a recorded program
        with uncounted(), self.unrecorded():
            return self._run_subgroup_probe()

    def _run_subgroup_probe(self) -> int | None:
        record = _launch.Launch("probe_subgroups", (_launch.Binding("O", "u32", write=True),))
        src = "\n" + "\n".join(record.declarations()) + """
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_size) sgs: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
    O[lid] = sgs;
    O[256u + lid] = subgroupAdd(1u);
    O[512u + lid] = lane;
}
"""
        kernel = self.compile(("probe", "subgroups"), lambda: (record, src))
        out = self.alloc(3072)
        self.launch(kernel, {"O": out}, b"\0" * 16, 1)
        words = self.read(out, 0, 3072).view("<u4")
        size = int(words[0])
        if not (4 <= size <= 128 and 256 % size == 0):
            return None
        full = (words[:512] == size).all()
        contiguous = (words[512:768] == np.arange(256) % size).all()
        return size if full and contiguous else None

    # ------------------------------------------------------------------ buffers
    def alloc(self, nbytes: int) -> DeviceBuffer:
        with self.lock:
            buf = self.pool.acquire(nbytes)
            if self._recorder is not None:
                self._recorder.alloc(buf, nbytes)
            return buf

    def window(self, buf: DeviceBuffer, start: int, nbytes: int) -> BufferWindow:
        """The window of ``buf`` covering bytes [start, start + nbytes), its start moved
        down to the device's binding alignment: bound in place of ``buf``, its element
        offsets count from ``window.offset``. The same range gives the same window
        (whose bind groups are then cached) while it is alive."""
        if type(buf) is SegmentedBuffer:
            i = start // buf.seg
            if (start + nbytes - 1) // buf.seg != i:
                raise Straddle(f"{public_caller()}: bytes [{start}, {start + nbytes}) of a segmented array cross "
                               f"from one segment into the next")
            win = self.window(buf.parts[i], start - i * buf.seg, nbytes)
            key = (buf.uid, win.offset, win.size)
            found = self._windows.get(key)
            if found is None or found.parent is not win.parent:
                found = self._windows[key] = BufferWindow(win.parent, win.offset, win.size, i * buf.seg + win.offset)
            return found
        align = self.device.binding_alignment
        end = start + nbytes
        end = min(buf.size, end + (-end % 16))
        start -= start % align
        key = (buf.uid, start, end)
        found = self._windows.get(key)
        if found is None or found.parent is not buf:
            found = self._windows[key] = BufferWindow(buf, start, end - start)
        return found

    def upload(self, data) -> DeviceBuffer:
        """A new buffer holding the bytes of ``data`` (a contiguous NumPy array or bytes)."""
        mv = memoryview(data).cast("B")
        n = mv.nbytes
        if self._recorder is not None:
            self._recorder.drop()  # data from the host: not a replay's to repeat
        buf = self.alloc(n)
        if type(buf) is SegmentedBuffer:
            for part, _, take, at in buf.pieces(0, n):
                self._fill(part, mv[at:at + take])
        else:
            self._fill(buf, mv)
        count("bytes_uploaded", n)
        count("uploads")
        return buf

    def _fill(self, buf: DeviceBuffer, mv: memoryview) -> None:
        """The bytes of ``mv`` written at the start of ``buf``."""
        n = mv.nbytes
        aligned = n - n % 4
        if aligned >= UPLOAD_DIRECT:
            self._upload_staged(buf, mv[:aligned])
        elif aligned:
            self._write(buf.buffer, 0, mv[:aligned])
        if n % 4:
            tail = bytes(mv[aligned:]) + b"\0" * (4 - n % 4)
            self._write(buf.buffer, aligned, tail)

    def _write(self, buffer, offset: int, data) -> None:
        """``queue.write_buffer`` of bytes-like ``data`` (whole words) into a GPU buffer."""
        native = self._native
        if native is not None:
            native.write(self.wgpu.queue, buffer, offset, data)
        else:
            self.wgpu.queue.write_buffer(buffer, offset, data)

    def _upload_staged(self, buf: DeviceBuffer, mv: memoryview) -> None:
        """Copy host bytes through reusable mapped buffers (no per-call allocation:
        fresh staging memory costs a page fault per 4 KiB, which halves bandwidth)."""
        with self.lock:
            if not self._upload_ring:
                self._upload_ring = [
                    self.wgpu.create_buffer(size=UPLOAD_CHUNK, usage=_UPLOAD_USAGE, mapped_at_creation=True)
                    for _ in range(2)]
            for start in range(0, mv.nbytes, UPLOAD_CHUNK):
                chunk = mv[start:start + UPLOAD_CHUNK]
                staging = self._upload_ring[self._upload_next]
                self._upload_next ^= 1
                if staging.map_state != "mapped":
                    staging.map_sync(wgpu.MapMode.WRITE)
                staging.write_mapped(chunk, 0)
                staging.unmap()
                self._end_pass()
                self.encoder.copy_buffer_to_buffer(staging, 0, buf.buffer, start, chunk.nbytes)
                self.flush()

    def read(self, buf: DeviceBuffer, offset: int, nbytes: int) -> np.ndarray:
        """Bytes [offset, offset + nbytes) of ``buf`` as a new uint8 array (flushes the batch).

        Large reads stream through two pooled staging buffers, so the device's copy of
        one chunk overlaps the host's copy of the previous one."""
        if nbytes == 0:
            return np.empty(0, np.uint8)
        if self._recorder is not None:
            with self.lock:  # the recording thread holds it (another waits for the recording's end)
                rec = self._recorder
                if rec is not None:  # a routine being recorded reads: its replays check these bytes
                    with self.unrecorded():
                        out = self.read(buf, offset, nbytes)
                    rec.read(buf, offset, nbytes, out)
                    return out
        if type(buf) is SegmentedBuffer:
            out = np.empty(nbytes, np.uint8)
            for part, local, take, at in buf.pieces(offset, nbytes):
                out[at:at + take] = self.read(part, local, take)
            return out
        start = offset - offset % 4
        end = offset + nbytes
        end += -end % 4
        if end - start <= SMALL_READ:
            raw = self._read_small(buf, start, end)
            count("readbacks")
            count("bytes_downloaded", nbytes)
            return raw[offset - start: offset - start + nbytes]
        out = host_pool.take(end - start)
        with self.lock:
            chunks = [(c, min(c + READ_CHUNK, end)) for c in range(start, end, READ_CHUNK)]
            size = min(READ_CHUNK, end - start)
            staging_size = size_class(size)
            bucket = self._staging[staging_size]
            ring = [bucket.pop() if bucket else self.wgpu.create_buffer(size=staging_size, usage=_STAGING_USAGE)
                    for _ in range(min(2, len(chunks)))]
            try:
                self._end_pass()
                for i, (c0, c1) in enumerate(chunks[:len(ring)]):
                    self.encoder.copy_buffer_to_buffer(buf.buffer, buf.offset + c0, ring[i], 0, c1 - c0)
                self.flush()
                for i, (c0, c1) in enumerate(chunks):
                    staging = ring[i % len(ring)]
                    self._map_read(staging, c1 - c0)
                    try:
                        if self._native is not None:
                            raw = self._native.mapped_view(staging, c1 - c0)
                        else:
                            raw = staging.read_mapped(0, c1 - c0, copy=False)
                        _parallel_copy(out[c0 - start:c1 - start], np.frombuffer(raw, np.uint8))
                    finally:
                        self._unmap(staging)
                    nxt = i + len(ring)
                    if nxt < len(chunks):
                        n0, n1 = chunks[nxt]
                        self._end_pass()
                        self.encoder.copy_buffer_to_buffer(buf.buffer, buf.offset + n0, staging, 0, n1 - n0)
                        self.flush()
            finally:
                bucket.extend(ring)
        count("readbacks")
        count("bytes_downloaded", nbytes)
        return out[offset - start: offset - start + nbytes]

    def read_many(self, parts) -> list[np.ndarray]:
        """``read`` of several small ranges ``(buf, offset, nbytes)`` in one round trip:
        each copied into its place in one pooled staging buffer, one submit, one map.
        A host-side decision that needs a few small arrays (a tally and the value it is
        looked up with) pays one readback, not one per array (~250 us each on an H200)."""
        if any(type(p[0]) is SegmentedBuffer for p in parts):
            return [self.read(buf, offset, nbytes) for buf, offset, nbytes in parts]
        spans = []
        total = 0
        for buf, offset, nbytes in parts:
            start = offset - offset % 4
            end = offset + nbytes
            end += -end % 4
            spans.append((buf, start, end, total, offset - start, nbytes))
            total += end - start
        if total > SMALL_READ:
            return [self.read(buf, offset, nbytes) for buf, offset, nbytes in parts]
        if total == 0:
            return [np.empty(0, np.uint8) for _ in parts]
        raw = self._staged([(buf, start, end, at) for buf, start, end, at, _, _ in spans], total)
        count("readbacks")
        count("bytes_downloaded", sum(p[2] for p in parts))
        return [raw[at + skip: at + skip + nbytes] for _, _, _, at, skip, nbytes in spans]

    def _read_small(self, buf: DeviceBuffer, start: int, end: int) -> np.ndarray:
        """One copy into one pooled staging buffer and one map: the element read of a
        synchronizing loop step, without the chunked path's bookkeeping."""
        return self._staged([(buf, start, end, 0)], end - start)

    def _staged(self, copies, total: int) -> np.ndarray:
        """The bytes of ``copies`` ``(buf, start, end, at)``, each copied to ``at`` of one
        pooled staging buffer of ``total`` bytes: one submit, one map."""
        size = size_class(total)
        with self.lock:
            bucket = self._staging[size]
            staging = bucket.pop() if bucket else self.wgpu.create_buffer(size=size, usage=_STAGING_USAGE)
            try:
                self._end_pass()
                for buf, start, end, at in copies:
                    if end > start:
                        self.encoder.copy_buffer_to_buffer(buf.buffer, buf.offset + start, staging, at, end - start)
                self.flush()
                self._map_read(staging, total)
                try:
                    if self._native is not None:
                        return self._native.mapped_bytes(staging, total)
                    return np.frombuffer(staging.read_mapped(0, total, copy=False), np.uint8).copy()
                finally:
                    self._unmap(staging)
            finally:
                bucket.append(staging)

    def _map_read(self, staging, nbytes: int) -> None:
        """Map bytes [0, nbytes) of a staging buffer whose copy has been submitted.

        wgpu-py's ``map_sync`` makes an extra empty submit before each read map (a guard
        for buffers never written by the device, not needed here: ours were just copied
        into) and then waits for its poll thread to signal, two thread hand-offs. Instead
        the map is requested without that submit and this thread polls the device,
        blocking until the work is done, so the map callback normally runs right here.
        With the direct C calls (``_NativeCalls.map_read``) wgpu-py's promise and poll
        thread stay out of it altogether."""
        self._flush_growth = 0  # the device is idle after this: the next batch goes soon
        if self._recorder is not None:
            self._recorder.drop()  # a decision on device data may follow: not replayable
        self._early_s = self.early_submit_s
        if self._native is not None:
            self._native.map_read(self.wgpu, staging, nbytes, self._map_slot, self._spin_s)
            return
        try:
            promise = staging.map_async(self._read_mode, 0, nbytes)
        except (KeyError, ValueError, TypeError, AttributeError):  # a wgpu-py without the internal mode
            self._read_mode = wgpu.MapMode.READ
            promise = staging.map_async(self._read_mode, 0, nbytes)
        poll = getattr(self.wgpu, "_poll_wait", None)
        if poll is not None:
            poll()
        promise.sync_wait()  # at once when the callback already ran

    def _unmap(self, staging) -> None:
        if self._native is not None:
            self._native.unmap(staging)
        else:
            staging.unmap()

    def copy(self, src: DeviceBuffer, src_offset: int, dst: DeviceBuffer, dst_offset: int, nbytes: int) -> None:
        with self.lock:
            if self._recorder is not None:
                self._recorder.copy(src, src_offset, dst, dst_offset, nbytes)
            self._end_pass()
            self._copy(src, src_offset, dst, dst_offset, nbytes)

    def _copy(self, src: DeviceBuffer, src_offset: int, dst: DeviceBuffer, dst_offset: int, nbytes: int) -> None:
        if type(src) is SegmentedBuffer or type(dst) is SegmentedBuffer:
            for spart, slocal, take, at in _pieces(src, src_offset, nbytes):
                for dpart, dlocal, dtake, dat in _pieces(dst, dst_offset + at, take):
                    self._copy(spart, slocal + dat, dpart, dlocal, dtake)
            return
        self._close_pass()
        self.encoder.copy_buffer_to_buffer(src.buffer, src.offset + src_offset, dst.buffer, dst.offset + dst_offset,
                                           nbytes)
        self.keep.append(src)
        self.keep.append(dst)
        for b in (src, dst):
            self.keep_counts[b.uid] = self.keep_counts.get(b.uid, 0) + 1

    def store(self, dst: DeviceBuffer, dst_offset: int, data: bytes) -> None:
        """Record a write of ``data`` (whole 4-byte words) into ``dst`` at ``dst_offset``,
        in order with the batch's other commands.

        Consecutive stores of one size into one buffer (scikit-learn's fill_diagonal
        loop: thousands of element writes) gather into a run, recorded when any other
        command comes (or the batch is submitted): a short run as buffer copies from
        the parameter ring, a longer one as scatter dispatches of up to a parameter
        window of (word offset, value) pairs each, so the loop costs the device a few
        dispatches instead of a copy command per element. A later store to the same
        element replaces the earlier one in the run, which keeps the last value."""
        if type(dst) is SegmentedBuffer:  # a whole element never crosses a segment boundary
            dst, dst_offset, _, _ = dst.pieces(dst_offset, len(data))[0]
        if self._recorder is not None:
            self._recorder.drop()  # data from the host
        with self.lock:
            words = len(data) >> 2
            run = self._store_run
            if run is None or run[0] is not dst or run[1] != words or run[2] is not None:
                if run is not None:
                    self._record_stores()
                run = self._store_run = (dst, words, None, 0, {})
            run[4][dst_offset >> 2] = data
        count("stores")

    def store_from(self, src: DeviceBuffer, src_offset: int, dst: DeviceBuffer, dst_offset: int,
                   nbytes: int) -> None:
        """``copy`` of one element (whole 4-byte words, at word offsets) from ``src`` into
        ``dst``, gathered into a run as ``store`` does: consecutive copies of one source
        element into one buffer (scikit-learn's fill_diagonal with a 0-d value array)
        are recorded as a few dispatches that broadcast it. ``src`` is not ``dst``."""
        if type(src) is SegmentedBuffer:
            src, src_offset, _, _ = src.pieces(src_offset, nbytes)[0]
        if type(dst) is SegmentedBuffer:
            dst, dst_offset, _, _ = dst.pieces(dst_offset, nbytes)[0]
        if self._recorder is not None:
            self._recorder.drop()  # element stores are gathered into runs: not recorded
        with self.lock:
            words = nbytes >> 2
            run = self._store_run
            if (run is None or run[0] is not dst or run[1] != words or run[2] is not src
                    or run[3] != src_offset >> 2):
                if run is not None:
                    self._record_stores()
                run = self._store_run = (dst, words, src, src_offset >> 2, {})
            run[4][dst_offset >> 2] = None
        count("stores")

    def batch_refs(self, buf: DeviceBuffer) -> int:
        """How many references to ``buf`` the batch being recorded holds (its commands'
        and the pending element stores')."""
        run = self._store_run
        held = self.keep_counts.get(buf.uid, 0)
        if run is not None:
            held += (run[0] is buf) + (run[2] is buf)
        return held

    def _record_stores(self) -> None:
        """Record the pending run of element stores (see ``store``, ``store_from``)."""
        dst, words, src, src_word, stores = self._store_run
        self._store_run = None
        # a buffer past the binding limit takes copies (a scatter would bind it whole)
        if len(stores) <= STORE_RUN_COPIES or dst.size > self.device.max_binding_bytes:
            for word, data in stores.items():
                if src is None:
                    self._store_copy(dst, word << 2, data)
                else:
                    self._copy(src, src_word << 2, dst, word << 2, words << 2)
            return
        kernel = self._scatter_kernel(words, src is not None)
        if src is None:
            per = (PARAM_WINDOW - 8) // (4 * (words + 1))
        else:
            per = (PARAM_WINDOW - 12) // 4
        items = list(stores.items())
        for start in range(0, len(items), per):
            chunk = items[start:start + per]
            if src is None:
                params = bytearray(struct.pack("<2I", len(chunk), words))
                for word, data in chunk:
                    params += word.to_bytes(4, "little")
                    params += data
                self.dispatch(kernel, [dst], bytes(params), -(-len(chunk) // 64), held=())
            else:
                params = struct.pack(f"<3I{len(chunk)}I", len(chunk), words, src_word, *[w for w, _ in chunk])
                self.dispatch(kernel, [src, dst], params, -(-len(chunk) // 64), held=())

    def _store_copy(self, dst: DeviceBuffer, dst_offset: int, data: bytes) -> None:
        """One store as a copy command from the parameter ring."""
        if len(self.params) + len(data) > PARAM_RING or self.n_dispatches >= MAX_BATCH_DISPATCHES:
            self.flush()
        self.params += b"\0" * (-len(self.params) % 4)
        offset = len(self.params)
        self.params += data
        self._close_pass()
        self.encoder.copy_buffer_to_buffer(self.params_buffer, offset, dst.buffer, dst.offset + dst_offset, len(data))
        self.keep.append(dst)
        self.keep_counts[dst.uid] = self.keep_counts.get(dst.uid, 0) + 1
        self.n_dispatches += 1

    def _scatter_kernel(self, words: int, from_buffer: bool) -> Kernel:
        """The kernel that writes ``n`` elements of ``words`` words each into ``O``.
        Parameters ``n, words``, then per element its word offset in ``O`` and its
        words; or (``from_buffer``) ``n, words``, the source's word offset in ``S``,
        then per element its word offset in ``O``: each gets a copy of that element."""
        def build():
            out = _launch.Binding("O", "u32", write=True)
            if from_buffer:
                record = _launch.Launch(f"store_broadcast_{words}", (_launch.Binding("S", "u32"), out),
                                        workgroup=64)
                at, value = "3u + i", "S[P[2] + k]"
            else:
                record = _launch.Launch(f"store_scatter_{words}", (out,), workgroup=64)
                at, value = f"2u + i * {words + 1}u", "P[at + 1u + k]"
            src = "\n" + "\n".join(record.declarations()) + f"""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P[0]) {{
        return;
    }}
    let at = {at};
    let o = P[at];
    for (var k = 0u; k < {words}u; k++) {{
        O[o + k] = {value};
    }}
}}
"""
            return record, src

        return self.compile(("store", ("broadcast" if from_buffer else "scatter", words)), build)

    # ---------------------------------------------------------------- pipelines
    def compile(self, key, build) -> Kernel:
        """The cached Kernel for ``key`` (``(family, spec)``: see ``launch``);
        ``build()`` returns its (Launch record, WGSL)."""
        k = self.kernels.get(key)
        if k is None:
            _launch.check_key(key)
            record, source = build()
            _launch.log_compiled(key, record, source)
            k = self._compile(record.name, source, record.writes, record.f64_params, key, record)
            self.kernels[key] = k
        return k

    def launch(self, kernel: Kernel, buffers: dict, params: bytes, groups: int, held=None) -> None:
        """``dispatch`` with the buffers by name, checked against the kernel's record."""
        self.dispatch(kernel, kernel.record.buffers(buffers), params, groups, held)

    def launch_ordered(self, kernel: Kernel, buffers: list, params: bytes, groups: int, held=None) -> None:
        """``launch`` with the buffers already in the record's binding order, for a
        driver that checked them by name once (``launch`` on the first call) and
        replays the same binding pattern: the name check stays off the hot path, the
        count is still checked."""
        if len(buffers) != kernel.record.n_bindings:
            raise _launch.LaunchError(f"kernel {kernel.name}: expected {kernel.record.n_bindings} buffers, "
                                      f"got {len(buffers)}")
        self.dispatch(kernel, buffers, params, groups, held)

    def kernel(self, key, build):
        """The cached Kernel for ``key``; ``build()`` returns (name, wgsl, writes, f64_params).
        The older path: new kernels use ``compile`` with a launch record."""
        k = self.kernels.get(key)
        if k is None:
            name, source, writes, f64_params = build()
            _launch.log_compiled(key, _launch.Launch(name), source)
            k = self._compile(name, source, tuple(writes), f64_params, key)
            self.kernels[key] = k
        return k

    def _layout(self, writes: tuple[bool, ...], f64_params: bool):
        key = (writes, f64_params)
        found = self._layouts.get(key)
        if found is not None:
            return found
        entries = []
        for i, w in enumerate(writes):
            kind = wgpu.BufferBindingType.storage if w else wgpu.BufferBindingType.read_only_storage
            entries.append({"binding": i, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": kind}})
        for j in range(2 if f64_params else 1):
            entries.append({
                "binding": len(writes) + j,
                "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": wgpu.BufferBindingType.read_only_storage, "has_dynamic_offset": True},
            })
        bgl = self.wgpu.create_bind_group_layout(entries=entries)
        pl = self.wgpu.create_pipeline_layout(bind_group_layouts=[bgl])
        found = (bgl, pl, key)
        self._layouts[key] = found
        return found

    def _compile(self, name, source, writes, f64_params, key, record=None) -> Kernel:
        bgl, pl, layout_key = self._layout(writes, f64_params)
        try:
            module = self.wgpu.create_shader_module(label=name, code=source)
            pipeline = self.wgpu.create_compute_pipeline(
                label=name, layout=pl, compute={"module": module, "entry_point": "main"})
        except Exception as exc:  # noqa: BLE001 - wgpu raises several types for a rejected shader
            raise KernelCompileError(name, key, source, exc) from exc
        count("pipelines_compiled")
        return Kernel(name, pipeline, bgl, layout_key, writes, 2 if f64_params else 1, source, record)

    # ------------------------------------------------------------------ batches
    # ---------------------------------------------------------------- timing
    @contextlib.contextmanager
    def gpu_timer(self, max_passes: int = 256):
        """Measure device time with timestamp queries (needs the 'timestamp-query'
        feature): ``with rt.gpu_timer() as t: ...`` then ``t.seconds`` is the summed
        duration of every compute pass recorded inside the block (``t.passes`` of them)."""
        with self._stamping("gpu_timer", per_dispatch=False, chunk=max_passes) as stamps:
            result = _TimerResult()
            yield result
        result.seconds = sum(stamps.seconds)
        result.passes = len(stamps.seconds)

    @contextlib.contextmanager
    def gpu_profile(self):
        """Device time per kernel: inside the block every dispatch gets a compute pass of
        its own with timestamps (slower than normal batching, so for diagnosis only);
        afterwards ``p.kernels`` maps kernel name -> [dispatches, seconds]."""
        with self._stamping("gpu_profile", per_dispatch=True, chunk=2048) as stamps:
            result = _ProfileResult()
            yield result
        for name, sec in zip(stamps.labels, stamps.seconds):
            entry = result.kernels.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += sec

    @contextlib.contextmanager
    def _stamping(self, caller: str, per_dispatch: bool, chunk: int):
        if "timestamp-query" not in self.device.features:
            raise RuntimeError(f"{caller}: device {self.device.name!r} lacks the 'timestamp-query' feature")
        if self._timing is not None:
            raise RuntimeError(f"{caller}: a device timer is already running on {self.device.name!r}")
        stamps = _Stamps(per_dispatch, max(1, chunk))
        with self.lock:
            self.flush()
            self._timing = stamps
            self.encoder = self._new_encoder()  # the empty batch's encoder, as timing needs it
        try:
            yield stamps
        finally:
            with self.lock:
                self._end_pass()
                self._timing = None
                resolved = []
                for qs, used in stamps.sets:
                    if used:
                        nbytes = 16 * used
                        resolve = self.wgpu.create_buffer(size=nbytes, usage=wgpu.BufferUsage.QUERY_RESOLVE
                                                          | wgpu.BufferUsage.COPY_SRC)
                        staging = self.wgpu.create_buffer(size=nbytes, usage=_STAGING_USAGE)
                        self.encoder.resolve_query_set(qs, 0, 2 * used, resolve, 0)
                        self.encoder.copy_buffer_to_buffer(resolve, 0, staging, 0, nbytes)
                        resolved.append(staging)
                self.flush()
                for staging in resolved:
                    staging.map_sync(wgpu.MapMode.READ)
                    ticks = np.frombuffer(staging.read_mapped(copy=True), np.uint64).reshape(-1, 2)
                    staging.unmap()
                    # the device's timestamp period is 1 ns on wgpu's backends
                    stamps.seconds.extend(float(t1 - t0) * 1e-9 for t0, t1 in ticks)

    def _begin_pass(self, label: str | None = None):
        stamps = self._timing
        if stamps is None:
            if _NATIVE is not None:
                return _NATIVE.begin_pass(self.encoder)
            return self.encoder.begin_compute_pass()
        if not stamps.sets or stamps.sets[-1][1] == stamps.chunk:
            stamps.sets.append([self.wgpu.create_query_set(type=wgpu.QueryType.timestamp,
                                                           count=2 * stamps.chunk), 0])
        current = stamps.sets[-1]
        i = current[1]
        current[1] += 1
        stamps.labels.append(label)
        return self.encoder.begin_compute_pass(timestamp_writes={
            "query_set": current[0], "beginning_of_pass_write_index": 2 * i,
            "end_of_pass_write_index": 2 * i + 1})

    def _end_pass(self) -> None:
        """Close the open compute pass before a command outside of it (a copy, the
        submit), after recording the pending element stores, which come first."""
        if self._store_run is not None:
            self._record_stores()
        self._close_pass()

    def _close_pass(self) -> None:
        if self.cpass is not None:
            self.cpass.end()
            self.cpass = None

    def _new_encoder(self):
        # timestamps (gpu_timer, gpu_profile) take wgpu-py's encoder, for its passes
        # with timestamp writes and its resolve_query_set
        if self._native is not None and self._timing is None:
            return self._native.encoder(self.wgpu)
        return self.wgpu.create_command_encoder()

    def _reset_batch(self) -> None:
        self.encoder = self._new_encoder()
        # (buffer, words per element, source buffer or None, source word offset,
        # {word offset: bytes or None}): see store and store_from
        self._store_run = None
        self.cpass = None
        self._pass_pipeline = None
        self.params = bytearray()
        self.keep: list = []  # DeviceBuffers referenced by recorded commands
        self._pass_bind_groups: list = []  # bind groups set by native calls in this batch
        self.keep_bytes = 0
        self.keep_counts: dict[int, int] = {}  # uid -> references to it in keep
        self.n_dispatches = 0

    def _bind_group(self, kernel: Kernel, buffers, uids=None):
        key = (kernel.layout_key, tuple(map(_UID, buffers)) if uids is None else uids)
        bg = self._bind_groups.get(key)
        if bg is not None:
            self._bind_groups.move_to_end(key)
            return bg
        limit = self.device.max_binding_bytes
        for b in buffers:
            if b.size > limit:
                raise PastBindingLimit(
                    f"{public_caller()}: expected arrays of at most {limit} bytes (the storage-binding limit of "
                    f"{self.device.name!r}), got one of {b.size} bytes: elementwise operations, reductions and "
                    f"transfers take arrays past that limit, this function does not yet")
        bindings = [(b.buffer, b.offset, b.size) for b in buffers]
        bindings += [(self.params_buffer, 0, PARAM_WINDOW)] * kernel.n_params_bindings
        bg = _create_bind_group(self.wgpu, kernel.layout, bindings)
        self._bind_groups[key] = bg
        if len(self._bind_groups) > 4096:
            self._bind_groups.popitem(last=False)
        return bg

    def dispatch(self, kernel: Kernel, buffers, params: bytes, groups: int, held=None) -> None:
        """Record one dispatch of ``groups`` workgroups (folded into 2-D past 65535).
        ``held``: the buffers that count towards the batch's bytes (default all; an
        in-place write leaves out its target, which is no temporary)."""
        if groups <= 0:
            return
        with self.lock:
            # the bind group first: where it raises (a buffer past the binding limit),
            # nothing has been recorded (an open pass left with a half-made dispatch
            # crashed wgpu-native at exit)
            uids = tuple(map(_UID, buffers))
            bg = self._bind_groups.get((kernel.layout_key, uids))  # (_bind_group's hit, without its call)
            if bg is None:
                bg = self._bind_group(kernel, buffers, uids)
            else:
                self._bind_groups.move_to_end((kernel.layout_key, uids))
            if self._store_run is not None:
                self._record_stores()
            if self._recorder is not None:
                self._recorder.dispatch(kernel, buffers, params, groups, held)
            used = len(self.params)
            full = self.keep_bytes > min(BATCH_FLUSH_BYTES << self._flush_growth, BATCH_FLUSH_MAX_BYTES)
            due = False  # the early submit
            early = self._early_s
            if (early is not None and self.n_dispatches >= EARLY_SUBMIT_MIN_DISPATCHES
                    and time.perf_counter() - self._batch_t0 > early):
                self._early_s = early * 2
                due = True
            if (used + len(params) + self.param_align > PARAM_RING
                    or self.n_dispatches >= MAX_BATCH_DISPATCHES or full or due):
                # the last: a batch keeps every buffer it uses alive until it is
                # submitted, so a long loop that never synchronizes would allocate a
                # fresh buffer for every temporary (slow: ~3 ms per 64 MiB on an H200)
                if full and self._flush_growth < 16:
                    self._flush_growth += 1
                self.flush()
                used = 0
            if not self.n_dispatches and early is not None:
                self._batch_t0 = time.perf_counter()  # when the host began recording this batch
            pad = -used % self.param_align
            if pad:
                self.params += b"\0" * pad
            offset = used + pad
            self.params += params
            stamps = self._timing
            if stamps is not None and stamps.per_dispatch:
                self._close_pass()
            cpass = self.cpass
            if cpass is None:
                cpass = self.cpass = self._begin_pass(kernel.name)
                self._pass_pipeline = None
            if self._pass_pipeline is not kernel.pipeline:  # a pass keeps its pipeline set
                cpass.set_pipeline(kernel.pipeline)
                self._pass_pipeline = kernel.pipeline
            if _NATIVE is not None:
                self._pass_bind_groups.append(bg)  # alive while the pass refers to it
                _NATIVE.set_bind_group_and_dispatch(cpass, bg, self._offsets_c, offset, kernel.n_params_bindings,
                                                    min(groups, 65535), -(-groups // 65535))
            else:
                cpass.set_bind_group(0, bg, [offset] * kernel.n_params_bindings)
                cpass.dispatch_workgroups(min(groups, 65535), -(-groups // 65535))
            if stamps is not None and stamps.per_dispatch:
                self._close_pass()
            self.keep.extend(buffers)
            kept = self.keep_counts
            for uid in uids:
                kept[uid] = kept.get(uid, 0) + 1
            # every binding counts, a buffer bound again too: the sum is also the
            # batch's memory traffic, so a long factorization is submitted in pieces
            # and the device starts while the host records the rest (cholesky 4096 on
            # an H200 counting each buffer once: 1 submit, 18.4 ms wall for 8.7 ms of
            # device work; in 64 pieces 11.5 ms)
            self.keep_bytes += sum(map(_SIZE, buffers if held is None else held))
            self.n_dispatches += 1
        _COUNTERS["dispatches"] += 1

    def flush(self) -> None:
        """Submit everything recorded so far."""
        with self.lock:
            self._end_pass()
            params = self.params
            try:
                if params and params != self._params_uploaded:
                    self._write(self.params_buffer, 0, params)
                    # a loop step's batch usually repeats the last one's parameters (the
                    # same sizes and scalars): then the buffer already holds them (~10 us)
                    self._params_uploaded = bytes(params) if len(params) <= PARAMS_REMEMBERED else None
                encoder = self.encoder
                if isinstance(encoder, _Encoder):
                    encoder.native.submit(self.wgpu.queue, encoder, self._map_slot)
                else:
                    self.wgpu.queue.submit([encoder.finish()])
            finally:
                # a batch that failed to finish is gone either way: the next starts clean
                self._reset_batch()
            count("submits")
            self.pool.recycle_pending()

    def sync(self) -> None:
        """Submit and wait until the device has finished all work.

        (A 4-byte readback: mapping waits for every earlier submission, and unlike
        ``on_submitted_work_done_sync`` it works on every wgpu-py version.)"""
        with self.lock:
            staging = self._staging[16].pop() if self._staging[16] else self.wgpu.create_buffer(
                size=16, usage=_STAGING_USAGE)
            self._end_pass()
            self.encoder.copy_buffer_to_buffer(self.params_buffer, 0, staging, 0, 4)
            self.flush()
            self._map_read(staging, 4)
            self._unmap(staging)
            self._staging[16].append(staging)


def _create_bind_group(device, layout, bindings):
    """A bind group of buffer bindings 0, 1, ... (buffer, offset, size).

    wgpu-py's ``create_bind_group`` validates and converts every entry in Python (~100 us
    for a few buffers); here the C descriptor is filled directly through wgpu-py's own
    cffi objects, and the result is wgpu-py's bind group object. Where those internals
    differ (another wgpu-py), the public call does the work."""
    if _NATIVE is not None:
        try:
            return _NATIVE.bind_group(device, layout, bindings)
        except Exception:  # noqa: BLE001 - an incompatible wgpu-py: the public path below
            pass
    entries = [{"binding": i, "resource": {"buffer": buf, "offset": offset, "size": size}}
               for i, (buf, offset, size) in enumerate(bindings)]
    return device.create_bind_group(layout=layout, entries=entries)


class _NativeCalls:
    def __init__(self):
        from wgpu.backends.wgpu_native import _api

        self.api = _api
        self.ffi = _api.ffi
        self.create = _api.libf.wgpuDeviceCreateBindGroup
        self.lib = _api.lib  # the C functions themselves, without wgpu-py's error capture
        self.end_pass = _api.libf.wgpuComputePassEncoderEnd  # with it: a pass reports its errors here
        self.pass_descriptor = self.ffi.new("WGPUComputePassDescriptor *")  # zeroed: no label, no timestamps
        self.descriptors = threading.local()  # entry count -> bind group descriptor (see bind_group)
        self.lib.wgpuBindGroupRelease  # noqa: B018
        self.lib.wgpuComputePassEncoderSetBindGroup  # noqa: B018 - present, or the public path
        self.lib.wgpuComputePassEncoderDispatchWorkgroups  # noqa: B018
        self.lib.wgpuCommandEncoderBeginComputePass  # noqa: B018
        self.lib.wgpuComputePassEncoderSetPipeline  # noqa: B018
        self.lib.wgpuComputePassEncoderRelease  # noqa: B018
        self.finish = _api.libf.wgpuCommandEncoderFinish
        self.queue_submit = _api.libf.wgpuQueueSubmit
        self.encoder_descriptor = self.ffi.new("WGPUCommandEncoderDescriptor *")
        self.command_buffer_descriptor = self.ffi.new("WGPUCommandBufferDescriptor *")
        for name in ("wgpuDeviceCreateCommandEncoder", "wgpuCommandEncoderRelease", "wgpuCommandBufferRelease",
                     "wgpuCommandEncoderCopyBufferToBuffer", "wgpuQueueWriteBuffer", "wgpuBufferMapAsync",
                     "wgpuDevicePoll", "wgpuBufferGetConstMappedRange", "wgpuBufferUnmap"):
            getattr(self.lib, name)  # present, or the public path
        # one map callback for every readback: it stores the status in the cell that
        # userdata1 points at (each runtime has its cell, see map_slot)
        ffi = self.ffi

        @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
        def map_done(status, message, cell, _unused):
            ffi.cast("int *", cell)[0] = status

        self.map_done = map_done  # alive as long as this object

    def map_slot(self):
        """A runtime's own (status cell, callback info, command buffer array): its lock
        serializes its readbacks and submits, another runtime's run beside them."""
        ffi = self.ffi
        status = ffi.new("int[1]")
        info = ffi.new("WGPUBufferMapCallbackInfo *")
        info.mode = self.lib.WGPUCallbackMode_AllowProcessEvents
        info.callback = self.map_done
        info.userdata1 = ffi.cast("void *", status)
        return status, info, ffi.new("WGPUCommandBuffer[1]")

    def encoder(self, device):
        """A command encoder made by a direct C call, as an ``_Encoder``."""
        return _Encoder(self, self.lib.wgpuDeviceCreateCommandEncoder(device._internal, self.encoder_descriptor))

    def submit(self, queue, encoder, slot) -> None:
        """Finish ``encoder`` (an ``_Encoder``) and submit its command buffer. Finish and
        submit go through wgpu-py's error capture: an encoder reports the errors of
        everything recorded into it when it finishes, so a bad command still raises."""
        internal, encoder._internal = encoder._internal, None
        try:
            command_buffer = self.finish(internal, self.command_buffer_descriptor)
        finally:
            self.lib.wgpuCommandEncoderRelease(internal)
        try:
            commands = slot[2]
            commands[0] = command_buffer
            self.queue_submit(queue._internal, 1, commands)
        finally:
            self.lib.wgpuCommandBufferRelease(command_buffer)

    def write(self, queue, buffer, offset: int, data) -> None:
        """``queue.write_buffer(buffer, offset, data)`` for bytes-like ``data`` of whole
        4-byte words, without wgpu-py's argument conversion."""
        self.lib.wgpuQueueWriteBuffer(queue._internal, buffer._internal, offset, self.ffi.from_buffer(data),
                                      len(data))

    def map_read(self, device, buffer, nbytes: int, slot, spin_s: float = 0.0) -> None:
        """Map bytes [0, nbytes) of ``buffer`` (a MAP_READ buffer whose copy has been
        submitted) and wait here until mapped.

        wgpu-py's ``map_async`` builds a callback and a promise per call and wakes its
        poll thread, whose polling then contends with this thread for the GIL; here
        one callback made once records the status in a cell, and this thread polls
        the device itself (blocking until the queue is idle, which runs the callback)."""
        self.map_request(buffer, nbytes, slot)
        self.map_wait(device, nbytes, slot, spin_s)

    def map_request(self, buffer, nbytes: int, slot) -> None:
        slot[0][0] = 0
        self.lib.wgpuBufferMapAsync(buffer._internal, self.lib.WGPUMapMode_Read, 0, nbytes, slot[1][0])

    def map_wait(self, device, nbytes: int, slot, spin_s: float = 0.0) -> None:
        """Wait for the map that ``map_request`` asked for: polling without blocking
        for up to ``spin_s`` seconds first (a short kernel's readback then returns
        without the driver's sleep and wake-up), then blocking until the queue is idle."""
        lib = self.lib
        status = slot[0]
        internal = device._internal
        null = self.ffi.NULL
        if spin_s > 0.0:
            end = time.perf_counter() + spin_s
            while status[0] == 0 and not lib.wgpuDevicePoll(internal, False, null) \
                    and time.perf_counter() < end:
                pass
        polls = 0
        while status[0] == 0:
            lib.wgpuDevicePoll(internal, True, null)
            polls += 1
            if polls > 1000 and status[0] == 0:
                raise RuntimeError(f"{public_caller()}: a readback of {nbytes} bytes was never mapped "
                                   "(the device may be lost)")
        if status[0] != lib.WGPUMapAsyncStatus_Success:
            raise RuntimeError(f"{public_caller()}: could not map a readback buffer of {nbytes} bytes "
                               f"(status {status[0]}; the device may be lost)")

    def mapped_bytes(self, buffer, nbytes: int) -> np.ndarray:
        """A new uint8 array holding bytes [0, nbytes) of a mapped ``buffer``."""
        out = np.empty(nbytes, np.uint8)
        self.mapped_into(buffer, out)
        return out

    def mapped_view(self, buffer, nbytes: int):
        """Bytes [0, nbytes) of a mapped ``buffer`` as a buffer object, valid until unmap."""
        return self.ffi.buffer(self.lib.wgpuBufferGetConstMappedRange(buffer._internal, 0, nbytes), nbytes)

    def mapped_into(self, buffer, out: np.ndarray) -> None:
        nbytes = out.nbytes
        src = self.lib.wgpuBufferGetConstMappedRange(buffer._internal, 0, nbytes)
        self.ffi.memmove(self.ffi.from_buffer(out), src, nbytes)

    def unmap(self, buffer) -> None:
        self.lib.wgpuBufferUnmap(buffer._internal)

    def begin_pass(self, encoder):
        """A compute pass without a label or timestamps, begun by a direct C call, as a
        ``_Pass`` (set_pipeline, end): wgpu-py's ``begin_compute_pass`` builds its
        descriptor and a tracked Python object per pass, the first cost of every
        dispatch after a synchronization."""
        return _Pass(self, self.lib.wgpuCommandEncoderBeginComputePass(encoder._internal, self.pass_descriptor))

    def set_bind_group_and_dispatch(self, cpass, bg, offsets, offset: int, n_offsets: int, x: int, y: int) -> None:
        """``cpass.set_bind_group(0, bg, [offset] * n_offsets)`` then
        ``cpass.dispatch_workgroups(x, y)``, as two direct C calls. wgpu-py's own methods
        wrap each in its error capture and build the offsets array anew (~6 us of a
        dispatch's ~10 on lavapipe's host); a pass reports its errors when it ends and
        the encoder finishes, which still go through wgpu-py. ``offsets``: the runtime's
        own ``uint32_t[2]`` (the call copies it)."""
        offsets[0] = offset
        offsets[1] = offset
        internal = cpass._internal
        self.lib.wgpuComputePassEncoderSetBindGroup(internal, 0, bg._internal, n_offsets, offsets)
        self.lib.wgpuComputePassEncoderDispatchWorkgroups(internal, x, y, 1)

    def bind_group(self, device, layout, bindings):
        """A bind group of ``bindings`` ((buffer, offset, size) at bindings 0, 1, ...), as a
        ``_BindGroup``. The C descriptor of each entry count is made once per thread and
        refilled (the call copies it): a dispatch on buffers not bound together before
        costs the driver's ~9 us on lavapipe's host, not ~30 with a descriptor and a
        wgpu-py object per call."""
        n = len(bindings)
        descs = self.descriptors.__dict__
        found = descs.get(n)
        if found is None:
            ffi = self.ffi
            entries = ffi.new("WGPUBindGroupEntry[]", n)  # zeroed: no chain, sampler, view
            for i in range(n):
                entries[i].binding = i
            desc = ffi.new("WGPUBindGroupDescriptor *")
            desc.entryCount = n
            desc.entries = entries
            found = descs[n] = (entries, desc)
        entries, desc = found
        for e, (buf, offset, size) in zip(entries, bindings):
            e.buffer = buf._internal
            e.offset = offset
            e.size = size
        desc.layout = layout._internal
        return _BindGroup(self, self.create(device._internal, desc))


class _BindGroup:
    """A bind group made by ``_NativeCalls.bind_group`` (``_internal`` for the direct
    calls), released when the last reference goes."""

    __slots__ = ("native", "_internal")

    def __init__(self, native, internal):
        self.native = native
        self._internal = internal

    def __del__(self):
        try:
            self.native.lib.wgpuBindGroupRelease(self._internal)
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass


class _Encoder:
    """A command encoder begun by ``_NativeCalls.encoder``: what the runtime records
    into an encoder outside of a pass (``copy_buffer_to_buffer``; ``_internal`` for the
    pass and the submit), released when submitted or dropped."""

    __slots__ = ("native", "_internal")

    def __init__(self, native, internal):
        self.native = native
        self._internal = internal

    def copy_buffer_to_buffer(self, source, source_offset: int, destination, destination_offset: int,
                              size: int) -> None:
        self.native.lib.wgpuCommandEncoderCopyBufferToBuffer(self._internal, source._internal, source_offset,
                                                             destination._internal, destination_offset, size)

    def __del__(self):
        if self._internal is not None:  # never submitted
            try:
                self.native.lib.wgpuCommandEncoderRelease(self._internal)
            except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
                pass


class _Pass:
    """A compute pass begun by ``_NativeCalls.begin_pass``: what the runtime calls
    on a pass (``set_pipeline``, ``end``; ``_internal`` for the direct calls), released
    when it ends."""

    __slots__ = ("native", "_internal")

    def __init__(self, native, internal):
        self.native = native
        self._internal = internal

    def set_pipeline(self, pipeline) -> None:
        self.native.lib.wgpuComputePassEncoderSetPipeline(self._internal, pipeline._internal)

    def end(self) -> None:
        internal, self._internal = self._internal, None
        try:
            self.native.end_pass(internal)
        finally:
            self.native.lib.wgpuComputePassEncoderRelease(internal)

    def __del__(self):
        if self._internal is not None:  # never ended (an error on the way): still released
            try:
                self.native.lib.wgpuComputePassEncoderRelease(self._internal)
            except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
                pass


try:
    _NATIVE = _NativeCalls()
except Exception:  # noqa: BLE001 - not the wgpu_native backend
    _NATIVE = None


class _TimerResult:
    seconds = 0.0
    passes = 0


class _ProfileResult:
    def __init__(self):
        self.kernels: dict[str, list] = {}

    def table(self, top: int = 25) -> str:
        """The kernels by total device time, a line each."""
        total = sum(sec for _, sec in self.kernels.values()) or 1.0
        rows = sorted(self.kernels.items(), key=lambda kv: -kv[1][1])[:top]
        lines = [f"{'kernel':48s} {'dispatches':>10s} {'ms':>9s} {'us each':>9s} {'share':>6s}"]
        for name, (n, sec) in rows:
            lines.append(f"{str(name)[:48]:48s} {n:10d} {sec * 1e3:9.3f} {sec * 1e6 / n:9.1f} {sec / total:6.1%}")
        return "\n".join(lines)


class _Stamps:
    """Timestamp query sets of a running timer (``chunk`` passes each), one label per pass."""

    def __init__(self, per_dispatch: bool, chunk: int):
        self.per_dispatch = per_dispatch
        self.chunk = chunk
        self.sets: list[list] = []   # [query set, passes used]
        self.labels: list = []
        self.seconds: list[float] = []


class HostPool:
    """Reusable host memory for large readbacks.

    Writing into freshly allocated host memory is bound by page faults (about 3 GB/s
    on a typical server), half the speed of the copy itself. Large readbacks therefore
    land in pooled blocks whose pages are already mapped: the array handed out is a
    view of a block, and the block is reused once no array refers to it any more
    (NumPy views keep their base block alive, so its reference count tells).
    """

    MIN_BYTES = 8 << 20

    def __init__(self, limit_bytes: int):
        self.limit = limit_bytes
        self.blocks: dict[int, list[np.ndarray]] = collections.defaultdict(list)
        self.total = 0
        self.lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray:
        if nbytes < self.MIN_BYTES:
            return np.empty(nbytes, np.uint8)
        size = size_class(nbytes)
        with self.lock:
            for block in self.blocks[size]:
                # references: the list, this loop variable, getrefcount's argument
                if sys.getrefcount(block) <= 3:
                    return block[:nbytes]
            block = np.empty(size, np.uint8)
            if self.total + size <= self.limit:
                self.blocks[size].append(block)
                self.total += size
            return block[:nbytes]


host_pool = HostPool(int(os.environ.get("WGARRAY_HOST_POOL_MB", 2048)) << 20)

_COPY_PIECE = 4 << 20
_copy_pool = None


def _parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[:] = src, split over threads for large copies: writing fresh host memory is
    bound by page faults, which several cores take in parallel (NumPy releases the GIL)."""
    global _copy_pool
    n = src.nbytes
    if n < 2 * _COPY_PIECE:
        dst[:] = src
        return
    if _copy_pool is None:
        from concurrent.futures import ThreadPoolExecutor

        _copy_pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix="wgarray-copy")
    pieces = [(i, min(i + _COPY_PIECE, n)) for i in range(0, n, _COPY_PIECE)]
    list(_copy_pool.map(lambda p: dst.__setitem__(slice(p[0], p[1]), src[p[0]:p[1]]), pieces))


def pack_params(words) -> bytes:
    """Parameter words (ints as u32, or raw 4-byte chunks) to bytes."""
    return struct.pack(f"<{len(words)}I", *words)
