"""Timing helpers shared by the benchmark scripts: warm-up, then the median of
several device-synchronized repetitions."""
from __future__ import annotations

import statistics
import time


def best_of(fn, sync=lambda: None, repeat: int = 7, warmup: int = 2) -> float:
    """Median wall seconds of ``fn(); sync()`` after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def try_import(name):
    try:
        return __import__(name)
    except Exception:
        return None


def cuda_torch():
    """torch when it imports and sees a CUDA device, else None."""
    torch = try_import("torch")
    return torch if torch is not None and torch.cuda.is_available() else None


def table(rows, headers) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def device_seconds(fn, runtime, warmup: int = 2) -> float:
    """Device time of the compute passes ``fn`` records (timestamp queries), after
    ``warmup`` untimed runs and a warmed-up GPU (``heat``); falls back to wall time
    where timestamps are missing."""
    for _ in range(warmup):
        fn()
    runtime.sync()
    heat(runtime)
    try:
        with runtime.gpu_timer() as t:
            fn()
        return t.seconds
    except RuntimeError:
        return best_of(fn, runtime.sync, repeat=1, warmup=0)


# The copy roofline: one vec4 read and one vec4 write per invocation.
COPY_WGSL = """
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> P: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * 65535u) * 256u + lid;
    if (i >= P[0]) { return; }
    O[i] = A[i];
}
"""
_HEAT_WGSL = COPY_WGSL.replace("O[i] = A[i];", "O[i] = A[i] * 1.0001;")
_heat_state: dict = {}


def heat(runtime, seconds: float = 0.3) -> None:
    """Keep the GPU busy for ``seconds`` with back-to-back copies (no host waits between
    them), then wait for it: a GPU that idled (while the host planned, synchronized or
    timed another library) clocks down, and a workload with host gaps of its own never
    clocks it up again. Call right before timing any library's rounds; no-op on a CPU
    device (lavapipe)."""
    if seconds <= 0 or runtime.device.adapter_type == "CPU":
        return
    import time

    state = _heat_state.get(id(runtime))
    if state is None:
        n = 1 << 24  # 256 MiB of float32 in, the same out
        kernel = runtime.kernel(("bench", "heat"), lambda: ("bench_heat", _HEAT_WGSL, [False, True], False))
        state = _heat_state[id(runtime)] = (kernel, runtime.alloc(16 * n // 4), runtime.alloc(16 * n // 4),
                                            (n // 4).to_bytes(4, "little"), -(-(n // 4) // 256))
    kernel, a, o, params, groups = state
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            runtime.dispatch(kernel, [a, o], params, groups)
        runtime.flush()
    runtime.sync()


# The raw wgpu round trip that the host-path benchmarks set beside wgarray's: one tiny
# kernel over 1000 float32, its buffer, a staging buffer and a bind group.
RAW_TINY = """
@group(0) @binding(0) var<storage, read_write> A: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < 1000u) { A[gid.x] = A[gid.x] * 0.5 + 1.0; }
}
"""


def raw_roundtrip_setup(dev):
    """(buffer, staging buffer, pipeline, bind group) of the raw round trip on ``dev``."""
    import wgpu

    buf = dev.create_buffer(size=4096, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    staging = dev.create_buffer(size=4096, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    module = dev.create_shader_module(code=RAW_TINY)
    pipeline = dev.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    bind = dev.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                 entries=[{"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": 4096}}])
    return buf, staging, pipeline, bind


def raw_dispatch(enc, pipeline, bind) -> None:
    """Record the raw round trip's one dispatch into the command encoder ``enc``."""
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    cp.set_bind_group(0, bind)
    cp.dispatch_workgroups(4)
    cp.end()
