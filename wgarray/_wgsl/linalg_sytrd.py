"""WGSL kernels of the blocked tridiagonal reduction A = Q T Q^T of real symmetric
matrices over the whole device (host side: ``wgarray/_kernels/linalg_sytrd.py``).
LAPACK's dsytrd with dlatrd's panel in shape: the columns of a panel of NB are
reduced one after another against the trailing matrix as it stood at the panel's
start, the panel's earlier reflectors entering as corrections (V W^T + W V^T), and
the trailing matrix is updated once a panel by a rank-2 NB product.

  tcol   one workgroup per matrix: finishes the previous column's w from symv's
         partial sums, p = tau (A22 v - V (W^T v) - W (V^T v)), in the pass over V's
         and W's rows that brings column k up to date, then forms its reflector
  tsymv  A22 v over many workgroups: row blocks by column chunks, each chunk's
         partial sums into AVP (tcol adds them up); chunk 0's row blocks also sum
         their rows' share of Y = [V^T v, W^T v] into Y
  tupd   A22 -= V W^T + W V^T over the rows and columns past the panel, a 32 x 32
         tile a workgroup

The half of the work that is matrix-vector products (symv) reads the trailing matrix
once a column, across all the device's cores, where the one-workgroup reduction
(``linalg_trd.render_trd``) streams it through one core twice a column. The output
is trd's: d, e, tau, and reflector k's v in row k of A past the diagonal.

Buffers: A (nz x n x n, full symmetric storage, scaled), VW (nz x 2 NB x n: V's NB
columns then W's, zero above each column's support), AVP (nz x
ceil(n / cw) x n), Y (nz x ceil(n / SW) x 2 NB: V^T v then W^T v, a row block's share
each), D, E, TAU (nz x n). VW holds
its columns contiguous (consecutive threads take consecutive rows: one cache line
serves many of them; a row a thread, rows of 2 NB apart, would cost a line a load
and bind tcol, one core, to its load rate).
"""
from __future__ import annotations

import re
import textwrap

from .._runtime.launch import Launch
from .linalg import _finish, record
from .linalg_trd import LAST_BLOCK, pow2_scale_fn, reduce_to, reflector_fn

NB = 32     # columns a panel
CB = 64     # columns of A a symv workgroup sums over (at least; ``chunk_cols``)


