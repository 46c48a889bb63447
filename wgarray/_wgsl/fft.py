"""WGSL for the fft extension: twiddle and chirp generators, the workgroup-memory
transform kernel, and the real-transform post-processing kernel.

The transform kernel (``TileSpec``) does a whole transform of length L (a product of
the radices 2, 3, 4, 5, 7, 8; ``L * lanes`` at most the workgroup's element capacity)
for ``lanes`` neighbouring sequences at once: it loads them into workgroup memory, runs
every Stockham autosort pass there (pass s with radix R, after passes whose radices
multiply to p: the butterfly i reads ``i + j*L/R``, multiplies element j by
``exp(-2 pi i j k / (p R))`` with ``k = i mod p``, and writes ``(i - k) R + k + m p``),
and writes the result back. Tiles are compiled with their passes planned (radices,
strides and the twiddle step as constants, a straight line of passes); the generic
kernel, whose radices travel as parameters (a uniform switch per pass), serves every
length where planning is off. A planned tile keeps each thread's butterflies in
registers: its first pass reads them from the source, its last writes them to the
destination, and only the passes between exchange through workgroup memory; its
twiddles come from a table in the order its passes read them (``GenSpec('passes')``).
Lanes are sequences next to each other in memory (the columns of a transform along a
leading axis, or several short rows), so loads and stores are coalesced.

Longer transforms are a four-step decomposition ``N = N1 * N2`` planned by
``wgarray.fft``: transforms of length N2 at stride N1 (in place, each multiplied on
store by the twiddle ``exp(-2 pi i k1 m2 / N)``, computed exactly), then transforms of
length N1 whose outputs land at ``m2 + N2 m1``. Every kernel addresses the data as
(outer, K, inner) with K the index along the transformed axis, so the first kernel reads
through a fused loader (the input's elementwise producer, zero padding, the Hermitian
extension or half-length packing of the real transforms, Bluestein's chirp) and the last
stores through a fused storer (Bluestein's filter product and chirp, the norm's scale,
the conjugation of the inverse, the real part or the unpacking of a half-length c2r).
Only the forward transform exists: ``ifft(x) = conj(fft(conj(x)))``, both conjugations
parameters, not code.

Twiddles are exact-angle: ``exp(-2 pi i m / L)`` is computed from the integers m and L
(reduced to an angle of at most pi/4 with the quadrant and octant symmetries before any
rounding happens), so their error does not grow with L.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew


WORKGROUP = 256
MAX_STAGES = 12  # radices of one tile; 4096 = 2**12 is the longest tile

# Parameter words of the tile kernel (u32 words of P; the scale is f32 at word 38, or
# f64 at words 38-39, i.e. PD[19]); the fused input's parameters follow at TILE_PBASE.
TILE_PBASE = 40


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
    return fft_expqr(q, m4 - q * L, L);
}}

// exp(-2 pi i m / L) from 4 m = q L + r (q < 4, r < L): the angle (pi/2) (q + r/L)
fn fft_expqr(q: u32, r0: u32, L: u32) -> {C} {{
    var r = r0;
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


def _scale_block(scale: float, cname: str) -> bytes:
    """The output scale: f32 (and a pad word) or f64, read as ``P``/``PD``."""
    return struct.pack("<d", scale) if cname == "complex128" else struct.pack("<fI", scale, 0)


# ------------------------------------------------------------------ generators

@dataclass(frozen=True)
class GenSpec:
    """A table of unit complex numbers, one per invocation ``t < count`` (P[0]):

    'table'   exp(-2 pi i t / L)                        (L = P[1])
    'chirp'   exp(-2 pi i (t^2 mod L) / L)              (L = 2n: exp(-pi i t^2 / n))
    'chirpb'  Bluestein's filter of length M (= count): conj(chirp(k)) at t = k and
              t = M - k for k < n (n = P[2]), zero between
    'passes'  the twiddles of a planned tile's passes in the order they are read: the
              pass of radix R after passes whose radices multiply to p reads
              exp(-2 pi i j k / (p R)) at t = j p + k (0 < j < R, k < p), so the lanes of
              a butterfly read neighbouring words (radices at P[4...], P[3] of them)
    """

    mode: str
    cname: str

    @property
    def name(self) -> str:
        return f"fft_gen_{self.mode}_{self.cname}"


def gen_record(spec: GenSpec) -> Launch:
    """The table written as ``Y``; parameters count, L, n."""
    C = f"vec2<{real_tag(spec.cname)}>"
    return Launch(spec.name, (Binding("Y", C, write=True),),
                  (Field("count", "u32", 0), Field("L", "u32", 1), Field("n", "u32", 2), Field("nstages", "u32", 3),
                   Field("radices", "block", 4)), False, WORKGROUP)


def gen_params(*, count: int, L: int = 0, n: int = 0, radices=()) -> dict:
    """The generator's parameter fields (``gen_record``)."""
    return dict(count=count, L=L, n=n, nstages=len(radices),
                radices=struct.pack(f"<{len(radices)}I", *radices) if radices else b"")


