"""Writing 256 MiB into fresh host memory, by allocation strategy (developer aid)."""
import mmap, time
import numpy as np

n = 256 << 20
src = np.ones(n, np.uint8)
print("numpy hugepage madvise:", np._core.multiarray._get_madvise_hugepage())
try:
    print("THP:", open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip())
except OSError:
    pass
for it in range(2):
    t = time.perf_counter(); a = np.empty(n, np.uint8); a[:] = src; t1 = time.perf_counter() - t
    t = time.perf_counter()
    mm = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
    b = np.frombuffer(mm, np.uint8); b[:] = src; t2 = time.perf_counter() - t
    t = time.perf_counter()
    mm2 = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mm2.madvise(mmap.MADV_HUGEPAGE)
    c = np.frombuffer(mm2, np.uint8); c[:] = src; t3 = time.perf_counter() - t
    print(f"np.empty {n/t1/1e9:.2f} GB/s, MAP_POPULATE {n/t2/1e9:.2f} GB/s, MADV_HUGEPAGE {n/t3/1e9:.2f} GB/s")
    del a, b, c
