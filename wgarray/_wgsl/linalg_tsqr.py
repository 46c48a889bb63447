"""WGSL kernels of the Householder QR panel by a tree (host side: ``_kernels/linalg_blocked.py``,
``_tsqr_panel``).

A panel of the blocked Householder QR is M rows by at most 32 columns. One workgroup
factoring all M rows (``hh``) leaves the rest of the GPU idle and spends each column
in passes over global memory. Here the panel is factored as a tree (TSQR): blocks of
at most ``h`` rows side by side, a workgroup each, in workgroup memory; their R's
stacked and factored the same way, level by level, until one block is left. The
explicit Q of the tree is then built top-down, and LAPACK's reflectors are recovered
from it (Ballard, Demmel, Grigori, Jacobsen, Knight and Nguyen, "Reconstructing
Householder vectors from Tall-Skinny QR", 2015): with Q - S = L U, S the sign matrix
diag(d) on top, d_j = -sign of U's pivot before it is shifted, V = L, tau_j = -U_jj d_j
and R = diag(d) R_tree are dgeqrf's reflectors, taus and R, signs included.

  up       a workgroup per block of a level: Householder QR of the block in place
           (dlarfg's form: beta = -sign(alpha) ||x||, no reflection where nothing lies
           below alpha), tau per column, the block's R stacked into the next level
  down     a workgroup per block: the block's reflectors applied to its rows of the
           level above's Q (the identity at the root): that level's explicit Q
  rebuild  a workgroup per T rows of the panel: the LU of Q's top square with the
           signs chosen (each workgroup the same, redundantly), then its rows of V by
           substitution; the first also writes R and the taus
  fix      a workgroup per matrix: dgeqrf's "no reflection" where a column of V is
           zero below its diagonal, then the compact-WY factor T = -U D V1^-T

Off by default (``_kernels/linalg_blocked.QR_TREE_PANELS``): on an H200 these kernels
were slower than the one-workgroup ``hh`` kernel below order 4096, each column step
being latency-bound (docs/performance.md).

Blocks are the level's rows split evenly (sizes differ by at most one); with h at
least twice the panel's width, every block has at least as many rows as columns.
Loops per invocation stay far below lavapipe's 65535-iteration bound (h / 8 rows a
thread a column at 256 threads, the count lavapipe runs).
"""
from __future__ import annotations

from .._runtime.launch import Launch
from .linalg import _finish, record

T = 256  # the rebuild's threads, and the up and down kernels' fewest (32 column lanes times row groups)
U_LD = 33  # the rebuild's square in workgroup memory, padded
UD_STRIDE = 32 * 32 + 32  # U and d of a panel's rebuild, per matrix


def shared_bytes(h: int, ld: int, itemsize: int, threads: int = T) -> int:
    """Workgroup memory of the up and down kernels for blocks of ``h`` rows."""
    return h * ld * itemsize + (2 * threads + 32 + h) * itemsize


def up_record(t: str, h: int, ld: int, threads: int = T) -> Launch:
    return record(f"linalg_tsqr_up{h}_{ld}_{threads}_{t}", [("X", "S", True), ("TAU", "S", True), ("NX", "S", True)],
                  ("nbatch", "nblk", "M", "wv", "off", "sz", "rs", "offT", "szT", "nx"), threads)


def down_record(t: str, h: int, ld: int, threads: int = T) -> Launch:
    return record(f"linalg_tsqr_down{h}_{ld}_{threads}_{t}",
                  [("X", "S", False), ("TAU", "S", False), ("QP", "S", False), ("QO", "S", True)],
                  ("nbatch", "nblk", "M", "wv", "off", "sz", "rs", "offT", "szT", "root"), threads)


def rebuild_record(t: str) -> Launch:
    return record(f"linalg_tsqr_rebuild_{t}",
                  [("Q0", "S", False), ("RS", "S", False), ("W", "S", True), ("TAU", "S", True),
                   ("FL", "u32", True), ("VB", "S", True), ("UD", "S", True)],
                  ("nbatch", "nrb", "M", "wv", "offR", "szR", "rsR", "offW", "szW", "ldW", "offT", "szT"), T)


