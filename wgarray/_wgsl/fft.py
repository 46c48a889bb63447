"""WGSL for the fft extension: twiddle and chirp generators and Stockham passes.

A transform of length N (a product of the radices 2, 3, 4, 5, 7, 8) is a sequence of
Stockham autosort passes (no bit reversal): pass s with radix R, after passes whose
radices multiply to p, has one invocation per R-point butterfly; it reads the R
elements ``i + j*N/R``, multiplies element j by the twiddle ``exp(-2 pi i j k / (p R))``
(``k = i mod p``, a lookup in a per-N table), does the R-point DFT and writes the
results to ``(i - k) R + k + m p``. Other lengths go through Bluestein (``wgarray.fft``).

The first pass of a transform reads its input through a fused loader (the input's
elementwise producer, a zero padding, a Hermitian extension for the c2r transforms, a
chirp for Bluestein) and the last pass stores through a fused storer (a pointwise
product for Bluestein's convolution, a chirp, the norm's scale, the real part), so a
length with k passes costs k dispatches. Only the forward transform exists:
``ifft(x) = conj(fft(conj(x)))``, with both conjugations folded into the loader and
storer (parameters, not code).

Twiddles are exact-angle: ``exp(-2 pi i m / L)`` is computed from the integers m and L
(reduced to an angle of at most pi/4 with the quadrant and octant symmetries before any
rounding happens), so their error does not grow with L.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import elementwise as ew


WORKGROUP = 256
RADICES = (8, 4, 2, 3, 5, 7)

# Parameter words of a pass kernel (u32 words of P; the scale is f32 at word 10, or f64
# at words 10-11, i.e. PD[5]); the fused input's parameters follow at PASS_PBASE.
PASS_PBASE = 12


def real_tag(cname: str) -> str:
    return "f32" if cname == "complex64" else "f64"


def _common(T: str) -> str:
    C = f"vec2<{T}>"
    return f"""
