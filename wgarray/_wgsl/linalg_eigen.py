"""WGSL kernels of the symmetric/Hermitian eigensolver and the Jacobi SVD
(host side: ``wgarray/_kernels/linalg_eigen.py``).

  jeig    two-sided Jacobi on a batch of small Hermitian blocks (one workgroup a
          block, round-robin pairs rotated in parallel, the block in workgroup
          memory where it fits): eigenvalues on the
          diagonal of the work copy W, eigenvectors accumulated in U. It solves a
          whole matrix (eigh, n <= 256) or, in the blocked solver, each 2b x 2b
          pair subproblem of a round (a diagonal block pair of A for eigh; the Gram
          matrix of a pair of column blocks for the one-sided SVD).
  permute a strided copy with a block permutation of the columns (and rows): the
          blocked solver's loads (zero padding, the lower triangle mirrored, the
          identity) and its move of the blocks into the next round's pair order.
  order   eigen/singular values sorted (ranks: NaN last ascending, first descending),
          then the matching columns of the vectors gathered (optionally divided by
          the values: U = A V / sigma).
  ojac    one-sided Jacobi on whole matrices, a workgroup each (the SVD of n <= 256).
  refine_eigh, refine_svd
          the elementwise middle of the refinement step (values, gaps, corrections)
          between its matrix products.
  post_eigh, post_svd
          the whole refinement step and the sort of small real matrices in one
          workgroup: with jeig / ojac, two dispatches for eigh / svd of n <= 64.
"""
from __future__ import annotations

from .._runtime.launch import Launch
from .linalg import _finish, record

GATHER_WG = 256

# P words of the permute kernel before the block permutation table
PERMUTE_HEAD = 13

# ojac: a sweep whose couplings all stayed below OJAC_ACTIVE x its rotation tolerance
# ends the solve (``render_ojac`` says why)
OJAC_ACTIVE = 2


def _eps(r: str) -> tuple[str, str, str]:
    """(machine epsilon, smallest normal, |zeta| past which t = 1 / (2 zeta))."""
    if r == "f64":
        return "R(2.220446049250313e-16)", "R(2.2250738585072014e-308)", "R(1e150)"
    return "R(1.1920929e-07)", "R(1.1754944e-38)", "R(1e18)"


def jeig_record(t: str, cap: int = 64, wmem: bool = False, umem: bool = False, wg: int = 256,
                pow2: bool = False) -> Launch:
    return record(f"linalg_eigen_jeig_{t}_{cap}" + ("_p2" if pow2 else ""),
                  [("SRC", "S", False), ("W", "S", True), ("U", "S", True), ("FL", "u32", True), ("TH", "R", False),
                   ("GF", "u32", True)],
                  ("nblocks", "ns", "off", "nper", "s_mat", "s_blk", "s_row", "s_col", "first", "r0", "r1", "tolmul",
                   "use_th", "lower", "gf_index", "last"), wg)