def _block_head(tw: int) -> str:
    """Workgroup b is block bi of matrix mat; the block's first row r0 and its rows
    (the level's M rows split into nblk blocks differing by at most one row)."""
    return f"""@compute @workgroup_size({tw})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let b = wid.x + wid.y * 65535u;
    if (b >= P[0]) {{ return; }}
    let nblk = P[1]; let M = P[2]; let wv = P[3];
    let mat = b / nblk; let bi = b % nblk;
    let q = M / nblk; let rem = M % nblk;
    let r0 = bi * q + min(bi, rem);
    let rows = q + select(0u, 1u, bi < rem);
    let rs = P[6];
    let x0 = P[4] + mat * P[5] + r0 * rs;
    let t0 = P[7] + mat * P[8] + bi * 32u;
    let lane = lid % 32u;
    let grp = lid / 32u;"""


def _reduce(var: str, op: str, tw: int) -> str:
    """Every invocation's ``var`` replaced by the workgroup's reduction of it (``op``
    of a and c, in the same order for all, so all get the same bits): the row groups'
    partials combined a lane each (tw / 32 of them), then each invocation combines the
    32 lanes' results."""
    return f"""        hr[lid] = {var};
        workgroupBarrier();
        if (lid < 32u) {{
            var a = hr[lid];
            for (var g = 1u; g < {tw // 32}u; g++) {{ let c = hr[lid + g * 32u]; a = {op}; }}
            hq[lid] = a;
        }}
        workgroupBarrier();
        {var} = hq[0];
        for (var g = 1u; g < 32u; g++) {{ let a = {var}; let c = hq[g]; {var} = {op}; }}"""


def _lane_sum(tw: int) -> str:
    """f = tau times the sum over the row groups of hd for this lane's column."""
    return f"""        hd[lid] = dot;
        workgroupBarrier();
        var s = hd[lane];
        for (var g = 1u; g < {tw // 32}u; g++) {{ s += hd[g * 32u + lane]; }}
        let f = tau * s;"""


def render_up(t: str, h: int, ld: int, tw: int = T) -> str:
    """Bindings X (the level's matrices, in place), TAU, NX (the next level's stack:
    nblk * wv rows of wv per matrix, contiguous). P: nbatch (matrices times nblk),
    nblk, M, wv, off, sz, rs (X's offset, matrix and row strides; columns contiguous),
    offT, szT (TAU: t0 = offT + mat * szT + bi * 32, column j at t0 + j), nx (1: write
    each block's R, zero below its diagonal, into NX; 0 at the root).

    Per column j of the block, in workgroup memory: the column scaled by its largest
    magnitude (first by 2^100 or 2^1000 where that is near the bottom of the range, as
    ``hh``), beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta and v = x / (alpha -
    beta); then the later columns' dot products with v, by lane (column) and row group,
    and their update."""
    pre, low = ("0x1p1000", "0x1p-1000") if t == "f64" else ("0x1p100", "0x1p-100")
    decls = up_record(t, h, ld, tw).declarations() + [
        f"var<workgroup> xs: array<R, {h * ld}>;", f"var<workgroup> hr: array<R, {tw}>;",
        "var<workgroup> hq: array<R, 32>;", f"var<workgroup> hd: array<R, {tw}>;"]
    body = [_block_head(tw), f"""    for (var e = lid; e < rows * 32u; e += {tw}u) {{
        let i = e / 32u; let c = e % 32u;
        if (c < wv) {{ xs[i * {ld}u + c] = X[x0 + i * rs + c]; }}
    }}
    workgroupBarrier();
    for (var j = 0u; j < wv; j++) {{
        var mx = R(0);
        for (var i = j + lid; i < rows; i += {tw}u) {{ mx = max(mx, r_abs(xs[i * {ld}u + j])); }}
{_reduce("mx", "max(a, c)", tw)}
        let pre = select(R(1), R({pre}), mx < R({low}));
        let mp = mx * pre;
        let sc = select(R(1) / mp, R(0), mx == R(0));
        var ss = R(0);
        for (var i = j + 1u + lid; i < rows; i += {tw}u) {{ let x = (xs[i * {ld}u + j] * pre) * sc; ss += x * x; }}
{_reduce("ss", "a + c", tw)}
        let al = (xs[j * {ld}u + j] * pre) * sc;
        let nr = r_sqrt(al * al + ss);
        var be = select(nr, -nr, al >= R(0));
        var tau = R(0); var inv = R(0);
        if (ss == R(0)) {{ be = al; }} else {{ let dd = al - be; tau = -dd / be; inv = R(1) / (dd * mp); }}
        workgroupBarrier();
        if (lid == 0u) {{ xs[j * {ld}u + j] = be * mx; TAU[t0 + j] = tau; }}
        for (var i = j + 1u + lid; i < rows; i += {tw}u) {{ xs[i * {ld}u + j] = (xs[i * {ld}u + j] * pre) * inv; }}
        workgroupBarrier();
        if (j + 1u < wv) {{
            let live = lane > j && lane < wv;
            var dot = R(0);
            if (live) {{
                if (grp == 0u) {{ dot = xs[j * {ld}u + lane]; }}
                for (var i = j + 1u + grp; i < rows; i += {tw // 32}u) {{ dot += xs[i * {ld}u + j] * xs[i * {ld}u + lane]; }}
            }}
{_lane_sum(tw)}
            if (live) {{
                if (grp == 0u) {{ xs[j * {ld}u + lane] -= f; }}
                for (var i = j + 1u + grp; i < rows; i += {tw // 32}u) {{ xs[i * {ld}u + lane] -= f * xs[i * {ld}u + j]; }}
            }}
            workgroupBarrier();
        }}
    }}
    for (var e = lid; e < rows * 32u; e += {tw}u) {{
        let i = e / 32u; let c = e % 32u;
        if (c < wv) {{ X[x0 + i * rs + c] = xs[i * {ld}u + c]; }}
    }}
    if (P[9] != 0u) {{
        let n0 = mat * nblk * wv * wv + bi * wv * wv;
        for (var e = lid; e < wv * wv; e += {tw}u) {{
            let i = e / wv; let c = e % wv;
            NX[n0 + e] = select(R(0), xs[i * {ld}u + c], c >= i);
        }}
    }}
}}"""]
    return _finish(decls, t, body)


