"""Render scan (prefix sum / product) kernels: pure functions from a spec to WGSL.

Float32 rows past one round are a single pass, ``lookback`` (a decoupled look-back
that never waits on another workgroup's progress: see ``_lookback_body``); the other
accumulators are reduce-then-scan, three passes in which no workgroup waits for
another at all:

1. a reduction pass (``_wgsl/reduce.py``) writes one partial per chunk of ``C``
   elements of each row;
2. the driver scans the partials of each row, so entry ``c - 1`` is the combine of
   all chunks before ``c``;
3. ``render``: each chunk is scanned again, starting from that offset, and written.

A row of ``L`` elements has the flat index ``(o * L + l) * INNER + i`` in the fused
input (row ``m = o * INNER + i``; ``INNER = 1`` for the last axis) and its element ``l``
is written at ``(o * R + S + l) * INNER + i``: the output keeps the input's axis order.
``S = 1`` with ``R = L + 1`` gives ``include_initial`` (slot 0 holds the identity),
which is also an exclusive scan followed by the row's total.

Layouts of the scanning pass (pass 1 uses the same chunks):

* ``tile`` (``INNER = 1``, long rows): one workgroup per chunk of ``C = TILE``
  elements, in rounds of ``ROUND`` elements; each thread loads ``PER_THREAD``
  consecutive elements (four vec4 loads where the input allows), scans them serially,
  and the 256 thread totals are scanned across the workgroup (shuffle scans within
  subgroups plus one barrier where the device has full subgroups, a raking scan
  through workgroup memory otherwise); the round's total carries to the next round.
* ``lookback``: the same work on one tile of ``LOOKBACK_ROUND`` elements per
  workgroup (``LOOKBACK_PER_THREAD`` a thread), whose offset comes from the tiles
  before it in the same dispatch (read ``LOOKBACK_WINDOW`` at a time).
* ``thread`` (a strided axis, or short rows): one thread per chunk of ``C = CHUNK``
  elements, a serial scan; adjacent threads take adjacent ``i``, so reads and writes
  of a scan along a leading axis are coalesced.

Parameters: M (rows), L, NC (chunks per row), R, S, C, HAS_OFFSETS (lookback: polls),
INNER, then the fused input's at word 8. ``O`` is the output; ``X`` the offsets,
``(M, NC)`` (lookback: ``ST``, the ticket and each tile's published words).
"""
from __future__ import annotations

from dataclasses import dataclass

from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew
from . import reduce as rd
from . import types as ty

WORKGROUP = 256
# 64 bytes in flight per thread before the round's barrier, as the reduction's lanes
# have (which it needs for its 4.1 TB/s on an H200), and a barrier per 4096 elements.
PER_THREAD = 16
ROUND = WORKGROUP * PER_THREAD
# Elements per workgroup in the tile layout: the chunk of the reduction's wide pass
# (256 lanes x 64), which reads at ~98% of the copy roofline on an H200.
# The look-back layout's tiles: twice as many elements a thread as a round. Its time
# grows with the number of tiles, not the bytes (H200, 2^28 float32: 4, 8, 16 and 32 a
# thread took 5.83, 3.22, 2.18 and 1.65 ms), while the tile layout's rounds are slower
# with more (2^24 int32: 0.22 ms at 4 a thread, 0.41 at 16, 0.43 at 32).
LOOKBACK_PER_THREAD = 32
LOOKBACK_ROUND = WORKGROUP * LOOKBACK_PER_THREAD
TILE = 16384
# Elements per thread in the thread layout: short serial chains, and well inside
# lavapipe's 65535-iteration loop bound.
CHUNK = 256
HEADER_WORDS = 8
# Polls of a predecessor's words before the waiting workgroup reduces that tile itself.
LOOKBACK_POLLS = 128
# Predecessors a look-back step reads at once (``_lookback_window``).
LOOKBACK_WINDOW = 32