def render_gen(spec: GenSpec, library) -> str:
    T = real_tag(spec.cname)
    C = f"vec2<{T}>"
    decls = gen_record(spec).declarations()
    body = _main_head() + ["    let L = P[1];"]
    if spec.mode == "table":
        body.append("    Y[t] = fft_expm(t, L);")
    elif spec.mode == "chirp":
        body.append("    Y[t] = fft_expm(fft_mulmod(t, t, L), L);")
    elif spec.mode == "passes":
        body += [
            "    var p = 1u;",
            "    var R = 1u;",
            "    for (var s = 0u; s < P[3]; s = s + 1u) {",
            "        R = P[4u + s];",
            "        if (t < p * R) { break; }",
            "        p = p * R;",
            "    }",
            "    Y[t] = fft_expm((t / p) * (t % p), p * R);",
        ]
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


# ------------------------------------------------------------------ the tile kernel

LOADS = ("plain", "herm", "pack", "c2r")
STORES = ("complex", "real", "unpack", "r2c")


@dataclass(frozen=True)
class TileSpec:
    """One kernel of a transform plan (see the module docstring).

    ``src``: 'input' reads the fused input ``in_spec`` (complex, or real for 'pack'),
    'buf' a complex work buffer. ``load``: 'plain'; 'herm' extends a half spectrum
    Hermitian-ly (full-length c2r); 'pack' makes z[k] = x[2k] + i x[2k+1] of a real
    input; 'c2r' forms the half-length sequence whose transform is such a z from a half
    spectrum. ``lchirp`` multiplies by Bluestein's chirp on load. ``store``: 'complex',
    'real' (the real part), 'unpack' (z[m] to x[2m], x[2m+1]), 'r2c' (the half-length
    rfft's split, when the whole transform is this tile). ``mul_b``, ``schirp``: the
    filter product and the chirp on store; ``twiddle``: the four-step twiddle on store.
    ``capacity``: workgroup memory in elements (structure: it sizes an array).
    ``radices``: the tile's passes planned at compile time (their sizes constants in the
    code, no per-pass switch), or empty for the kernel that reads them as parameters."""

    cname: str
    capacity: int
    src: str = "buf"
    in_spec: object = None
    load: str = "plain"
    lchirp: bool = False
    store: str = "complex"
    mul_b: bool = False
    schirp: bool = False
    twiddle: bool = False
    radices: tuple = ()

    def __post_init__(self):
        if self.load not in LOADS or self.store not in STORES:
            raise ValueError(f"TileSpec: expected load in {LOADS} and store in {STORES}, "
                             f"got {self.load!r}, {self.store!r}")

    @property
    def name(self) -> str:
        parts = ["fft_tile", self.cname, str(self.capacity), self.src, self.load]
        parts += [f for f, on in (("lchirp", self.lchirp), ("mulb", self.mul_b), ("schirp", self.schirp),
                                  ("tw", self.twiddle)) if on]
        if self.radices:
            parts.append("r" + "".join(map(str, self.radices)))
        parts.append(self.store)
        return "_".join(parts)

    @property
    def has_f64_params(self) -> bool:
        return self.cname == "complex128" or (self.in_spec is not None and self.in_spec.has_f64_params)

    @property
    def uses_chirp(self) -> bool:
        return self.lchirp or self.schirp



# The tile kernel's parameter words (see ``render_tile`` for where each is read).
_TILE_WORDS = ("groups", "L", "nstages", "log_ci", "log_cb", "J", "nct", "B", "A", "IA", "IK", "OA", "OK", "lin",
               "n", "n_out", "inner", "conj_in", "conj_mid", "conj_out", "tw_div", "nh")