def render_down(t: str, h: int, ld: int, tw: int = T) -> str:
    """Bindings X (the level's reflectors, as ``up`` left them), TAU, QP (the level
    above's explicit Q: nblk * wv rows of wv per matrix, contiguous; unread at the
    root), QO (this level's Q: M rows of wv per matrix, contiguous). P as ``up``'s,
    with root (1: the level above's Q is the identity) in place of nx.

    Each block's rows of Q are H_0 H_1 ... H_{wv-1} [C; 0], C its wv rows of QP: the
    reflectors applied last to first, v of each staged in workgroup memory."""
    decls = down_record(t, h, ld, tw).declarations() + [
        f"var<workgroup> qs: array<R, {h * ld}>;", f"var<workgroup> vc: array<R, {h}>;",
        f"var<workgroup> hd: array<R, {tw}>;"]
    body = [_block_head(tw), f"""    let p0 = mat * nblk * wv * wv + bi * wv * wv;
    for (var e = lid; e < rows * 32u; e += {tw}u) {{
        let i = e / 32u; let c = e % 32u;
        var v = R(0);
        if (i < wv && c < wv) {{
            if (P[9] != 0u) {{ v = select(R(0), R(1), i == c); }} else {{ v = QP[p0 + i * wv + c]; }}
        }}
        qs[i * {ld}u + c] = v;
    }}
    for (var jj = 0u; jj < wv; jj++) {{
        let j = wv - 1u - jj;
        let tau = TAU[t0 + j];
        for (var i = lid; i < rows; i += {tw}u) {{
            var v = R(0);
            if (i == j) {{ v = R(1); }} else if (i > j) {{ v = X[x0 + i * rs + j]; }}
            vc[i] = v;
        }}
        workgroupBarrier();
        let live = lane < wv;
        var dot = R(0);
        if (live) {{ for (var i = j + grp; i < rows; i += {tw // 32}u) {{ dot += vc[i] * qs[i * {ld}u + lane]; }} }}
{_lane_sum(tw)}
        if (live) {{ for (var i = j + grp; i < rows; i += {tw // 32}u) {{ qs[i * {ld}u + lane] -= f * vc[i]; }} }}
        workgroupBarrier();
    }}
    let o0 = mat * M * wv + r0 * wv;
    for (var e = lid; e < rows * 32u; e += {tw}u) {{
        let i = e / 32u; let c = e % 32u;
        if (c < wv) {{ QO[o0 + i * wv + c] = qs[i * {ld}u + c]; }}
    }}
}}"""]
    return _finish(decls, t, body)


