"""Where does readback time go? (developer aid)"""
import time
import numpy as np
import wgpu
import wgarray as xp
from wgarray._runtime.device import default_device

dev = default_device()
rt = dev.runtime
n = 256 << 20
x = xp.asarray(np.ones(n // 4, np.float32)); rt.sync()
src = x._node.buf.buffer
st = dev.wgpu_device.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
out = np.empty(n, np.uint8)
for it in range(3):
    t0 = time.perf_counter()
    e = dev.wgpu_device.create_command_encoder(); e.copy_buffer_to_buffer(src, 0, st, 0, n); dev.wgpu_device.queue.submit([e.finish()])
    st.map_sync(wgpu.MapMode.READ)
    t1 = time.perf_counter()
    raw = st.read_mapped(copy=False)
    t2 = time.perf_counter()
    out[:] = np.frombuffer(raw, np.uint8)
    t3 = time.perf_counter()
    st.unmap()
    print(f"copy+map {1e3*(t1-t0):.1f} ms, read_mapped {1e3*(t2-t1):.1f} ms, memcpy {1e3*(t3-t2):.1f} ms -> {n/(t3-t0)/1e9:.2f} GB/s")
a = np.ones(n, np.uint8); b = np.empty_like(a)
t = time.perf_counter(); b[:] = a; print("host memcpy GB/s", n / (time.perf_counter() - t) / 1e9)