def tile_record(spec: TileSpec) -> Launch:
    """The tile kernel's bindings: twiddles ``TW`` (the generic kernel's
    exp(-2 pi i m / L) at m, a planned tile's ``GenSpec('passes')`` table); the source, ``X`` (a work buffer) or
    the fused input ``in0``; the chirp ``W`` and the filter spectrum ``BB`` where used;
    the output ``Y``. Parameters: the words above, the radices (one word per pass), the
    four-step twiddle's unit and length, the swizzle mask, the scale (f32 or f64) at 38
    and the fused input's block at TILE_PBASE."""
    C = f"vec2<{real_tag(spec.cname)}>"
    args = [Binding("TW", C)]
    args.append(Binding("X", C) if spec.src == "buf" else ew.input_group(spec.in_spec, "in0_"))
    if spec.uses_chirp:
        args.append(Binding("W", C))
    if spec.mul_b:
        args.append(Binding("BB", C))
    args.append(Binding("Y", real_tag(spec.cname) if spec.store in ("real", "unpack") else C, write=True))
    fields = [Field(name, "u32", w) for w, name in enumerate(_TILE_WORDS)]
    fields += [Field("radices", "block", 22), Field("tw_unit", "u32", 22 + MAX_STAGES),
               Field("tw_n", "u32", 23 + MAX_STAGES), Field("swizzle", "u32", 24 + MAX_STAGES),
               Field("scale", "block", 38), Field("in0", "block", TILE_PBASE)]
    return Launch(spec.name, tuple(args), tuple(fields), spec.has_f64_params, WORKGROUP)


def _dft(R: int, C: str) -> list[str]:
    """``let vm = sum_j uj * exp(-2 pi i j m / R)``: for R = 2, 4, 8 a radix-2
    butterfly network (fewer operations and roundings than the direct sum), for 16 two
    stages of 4 (``_dft16``), for 3, 5, 7 the direct sum with exact +-1, +-i factors."""
    if R == 16:
        return _dft16(C)
    if R in (2, 4, 8):
        lines: list[str] = []
        outs = _butterflies([f"u{j}" for j in range(R)], C, lines, "t")
        return lines + [f"let v{m} = {e};" for m, e in enumerate(outs)]
    lines = []
    for m in range(R):
        terms = []
        for j in range(R):
            t = (j * m) % R
            u = f"u{j}"
            if t == 0:
                terms.append(u)
            else:
                c = repr(math.cos(2 * math.pi * t / R))
                s = repr(-math.sin(2 * math.pi * t / R))
                terms.append(f"{C}({u}.x * {c} - {u}.y * {s}, {u}.x * {s} + {u}.y * {c})")
        lines.append(f"let v{m} = {' + '.join(terms)};")
    return lines


def _dft16(C: str) -> list[str]:
    """The 16-point DFT as 4 x 4: DFTs of 4 over j2 (j = j1 + 4 j2), the twiddles
    exp(-2 pi i j1 k1 / 16), DFTs of 4 over j1 (m = k1 + 4 k2). One stage of general
    products (t = 1, 3, 9) where a radix-2 network of 16 has two (t = 1, 3, 5, 7 and the
    1/sqrt(2) stage). Lavapipe, 4096 = 16^3 against 8^4, rms error on random rows: 0.997
    times 8^4's this way, 1.04 times with the radix-2 network."""
    lines: list[str] = []
    cols = [_butterflies([f"u{j1 + 4 * j2}" for j2 in range(4)], C, lines, f"a{j1}_") for j1 in range(4)]
    for j1 in range(1, 4):
        for k1 in range(1, 4):
            name = f"b{j1}_{k1}"
            lines.append(f"let {name} = {_times_root16(cols[j1][k1], j1 * k1, C)};")
            cols[j1][k1] = name
    for k1 in range(4):
        outs = _butterflies([cols[j1][k1] for j1 in range(4)], C, lines, f"c{k1}_")
        lines += [f"let v{k1 + 4 * k2} = {outs[k2]};" for k2 in range(4)]
    return lines


def _times_root16(o: str, t: int, C: str) -> str:
    """``o * exp(-2 pi i t / 16)``: exact for t a multiple of 4, one rounding by
    1/sqrt(2) for other even t, a product with the constant for odd t."""
    h = math.sqrt(0.5)
    t %= 16
    negate = t >= 8  # exp(-pi i) = -1
    t %= 8
    if t % 2:
        c, s = repr(math.cos(math.pi * t / 8)), repr(-math.sin(math.pi * t / 8))
        w = f"{C}({o}.x * {c} - {o}.y * {s}, {o}.x * {s} + {o}.y * {c})"
    else:
        w = {0: o, 4: f"{C}({o}.y, -{o}.x)",
             2: f"{C}(({o}.x + {o}.y) * {h!r}, ({o}.y - {o}.x) * {h!r})",
             6: f"{C}(({o}.y - {o}.x) * {h!r}, -({o}.x + {o}.y) * {h!r})"}[t]
    return f"-({w})" if negate else w