def render_rebuild(t: str) -> str:
    """Bindings Q0 (the panel's explicit Q from the tree: M rows of wv per matrix,
    contiguous), RS (the root's R: offR + mat * szR + i * rsR + j), W (the work matrix:
    the panel's element (i, j) at offW + mat * szW + i * ldW + j), TAU (offT + mat *
    szT + j). P: nbatch (matrices times nrb), nrb (row blocks of T per matrix), M, wv,
    offR, szR, rsR, offW, szW, ldW, offT, szT. FL[b]: the mask of the columns in
    which this workgroup's rows of V have a nonzero entry below the diagonal. VB: V
    again, as the trailing update's matmuls take it (M rows of wv per matrix,
    contiguous, unit diagonal, zero above); UD: U and d (UD_STRIDE per matrix: U's
    32 x 32 row-major, then d), which ``fix`` turns into T.

    LU of Q0's top square with d_j = -1 where the pivot is >= 0, else 1, and the pivot
    shifted by -d_j (so |pivot| >= 1: no pivoting), in workgroup memory; then row i of
    the panel: below the square, V_i = Q0_i U^-1 by substitution; in it, L's row
    (below the diagonal) and d_i times the root's R (on and above), tau_i = -U_ii d_i.
    A column of V that is zero below the diagonal in every row is one that dgeqrf does
    not reflect (tau 0, R's row keeping its sign): ``fix`` makes it so."""
    u = U_LD
    decls = rebuild_record(t).declarations() + [f"var<workgroup> us: array<R, {32 * u}>;",
                                                 "var<workgroup> ds: array<R, 32>;", "var<workgroup> rd: array<R, 32>;",
                                                 "var<workgroup> fm: atomic<u32>;"]
    body = [f"""@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let b = wid.x + wid.y * 65535u;
    if (b >= P[0]) {{ return; }}
    let nrb = P[1]; let M = P[2]; let wv = P[3];
    let mat = b / nrb; let rb = b % nrb;
    let q0 = mat * M * wv;
    for (var e = lid; e < wv * wv; e += {T}u) {{ let i = e / wv; let c = e % wv; us[i * {u}u + c] = Q0[q0 + e]; }}
    if (lid == 0u) {{ atomicStore(&fm, 0u); }}  // workgroup memory is not zeroed on every device
    for (var j = lid; j < wv; j += {T}u) {{ rd[j] = RS[P[4] + mat * P[5] + j * P[6] + j]; }}
    workgroupBarrier();
    for (var j = 0u; j < wv; j++) {{
        let p = us[j * {u}u + j];
        // a zero pivot (alpha = 0 in dlarfg: a column of a permutation) takes the sign
        // that makes beta = d_j R_jj negative, as dlarfg's -sign(+0) does
        let pz = select(p, rd[j], p == R(0));
        let d = select(R(1), R(-1), pz >= R(0));
        let piv = p - d;
        workgroupBarrier();
        if (lid == 0u) {{ us[j * {u}u + j] = piv; ds[j] = d; }}
        for (var i = j + 1u + lid; i < wv; i += {T}u) {{ us[i * {u}u + j] = us[i * {u}u + j] / piv; }}
        workgroupBarrier();
        let r = wv - j - 1u;
        for (var e = lid; e < r * r; e += {T}u) {{
            let i = j + 1u + e / r; let c = j + 1u + e % r;
            us[i * {u}u + c] -= us[i * {u}u + j] * us[j * {u}u + c];
        }}
        workgroupBarrier();
    }}
    let row = rb * {T}u + lid;
    let w0 = P[7] + mat * P[8] + row * P[9];
    let v0 = q0 + row * wv;
    var nz = 0u;
    if (row < wv) {{
        let dr = ds[row];
        let r0 = P[4] + mat * P[5] + row * P[6];
        for (var c = 0u; c < wv; c++) {{
            let l = us[row * {u}u + c];
            if (c < row) {{ W[w0 + c] = l; nz |= select(0u, 1u << c, l != R(0)); }} else {{ W[w0 + c] = dr * RS[r0 + c]; }}
            VB[v0 + c] = select(select(R(0), R(1), c == row), l, c < row);
        }}
        TAU[P[10] + mat * P[11] + row] = -us[row * {u}u + row] * dr;
    }} else if (row < M) {{
        var x: array<R, 32>;
        for (var c = 0u; c < wv; c++) {{
            var s = Q0[v0 + c];
            for (var k = 0u; k < c; k++) {{ s -= x[k] * us[k * {u}u + c]; }}
            let v = s / us[c * {u}u + c];
            x[c] = v;
            W[w0 + c] = v;
            VB[v0 + c] = v;
            nz |= select(0u, 1u << c, v != R(0));
        }}
    }}
    if (rb == 0u) {{
        let u0 = mat * {UD_STRIDE}u;
        for (var e = lid; e < wv * wv; e += {T}u) {{ let i = e / wv; let c = e % wv; UD[u0 + i * 32u + c] = us[i * {u}u + c]; }}
        for (var j = lid; j < wv; j += {T}u) {{ UD[u0 + 1024u + j] = ds[j]; }}
    }}
    atomicOr(&fm, nz);
    workgroupBarrier();
    if (lid == 0u) {{ FL[b] = atomicLoad(&fm); }}
}}"""]
    return _finish(decls, t, body)