def chunk_cols(n: int) -> int:
    """The columns a symv workgroup sums over at order n: CB, more past order 16 CB,
    so that tcol adds at most 16 chunks' partial sums a row."""
    return CB * max(1, -(-n // (16 * CB)))
SW = 64     # rows a symv workgroup
LANES = 4   # threads a row in a symv workgroup, each over every LANES-th column of the chunk
TILE = 32   # tupd's tile side (64 threads, 4 x 4 entries each)


def _sum(out: str, j: str, count: str, term: str, start: str = "0u", step: str = "1u", ways: int = 4) -> str:
    """WGSL adding ``term`` (an expression in ``j``) over j = start, start + step, ...
    below ``count`` into ``out`` (declared by the caller), in ``ways`` independent
    accumulators: the loads of ``ways`` terms in flight at once, where one chain of
    adds would wait out each load's latency."""
    accs = [f"{out}_{w}" for w in range(ways)]
    word = re.compile(rf"\b{j}\b")
    terms = " ".join(f"{a} += {word.sub(f'({j} + {w}u * {step})', term)};" for w, a in enumerate(accs))
    return (f"    {{ {' '.join(f'var {a} = R(0);' for a in accs)}\n"
            f"    var {j} = {start};\n"
            f"    for (; {j} + {ways - 1}u * {step} < {count}; {j} += {ways}u * {step}) {{ {terms} }}\n"
            f"    for (; {j} < {count}; {j} += {step}) {{ {accs[0]} += {term}; }}\n"
            f"    {out} += {' + '.join(accs)}; }}\n")


INIT_WG = 256     # tinit's workgroup
INIT_CHUNKS = 64  # tinit's workgroups a matrix in its first mode (its partial maxima)


def tinit_record(t: str) -> Launch:
    return record(f"linalg_sytrd_tinit_{t}",
                  [("SRC", "S", False), ("A", "S", True), ("PM", "R", True), ("SC", "R", True)],
                  ("nz", "n", "off", "s_mat", "mode", "blocks"), INIT_WG)


def render_tinit(t: str) -> str:
    """P: nz, n, off, s_mat (SRC's matrices at off + z s_mat, rows of n), mode, blocks
    (the workgroups a matrix). trd's init over the whole device: mode 0, INIT_CHUNKS
    workgroups a matrix, the largest magnitude of each chunk of the lower triangle into
    PM; mode 1, a workgroup per INIT_WG entries, the matrix's largest magnitude from
    PM, the power of two that brings it into [1, 2) (trd's: exact, so that the norms
    and rotations that follow neither overflow nor underflow), A = the symmetric
    matrix of SRC's lower triangle times it, and its inverse into SC."""
    decls = tinit_record(t).declarations() + [f"var<workgroup> g_m: array<R, {INIT_WG}>;"]
    body = pow2_scale_fn(t).split("\n") + [f"@compute @workgroup_size({INIT_WG})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0] * P[5]) { return; }"]
    body += f"""    let n = P[1]; let z = b / P[5]; let blk = b % P[5];
    let s0 = P[2] + z * P[3]; let nn = n * n;
    if (P[4] == 0u) {{
        var mx = R(0);
        for (var e = blk * {INIT_WG}u + lid; e < nn; e += {INIT_CHUNKS * INIT_WG}u) {{
            if (e % n <= e / n) {{ mx = max(mx, r_abs(SRC[s0 + e])); }}
        }}
{reduce_to("cmx", INIT_WG, "g_m", "mx", "max")}        if (lid == 0u) {{ PM[z * {INIT_CHUNKS}u + blk] = cmx; }}
        return;
    }}
    var mx = R(0);
    for (var c = 0u; c < {INIT_CHUNKS}u; c++) {{ mx = max(mx, PM[z * {INIT_CHUNKS}u + c]); }}
    let sc = pow2_scale(mx);
    let e = blk * {INIT_WG}u + lid;
    if (e < nn) {{
        let i = e / n; let j = e % n;
        A[z * nn + e] = SRC[s0 + max(i, j) * n + min(i, j)] * sc;
    }}
    if (blk == 0u && lid == 0u) {{ SC[z] = R(1) / sc; }}
}}""".split("\n")
    return _finish(decls, t, body)


def tcol_record(t: str, wg: int, sg: int = 0, cw: int = CB) -> Launch:
    return record(f"linalg_sytrd_tcol_{t}_{wg}_{cw}" + (f"_sg{sg}" if sg else ""),
                  [("A", "S", True), ("VW", "R", True), ("AVP", "R", False), ("Y", "R", False), ("D", "R", True),
                   ("E", "R", True), ("TAU", "R", True)],
                  ("nz", "n", "k", "i", "mode", "cbn", "rbn"), wg)


def render_tcol(t: str, wg: int, sg: int = 0, cw: int = CB) -> str:
    """P: nz, n, k, i (k's column in its panel), mode, cbn and rbn (the column chunks
    and row blocks of the last symv). A workgroup per matrix (wg >= 2 NB, a power of
    two).

    Mode 0 and 1 first finish column k - 1 when i > 0: Y of its v (the sum of symv's
    row blocks), then in one pass over V's and W's rows p = tau (chunks - V[r, :]
    W^T v - W[r, :] V^T v) over the i - 1 columns before it, w = p - (tau / 2) (p . v)
    v into W's column i - 1 (zero above row k), and (mode 0) column k (rows k..n-1,
    kept in row k) brought up to date with those columns, a_k -= V W[k, :]^T +
    W V[k, :]^T, column i - 1's own term following once w is known. Mode 0 then forms
    column k's reflector (d_k, e_k, tau_k; v into row k past the diagonal and into V's
    column i). Mode 2 writes the last 2 x 2 block (after the last panel's update).

    ``sg`` (float32, the device's subgroup size, at least wg / sg): the workgroup's
    three sums by subgroups (``reduce_to``), two barriers each where a tree of 1024
    takes eleven. ``cw``: the columns of symv's chunks (``chunk_cols``)."""
    nb2 = 2 * NB
    groups = wg // nb2
    decls = tcol_record(t, wg, sg, cw).declarations()
    decls += [f"var<workgroup> g_r: array<R, {wg}>;", f"var<workgroup> g_k: array<R, {nb2}>;",
              f"var<workgroup> g_y: array<R, {nb2}>;", "var<workgroup> g_tau: R;", "var<workgroup> g_sc: R;",
              "var<workgroup> g_pk: R;"]
    stage = f"""    for (var e = lid; e < n; e += {wg}u) {{
        var v = R(0);
        if (e == k + 1u) {{ v = R(1); }} else if (e > k + 1u) {{ v = A[a0 + k * n + e] * scal; }}
        if (e > k) {{ A[a0 + k * n + e] = v; }}
        VW[w0 + ic * n + e] = v;
    }}
"""
    body = reflector_fn(wg, ", w0: u32, ic: u32", stage, sg).split("\n")
    body += [f"@compute @workgroup_size({wg})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
             "    let b = wid.x + wid.y * 65535u;",
             "    if (b >= P[0]) { return; }"]
    body += f"""    let n = P[1]; let k = P[2]; let i = P[3]; let mode = P[4]; let cbn = P[5]; let rbn = P[6];
    let a0 = b * n * n; let v0 = b * n; let w0 = b * n * {nb2}u;
    let p0 = b * ((n + {cw - 1}u) / {cw}u) * n;
    if (mode == 2u) {{
        if (lid == 0u) {{
{textwrap.indent(LAST_BLOCK, "    ")}        }}
        return;
    }}
    if (i > 0u) {{
        let kp = k - 1u; let ip = i - 1u; let wc = {NB}u + ip;
        // Y of v_(k-1) over the ip columns before it: the sum of symv's row blocks,
        // {groups} threads a column (every {groups}-th block each), then their sums
        let yc = lid % {nb2}u;
        var y = R(0);
        if (yc % {NB}u < ip) {{
            for (var q = lid / {nb2}u; q < rbn; q += {groups}u) {{ y += Y[(b * ((n + {SW - 1}u) / {SW}u) + q) * {nb2}u + yc]; }}
        }}
        g_r[lid] = y;
        if (lid == 0u) {{ g_tau = TAU[v0 + kp]; }}
        workgroupBarrier();
        if (lid < {nb2}u) {{
            var t = R(0);
            for (var q = 0u; q < {groups}u; q++) {{ t += g_r[q * {nb2}u + lid]; }}
            g_y[lid] = t;
            g_k[lid] = VW[w0 + lid * n + k];
        }}
        let tau = workgroupUniformLoad(&g_tau);
        let up = mode == 0u;
        var dp = R(0);
        for (var r = k + lid; r < n; r += {wg}u) {{
            var s = R(0);
{_sum("s", "c", "cbn", "AVP[p0 + c * n + r]")}            var cr = R(0); var ud = R(0);
            for (var j = 0u; j < ip; j++) {{
                let vr = VW[w0 + j * n + r]; let wr = VW[w0 + ({NB}u + j) * n + r];
                cr += vr * g_y[{NB}u + j] + wr * g_y[j];
                ud += vr * g_k[{NB}u + j] + wr * g_k[j];
            }}
            let p = tau * (s - cr);
            VW[w0 + wc * n + r] = p;
            if (r == k) {{ g_pk = p; }}
            if (up) {{ A[a0 + k * n + r] -= ud; }}
            dp += p * A[a0 + kp * n + r];
        }}
{textwrap.indent(reduce_to("dpt", wg, "g_r", "dp", "add", sg), "    ")}        let al = R(-0.5) * tau * dpt;
        // w = p + al v (v_(k-1) in row kp of A, 1 at row k); column k's own term
        // of it: a_k -= v w_k + w v_k with v_k = 1 there
        let wk = g_pk + al;
        for (var r = lid; r < n; r += {wg}u) {{
            let at = w0 + wc * n + r;
            if (r < k) {{ VW[at] = R(0); }} else {{
                let vr = A[a0 + kp * n + r];
                let w = VW[at] + al * vr;
                VW[at] = w;
                if (up) {{ A[a0 + k * n + r] -= vr * wk + w; }}
            }}
        }}
        storageBarrier(); workgroupBarrier();
    }}
    if (mode == 1u) {{ return; }}
    reflect(a0, v0, k, n - k - 1u, n, lid, w0, i);
}}""".split("\n")
    return _finish(decls, t, body)


def tsymv_record(t: str, cw: int = CB) -> Launch:
    return record(f"linalg_sytrd_tsymv_{t}_{cw}",
                  [("A", "S", False), ("VW", "R", False), ("Y", "R", True), ("AVP", "R", True)],
                  ("nz", "n", "k", "i", "rb", "cbn"), SW * LANES)


def render_tsymv(t: str, cw: int = CB) -> str:
    """P: nz, n, k, i, rb (row blocks of SW), cbn (column chunks of cw). Workgroup
    (z, chunk c, row block), SW rows by LANES lanes: for its rows r of k+1..n-1, the
    sum over the chunk's columns of A[c, r] v_c (A symmetric: read down columns,
    contiguous across the rows' threads; lane q takes every LANES-th column); the
    lanes' sums added in workgroup memory, into AVP's row of the chunk. Chunk 0's
    workgroups also sum their rows' share of Y = [V^T v, W^T v] over the i earlier
    columns, into Y's row block rbi (2 NB entries; nz x ceil(n / SW) blocks): the
    panel's correction, which tcol applies."""
    nb2 = 2 * NB
    decls = tsymv_record(t, cw).declarations() + [f"var<workgroup> g_v: array<R, {cw}>;",
                                                  f"var<workgroup> g_s: array<R, {SW * LANES}>;",
                                                  f"var<workgroup> g_vr: array<R, {SW}>;"]
    body = [f"@compute @workgroup_size({SW * LANES})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    let per = P[4] * P[5];",
            "    if (b >= P[0] * per) { return; }"]
    body += f"""    let n = P[1]; let k = P[2]; let i = P[3];
    let z = b / per; let cb = (b % per) / P[4]; let rbi = b % P[4];
    let a0 = z * n * n;
    let c0 = k + 1u + cb * {cw}u; let c1 = min(n, c0 + {cw}u);
    for (var e = lid; e < {cw}u; e += {SW * LANES}u) {{ g_v[e] = select(R(0), A[a0 + k * n + c0 + e], c0 + e < n); }}
    workgroupBarrier();
    let q = lid / {SW}u;
    let r = min(k + 1u + rbi * {SW}u + lid % {SW}u, n - 1u);
    var s = R(0);
{_sum("s", "c", "c1", "A[a0 + c * n + r] * g_v[c - c0]", "c0 + q", f"{LANES}u")}
{_tsymv_y()}
    g_s[lid] = s;
    workgroupBarrier();
    if (lid < {SW}u && k + 1u + rbi * {SW}u + lid < n) {{
        var t = R(0);
        for (var l = 0u; l < {LANES}u; l++) {{ t += g_s[l * {SW}u + lid]; }}
        AVP[(z * ((n + {cw - 1}u) / {cw}u) + cb) * n + r] = t;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def _tsymv_y() -> str:
    """tsymv's share of Y in chunk 0 (before the chunk's sums are added, g_s free: 4
    threads a column, every 4th row each)."""
    nb2 = 2 * NB
    per = SW * LANES // nb2
    return f"""    if (cb == 0u && i > 0u) {{
        let w0 = z * {nb2}u * n;
        let rs = k + 1u + rbi * {SW}u;
        if (lid < {SW}u) {{ g_vr[lid] = select(R(0), A[a0 + k * n + rs + lid], rs + lid < n); }}
        workgroupBarrier();
        let jj = lid / {per}u; let part = lid % {per}u;
        var y = R(0);
        if (jj % {NB}u < i) {{
            for (var e = part; e < {SW}u && rs + e < n; e += {per}u) {{ y += VW[w0 + jj * n + rs + e] * g_vr[e]; }}
        }}
        g_s[lid] = y;
        workgroupBarrier();
        if (lid < {nb2}u) {{
            var t = R(0);
            for (var c = 0u; c < {per}u; c++) {{ t += g_s[lid * {per}u + c]; }}
            Y[(z * ((n + {SW - 1}u) / {SW}u) + rbi) * {nb2}u + lid] = t;
        }}
        workgroupBarrier();
    }}"""


def tupd_record(t: str) -> Launch:
    return record(f"linalg_sytrd_tupd_{t}", [("A", "S", True), ("VW", "R", False)],
                  ("nz", "n", "k1", "nbu", "tiles"), 64)


def render_tupd(t: str) -> str:
    """P: nz, n, k1 (the first row and column past the panel), nbu (the panel's
    columns), tiles (TILE-tiles a side of the trailing matrix). A workgroup per
    (z, tile): A[r, c] -= sum_j V[r, j] W[c, j] + W[r, j] V[c, j] for its 32 x 32
    entries, 4 x 4 an invocation, both triangles (symv reads columns of either)."""
    nb2 = 2 * NB
    q = TILE // 8
    decls = tupd_record(t).declarations()
    loads, fmas, stores = [], [], []
    for a in range(q):
        loads.append(f"        let ra{a} = w0 + j * n + min(r0 + {a}u, n - 1u);"
                     f" let ca{a} = w0 + j * n + min(c0 + {a}u, n - 1u);")
        loads.append(f"        let vr{a} = VW[ra{a}]; let wr{a} = VW[ra{a} + wo];"
                     f" let vc{a} = VW[ca{a}]; let wc{a} = VW[ca{a} + wo];")
    for a in range(q):
        for c in range(q):
            fmas.append(f"        s{a}{c} += vr{a} * wc{c} + wr{a} * vc{c};")
            stores.append(f"    if (r0 + {a}u < n && c0 + {c}u < n) {{ A[a0 + (r0 + {a}u) * n + c0 + {c}u] -= s{a}{c}; }}")
    accs = "    " + " ".join(f"var s{a}{c} = R(0);" for a in range(q) for c in range(q))
    body = ["@compute @workgroup_size(64)",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    let per = P[4] * P[4];",
            "    if (b >= P[0] * per) { return; }",
            "    let n = P[1]; let k1 = P[2]; let nbu = P[3];",
            "    let z = b / per; let ti = (b % per) / P[4]; let tj = b % P[4];",
            f"    let a0 = z * n * n; let w0 = z * n * {nb2}u; let wo = {NB}u * n;",
            f"    let r0 = k1 + ti * {TILE}u + (lid / 8u) * {q}u; let c0 = k1 + tj * {TILE}u + (lid % 8u) * {q}u;",
            accs,
            "    for (var j = 0u; j < nbu; j++) {"]
    body += loads + fmas + ["    }"] + stores + ["}"]
    return _finish(decls, t, body)
