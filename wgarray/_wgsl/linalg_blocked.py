"""WGSL kernels of the blocked factorizations (host side: ``wgarray/_kernels/linalg_blocked.py``).

The blocked algorithms spend their time in the tiled matmul; these kernels do the
narrow rest, each over strided blocks of a work matrix so that nothing is copied
around them:

  store   one thread per element: dst block = src block, dst -= src, dst = src below
          the diagonal (zero above), over a batch of blocks
  leaf    one workgroup per diagonal block of at most LEAF x LEAF: phase 0 Cholesky in
          place (zero above the diagonal), phase 1 the inverse of a lower-triangular
          block (unit diagonal or not) into D, a column per thread by substitution;
          phase 2 both, one after the other
  hh      one workgroup per matrix: Householder QR of a panel of columns (real), the
          column norms and the dot products with the panel's other columns reduced
          across the workgroup; columns a..c-1 per dispatch
  hh_t    one workgroup per matrix: the compact-WY factor T of a panel from V^T V
  panel   one workgroup per matrix: LU with partial pivoting of a panel of columns
          (parallel pivot search, whole-row swaps, rank-1 updates within the panel),
          columns a..c-1 per dispatch

Per-invocation loops are bounded by LEAF (leaf: about LEAF^3 / 192 + LEAF^2 / 2
iterations) or planned on the host (panel), under lavapipe's 65535-iteration bound.
"""
from __future__ import annotations

from .._runtime.launch import Launch
from .linalg import WG, _finish, _head, _tree, record
from .linalg_trd import reduce_to

LEAF = 64  # the leaf kernels' block size: one thread per column of a block
PANEL_WG = 256  # the panel kernels' smallest workgroup (every WebGPU device runs 256 invocations)


def store_record(t: str) -> Launch:
    return record(f"linalg_blk_store_{t}", [("SRC", "S", False), ("DST", "S", True)],
                  ("total", "rows", "cols", "srcOff", "srcZ", "srcR", "srcC", "dstOff", "dstZ", "dstR", "dstC",
                   "mode"))


def render_store(t: str) -> str:
    """Bindings SRC, DST. P: total, rows, cols, srcOff, srcZ, srcR, srcC, dstOff, dstZ,
    dstR, dstC, mode (0 copy, 1 subtract, 2 copy the lower triangle, zero above, 3
    subtract on and below the diagonal only, 4 the strict lower triangle with a unit
    diagonal, zero above (Householder vectors), 5 the upper triangle, zero below)."""
    decls = store_record(t).declarations()
    body = ["@compute @workgroup_size(64)",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            f"""    let e = (wid.x + wid.y * 65535u) * 64u + lid;
    if (e >= P[0]) {{ return; }}
    let rows = P[1]; let cols = P[2];
    let j = e % cols; let q = e / cols; let i = q % rows; let z = q / rows;
    let s = SRC[P[3] + z * P[4] + i * P[5] + j * P[6]];
    let d = P[7] + z * P[8] + i * P[9] + j * P[10];
    let mode = P[11];
    if (mode == 1u || (mode == 3u && j <= i)) {{ DST[d] = DST[d] - s; }}
    else if (mode == 3u) {{ return; }}
    else if ((mode == 2u && j > i) || (mode == 4u && j > i) || (mode == 5u && j < i)) {{ DST[d] = s_real(R(0)); }}
    else if (mode == 4u && j == i) {{ DST[d] = s_real(R(1)); }}
    else {{ DST[d] = s; }}
}}"""]
    return _finish(decls, t, body)


def leaf_record(t: str) -> Launch:
    return record(f"linalg_blk_leaf_{t}", [("W", "S", True), ("D", "S", True)],
                  ("nitems", "nblk", "kb", "ntot", "offW", "szW", "sblk", "rs", "cs", "phase", "unit", "offD"))