fn fft_cmul(a: {C}, b: {C}) -> {C} {{
    return {C}(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}

fn fft_conj_if(c: u32, a: {C}) -> {C} {{
    return select(a, {C}(a.x, -a.y), c != 0u);
}}

// exp(-2 pi i m / L) for 0 <= m < L < 2^30, with the angle reduced exactly in integers.
fn fft_expm(m: u32, L: u32) -> {C} {{
    let m4 = 4u * m;
    let q = m4 / L;
    var r = m4 - q * L;  // angle = (pi/2) (q + r/L)
    var swap = false;
    if (2u * r > L) {{ r = L - r; swap = true; }}
    let phi = ({T}(r) / {T}(L)) * 1.5707963267948966;
    let s0 = {T}_sin_kernel(phi);
    let c0 = {T}_cos_kernel(phi);
    var c = c0;
    var s = s0;
    if (swap) {{ c = s0; s = c0; }}
    var co = c;
    var si = s;
    if (q == 1u) {{ co = -s; si = c; }} else if (q == 2u) {{ co = -c; si = -s; }} else if (q == 3u) {{ co = s; si = -c; }}
    return {C}(co, -si);
}}

// (a * b) mod L for a, b < L < 2^31, without 64-bit integers.
fn fft_mulmod(a: u32, b: u32, L: u32) -> u32 {{
    var r = 0u;
    for (var bit = 31i; bit >= 0i; bit = bit - 1i) {{
        r = r * 2u;
        if (r >= L) {{ r = r - L; }}
        if (((b >> u32(bit)) & 1u) != 0u) {{
            r = r + a;
            if (r >= L) {{ r = r - L; }}
        }}
    }}
    return r;
}}
"""


def _main_head() -> list[str]:
    return [
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        f"    let t = (wid.x + wid.y * 65535u) * {WORKGROUP}u + lid;",
        "    if (t >= P[0]) { return; }",
    ]


def _source(decls, code, library) -> str:
    return "\n".join(decls) + "\n\n" + library(code) + "\n" + code


# ------------------------------------------------------------------ generators

@dataclass(frozen=True)
class GenSpec:
    """A table of unit complex numbers, one per invocation ``t < count`` (P[0]):

    'table'   exp(-2 pi i t / L)                        (L = P[1])
    'chirp'   exp(-2 pi i (t^2 mod L) / L)              (L = 2n: exp(-pi i t^2 / n))
    'chirpb'  Bluestein's filter of length M (= count): conj(chirp(k)) at t = k and
              t = M - k for k < n (n = P[2]), zero between
    """

    mode: str
    cname: str

    @property
    def name(self) -> str:
        return f"fft_gen_{self.mode}_{self.cname}"


def render_gen(spec: GenSpec, library) -> str:
    T = real_tag(spec.cname)
    C = f"vec2<{T}>"
    decls = [f"@group(0) @binding(0) var<storage, read_write> Y: array<{C}>;"] + ew.params_decls(1, False)
    body = _main_head() + ["    let L = P[1];"]
    if spec.mode == "table":
        body.append("    Y[t] = fft_expm(t, L);")
    elif spec.mode == "chirp":
        body.append("    Y[t] = fft_expm(fft_mulmod(t, t, L), L);")
    else:
        body += [
            "    let n = P[2];",
            "    let M = P[0];",
            "    var k = t;",
            "    if (t >= n) { k = M - t; }",
            f"    var v = {C}(0.0);",
            "    if (k < n) { v = fft_expm(fft_mulmod(k, k, L), L); v.y = -v.y; }",
            "    Y[t] = v;",
        ]
    code = _common(T) + "\n" + "\n".join(body + ["}"]) + "\n"
    return _source(decls, code, library)


def gen_params(count: int, L: int, n: int = 0) -> bytes:
    return b"".join(v.to_bytes(4, "little") for v in (count, L, n, 0))


# ---------------------------------------------------------------------- passes

@dataclass(frozen=True)
class PassSpec:
    """One Stockham pass. ``src`` 'buf' reads a contiguous complex buffer, 'input' a
    fused input (``in_spec``); ``herm`` extends a half spectrum Hermitian-ly; the chirp
    flags multiply by Bluestein's chirp on load / store; ``mul_b`` multiplies the output
    by a filter spectrum; ``dst`` 'real' keeps only the real part."""

    radix: int
    cname: str
    src: str = "buf"
    herm: bool = False
    load_chirp: bool = False
    in_spec: object = None
    dst: str = "buf"
    mul_b: bool = False
    store_chirp: bool = False

    @property
    def name(self) -> str:
        parts = [f"fft_r{self.radix}", self.cname, self.src]
        parts += [f for f, on in (("herm", self.herm), ("lchirp", self.load_chirp), ("mulb", self.mul_b),
                                  ("schirp", self.store_chirp)) if on]
        parts.append(self.dst)
        return "_".join(parts)

    @property
    def has_f64_params(self) -> bool:
        return self.cname == "complex128" or (self.in_spec is not None and self.in_spec.has_f64_params)

    @property
    def uses_chirp(self) -> bool:
        return self.load_chirp or self.store_chirp

    def layout(self, n_in_buffers: int) -> dict:
        """Binding index of each buffer role; 'in' is the first of the input's buffers."""
        where = {"tw": 0}
        b = 1
        if self.src == "buf":
            where["x"] = b
            b += 1
        else:
            where["in"] = b
            b += n_in_buffers
        if self.uses_chirp:
            where["w"] = b
            b += 1
        if self.mul_b:
            where["b"] = b
            b += 1
        where["y"] = b
        where["params"] = b + 1
        return where


def _dft(R: int, C: str) -> list[str]:
    """``let vm = sum_j uj * exp(-2 pi i j m / R)`` with exact +-1, +-i factors."""
    lines = []
    for m in range(R):
        terms = []
        for j in range(R):
            t = (j * m) % R
            u = f"u{j}"
            if t == 0:
                terms.append(u)
            elif (4 * t) % R == 0:
                quarter = 4 * t // R
                terms.append({1: f"{C}({u}.y, -{u}.x)", 2: f"(-{u})", 3: f"{C}(-{u}.y, {u}.x)"}[quarter])
            else:
                c = repr(math.cos(2 * math.pi * t / R))
                s = repr(-math.sin(2 * math.pi * t / R))
                terms.append(f"{C}({u}.x * {c} - {u}.y * {s}, {u}.x * {s} + {u}.y * {c})")
        lines.append(f"    let v{m} = {' + '.join(terms)};")
    return lines


def render_pass(spec: PassSpec, in_decls: list[str], in_fns: str, library) -> str:
    T = real_tag(spec.cname)
    C = f"vec2<{T}>"
    R = spec.radix
    lay = spec.layout(0)
    where = spec.layout(len(in_decls))
    decls = [f"@group(0) @binding(0) var<storage, read> TW: array<{C}>;"]
    if spec.src == "buf":
        decls.append(f"@group(0) @binding({where['x']}) var<storage, read> X: array<{C}>;")
    else:
        decls += in_decls
    if spec.uses_chirp:
        decls.append(f"@group(0) @binding({where['w']}) var<storage, read> W: array<{C}>;")
    if spec.mul_b:
        decls.append(f"@group(0) @binding({where['b']}) var<storage, read> BB: array<{C}>;")
    y_elem = T if spec.dst == "real" else C
    decls.append(f"@group(0) @binding({where['y']}) var<storage, read_write> Y: array<{y_elem}>;")
    decls += ew.params_decls(where["params"], spec.has_f64_params)
    del lay

    read = "X[row * P[4] + j]" if spec.src == "buf" else "in0_at(row * P[4] + j)"
    load = [
        f"fn fft_load(row: u32, k: u32) -> {C} {{",
        "    let n = P[5];",
        f"    if (k >= n) {{ return {C}(0.0); }}",
        "    var j = k;",
    ]
    if spec.herm:
        load += ["    let cj = k >= n / 2u + 1u;", "    if (cj) { j = n - k; }"]
    load += [f"    var v = {C}(0.0);", f"    if (j < P[4]) {{ v = {read}; }}"]
    if spec.herm:
        load.append("    if (cj) { v.y = -v.y; }")
    load.append("    v = fft_conj_if(P[7], v);")
    if spec.load_chirp:
        load.append("    v = fft_cmul(v, W[k]);")
    load += ["    return v;", "}"]

    scale = "bitcast<f32>(P[10])" if T == "f32" else "PD[5]"
    store = [f"fn fft_store(row: u32, idx: u32, v0: {C}) {{"]
    if spec.store_chirp:
        store.append("    if (idx >= P[6]) { return; }")
    store.append("    var v = fft_conj_if(P[8], v0);")
    if spec.mul_b:
        store.append("    v = fft_cmul(v, BB[idx]);")
    if spec.store_chirp:
        store.append("    v = fft_cmul(v, W[idx]);")
    store.append(f"    v = fft_conj_if(P[9], v) * {scale};")
    store.append("    Y[row * P[6] + idx] = " + ("v.x;" if spec.dst == "real" else "v;"))
    store.append("}")

    main = _main_head() + [
        "    let N = P[1];",
        "    let p = P[2];",
        "    let ts = P[3];",
        f"    let nq = N / {R}u;",
        "    let row = t / nq;",
        "    let i = t - row * nq;",
        "    let k = i % p;",
        "    let u0 = fft_load(row, i);",
    ]
    for j in range(1, R):
        main.append(f"    let u{j} = fft_cmul(fft_load(row, i + {j}u * nq), TW[{j}u * k * ts]);")
    main += _dft(R, C)
    main.append(f"    let base = (i - k) * {R}u + k;")
    for m in range(R):
        main.append(f"    fft_store(row, base + {m}u * p, v{m});" if m else "    fft_store(row, base, v0);")
    main.append("}")
    code = _common(T) + in_fns + "\n" + "\n".join(load) + "\n\n" + "\n".join(store) + "\n\n" + "\n".join(main) + "\n"
    return _source(decls, code, library)


def pass_params(*, threads, N, p, ts, lin, n, n_out, conj_in, conj_mid, conj_out, scale, cname) -> bytes:
    import struct

    words = struct.pack("<10I", threads, N, p, ts, lin, n, n_out, conj_in, conj_mid, conj_out)
    if cname == "complex128":
        return words + struct.pack("<d", scale)
    return words + struct.pack("<fI", scale, 0)
