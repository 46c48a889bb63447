"""WGSL kernels of the linalg extension: batched factorizations, one workgroup per matrix.

Each kernel copies its (contiguous) input matrix into a device work area and runs the
factorization there with 64 threads, ``storageBarrier()`` between dependent steps. That
suits the small and medium matrices these functions usually see in batches; large ones
run the blocked, matmul-bound drivers of ``wgarray/_kernels/linalg_blocked.py`` instead
(Cholesky always, LU past order 64, CholeskyQR for tall and large square qr).

Scalar code is written once over ``S`` (the element type: f32, f64, vec2<f32>,
vec2<f64>) and ``R`` (its real type) through the ``s_*`` helpers of ``prelude``.

Kernels:
  lu      Gaussian elimination with partial pivoting on [A | B]: solve (B given),
          inv (B = I), det/slogdet (sign and log|det| per matrix)
  qr      Householder QR; real: LAPACK's signs (dgeqrf's Q and R), complex: R's
          diagonal made real and non-negative; row-blocked phases for tall matrices
  svd     one-sided (Hestenes) Jacobi, round-robin column pairs in parallel; complex
          input runs as the real 2m x 2n embedding [[X, -Y], [Y, X]] whose singular
          values come in equal pairs; 'eigh' shifts a Hermitian A by ||A||_F so that
          its SVD is its eigendecomposition; scaled by a power of two first; a tall A
          (m > n) runs as the n x n R of A = QR (``linalg._jacobi``)
  eig     general eigenproblem in complex arithmetic: Householder Hessenberg reduction,
          complex single-shift implicit QR to the Schur form, eigenvectors by
          back-substitution times the accumulated Q
"""
from __future__ import annotations

import re

from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew

WG = 64


def prelude(t: str) -> str:
    """``S``/``R`` aliases and the scalar helpers for compute tag ``t``."""
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    sq = "f64_sqrt(x)" if r == "f64" else "sqrt(x)"
    lines = [f"alias R = {r};",
             f"fn r_sqrt(x: R) -> R {{ return {sq}; }}",
             f"fn r_log(x: R) -> R {{ return {r}_log(x); }}",
             "fn r_abs(x: R) -> R { return select(-x, x, x >= R(0)); }",
             "fn r_neginf() -> R { return " + ("-f64_inf()" if r == "f64" else "-f32_inf()") + "; }"]
    if t in ("c64", "c128"):
        lines += [f"alias S = vec2<{r}>;",
                  "fn s_mul(a: S, b: S) -> S { return S(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }",
                  "fn s_conj(a: S) -> S { return S(a.x, -a.y); }",
                  "fn s_abs2(a: S) -> R { return a.x * a.x + a.y * a.y; }",
                  "fn s_div(a: S, b: S) -> S { let sc = max(r_abs(b.x), r_abs(b.y)); let bs = b / sc; "
                  "return s_mul(a / sc, s_conj(bs)) / s_abs2(bs); }",
                  "fn s_re(a: S) -> R { return a.x; }",
                  "fn s_real(x: R) -> S { return S(x, R(0)); }",
                  "fn s_scale(a: S, x: R) -> S { return a * x; }"]
    else:
        lines += [f"alias S = {r};",
                  "fn s_mul(a: S, b: S) -> S { return a * b; }",
                  "fn s_conj(a: S) -> S { return a; }",
                  "fn s_abs2(a: S) -> R { return a * a; }",
                  "fn s_div(a: S, b: S) -> S { return a / b; }",
                  "fn s_re(a: S) -> R { return a; }",
                  "fn s_real(x: R) -> S { return x; }",
                  "fn s_scale(a: S, x: R) -> S { return a * x; }"]
    if t in ("c64", "c128"):
        lines.append("fn s_abs(a: S) -> R { let ax = r_abs(a.x); let ay = r_abs(a.y); let mx = max(ax, ay); "
                     "if (mx == R(0)) { return R(0); } let q = min(ax, ay) / mx; return mx * r_sqrt(R(1) + q * q); }")
        lines.append("fn s_phase(a: S) -> S { let m = s_abs(a); "
                     "if (m == R(0)) { return s_real(R(1)); } return a / m; }")
    else:
        lines.append("fn s_abs(a: S) -> R { return r_abs(a); }")
        # exactly +-1 (a / |a| is not, where division is not correctly rounded)
        lines.append(f"fn s_phase(a: S) -> S {{ if ({r}_isnan(a)) {{ return a; }} "
                     "return select(S(-1), S(1), a >= S(0)); }")
    return "\n".join(lines) + "\n"


def _finish(decls: list[str], t: str, body: list[str]) -> str:
    # The kernels are written over S and R; the aliases are spelled ST/RT in WGSL so
    # they cannot clash with locals of the helper libraries.
    code = _alias(prelude(t) + "\n".join(body) + "\n")
    return _alias("\n".join(decls)) + "\n" + ew.library(code) + "\n" + code


def _alias(code: str) -> str:
    return re.sub(r"\bS\b", "ST", re.sub(r"\bR\b", "RT", code))


def _head(extra: str = "") -> list[str]:
    return [f"@compute @workgroup_size({WG})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }",
            extra]


def record(name: str, bindings, params, workgroup: int = WG) -> Launch:
    """A factorization kernel's launch record: its storage ``bindings`` as (name, element
    type, written) triples in binding order (element types S and R as the kernels spell
    them), then its parameter words, one u32 each, named in order (no f64 parameters)."""
    return Launch(name, tuple(Binding(n, elem, write) for n, elem, write in bindings),
                  tuple(Field(p, "u32", i) for i, p in enumerate(params)), False, workgroup)


# ------------------------------------------------------------------ LU
#
# lavapipe ends every loop of an invocation once 65535 loop iterations (all loops
# together) have run, silently. So every kernel below runs in phases over several
# dispatches of one pipeline, P holding (phase, a, c): a range of elements, columns or
# Jacobi rounds per dispatch, chosen on the host (``_kernels/linalg.py``) so that no
# invocation iterates more than about 40000 times; the state between dispatches lives
# in device buffers. On GPUs the split only costs a few dispatches.

def _tree(arr: str, cond: str, body: str, width: int = WG) -> str:
    """A ``width``-way tree reduction over workgroup array ``arr`` (result in arr[0])."""
    return f"""    for (var st = {width // 2}u; st > 0u; st >>= 1u) {{
        if (lid < st) {{ let o = lid + st; if ({cond}) {{ {body} }} }}
        workgroupBarrier();
    }}"""