# Accumulators whose WGSL type subgroup shuffles move (32-bit scalars and vectors).
SUBGROUP_TAGS = ("f32", "i32", "u32", "c64", "ei64", "eu64")
VEC4_TAGS = ("f32", "i32", "u32")
# Accumulators whose totals fit one atomic word with a value to spare for "not yet".
LOOKBACK_TAGS = ("f32",)


@dataclass(frozen=True)
class ScanSpec:
    kind: str  # sum, prod
    tag: str
    inp: ew.ElementwiseSpec
    int64_native: bool
    layout: str  # tile, thread, lookback
    quad: bool = False  # tile: the input read as vec4 quads (rows of a multiple of 4)
    vec_out: bool = False  # tile: the output written as vec4 (32-bit, rows 4-aligned)
    subgroups: bool = False  # tile: subgroup scans (full, contiguous subgroups)
    window: int = 0  # lookback: predecessors read at once (``_lookback_window``; 0: one a step)

    @property
    def name(self) -> str:
        flags = ("_q" if self.quad else "") + ("_v" if self.vec_out else "") + ("_sg" if self.subgroups else "")
        return f"scan_{self.layout}_{self.kind}_{self.tag}{flags}"


# The header words every scan kernel reads (see the module doc), then the fused input.
HEADER = tuple(Field(name, "u32", i) for i, name in enumerate(("M", "L", "NC", "R", "S", "C", "HAS_OFFSETS", "INNER")))


def launch_record(spec: ScanSpec) -> Launch:
    """The fused input ``in0``, the output ``O``, then the offsets ``X`` (or, for the
    look-back layout, its state words ``ST``)."""
    store_t = ty.storage_type(rd.STORE_DTYPE[spec.tag], spec.int64_native)
    if spec.layout == "lookback":
        state = Binding("ST", "atomic<u32>", write=True)
    else:
        state = Binding("X", store_t)
    out = Binding("O", f"vec4<{store_t}>" if spec.vec_out else store_t, write=True)
    return Launch(spec.name, (ew.input_group(spec.inp, "in0_"), out, state),
                  HEADER + (Field("in0", "block", HEADER_WORDS),), spec.inp.has_f64_params, WORKGROUP)


FILL_RECORD = Launch("scan_fill", (Binding("ST", "u32", write=True),), (Field("n"),))


def _comb_fn(kind: str, t: str) -> str:
    wt = ty.WGSL_TYPE[t]
    return f"fn comb(a: {wt}, b: {wt}) -> {wt} {{ return {rd.combine_expr(kind, t, 'a', 'b')}; }}\n"


def _workgroup_scan(spec: ScanSpec, own: str, ident: str) -> list[str]:
    """Statements giving ``excl`` (the combine of ``own`` over the invocations before
    ``lid``, starting from the identity) and ``wtot`` (over all 256)."""
    if spec.subgroups:
        # A scan of shuffles, not subgroupInclusiveAdd: that starts from +0.0, and a
        # running sum of -0.0 must stay -0.0. Two halves of ``wsum`` alternate between
        # rounds, so one barrier per round suffices.
        return [
            f"        var incl = {own};",
            "        for (var d = 1u; d < sgs; d <<= 1u) {",
            "            let t = subgroupShuffleUp(incl, d);",
            "            if (lane >= d) { incl = comb(t, incl); }",
            "        }",
            f"        let up = select(subgroupShuffleUp(incl, 1u), {ident}, lane == 0u);",
            "        if (lane == sgs - 1u) { wsum[half + lid / sgs] = incl; }",
            "        workgroupBarrier();",
            f"        var before = {ident};",
            f"        var wtot = {ident};",
            "        for (var q = 0u; q < 256u / sgs; q++) {",
            "            let s = wsum[half + q];",
            "            if (q < lid / sgs) { before = comb(before, s); }",
            "            wtot = comb(wtot, s);",
            "        }",
            "        let excl = comb(before, up);",
            "        half = 64u - half;",
        ]
    # Raking: 16 threads scan 16 totals each, every thread adds the segments before its own.
    return [
        f"        sh[lid] = {own};",
        "        workgroupBarrier();",
        "        if (lid < 16u) {",
        "            var a = sh[lid * 16u];",
        "            for (var k = 1u; k < 16u; k++) { a = comb(a, sh[lid * 16u + k]); sh[lid * 16u + k] = a; }",
        "            seg[lid] = a;",
        "        }",
        "        workgroupBarrier();",
        f"        var before = {ident};",
        f"        var wtot = {ident};",
        "        for (var q = 0u; q < 16u; q++) {",
        "            let s = seg[q];",
        "            if (q < lid / 16u) { before = comb(before, s); }",
        "            wtot = comb(wtot, s);",
        "        }",
        "        if (lid % 16u != 0u) { before = comb(before, sh[lid - 1u]); }",
        "        let excl = before;",
        "        workgroupBarrier();",
    ]