def render_leaf(t: str) -> str:
    """Bindings W (read_write), D. P: nitems, nblk, kb, ntot, offW, szW, sblk, rs, cs,
    phase (0 factor, 1 invert, 2 both), unit, offD. Item b is block b % nblk of matrix b / nblk: its element (i, j)
    is W[offW + (b / nblk) * szW + (b % nblk) * sblk + i * rs + j * cs], of size
    min(kb, ntot - (b % nblk) * kb). Phase 1 writes the inverse to
    D[offD + b * LEAF * LEAF + i * LEAF + j] (zero above the diagonal)."""
    decls = leaf_record(t).declarations()
    body = _head()
    body += f"""    let blk = b % P[1];
    let m = min(P[2], P[3] - blk * P[2]);
    let w0 = P[4] + (b / P[1]) * P[5] + blk * P[6];
    let rs = P[7]; let cs = P[8];
    if (P[9] != 1u) {{
    for (var k = 0u; k < m; k++) {{
        let kk = w0 + k * rs + k * cs;
        if (lid == 0u) {{ W[kk] = s_real(r_sqrt(s_re(W[kk]))); }}
        storageBarrier();
        let inv = R(1) / s_re(W[kk]);
        for (var i = k + 1u + lid; i < m; i += {WG}u) {{
            W[w0 + i * rs + k * cs] = s_scale(W[w0 + i * rs + k * cs], inv);
        }}
        storageBarrier();
        let r = m - k - 1u;
        for (var e = lid; e < r * r; e += {WG}u) {{
            let i = k + 1u + e / r; let j = k + 1u + e % r;
            if (j <= i) {{
                W[w0 + i * rs + j * cs] = W[w0 + i * rs + j * cs]
                    - s_mul(W[w0 + i * rs + k * cs], s_conj(W[w0 + j * rs + k * cs]));
            }}
        }}
        storageBarrier();
    }}
    for (var e = lid; e < m * m; e += {WG}u) {{
        let i = e / m; let j = e % m;
        if (j > i) {{ W[w0 + i * rs + j * cs] = s_real(R(0)); }}
    }}
    storageBarrier();
    }}
    if (P[9] != 0u) {{
    let d0 = P[11] + b * {LEAF * LEAF}u;
    let unit = P[10] == 1u;
    for (var j = lid; j < {LEAF}u; j += {WG}u) {{
        for (var i = 0u; i < {LEAF}u; i++) {{
            if (i >= m || j >= m || i < j) {{ D[d0 + i * {LEAF}u + j] = s_real(R(0)); continue; }}
            var s = select(s_real(R(0)), s_real(R(1)), i == j);
            for (var k = j; k < i; k++) {{
                s = s - s_mul(W[w0 + i * rs + k * cs], D[d0 + k * {LEAF}u + j]);
            }}
            if (!unit) {{ s = s_div(s, W[w0 + i * rs + i * cs]); }}
            D[d0 + i * {LEAF}u + j] = s;
        }}
    }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


CHOL_WG = 256  # the Cholesky panel kernel's threads: LEAF on the diagonal block, the rest on rows below


def chol_panel_record(t: str, threads: int = CHOL_WG, unrolled: bool = False) -> Launch:
    return record(f"linalg_blk_cholp{threads}_{t}" + ("_u" if unrolled else ""),
                  [("W", "S", False), ("L", "S", True)],
                  ("nitems", "ngroups", "n", "offW", "szW", "rs", "cs", "k0", "kend", "offL", "szL", "rsL"), threads)


def render_chol_panel(t: str, threads: int = CHOL_WG, unrolled: bool = False) -> str:
    """Cholesky of a panel of columns k0..kend-1 (at most LEAF) of each matrix of W,
    the diagonal block and every row below it, its entries in registers, into L.
    Bindings W (read), L (written). P: nitems (matrices x ngroups), ngroups (workgroups
    a matrix), n, offW, szW, rs, cs, k0, kend, offL, szL, rsL. Element (i, j) of matrix
    z is W[offW + z * szW + i * rs + j * cs]; the factor's entry (k0 + r, k0 + j) goes
    to L[offL + z * szL + r * rsL + j] (the diagonal block's on and below its diagonal
    only). W is only read: every workgroup reads the diagonal block from it.

    Threads 0..LEAF-1 of every workgroup hold the diagonal block's rows (as LEAF
    scalars, indexed by constants where ``unrolled``), the others ``threads`` - LEAF
    rows below it each: workgroup g the rows kend + g (threads - LEAF) on. Each
    workgroup factors the diagonal block itself, the same operations in the same order
    (the same bits; the first one writes it), so no workgroup waits for another: one
    dispatch for the panel where the leaf kernel, a product by its inverse and a copy
    took three. Column step c: the block's rows c.. put their entry c in workgroup
    memory, one barrier, then every row below c scales its entry c by 1 / sqrt of the
    pivot and subtracts its multiple of the column from its entries right of c; the
    column buffers alternate, so a step needs no second barrier. The products and their
    order are the leaf kernel's: the block's bits are the leaf's factor's, and the rows
    below are its column-by-column substitution (LAPACK's potf2 on the panel)."""
    T = threads
    decls = chol_panel_record(t, T, unrolled).declarations() + [f"var<workgroup> col: array<S, {2 * LEAF}>;"]

    def step(c: str, cc: str, js: str) -> str:
        # c: the column (a constant or the loop's), cc: entry c's index, js: the update
        return f"""        let q = ({c} % 2u) * {LEAF}u;
        if (lid < wp && lid >= {c}) {{ col[q + lid] = a[{cc}]; }}
        workgroupBarrier();
        let piv = r_sqrt(s_re(col[q + {c}]));
        let inv = R(1) / piv;
        if (below || (lid < wp && lid > {c})) {{
            let l = s_scale(a[{cc}], inv);
{js}
            a[{cc}] = l;
        }}
        if (lid == {c}) {{ a[{cc}] = s_real(piv); }}"""
    def looped(template: str) -> str:  # a ``_lines`` template's line for entry j
        return template.replace("{j}u", "j").replace("{j}", "j").replace("{{", "{").replace("}}", "}")

    def each(template: str) -> str:  # a line per entry where unrolled, else a loop
        if unrolled:
            return _lines(range(LEAF), template)
        return f"    for (var j = 0u; j < {LEAF}u; j++) {{\n{looped(template)}\n    }}"

    upd = "            a[{j}] = a[{j}] - s_mul(l, s_conj(s_scale(col[q + {j}u], inv)));"
    if unrolled:
        columns = "\n".join(f"    if (wp > {c}u) {{\n{step(f'{c}u', str(c), _lines(range(c + 1, LEAF), upd))}\n    }}"
                             for c in range(LEAF))
    else:
        loop = f"            for (var j = c + 1u; j < wp; j++) {{\n    {looped(upd)}\n            }}"
        columns = f"    for (var c = 0u; c < wp; c++) {{\n{step('c', 'c', loop)}\n    }}"

    body = _head()
    body[0] = f"@compute @workgroup_size({T})"
    body += f"""    let z = b / P[1]; let g = b % P[1];
    let n = P[2]; let rs = P[5]; let cs = P[6]; let k0 = P[7]; let kend = P[8];
    let wp = kend - k0;
    // the row this thread holds: the block's row k0 + lid, or a row below it
    var row = k0 + lid;
    if (lid >= {LEAF}u) {{ row = kend + g * {T - LEAF}u + lid - {LEAF}u; }}
    let below = lid >= {LEAF}u && row < n;
    let live = below || lid < wp;
    let base = P[3] + z * P[4] + select(0u, row, live) * rs + k0 * cs;
    var a: array<S, {LEAF}>;
{each("    a[{j}] = s_real(R(0));")}
    if (live) {{
{each("        if ({j}u < wp) {{ a[{j}] = W[base + {j}u * cs]; }}")}
    }}
{columns}
    let l0 = P[9] + z * P[10] + (row - k0) * P[11];
    if (below) {{
{each("        if ({j}u < wp) {{ L[l0 + {j}u] = a[{j}]; }}")}
    }} else if (lid < wp && g == 0u) {{
{each("        if ({j}u <= lid) {{ L[l0 + {j}u] = a[{j}]; }}")}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


P16, P20 = " " * 16, " " * 20  # indents of generated lines

LEAF_WG = 256  # the workgroup-memory leaf's threads: LEAF column lanes times LEAF_WG // LEAF row groups


def leaf_shared_record(t: str, ld: int = LEAF + 1, wg: int = LEAF_WG) -> Launch:
    return record(f"linalg_blk_leaf_sh{ld}_{t}" + (f"_w{wg}" if wg != LEAF_WG else ""),
                  [("W", "S", True), ("D", "S", True)],
                  ("nitems", "nblk", "kb", "ntot", "offW", "szW", "sblk", "rs", "cs", "phase", "unit", "offD"), wg)


def leaf_shared_bytes(itemsize: int, ld: int = LEAF + 1) -> int:
    """Workgroup memory of ``render_leaf_shared``: one LEAF x LEAF block, rows ``ld`` apart."""
    return LEAF * ld * itemsize


def render_leaf_shared(t: str, ld: int = LEAF + 1, wg: int = LEAF_WG) -> str:
    """``render_leaf``'s phases with the block in workgroup memory (bindings and
    parameters the same; for devices whose workgroup memory holds LEAF x ``ld``
    scalars), ``wg`` threads (a multiple of LEAF): LEAF lanes times wg / LEAF row
    groups. Each entry is updated by one thread a step whatever the group count, so
    the bits do not depend on it; what does is the loop each thread runs a step (a
    row group's rows, a dependent load and store each), which 1024 threads cut to 4
    rows on GPUs (256 threads: 16, ~100 us a 64-block on an H200).

    The block is loaded once, factored in place (phases 0 and 2), written back, then
    inverted (phases 1 and 2). Rows lie ``ld`` = LEAF + 1 elements apart where that
    fits: a column then spreads over all memory banks (rows LEAF apart put a column in
    one bank, and every column read of the substitution chains conflicted 32 ways).

    Both phases are right-looking, one barrier a step. Factor step k: every thread
    takes the pivot's reciprocal square root itself; lane j (a column) of row group g
    updates rows k+1+g, k+1+g+G, ... of column j > k from column k scaled on the fly,
    while column k itself is scaled after the barrier (no later step reads it). The
    products and their order are those of the scale-then-update form, so the factor's
    bits are. Inverse: L X = I by forward substitution for all columns at once, lane i
    (a row) of group g updating X[i, j] for j = g, g+G, ... <= k from the final row k of
    X; the last update of each entry divides by L[i, i]. Each entry's terms are
    subtracted in the order of column-by-column substitution (the residual L X - I at
    rounding level; LAPACK's trti2, which builds each column from the inverse's
    trailing block, gave solve 13x LAPACK's residual at condition 1e3). X's strictly
    lower part is kept transposed in the upper triangle of the block, which the factor
    leaves free; its diagonal is recomputed as 1 / L[k, k] where it is read."""
    G = wg // LEAF
    decls = leaf_shared_record(t, ld, wg).declarations() + [f"var<workgroup> L: array<S, {LEAF * ld}>;"]
    body = _head()
    body[0] = f"@compute @workgroup_size({wg})"
    body += f"""    let blk = b % P[1];
    let m = min(P[2], P[3] - blk * P[2]);
    let w0 = P[4] + (b / P[1]) * P[5] + blk * P[6];
    let rs = P[7]; let cs = P[8];
    let lane = lid % {LEAF}u;
    let grp = lid / {LEAF}u;
    for (var e = lid; e < m * m; e += {wg}u) {{
        let i = e / m; let j = e % m;
        L[i * {ld}u + j] = W[w0 + i * rs + j * cs];
    }}
    workgroupBarrier();
    if (P[9] != 1u) {{
    for (var k = 0u; k < m; k++) {{
        let piv = r_sqrt(s_re(L[k * {ld + 1}u]));
        let inv = R(1) / piv;
        let j = lane;
        if (j > k && j < m) {{
            let lj = s_conj(s_scale(L[j * {ld}u + k], inv));
            for (var i = k + 1u + grp; i < m; i += {G}u) {{
                if (j <= i) {{
                    L[i * {ld}u + j] = L[i * {ld}u + j] - s_mul(s_scale(L[i * {ld}u + k], inv), lj);
                }}
            }}
        }}
        workgroupBarrier();
        if (lid == 0u) {{ L[k * {ld + 1}u] = s_real(piv); }}
        for (var i = k + 1u + lid; i < m; i += {wg}u) {{
            L[i * {ld}u + k] = s_scale(L[i * {ld}u + k], inv);
        }}
    }}
    workgroupBarrier();
    for (var e = lid; e < m * m; e += {wg}u) {{
        let i = e / m; let j = e % m;
        var v = L[i * {ld}u + j];
        if (j > i) {{ v = s_real(R(0)); }}
        W[w0 + i * rs + j * cs] = v;
    }}
    workgroupBarrier();
    }}
    if (P[9] != 0u) {{
    let d0 = P[11] + b * {LEAF * LEAF}u;
    let unit = P[10] == 1u;
    for (var e = lid; e < m * m; e += {wg}u) {{
        let i = e / m; let j = e % m;
        if (i > j) {{ L[j * {ld}u + i] = s_real(R(0)); }}
    }}
    workgroupBarrier();
    for (var k = 0u; k < m; k++) {{
        var xkk = s_real(R(1));
        if (!unit) {{ xkk = s_div(xkk, L[k * {ld + 1}u]); }}
        let i = k + 1u + lane;
        if (i < m) {{
            let lik = L[i * {ld}u + k];
            let last = i == k + 1u && !unit;
            for (var j = grp; j <= k; j += {G}u) {{
                var xkj = xkk;
                if (j < k) {{ xkj = L[j * {ld}u + k]; }}
                var x = L[j * {ld}u + i] - s_mul(lik, xkj);
                if (last) {{ x = s_div(x, L[i * {ld + 1}u]); }}
                L[j * {ld}u + i] = x;
            }}
        }}
        workgroupBarrier();
    }}
    for (var e = lid; e < {LEAF * LEAF}u; e += {wg}u) {{
        let i = e / {LEAF}u; let c = e % {LEAF}u;
        var v = s_real(R(0));
        if (i < m && c < i) {{ v = L[c * {ld}u + i]; }}
        if (i < m && c == i) {{
            v = s_real(R(1));
            if (!unit) {{ v = s_div(v, L[i * {ld + 1}u]); }}
        }}
        D[d0 + e] = v;
    }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def panel_threads(device) -> int:
    """The LU panel kernel's workgroup size on ``device``: up to 1024 threads, a power
    of two (32 column lanes times row groups; at least PANEL_WG on every WebGPU device)."""
    lim = min(device.limits.get("max-compute-invocations-per-workgroup", PANEL_WG),
              device.limits.get("max-compute-workgroup-size-x", PANEL_WG), 1024)
    return max(PANEL_WG, 1 << (lim.bit_length() - 1))


def panel_record(t: str, threads: int = PANEL_WG) -> Launch:
    return record(f"linalg_blk_panel{threads}_{t}", [("W", "S", True), ("PIV", "u32", True), ("FL", "u32", True)],
                  ("nbatch", "n", "ld", "k0", "kend", "a", "c"), threads)


def render_panel(t: str, threads: int = PANEL_WG) -> str:
    """Bindings W (nbatch matrices of n rows by ld columns, contiguous), PIV (u32, n
    per matrix: the row swapped with row k at step k), FL (u32 per matrix: the parity
    of the swaps). P: nbatch, n, ld, k0, kend, a, c. Factors columns a..c-1 of the
    panel k0..kend-1 (at most 32 columns; rows a..n-1), each pivot's row swap over all
    ld columns.

    Thread lid is column lane lid % 32 (panel column k0 + lane) of row group lid / 32,
    so a warp's loads and stores are one row's consecutive panel entries (a thread
    walking its own row across the columns made each access its own memory sector).
    The update of step k reads each row's multiplier W[i, k] / pivot where it lies,
    unscaled: column k is divided by its pivot once, for all its rows, after the
    dispatch's last step (row swaps between move whole rows below every pivot alike),
    so no thread writes an entry that another lane of its row still reads. The
    quotients, products and their order are those of scaling first, so the bits are."""
    T = threads
    G = T // 32
    decls = panel_record(t, T).declarations() + [
             f"var<workgroup> pv_v: array<R, {T}>;", f"var<workgroup> pv_i: array<u32, {T}>;"]
    tree = _tree("pv_v", "pv_i[o] < n && (pv_i[lid] >= n || pv_v[o] > pv_v[lid] || "
                 "(pv_v[o] == pv_v[lid] && pv_i[o] < pv_i[lid]))",
                 "pv_v[lid] = pv_v[o]; pv_i[lid] = pv_i[o];", T)
    body = _head()
    body[0] = f"@compute @workgroup_size({T})"
    body += f"""    let n = P[1]; let ld = P[2]; let kend = P[4];
    let w0 = b * n * ld;
    let col = P[3] + lid % 32u;
    let grp = lid / 32u;
    if (P[5] == 0u && lid == 0u) {{ FL[b] = 0u; }}
    // the pivot search of each later column rides on the previous column's update pass
    var bi = n; var bv = R(-1);
    for (var i = P[5] + lid; i < n; i += {T}u) {{
        let a = s_abs2(W[w0 + i * ld + P[5]]);
        if (bi == n || a > bv) {{ bv = a; bi = i; }}
    }}
    for (var k = P[5]; k < P[6]; k++) {{
        pv_v[lid] = bv; pv_i[lid] = bi;
        workgroupBarrier();
{tree}
        let p = workgroupUniformLoad(&pv_i[0]);
        if (lid == 0u) {{ PIV[b * n + k] = p; }}
        if (p != k) {{
            if (lid == 0u) {{ FL[b] = FL[b] ^ 1u; }}
            for (var j = lid; j < ld; j += {T}u) {{
                let tmp = W[w0 + k * ld + j]; W[w0 + k * ld + j] = W[w0 + p * ld + j]; W[w0 + p * ld + j] = tmp;
            }}
        }}
        storageBarrier();
        let pv = W[w0 + k * ld + k];
        let nx = col == k + 1u && k + 1u < P[6];
        bi = n; bv = R(-1);
        if (col > k && col < kend) {{
            let ukc = W[w0 + k * ld + col];
            // ROWS_UNROLL of the group's rows an iteration, loads first (rows past n
            // read the first row again and store nothing)
            for (var i = k + 1u + grp; i < n; i += {ROWS_UNROLL * G}u) {{
{_rows("i", "n", G, P16)}
{_loads(P16, "let x{u} = W[r{u} + col];", "let l{u} = W[r{u} + k];")}
{_loads(P16, "let v{u} = x{u} - s_mul(s_div(l{u}, pv), ukc);")}
{_each(P16, "W[r{u} + col] = v{u};")}
                if (nx) {{
                    if (bi == n || s_abs2(v0) > bv) {{ bv = s_abs2(v0); bi = i; }}
{_each(P20, "if (s_abs2(v{u}) > bv) {{ bv = s_abs2(v{u}); bi = i + {u}u * " + str(G) + "u; }}", "")}
                }}
            }}
        }}
        storageBarrier();
    }}
    // the multipliers: each of columns a..c-1 below its pivot, divided by it
    if (col >= P[5] && col < P[6]) {{
        let pv = W[w0 + col * ld + col];
        for (var i = col + 1u + grp; i < n; i += {G}u) {{
            W[w0 + i * ld + col] = s_div(W[w0 + i * ld + col], pv);
        }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def panel_reg_record(t: str, threads: int, sg: int, unrolled: bool = False) -> Launch:
    return record(f"linalg_blk_panelr{threads}_{t}_sg{sg}" + ("_u" if unrolled else ""),
                  [("W", "S", True), ("PIV", "u32", True), ("FL", "u32", True)],
                  ("nbatch", "n", "ld", "k0", "kend"), threads)


def render_panel_reg(t: str, threads: int, sg: int, unrolled: bool = False) -> str:
    """``render_panel``'s factorization of a whole panel (columns k0..kend-1, at most
    32; bindings and P the same but for the column range a..c) for panels of at most
    ``threads`` rows below k0, its entries in registers: thread lid holds row slot
    k0 + lid as 32 scalars (indexed by constants only, so they stay registers). A
    column's pivot is a subgroup maximum (``sg`` lanes a subgroup, consecutive
    invocations) and one pass over the subgroups' winners; the pivot row goes through
    workgroup memory, where the row it displaces swaps with it, and every row below
    subtracts its multiple of it. Two barriers a column, where the global-memory
    kernel had a tree and two storage barriers and re-read its rows each column (NVIDIA
    H100: a 1024-row panel 225 us). Rows right and left of the panel take the swaps in
    order at the end, a column a thread. The pivot is the largest |a|^2, the lowest row
    on ties (a NaN below any number); the multipliers, products and their order are the
    global-memory kernel's. A zero pivot leaves its column's multipliers unscaled, as
    LAPACK's getf2 does (they are zero then, or NaN). ``unrolled``: the 32 column
    steps rendered one by one with their column a constant (no selects over the row;
    a longer shader)."""
    T = threads
    nsub = T // sg
    decls = panel_reg_record(t, T, sg, unrolled).declarations() + [
        "var<workgroup> prow: array<S, 32>;", "var<workgroup> xrow: array<S, 32>;",
        f"var<workgroup> sv: array<R, {nsub}>;", f"var<workgroup> si: array<u32, {nsub}>;",
        "var<workgroup> pivs: array<u32, 32>;"]
    rr = {"c64": "f32", "c128": "f64"}.get(t, t)
    js = range(32)
    if unrolled:  # column c a constant: its entry a register, no selects
        columns = "\n".join(f"    if (wp > {c}u) {{\n    let c = {c}u;\n{_reg_column(rr, sg, nsub, c)}\n    }}"
                             for c in range(32))
    else:
        columns = f"    for (var c = 0u; c < wp; c++) {{\n{_reg_column(rr, sg, nsub, None)}\n    }}"
    body = _head()
    body[0] = f"@compute @workgroup_size({T})"
    body += f"""    let n = P[1]; let ld = P[2]; let k0 = P[3]; let wp = P[4] - k0;
    let w0 = b * n * ld;
    let live = k0 + lid < n;
    let base = select(0u, w0 + (k0 + lid) * ld + k0, live);
    var a: array<S, 32>;
{_lines(js, "    if (live && {j}u < wp) {{ a[{j}] = W[base + {j}u]; }}")}
    var flips = 0u;
{columns}
    if (live) {{
{_lines(js, "        if ({j}u < wp) {{ W[base + {j}u] = a[{j}]; }}")}
    }}
    if (lid == 0u) {{
        for (var c = 0u; c < wp; c++) {{ PIV[b * n + k0 + c] = k0 + pivs[c]; }}
        FL[b] = select(FL[b], 0u, k0 == 0u) ^ flips;
    }}
    // the swaps of the rows' entries outside the panel, in order, a column a thread
    for (var col = lid; col < ld; col += {T}u) {{
        if (col >= k0 && col < k0 + wp) {{ continue; }}
        for (var c = 0u; c < wp; c++) {{
            let p = pivs[c];
            if (p != c) {{
                let i1 = w0 + (k0 + c) * ld + col;
                let i2 = w0 + (k0 + p) * ld + col;
                let x = W[i1]; W[i1] = W[i2]; W[i2] = x;
            }}
        }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def _reg_column(rr: str, sg: int, nsub: int, const: int | None) -> str:
    """One column step of ``render_panel_reg`` (``c`` in scope): the pivot search, the
    swap through workgroup memory, the update of the rows below. ``const``: c's value,
    known when rendering (the entry a[c] then read and written directly, the update
    only over the columns right of it), or None (selects over all 32)."""
    js = range(32)
    if const is None:
        entry = "var ac = a[0];\n" + _lines(range(1, 32), "        ac = select(ac, a[{j}], c == {j}u);")
        mult = "var l = a[0];\n" + _lines(range(1, 32), "            l = select(l, a[{j}], c == {j}u);")
        update = _lines(js, "            a[{j}] = select(a[{j}], select(a[{j}] - s_mul(l, prow[{j}]), l, c == {j}u), "
                            "{j}u >= c);")
    else:
        entry = f"let ac = a[{const}];"
        mult = f"var l = a[{const}];"
        update = _lines(range(const + 1, 32), "            a[{j}] = a[{j}] - s_mul(l, prow[{j}]);")
        update += f"\n            a[{const}] = l;"
    return f"""        {entry}
        var v = R(-1);
        if (live && lid >= c) {{
            v = s_abs2(ac);
            if ({rr}_isnan(v)) {{ v = R(-0.5); }}
        }}
        let m = subgroupMax(v);
        let mi = subgroupMin(select({TLU_NONE}u, lid, v == m));
        if (lid % {sg}u == 0u) {{ sv[lid / {sg}u] = m; si[lid / {sg}u] = mi; }}
        workgroupBarrier();
{_winners(nsub, sg)}
        if (lid == p) {{
{_lines(js, "            prow[{j}] = a[{j}];")}
        }}
        if (lid == c && p != c) {{
{_lines(js, "            xrow[{j}] = a[{j}];")}
        }}
        if (lid == 0u) {{ pivs[c] = p; }}
        workgroupBarrier();
        if (p != c) {{
            flips ^= 1u;
            if (lid == c) {{
{_lines(js, "                a[{j}] = prow[{j}];")}
            }} else if (lid == p) {{
{_lines(js, "                a[{j}] = xrow[{j}];")}
            }}
        }}
        if (live && lid > c) {{
            let pv = prow[c];
            {mult}
            if (s_abs2(pv) != R(0)) {{ l = s_div(l, pv); }}
{update}
        }}"""


def _lines(js, template: str) -> str:
    return "\n".join(template.format(j=j) for j in js)


# rows of a row group an iteration in the panel kernels' row loops (H200, the LU panel
# of 4096 rows: 482 us at 4, 522 at 8)
ROWS_UNROLL = 4


def _rows(i: str, n: str, G: int, pad: str) -> str:
    """Row offsets r0..r{U-1} of rows i, i + G, ..., i + (U-1) G of a row group (the
    loop steps U G) and ok1..ok{U-1}, whether those rows lie below ``n``; a row past
    ``n`` is row i again (read, never written)."""
    lines = [f"let r0 = w0 + {i} * ld;"]
    for u in range(1, ROWS_UNROLL):
        lines.append(f"let ok{u} = {i} + {u * G}u < {n}; let r{u} = select(r0, r0 + {u * G}u * ld, ok{u});")
    return "\n".join(pad + x for x in lines)


def _each(pad: str, fmt: str, first: str | None = None) -> str:
    """``fmt`` for rows u = 0..U-1 of an unrolled iteration ({u}: the row), guarded by
    ok{u} past the first (``first``: row 0's own line where it differs, "" for none)."""
    lines = [pad + (first if first is not None else fmt).format(u=0)] if first != "" else []
    lines += [pad + f"if (ok{u}) {{ " + fmt.format(u=u) + " }" for u in range(1, ROWS_UNROLL)]
    return "\n".join(lines)


def _loads(pad: str, *fmts: str) -> str:
    """Unguarded loads for rows u = 0..U-1 (rows past the end read row 0's)."""
    return "\n".join(pad + " ".join(f.format(u=u) for u in range(ROWS_UNROLL)) for f in fmts)


def _red(arr: str, op: str, width: int) -> str:
    """A ``width``-way tree reduction over workgroup array ``arr`` into arr[0]."""
    return f"""        workgroupBarrier();
        for (var st = {width // 2}u; st > 0u; st >>= 1u) {{
            if (lid < st) {{ {arr}[lid] = {op}; }}
            workgroupBarrier();
        }}"""


def hh_record(t: str, threads: int = PANEL_WG, sg: int = 0) -> Launch:
    return record(f"linalg_blk_hh{threads}_{t}" + (f"_sg{sg}" if sg else ""), [("W", "S", True), ("TAU", "S", True)],
                  ("nbatch", "m", "ld", "kk", "kend", "a", "c"), threads)


def _hh_reduce(var: str, op: str, T: int, sg: int) -> str:
    """Every invocation's ``var`` replaced by the workgroup's reduction of it (op 'max'
    of values >= 0, or 'add'): a tree in ``hr`` (log2(T) + 3 barriers), or with ``sg``
    the subgroup reduction of ``linalg_trd.reduce_to`` (two barriers; the next one's
    first protects ``hr``)."""
    if sg:
        return reduce_to(f"{var}_r", T, "hr", var, op, sg) + f"    {var} = {var}_r;"
    comb = "max(hr[lid], hr[lid + st])" if op == "max" else "hr[lid] + hr[lid + st]"
    return f"""        hr[lid] = {var};
{_red("hr", comb, T)}
        {var} = workgroupUniformLoad(&hr[0]);
        workgroupBarrier();"""


def render_hh(t: str, threads: int = PANEL_WG, sg: int = 0) -> str:
    """Bindings W (nbatch matrices of m rows by ld columns, contiguous), TAU (kk per
    matrix). P: nbatch, m, ld, kk, kend, a, c. Householder QR of columns a..c-1 of the
    panel ending at column kend (at most 32 columns; rows from the diagonal down): per
    column the reflector H = I - tau v v^T with v_j = 1 and the diagonal entry beta =
    -sign(alpha) ||x|| (LAPACK's dlarfg form, so Q and R are dgeqrf's, signs included;
    no reflection, tau = 0, where nothing lies below alpha), beta on the diagonal, v
    below it, tau in TAU; then H applied to the panel's later columns. The norm is
    scaled by max |x_i| (no overflow or underflow of the squares).

    H is applied to all later columns at once: thread lid is column lane lid % 32 of
    row group lid / 32, so a warp reads one row's consecutive panel entries; each
    thread sums v_i W[i, c] over its group's rows, the groups' sums are added by a
    tree per lane, and the update W[i, c] -= tau (v^T W[:, c]) v_i runs in the same
    layout: five passes a column, where a thread per row made two passes and a
    reduction per four later columns, each access its own memory sector. With ``sg``
    the two norms' reductions are subgroup reductions (two barriers each, where the
    tree takes log2(threads) + 3)."""
    T = threads
    G = T // 32
    pre, low = ("0x1p1000", "0x1p-1000") if t in ("f64", "c128") else ("0x1p100", "0x1p-100")
    decls = hh_record(t, T, sg).declarations() + [
             f"var<workgroup> hr: array<R, {T}>;", f"var<workgroup> hd: array<R, {T}>;"]
    body = _head()
    body[0] = f"@compute @workgroup_size({T})"
    body += f"""    let m = P[1]; let ld = P[2]; let kend = P[4];
    let w0 = b * m * ld;
    let lane = lid % 32u;
    let grp = lid / 32u;
    let col = kend - min(kend, 32u) + lane;
    for (var j = P[5]; j < P[6]; j++) {{
        var mx = R(0);
        for (var i = j + lid; i < m; i += {T}u) {{ mx = max(mx, r_abs(W[w0 + i * ld + j])); }}
{_hh_reduce("mx", "max", T, sg)}
        // a column whose largest entry is near the bottom of the range is first scaled up
        // by a power of two (exact): 1 / mx overflowed for a subnormal mx (float32 qr of
        // a matrix scaled by 2^-120: NaN from column 60 on); pre is 1 elsewhere
        let pre = select(R(1), R({pre}), mx < R({low}));
        let mp = mx * pre;
        let sc = select(R(1) / mp, R(0), mx == R(0));
        var ss = R(0);
        for (var i = j + 1u + lid; i < m; i += {T}u) {{ let x = (W[w0 + i * ld + j] * pre) * sc; ss += x * x; }}
{_hh_reduce("ss", "add", T, sg)}
        let al = (W[w0 + j * ld + j] * pre) * sc;
        let nr = r_sqrt(al * al + ss);
        // beta of the opposite sign to alpha: alpha - beta = alpha + sign(alpha) ||x||
        // never cancels
        var be = select(nr, -nr, al >= R(0));
        var tau = R(0); var inv = R(0);
        if (ss == R(0)) {{ be = al; }} else {{ let dd = al - be; tau = -dd / be; inv = R(1) / (dd * mp); }}
        workgroupBarrier();
        if (lid == 0u) {{ W[w0 + j * ld + j] = be * mx; TAU[b * P[3] + j] = tau; }}
        for (var i = j + 1u + lid; i < m; i += {T}u) {{ W[w0 + i * ld + j] = (W[w0 + i * ld + j] * pre) * inv; }}
        storageBarrier();
        if (j + 1u < kend) {{
            let live = col > j && col < kend;
            var dot = R(0);
            if (live) {{
                if (grp == 0u) {{ dot = W[w0 + j * ld + col]; }}
                for (var i = j + 1u + grp; i < m; i += {ROWS_UNROLL * G}u) {{
{_rows("i", "m", G, P20)}
{_loads(P20, "let v{u} = W[r{u} + j];", "let x{u} = W[r{u} + col];")}
{_each(P20, "dot += v{u} * x{u};")}
                }}
            }}
            hd[lid] = dot;
            workgroupBarrier();
            for (var st = {G // 2}u; st > 0u; st >>= 1u) {{
                if (grp < st) {{ hd[lid] = hd[lid] + hd[lid + st * 32u]; }}
                workgroupBarrier();
            }}
            let f = tau * hd[lane];
            workgroupBarrier();
            if (live) {{
                for (var i = j + grp; i < m; i += {ROWS_UNROLL * G}u) {{
{_rows("i", "m", G, P20)}
{_loads(P20, "let v{u} = W[r{u} + j];", "let x{u} = W[r{u} + col];")}
{_each(P20, "W[r{u} + col] = x{u} - f * v{u};", "W[r0 + col] = x0 - f * select(v0, R(1), i == j);")}
                }}
            }}
            storageBarrier();
        }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def hh_t_record(t: str) -> Launch:
    return record(f"linalg_blk_hh_t_{t}", [("G", "S", False), ("TAU", "S", False), ("TM", "S", True)],
                  ("nbatch", "w", "kk", "k0", "offG", "szG", "rsG", "csG"))


def render_hh_t(t: str) -> str:
    """Bindings G (V^T V of each panel, strided), TAU, TM (w x w per matrix,
    contiguous). P: nbatch, w, kk, k0, offG, szG, rsG, csG. The upper-triangular T
    with H_0 ... H_{w-1} = I - V T V^T: T[j, j] = tau_j, T[:j, :j] G[:j, j] times
    -tau_j for T[:j, j], a column at a time, a row per thread; G and T in workgroup
    memory (w is at most 32), so each column's chain of dependent reads stays there."""
    W_MAX = 32
    decls = hh_t_record(t).declarations() + [f"var<workgroup> gs: array<R, {W_MAX * W_MAX}>;",
                                              f"var<workgroup> ts: array<R, {W_MAX * W_MAX}>;"]
    body = _head()
    body += f"""    let w = P[1];
    let t0 = b * w * w; let g0 = P[4] + b * P[5];
    for (var e = lid; e < w * w; e += {WG}u) {{
        let i = e / w; let j = e % w;
        gs[e] = G[g0 + i * P[6] + j * P[7]];
        ts[e] = R(0);
    }}
    workgroupBarrier();
    for (var j = 0u; j < w; j++) {{
        let tj = TAU[b * P[2] + P[3] + j];
        for (var i = lid; i < j; i += {WG}u) {{
            var s = R(0);
            for (var l = i; l < j; l++) {{ s += ts[i * w + l] * gs[l * w + j]; }}
            ts[i * w + j] = -tj * s;
        }}
        if (lid == 0u) {{ ts[j * w + j] = tj; }}
        workgroupBarrier();
    }}
    for (var e = lid; e < w * w; e += {WG}u) {{ TM[t0 + e] = ts[e]; }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------- LU panels by tournament pivoting
#
# The panel kernel above searches each column's pivot over all the panel's rows in one
# workgroup: a chain of 32 dependent passes over an (n - k) x 32 panel, latency-bound
# once the panel outgrows one multiprocessor (H200: 486 us a panel of 4096 rows, 77% of
# solve at 4096). A tall panel instead takes its pivot rows from a tournament (Grigori,
# Demmel and Xiang's CALU): blocks of rows each pick their 32 pivot candidates by
# partial pivoting in workgroup memory, side by side; sets of candidates are merged the
# same way until one set is left, whose partial-pivoting order gives the panel's 32
# pivots. The rows are then swapped into place over the whole row, the 32 x 32 top
# block is factored without further pivoting, and the rows below divide by its U, each
# row on its own: every step but the merges' last runs across the whole device.

TLU_NONE = 0xFFFFFFFF  # an empty candidate slot


def tlu_rows(itemsize: int, device) -> int:
    """Rows a tournament workgroup factors (a power of two, at least 64: two candidate
    sets of 32): as many as its workgroup memory holds at 32 columns, up to 256."""
    room = device.limits.get("max-compute-workgroup-storage-size", 16384)
    rows = 256
    while rows > 64 and rows * (33 * itemsize + 8 + itemsize) > room:
        rows //= 2
    return rows


def _tlu_search(rows: int, sg: int) -> str:
    """The pick's pivot search: ``v`` (each thread's candidate value) to ``p``, the
    slot of the largest, the lowest slot on ties."""
    if not sg:
        tree = _tree("tv", "tv[o] > tv[lid] || (tv[o] == tv[lid] && ti[o] < ti[lid])",
                     "tv[lid] = tv[o]; ti[lid] = ti[o];", rows)
        return f"""        tv[lid] = v; ti[lid] = lid;
        workgroupBarrier();
{tree}
        let p = workgroupUniformLoad(&ti[0]);"""
    return f"""        let m = subgroupMax(v);
        let mi = subgroupMin(select({TLU_NONE}u, lid, v == m));
        if (lid % {sg}u == 0u) {{ sv[lid / {sg}u] = m; si[lid / {sg}u] = mi; }}
        workgroupBarrier();
{_winners(rows // sg, sg)}"""


def _winners(nsub: int, sg: int) -> str:
    """``p``, the slot of the best of the ``nsub`` subgroup winners in sv/si (the
    largest value, the lowest slot on ties), by every subgroup alike: lane q takes
    winners q, q + sg, ..., then a subgroup maximum and minimum (a loop over all the
    winners in every thread cost ~3 us a column of a 1024-row LU panel on an H100)."""
    return f"""        var bv = R(-3); var p = {TLU_NONE}u;
        for (var q = lid % {sg}u; q < {nsub}u; q += {sg}u) {{
            if (sv[q] > bv || (sv[q] == bv && si[q] < p)) {{ bv = sv[q]; p = si[q]; }}
        }}
        let best = subgroupMax(bv);
        p = subgroupMin(select({TLU_NONE}u, p, bv == best));"""


def tlu_pick_record(t: str, rows: int, sg: int = 0) -> Launch:
    return record(f"linalg_blk_tlu_pick{rows}_{t}" + (f"_sg{sg}" if sg else ""),
                  [("W", "S", False), ("CAND", "u32", True)],
                  ("nitems", "ngroups", "n", "ld", "k0", "wp", "mode", "nin", "inOff", "outOff", "cstride"), rows)


def render_tlu_pick(t: str, rows: int, sg: int = 0) -> str:
    """Bindings W (nbatch matrices of n rows by ld columns, contiguous; read only), CAND
    (u32: per matrix ``cstride`` words of candidate sets, 32 words a set, TLU_NONE in
    empty slots). P: nitems (nbatch * ngroups), ngroups, n, ld, k0, wp (the panel's
    width, <= 32), mode, nin, inOff, outOff, cstride.

    Workgroup g of matrix b takes ``rows`` rows of the panel (columns k0 .. k0+wp-1):
    mode 0, rows k0 + g * rows + lid (those below n); mode 1, the rows named by
    candidate slots g * rows + lid of the nin slots at inOff (the sets g * rows / 32 ..).
    It runs partial pivoting on their panel entries in workgroup memory (thread lid
    owns a row; the pivot is the largest |a|, the lower slot on ties) and writes the
    rows it chose, in order, as set g at outOff (slots past the rows it had: TLU_NONE).
    Only the choice is kept: W is not written. A NaN entry counts as less than any
    number, more than an empty slot.

    With ``sg`` (the device's subgroup size, subgroups of consecutive invocations)
    each column's pivot search is a subgroup maximum, then a pass over the subgroups'
    winners in workgroup memory: 3 barriers a column instead of the tree's log2(rows)
    + 4 (a barrier costs a few hundred ns on an H200, and the tree's made the pick of a
    256-row block 81 us). Both pick the same rows."""
    R_ = rows
    rr = {"c64": "f32", "c128": "f64"}.get(t, t)
    decls = tlu_pick_record(t, R_, sg).declarations() + [
        f"var<workgroup> A: array<S, {R_ * 33}>;",  # rows 33 apart: a column spans the banks
        f"var<workgroup> ids: array<u32, {R_}>;",
        ]
    if sg:
        decls += [f"var<workgroup> sv: array<R, {R_ // sg}>;", f"var<workgroup> si: array<u32, {R_ // sg}>;"]
    else:
        decls += [f"var<workgroup> tv: array<R, {R_}>;", f"var<workgroup> ti: array<u32, {R_}>;"]
    body = _head()
    body[0] = f"@compute @workgroup_size({R_})"
    body += f"""    let grp = b % P[1];
    let mat = b / P[1];
    let n = P[2]; let ld = P[3]; let k0 = P[4]; let wp = P[5];
    let cbase = mat * P[10];
    var row = {TLU_NONE}u;
    if (P[6] == 0u) {{
        let r = k0 + grp * {R_}u + lid;
        if (r < n) {{ row = r; }}
    }} else {{
        let s = grp * {R_}u + lid;
        if (s < P[7]) {{ row = CAND[cbase + P[8] + s]; }}
    }}
    ids[lid] = row;
    workgroupBarrier();
    let w0 = mat * n * ld + k0;
    // a row's 32 entries by 32 neighbouring threads
    for (var e = lid; e < {R_ * 32}u; e += {R_}u) {{
        let i = e / 32u; let j = e % 32u;
        let r = ids[i];
        var v = s_real(R(0));
        if (r != {TLU_NONE}u && j < wp) {{ v = W[w0 + r * ld + j]; }}
        A[i * 33u + j] = v;
    }}
    workgroupBarrier();
    for (var c = 0u; c < wp; c++) {{
        // candidates: the rows not yet chosen (slots c..), empty slots never
        // (chosen slots below every other, so that an exhausted set picks an empty slot)
        var v = select(R(-1), R(-2), lid < c);
        if (lid >= c && ids[lid] != {TLU_NONE}u) {{
            v = s_abs2(A[lid * 33u + c]);
            if ({rr}_isnan(v)) {{ v = R(-0.5); }}
        }}
{_tlu_search(R_, sg)}
        if (p != c) {{
            if (lid < 32u) {{
                let x = A[c * 33u + lid]; A[c * 33u + lid] = A[p * 33u + lid]; A[p * 33u + lid] = x;
            }}
            if (lid == 0u) {{ let x = ids[c]; ids[c] = ids[p]; ids[p] = x; }}
        }}
        workgroupBarrier();
        let pv = A[c * 34u];
        if (lid > c && ids[lid] != {TLU_NONE}u && s_abs2(pv) != R(0)) {{
            let l = s_div(A[lid * 33u + c], pv);
            for (var j = c + 1u; j < wp; j++) {{
                A[lid * 33u + j] = A[lid * 33u + j] - s_mul(l, A[c * 33u + j]);
            }}
        }}
        workgroupBarrier();
    }}
    if (lid < 32u) {{
        var out = {TLU_NONE}u;
        if (lid < wp) {{ out = ids[lid]; }}
        CAND[cbase + P[9] + grp * 32u + lid] = out;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def tlu_swap_record(t: str) -> Launch:
    return record(f"linalg_blk_tlu_swap_{t}", [("W", "S", True), ("CAND", "u32", False), ("PIV", "u32", True),
                                               ("FL", "u32", True)],
                  ("nitems", "ngroups", "n", "ld", "k0", "wp", "winOff", "cstride"), 256)


def render_tlu_swap(t: str) -> str:
    """Bindings W, CAND (read), PIV, FL. P: nitems (nbatch * ngroups), ngroups, n, ld,
    k0, wp, winOff (the winning set's slot), cstride. The winners' row swaps, as
    partial pivoting records them: step i swaps row k0 + i with the row where winner i
    is by then, PIV[k0 + i] that row, FL the parity of the swaps (reset at k0 = 0).

    Each workgroup works the steps out in workgroup memory (a barrier or two a step),
    following the rows they touch (at most 64) to where each one's content comes
    from; then thread j of group g moves column g * 256 + j: every touched entry read,
    then every one written (a swap a step, each a dependent pair of global accesses,
    took 50 us a panel on an H200). Group 0 records PIV and FL."""
    decls = tlu_swap_record(t).declarations() + [
        "var<workgroup> pos: array<u32, 32>;", "var<workgroup> sw: array<u32, 32>;",
        "var<workgroup> lrow: array<u32, 64>;", "var<workgroup> lsrc: array<u32, 64>;",
        "var<workgroup> cnt: u32;", "var<workgroup> hit: u32;"]
    body = _head()
    body[0] = "@compute @workgroup_size(256)"
    body += f"""    let grp = b % P[1];
    let mat = b / P[1];
    let n = P[2]; let ld = P[3]; let k0 = P[4]; let wp = P[5];
    if (lid < wp) {{
        pos[lid] = CAND[mat * P[7] + P[6] + lid];
        lrow[lid] = k0 + lid; lsrc[lid] = k0 + lid;
    }}
    if (lid == 0u) {{ cnt = wp; }}
    workgroupBarrier();
    for (var i = 0u; i < wp; i++) {{
        let p = workgroupUniformLoad(&pos[i]);
        if (lid == 0u) {{ sw[i] = p; hit = {TLU_NONE}u; }}
        workgroupBarrier();
        if (p == k0 + i) {{ continue; }}
        // the row at k0 + i moves to p: a later winner there follows it
        if (lid > i && lid < wp && pos[lid] == k0 + i) {{ pos[lid] = p; }}
        if (lid < cnt && lrow[lid] == p) {{ hit = lid; }}
        workgroupBarrier();
        if (lid == 0u) {{
            var h = hit;
            if (h == {TLU_NONE}u) {{ h = cnt; lrow[h] = p; lsrc[h] = p; cnt = h + 1u; }}
            let x = lsrc[i]; lsrc[i] = lsrc[h]; lsrc[h] = x;
        }}
        workgroupBarrier();
    }}
    if (grp == 0u && lid == 0u) {{
        var flips = 0u;
        for (var i = 0u; i < wp; i++) {{
            PIV[mat * n + k0 + i] = sw[i];
            if (sw[i] != k0 + i) {{ flips ^= 1u; }}
        }}
        if (k0 == 0u) {{ FL[mat] = flips; }} else {{ FL[mat] = FL[mat] ^ flips; }}
    }}
    let m = workgroupUniformLoad(&cnt);
    let j = grp * 256u + lid;
    if (j >= ld) {{ return; }}
    let w0 = mat * n * ld + j;
    var v: array<S, 64>;
    for (var q = 0u; q < m; q++) {{ v[q] = W[w0 + lsrc[q] * ld]; }}
    for (var q = 0u; q < m; q++) {{ W[w0 + lrow[q] * ld] = v[q]; }}
}}""".split("\n")
    return _finish(decls, t, body)


def tlu_l21_record(t: str) -> Launch:
    return record(f"linalg_blk_tlu_l21_{t}", [("W", "S", True)],
                  ("nitems", "ngroups", "n", "ld", "k0", "wp", "top"), 256)


def render_tlu_l21(t: str) -> str:
    """Binding W. P: nitems (nbatch * ngroups), ngroups, n, ld, k0, wp, top. With top
    1 (one group a matrix) the panel's top wp x wp block (rows k0.., the pivots
    swapped in) is factored without pivoting in workgroup memory and its L \\ U
    written back; with top 0 (the next dispatch) every group loads that U and thread
    j of group g takes row k0 + wp + g * 256 + j, replacing its panel entries a by
    the multipliers l solving l U = a, in registers, in the order of the
    eliminations that partial pivoting would run (each l_c = (a_c - sum of l_m u_mc
    over m < c) / u_cc)."""
    decls = tlu_l21_record(t).declarations() + ["var<workgroup> U: array<S, 1056>;"]  # 32 x 33
    # (top 1 runs first: the rows below read the L \\ U it wrote)
    body = _head()
    body[0] = "@compute @workgroup_size(256)"
    body += f"""    let grp = b % P[1];
    let mat = b / P[1];
    let n = P[2]; let ld = P[3]; let k0 = P[4]; let wp = P[5];
    let w0 = mat * n * ld + k0;
    for (var e = lid; e < wp * wp; e += 256u) {{
        let i = e / wp; let j = e % wp;
        U[i * 33u + j] = W[w0 + (k0 + i) * ld + j];
    }}
    workgroupBarrier();
    for (var c = 0u; c < wp && P[6] == 1u; c++) {{
        let r = wp - c - 1u;
        let pv = U[c * 34u];
        for (var e = lid; e < r * r; e += 256u) {{
            let i = c + 1u + e / r; let j = c + 1u + e % r;
            U[i * 33u + j] = U[i * 33u + j] - s_mul(s_div(U[i * 33u + c], pv), U[c * 33u + j]);
        }}
        workgroupBarrier();
        for (var i = c + 1u + lid; i < wp; i += 256u) {{ U[i * 33u + c] = s_div(U[i * 33u + c], pv); }}
        workgroupBarrier();
    }}
    if (P[6] == 1u) {{
        for (var e = lid; e < wp * wp; e += 256u) {{
            let i = e / wp; let j = e % wp;
            W[w0 + (k0 + i) * ld + j] = U[i * 33u + j];
        }}
        return;
    }}
    let row = k0 + wp + grp * 256u + lid;
    if (row >= n) {{ return; }}
    let r0 = w0 + row * ld;
    var x: array<S, 32>;
    for (var c = 0u; c < wp; c++) {{ x[c] = W[r0 + c]; }}
    for (var c = 0u; c < wp; c++) {{
        let l = s_div(x[c], U[c * 34u]);
        x[c] = l;
        for (var j = c + 1u; j < wp; j++) {{ x[j] = x[j] - s_mul(l, U[c * 33u + j]); }}
    }}
    for (var c = 0u; c < wp; c++) {{ W[r0 + c] = x[c]; }}
}}""".split("\n")
    return _finish(decls, t, body)
