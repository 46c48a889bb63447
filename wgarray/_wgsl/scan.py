"""Render scan (prefix sum / product) kernels: pure functions from a spec to WGSL.

A scan of ``M`` rows of ``L`` elements (flat index ``m * L + l`` of a fused input) is
work-efficient in blocks of ``BLOCK = 256 * PER_THREAD`` elements:

1. ``render_local``: one workgroup per (row, block). Each thread scans its
   ``PER_THREAD`` consecutive elements serially, the 256 thread totals are scanned in
   shared memory (Hillis-Steele, 8 steps), and each element is written as
   ``thread prefix (+) own running value``. The block's total goes to ``T[m * NB + b]``.
2. the driver scans the block totals (recursively, with an initial identity, so entry
   ``b`` is the combine of all blocks before ``b``);
3. ``render_add``: combines that prefix into every element of blocks ``b >= 1``.

Row ``m`` of the output starts at ``m * R``; element ``l`` is written at
``m * R + S + l``: ``S = 1`` with ``R = L + 1`` gives ``include_initial`` (slot 0 holds
the identity, written by block 0), which is also an exclusive scan followed by the
row's total. Parameters: M, L, NB, R, S, then the fused input's at word 8.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import elementwise as ew
from . import reduce as rd
from . import types as ty

WORKGROUP = 256
PER_THREAD = 8
BLOCK = WORKGROUP * PER_THREAD
HEADER_WORDS = 8


@dataclass(frozen=True)
class ScanSpec:
    kind: str  # sum, prod
    tag: str
    inp: ew.ElementwiseSpec
    int64_native: bool

    @property
    def name(self) -> str:
        return f"scan_{self.kind}_{self.tag}"


def _comb_fn(kind: str, t: str) -> str:
    wt = ty.WGSL_TYPE[t]
    return f"fn comb(a: {wt}, b: {wt}) -> {wt} {{ return {rd.combine_expr(kind, t, 'a', 'b')}; }}\n"


def render_local(spec: ScanSpec) -> str:
    native = spec.int64_native
    t = spec.tag
    wt = ty.WGSL_TYPE[t]
    store_t = ty.storage_type(rd.STORE_DTYPE[t], native)
    decls, fn = ew.render_input(spec.inp, "in0_", 0, HEADER_WORDS)
    nb = len(spec.inp.bindings)
    decls = decls + [
        f"@group(0) @binding({nb}) var<storage, read_write> O: array<{store_t}>;",
        f"@group(0) @binding({nb + 1}) var<storage, read_write> T: array<{store_t}>;",
    ] + ew.params_decls(nb + 2, spec.inp.has_f64_params)
    ident = rd.identity(spec.kind, t, scan=True)
    K = PER_THREAD
    body = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let w = wid.x + wid.y * 65535u;",
        "    let M = P[0]; let L = P[1]; let NB = P[2]; let R = P[3]; let S = P[4];",
        "    if (w >= M * NB) { return; }",
        "    let m = w / NB;",
        "    let b = w % NB;",
        f"    let l0 = b * {BLOCK}u + lid * {K}u;",
        "    let src = m * L;",
        "    let dst = m * R + S;",
        f"    var run = {ident};",
    ]
    for j in range(K):
        body += [
            f"    var x{j} = {ident};",
            f"    if (l0 + {j}u < L) {{ x{j} = in0_at(src + l0 + {j}u); }}",
            f"    run = comb(run, x{j});",
            f"    let v{j} = run;",
        ]
    body += ["    sh[lid] = run;", "    workgroupBarrier();"]
    off = 1
    while off < WORKGROUP:
        body += [
            "    {",
            "        var s = sh[lid];",
            f"        if (lid >= {off}u) {{ s = comb(sh[lid - {off}u], s); }}",
            "        workgroupBarrier();",
            "        sh[lid] = s;",
            "        workgroupBarrier();",
            "    }",
        ]
        off *= 2
    body += [
        f"    var pre = {ident};",
        "    if (lid > 0u) { pre = sh[lid - 1u]; }",
    ]
    for j in range(K):
        body.append(f"    if (l0 + {j}u < L) {{ O[dst + l0 + {j}u] = comb(pre, v{j}); }}")
    body += [
        f"    if (S == 1u && b == 0u && lid == 0u) {{ O[m * R] = {ident}; }}",
        f"    if (lid == {WORKGROUP - 1}u) {{ T[w] = sh[{WORKGROUP - 1}u]; }}",
        "}",
    ]
    code = fn + _comb_fn(spec.kind, t) + "\n".join(body) + "\n"
    shared = f"var<workgroup> sh: array<{wt}, 256>;\n"
    return "\n".join(decls) + "\n" + shared + ew.library(code) + "\n" + code


def render_add(kind: str, t: str, native: bool) -> str:
    """Combine block prefixes ``X[m * (NB + 1) + b]`` into blocks ``b >= 1`` of ``O``."""
    store_t = ty.storage_type(rd.STORE_DTYPE[t], native)
    K = PER_THREAD
    body = [
        f"@group(0) @binding(0) var<storage, read_write> O: array<{store_t}>;",
        f"@group(0) @binding(1) var<storage, read> X: array<{store_t}>;",
        "@group(0) @binding(2) var<storage, read> P: array<u32>;",
        "",
        _comb_fn(kind, t),
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let w = wid.x + wid.y * 65535u;",
        "    let M = P[0]; let L = P[1]; let NB = P[2]; let R = P[3]; let S = P[4];",
        "    if (w >= M * NB) { return; }",
        "    let m = w / NB;",
        "    let b = w % NB;",
        "    if (b == 0u) { return; }",
        "    let add = X[m * (NB + 1u) + b];",
        f"    let l0 = b * {BLOCK}u + lid * {K}u;",
        "    let dst = m * R + S;",
    ]
    for j in range(K):
        body.append(f"    if (l0 + {j}u < L) {{ O[dst + l0 + {j}u] = comb(add, O[dst + l0 + {j}u]); }}")
    body.append("}")
    code = "\n".join(body) + "\n"
    return ew.library(code) + "\n" + code


def render_scatter(spec: ew.ElementwiseSpec) -> str:
    """Stream compaction: for each flat index ``e`` whose fused flag is nonzero, write
    ``e`` (as int64) at ``OUT[POS[e]]``. ``POS`` is the exclusive scan of the flags."""
    native = spec.int64_native
    decls, fn = ew.render_input(spec, "in0_", 0, HEADER_WORDS)
    nb = len(spec.bindings)
    out_t = ty.storage_type("int64", native)
    value = "i64(e)" if native else "vec2<u32>(e, 0u)"
    decls = decls + [
        f"@group(0) @binding({nb}) var<storage, read> POS: array<u32>;",
        f"@group(0) @binding({nb + 1}) var<storage, read_write> OUT: array<{out_t}>;",
    ] + ew.params_decls(nb + 2, spec.has_f64_params)
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
