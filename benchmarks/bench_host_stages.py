"""Where the host time of a synchronizing step goes: the round trip ``float((y * 2.0)[0])``
on 1000 float32 split into its stages, beside the same round trip written directly
against wgpu-py, and the host time of a lazy op and of reductions with a fused
prologue. A plain script (medians over interleaved rounds, in microseconds):

    python benchmarks/bench_host_stages.py [--rounds 2000] [--cpu]

With ``--cpu`` every figure is the calling thread's CPU time (``time.thread_time``)
instead of wall time: on a machine shared with other work, host costs compare fairly
(the ``wait`` stage then shows only the CPU the wait itself burns).

Stages of wgarray's round trip (each as the runtime runs it, called here one by one):

- ``build``: the lazy op and the index (``(y * 2.0)[0]``), nothing planned;
- ``plan``: the fusion planner (``fusion._plan``: graph walk, plan cache);
- ``encode``: the kernel's dispatch recorded into the batch (output buffer, kernel
  lookup, parameters, bind group, pass commands);
- ``copy``: the copy of the result into a pooled staging buffer;
- ``submit``: parameters uploaded (skipped when equal to the last), encoder finished,
  submitted, the next batch's encoder made and freed buffers recycled;
- ``map``: the map request (the runtime's direct C call; wgpu-py's ``map_async`` where
  the runtime runs without them);
- ``wait``: polling the device until the work and the map are done (the driver's floor);
- ``read``: the mapped bytes copied into a new host array;
- ``unmap``.

Then the Python work of the same calls (bytecodes and functions, counted by
``sys.settrace``: machine-independent, so it compares runs on a loaded host).

The raw wgpu-py round trip (``raw``) records one dispatch of a fixed pipeline and bind
group and the same copy, then submit, map, wait, read and unmap: what is left above it
in wgarray's total is wgarray's own host work.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import wgpu  # noqa: E402

import wgarray as wx  # noqa: E402
from wgarray._graph import fusion  # noqa: E402
from wgarray._kernels.elementwise import run as run_elementwise  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import raw_dispatch, raw_roundtrip_setup  # noqa: E402

_clock = time.perf_counter

STAGES = ("build", "plan", "encode", "copy", "submit", "map", "wait", "read", "unmap")
RAW = ("encode", "copy", "submit", "map", "wait", "read", "unmap")


def _wgarray_stages(rt, y, out):
    t = [_clock()]
    a = (y * 2.0)[0]
    t.append(_clock())
    node = a._node
    plan = fusion._plan([node])
    t.append(_clock())
    with rt.lock:
        run_elementwise(plan)
        t.append(_clock())
        data = node.realized
        bucket = rt._staging[16]
        staging = bucket.pop() if bucket else rt.wgpu.create_buffer(
            size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        rt._end_pass()
        rt.encoder.copy_buffer_to_buffer(data.buf.buffer, data.offset * 4, staging, 0, 4)
        t.append(_clock())
        rt.flush()
        t.append(_clock())
        native = rt._native
        if native is not None:  # the runtime's direct C calls, as _read_small makes them
            native.map_request(staging, 4, rt._map_slot)
            t.append(_clock())
            native.map_wait(rt.wgpu, 4, rt._map_slot, rt._spin_s)
            t.append(_clock())
            value = native.mapped_bytes(staging, 4)
            t.append(_clock())
            native.unmap(staging)
            t.append(_clock())
        else:
            promise = staging.map_async(rt._read_mode, 0, 4)
            t.append(_clock())
            rt.wgpu._poll_wait()
            promise.sync_wait()
            t.append(_clock())
            value = np.frombuffer(staging.read_mapped(0, 4, copy=False), np.uint8).copy()
            t.append(_clock())
            staging.unmap()
            t.append(_clock())
        bucket.append(staging)
    for name, t0, t1 in zip(STAGES, t, t[1:]):
        out[name].append(t1 - t0)
    return value


def _raw_stages(dev, setup, out):
    buf, staging, pipeline, bind = setup
    t = [_clock()]
    enc = dev.create_command_encoder()
    raw_dispatch(enc, pipeline, bind)
    t.append(_clock())
    enc.copy_buffer_to_buffer(buf, 0, staging, 0, 16)
    t.append(_clock())
    dev.queue.submit([enc.finish()])
    t.append(_clock())
    promise = staging.map_async("READ_NOSYNC", 0, 16)
    t.append(_clock())
    dev._poll_wait()
    promise.sync_wait()
    t.append(_clock())
    v = np.frombuffer(staging.read_mapped(0, 16), np.float32)[0]
    t.append(_clock())
    staging.unmap()
    t.append(_clock())
    for name, t0, t1 in zip(RAW, t, t[1:]):
        out[name].append(t1 - t0)
    return v


def _median_us(values) -> float:
    return float(np.median(values)) * 1e6


def _host_cases() -> dict:
    """The host-cost cases: a lazy op and reductions of a realized 1000 x 64 array
    (with a fused prologue) and of a pending one."""
    x = wx.asarray(np.random.default_rng(0).random((1000, 64), dtype=np.float32))
    wx.evaluate(x)
    y = (x - 1.5) ** 2
    return {
        "lazy op x * 2.0": lambda: x * 2.0,
        "sum((x - 1.5) ** 2) all axes": lambda: wx.sum((x - 1.5) ** 2),
        "sum((x - 1.5) ** 2, axis=0)": lambda: wx.sum((x - 1.5) ** 2, axis=0),
        "sum((x - 1.5) ** 2, axis=1)": lambda: wx.sum((x - 1.5) ** 2, axis=1),
        "sum(y) all axes, y pending": lambda: wx.sum(y),
        "sum(y, axis=0), y pending": lambda: wx.sum(y, axis=0),
        "sum(y, axis=1), y pending": lambda: wx.sum(y, axis=1),
        "mean(y, axis=1), y pending": lambda: wx.mean(y, axis=1),
    }


def _host_times(rt, rounds):
    """Host time (no waiting) of a lazy op and of reductions, each round from a
    synchronized device (untimed), as one step of a loop is."""
    cases = _host_cases()
    times = {}
    for name, fn in cases.items():
        for _ in range(50):
            fn()
        values = times[name] = []
        for _ in range(rounds):
            rt.sync()
            t0 = _clock()
            fn()
            values.append(_clock() - t0)
    rt.sync()
    return times


def _host_work(rt):
    """Python work of one call of each case of ``_host_times``: bytecodes executed and
    Python functions called (``sys.settrace``), the same on every machine and run, so a
    change of host cost shows on a shared or loaded host too (the C side, wgpu's calls
    included, is not in it)."""
    cases = _host_cases()
    counts = [0, 0]

    def tracer(frame, event, arg):
        if event == "call":
            counts[1] += 1
            frame.f_trace_opcodes = True
        elif event == "opcode":
            counts[0] += 1
        return tracer

    out = {}
    for name, fn in cases.items():
        for _ in range(50):
            fn()
        rt.sync()
        counts[:] = [0, 0]
        sys.settrace(tracer)
        try:
            fn()
        finally:
            sys.settrace(None)
        out[name] = tuple(counts)
        rt.sync()
    return out


def _write_times(rt, rounds):
    """Host time per element write of a loop of 1000 (``x[i, i] = v``, as scikit-learn's
    fill_diagonal runs it), with a Python scalar and with a 0-d array, and the device
    commands the loop became (the runtime gathers such runs into scatter dispatches)."""
    from wgarray import debug

    n = 1000
    x = wx.zeros((n, n), dtype=wx.float32)
    value = wx.asarray(np.float32(2.0))
    wx.evaluate(x, value)
    out = {}
    for name, v in (("x[i, i] = 0.0", 0.0), ("x[i, i] = v (0-d array)", value)):
        times = []
        for r in range(max(3, rounds // 200)):
            rt.sync()
            debug.reset_counters()
            t0 = _clock()
            for i in range(n):
                x[i, i] = v
            times.append((_clock() - t0) / n)
            rt.flush()
            c = debug.counters()
        out[name] = (times, c.get("dispatches", 0), c.get("stores", 0))
    rt.sync()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--cpu", action="store_true", help="the calling thread's CPU time, not wall time")
    args = parser.parse_args()
    global _clock
    if args.cpu:
        _clock = time.thread_time
    device = default_device()
    rt = device.runtime
    dev = device.wgpu_device
    print(f"device: {device.name}; clock: {'thread CPU time' if args.cpu else 'wall time'}")

    y = wx.asarray(np.arange(1000, dtype=np.float32))
    wx.evaluate(y)
    setup = raw_roundtrip_setup(dev)
    ours = {name: [] for name in STAGES}
    raw = {name: [] for name in RAW}
    total_ours, total_raw = [], []
    for _ in range(50):
        _wgarray_stages(rt, y, {name: [] for name in STAGES})
        _raw_stages(dev, setup, {name: [] for name in RAW})
        float((y * 2.0)[0])
    for _ in range(args.rounds):
        _wgarray_stages(rt, y, ours)
        _raw_stages(dev, setup, raw)
        t0 = _clock()
        value = float((y * 2.0)[0])
        total_ours.append(_clock() - t0)
        t0 = _clock()
        _raw_stages(dev, setup, {name: [] for name in RAW})
        total_raw.append(_clock() - t0)
    assert value == 0.0

    print(f"\nround trip, median us over {args.rounds} rounds")
    print(f"{'stage':10s} {'wgarray':>9s} {'raw wgpu':>9s}")
    for name in STAGES:
        r = f"{_median_us(raw[name]):9.1f}" if name in raw else f"{'':9s}"
        print(f"{name:10s} {_median_us(ours[name]):9.1f} {r}")
    print(f"{'sum':10s} {sum(_median_us(ours[n]) for n in STAGES):9.1f} {sum(_median_us(raw[n]) for n in RAW):9.1f}")
    print(f"{'measured':10s} {_median_us(total_ours):9.1f} {_median_us(total_raw):9.1f}"
          "   (float((y * 2.0)[0]) end to end; the raw round trip)")

    print(f"\nhost time of one call, no waiting, median us over {args.rounds} rounds")
    for name, values in _host_times(rt, args.rounds).items():
        print(f"{name:34s} {_median_us(values):8.1f}")

    print("\nPython work of one call: bytecodes, functions called")
    for name, (ops, calls) in _host_work(rt).items():
        print(f"{name:34s} {ops:8d} {calls:6d}")

    print("\nhost time per element write, a loop of 1000, median us")
    for name, (values, dispatches, stores) in _write_times(rt, args.rounds).items():
        print(f"{name:34s} {_median_us(values):8.1f}   ({stores} stores -> {dispatches} dispatches)")


if __name__ == "__main__":
    main()
