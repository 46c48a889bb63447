"""Recorded programs: a device routine whose commands follow from its inputs' layout
alone, recorded once and replayed.

A blocked factorization's driver decides a few hundred dispatches from shapes, strides
and the device: block loops, views, matmul tile choices, kernel lookups and parameter
packing, ~90 Python calls a dispatch, which on a GPU host takes longer than the device
takes to run them (cholesky of order 1024: 3.8 ms of host time for 1.4 ms of device
work). ``run`` records what such a routine asks of the runtime (buffer allocations,
dispatches with their kernels, parameter bytes and workgroup counts, buffer copies),
each buffer by its role (an input, or the n-th allocation), and replays that for the
next call whose inputs have the same layout: the allocations are made again and the
dispatches recorded straight into the batch. Bits and the batch's submits are those of
the driver's own run.

A readback in the routine (a decision taken on device data: a convergence test, a
rank check) becomes a guard: the replay reads the same bytes of its own run and goes on
only where they are the recorded ones, or, for a read made through ``read_decided``,
where they lead to the recorded decision (``err < 0.1``, whatever ``err`` is). Where a
guard fails, the replay stops (what it recorded so far writes only buffers it
allocated, which go back to the pool) and the routine runs and is recorded again; a
layout whose replays fail ``MAX_DIVERGED`` times is not recorded any more.

A recording is dropped (the routine's run stands, nothing is kept) as soon as the
routine does something a replay could not repeat: a buffer that is neither an input
nor one it allocated, an upload or an element store (data from the host), a read of
more than ``GUARD_BYTES``, or more than ``MAX_HELD_BYTES`` of allocations held for the
recording.
"""
from __future__ import annotations

import collections

from .._graph import node as g
from .._runtime.counters import count
from .._runtime.runtime import DeviceBuffer

PROGRAMS = True  # False: every call runs its driver (tests compare the two)
MAX_PROGRAMS = 64  # per runtime, least recently used dropped
MAX_HELD_BYTES = 512 << 20  # a recording keeps every buffer it allocates alive until it ends

MAX_DIVERGED = 2  # failed guards of one layout after which its routine just runs
GUARD_BYTES = 4096  # the largest readback a recording keeps as a guard

_ALLOC, _DISPATCH, _COPY, _READ = 0, 1, 2, 3


