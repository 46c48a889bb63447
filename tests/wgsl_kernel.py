"""Run one WGSL expression elementwise over NumPy inputs on the default adapter.

A small harness for testing the WGSL helper libraries without the rest of wgarray:
each input is bound as ``array<T>`` (T given by the caller, the NumPy bytes uploaded
as they are), and ``out[i] = EXPR`` is evaluated for every ``i``.
"""
from __future__ import annotations

import functools
import os

import numpy as np
import wgpu

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

_FEATURES = ("shader-f64", "shader-int64", "shader-f16", "subgroup")


@functools.cache
def device():
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    wanted = [f for f in _FEATURES if f in adapter.features]
    return adapter.request_device_sync(required_features=wanted)


@functools.cache
def _pipeline(source: str):
    dev = device()
    module = dev.create_shader_module(code=source)
    return dev.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})


def run_wgsl(expr: str, inputs, out_type: str, out_dtype, prelude: str = "", n: int | None = None) -> np.ndarray:
    """Evaluate ``out[i] = expr`` for each element.

    inputs: sequence of (wgsl_type, numpy_array); input k is ``in{k}`` in ``expr``.
    out_type: WGSL element type of the output; out_dtype: NumPy dtype it is viewed as.
    """
    dev = device()
    arrays = [np.ascontiguousarray(a) for _, a in inputs]
    if n is None:
        n = len(arrays[0]) if arrays else 1
    out_dtype = np.dtype(out_dtype)
    lines = []
    for k, (wtype, _) in enumerate(inputs):
        lines.append(f"@group(0) @binding({k}) var<storage, read> in{k}: array<{wtype}>;")
    ob = len(inputs)
    lines.append(f"@group(0) @binding({ob}) var<storage, read_write> out: array<{out_type}>;")
    # the parameter binding that wgarray's kernels all have (f64_launder reads its length)
    with_p = "&P)" in prelude + expr
    if with_p:
        lines.append(f"@group(0) @binding({ob + 1}) var<storage, read> P: array<u32>;")
    enables = []
    if "f64" in expr + prelude + out_type + "".join(t for t, _ in inputs):
        pass  # f64 needs no enable directive in naga; the device feature is enough
    source = "\n".join(enables + lines) + "\n" + prelude + f"""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = g.x + g.y * 65535u * 64u;
    if (i >= {n}u) {{ return; }}
    out[i] = {expr};
}}
"""
    pipeline = _pipeline(source)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    buffers = []
    for a in arrays:
        data = a.tobytes() or b"\0" * 4
        data += b"\0" * (-len(data) % 4)
        buffers.append(dev.create_buffer_with_data(data=data, usage=usage))
    out_bytes = max(n * out_dtype.itemsize, 4)
    out_bytes += -out_bytes % 4
    out_buf = dev.create_buffer(size=out_bytes, usage=usage)
    bound = buffers + [out_buf] + ([dev.create_buffer(size=16, usage=usage)] if with_p else [])
    entries = [{"binding": k, "resource": {"buffer": b}} for k, b in enumerate(bound)]
    bind_group = dev.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, bind_group)
    groups = -(-n // 64)
    cpass.dispatch_workgroups(min(groups, 65535), -(-groups // 65535))
    cpass.end()
    dev.queue.submit([encoder.finish()])
    raw = dev.queue.read_buffer(out_buf)
    return np.frombuffer(raw, dtype=out_dtype, count=n).copy()