def fix_record(t: str) -> Launch:
    return record(f"linalg_tsqr_fix_{t}", [("FL", "u32", False), ("W", "S", True), ("TAU", "S", True),
                                           ("UD", "S", False), ("VB", "S", False), ("TM", "S", True)],
                  ("nbatch", "nrb", "M", "wv", "offW", "szW", "ldW", "offT", "szT"), 64)


def render_fix(t: str) -> str:
    """Bindings FL (``rebuild``'s masks, nrb per matrix), W, TAU, UD, VB (as rebuild
    wrote them), TM (T: wv x wv per matrix, contiguous). P: nbatch, nrb, M, wv, offW,
    szW, ldW, offT, szT. A workgroup per matrix.

    Where no row of V has a nonzero entry below the diagonal in column j, dgeqrf
    reflects nothing (x = 0 in dlarfg): tau_j = 0 and R's row j keeps alpha's sign, the
    opposite of the d_j that ``rebuild`` took (with nothing below the pivot, Q's pivot
    entry is +-1 and U_jj = 2 d_j's size; d_j's sign flipped makes U_jj 0). V's column
    is zero either way, and no other entry depends on d_j. Then the compact-WY factor
    T = -U D V1^-T (V1: V's unit lower top square; Ballard et al.), its inverse a column
    a thread by substitution: T's diagonal is the taus, and H_0 ... H_{wv-1} = I - V T
    V^T as dlarft's T (the same matrix, without V^T V)."""
    u = U_LD
    decls = fix_record(t).declarations() + [
        "var<workgroup> fm: atomic<u32>;", f"var<workgroup> us: array<R, {32 * u}>;",
        f"var<workgroup> li: array<R, {32 * u}>;", "var<workgroup> ds: array<R, 32>;"]
    body = [f"""@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let b = wid.x + wid.y * 65535u;
    if (b >= P[0]) {{ return; }}
    let nrb = P[1]; let M = P[2]; let wv = P[3];
    // workgroup memory is not zeroed on every device (lavapipe leaves the last kernel's)
    if (lid == 0u) {{ atomicStore(&fm, 0u); }}
    workgroupBarrier();
    for (var e = lid; e < nrb; e += 64u) {{ atomicOr(&fm, FL[b * nrb + e]); }}
    let u0 = b * {UD_STRIDE}u;
    let v0 = b * M * wv;
    for (var e = lid; e < wv * wv; e += 64u) {{
        let i = e / wv; let c = e % wv;
        us[i * {u}u + c] = UD[u0 + i * 32u + c];
        li[i * {u}u + c] = VB[v0 + i * wv + c];  // V1, then its inverse in place of its columns
    }}
    workgroupBarrier();
    let live = atomicLoad(&fm);
    let j = lid;
    if (j < wv) {{
        let flip = (live & (1u << j)) == 0u;
        ds[j] = select(UD[u0 + 1024u + j], -UD[u0 + 1024u + j], flip);
        if (flip) {{
            us[j * {u}u + j] = R(0);
            TAU[P[7] + b * P[8] + j] = R(0);
            let w0 = P[4] + b * P[5] + j * P[6];
            for (var c = j; c < wv; c++) {{ W[w0 + c] = -W[w0 + c]; }}
        }}
    }}
    workgroupBarrier();
    // column j of V1^-1 (unit lower) from the top down; its entries above j are 0
    var x: array<R, 32>;
    if (j < wv) {{
        x[j] = R(1);
        for (var i = j + 1u; i < wv; i++) {{
            var s = R(0);
            for (var k = j; k < i; k++) {{ s -= li[i * {u}u + k] * x[k]; }}
            x[i] = s;
        }}
    }}
    workgroupBarrier();
    if (j < wv) {{ for (var i = j; i < wv; i++) {{ li[i * {u}u + j] = x[i]; }} }}
    workgroupBarrier();
    for (var e = lid; e < wv * wv; e += 64u) {{
        let i = e / wv; let c = e % wv;
        var s = R(0);
        for (var k = i; k <= c; k++) {{ s -= us[i * {u}u + k] * ds[k] * li[c * {u}u + k]; }}
        TM[b * wv * wv + e] = select(s, R(0), i > c);
    }}
}}"""]
    return _finish(decls, t, body)