class Recorder:
    """Collects one routine's commands (see the module doc); ``runtime._recorder``
    while it runs."""

    __slots__ = ("bufs", "slots", "steps", "held", "ok")

    def __init__(self, inputs):
        self.bufs = list(inputs)  # slot -> buffer, kept alive so that ids stay unique
        self.slots = {id(b): i for i, b in enumerate(inputs)}
        self.steps: list = []
        self.held = 0
        self.ok = True

    def drop(self) -> None:
        """Stop recording: the routine does something a replay could not repeat."""
        self.ok = False
        self.bufs = self.steps = None
        self.slots = {}

    def alloc(self, buf, nbytes: int) -> None:
        if not self.ok:
            return
        self.held += nbytes
        if self.held > MAX_HELD_BYTES:
            self.drop()
            return
        self.slots[id(buf)] = len(self.bufs)
        self.bufs.append(buf)
        self.steps.append((_ALLOC, nbytes))

    def _ref(self, b):
        """A buffer's role: its slot, or (slot, start, size) for a window of one."""
        parent = getattr(b, "parent", None)  # a BufferWindow
        if parent is not None:
            slot = self.slots.get(id(parent))
            if slot is None or self.bufs[slot] is not parent:
                return None
            return (slot, b.offset, b.size)
        slot = self.slots.get(id(b))
        if slot is None or self.bufs[slot] is not b:
            return None
        return slot

    def _refs(self, buffers):
        refs = tuple(map(self._ref, buffers))
        if None in refs:
            self.drop()
            return None
        return refs

    def dispatch(self, kernel, buffers, params, groups: int, held) -> None:
        if not self.ok:
            return
        refs = self._refs(buffers)
        held_refs = None if held is None or refs is None else self._refs(held)
        if self.ok:
            self.steps.append((_DISPATCH, kernel, refs, bytes(params), groups, held_refs))

    def copy(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        if not self.ok:
            return
        refs = self._refs((src, dst))
        if self.ok:
            self.steps.append((_COPY, refs[0], src_offset, refs[1], dst_offset, nbytes))

    def read(self, buf, offset: int, nbytes: int, raw, decide=None) -> None:
        """A readback of the routine: a guard of its bytes (``decide`` None) or of
        ``decide(raw)``."""
        if not self.ok:
            return
        if nbytes > GUARD_BYTES:
            self.drop()
            return
        refs = self._refs((buf,))
        if self.ok:
            want = bytes(raw) if decide is None else decide(raw)
            self.steps.append((_READ, refs[0], offset, nbytes, decide, want))


def read_decided(data: g.Data, decide):
    """``decide(raw)`` of the bytes of the one-element ``data`` read back (a uint8
    array): a routine's decision on device data. In a recording the guard is the
    decision, so a replay holds for any value that leads to the same one."""
    rt = data.device.runtime
    size = data.dtype.itemsize
    rec = rt._recorder
    with rt.unrecorded():  # the read below is this guard, not one of its own
        raw = rt.read(data.buf, data.offset * size, size)
    if rec is not None:
        rec.read(data.buf, data.offset * size, size, raw, decide)
    return decide(raw)


class Program:
    """A recording that held: its steps and how its outputs are made of its buffers."""

    __slots__ = ("steps", "outputs", "diverged")

    def __init__(self, steps, outputs, diverged=0):
        self.steps = steps
        self.outputs = outputs  # per output Data: (slot, shape, dtype, offset, strides)
        self.diverged = diverged  # failed guards of this layout's earlier recordings

    def replay(self, rt, inputs, device):
        """The outputs (Data) of a replay, or None where a guard failed."""
        bufs = list(inputs)
        window = rt.window

        def resolve(ref):
            return bufs[ref] if type(ref) is int else window(bufs[ref[0]], ref[1], ref[2])

        for step in self.steps:
            op = step[0]
            if op is _DISPATCH:
                _, kernel, refs, params, groups, held = step
                rt.launch_ordered(kernel, [resolve(r) for r in refs], params, groups,
                                  None if held is None else [resolve(r) for r in held])
            elif op is _ALLOC:
                bufs.append(rt.alloc(step[1]))
            elif op is _COPY:
                _, src, so, dst, do, nbytes = step
                rt.copy(resolve(src), so, resolve(dst), do, nbytes)
            else:
                _, ref, offset, nbytes, decide, want = step
                raw = rt.read(resolve(ref), offset, nbytes)
                if (bytes(raw) if decide is None else decide(raw)) != want:
                    return None
        return tuple(g.Data(bufs[slot], shape, dtype, device, offset, strides)
                     for slot, shape, dtype, offset, strides in self.outputs)


def _layout(d: g.Data):
    # the buffer's size too: a driver may choose by it (a matmul near the binding limit)
    return (d.shape, d.dtype.name, d.offset, d.strides, d.buf.size)


def run(name: str, key, inputs, routine):
    """``routine(*datas)`` for ``inputs`` (nodes; realized here), a Data or a tuple of
    Data, replayed from a recording where one of ``name``, ``key`` (the routine's other
    arguments) and the inputs' layout exists; recorded where it does not."""
    datas = [g.realize(n) for n in inputs]
    device = datas[0].device
    rt = device.runtime
    bufs = [d.buf for d in datas]
    if (not PROGRAMS or rt._recorder is not None
            or any(type(b) is not DeviceBuffer for b in bufs)):
        return routine(*datas)  # nested in a recording, or an input this cannot bind alike
    full_key = (name, key, tuple(map(_layout, datas)))
    programs = rt.programs
    with rt.lock:
        prog = programs.get(full_key)
        diverged = 0
        if type(prog) is int:  # a layout whose last replay failed a guard: that many so far
            if prog >= MAX_DIVERGED:
                return routine(*datas)
            diverged, prog = prog, None
        if prog is not None:
            programs.move_to_end(full_key)
            out = prog.replay(rt, bufs, device)
            if out is not None:
                count("programs_replayed")
                return out if len(out) > 1 else out[0]
            count("programs_diverged")
            diverged = prog.diverged + 1
            programs[full_key] = diverged
            if diverged >= MAX_DIVERGED:
                return routine(*datas)
        if rt._store_run is not None:
            rt._record_stores()  # element stores made before: not the routine's
        rec = rt._recorder = Recorder(bufs)
        try:
            result = routine(*datas)
        finally:
            rt._recorder = None
        outs = result if type(result) is tuple else (result,)
        if rec.ok and all(type(o) is g.Data for o in outs):
            slots = [rec.slots.get(id(o.buf)) for o in outs]
            if None not in slots and all(rec.bufs[s] is o.buf for s, o in zip(slots, outs)):
                programs[full_key] = Program(rec.steps, [(s, o.shape, o.dtype, o.offset, o.strides)
                                                         for s, o in zip(slots, outs)], diverged)
                if len(programs) > MAX_PROGRAMS:
                    programs.popitem(last=False)
        return result