def _butterflies(ins: list[str], C: str, lines: list[str], tag: str) -> list[str]:
    """Names of the DFT of ``ins`` (a power of two long, at most 8), decimation in time;
    the twiddles exp(-2 pi i m / R) of R <= 8 are -i and (+-1 - i) / sqrt(2), exactly
    signed."""
    R = len(ins)
    if R == 1:
        return ins
    ev = _butterflies(ins[0::2], C, lines, tag + "e")
    od = _butterflies(ins[1::2], C, lines, tag + "o")
    outs = [""] * R
    for m in range(R // 2):
        o = od[m]
        w = _times_root16(o, (16 // R) * m, C)  # the twiddle exp(-2 pi i m / R)
        name = f"{tag}w{m}"
        lines.append(f"let {name} = {w};")
        lines.append(f"let {tag}{m} = {ev[m]} + {name};")
        lines.append(f"let {tag}{m + R // 2} = {ev[m]} - {name};")
        outs[m], outs[m + R // 2] = f"{tag}{m}", f"{tag}{m + R // 2}"
    return outs


def _stage(R: int, C: str, capacity: int) -> list[str]:
    """One Stockham pass of radix R in workgroup memory, a ``case`` of the generic
    kernel's per-pass switch (sizes from the running ``p`` and the parameter ``L``):
    every butterfly of this thread is read into registers before the barrier that lets
    them be overwritten."""
    q_max = -(-capacity // (R * WORKGROUP))
    out = [f"case {R}u: {{", f"    let nq = L / {R}u;", f"    let ts = L / (p * {R}u);"]
    for q in range(q_max):
        out += [f"    var r{q}_{m}: {C};" for m in range(R)]
    for q in range(q_max):
        out += [f"    let bi{q} = i0 + {q}u * kstep;", f"    if (bi{q} < nq) {{", f"        let k = bi{q} % p;",
                f"        let u0 = S[fft_sw(bi{q} * lanes + c)];"]
        out += [f"        let u{j} = fft_cmul(S[fft_sw((bi{q} + {j}u * nq) * lanes + c)], TW[{j}u * k * ts]);"
                for j in range(1, R)]
        out += ["        " + x for x in _dft(R, C)]
        out += [f"        r{q}_{m} = v{m};" for m in range(R)]
        out.append("    }")
    out.append("    workgroupBarrier();")
    for q in range(q_max):
        out += [f"    if (bi{q} < nq) {{", f"        let k = bi{q} % p;", f"        let base = (bi{q} - k) * {R}u + k;"]
        out += [f"        S[fft_sw((base + {m}u * p) * lanes + c)] = r{q}_{m};" for m in range(R)]
        out.append("    }")
    out += ["    workgroupBarrier();", "}"]
    return out


def _planned_pass(R: int, C: str, capacity: int, p: int, L: int, first: bool, last: bool, to_global: bool,
                  twiddle: bool) -> list[str]:
    """One Stockham pass of a planned tile (radix R after passes whose radices multiply
    to p), every input of this thread's butterflies read into registers before any
    output is written. The first pass reads its inputs straight from the source
    (``fft_load``: p = 1, no twiddles) and, with ``to_global``, the last writes its
    outputs straight to the destination: there p = L / R, so butterfly i writes
    i + m L / R, the neighbouring words of a copy of the tile. Between them the data
    goes through workgroup memory, a barrier before the writes (this pass's reads done)
    and after (the writes seen). NVIDIA H100, fft rows 4096 x 4096 complex64 (device
    time, before the branch-free loads of ``render_tile``): 0.414 ms with passes of 8
    that way, 0.387 with passes of 16, 0.574 with the tile's load, its store and every
    pass in workgroup memory (two more round trips, two barriers a pass).

    The twiddles exp(-2 pi i j k / (p R)) come from the table of ``GenSpec('passes')``
    at j p + k: the lanes of a butterfly read neighbouring words. Read as
    ``exp(-2 pi i j k ts / L)`` from the generic kernel's table (15 scattered words a
    butterfly) the same rows took 0.443 ms; computed in the kernel (``fft_expm``, the
    same values bit for bit) 0.458."""
    q_max = -(-capacity // (R * WORKGROUP))
    nq = L // R
    out = [f"{{  // radix {R}, after passes of {p} in all", f"    let p = {p}u;", f"    let nq = {nq}u;",
           f"    let ts = {L // (p * R)}u;"]
    for q in range(q_max):
        out += [f"    var r{q}_{m}: {C};" for m in range(R)]
        out.append(f"    let bi{q} = i0 + {q}u * kstep;")
    for q in range(q_max):
        out.append(f"    if (bi{q} < nq) {{")
        if first:  # a lane past the batch reads the first row (see main)
            out += [f"        r{q}_{j} = fft_load(o, kin + (bi{q} + {j * nq}u) * P[10], ji);" for j in range(R)]
        else:
            out += [f"        r{q}_{j} = fft_sget(((bi{q} + {j * nq}u) << lsh) + c);" for j in range(R)]
        out.append("    }")
    for q in range(q_max):
        out.append(f"    if (bi{q} < nq) {{")
        if p > 1:
            out += [f"        let k = bi{q} % p;", f"        let u0 = r{q}_0;"]
            out += [f"        let u{j} = fft_cmul(r{q}_{j}, TW[{j * p}u + k]);" for j in range(1, R)]
        else:
            out += [f"        let u{j} = r{q}_{j};" for j in range(R)]
        out += ["        " + x for x in _dft(R, C)]
        out += [f"        r{q}_{m} = v{m};" for m in range(R)]
        out.append("    }")
    if last and to_global and twiddle:
        # the four-step twiddle exp(-2 pi i t / N) of output M, t = k1 m2 for the level's
        # index K' = M / unit = k1 + N1 m2: over a butterfly's outputs (steps of nq OK in
        # M, OK a multiple of unit N1) k1 stays and t grows by a constant, so 4 t = q N + r
        # steps by additions, the integers of fft_expm's reduction with one division a
        # butterfly where fft_store has four an output (H100, fft columns 4096 x 4096,
        # two kernels: 0.389 ms; with fft_store 0.439)
        for q in range(q_max):
            out += [f"    if (ok && bi{q} < nq) {{",
                    f"        let Kb = kout / P[34] + bi{q} * (P[12] / P[34]);",
                    "        let k1 = Kb % P[20];",
                    f"        let dt = k1 * ({nq}u * (P[12] / (P[34] * P[20])));",
                    "        let t4 = 4u * (k1 * (Kb / P[20]));",
                    "        var tq = t4 / P[35];",
                    "        var tr = t4 - tq * P[35];",
                    "        let dq = (4u * dt) / P[35];",
                    "        let dr = 4u * dt - dq * P[35];"]
            for m in range(R):
                out.append(f"        fft_put(o, kout + (bi{q} + {m * nq}u) * P[12], ji, "
                           f"fft_cmul(r{q}_{m}, fft_expqr(tq, tr, P[35])));")
                if m < R - 1:
                    out += ["        tr = tr + dr;", "        tq = tq + dq;",
                            "        if (tr >= P[35]) { tr = tr - P[35]; tq = tq + 1u; }"]
            out.append("    }")
    elif last and to_global:
        for q in range(q_max):
            out.append(f"    if (ok && bi{q} < nq) {{")
            out += [f"        fft_put(o, kout + (bi{q} + {m * nq}u) * P[12], ji, r{q}_{m});" for m in range(R)]
            out.append("    }")
    else:
        if not first:
            out.append("    workgroupBarrier();")
        for q in range(q_max):
            out.append(f"    if (bi{q} < nq) {{")
            if p > 1:
                out += [f"        let k = bi{q} % p;", f"        let base = (bi{q} - k) * {R}u + k;"]
            else:
                out.append(f"        let base = bi{q} * {R}u;")
            out += [f"        fft_sput(((base + {m * p}u) << lsh) + c, r{q}_{m});" for m in range(R)]
            out.append("    }")
        out.append("    workgroupBarrier();")
    out.append("}")
    return out


def _planned_slots(C: str, L: int) -> str:
    """Workgroup-memory access of a planned tile at slot y = x * lanes + c (element x
    of lane c), swizzled for power-of-two tiles as ``fft_sw``, its mask a constant.
    (H100: real and imaginary parts in two f32 arrays measured the same; without the
    swizzle, fft rows 4096 x 4096 took 0.219 ms instead of 0.182.)"""
    sw = "y ^ ((y >> 4u) & 15u)" if L & (L - 1) == 0 else "y"
    return f"""
fn fft_sw(y: u32) -> u32 {{
    return {sw};
}}

fn fft_sget(y: u32) -> {C} {{
    return S[fft_sw(y)];
}}

fn fft_sput(y: u32, v: {C}) {{
    S[fft_sw(y)] = v;
}}
"""


SWIZZLE = """
// workgroup-memory slot of tile element x: for power-of-two tiles (P[36] = 15) the low
// 4 bits xor-ed with the next 4, so the stride-R writes of the first pass fall in
// distinct banks (8-way conflicts otherwise); other lengths gain nothing from it (0)
fn fft_sw(x: u32) -> u32 {
    return x ^ ((x >> 4u) & P[36]);
}
"""


def _r2c_split(T: str) -> str:
    C = f"vec2<{T}>"
    return f"""
// X[m] of a real signal of length 2 nh from Z = fft(x[2k] + i x[2k+1]) (length nh):
// a = Z[m mod nh], b = Z[(nh - m) mod nh]; even part (a + conj b)/2, odd (a - conj b)/2i.
fn fft_r2c(a: {C}, b: {C}, m: u32, nh: u32) -> {C} {{
    let bc = {C}(b.x, -b.y);
    let e = (a + bc) * 0.5;
    let d = (a - bc) * 0.5;
    return e + fft_cmul({C}(d.y, -d.x), fft_expm(m, 2u * nh));
}}
"""


def render_tile(spec: TileSpec, library) -> str:
    T = real_tag(spec.cname)
    C = f"vec2<{T}>"
    in_fns = ew.render_input(spec.in_spec, "in0_", TILE_PBASE) if spec.src == "input" else ""
    decls = tile_record(spec).declarations()
    decls.append(f"var<workgroup> S: array<{C}, {spec.capacity}>;")

    # the source element (o, K, i) of the (outer, lin, inner) input; zero past lin
    read = "X[f]" if spec.src == "buf" else "in0_at(f)"
    src_t = T if spec.load == "pack" else C
    # no branch around a read: an index past the input reads its element 0 and the value
    # is zeroed after, so the compiler can have all of a thread's loads in flight at once
    # (H100, fft rows 4096 x 4096 complex64: 0.180 ms; with the reads inside ifs 0.384,
    # fftn 4096^2 0.625 against 1.210)
    src = [
        f"fn fft_src(o: u32, K: u32, i: u32) -> {src_t} {{",
        "    let inside = K < P[13];",
        "    let f = (o * P[13] + select(0u, K, inside)) * P[16] + i;",
        f"    return select({src_t}(0.0), {read}, inside);",
        "}",
    ]
    load = [f"fn fft_load(o: u32, K0: u32, i: u32) -> {C} {{", "    let n = P[14];", "    let inside = K0 < n;",
            "    let K = select(0u, K0, inside);"]
    if spec.load == "plain":
        load.append("    var v = fft_conj_if(P[17], fft_src(o, K, i));")
    elif spec.load == "herm":
        load += ["    var jj = K;", "    let cj = K >= n / 2u + 1u;", "    if (cj) { jj = n - K; }",
                 "    var v = fft_src(o, jj, i);", "    if (cj) { v.y = -v.y; }", "    v = fft_conj_if(P[17], v);"]
    elif spec.load == "pack":
        load.append(f"    var v = {C}(fft_src(o, 2u * K, i), fft_src(o, 2u * K + 1u, i));")
    else:  # c2r: Z[k] = (Y[k] + conj Y[nh-k]) + i (Y[k] - conj Y[nh-k]) exp(-2 pi i k / 2nh)
        load += [
            "    let nh = P[21];",
            "    var a = fft_conj_if(P[17], fft_src(o, K, i));",
            "    var b = fft_conj_if(P[17], fft_src(o, nh - K, i));",
            "    // the imaginary parts of the DC and Nyquist terms do not enter a real signal",
            "    if (K == 0u) { a.y = 0.0; b.y = 0.0; }",
            f"    let bc = {C}(b.x, -b.y);",
            "    let d = fft_cmul(a - bc, fft_expm(K, 2u * nh));",
            f"    var v = (a + bc) + {C}(-d.y, d.x);",
        ]
    if spec.lchirp:
        load.append("    v = fft_cmul(v, W[K]);")
    load += [f"    return select({C}(0.0), v, inside);", "}"]

    scale = "bitcast<f32>(P[38])" if T == "f32" else "PD[19]"
    put = [f"fn fft_put(o: u32, M: u32, i: u32, v0: {C}) {{"]
    if spec.store == "unpack":
        put.append("    if (2u * M >= P[15]) { return; }")
    else:
        put.append("    if (M >= P[15]) { return; }")
    put.append("    var v = fft_conj_if(P[18], v0);")
    if spec.mul_b:
        put.append("    v = fft_cmul(v, BB[M]);")
    if spec.schirp:
        put.append("    v = fft_cmul(v, W[M]);")
    if spec.store in ("complex", "r2c"):
        put += [f"    v = fft_conj_if(P[19], v) * {scale};", "    Y[(o * P[15] + M) * P[16] + i] = v;"]
    elif spec.store == "real":  # the conjugation leaves the real part alone
        put += [f"    v = v * {scale};", "    Y[(o * P[15] + M) * P[16] + i] = v.x;"]
    else:
        put += [f"    v = v * {scale};", "    let f = (o * P[15] + 2u * M) * P[16] + i;", "    Y[f] = v.x;",
                "    Y[f + P[16]] = v.y;"]
    put.append("}")
    # the output m of the transform (M its index along K), with the four-step twiddle: the
    # level's index K' = M / P[34] = k1 + N1 m2 (N1 = P[20]) gets exp(-2 pi i k1 m2 / N), N = P[35]
    store = [f"fn fft_store(o: u32, M: u32, i: u32, v0: {C}) {{", "    var v = v0;"]
    if spec.twiddle:
        store += ["    let Kl = M / P[34];", "    v = fft_cmul(v, fft_expm((Kl % P[20]) * (Kl / P[20]), P[35]));"]
    store += ["    fft_put(o, M, i, v);", "}"]

    L = math.prod(spec.radices) if spec.radices else 0
    main = [
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let g = wid.x + wid.y * 65535u;",
        "    if (g >= P[0]) { return; }",
        f"    let L = {L}u;" if spec.radices else "    let L = P[1];",
        "    // lanes (a power of two dividing the workgroup): Ci inner sequences x Cb batch rows",
        "    let lci = P[3];",
        "    let lsh = lci + P[4];",
        "    let lanes = 1u << lsh;",
        "    let c = lid & (lanes - 1u);",
        "    let i0 = lid >> lsh;",
        f"    let kstep = {WORKGROUP}u >> lsh;",
        "    let nct = P[6];",
        "    let b0 = (g / nct) * (1u << P[4]) + (c >> lci);",
        "    let j0 = (g % nct) * (1u << lci) + (c & ((1u << lci) - 1u));",
        "    let ok = b0 < P[7] && j0 < P[5];",
        "    // a lane past the batch reads the first row (its results are not stored)",
        "    let b = select(0u, b0, ok);",
        "    let j = select(0u, j0, ok);",
        "    let o = b / P[8];",
        "    let a = b - o * P[8];",
        "    let inner = P[16];",
        "    let jk = j / inner;",
        "    let ji = j - jk * inner;",
        "    let kin = a * P[9] + jk;",
        "    let kout = a * P[11] + jk;",
    ]
    if spec.radices:
        # planned: the first pass loads, the last stores (unless the r2c split needs the
        # whole tile), the passes between exchange through workgroup memory
        p, n = 1, len(spec.radices)
        for s_, R in enumerate(spec.radices):
            main += ["    " + x for x in _planned_pass(R, C, spec.capacity, p, L, s_ == 0, s_ == n - 1,
                                                       spec.store != "r2c", spec.twiddle)]
            p *= R
        if spec.store == "r2c":
            main += [
                "    if (!ok) { return; }",
                "    for (var m = i0; m <= L; m = m + kstep) {",
                "        let v = fft_r2c(fft_sget(((m % L) << lsh) + c), fft_sget((((L - m) % L) << lsh) + c), m, L);",
                "        fft_put(o, kout + m * P[12], ji, v);",
                "    }",
            ]
        slots = _planned_slots(C, L)
    else:
        passes = ["    var p = 1u;", "    for (var s = 0u; s < P[2]; s = s + 1u) {",
                  "        let R = P[22u + s];", "        switch (R) {"]
        for R in (8, 4, 2, 3, 5, 7):
            passes += ["        " + x for x in _stage(R, C, spec.capacity)]
        passes += ["        default: {}", "        }", "        p = p * R;", "    }"]
        # the loads unrolled, all issued before the first is needed: a loop that waits for
        # each load before the next leaves too few bytes in flight to hide memory latency
        q_load = max(1, spec.capacity // WORKGROUP)
        for q in range(q_load):
            main += [f"    let lk{q} = i0 + {q}u * kstep;", f"    var lv{q} = {C}(0.0);",
                     f"    if (ok && lk{q} < L) {{ lv{q} = fft_load(o, kin + lk{q} * P[10], ji); }}"]
        main += [f"    if (lk{q} < L) {{ S[fft_sw(lk{q} * lanes + c)] = lv{q}; }}" for q in range(q_load)]
        main += ["    workgroupBarrier();"] + passes + ["    if (!ok) { return; }"]
        if spec.store == "r2c":
            main += [
                "    for (var m = i0; m <= L; m = m + kstep) {",
                "        let v = fft_r2c(S[fft_sw((m % L) * lanes + c)], S[fft_sw(((L - m) % L) * lanes + c)], m, L);",
                "        fft_put(o, kout + m * P[12], ji, v);",
                "    }",
            ]
        else:
            main += [
                "    for (var m = i0; m < L; m = m + kstep) {",
                "        fft_store(o, kout + m * P[12], ji, S[fft_sw(m * lanes + c)]);",
                "    }",
            ]
        slots = SWIZZLE
    main.append("}")
    extra = _r2c_split(T) if spec.store == "r2c" else ""
    code = (_common(T) + slots + extra + in_fns + "\n" + "\n".join(src) + "\n\n" + "\n".join(load) + "\n\n"
            + "\n".join(put) + "\n\n" + "\n".join(store) + "\n\n" + "\n".join(main) + "\n")
    return _source(decls, code, library)


def tile_params(*, radices, scale, cname, **words) -> dict:
    """The tile kernel's parameter fields (``tile_record``; strides IA, IK, OA, OK count
    K, i.e. units of ``inner``) from the words by name, the radices and the scale."""
    if len(radices) > MAX_STAGES:
        raise ValueError(f"fft: a tile of {len(radices)} passes exceeds {MAX_STAGES}")
    rad = list(radices) + [0] * (MAX_STAGES - len(radices))
    L = words["L"]
    return dict(words, nstages=len(radices), radices=struct.pack(f"<{MAX_STAGES}I", *rad),
                swizzle=15 if L & (L - 1) == 0 else 0,  # the swizzle mask (see fft_sw)
                scale=_scale_block(scale, cname))


# ------------------------------------------------------------------ the r2c split on its own

@dataclass(frozen=True)
class SplitSpec:
    """The half-length rfft's split ``fft_r2c`` over a (outer, nh, inner) buffer Z,
    writing (outer, nh + 1, inner), for transforms longer than one tile."""

    cname: str

    @property
    def name(self) -> str:
        return f"fft_r2c_split_{self.cname}"

    @property
    def has_f64_params(self) -> bool:
        return self.cname == "complex128"


def split_record(spec: SplitSpec) -> Launch:
    """The split's bindings, ``Z`` read and ``Y`` written; parameters count, nh, inner,
    conj_out and the scale (f32 or f64) at 4."""
    C = f"vec2<{real_tag(spec.cname)}>"
    fields = (Field("count", "u32", 0), Field("nh", "u32", 1), Field("inner", "u32", 2), Field("conj_out", "u32", 3),
              Field("scale", "block", 4))
    return Launch(spec.name, (Binding("Z", C), Binding("Y", C, write=True)), fields, spec.has_f64_params, WORKGROUP)


def render_split(spec: SplitSpec, library) -> str:
    T = real_tag(spec.cname)
    C = f"vec2<{T}>"
    decls = split_record(spec).declarations()
    scale = "bitcast<f32>(P[4])" if T == "f32" else "PD[2]"
    body = _main_head() + [
        "    let nh = P[1];",
        "    let inner = P[2];",
        "    let r = t / inner;",
        "    let i = t - r * inner;",
        "    let o = r / (nh + 1u);",
        "    let m = r - o * (nh + 1u);",
        "    let a = Z[(o * nh + m % nh) * inner + i];",
        "    let b = Z[(o * nh + (nh - m) % nh) * inner + i];",
        f"    Y[t] = fft_conj_if(P[3], fft_r2c(a, b, m, nh)) * {scale};",
        "}",
    ]
    code = _common(T) + _r2c_split(T) + "\n" + "\n".join(body) + "\n"
    return _source(decls, code, library)


def split_params(*, count, nh, inner, conj_out, scale, cname) -> dict:
    """The split's parameter fields (``split_record``)."""
    return dict(count=count, nh=nh, inner=inner, conj_out=conj_out, scale=_scale_block(scale, cname))