def lu_record(t: str, mode: str) -> Launch:
    bindings = [("A", "S", False)] + ([("B", "S", False)] if mode == "solve" else [])
    bindings += [("W", "S", True), ("X", "S", True), ("FL", "u32", True)]
    return record(f"linalg_lu_{t}_{mode}", bindings, ("nbatch", "n", "nrhs", "offA", "offB", "phase", "a", "c"))


def render_lu(t: str, mode: str) -> str:
    """mode 'solve': bindings A, B, W, X, FL; 'inv': A, W, X, FL; 'det': A, W, D, FL
    (D: sign, log|det|, det per matrix; FL: u32 per matrix, the parity of the row swaps).
    P: nbatch, n, nrhs, offA, offB, phase, a, c. Phases: 0 copies elements a..c-1 of
    [A | B] into W; 1 eliminates columns a..c-1 (partial pivoting); 2 back-substitutes
    rows n-1-a down to n-c; 3 writes elements a..c-1 of X (det: folds pivots a..c-1
    into D, thread 0, in order)."""
    decls = lu_record(t, mode).declarations()
    decls += [f"var<workgroup> pv_v: array<R, {WG}>;", f"var<workgroup> pv_i: array<u32, {WG}>;"]
    body = _head()
    if mode == "solve":
        fill = "v = B[P[4] + b * n * r + i * r + (j - n)];"
    elif mode == "inv":
        fill = "v = select(s_real(R(0)), s_real(R(1)), j - n == i);"
    else:
        fill = ""
    tree = _tree("pv_v", "pv_i[o] < n && (pv_i[lid] >= n || pv_v[o] > pv_v[lid] || "
                 "(pv_v[o] == pv_v[lid] && pv_i[o] < pv_i[lid]))",
                 "pv_v[lid] = pv_v[o]; pv_i[lid] = pv_i[o];")
    body += f"""    let n = P[1]; let r = P[2]; let c = n + r; let w0 = b * n * c;
    let phase = P[5]; let pa = P[6]; let pc = P[7];
    if (phase == 0u) {{
    if (pa == 0u && lid == 0u) {{ FL[b] = 0u; }}
    for (var e = pa + lid; e < min(pc, n * c); e += {WG}u) {{
        let i = e / c; let j = e % c;
        var v = s_real(R(0));
        if (j < n) {{ v = A[P[3] + b * n * n + i * n + j]; }} else {{ {fill} }}
        W[w0 + e] = v;
    }}
    }} else if (phase == 1u) {{
    for (var k = pa; k < min(pc, n); k++) {{
        var bi = n; var bv = R(-1);
        for (var i = k + lid; i < n; i += {WG}u) {{
            let a = s_abs2(W[w0 + i * c + k]);
            if (bi == n || a > bv) {{ bv = a; bi = i; }}
        }}
        pv_v[lid] = bv; pv_i[lid] = bi;
        workgroupBarrier();
{tree}
        let p = workgroupUniformLoad(&pv_i[0]);
        if (p != k) {{
            if (lid == 0u) {{ FL[b] = FL[b] ^ 1u; }}
            for (var j = lid; j < c; j += {WG}u) {{
                let tmp = W[w0 + k * c + j]; W[w0 + k * c + j] = W[w0 + p * c + j]; W[w0 + p * c + j] = tmp;
            }}
        }}
        storageBarrier();
        let pv = W[w0 + k * c + k];
        let rows = n - k - 1u; let cols = c - k - 1u;
        for (var e = lid; e < rows * cols; e += {WG}u) {{
            let i = k + 1u + e / cols; let j = k + 1u + e % cols;
            W[w0 + i * c + j] = W[w0 + i * c + j] - s_mul(s_div(W[w0 + i * c + k], pv), W[w0 + k * c + j]);
        }}
        storageBarrier();
    }}""".split("\n")
    if mode == "det":
        body += """    } else if (phase == 3u) {
    if (lid == 0u) {
        var sgn = X[3u * b]; var logabs = s_re(X[3u * b + 1u]); var dprod = X[3u * b + 2u];
        if (pa == 0u) { sgn = s_real(select(R(1), R(-1), (FL[b] & 1u) == 1u)); logabs = R(0); dprod = sgn; }
        for (var k = pa; k < min(pc, n); k++) {
            if (s_abs2(sgn) == R(0)) { break; }
            let d = W[w0 + k * c + k];
            let m = s_abs(d);
            dprod = s_mul(dprod, d);
            if (m == R(0)) { sgn = s_real(R(0)); logabs = r_neginf(); break; }
            sgn = s_mul(sgn, s_phase(d));
            logabs += r_log(m);
        }
        X[3u * b] = sgn;
        X[3u * b + 1u] = s_real(logabs);
        X[3u * b + 2u] = dprod;
    }
    }
}""".split("\n")
    else:
        body += f"""    }} else if (phase == 2u) {{
    for (var kk = pa; kk < min(pc, n); kk++) {{
        let k = n - 1u - kk;
        let pv = W[w0 + k * c + k];
        for (var j = lid; j < r; j += {WG}u) {{ W[w0 + k * c + n + j] = s_div(W[w0 + k * c + n + j], pv); }}
        storageBarrier();
        for (var e = lid; e < k * r; e += {WG}u) {{
            let i = e / r; let j = e % r;
            W[w0 + i * c + n + j] = W[w0 + i * c + n + j] - s_mul(W[w0 + i * c + k], W[w0 + k * c + n + j]);
        }}
        storageBarrier();
    }}
    }} else if (phase == 3u) {{
    for (var e = pa + lid; e < min(pc, n * r); e += {WG}u) {{ X[b * n * r + e] = W[w0 + (e / r) * c + n + e % r]; }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ QR

def qr_record(t: str) -> Launch:
    return record(f"linalg_qr_{t}", [("A", "S", False), ("T", "S", True), ("Q", "S", True), ("Rm", "S", True)],
                  ("nbatch", "m", "n", "kk", "qc", "rr", "offA", "phase", "a", "c", "k", "j0", "j1"))


def render_qr(t: str) -> str:
    """Bindings A, T (work: m*n matrix, m*kk reflectors, kk taus as S), Q (m x qc),
    R (rr x n); P: nbatch, m, n, kk, qc, rr, offA, phase, a, c.

    Phases: 0 copies elements a..c-1 of A into T; 1 Householder reflectors of columns
    a..c-1; 2 sets elements a..c-1 of Q to the identity; 3 applies reflectors kk-1-a
    down to kk-c to Q; 4 writes elements a..c-1 of [Q | R] (complex: phase-fixed, see
    diag_phase).

    Phases 1 and 3 loop over all rows below the diagonal in one invocation (a thread per
    column); for tall matrices, where that passes the loop budget, the host runs instead
    the row-blocked phases below, P[10] = k the column (reflector), rows a..c-1 (the
    first block starts at row k and resets the sums it accumulates), P[11..12] = j0, j1
    a range of columns; the state (max |x|, sum of squares, x_k, -, then a dot product
    per column) follows the taus in T:
      5 max |T[i, k]| over the rows;  6 sum of |T[i, k] / max|^2 over the rows;
      7 the reflector's v over the rows (with T[k, k] and tau when row k is in them);
      8 / 9 the dot products v^H T[:, j] of columns j0..j1-1 (j > k) over the rows, then
        T[i, j] -= v_i tau dot_j;  10 / 11 the same on Q's columns j0..j1-1 (phase 3's
        work for reflector k).

    The reflector of column k is LAPACK's zlarfg form H = I - tau v v^H with v_k = 1,
    |v_i| <= 1 and tau = 1 + |x_k| / ||x|| in [1, 2]; ||x|| is computed scaled by
    max |x_i| (no overflow of the squares for entries past 1e19 in f32, no underflow of
    tiny ones)."""
    decls = qr_record(t).declarations()
    decls += [f"var<workgroup> g_red: array<R, {WG}>;", f"var<workgroup> g_sred: array<S, {WG}>;"]
    body = _head()
    # diag_phase(R_kk): the unit that phase 4 takes out of R's row k and puts into Q's
    # column k. Real: none, so Q and R are dgeqrf's (NumPy's, SciPy's, CuPy's), signs
    # included. Complex: R_kk's phase, a real non-negative diagonal (the reflectors here
    # have real tau, zgeqrf's complex ones, so its signs are not reproducible this way).
    if t in ("c64", "c128"):
        body = ["fn s_is_real(a: S) -> bool { return a.y == R(0); }",
                "fn diag_phase(a: S) -> S { return s_phase(a); }"] + body
    else:
        body = ["fn s_is_real(a: S) -> bool { return true; }",
                "fn diag_phase(a: S) -> S { return S(1); }"] + body
    mx = _tree("g_red", "true", "g_red[lid] = max(g_red[lid], g_red[o]);")
    ssm = _tree("g_sred", "true", "g_sred[lid] = g_sred[lid] + g_sred[o];")
    sm = _tree("g_red", "true", "g_red[lid] = g_red[lid] + g_red[o];")
    body += f"""    let m = P[1]; let n = P[2]; let kk = P[3]; let qc = P[4]; let rr = P[5];
    let phase = P[7]; let pa = P[8]; let pc = P[9];
    let t0 = b * (m * n + m * kk + kk + 4u + max(n, qc));
    let v0 = t0 + m * n; let be0 = v0 + m * kk; let x0s = be0 + kk; let sj0 = x0s + 4u;
    let ck = P[10]; let first = pa <= ck;
    let ra = max(pa, ck); let rc = min(pc, m);
    let q0 = b * m * qc;
    if (phase == 0u) {{
    for (var e = pa + lid; e < min(pc, m * n); e += {WG}u) {{ T[t0 + e] = A[P[6] + b * m * n + e]; }}
    }} else if (phase == 1u) {{
    for (var k = pa; k < min(pc, kk); k++) {{
        var bmax = R(0);
        for (var i = k + 1u + lid; i < m; i += {WG}u) {{ bmax = max(bmax, s_abs(T[t0 + i * n + k])); }}
        g_red[lid] = bmax;
        workgroupBarrier();
{mx}
        bmax = g_red[0];
        workgroupBarrier();
        let amax = max(bmax, s_abs(T[t0 + k * n + k]));
        var ss = R(0);
        for (var i = k + lid; i < m; i += {WG}u) {{
            if (amax > R(0)) {{ ss += s_abs2(T[t0 + i * n + k] / amax); }}
        }}
        g_red[lid] = ss;
        workgroupBarrier();
{sm}
        let nrm = amax * r_sqrt(g_red[0]);
        workgroupBarrier();
        let x0 = T[t0 + k * n + k];
        let ax0 = s_abs(x0);
        let vk = s_scale(s_phase(x0), ax0 + nrm);
        // as LAPACK's zlarfg: no reflection (tau = 0, R's entry x_k) where x_k is real
        // and nothing lies below it
        let refl = nrm > R(0) && (bmax > R(0) || !s_is_real(x0));
        for (var i = lid; i < m; i += {WG}u) {{
            var v = s_real(select(R(0), R(1), i == k && refl));
            if (i > k && refl) {{ v = s_div(T[t0 + i * n + k], vk); }}
            T[v0 + i * kk + k] = v;
        }}
        let tau = select(R(0), R(1) + ax0 / nrm, refl);
        storageBarrier();
        for (var j = k + 1u + lid; j < n; j += {WG}u) {{
            if (!refl) {{ break; }}
            var s = s_real(R(0));
            for (var i = k; i < m; i++) {{ s += s_mul(s_conj(T[v0 + i * kk + k]), T[t0 + i * n + j]); }}
            s = s_scale(s, tau);
            for (var i = k; i < m; i++) {{ T[t0 + i * n + j] = T[t0 + i * n + j] - s_mul(T[v0 + i * kk + k], s); }}
        }}
        if (lid == 0u) {{
            T[be0 + k] = s_real(tau);
            if (refl) {{ T[t0 + k * n + k] = s_scale(s_phase(x0), -nrm); }}
        }}
        storageBarrier();
    }}
    }} else if (phase == 2u) {{
    for (var e = pa + lid; e < min(pc, m * qc); e += {WG}u) {{
        Q[q0 + e] = select(s_real(R(0)), s_real(R(1)), e / qc == e % qc);
    }}
    }} else if (phase == 3u) {{
    for (var h = pa; h < min(pc, kk); h++) {{
        let k = kk - 1u - h;
        let beta = s_re(T[be0 + k]);
        for (var j = lid; j < qc; j += {WG}u) {{
            if (beta == R(0)) {{ break; }}
            var s = s_real(R(0));
            for (var i = k; i < m; i++) {{ s += s_mul(s_conj(T[v0 + i * kk + k]), Q[q0 + i * qc + j]); }}
            s = s_scale(s, beta);
            for (var i = k; i < m; i++) {{ Q[q0 + i * qc + j] = Q[q0 + i * qc + j] - s_mul(T[v0 + i * kk + k], s); }}
        }}
        storageBarrier();
    }}
    }} else if (phase == 5u) {{
    var bmax = R(0);  // over the rows below the diagonal; row k's |x_k| joins on the host thread
    for (var i = max(ra, ck + 1u) + lid; i < rc; i += {WG}u) {{ bmax = max(bmax, s_abs(T[t0 + i * n + ck])); }}
    g_red[lid] = bmax;
    workgroupBarrier();
{mx}
    if (lid == 0u) {{
        // slot 0: max |x_i| over the column, slot 3: max below the diagonal
        if (first) {{
            let x0 = T[t0 + ck * n + ck];
            T[x0s] = s_real(max(g_red[0], s_abs(x0))); T[x0s + 2u] = x0; T[x0s + 3u] = s_real(g_red[0]);
        }} else {{
            T[x0s] = s_real(max(s_re(T[x0s]), g_red[0])); T[x0s + 3u] = s_real(max(s_re(T[x0s + 3u]), g_red[0]));
        }}
    }}
    }} else if (phase == 6u) {{
    let amax = s_re(T[x0s]);
    var ss = R(0);
    for (var i = ra + lid; i < rc; i += {WG}u) {{
        if (amax > R(0)) {{ ss += s_abs2(T[t0 + i * n + ck] / amax); }}
    }}
    g_red[lid] = ss;
    workgroupBarrier();
{sm}
    if (lid == 0u) {{ T[x0s + 1u] = s_real(select(s_re(T[x0s + 1u]), R(0), first) + g_red[0]); }}
    }} else if (phase == 7u) {{
    let nrm = s_re(T[x0s]) * r_sqrt(s_re(T[x0s + 1u]));
    let x0 = T[x0s + 2u];
    let ax0 = s_abs(x0);
    let vk = s_scale(s_phase(x0), ax0 + nrm);
    let refl = nrm > R(0) && (s_re(T[x0s + 3u]) > R(0) || !s_is_real(x0));  // as phase 1
    for (var i = ra + lid; i < rc; i += {WG}u) {{
        var v = s_real(select(R(0), R(1), i == ck && refl));
        if (i > ck && refl) {{ v = s_div(T[t0 + i * n + ck], vk); }}
        T[v0 + i * kk + ck] = v;
        if (i == ck && refl) {{ T[t0 + ck * n + ck] = s_scale(s_phase(x0), -nrm); }}
    }}
    if (first && lid == 0u) {{ T[be0 + ck] = s_real(select(R(0), R(1) + ax0 / nrm, refl)); }}
    }} else if (phase == 8u) {{
    for (var j = max(P[11], ck + 1u); j < min(P[12], n); j++) {{
        var s = s_real(R(0));
        for (var i = ra + lid; i < rc; i += {WG}u) {{ s += s_mul(s_conj(T[v0 + i * kk + ck]), T[t0 + i * n + j]); }}
        g_sred[lid] = s;
        workgroupBarrier();
{ssm}
        if (lid == 0u) {{ T[sj0 + j] = select(T[sj0 + j], s_real(R(0)), first) + g_sred[0]; }}
        workgroupBarrier();
    }}
    }} else if (phase == 9u) {{
    let tau = s_re(T[be0 + ck]);
    if (tau != R(0)) {{
        for (var i = ra + lid; i < rc; i += {WG}u) {{
            let vi = s_scale(T[v0 + i * kk + ck], tau);
            for (var j = max(P[11], ck + 1u); j < min(P[12], n); j++) {{
                T[t0 + i * n + j] = T[t0 + i * n + j] - s_mul(vi, T[sj0 + j]);
            }}
        }}
    }}
    }} else if (phase == 10u) {{
    for (var j = max(P[11], 0u); j < min(P[12], qc); j++) {{
        var s = s_real(R(0));
        for (var i = ra + lid; i < rc; i += {WG}u) {{ s += s_mul(s_conj(T[v0 + i * kk + ck]), Q[q0 + i * qc + j]); }}
        g_sred[lid] = s;
        workgroupBarrier();
{ssm}
        if (lid == 0u) {{ T[sj0 + j] = select(T[sj0 + j], s_real(R(0)), first) + g_sred[0]; }}
        workgroupBarrier();
    }}
    }} else if (phase == 11u) {{
    let tau = s_re(T[be0 + ck]);
    if (tau != R(0)) {{
        for (var i = ra + lid; i < rc; i += {WG}u) {{
            let vi = s_scale(T[v0 + i * kk + ck], tau);
            for (var j = max(P[11], 0u); j < min(P[12], qc); j++) {{
                Q[q0 + i * qc + j] = Q[q0 + i * qc + j] - s_mul(vi, T[sj0 + j]);
            }}
        }}
    }}
    }} else {{
    let r0 = b * rr * n;
    for (var e = pa + lid; e < min(pc, m * qc + rr * n); e += {WG}u) {{
        if (e < m * qc) {{
            let j = e % qc;
            if (j < kk) {{ Q[q0 + e] = s_mul(Q[q0 + e], diag_phase(T[t0 + j * n + j])); }}
        }} else {{
            let f = e - m * qc;
            let i = f / n; let j = f % n;
            var v = s_real(R(0));
            if (i < kk && j >= i) {{ v = s_mul(s_conj(diag_phase(T[t0 + i * n + i])), T[t0 + i * n + j]); }}
            Rm[r0 + f] = v;
        }}
    }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ Jacobi SVD / eigh

# the Jacobi kernel's outputs by mode (values, then U, then V)
_SVD_OUTPUTS = {"svd": ["Sv", "U", "Vo"], "vals": ["Sv"], "eigh": ["Sv", "Vo"], "eigvals": ["Sv"]}


def svd_record(t: str, mode: str) -> Launch:
    names = _SVD_OUTPUTS[mode]
    bindings = [("A", "S", False), ("G", "R", True), ("V", "R", True), ("O", "u32", True), ("FL", "u32", True)]
    bindings += [(nm, "R" if nm == "Sv" else "S", True) for nm in names]
    return record(f"linalg_jacobi_{t}_{mode}", bindings, ("nbatch", "m", "n", "offA", "phase", "a", "c", "p0", "p1"))


def render_svd(t: str, mode: str) -> str:
    """mode 'svd' (bindings A, G, V, O, FL, Sv, U, Vo), 'vals' (A, G, V, O, FL, Sv),
    'eigh' (A, G, V, O, FL, Sv, Vo), 'eigvals' (A, G, V, O, FL, Sv). A is batch x m x n
    with m >= n (the caller transposes; for m > n the caller runs it on the n x n R of
    A = QR). G per matrix: the mm x nn working matrix, nn column norms, then (sum of
    squares, shift, max |g|, scale); FL per matrix: (converged, rotated in this sweep).
    P: nbatch, m, n, offA, phase, a, c, p0, p1.

    Phases: 0 loads elements a..c-1 of [G | V = I]; 1 ('eigh'/'eigvals') adds the
    squares of elements a..c-1 of G into the sum; 2 shifts the diagonal by the
    Frobenius norm; 3 runs Jacobi rounds a..c-1 on column pairs p0..p1-1 (round r is
    round r % (n2 - 1) of sweep r / (n2 - 1); a sweep starting after one that rotated
    nothing marks the matrix converged and later rounds return at once; the host
    splits a round's pairs over dispatches only where one round passes the loop
    budget); 4 column norms of columns a..c-1; 5 the descending rank of columns a..c-1
    into O; 6 writes elements a..c-1 of [values | U | V], the values scaled back.
    Phases 7 (max |g| over elements a..c-1 of G) and 8 (scale elements a..c-1 of G by
    the power of two sc that brings that max into [1/2, 2), within 2^-96..2^96 in f32
    and 2^-896..2^896 in f64; exact) run right after 0, so that the squares and
    sums of squares neither overflow (f32 entries past 1e19) nor underflow."""
    cplx = t in ("c64", "c128")
    r = {"c64": "f32", "c128": "f64"}.get(t, t)
    names = _SVD_OUTPUTS[mode]
    decls = svd_record(t, mode).declarations()
    decls.append("var<workgroup> g_done: u32;")
    decls.append(f"var<workgroup> g_red: array<R, {WG}>;")
    eps = "R(1.2e-7)" if t in ("f32", "c64") else "R(2.3e-16)"
    f = 2 if cplx else 1
    if cplx:
        load = """let bi = i % m; let bj = j % n; let a = A[P[3] + b * m * n + bi * n + bj];
            v = a.x;
            if ((i < m) != (j < n)) { v = select(a.y, -a.y, i < m); }"""
    else:
        load = "v = A[P[3] + b * m * n + i * n + j];"
    eig = mode in ("eigh", "eigvals")
    sm = _tree("g_red", "true", "g_red[lid] = g_red[lid] + g_red[o];")
    mxt = _tree("g_red", "true", "g_red[lid] = max(g_red[lid], g_red[o]);")
    f64 = r == "f64"
    rmax = "R(1.7976931348623157e308)" if f64 else "R(3.4028234e38)"
    lo = f"R({2.0 ** -896!r})" if f64 else f"R({2.0 ** -96!r})"
    hi = f"R({2.0 ** 896!r})" if f64 else f"R({2.0 ** 96!r})"
    body = _head()
    body += f"""    let m = P[1]; let n = P[2]; let mm = {f}u * m; let nn = {f}u * n;
    let g0 = b * (mm * nn + nn + 4u); let sg0 = g0 + mm * nn; let x0 = sg0 + nn;
    let vv0 = b * nn * nn; let o0 = b * nn;
    let phase = P[4]; let pa = P[5]; let pc = P[6];
    let n2 = nn + (nn & 1u);
    let npairs = n2 / 2u;
    if (phase == 0u) {{
    if (pa == 0u && lid == 0u) {{ FL[2u * b] = 0u; FL[2u * b + 1u] = 1u; G[x0] = R(0); G[x0 + 1u] = R(0); G[x0 + 2u] = R(0); G[x0 + 3u] = R(1); }}
    for (var e = pa + lid; e < min(pc, mm * nn + nn * nn); e += {WG}u) {{
        if (e < mm * nn) {{
            let i = e / nn; let j = e % nn;
            var v = R(0);
            {load}
            G[g0 + e] = v;
        }} else {{
            let f = e - mm * nn;
            V[vv0 + f] = select(R(0), R(1), f / nn == f % nn);
        }}
    }}
    }} else if (phase == 1u) {{
    var s2 = R(0);
    for (var e = pa + lid; e < min(pc, mm * nn); e += {WG}u) {{ s2 += G[g0 + e] * G[g0 + e]; }}
    g_red[lid] = s2;
    workgroupBarrier();
{sm}
    if (lid == 0u) {{ G[x0] = G[x0] + g_red[0]; }}
    }} else if (phase == 2u) {{
    let shift = r_sqrt(G[x0] / R({f}));
    for (var i = lid; i < nn; i += {WG}u) {{ G[g0 + i * nn + i] += shift; }}
    if (lid == 0u) {{ G[x0 + 1u] = shift; }}
    }} else if (phase == 3u) {{
    for (var gr = pa; gr < pc; gr++) {{
        let rd = gr % (n2 - 1u);
        if (lid == 0u) {{
            var done = FL[2u * b];
            if (rd == 0u && done == 0u && P[7] == 0u) {{
                if (FL[2u * b + 1u] == 0u) {{ done = 1u; FL[2u * b] = 1u; }}
                FL[2u * b + 1u] = 0u;
            }}
            g_done = done;
        }}
        storageBarrier();
        if (workgroupUniformLoad(&g_done) != 0u) {{ break; }}
        for (var pi = P[7] + lid; pi < min(P[8], npairs); pi += {WG}u) {{
            var p = n2 - 1u; var q = rd;
            if (pi > 0u) {{ p = (rd + pi) % (n2 - 1u); q = (rd + n2 - 1u - pi) % (n2 - 1u); }}
            if (p < nn && q < nn) {{
                var al = R(0); var be = R(0); var ga = R(0);
                for (var i = 0u; i < mm; i++) {{
                    let gp = G[g0 + i * nn + p]; let gq = G[g0 + i * nn + q];
                    al += gp * gp; be += gq * gq; ga += gp * gq;
                }}
                if (r_abs(ga) > {eps} * r_sqrt(al * be) && ga != R(0)) {{
                    let zeta = (be - al) / (R(2) * ga);
                    let tt = select(R(-1), R(1), zeta >= R(0)) / (r_abs(zeta) + r_sqrt(R(1) + zeta * zeta));
                    let cs = R(1) / r_sqrt(R(1) + tt * tt);
                    let sn = cs * tt;
                    for (var i = 0u; i < mm; i++) {{
                        let gp = G[g0 + i * nn + p]; let gq = G[g0 + i * nn + q];
                        G[g0 + i * nn + p] = cs * gp - sn * gq; G[g0 + i * nn + q] = sn * gp + cs * gq;
                    }}
                    for (var i = 0u; i < nn; i++) {{
                        let vp = V[vv0 + i * nn + p]; let vq = V[vv0 + i * nn + q];
                        V[vv0 + i * nn + p] = cs * vp - sn * vq; V[vv0 + i * nn + q] = sn * vp + cs * vq;
                    }}
                    FL[2u * b + 1u] = 1u;
                }}
            }}
        }}
        storageBarrier();
    }}
    }} else if (phase == 7u) {{
    var mx = R(0);
    for (var e = pa + lid; e < min(pc, mm * nn); e += {WG}u) {{ mx = max(mx, r_abs(G[g0 + e])); }}
    g_red[lid] = mx;
    workgroupBarrier();
{mxt}
    if (lid == 0u) {{ G[x0 + 2u] = max(G[x0 + 2u], g_red[0]); }}
    }} else if (phase == 8u) {{
    var sc = R(1);
    let amax = G[x0 + 2u];
    if (amax > R(0) && amax <= {rmax}) {{
        var mg = amax;
        while (mg >= R(65536) && sc > {lo}) {{ mg *= R(1.52587890625e-05); sc *= R(1.52587890625e-05); }}
        while (mg >= R(2) && sc > {lo}) {{ mg *= R(0.5); sc *= R(0.5); }}
        while (mg < R(1.52587890625e-05) && sc < {hi}) {{ mg *= R(65536); sc *= R(65536); }}
        while (mg < R(0.5) && sc < {hi}) {{ mg *= R(2); sc *= R(2); }}
    }}
    if (pa == 0u && lid == 0u) {{ G[x0 + 3u] = sc; }}
    if (sc != R(1)) {{ for (var e = pa + lid; e < min(pc, mm * nn); e += {WG}u) {{ G[g0 + e] *= sc; }} }}
    }} else if (phase == 4u) {{
    for (var j = pa + lid; j < min(pc, nn); j += {WG}u) {{
        var s2 = R(0);
        for (var i = 0u; i < mm; i++) {{ s2 += G[g0 + i * nn + j] * G[g0 + i * nn + j]; }}
        G[sg0 + j] = r_sqrt(s2);
    }}
    }} else if (phase == 5u) {{
    for (var j = pa + lid; j < min(pc, nn); j += {WG}u) {{
        let vj = G[sg0 + j]; let nj = {r}_isnan(vj);
        var rank = 0u;
        for (var c = 0u; c < nn; c++) {{
            let vc = G[sg0 + c]; let nc = {r}_isnan(vc);
            var before = c < j;
            if (nc != nj) {{ before = nc; }} else if (!nc && vc != vj) {{ before = vc > vj; }}
            if (before) {{ rank += 1u; }}
        }}
        O[o0 + rank] = j;
    }}
    }} else {{""".split("\n")
    # output rank r (0..n) takes embedded column O[f*r] (descending); eigh: ascending
    rank = "(n - 1u - rr)" if eig else "rr"
    col = f"O[o0 + {f}u * {rank}]"
    sval = (f"(G[sg0 + {col}] - G[x0 + 1u])" if eig else f"G[sg0 + {col}]") + " / G[x0 + 3u]"
    outs = [("n", f"let rr = e; Sv[b * n + rr] = {sval};")]
    if "U" in names:
        uval = "S(G[g0 + i * nn + j], G[g0 + (i + m) * nn + j]) / sg" if cplx else "G[g0 + i * nn + j] / sg"
        outs.append(("m * n", f"""let i = e / n; let rr = e % n; let j = {col};
            let sg = G[sg0 + j];
            var u = s_real(R(0));
            if (sg > R(0)) {{ u = {uval}; }}
            U[b * m * n + e] = u;"""))
    if "Vo" in names:
        vval = "S(V[vv0 + i * nn + j], V[vv0 + (i + n) * nn + j])" if cplx else "V[vv0 + i * nn + j]"
        outs.append(("n * n", f"""let i = e / n; let rr = e % n; let j = {col};
            Vo[b * n * n + e] = {vval};"""))
    total = " + ".join(sz for sz, _ in outs)
    body.append(f"    for (var e0 = pa + lid; e0 < min(pc, {total}); e0 += {WG}u) {{")
    body.append("        var e = e0;")
    for i, (sz, code) in enumerate(outs):
        last = i == len(outs) - 1
        body.append(f"        if ({'true' if last else f'e < {sz}'}) {{")
        body.append("            " + code)
        body.append("            continue;")
        body.append("        }")
        if not last:
            body.append(f"        e -= {sz};")
    body.append("    }")
    body.append("    }")
    body.append("}")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ general eigenproblem

def eig_record(t: str, real_in: bool, vectors: bool, max_its: int) -> Launch:
    bindings = [("A", "R" if real_in else "S", False), ("W", "S", True), ("Lv", "S", True)]
    bindings += [("E", "S", True)] if vectors else []
    bindings += [("QS", "u32", True)]
    return record(f"linalg_eig_{t}_{real_in}_{vectors}_{max_its}", bindings, ("nbatch", "n", "offA", "phase", "a", "c"))


def render_eig(t: str, real_in: bool, vectors: bool, max_its: int) -> str:
    """Eigenvalues (and right eigenvectors) of a general square matrix, in complex
    arithmetic (``t`` is the complex tag c64/c128; real input is read as complex).

    Bindings A (input, R when ``real_in`` else S), W (work: H n*n, [Q n*n], hv n, one
    S of (scale, max|a|)), Lv (eigenvalues, n), [E (eigenvectors, n*n)], QS (u32 per
    matrix: active block end, iterations); P: nbatch, n, offA, phase, a, c.

    The work is split over dispatches of the same kernel by ``phase`` (lavapipe stops
    every loop of an invocation once 65535 iterations of all its loops together have
    run, so no single dispatch may iterate much; on GPUs the split costs a few
    dispatches): phase 0 loads and scales; phase 3 reduces columns a..c-1 to
    Hessenberg form; phase 1 runs at most ``a`` QR iterations from the state in QS
    (nothing once converged); phase 2 writes the eigenvalues (when a == 0) and
    back-substitutes eigenvector columns a..c-1 of T into E; phase 4 multiplies those
    columns by Q (into H's place) and normalizes them into E.

    1. scale by a power of two so that max|a_ij| lies in [1/2, 2) (exact; undone on the
       eigenvalues), so products in the shift and rotations stay in range;
    2. Householder reduction to upper Hessenberg form H = Q^H A Q (reflectors skipped
       where the column below the subdiagonal is already zero: triangular input stays
       untouched);
    3. complex single-shift implicit QR (Wilkinson shift, exceptional shift every 10th
       iteration, deflation when |h[m, m-1]| <= eps (|h[m-1, m-1]| + |h[m, m]|), at most
       ``max_its`` iterations per eigenvalue) to the Schur form T; thread 0 makes the
       scalar decisions, the 64 threads apply each Givens rotation to rows, columns and Q;
    4. eigenvectors: back-substitution on T - t_kk I (one thread per eigenvector, tiny
       pivots raised to eps |t_kk| as LAPACK's trevc does, rescaled against growth), times
       Q, normalized to unit 2-norm with the largest component real (as LAPACK's geev).
    """
    f64 = t == "c128"
    decls = eig_record(t, real_in, vectors, max_its).declarations()
    decls += ["var<workgroup> g_hi: u32;", "var<workgroup> g_l: u32;", "var<workgroup> g_c: R;",
              "var<workgroup> g_s: S;", "var<workgroup> g_mu: S;", "var<workgroup> g_beta: R;",
              "var<workgroup> g_sc: R;", f"var<workgroup> g_red: array<R, {WG}>;"]
    eps = "R(2.220446049250313e-16)" if f64 else "R(1.1920929e-07)"
    small = "R(1e-290)" if f64 else "R(1e-30)"
    big = "R(1e150)" if f64 else "R(1e15)"
    rmax = "R(1.7976931348623157e308)" if f64 else "R(3.4028234e38)"
    load = "S(A[P[2] + b * nn + e], R(0))" if real_in else "A[P[2] + b * nn + e]"
    wsz = "2u * nn + n + 1u" if vectors else "nn + n + 1u"
    cend = "n" if vectors else "hi + 1u"
    rstart = "0u" if vectors else "l"
    helpers = """fn s_cabs1(a: S) -> R { return r_abs(a.x) + r_abs(a.y); }
fn s_sqrt(z: S) -> S {
    let m = s_abs(z);
    if (m == R(0)) { return S(R(0), R(0)); }
    let q = r_sqrt((m + r_abs(z.x)) * R(0.5));
    if (z.x >= R(0)) { return S(q, z.y / (R(2) * q)); }
    return S(r_abs(z.y) / (R(2) * q), select(-q, q, z.y >= R(0)));
}
"""
    body = helpers.split("\n") + _head()
    body += f"""    let n = P[1]; let nn = n * n;
    let h0 = b * ({wsz}); let q0 = h0 + nn; let v0 = h0 + {"2u * nn" if vectors else "nn"}; let xs0 = v0 + n;
    let phase = P[3];
    if (phase == 0u) {{
    for (var e = lid; e < nn; e += {WG}u) {{
        W[h0 + e] = {load};
        {"W[q0 + e] = select(S(R(0), R(0)), S(R(1), R(0)), e / n == e % n);" if vectors else ""}
    }}
    var pm = R(0);
    for (var e = lid; e < nn; e += {WG}u) {{ pm = max(pm, max(r_abs(W[h0 + e].x), r_abs(W[h0 + e].y))); }}
    g_red[lid] = pm;
    workgroupBarrier();
    if (lid == 0u) {{
        var amax = R(0);
        for (var e = 0u; e < {WG}u; e++) {{ amax = max(amax, g_red[e]); }}
        var sc = R(1);
        if (amax > R(0) && amax <= {rmax}) {{
            var m = amax;
            while (m >= R(65536)) {{ m *= R(1.52587890625e-05); sc *= R(1.52587890625e-05); }}
            while (m >= R(2)) {{ m *= R(0.5); sc *= R(0.5); }}
            while (m < R(1.52587890625e-05)) {{ m *= R(65536); sc *= R(65536); }}
            while (m < R(0.5)) {{ m *= R(2); sc *= R(2); }}
            amax = m;
        }}
        g_sc = sc; W[xs0] = S(sc, amax);
        QS[2u * b] = select(0u, n - 1u, n > 0u); QS[2u * b + 1u] = 0u;
    }}
    workgroupBarrier();
    let sc = g_sc;
    if (sc != R(1)) {{ for (var e = lid; e < nn; e += {WG}u) {{ W[h0 + e] = W[h0 + e] * sc; }} }}
    storageBarrier();
    }} else if (phase == 3u) {{
    for (var k = P[4]; k + 2u < n && k < P[5]; k++) {{
        if (lid == 0u) {{
            var tail = R(0);
            for (var i = k + 2u; i < n; i++) {{ tail += s_abs2(W[h0 + i * n + k]); }}
            var beta = R(0);
            if (tail > R(0)) {{
                let x0 = W[h0 + (k + 1u) * n + k];
                let ax0 = s_abs(x0);
                let nrm = r_sqrt(tail + ax0 * ax0);
                let alpha = s_scale(s_phase(x0), -nrm);
                W[v0 + k + 1u] = x0 - alpha;
                for (var i = k + 2u; i < n; i++) {{
                    W[v0 + i] = W[h0 + i * n + k];
                    W[h0 + i * n + k] = S(R(0), R(0));
                }}
                W[h0 + (k + 1u) * n + k] = alpha;
                beta = R(1) / (nrm * (nrm + ax0));
            }}
            g_beta = beta;
        }}
        storageBarrier();
        workgroupBarrier();
        let beta = g_beta;
        if (beta != R(0)) {{
            for (var j = k + 1u + lid; j < n; j += {WG}u) {{
                var s = S(R(0), R(0));
                for (var i = k + 1u; i < n; i++) {{ s += s_mul(s_conj(W[v0 + i]), W[h0 + i * n + j]); }}
                s = s * beta;
                for (var i = k + 1u; i < n; i++) {{ W[h0 + i * n + j] -= s_mul(W[v0 + i], s); }}
            }}
        }}
        storageBarrier();
        if (beta != R(0)) {{
            for (var i = lid; i < {"2u * n" if vectors else "n"}; i += {WG}u) {{
                let r0 = select(h0 + i * n, q0 + (i - n) * n, i >= n);
                var s = S(R(0), R(0));
                for (var j = k + 1u; j < n; j++) {{ s += s_mul(W[r0 + j], W[v0 + j]); }}
                s = s * beta;
                for (var j = k + 1u; j < n; j++) {{ W[r0 + j] -= s_mul(s, s_conj(W[v0 + j])); }}
            }}
        }}
        storageBarrier();
    }}
    }} else if (phase == 1u) {{
    var hi_p = QS[2u * b]; var its = QS[2u * b + 1u];
    let anorm = W[xs0].y;
    for (var sweep = 0u; sweep < P[4]; sweep++) {{
        if (lid == 0u) {{
            var l = 0u;
            loop {{
                if (hi_p == 0u) {{ break; }}
                l = 0u;
                for (var m = hi_p; m > 0u; m--) {{
                    let sub = s_cabs1(W[h0 + m * n + m - 1u]);
                    var tst = s_cabs1(W[h0 + (m - 1u) * n + m - 1u]) + s_cabs1(W[h0 + m * n + m]);
                    if (tst == R(0)) {{ tst = anorm; }}
                    if (sub <= {eps} * tst || sub <= {small}) {{
                        W[h0 + m * n + m - 1u] = S(R(0), R(0));
                        l = m;
                        break;
                    }}
                }}
                if (l == hi_p || its >= {max_its}u) {{
                    W[h0 + hi_p * n + hi_p - 1u] = S(R(0), R(0));
                    hi_p -= 1u; its = 0u;
                    continue;
                }}
                break;
            }}
            g_l = l; g_hi = hi_p;
            if (hi_p > 0u) {{
                its += 1u;
                let a = W[h0 + (hi_p - 1u) * n + hi_p - 1u]; let bb = W[h0 + (hi_p - 1u) * n + hi_p];
                let cc = W[h0 + hi_p * n + hi_p - 1u]; let d = W[h0 + hi_p * n + hi_p];
                var mu = d;
                if (its % 10u == 0u) {{
                    mu = d + S(R(0.75) * s_cabs1(cc), R(0));
                }} else {{
                    let f = s_cabs1(a) + s_cabs1(bb) + s_cabs1(cc) + s_cabs1(d);
                    let p = (a - d) * (R(0.5) / f);
                    let bc = s_mul(bb / f, cc / f);
                    var r = s_sqrt(s_mul(p, p) + bc);
                    if (p.x * r.x + p.y * r.y < R(0)) {{ r = -r; }}
                    let den = p + r;
                    if (s_cabs1(den) > R(0)) {{ mu = d - s_div(bc, den) * f; }}
                }}
                g_mu = mu;
            }}
        }}
        storageBarrier();
        workgroupBarrier();
        let hi = workgroupUniformLoad(&g_hi);
        if (hi == 0u) {{ break; }}
        let l = workgroupUniformLoad(&g_l);
        let mu = g_mu;
        for (var k = l; k < hi; k++) {{
            if (lid == 0u) {{
                var x = W[h0 + l * n + l] - mu; var y = W[h0 + (l + 1u) * n + l];
                if (k > l) {{ x = W[h0 + k * n + k - 1u]; y = W[h0 + (k + 1u) * n + k - 1u]; }}
                let ax = s_abs(x); let ay = s_abs(y);
                var c = R(1); var s = S(R(0), R(0));
                if (ay > R(0)) {{
                    if (ax == R(0)) {{
                        c = R(0); s = s_conj(y) / ay;
                    }} else {{
                        let mx = max(ax, ay); let mn = min(ax, ay) / mx;
                        let nrm = mx * r_sqrt(R(1) + mn * mn);
                        c = ax / nrm; s = s_mul(x / ax, s_conj(y)) / nrm;
                    }}
                }}
                g_c = c; g_s = s;
            }}
            workgroupBarrier();
            let c = g_c; let s = g_s;
            for (var j = select(l, k - 1u, k > l) + lid; j < {cend}; j += {WG}u) {{
                let h1 = W[h0 + k * n + j]; let h2 = W[h0 + (k + 1u) * n + j];
                W[h0 + k * n + j] = h1 * c + s_mul(s, h2);
                W[h0 + (k + 1u) * n + j] = select(h2 * c - s_mul(s_conj(s), h1), S(R(0), R(0)), j + 1u == k);
            }}
            storageBarrier();
            let iend = min(k + 2u, hi);
            for (var i = {rstart} + lid; i <= iend; i += {WG}u) {{
                let h1 = W[h0 + i * n + k]; let h2 = W[h0 + i * n + k + 1u];
                W[h0 + i * n + k] = h1 * c + s_mul(h2, s_conj(s));
                W[h0 + i * n + k + 1u] = h2 * c - s_mul(h1, s);
            }}""".split("\n")
    if vectors:
        body += f"""            for (var i = lid; i < n; i += {WG}u) {{
                let h1 = W[q0 + i * n + k]; let h2 = W[q0 + i * n + k + 1u];
                W[q0 + i * n + k] = h1 * c + s_mul(h2, s_conj(s));
                W[q0 + i * n + k + 1u] = h2 * c - s_mul(h1, s);
            }}""".split("\n")
    body += f"""            storageBarrier();
        }}
    }}
    if (lid == 0u) {{ QS[2u * b] = hi_p; QS[2u * b + 1u] = its; }}
    }} else if (phase == 2u) {{
    if (P[4] == 0u) {{
        let isc = R(1) / W[xs0].x;
        for (var i = lid; i < n; i += {WG}u) {{ Lv[b * n + i] = W[h0 + i * n + i] * isc; }}
    }}""".split("\n")
    if vectors:
        body += f"""    let e0 = b * nn;
    for (var k = P[4] + lid; k < min(n, P[5]); k += {WG}u) {{
        let lam = W[h0 + k * n + k];
        let smin = max({eps} * s_cabs1(lam), {small});
        for (var j = 0u; j < n; j++) {{ E[e0 + j * n + k] = select(S(R(0), R(0)), S(R(1), R(0)), j == k); }}
        var i = k;
        while (i > 0u) {{
            i -= 1u;
            var s = S(R(0), R(0));
            for (var j = i + 1u; j <= k; j++) {{ s += s_mul(W[h0 + i * n + j], E[e0 + j * n + k]); }}
            var d = W[h0 + i * n + i] - lam;
            if (s_cabs1(d) < smin) {{ d = S(smin, R(0)); }}
            let v = -s_div(s, d);
            E[e0 + i * n + k] = v;
            let av = s_cabs1(v);
            if (av > {big}) {{
                for (var j = i; j <= k; j++) {{ E[e0 + j * n + k] = E[e0 + j * n + k] / av; }}
            }}
        }}
    }}
    }} else if (phase == 4u) {{
    let e0 = b * nn;
    let a = P[4]; let w = min(n, P[5]) - a;
    for (var e = lid; e < n * w; e += {WG}u) {{
        let i = e / w; let k = a + e % w;
        var s = S(R(0), R(0));
        for (var j = 0u; j <= k; j++) {{ s += s_mul(W[q0 + i * n + j], E[e0 + j * n + k]); }}
        W[h0 + i * n + k] = s;
    }}
    storageBarrier();
    for (var k = a + lid; k < a + w; k += {WG}u) {{
        var mx = R(0);
        for (var i = 0u; i < n; i++) {{ let x = W[h0 + i * n + k]; mx = max(mx, max(r_abs(x.x), r_abs(x.y))); }}
        var ss = R(0); var best = R(-1); var ib = 0u;
        if (mx > R(0)) {{
            for (var i = 0u; i < n; i++) {{
                let a2 = s_abs2(W[h0 + i * n + k] / mx);
                ss += a2;
                if (a2 > best) {{ best = a2; ib = i; }}
            }}
        }}
        var ph = S(R(1), R(0));
        var rinv = R(0);
        if (ss > R(0)) {{
            ph = s_conj(s_phase(W[h0 + ib * n + k] / mx));
            rinv = R(1) / (mx * r_sqrt(ss));
        }}
        for (var i = 0u; i < n; i++) {{ E[e0 + i * n + k] = s_mul(W[h0 + i * n + k], ph) * rinv; }}
    }}""".split("\n")
    body.append("    }")
    body.append("}")
    return _finish(decls, t, body)