def _thread_scan(spec: ScanSpec, ident: str, l0: str, hi: str, src: str, pre: str = "        ",
                 K: int = PER_THREAD) -> list[str]:
    """Loads of the thread's K elements from ``l0`` of the row at ``src`` (identity
    past ``hi``) into ``x0..``, and their running combines ``v0..``."""
    body = [f"{pre}var x{j} = {ident};" for j in range(K)]
    if spec.quad:
        for h in range(K // 4):
            body.append(f"{pre}if ({l0} + {4 * h}u < {hi}) {{")
            body.append(f"{pre}    let y = in0_at4(({src} + {l0} + {4 * h}u) >> 2u);")
            body += [f"{pre}    x{4 * h + j} = y.v{j};" for j in range(4)]
            body.append(f"{pre}}}")
    else:
        body += [f"{pre}if ({l0} + {j}u < {hi}) {{ x{j} = in0_at({src} + {l0} + {j}u); }}" for j in range(K)]
    body.append(f"{pre}let v0 = x0;")
    body += [f"{pre}let v{j} = comb(v{j - 1}, x{j});" for j in range(1, K)]
    return body


def _stores(spec: ScanSpec, base: str, l0: str, hi: str, dst: str, K: int = PER_THREAD) -> list[str]:
    wt = ty.WGSL_TYPE[spec.tag]
    if spec.vec_out:
        body = []
        for h in range(K // 4):
            vals = ", ".join(f"comb({base}, v{4 * h + j})" for j in range(4))
            at = f"{l0} + {4 * h}u"
            body.append(f"        if ({at} < {hi}) {{ O[({dst} + {at}) >> 2u] = vec4<{wt}>({vals}); }}")
        return body
    return [f"        if ({l0} + {j}u < {hi}) {{ O[{dst} + {l0} + {j}u] = comb({base}, v{j}); }}" for j in range(K)]


def _tile_body(spec: ScanSpec, ident: str, initial: str) -> tuple[list[str], str]:
    t = spec.tag
    wt = ty.WGSL_TYPE[t]
    K = PER_THREAD
    entry = "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32"
    if spec.subgroups:
        entry += ", @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) lane: u32"
    body = [
        "@compute @workgroup_size(256)",
        f"fn main({entry}) {{",
        "    let w = wid.x + wid.y * 65535u;",
        "    let M = P[0]; let L = P[1]; let NC = P[2]; let R = P[3]; let S = P[4]; let C = P[5];",
        "    if (w >= M * NC) { return; }",
        "    let m = w / NC;",
        "    let c = w % NC;",
        "    let lo = c * C;",
        "    let hi = min(L, lo + C);",
        "    let src = m * L;",
        "    let dst = m * R + S;",
        f"    var run = {ident};",
        "    if (P[6] != 0u && c > 0u) { run = X[m * NC + c - 1u]; }",
    ]
    if not spec.vec_out:  # (a vec4 output has no initial slot)
        body.append(f"    if (S == 1u && c == 0u && lid == 0u) {{ O[m * R] = {initial}; }}")
    if spec.subgroups:
        body.append("    var half = 0u;")
    body += [
        f"    for (var r0 = lo; r0 < hi; r0 += {ROUND}u) {{",
        f"        let l0 = r0 + lid * {K}u;",
    ]
    body += _thread_scan(spec, ident, "l0", "hi", "src")
    body += _workgroup_scan(spec, f"v{K - 1}", ident)
    body.append("        let base = comb(run, excl);")
    body += _stores(spec, "base", "l0", "hi", "dst")
    body += ["        run = comb(run, wtot);", "    }", "}"]
    if spec.subgroups:
        shared = f"var<workgroup> wsum: array<{wt}, 128>;\n"
    else:
        shared = f"var<workgroup> sh: array<{wt}, 256>;\nvar<workgroup> seg: array<{wt}, 16>;\n"
    return body, shared


def _lookback_window(W: int) -> list[str]:
    """The look-back's window step (with polls, ``P[6] > 0``): ``W`` invocations
    each read one of the tiles k, k-1, ... once; the first combines their published
    words nearest first, up to the first inclusive prefix (the look-back is done) or the
    first tile with nothing published yet (the single-tile step below waits for it, or
    reduces it). A tile then needs its predecessors' totals, published as soon as each
    has reduced its own, not their prefixes: the chain of prefixes, one tile after
    another, was what bounded the pass (its time grew with the tile count)."""
    if W == 0:  # one predecessor a step (kept for comparison: bench_scan.py)
        return []
    return [
        "                if (P[6] > 0u) {",
        "                    workgroupBarrier();  // the last window's words are read",
        f"                    if (lid < {W}u) {{",
        "                        var f = 0u;",
        "                        var w = 0u;",
        "                        if (lid <= k) {",
        "                            let vi = atomicLoad(&ST[1u + T + m * NC + k - lid]);",
        "                            if (vi != 0xffffffffu) { f = 2u; w = vi; } else {",
        "                                let va = atomicLoad(&ST[1u + m * NC + k - lid]);",
        "                                if (va != 0xffffffffu) { f = 1u; w = va; }",
        "                            }",
        "                        }",
        "                        lb_wflag[lid] = f;",
        "                        lb_wval[lid] = w;",
        "                    }",
        "                    workgroupBarrier();",
        "                    if (lid == 0u) {",
        "                        var pr = prefix;",
        "                        var used = 0u;",
        "                        var fin = 0u;",
        f"                        for (var l = 0u; l < {W}u && l <= k; l++) {{",
        "                            let f = lb_wflag[l];",
        "                            if (f == 0u) { break; }",
        "                            pr = comb(bitcast<f32>(lb_wval[l]), pr);",
        "                            used = l + 1u;",
        "                            if (f == 2u) { fin = 1u; break; }",
        "                        }",
        "                        lb_value = bitcast<u32>(pr);",
        "                        lb_used = used;",
        "                        lb_flag = fin;",
        "                    }",
        "                    let fin = workgroupUniformLoad(&lb_flag);",
        "                    let used = workgroupUniformLoad(&lb_used);",
        "                    prefix = bitcast<f32>(workgroupUniformLoad(&lb_value));",
        "                    if (fin == 1u || used > k) { break; }",
        "                    k -= used;",
        f"                    if (used == {W}u) {{ continue; }}",
        "                }",
    ]


def _lookback_body(spec: ScanSpec, ident: str, initial: str) -> tuple[list[str], str]:
    """One pass: a workgroup per tile of LOOKBACK_ROUND elements, taken in the order workgroups
    start (a ticket), publishes its tile's total, then combines the totals of the
    tiles before it (looking back until one has published its inclusive prefix) and
    publishes its own prefix. A tile not published after ``P[6]`` polls is reduced
    from the input by the waiting workgroup itself, so no workgroup ever depends on
    another one making progress. Totals travel as single 32-bit atomic words (f32
    bits, NaN canonical), the sentinel 0xffffffff meaning "not yet"."""
    K = LOOKBACK_PER_THREAD
    entry = "@builtin(local_invocation_index) lid: u32"
    if spec.subgroups:
        entry += ", @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) lane: u32"
    body = [
        "fn publish(v: f32) -> u32 { return select(bitcast<u32>(v), 0x7fc00000u, f32_isnan(v)); }",
        "@compute @workgroup_size(256)",
        f"fn main({entry}) {{",
        "    if (lid == 0u) { lb_ticket = atomicAdd(&ST[0], 1u); }",
        "    let tk = workgroupUniformLoad(&lb_ticket);",
        "    let M = P[0]; let L = P[1]; let NC = P[2]; let R = P[3]; let S = P[4]; let C = P[5];",
        "    let T = M * NC;",
        "    if (tk >= T) { return; }",
        "    let m = tk / NC;",
        "    let c = tk % NC;",
        "    let hi = min(L, c * C + C);",
        "    let src = m * L;",
        "    let dst = m * R + S;",
    ]
    if not spec.vec_out:
        body.append(f"    if (S == 1u && c == 0u && lid == 0u) {{ O[m * R] = {initial}; }}")
    if spec.subgroups:
        body.append("    var half = 0u;")
    body.append(f"    let l0 = c * C + lid * {K}u;")
    body += ["    {"] + _thread_scan(spec, ident, "l0", "hi", "src", K=K)
    body += _workgroup_scan(spec, f"v{K - 1}", ident)
    body += [
        "        if (lid == 0u) { atomicStore(&ST[select(1u + tk, 1u + T + tk, c == 0u)], publish(wtot)); }",
        f"        var prefix = {ident};",
        "        if (c > 0u) {",
        "            var k = c - 1u;",
        "            loop {",
    ]
    body += _lookback_window(spec.window)
    body += [
        "                workgroupBarrier();  // every invocation has read the last step's words",
        "                if (lid == 0u) {",
        "                    var flag = 0u;",
        "                    var got = 0u;",
        "                    for (var s = 0u; s < P[6]; s++) {",
        "                        let vi = atomicLoad(&ST[1u + T + m * NC + k]);",
        "                        if (vi != 0xffffffffu) { flag = 2u; got = vi; break; }",
        "                        let va = atomicLoad(&ST[1u + m * NC + k]);",
        "                        if (va != 0xffffffffu) { flag = 1u; got = va; break; }",
        "                    }",
        "                    lb_flag = flag;",
        "                    lb_value = got;",
        "                }",
        "                let flag = workgroupUniformLoad(&lb_flag);",
        "                var v = bitcast<f32>(lb_value);",
        "                if (flag == 0u) {",
        "                    // not published yet: reduce tile k here",
        f"                    let kl0 = k * C + lid * {K}u;",
        "                    let khi = min(L, k * C + C);",
        "                    {",
    ]
    inner = _thread_scan(spec, ident, "kl0", "khi", "src", pre="                        ", K=K)
    inner += ["                        " + x.strip() for x in _workgroup_scan(spec, f"v{K - 1}", ident)]
    inner.append("                        v = wtot;")
    body += inner
    body += [
        "                    }",
        "                }",
        "                prefix = comb(v, prefix);",
        "                if (flag == 2u || k == 0u) { break; }",
        "                k -= 1u;",
        "            }",
        "            if (lid == 0u) { atomicStore(&ST[1u + T + tk], publish(comb(prefix, wtot))); }",
        "        }",
        "        let base = comb(prefix, excl);",
    ]
    body += _stores(spec, "base", "l0", "hi", "dst", K=K)
    body += ["    }", "}"]
    wt = ty.WGSL_TYPE[spec.tag]
    shared = ("var<workgroup> lb_ticket: u32;\nvar<workgroup> lb_flag: u32;\nvar<workgroup> lb_value: u32;\n"
              f"var<workgroup> lb_used: u32;\nvar<workgroup> lb_wflag: array<u32, {max(spec.window, 1)}>;\n"
              f"var<workgroup> lb_wval: array<u32, {max(spec.window, 1)}>;\n")
    if spec.subgroups:
        shared += f"var<workgroup> wsum: array<{wt}, 128>;\n"
    else:
        shared += f"var<workgroup> sh: array<{wt}, 256>;\nvar<workgroup> seg: array<{wt}, 16>;\n"
    return body, shared


def render_fill() -> str:
    """The look-back state: the ticket counter 0, every tile's words 0xffffffff."""
    return "\n".join(FILL_RECORD.declarations()) + """
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * 65535u) * 256u + lid;
    if (i < P[0]) { ST[i] = select(0xffffffffu, 0u, i == 0u); }
}
"""


def _thread_body(ident: str, initial: str) -> list[str]:
    return [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let gidx = (wid.x + wid.y * 65535u) * 256u + lid;",
        "    let M = P[0]; let L = P[1]; let NC = P[2]; let R = P[3]; let S = P[4]; let C = P[5];",
        "    let INNER = P[7];",
        "    if (gidx >= M * NC) { return; }",
        "    let i = gidx % INNER;",
        "    let rest = gidx / INNER;",
        "    let c = rest % NC;",
        "    let o = rest / NC;",
        "    let m = o * INNER + i;",
        f"    var run = {ident};",
        "    if (P[6] != 0u && c > 0u) { run = X[m * NC + c - 1u]; }",
        f"    if (S == 1u && c == 0u) {{ O[o * R * INNER + i] = {initial}; }}",
        "    let hi = min(L, (c + 1u) * C);",
        "    for (var l = c * C; l < hi; l++) {",
        "        run = comb(run, in0_at((o * L + l) * INNER + i));",
        "        O[(o * R + S + l) * INNER + i] = run;",
        "    }",
        "}",
    ]


def render(spec: ScanSpec) -> str:
    """The WGSL of pass 3 (and of a whole scan whose rows fit in one chunk)."""
    t = spec.tag
    record = launch_record(spec)
    decls = record.declarations()
    if spec.quad:
        fns = ew.compute_fn(spec.inp, "in0_") + rd.render_input_quad(spec.inp, "in0_", record.offset("in0"))
    else:
        fns = ew.render_input(spec.inp, "in0_", record.offset("in0"))
    ident = rd.identity(spec.kind, t, scan=True)
    initial = rd.identity(spec.kind, t)  # include_initial's slot: +0.0, as NumPy's
    if spec.layout == "tile":
        body, shared = _tile_body(spec, ident, initial)
    elif spec.layout == "lookback":
        body, shared = _lookback_body(spec, ident, initial)
    else:
        body, shared = _thread_body(ident, initial), ""
    code = fns + _comb_fn(spec.kind, t) + "\n".join(body) + "\n"
    return "\n".join(decls) + "\n" + shared + ew.library(code) + "\n" + code


def scatter_record(spec: ew.ElementwiseSpec) -> Launch:
    """The flags ``in0`` (fused), their exclusive scan ``POS``, the indices ``OUT``."""
    return Launch("compact", (ew.input_group(spec, "in0_"), Binding("POS", "u32"),
                              Binding("OUT", ty.storage_type("int64", spec.int64_native), write=True)),
                  (Field("n", "u32", 0), Field("in0", "block", HEADER_WORDS)), spec.has_f64_params, WORKGROUP)


def render_scatter(spec: ew.ElementwiseSpec) -> str:
    """Stream compaction: for each flat index ``e`` whose fused flag is nonzero, write
    ``e`` (as int64) at ``OUT[POS[e]]``. ``POS`` is the exclusive scan of the flags."""
    native = spec.int64_native
    record = scatter_record(spec)
    fn = ew.render_input(spec, "in0_", record.offset("in0"))
    value = "i64(e)" if native else "vec2<u32>(e, 0u)"
    decls = record.declarations()
    body = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let e = (wid.x + wid.y * 65535u) * 256u + lid;",
        "    if (e >= P[0]) { return; }",
        f"    if (in0_at(e) != 0u) {{ OUT[POS[e]] = {value}; }}",
        "}",
    ]
    code = fn + "\n".join(body) + "\n"
    return "\n".join(decls) + "\n" + ew.library(code) + "\n" + code