def render_jeig(t: str, cap: int = 64, wmem: bool = False, umem: bool = False, wg: int = 256,
                pow2: bool = False) -> str:
    """Bindings SRC (read), W, U (blocks x ns x ns), FL (two u32 per block: done, rotated
    in the current sweep), TH (R per matrix: the magnitude an off-diagonal entry must
    pass to be rotated), GF (u32 flags, one per outer sweep); P: nblocks, ns, src
    offset, blocks per matrix (nper), src strides (matrix, block, row, col), first,
    global rounds r0..r1, flag tolerance multiplier, use TH, read the lower triangle,
    GF index, last (write U with unit columns).

    ns <= cap; ``wg`` threads. With ``wmem`` (``umem``) the block's W (U) lives in workgroup memory for
    the whole dispatch (loaded at the start, written back at the end): the rounds
    touch every entry several times, and storage latency behind each barrier is what
    made the kernel slow. Without, it works on the storage buffers in place.
    With ``pow2`` a round's items are numbered by pair slots of the capacity (cap / 2, a
    power of two), so that an item's pair and row come from shifts and masks rather
    than divisions by the run-time pair count; the slots past the pairs stay idle.

    With ``first`` the dispatch loads the block from SRC (block b reads
    SRC[off + (b / nper) * s_mat + (b % nper) * s_blk + i * s_row + j * s_col], the lower
    triangle mirrored when asked, diagonal real) and U = I; otherwise it resumes W, U
    (and nothing at all once FL[b] says a sweep rotated nothing, unless it is the last
    dispatch, which still writes U). Then the rounds r0..r1 of the sweep sequence
    (round r is round r mod (n2 - 1) of a sweep), so that the host can cut a sweep
    over dispatches where the device bounds an invocation's loops; a sweep that
    rotated nothing ends the solve. A sweep is n2 - 1 rounds of the round-robin tournament (n2 = ns rounded up
    to even): each round computes the n2 / 2 disjoint rotations from the current W,
    then applies them all at once, a thread per 2 x 2 block of W (rows of pair A,
    columns of pair B: R_A^H W R_B, the diagonal blocks set exactly) and per (row,
    pair) of U: two barriers a round. A pair (p, q) is
    rotated when |a_pq| > eps sqrt(|a_pp| |a_qq|) (relative: what keeps small eigenvalues
    of definite matrices and the cosines of the one-sided SVD accurate) and, where TH is
    given, |a_pq| > TH: the blocked eigh skips couplings below the bound that its
    block products' rounding could not hold anyway, so that converged blocks get U = I
    exactly and their products add no new rounding noise. A rotation also sets GF[idx]
    when |a_pq| passes the multiplier times the relative bound (the outer sweeps'
    convergence test).

    The rotation of a Hermitian pair: with g = a_pq = |g| w, R = diag(1, conj w) J(c, s)
    makes the pair real first; t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)),
    zeta = (a_qq - a_pp) / (2 |g|), c = 1 / sqrt(1 + t^2), s = c t; rows take R^H,
    columns (and U) take R, and the 2 x 2 result is set exactly: a_pp - t |g|,
    a_qq + t |g|, 0."""
    cplx = t in ("c64", "c128")
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    eps, tiny, big = _eps(r)
    h2 = cap // 2
    decls = jeig_record(t, cap, wmem, umem, wg, pow2).declarations()
    decls += [f"var<workgroup> g_c: array<R, {h2}>;", f"var<workgroup> g_s: array<R, {h2}>;",
              f"var<workgroup> g_w: array<S, {h2}>;", f"var<workgroup> g_p: array<u32, {h2}>;",
              f"var<workgroup> g_q: array<u32, {h2}>;", f"var<workgroup> g_act: array<u32, {h2}>;",
              f"var<workgroup> g_a: array<R, {h2}>;", f"var<workgroup> g_d: array<R, {h2}>;",
              "var<workgroup> g_rot: atomic<u32>;", "var<workgroup> g_sig: atomic<u32>;",
              "var<workgroup> g_done: u32;"]
    if wmem:
        decls.append(f"var<workgroup> gw: array<S, {cap * cap}>;")
    if umem:
        decls.append(f"var<workgroup> gu: array<S, {cap * cap}>;")

    def wx(i):
        return f"gw[{i}]" if wmem else f"W[w0 + {i}]"

    def ux(i):
        return f"gu[{i}]" if umem else f"U[w0 + {i}]"

    bar = "workgroupBarrier();" if (wmem and umem) else "storageBarrier(); workgroupBarrier();"
    resume = (f"{wx('e')} = W[w0 + e];" if wmem else "") + (f" {ux('e')} = U[w0 + e];" if umem else "")
    phase_of = "S(g.x / h, g.y / h)" if cplx else "select(S(-1), S(1), g >= S(0))"
    body = [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }"]
    body += f"""    let ns = P[1]; let w0 = b * ns * ns;
    let first = P[8] == 1u;
    let last = P[15] == 1u;
    if (lid == 0u) {{
        g_done = select(FL[2u * b], 0u, first);
        atomicStore(&g_rot, select(FL[2u * b + 1u], 0u, first));
        atomicStore(&g_sig, 0u);
    }}
    let done0 = workgroupUniformLoad(&g_done) != 0u;
    if (done0 && !last) {{ return; }}
    let s0 = P[2] + (b / P[3]) * P[4] + (b % P[3]) * P[5];
    for (var e = lid; e < ns * ns; e += {wg}u) {{
        if (first) {{
            let i = e / ns; let j = e % ns;
            var v = SRC[s0 + i * P[6] + j * P[7]];
            if (P[13] == 1u && i < j) {{ v = s_conj(SRC[s0 + j * P[6] + i * P[7]]); }}
            if (i == j) {{ v = s_real(s_re(v)); }}
            {wx('e')} = v;
            {ux('e')} = select(s_real(R(0)), s_real(R(1)), i == j);
        }} else {{
            {resume}
        }}
    }}
    {bar}
    let n2 = ns + (ns & 1u); let npairs = n2 / 2u; let nrd = n2 - 1u;
    let ftol = R(P[11]) * {eps};
    var floor = R(0);
    if (P[12] == 1u) {{ floor = TH[b / P[3]]; }}
    var r1 = P[10];
    if (done0) {{ r1 = P[9]; }}
    for (var r = P[9]; r < r1; r++) {{
            let rd = r % nrd;
            for (var pi = lid; pi < npairs; pi += {wg}u) {{
                var p = n2 - 1u; var q = rd;
                if (pi > 0u) {{ p = (rd + pi) % (n2 - 1u); q = (rd + n2 - 1u - pi) % (n2 - 1u); }}
                var cs = R(1); var sn = R(0); var w = s_real(R(1)); var act = 0u;
                var na = R(0); var nd = R(0);
                if (p < ns && q < ns) {{
                    let a = s_re({wx('p * ns + p')}); let d = s_re({wx('q * ns + q')});
                    let g = {wx('p * ns + q')};
                    let h = s_abs(g);
                    let lim = r_sqrt(r_abs(a)) * r_sqrt(r_abs(d));
                    if (h > {eps} * lim && h > {tiny} && h > floor) {{
                        w = {phase_of};
                        let zeta = (d - a) / (R(2) * h);
                        let az = r_abs(zeta);
                        var tt = R(0.5) / zeta;
                        if (az < {big}) {{ tt = select(R(-1), R(1), zeta >= R(0)) / (az + r_sqrt(R(1) + zeta * zeta)); }}
                        cs = R(1) / r_sqrt(R(1) + tt * tt); sn = cs * tt;
                        na = a - tt * h; nd = d + tt * h;
                        act = 1u;
                        atomicStore(&g_rot, 1u);
                        if (h > ftol * lim) {{ atomicStore(&g_sig, 1u); }}
                    }}
                }}
                g_c[pi] = cs; g_s[pi] = sn; g_w[pi] = w; g_a[pi] = na; g_d[pi] = nd;
                g_p[pi] = p; g_q[pi] = q; g_act[pi] = act;
            }}
            {bar}
{_rotate_w(wx, wg, h2 if pow2 else None)}
{_rotate_u(ux, wg, h2 if pow2 else None)}
            {bar}
            if (rd + 1u == nrd) {{
                // a sweep that rotated nothing ends the solve
                if (lid == 0u) {{
                    if (atomicLoad(&g_rot) == 0u) {{ g_done = 1u; }}
                    atomicStore(&g_rot, 0u);
                }}
                if (workgroupUniformLoad(&g_done) != 0u) {{ break; }}
            }}
    }}
    if (lid == 0u) {{
        FL[2u * b] = g_done;
        FL[2u * b + 1u] = atomicLoad(&g_rot);
        if (atomicLoad(&g_sig) != 0u) {{ GF[P[14]] = 1u; }}
    }}
    {bar}
    for (var e = lid; e < ns * ns; e += {wg}u) {{
        {"W[w0 + e] = gw[e];" if wmem else ""}
        {"if (P[15] == 0u) { U[w0 + e] = gu[e]; }" if umem else ""}
    }}
    if (P[15] == 1u) {{
        // unit columns: the rounding of c and s drifts the norms the same way in
        // every rotation, which the blocked products would compound round after round
        for (var j = lid; j < ns; j += {wg}u) {{
            var s2 = R(0);
            for (var i = 0u; i < ns; i++) {{ s2 += s_abs2({ux('i * ns + j')}); }}
            let sc = R(1) / r_sqrt(s2);
            for (var i = 0u; i < ns; i++) {{ U[w0 + i * ns + j] = s_scale({ux('i * ns + j')}, sc); }}
        }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


# items per thread whose loads a jeig round issues together: storage latency (L2 on a
# GPU, for blocks past workgroup memory) is paid once per group, not once per item
UNROLL_W = 2
UNROLL_U = 4


def _items(rows: str, row: str, slots: int | None) -> tuple[str, str, str]:
    """A round's loop over (row, pair) items, ``rows`` rows of the pairs: (item count,
    the split of item e{j} into {row}{j} and ib{j}, whether the item is a pair's). By the
    run-time pair count, or by ``slots`` pair slots a row (shifts and masks; the slots
    past the pairs idle)."""
    if slots is None:
        return f"{rows} * npairs", f"{row}{{j}} = e{{j}} / npairs; ib{{j}} = e{{j}} % npairs;", "true"
    return (f"{rows} * {slots}u", f"{row}{{j}} = e{{j}} / {slots}u; ib{{j}} = e{{j}} % {slots}u;",
            "ib{j} < npairs")


def _rotate_w(wx, wg: int, slots: int | None = None) -> str:
    """jeig's W <- R^H W R: the thread of block (A, B) owns rows {pA, qA} x columns
    {pB, qB}; the pairs are disjoint, so the blocks partition W. UNROLL_W blocks per
    iteration, all their loads first. ``slots``: blocks numbered by that many pair
    slots a row (a power of two), not by the pair count."""
    k = UNROLL_W
    total, split, valid = _items("npairs", "ia", slots)
    out = [f"            for (var e0 = lid; e0 < {total}; e0 += {k * wg}u) {{"]
    for j in range(k):
        out.append(f"""                let e{j} = e0 + {j * wg}u;
                var on{j} = false; var ia{j} = 0u; var ib{j} = 0u;
                if (e{j} < {total}) {{
                    {split.format(j=j)}
                    if ({valid.format(j=j)}) {{ on{j} = g_act[ia{j}] + g_act[ib{j}] != 0u; }}
                }}
                let pa{j} = g_p[ia{j}]; let qa{j} = g_q[ia{j}]; let pb{j} = g_p[ib{j}]; let qb{j} = g_q[ib{j}];
                // only pair 0's p can be the padding index ns (odd ns), and that pair
                // never rotates: its row/column is skipped
                let vr{j} = on{j} && pa{j} < ns; let vc{j} = on{j} && pb{j} < ns;
                var x00_{j} = s_real(R(0)); var x01_{j} = s_real(R(0));
                var x10_{j} = s_real(R(0)); var x11_{j} = s_real(R(0));
                if (vr{j} && vc{j}) {{ x00_{j} = {wx(f'pa{j} * ns + pb{j}')}; }}
                if (vr{j}) {{ x01_{j} = {wx(f'pa{j} * ns + qb{j}')}; }}
                if (vc{j}) {{ x10_{j} = {wx(f'qa{j} * ns + pb{j}')}; }}
                if (on{j}) {{ x11_{j} = {wx(f'qa{j} * ns + qb{j}')}; }}""")
    for j in range(k):
        out.append(f"""                if (on{j}) {{
                    var x00 = x00_{j}; var x01 = x01_{j}; var x10 = x10_{j}; var x11 = x11_{j};
                    let ia = ia{j}; let ib = ib{j};
                    if (g_act[ia] == 1u) {{
                        let c = g_c[ia]; let s = g_s[ia]; let wa = g_w[ia];
                        let y0 = s_mul(wa, x10); let y1 = s_mul(wa, x11);
                        let z0 = x00; let z1 = x01;
                        x00 = s_scale(z0, c) - s_scale(y0, s); x10 = s_scale(z0, s) + s_scale(y0, c);
                        x01 = s_scale(z1, c) - s_scale(y1, s); x11 = s_scale(z1, s) + s_scale(y1, c);
                    }}
                    if (g_act[ib] == 1u) {{
                        let c = g_c[ib]; let s = g_s[ib]; let wc = s_conj(g_w[ib]);
                        let y0 = s_mul(wc, x01); let y1 = s_mul(wc, x11);
                        let z0 = x00; let z1 = x10;
                        x00 = s_scale(z0, c) - s_scale(y0, s); x01 = s_scale(z0, s) + s_scale(y0, c);
                        x10 = s_scale(z1, c) - s_scale(y1, s); x11 = s_scale(z1, s) + s_scale(y1, c);
                    }}
                    if (ia == ib) {{
                        x00 = s_real(g_a[ia]); x11 = s_real(g_d[ia]); x01 = s_real(R(0)); x10 = s_real(R(0));
                    }}
                    if (vr{j} && vc{j}) {{ {wx(f'pa{j} * ns + pb{j}')} = x00; }}
                    if (vr{j}) {{ {wx(f'pa{j} * ns + qb{j}')} = x01; }}
                    if (vc{j}) {{ {wx(f'qa{j} * ns + pb{j}')} = x10; }}
                    {wx(f'qa{j} * ns + qb{j}')} = x11;
                }}""")
    out.append("            }")
    return "\n".join(out)


def _rotate_u(ux, wg: int, slots: int | None = None) -> str:
    """jeig's U <- U R: a thread per (row, pair) of U, UNROLL_U per iteration, all
    their loads first. ``slots`` as for ``_rotate_w``."""
    k = UNROLL_U
    total, split, valid = _items("ns", "k", slots)
    out = [f"            for (var e0 = lid; e0 < {total}; e0 += {k * wg}u) {{"]
    for j in range(k):
        out.append(f"""                let e{j} = e0 + {j * wg}u;
                var k{j} = 0u; var ib{j} = 0u; var on{j} = false;
                if (e{j} < {total}) {{
                    {split.format(j=j)}
                    if ({valid.format(j=j)}) {{ on{j} = g_act[ib{j}] == 1u; }}
                }}
                let p{j} = g_p[ib{j}]; let q{j} = g_q[ib{j}];
                var x{j} = s_real(R(0)); var y{j} = s_real(R(0));
                if (on{j}) {{ x{j} = {ux(f'k{j} * ns + p{j}')}; y{j} = {ux(f'k{j} * ns + q{j}')}; }}""")
    for j in range(k):
        out.append(f"""                if (on{j}) {{
                    let c = g_c[ib{j}]; let s = g_s[ib{j}];
                    let y = s_mul(s_conj(g_w[ib{j}]), y{j});
                    {ux(f'k{j} * ns + p{j}')} = s_scale(x{j}, c) - s_scale(y, s);
                    {ux(f'k{j} * ns + q{j}')} = s_scale(x{j}, s) + s_scale(y, c);
                }}""")
    out.append("            }")
    return "\n".join(out)


def _grid_head(wg: int) -> list[str]:
    return [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            f"    let e = (wid.x + wid.y * 65535u) * {wg}u + lid;"]


def permute_record(t: str) -> Launch:
    """The block permutation's record: its PERMUTE_HEAD words; the permutation table follows
    them, one word per column block (appended by the driver)."""
    return record(f"linalg_eigen_permute_{t}", [("SRC", "S", False), ("DST", "S", True)],
                  ("nz", "rows", "cols", "kind", "off", "sz", "sr", "sp", "sh", "bs", "rowperm", "vrows", "vcols"),
                  GATHER_WG)


def render_permute(t: str) -> str:
    """Bindings SRC (read), DST (a new contiguous nz x rows x cols); P: nz, rows, cols,
    kind, src offset, src strides (matrix, row, pair of column blocks, second block of
    a pair), block size bs, permute rows too, valid source rows, valid source cols,
    then the block permutation (destination column block -> source column block).

    Destination (z, i, j) takes source column c = perm[j / bs] * bs + j % bs (and row
    perm[i / bs] * bs + i % bs when rows are permuted too); column block cb sits at
    (cb / 2) * s_pair + (cb % 2) * s_half, which covers both a plain matrix
    (s_pair = 2 bs, s_half = bs) and the output of the pair-batched products
    (s_pair = rows * 2 bs). kind 0 copies (zero past the valid rows/cols: padding);
    1 mirrors the lower triangle of a contiguous source (Hermitian input; real
    diagonal); 2 writes the identity (the eigenvector accumulator)."""
    h = PERMUTE_HEAD
    decls = permute_record(t).declarations()
    body = _grid_head(GATHER_WG)
    body += f"""    let nr = P[1]; let nc = P[2];
    if (e >= P[0] * nr * nc) {{ return; }}
    let z = e / (nr * nc); let i = (e / nc) % nr; let j = e % nc;
    let bs = P[9];
    let cb = P[{h}u + j / bs]; let cc = j % bs;
    let c = cb * bs + cc;
    var rr = i;
    if (P[10] == 1u) {{ rr = P[{h}u + i / bs] * bs + i % bs; }}
    var v = s_real(R(0));
    let kind = P[3];
    if (kind == 2u) {{
        v = select(s_real(R(0)), s_real(R(1)), rr == c);
    }} else if (rr < P[11] && c < P[12]) {{
        let s0 = P[4] + z * P[5];
        if (kind == 1u) {{
            if (rr < c) {{ v = s_conj(SRC[s0 + c * P[6] + rr]); }} else {{ v = SRC[s0 + rr * P[6] + c]; }}
            if (rr == c) {{ v = s_real(s_re(v)); }}
        }} else {{
            v = SRC[s0 + rr * P[6] + (cb / 2u) * P[7] + (cb % 2u) * P[8] + cc];
        }}
    }}
    DST[e] = v;
}}""".split("\n")
    return _finish(decls, t, body)


def order_record(t: str) -> Launch:
    return record(f"linalg_eigen_order_{t}",
                  [("VAL", "R", False), ("VEC", "S", False), ("Sv", "R", True), ("O", "u32", True), ("Vo", "S", True)],
                  ("nz", "n", "desc", "phase", "rows", "voff", "vz", "vj", "eoff", "ez", "er", "ec", "divide"),
                  GATHER_WG)


def render_order(t: str) -> str:
    """Bindings VAL (R, read), VEC (S, read), Sv (R), O (u32), Vo (S); P: nz, n,
    descending, phase, vector rows, VAL offset, VAL strides (matrix, value), VEC offset,
    VEC strides (matrix, row, col), divide by the values.

    Phase 0 (a thread per value): the rank of value (z, j) among the n of matrix z
    (ties by index; NaN last ascending, first descending) into Sv[z, rank], and
    O[z, rank] = j. Phase 1 (a thread per element of Vo, nz x rows x n): Vo[z, i, r] =
    VEC[z, i, O[z, r]] (divided by the value where asked; 0 for a zero value)."""
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    decls = order_record(t).declarations()
    body = _grid_head(GATHER_WG)
    body += f"""    let n = P[1];
    if (P[3] == 0u) {{
    if (e >= P[0] * n) {{ return; }}
    let z = e / n; let j = e % n;
    let v0 = P[5] + z * P[6];
    let vj = VAL[v0 + j * P[7]]; let nj = {r}_isnan(vj);
    let desc = P[2] == 1u;
    var rank = 0u;
    for (var c = 0u; c < n; c++) {{
        let vc = VAL[v0 + c * P[7]]; let nc = {r}_isnan(vc);
        var before = c < j;
        if (nc != nj) {{ before = select(nj, nc, desc); }}
        else if (!nc && vc != vj) {{ before = select((vc < vj), (vc > vj), desc); }}
        if (before) {{ rank += 1u; }}
    }}
    Sv[z * n + rank] = vj;
    O[z * n + rank] = j;
    return;
    }}
    let nr = P[4];
    if (e >= P[0] * nr * n) {{ return; }}
    let z = e / (nr * n); let i = (e / n) % nr; let rk = e % n;
    let j = O[z * n + rk];
    var v = VEC[P[8] + z * P[9] + i * P[10] + j * P[11]];
    if (P[12] == 1u) {{
        let s = VAL[P[5] + z * P[6] + j * P[7]];
        v = select(s_real(R(0)), s_scale(v, R(1) / s), s > R(0));
    }}
    Vo[e] = v;
}}""".split("\n")
    return _finish(decls, t, body)


def ojac_record(t: str, wg: int, cap: int = 0, sg: bool = False) -> Launch:
    return record(f"linalg_eigen_ojac_{t}" + (f"_sh{cap}" if cap else "") + ("_sg" if sg else ""),
                  [("SRC", "S", False), ("A", "S", True), ("V", "S", True), ("FL", "u32", True)],
                  ("nz", "m", "n", "off", "s_mat", "s_row", "s_col", "first", "r0", "r1", "tolmul", "tpp", "last"), wg)


def render_ojac(t: str, wg: int, cap: int = 0, sg: bool = False) -> str:
    """Bindings SRC (read), A (the work copy, matrices x n x m: column j of matrix b
    at A[(b n + j) m ..], contiguous), V (matrices x n x n, column j likewise), FL (three
    u32 per matrix: done, a coupling past OJAC_ACTIVE tol in the current sweep, sweeps
    run: what the tests read to see that the solve ends); P: matrices, m, n, src offset,
    src strides (matrix, row, col), first, global rounds r0..r1, tolerance multiplier,
    threads per pair (a power of two dividing ``wg``), last (normalize V's columns).

    One-sided (Hestenes) Jacobi on a whole m x n matrix (m >= n) per workgroup: the
    rounds of the round-robin tournament over its columns, each round's n / 2
    disjoint pairs orthogonalized at once. A pair's dot products (|a_p|^2, |a_q|^2,
    a_p^H a_q) are summed over its rows by ``tpp`` threads and reduced over them by a
    tree in workgroup memory, or with ``sg`` (float32 on a device whose subgroups hold
    a pair's lanes) by a butterfly of subgroup shuffles (a sequential sum of the lanes'
    parts was 3.4 of the 5.2 us of a round at order 64 on an H200); every thread of
    the pair then derives the same rotation (jeig's
    formulas on the 2 x 2 Gram matrix) and applies it to its own rows of the two
    columns of A and of V, which it read itself: no barrier between the products and
    the update but the reduction's. A pair rotates when |a_p^H a_q| > tol |a_p| |a_q|
    (tol = multiplier x eps, LAPACK gesvj's sqrt(m) eps: below it the dot products'
    rounding is all there is); a sweep in which no pair passed OJAC_ACTIVE tol ends the
    solve. That margin is what makes it end on clustered values: a rotation of two
    columns of (nearly) equal norm turns by up to 45 degrees for any coupling, and so
    mixes their couplings with every other column, which sit anywhere below tol once
    converged (measured in a float32 emulation of this kernel on PCA-like data at
    order 256: median 0.6 eps, 99th percentile 11 of tol's 16); each such rotation
    can lift a few of those past tol again, a chain that ended after a sweep or two
    there and need not end at all on another device's rounding. Couplings between tol
    and OJAC_ACTIVE tol are still rotated away; what the chain leaves is below that,
    and the refinement step (``_svd_finish``) squares it. At the end
    the columns of A are U sigma (sigma_j = |a_j|) and V holds the accumulated
    rotations. With ``first`` the dispatch loads A (matrix b, row i, column j at
    SRC[off + b s_mat + i s_row + j s_col]) and V = I.

    With ``cap`` (m, n <= cap) the rounds work on copies of A and V in workgroup
    memory, columns cap + 1 apart (the pairs of one warp then start in different
    banks), loaded at the start of the dispatch and written back at its end: a round
    reads and writes every entry of both, and storage latency behind each round's
    barrier was its cost (order 64 on an H200: ~6 us a round from storage)."""
    cplx = t in ("c64", "c128")
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    eps, tiny, big = _eps(r)
    k = 4 if cplx else 3
    cs = cap + 1
    a_at = (lambda j, i: f"sA[({j}) * {cs}u + {i}]") if cap else (lambda j, i: f"A[a0 + ({j}) * m + {i}]")
    v_at = (lambda j, i: f"sV[({j}) * {cs}u + {i}]") if cap else (lambda j, i: f"V[v0 + ({j}) * n + {i}]")
    shared = [f"var<workgroup> sA: array<S, {cap * cs}>;", f"var<workgroup> sV: array<S, {cap * cs}>;"] if cap else []
    decls = ojac_record(t, wg, cap, sg).declarations() + shared + [
             f"var<workgroup> g_red: array<R, {wg * k}>;",
             "var<workgroup> g_rot: atomic<u32>;", "var<workgroup> g_done: u32;", "var<workgroup> g_sweeps: u32;"]
    if cplx:
        put = "g_red[o + 2u] = apq.x; g_red[o + 3u] = apq.y;"
        add = "g_red[o + 2u] += g_red[u + 2u]; g_red[o + 3u] += g_red[u + 3u];"
        get = "S(g_red[o0 + 2u], g_red[o0 + 3u])"
        phase_of = "S(g.x / h, g.y / h)"
    else:
        put = "g_red[o + 2u] = apq;"
        add = "g_red[o + 2u] += g_red[u + 2u];"
        get = "g_red[o0 + 2u]"
        phase_of = "select(S(-1), S(1), g >= S(0))"
    if sg:  # a butterfly of shuffles: every lane of the pair ends with the same sums
        reduce = """            var a = app; var d = aqq; var g = apq;
            for (var st = 1u; st < tpp; st <<= 1u) {
                a += subgroupShuffleXor(a, st); d += subgroupShuffleXor(d, st); g += subgroupShuffleXor(g, st);
            }"""
    else:  # a tree over the pair's lanes in workgroup memory
        reduce = f"""            let o = lid * {k}u;
            g_red[o] = app; g_red[o + 1u] = aqq; {put}
            for (var st = tpp / 2u; st > 0u; st >>= 1u) {{
                workgroupBarrier();
                if (lane < st) {{ let u = o + st * {k}u; g_red[o] += g_red[u]; g_red[o + 1u] += g_red[u + 1u]; {add} }}
            }}
            workgroupBarrier();
            let o0 = slot * tpp * {k}u;
            let a = g_red[o0]; let d = g_red[o0 + 1u]; let g = {get};
            workgroupBarrier();"""
    bar = "workgroupBarrier();" if cap else "storageBarrier(); workgroupBarrier();"
    resume = store = ""
    if cap:  # the dispatch's copies in and out of workgroup memory
        def copies(ind, to_a, to_v):
            return (f"\n{ind}for (var e = lid; e < n * m; e += {wg}u) {{ {to_a} }}"
                    f"\n{ind}for (var e = lid; e < n * n; e += {wg}u) {{ {to_v} }}")
        resume = ("\n    if (!first) {" + copies("        ", f"{a_at('e / m', 'e % m')} = A[a0 + e];",
                                                 f"{v_at('e / n', 'e % n')} = V[v0 + e];")
                  + "\n        workgroupBarrier();\n    }")
        store = "\n    workgroupBarrier();" + copies("    ", f"A[a0 + e] = {a_at('e / m', 'e % m')};",
                                                     f"V[v0 + e] = {v_at('e / n', 'e % n')};")
    body = [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }"]
    body += f"""    let m = P[1]; let n = P[2];
    let a0 = b * n * m; let v0 = b * n * n;
    let first = P[7] == 1u;
    if (lid == 0u) {{
        g_done = select(FL[3u * b], 0u, first);
        atomicStore(&g_rot, select(FL[3u * b + 1u], 0u, first));
        g_sweeps = select(FL[3u * b + 2u], 0u, first);
    }}
    let done0 = workgroupUniformLoad(&g_done) != 0u;
    let last = P[12] == 1u;
    if (done0 && !last) {{ return; }}
    if (first) {{
        let s0 = P[3] + b * P[4];
        // scaled by a power of two to a largest magnitude in [1, 2): the squares of
        // float32 entries past 1e19 overflow, those of tiny ones underflow (V and the
        // unit columns of A V do not depend on the scale)
        var mx = R(0);
        for (var e = lid; e < n * m; e += {wg}u) {{
            mx = max(mx, s_abs(SRC[s0 + (e % m) * P[5] + (e / m) * P[6]]));
        }}
        g_red[lid] = mx;
        workgroupBarrier();
        for (var st = {wg // 2}u; st > 0u; st >>= 1u) {{
            if (lid < st) {{ g_red[lid] = max(g_red[lid], g_red[lid + st]); }}
            workgroupBarrier();
        }}
        let top = g_red[0];
        workgroupBarrier();
        var sc = R(1);
        if (top > R(0)) {{
            for (var k = 0u; k < 40u && top * sc >= R(4294967296.0); k++) {{ sc *= R(2.3283064365386963e-10); }}
            for (var k = 0u; k < 40u && top * sc >= R(2); k++) {{ sc *= R(0.5); }}
            for (var k = 0u; k < 40u && top * sc < R(2.3283064365386963e-10); k++) {{ sc *= R(4294967296.0); }}
            for (var k = 0u; k < 40u && top * sc < R(1); k++) {{ sc *= R(2); }}
        }}
        for (var e = lid; e < n * m; e += {wg}u) {{
            {a_at("e / m", "e % m")} = s_scale(SRC[s0 + (e % m) * P[5] + (e / m) * P[6]], sc);
        }}
        for (var e = lid; e < n * n; e += {wg}u) {{
            {v_at("e / n", "e % n")} = select(s_real(R(0)), s_real(R(1)), e / n == e % n);
        }}
        {bar}
    }}{resume}
    let n2 = n + (n & 1u); let npairs = n2 / 2u; let nrd = n2 - 1u;
    let tol = R(P[10]) * {eps};
    let tpp = P[11]; let per = {wg}u / tpp;
    let lane = lid % tpp; let slot = lid / tpp;
    var r1 = P[9];
    if (done0) {{ r1 = P[8]; }}
    for (var r = P[8]; r < r1; r++) {{
        let rd = r % nrd;
        for (var base = 0u; base < npairs; base += per) {{
            let pi = base + slot;
            var p = n2 - 1u; var q = rd;
            if (pi > 0u) {{ p = (rd + pi) % nrd; q = (rd + nrd - pi) % nrd; }}
            let ok = pi < npairs && p < n && q < n;
            var app = R(0); var aqq = R(0); var apq = s_real(R(0));
            if (ok) {{
                for (var i = lane; i < m; i += tpp) {{
                    let x = {a_at("p", "i")}; let y = {a_at("q", "i")};
                    app += s_abs2(x); aqq += s_abs2(y); apq += s_mul(s_conj(x), y);
                }}
            }}
{reduce}
            let h = s_abs(g);
            let lim = r_sqrt(a) * r_sqrt(d);
            if (ok && h > tol * lim && h > {tiny}) {{
                let w = {phase_of};
                let zeta = (d - a) / (R(2) * h);
                let az = r_abs(zeta);
                var tt = R(0.5) / zeta;
                if (az < {big}) {{ tt = select(R(-1), R(1), zeta >= R(0)) / (az + r_sqrt(R(1) + zeta * zeta)); }}
                let c = R(1) / r_sqrt(R(1) + tt * tt); let s = c * tt;
                let wc = s_conj(w);
                if (lane == 0u && h > R({OJAC_ACTIVE}) * tol * lim) {{ atomicStore(&g_rot, 1u); }}
{_rotate_cols(a_at, "m")}
{_rotate_cols(v_at, "n")}
            }}
        }}
        {bar}
        if (rd + 1u == nrd) {{
            // a sweep that rotated nothing ends the solve
            if (lid == 0u) {{
                if (atomicLoad(&g_rot) == 0u) {{ g_done = 1u; }}
                atomicStore(&g_rot, 0u);
                g_sweeps += 1u;
            }}
            if (workgroupUniformLoad(&g_done) != 0u) {{ break; }}
        }}
    }}
    if (lid == 0u) {{
        FL[3u * b] = g_done;
        FL[3u * b + 1u] = atomicLoad(&g_rot);
        FL[3u * b + 2u] = g_sweeps;
    }}
    if (last) {{
        // unit columns of V (A's scaled alike, so that A V stays A_0 V): the rounding
        // of c and s drifts the norms the same way in every rotation, ~n sweeps eps
        for (var j = lid; j < n; j += {wg}u) {{
            var s2 = R(0);
            for (var i = 0u; i < n; i++) {{ s2 += s_abs2({v_at("j", "i")}); }}
            let sc = R(1) / r_sqrt(s2);
            for (var i = 0u; i < n; i++) {{ {v_at("j", "i")} = s_scale({v_at("j", "i")}, sc); }}
            for (var i = 0u; i < m; i++) {{ {a_at("j", "i")} = s_scale({a_at("j", "i")}, sc); }}
        }}
    }}{store}
}}""".split("\n")
    return _finish(decls, t, body)


def _rotate_cols(at, rows: str) -> str:
    """ojac's update of columns p, q (``rows`` long; ``at(column, row)`` spells an
    entry): each thread its rows lane + k tpp, UNROLL_U of them per iteration, loads
    first."""
    k = UNROLL_U
    out = [f"                for (var i0 = lane; i0 < {rows}; i0 += {k}u * tpp) {{"]
    for j in range(k):
        out.append(f"""                    let i{j} = i0 + {j}u * tpp; let on{j} = i{j} < {rows};
                    var x{j} = s_real(R(0)); var y{j} = s_real(R(0));
                    if (on{j}) {{ x{j} = {at("p", f"i{j}")}; y{j} = s_mul(wc, {at("q", f"i{j}")}); }}""")
    for j in range(k):
        out.append(f"""                    if (on{j}) {{
                        {at("p", f"i{j}")} = s_scale(x{j}, c) - s_scale(y{j}, s);
                        {at("q", f"i{j}")} = s_scale(x{j}, s) + s_scale(y{j}, c);
                    }}""")
    out.append("                }")
    return "\n".join(out)


REFINE_WG = 512


def refine_eigh_record(t: str) -> Launch:
    return record(f"linalg_eigen_refine_eigh_{t}",
                  [("SM", "S", False), ("G", "S", False), ("E", "S", True), ("LAM", "R", True)],
                  ("nz", "n", "tau"), REFINE_WG)


def render_refine_eigh(t: str) -> str:
    """Bindings SM, G (read: X^H A X and X^H X, matrices x n x n), E (the correction,
    n x n), LAM (R, n per matrix); P: matrices, n, tau as f32 bits.

    The elementwise middle of Ogita and Aishima's refinement step, a workgroup per
    matrix (it needs three Frobenius norms of the matrix): with S, G symmetrized,
    lam_i = s_ii / g_ii, R = I - G, delta = 2 (|S - diag(lam)|_F + |S|_F |R|_F)
    (|S|_F standing in for |A|_F: X is orthonormal to first order),
    e_ij = (s_ij + lam_j r_ij) / (lam_j - lam_i) where both of the pair (i, j), (j, i)
    have a gap past delta and a correction below tau, else r_ij / 2."""
    wg = REFINE_WG
    decls = refine_eigh_record(t).declarations() + [
             f"var<workgroup> g_r: array<vec3<R>, {wg}>;"]
    body = [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }"]
    body += f"""    let n = P[1]; let s0 = b * n * n; let l0 = b * n;
    let tau = R(bitcast<f32>(P[2]));
    for (var i = lid; i < n; i += {wg}u) {{
        LAM[l0 + i] = s_re(SM[s0 + i * n + i]) / s_re(G[s0 + i * n + i]);
    }}
    storageBarrier(); workgroupBarrier();
    var acc = vec3<R>(R(0), R(0), R(0));
    for (var e = lid; e < n * n; e += {wg}u) {{
        let i = e / n; let j = e % n; let et = s0 + j * n + i;
        let ss = s_scale(SM[s0 + e] + s_conj(SM[et]), R(0.5));
        let gs = s_scale(G[s0 + e] + s_conj(G[et]), R(0.5));
        var ds = ss; var rm = s_real(R(0)) - gs;
        if (i == j) {{ ds = ss - s_real(LAM[l0 + i]); rm = s_real(R(1)) - gs; }}
        acc += vec3<R>(s_abs2(ds), s_abs2(ss), s_abs2(rm));
    }}
    g_r[lid] = acc;
    workgroupBarrier();
    for (var st = {wg // 2}u; st > 0u; st >>= 1u) {{
        if (lid < st) {{ g_r[lid] = g_r[lid] + g_r[lid + st]; }}
        workgroupBarrier();
    }}
    let fr = g_r[0];
    let delta = R(2) * (r_sqrt(fr.x) + r_sqrt(fr.y) * r_sqrt(fr.z));
    for (var e = lid; e < n * n; e += {wg}u) {{
        let i = e / n; let j = e % n; let et = s0 + j * n + i;
        let ss = s_scale(SM[s0 + e] + s_conj(SM[et]), R(0.5));
        let gs = s_scale(G[s0 + e] + s_conj(G[et]), R(0.5));
        var rm = s_real(R(0)) - gs;
        if (i == j) {{ rm = s_real(R(1)) - gs; }}
        let li = LAM[l0 + i]; let lj = LAM[l0 + j];
        let gap = lj - li;
        // the (j, i) entry's numerator: s_ji = conj(s_ij), r_ji = conj(r_ij)
        let num = ss + s_scale(rm, lj);
        let numt = s_conj(ss) + s_scale(s_conj(rm), li);
        let big = r_abs(gap) > delta;
        let sep = big && s_abs(num) < r_abs(gap) * tau && s_abs(numt) < r_abs(gap) * tau;
        var v = s_scale(rm, R(0.5));
        if (sep) {{ v = s_scale(num, R(1) / gap); }}
        E[s0 + e] = v;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def refine_svd_record(t: str) -> Launch:
    return record(f"linalg_eigen_refine_svd_{t}",
                  [("T", "S", False), ("UU", "S", False), ("VV", "S", False), ("F", "S", True), ("G", "S", True),
                   ("SIG", "R", True)], ("nz", "n", "tau"), GATHER_WG)


def render_refine_svd(t: str) -> str:
    """Bindings T, UU, VV (read: U^H A V, U^H U, V^H V, matrices x n x n), F, G (the
    corrections of U and V), SIG (R, n per matrix); P: matrices, n, tau as f32 bits.

    The elementwise middle of the SVD's refinement step, a thread per entry: with
    R = I - UU, Q = I - VV symmetrized, sigma_i = t_ii / (1 - (r_ii + q_ii) / 2),
    a = t_ij + sigma_j r_ij, b = conj(t_ji) + sigma_j q_ij,
    f_ij = (a sigma_j + b sigma_i) / (sigma_j^2 - sigma_i^2),
    g_ij = (a sigma_i + b sigma_j) / (sigma_j^2 - sigma_i^2) where those of both
    (i, j) and (j, i) stay below tau times the denominator, else r_ij / 2, q_ij / 2."""
    decls = refine_svd_record(t).declarations()
    body = _grid_head(GATHER_WG)
    body += """    let n = P[1];
    if (e >= P[0] * n * n) { return; }
    let b = e / (n * n); let i = (e / n) % n; let j = e % n;
    let s0 = b * n * n;
    let tau = R(bitcast<f32>(P[2]));
    let si = sv_sigma(s0, n, i); let sj = sv_sigma(s0, n, j);
    if (i == j) { SIG[b * n + i] = si; }
    let ij = s0 + i * n + j; let ji = s0 + j * n + i;
    let r = s_real(select(R(0), R(1), i == j)) - s_scale(UU[ij] + s_conj(UU[ji]), R(0.5));
    let q = s_real(select(R(0), R(1), i == j)) - s_scale(VV[ij] + s_conj(VV[ji]), R(0.5));
    let den = sj * sj - si * si;
    let lim = r_abs(den) * tau;
    // (i, j) and, with r_ji = conj(r_ij), q_ji = conj(q_ij), the (j, i) entry
    let a = T[ij] + s_scale(r, sj); let bb = s_conj(T[ji]) + s_scale(q, sj);
    let fn1 = s_scale(a, sj) + s_scale(bb, si); let gn1 = s_scale(a, si) + s_scale(bb, sj);
    let at = T[ji] + s_scale(s_conj(r), si); let bt = s_conj(T[ij]) + s_scale(s_conj(q), si);
    let fn2 = s_scale(at, si) + s_scale(bt, sj); let gn2 = s_scale(at, sj) + s_scale(bt, si);
    let ok = s_abs(fn1) < lim && s_abs(gn1) < lim && s_abs(fn2) < lim && s_abs(gn2) < lim;
    var f = s_scale(r, R(0.5)); var g = s_scale(q, R(0.5));
    if (ok) { f = s_scale(fn1, R(1) / den); g = s_scale(gn1, R(1) / den); }
    F[e] = f; G[e] = g;
}
fn sv_sigma(s0: u32, n: u32, i: u32) -> R {
    let d = s0 + i * n + i;
    return s_re(T[d]) / (R(1) - ((R(1) - s_re(UU[d])) + (R(1) - s_re(VV[d]))) * R(0.5));
}""".split("\n")
    return _finish(decls, t, body)


# post: the whole refinement step and the sort of a small real matrix in one
# workgroup (n <= POST_MAX), instead of ~12 dispatches each of which cost host time
POST_MAX = 64
POST_WG = 256


def _post_head(wg: int) -> list[str]:
    return [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }"]


def _post_rank(val: str, desc: bool) -> str:
    """WGSL: rank of value i among the n of g_val (ties by index; NaN last ascending,
    first descending, as ``render_order``), into g_rank[i]."""
    before = "(vc > vi)" if desc else "(vc < vi)"
    nan_first = "nc" if desc else "ni"
    return f"""    for (var i = lid; i < n; i += {POST_WG}u) {{
        let vi = {val}[i]; let ni = r_isnan(vi);
        var rank = 0u;
        for (var c = 0u; c < n; c++) {{
            let vc = {val}[c]; let nc = r_isnan(vc);
            var bef = c < i;
            if (nc != ni) {{ bef = {nan_first}; }} else if (!nc && vc != vi) {{ bef = {before}; }}
            if (bef) {{ rank += 1u; }}
        }}
        g_rank[i] = rank;
    }}
    workgroupBarrier();"""


def _post_common(t: str, it: str) -> list[str]:
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    return [f"var<workgroup> g_val: array<R, {POST_MAX}>;", f"var<workgroup> g_rank: array<u32, {POST_MAX}>;",
            f"var<workgroup> g_r: array<vec3<R>, {POST_WG}>;",
            f"fn r_isnan(x: R) -> bool {{ return {r}_isnan(x); }}"]


def _post_mm(out: str, a: str, b: str, ta: bool, tb: bool = False) -> str:
    """WGSL: out = op(a) op(b) over the n x n slots of SCR (op = transpose when asked)."""
    ia = "k * n + i" if ta else "i * n + k"
    ib = "j * n + k" if tb else "k * n + j"
    return f"""    for (var e = lid; e < n * n; e += {POST_WG}u) {{
        let i = e / n; let j = e % n;
        var acc = R(0);
        for (var k = 0u; k < n; k++) {{ acc += SCR[{a} + {ia}] * SCR[{b} + {ib}]; }}
        SCR[{out} + e] = acc;
    }}
    storageBarrier(); workgroupBarrier();"""


def post_eigh_record(t: str, it: str) -> Launch:
    return record(f"linalg_eigen_post_eigh_{it}",
                  [("A", it, False), ("X", it, False), ("SCR", "R", True), ("WO", it, True), ("VO", it, True)],
                  ("nz", "n", "offA", "tau", "vectors"), POST_WG)


def render_post_eigh(t: str, it: str) -> str:
    """Bindings A (read, the input matrices, their lower triangles Hermitian), X (read,
    the Jacobi eigenvectors), SCR (5 n x n slots of the working precision R per matrix),
    WO (eigenvalues ascending), VO (their vectors); A, X, WO, VO of the input type
    ``it``; P: matrices, n (<= POST_MAX), A offset, tau as f32 bits, vectors.

    Ogita and Aishima's step as ``render_refine_eigh`` describes it, with its products
    (A X, X^T A X, X^T X, X E) done by the workgroup on L2-resident slots, then the
    values ranked and values and vectors written in order: eigh of a small real
    matrix is then the Jacobi dispatch and this one."""
    wg = POST_WG
    decls = post_eigh_record(t, it).declarations()
    decls += _post_common(t, it)
    body = _post_head(wg)
    body += f"""    let n = P[1]; let nn = n * n;
    let sx = b * 5u * nn; let sh = sx + nn; let sa = sh + nn; let ss = sa + nn; let sg = ss + nn;
    let a0 = P[2] + b * nn;
    let tau = R(bitcast<f32>(P[3]));
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        SCR[sx + e] = R(X[b * nn + e]);
        SCR[sh + e] = R(A[a0 + select(j * n + i, i * n + j, i >= j)]);
    }}
    storageBarrier(); workgroupBarrier();
{_post_mm("sa", "sh", "sx", False)}
{_post_mm("ss", "sx", "sa", True)}
{_post_mm("sg", "sx", "sx", True)}
    for (var i = lid; i < n; i += {wg}u) {{ g_val[i] = SCR[ss + i * n + i] / SCR[sg + i * n + i]; }}
    workgroupBarrier();
    var acc = vec3<R>(R(0), R(0), R(0));
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        let s = (SCR[ss + e] + SCR[ss + j * n + i]) * R(0.5);
        let gs = (SCR[sg + e] + SCR[sg + j * n + i]) * R(0.5);
        var ds = s; var rm = -gs;
        if (i == j) {{ ds = s - g_val[i]; rm = R(1) - gs; }}
        acc += vec3<R>(ds * ds, s * s, rm * rm);
    }}
    g_r[lid] = acc;
    workgroupBarrier();
    for (var st = {wg // 2}u; st > 0u; st >>= 1u) {{
        if (lid < st) {{ g_r[lid] = g_r[lid] + g_r[lid + st]; }}
        workgroupBarrier();
    }}
    let fr = g_r[0];
    let delta = R(2) * (r_sqrt(fr.x) + r_sqrt(fr.y) * r_sqrt(fr.z));
    // E into the slot of H (no longer read)
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        let s = (SCR[ss + e] + SCR[ss + j * n + i]) * R(0.5);
        let gs = (SCR[sg + e] + SCR[sg + j * n + i]) * R(0.5);
        var rm = -gs;
        if (i == j) {{ rm = R(1) - gs; }}
        let li = g_val[i]; let lj = g_val[j];
        let gap = lj - li;
        let num = s + rm * lj; let numt = s + rm * li;
        let sep = r_abs(gap) > delta && r_abs(num) < r_abs(gap) * tau && r_abs(numt) < r_abs(gap) * tau;
        var v = rm * R(0.5);
        if (sep) {{ v = num / gap; }}
        SCR[sh + e] = v;
    }}
    storageBarrier(); workgroupBarrier();
{_post_rank("g_val", False)}
    for (var i = lid; i < n; i += {wg}u) {{ WO[b * n + g_rank[i]] = {it}(g_val[i]); }}
    if (P[4] == 0u) {{ return; }}
    // X (I + E), written in rank order
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        var acc2 = SCR[sx + e];
        for (var k = 0u; k < n; k++) {{ acc2 += SCR[sx + i * n + k] * SCR[sh + k * n + j]; }}
        VO[b * nn + i * n + g_rank[j]] = {it}(acc2);
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def post_svd_record(t: str, it: str) -> Launch:
    return record(f"linalg_eigen_post_svd_{it}",
                  [("A", it, False), ("AJ", it, False), ("VJ", it, False), ("SCR", "R", True), ("SO", it, True),
                   ("UO", it, True), ("VO", it, True)], ("nz", "n", "offA", "tau", "vectors"), POST_WG)


def render_post_svd(t: str, it: str) -> str:
    """Bindings A (read, the square input matrices), AJ, VJ (read: ojac's A V and V,
    each column contiguous), SCR (7 n x n slots of the working precision R per
    matrix), SO (singular values descending), UO, VO (their vectors, row-major);
    all but SCR of the input type ``it``; P: matrices, n (<= POST_MAX), A offset, tau
    as f32 bits, vectors.

    The SVD's refinement step as ``render_refine_svd`` describes it, with U the unit
    columns of Jacobi's A V and its products (A V, U^T A V, U^T U, V^T V, U F, V G)
    done by the workgroup on L2-resident slots, then the values ranked and values and
    vectors written in order: svd of a small real square matrix (the R of a tall one)
    is then the ojac dispatch and this one."""
    wg = POST_WG
    decls = post_svd_record(t, it).declarations()
    decls += _post_common(t, it)
    body = _post_head(wg)
    body += f"""    let n = P[1]; let nn = n * n;
    let su = b * 7u * nn; let sv = su + nn; let sa = sv + nn; let st = sa + nn; let suu = st + nn;
    let svv = suu + nn; let sgg = svv + nn;
    let a0 = P[2] + b * nn; let j0 = b * nn;
    let tau = R(bitcast<f32>(P[3]));
    for (var j = lid; j < n; j += {wg}u) {{
        var s2 = R(0);
        for (var i = 0u; i < n; i++) {{ let x = R(AJ[j0 + j * n + i]); s2 += x * x; }}
        g_val[j] = r_sqrt(s2);
    }}
    workgroupBarrier();
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        SCR[sv + e] = R(VJ[j0 + j * n + i]);
        let nj = g_val[j];
        var u = R(0);
        if (nj > R(0)) {{ u = R(AJ[j0 + j * n + i]) / nj; }}
        SCR[su + e] = u;
    }}
    storageBarrier(); workgroupBarrier();
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        var acc = R(0);
        for (var k = 0u; k < n; k++) {{ acc += R(A[a0 + i * n + k]) * SCR[sv + k * n + j]; }}
        SCR[sa + e] = acc;
    }}
    storageBarrier(); workgroupBarrier();
{_post_mm("st", "su", "sa", True)}
{_post_mm("suu", "su", "su", True)}
{_post_mm("svv", "sv", "sv", True)}
    for (var i = lid; i < n; i += {wg}u) {{
        let d = i * n + i;
        g_val[i] = SCR[st + d] / (R(1) - ((R(1) - SCR[suu + d]) + (R(1) - SCR[svv + d])) * R(0.5));
    }}
    workgroupBarrier();
    // F into the slot of A V, G into its own
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        let ij = i * n + j; let ji = j * n + i;
        let si = g_val[i]; let sj = g_val[j];
        let dg = select(R(0), R(1), i == j);
        let r = dg - (SCR[suu + ij] + SCR[suu + ji]) * R(0.5);
        let q = dg - (SCR[svv + ij] + SCR[svv + ji]) * R(0.5);
        let den = sj * sj - si * si;
        let lim = r_abs(den) * tau;
        let a = SCR[st + ij] + r * sj; let bb = SCR[st + ji] + q * sj;
        let fn1 = a * sj + bb * si; let gn1 = a * si + bb * sj;
        let at = SCR[st + ji] + r * si; let bt = SCR[st + ij] + q * si;
        let fn2 = at * si + bt * sj; let gn2 = at * sj + bt * si;
        let ok = r_abs(fn1) < lim && r_abs(gn1) < lim && r_abs(fn2) < lim && r_abs(gn2) < lim;
        var f = r * R(0.5); var g = q * R(0.5);
        if (ok) {{ f = fn1 / den; g = gn1 / den; }}
        SCR[sa + e] = f; SCR[sgg + e] = g;
    }}
    storageBarrier(); workgroupBarrier();
{_post_rank("g_val", True)}
    for (var i = lid; i < n; i += {wg}u) {{ SO[b * n + g_rank[i]] = {it}(g_val[i]); }}
    if (P[4] == 0u) {{ return; }}
    // U (I + F), V (I + G), written in rank order
    for (var e = lid; e < nn; e += {wg}u) {{
        let i = e / n; let j = e % n;
        var au = SCR[su + e]; var av = SCR[sv + e];
        for (var k = 0u; k < n; k++) {{
            au += SCR[su + i * n + k] * SCR[sa + k * n + j];
            av += SCR[sv + i * n + k] * SCR[sgg + k * n + j];
        }}
        UO[b * nn + i * n + g_rank[j]] = {it}(au);
        VO[b * nn + i * n + g_rank[j]] = {it}(av);
    }}
}}""".split("\n")
    return _finish(decls, t, body)
