"""What a device's float32 arithmetic does where GPUs may depart from IEEE 754, probed
once per device with a small kernel on values the compiler cannot see.

- ``subnormal_results``: a product whose exact value is subnormal keeps it (lavapipe),
  or is flushed to zero (NVIDIA's Vulkan driver).
- ``subnormal_inputs``: a subnormal operand takes part as itself, or as zero.
- ``fma_fused``: WGSL's ``fma`` rounds once (a fused multiply-add) or twice.
- ``float64_subnormal_results``: the same for a float64 product (None without float64);
  NVIDIA's driver flushes these too.

Everything that can be exact without arithmetic on subnormals (comparisons, casts,
truth values, sign operations, maximum/minimum, nextafter) works on the bits and is
exact either way; ``python -m wgarray info`` reports the rest.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from . import counters
from .launch import Binding, Launch


@dataclass(frozen=True)
class Float32Behaviour:
    subnormal_results: bool
    subnormal_inputs: bool
    fma_fused: bool
    float64_subnormal_results: bool | None = None

    def describe(self) -> str:
        if self.subnormal_results and self.subnormal_inputs:
            sub = "kept (IEEE 754)"
        else:
            lost = [w for w, ok in (("inputs", self.subnormal_inputs), ("results", self.subnormal_results)) if not ok]
            sub = "flushed to zero in arithmetic (" + " and ".join(lost) + "); comparisons, casts and sign/bit operations stay exact"
        text = f"float32 subnormals: {sub}; fma: {'fused' if self.fma_fused else 'not fused'}"
        if self.float64_subnormal_results is not None:
            kept = "kept" if self.float64_subnormal_results else "flushed to zero in arithmetic results"
            text += f"; float64 subnormals: {kept}"
        return text


# the bindings both probes use: inputs, outputs, (unused) parameters
_RECORDS = {name: Launch(name, (Binding("I", "f32"), Binding("O", "u32", write=True)), workgroup=1)
            for name in ("probe_float32", "probe_float64")}
_HEAD = "\n" + "\n".join(_RECORDS["probe_float32"].declarations()) + "\n@compute @workgroup_size(1)\n"

_PROBE = _HEAD + """fn main() {
    O[0] = bitcast<u32>(I[0] * I[1]);
    O[1] = bitcast<u32>(I[2] * I[3]);
    O[2] = bitcast<u32>(fma(I[4], I[4], I[5]));
}
"""

# 2^-126 * 0.5 = 2^-127 (subnormal); 2^-149 * 1; fma(1 + 2^-12, 1 + 2^-12, -(1 + 2^-11))
# is 2^-24 rounded once and 0 rounded twice.
_INPUTS = np.array([0x00800000, 0x3F000000, 0x00000001, 0x3F800000, 0x3F800800, 0xBF801000, 0, 0],
                   dtype="<u4")

# float64: 2^-126 squared thrice is 2^-1008 (normal), times 2^-60 is 2^-1068 (subnormal),
# times 2^100 is 2^-968 again where the subnormal was kept, 0 where it was flushed
_PROBE_F64 = _HEAD + """fn main() {
    var p = f64(I[0]);
    p = p * p; p = p * p; p = p * p;
    var q = p * f64(I[6]);
    // an evaluation barrier: (p * a) * b must not be reassociated into p * (a * b)
    q = select(q, f64(1.0), bitcast<u32>(I[1]) == 0x7fa00001u);
    O[0] = select(0u, 1u, q * f64(I[7]) > f64(0.0));
}
"""
_INPUTS_F64 = np.array([0x00800000, 0x3F000000, 0, 0, 0, 0, 0x21800000, 0x71800000], dtype="<u4")

_lock = threading.Lock()
_cache: dict = {}


def float32_behaviour(device) -> Float32Behaviour:
    """The probed float32 behaviour of ``device`` (cached per device)."""
    found = _cache.get(device)
    if found is None:
        with _lock:
            found = _cache.get(device)
            if found is None:
                found = _cache[device] = _probe(device)
    return found


def _probe(device) -> Float32Behaviour:
    # a one-time cost of opening the device: kept out of the work counters users read
    with counters.uncounted(), device.runtime.unrecorded():  # nor recorded into a program
        return _run_probe(device)


def _run_probe(device) -> Float32Behaviour:
    rt = device.runtime
    kernel = rt.compile(("probe", "float32"), lambda: (_RECORDS["probe_float32"], _PROBE))
    inp = rt.upload(_INPUTS)
    out = rt.alloc(16)
    rt.launch(kernel, {"I": inp, "O": out}, b"\0" * 16, 1)
    words = rt.read(out, 0, 16).view("<u4")
    f64_kept = None
    if device.has_f64:
        kernel = rt.compile(("probe", "float64"), lambda: (_RECORDS["probe_float64"], _PROBE_F64))
        rt.launch(kernel, {"I": rt.upload(_INPUTS_F64), "O": out}, b"\0" * 16, 1)
        f64_kept = int(rt.read(out, 0, 4).view("<u4")[0]) == 1
    return Float32Behaviour(subnormal_results=int(words[0]) == 0x00400000,
                            subnormal_inputs=int(words[1]) == 1,
                            fma_fused=int(words[2]) == 0x33800000,
                            float64_subnormal_results=f64_kept)
