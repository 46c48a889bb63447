"""Host <-> device bandwidth: 256 MiB of float32 through wgarray, beside plain
``queue.write_buffer`` / ``queue.read_buffer`` on the same device in the same run.

    python benchmarks/bench_transfer.py [--mib 256]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import wgpu

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import best_of, table  # noqa: E402

import wgarray as xp  # noqa: E402
from wgarray._runtime.device import default_device  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    device = default_device()
    rt = device.runtime
    host = np.random.default_rng(0).random(args.mib * (1 << 20) // 4, dtype=np.float32)
    nbytes = host.nbytes
    holder = {}

    def up():
        holder["x"] = xp.asarray(host)

    def down():
        holder["x"]._host = None  # drop the host mirror, so that every call reads the device
        holder["h"] = np.asarray(holder["x"])

    t_up = best_of(up, rt.sync)
    holder["x"] = xp.asarray(host)
    rt.sync()
    t_down = best_of(down)
    assert np.array_equal(holder["h"], host)

    dev = device.wgpu_device
    plain = dev.create_buffer(size=nbytes, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC)
    t_up_plain = best_of(lambda: dev.queue.write_buffer(plain, 0, host), rt.sync)
    t_down_plain = best_of(lambda: holder.__setitem__("p", dev.queue.read_buffer(plain)))

    gb = nbytes / 1e9
    rows = [
        ("host -> device", f"{gb / t_up:.2f}", f"{gb / t_up_plain:.2f}", f"{t_up_plain / t_up:.2f}x"),
        ("device -> host", f"{gb / t_down:.2f}", f"{gb / t_down_plain:.2f}", f"{t_down_plain / t_down:.2f}x"),
    ]
    print(f"device: {device.name} ({device.backend}); {args.mib} MiB float32; median of 7 after warm-up")
    print(table(rows, ["direction", "wgarray GB/s", "queue.write/read_buffer GB/s", "ratio"]))


if __name__ == "__main__":
    main()
