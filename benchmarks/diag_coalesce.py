"""Memory access patterns of a 2^28 float32 copy (read and write), device time from
timestamp queries: each thread moving its own 32 consecutive elements (eight vec4s
at 128 bytes a thread apart, the pattern of a scan tile's thread-serial part), the
same elements in coalesced order (consecutive threads, consecutive vec4s), and
coalesced with an exchange through workgroup memory.

    python benchmarks/diag_coalesce.py [log2 n]

NVIDIA H100 (Vulkan): 0.88, 2.98 and 2.74 TB/s. The scan kernels given that exchange
got slower, not faster (``docs/performance.md``): their thread-serial loads are not
what bounds them.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
import wgarray as xp  # noqa: E402
from wgarray._runtime import launch as L  # noqa: E402

RECORD = L.Launch("diag_coalesce", (L.Binding("X", "vec4<f32>"), L.Binding("Y", "vec4<f32>", write=True)))
HEAD = ("@compute @workgroup_size(256)\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
        "    let w = wid.x + wid.y * 65535u;\n")


def _kernel(rt, name, body, shared=""):
    src = "\n" + "\n".join(RECORD.declarations()) + "\n" + shared + HEAD + "\n".join(body) + "\n}\n"
    return rt.compile(("diag_coalesce", name), lambda: (RECORD, src))


def kernels(rt):
    own = [f"    let a{j} = X[(w * 256u + lid) * 8u + {j}u];" for j in range(8)]
    own += [f"    Y[(w * 256u + lid) * 8u + {j}u] = a{j} + vec4<f32>(1.0);" for j in range(8)]
    coalesced = [f"    let a{j} = X[w * 2048u + {j}u * 256u + lid];" for j in range(8)]
    coalesced += [f"    Y[w * 2048u + {j}u * 256u + lid] = a{j} + vec4<f32>(1.0);" for j in range(8)]
    # coalesced loads into workgroup memory, each thread its own eight slots (swizzled), back
    exchange = [f"    T[{j}u * 256u + lid] = X[w * 2048u + {j}u * 256u + lid];" for j in range(8)]
    exchange += ["    workgroupBarrier();"]
    exchange += [f"    let b{j} = T[lid * 8u + ({j}u ^ (lid & 7u))];" for j in range(8)]
    exchange += ["    workgroupBarrier();"]
    exchange += [f"    T[lid * 8u + ({j}u ^ (lid & 7u))] = b{j} + vec4<f32>(1.0);" for j in range(8)]
    exchange += ["    workgroupBarrier();"]
    exchange += [f"    Y[w * 2048u + {j}u * 256u + lid] = T[{j}u * 256u + lid];" for j in range(8)]
    return [("each thread its 32 consecutive elements", _kernel(rt, "own", own)),
            ("coalesced", _kernel(rt, "coalesced", coalesced)),
            ("coalesced, exchanged through workgroup memory",
             _kernel(rt, "exchange", exchange, "var<workgroup> T: array<vec4<f32>, 2048>;\n"))]


def main(log2n: int = 28) -> None:
    dev = xp.asarray(0.0).device
    rt = dev.runtime
    n = 1 << log2n
    src, dst = rt.alloc(4 * n), rt.alloc(4 * n)
    groups = n // 8192
    print(f"device: {dev.name}; copy of 2^{log2n} float32 (read and write), device ms")
    for name, k in kernels(rt):
        for _ in range(3):
            rt.launch(k, {"X": src, "Y": dst}, b"\0" * 16, groups)
        rt.sync()
        with rt.gpu_timer() as t:
            for _ in range(10):
                rt.launch(k, {"X": src, "Y": dst}, b"\0" * 16, groups)
        sec = t.seconds / 10
        print(f"{name}: {sec * 1e3:.3f} ms, {8 * n / sec / 1e12:.2f} TB/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 28)
