"""WGSL kernels of the linalg extension: batched factorizations, one workgroup per matrix.

Each kernel copies its (contiguous) input matrix into a device work area and runs the
factorization there with 64 threads, ``storageBarrier()`` between dependent steps. That
suits the small and medium matrices these functions usually see in batches; very large
single matrices would want blocked multi-workgroup algorithms (not written yet).

Scalar code is written once over ``S`` (the element type: f32, f64, vec2<f32>,
vec2<f64>) and ``R`` (its real type) through the ``s_*`` helpers of ``prelude``.

Kernels:
  lu      Gaussian elimination with partial pivoting on [A | B]: solve (B given),
          inv (B = I), det/slogdet (sign and log|det| per matrix)
  chol    right-looking Cholesky, lower triangle
  qr      Householder QR; R's diagonal made real and non-negative (so Q is unique)
  svd     one-sided (Hestenes) Jacobi, round-robin column pairs in parallel; complex
          input runs as the real 2m x 2n embedding [[X, -Y], [Y, X]] whose singular
          values come in equal pairs; 'eigh' shifts a Hermitian A by ||A||_F so that
          its SVD is its eigendecomposition
"""
from __future__ import annotations

import re

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
    else:
        lines.append("fn s_abs(a: S) -> R { return r_abs(a); }")
    lines.append("fn s_phase(a: S) -> S { let m = s_abs(a); "
                 "if (m == R(0)) { return s_real(R(1)); } return a / m; }")
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


def _bind(i: int, name: str, elem: str, write: bool) -> str:
    mode = "read_write" if write else "read"
    return f"@group(0) @binding({i}) var<storage, {mode}> {name}: array<{elem}>;"


# ------------------------------------------------------------------ LU

def render_lu(t: str, mode: str) -> str:
    """mode 'solve': bindings A, B, W, X; 'inv': A, W, X; 'det': A, W, D (sign, log|det|, det).
    P: nbatch, n, nrhs, offA, offB."""
    decls = [_bind(0, "A", "S", False)]
    i = 1
    if mode == "solve":
        decls.append(_bind(1, "B", "S", False))
        i = 2
    decls += [_bind(i, "W", "S", True), _bind(i + 1, "X", "S", True), _bind(i + 2, "P", "u32", False)]
    decls.append("var<workgroup> piv: u32;")
    body = _head()
    if mode == "solve":
        fill = "v = B[P[4] + b * n * r + i * r + (j - n)];"
    elif mode == "inv":
        fill = "v = select(s_real(R(0)), s_real(R(1)), j - n == i);"
    else:
        fill = ""
    body += f"""    let n = P[1]; let r = P[2]; let c = n + r; let w0 = b * n * c;
    for (var e = lid; e < n * c; e += {WG}u) {{
        let i = e / c; let j = e % c;
        var v = s_real(R(0));
        if (j < n) {{ v = A[P[3] + b * n * n + i * n + j]; }} else {{ {fill} }}
        W[w0 + e] = v;
    }}
    var sgn = s_real(R(1));
    storageBarrier();
    for (var k = 0u; k < n; k++) {{
        if (lid == 0u) {{
            var p = k; var best = s_abs2(W[w0 + k * c + k]);
            for (var i = k + 1u; i < n; i++) {{
                let a = s_abs2(W[w0 + i * c + k]);
                if (a > best) {{ best = a; p = i; }}
            }}
            piv = p;
            if (p != k) {{ sgn = -sgn; }}
        }}
        workgroupBarrier();
        let p = piv;
        if (p != k) {{
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
        body += """    if (lid == 0u) {
        var logabs = R(0);
        var dprod = sgn;
        for (var k = 0u; k < n; k++) {
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
}""".split("\n")
    else:
        body += f"""    for (var kk = 0u; kk < n; kk++) {{
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
    for (var e = lid; e < n * r; e += {WG}u) {{ X[b * n * r + e] = W[w0 + (e / r) * c + n + e % r]; }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ Cholesky

def render_cholesky(t: str) -> str:
    """Bindings A, L; P: nbatch, n, offA."""
    decls = [_bind(0, "A", "S", False), _bind(1, "L", "S", True), _bind(2, "P", "u32", False)]
    body = _head()
    body += f"""    let n = P[1]; let w0 = b * n * n;
    for (var e = lid; e < n * n; e += {WG}u) {{ L[w0 + e] = A[P[2] + w0 + e]; }}
    storageBarrier();
    for (var k = 0u; k < n; k++) {{
        if (lid == 0u) {{ L[w0 + k * n + k] = s_real(r_sqrt(s_re(L[w0 + k * n + k]))); }}
        storageBarrier();
        let d = s_re(L[w0 + k * n + k]);
        for (var i = k + 1u + lid; i < n; i += {WG}u) {{ L[w0 + i * n + k] = s_scale(L[w0 + i * n + k], R(1) / d); }}
        storageBarrier();
        let m = n - k - 1u;
        for (var e = lid; e < m * m; e += {WG}u) {{
            let i = k + 1u + e / m; let j = k + 1u + e % m;
            if (j <= i) {{
                L[w0 + i * n + j] = L[w0 + i * n + j] - s_mul(L[w0 + i * n + k], s_conj(L[w0 + j * n + k]));
            }}
        }}
        storageBarrier();
    }}
    for (var e = lid; e < n * n; e += {WG}u) {{ if (e % n > e / n) {{ L[w0 + e] = s_real(R(0)); }} }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ QR

def render_qr(t: str) -> str:
    """Bindings A, T (work: m*n matrix, m*kk reflectors, kk betas as S), Q (m x qc),
    R (rr x n); P: nbatch, m, n, kk, qc, rr, offA."""
    decls = [_bind(0, "A", "S", False), _bind(1, "T", "S", True), _bind(2, "Q", "S", True),
             _bind(3, "Rm", "S", True), _bind(4, "P", "u32", False)]
    body = _head()
    body += f"""    let m = P[1]; let n = P[2]; let kk = P[3]; let qc = P[4]; let rr = P[5];
    let t0 = b * (m * n + m * kk + kk);
    let v0 = t0 + m * n; let be0 = v0 + m * kk;
    for (var e = lid; e < m * n; e += {WG}u) {{ T[t0 + e] = A[P[6] + b * m * n + e]; }}
    storageBarrier();
    for (var k = 0u; k < kk; k++) {{
        if (lid == 0u) {{
            var nrm2 = R(0);
            for (var i = k; i < m; i++) {{ nrm2 += s_abs2(T[t0 + i * n + k]); }}
            let x0 = T[t0 + k * n + k];
            let nrm = r_sqrt(nrm2);
            for (var i = 0u; i < m; i++) {{
                var v = s_real(R(0));
                if (i > k) {{ v = T[t0 + i * n + k]; }}
                T[v0 + i * kk + k] = v;
            }}
            var beta = R(0);
            if (nrm > R(0)) {{
                let alpha = s_scale(s_phase(x0), -nrm);
                let vk = x0 - alpha;
                T[v0 + k * kk + k] = vk;
                beta = R(2) / (nrm2 - s_abs2(x0) + s_abs2(vk));
            }}
            T[be0 + k] = s_real(beta);
        }}
        storageBarrier();
        let beta = s_re(T[be0 + k]);
        for (var j = k + lid; j < n; j += {WG}u) {{
            var s = s_real(R(0));
            for (var i = k; i < m; i++) {{ s += s_mul(s_conj(T[v0 + i * kk + k]), T[t0 + i * n + j]); }}
            s = s_scale(s, beta);
            for (var i = k; i < m; i++) {{ T[t0 + i * n + j] = T[t0 + i * n + j] - s_mul(T[v0 + i * kk + k], s); }}
        }}
        storageBarrier();
    }}
    let q0 = b * m * qc;
    for (var e = lid; e < m * qc; e += {WG}u) {{ Q[q0 + e] = select(s_real(R(0)), s_real(R(1)), e / qc == e % qc); }}
    storageBarrier();
    for (var h = 0u; h < kk; h++) {{
        let k = kk - 1u - h;
        let beta = s_re(T[be0 + k]);
        for (var j = lid; j < qc; j += {WG}u) {{
            var s = s_real(R(0));
            for (var i = k; i < m; i++) {{ s += s_mul(s_conj(T[v0 + i * kk + k]), Q[q0 + i * qc + j]); }}
            s = s_scale(s, beta);
            for (var i = k; i < m; i++) {{ Q[q0 + i * qc + j] = Q[q0 + i * qc + j] - s_mul(T[v0 + i * kk + k], s); }}
        }}
        storageBarrier();
    }}
    for (var e = lid; e < m * qc; e += {WG}u) {{
        let j = e % qc;
        if (j < kk) {{ Q[q0 + e] = s_mul(Q[q0 + e], s_phase(T[t0 + j * n + j])); }}
    }}
    let r0 = b * rr * n;
    for (var e = lid; e < rr * n; e += {WG}u) {{
        let i = e / n; let j = e % n;
        var v = s_real(R(0));
        if (i < kk && j >= i) {{ v = s_mul(s_conj(s_phase(T[t0 + i * n + i])), T[t0 + i * n + j]); }}
        Rm[r0 + e] = v;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


# ------------------------------------------------------------------ Jacobi SVD / eigh

def render_svd(t: str, mode: str, max_sweeps: int) -> str:
    """mode 'svd' (bindings A, G, V, O, Sv, U, Vo), 'vals' (A, G, V, O, Sv),
    'eigh' (A, G, V, O, Sv, Vo), 'eigvals' (A, G, V, O, Sv). A is batch x m x n with
    m >= n (the caller transposes). P: nbatch, m, n, offA."""
    cplx = t in ("c64", "c128")
    names = {"svd": ["Sv", "U", "Vo"], "vals": ["Sv"], "eigh": ["Sv", "Vo"], "eigvals": ["Sv"]}[mode]
    decls = [_bind(0, "A", "S", False), _bind(1, "G", "R", True), _bind(2, "V", "R", True),
             _bind(3, "O", "u32", True)]
    for i, nm in enumerate(names):
        decls.append(_bind(4 + i, nm, "R" if nm == "Sv" else "S", True))
    decls.append(_bind(4 + len(names), "P", "u32", False))
    decls.append("var<workgroup> rot: u32;")
    decls.append("var<workgroup> shift: R;")
    eps = "R(1.2e-7)" if t in ("f32", "c64") else "R(2.3e-16)"
    f = 2 if cplx else 1
    if cplx:
        load = """let bi = i % m; let bj = j % n; let a = A[P[3] + b * m * n + bi * n + bj];
            var v = a.x;
            if ((i < m) != (j < n)) { v = select(a.y, -a.y, i < m); }"""
    else:
        load = "let v = A[P[3] + b * m * n + i * n + j];"
    body = _head()
    body += f"""    let m = P[1]; let n = P[2]; let mm = {f}u * m; let nn = {f}u * n;
    let g0 = b * (mm * nn + nn); let sg0 = g0 + mm * nn; let vv0 = b * nn * nn; let o0 = b * nn;
    for (var e = lid; e < mm * nn; e += {WG}u) {{
        let i = e / nn; let j = e % nn;
        {load}
        G[g0 + e] = v;
    }}
    for (var e = lid; e < nn * nn; e += {WG}u) {{ V[vv0 + e] = select(R(0), R(1), e / nn == e % nn); }}
    storageBarrier();""".split("\n")
    if mode in ("eigh", "eigvals"):
        body += f"""    if (lid == 0u) {{
        var s2 = R(0);
        for (var e = 0u; e < mm * nn; e++) {{ s2 += G[g0 + e] * G[g0 + e]; }}
        shift = r_sqrt(s2 / R({f}));
        for (var i = 0u; i < nn; i++) {{ G[g0 + i * nn + i] += shift; }}
    }}
    storageBarrier();""".split("\n")
    body += f"""    let n2 = nn + (nn & 1u);
    let npairs = n2 / 2u;
    for (var sweep = 0u; sweep < {max_sweeps}u; sweep++) {{
        if (lid == 0u) {{ rot = 0u; }}
        workgroupBarrier();
        for (var rd = 0u; rd + 1u < n2; rd++) {{
            for (var pi = lid; pi < npairs; pi += {WG}u) {{
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
                        rot = 1u;
                    }}
                }}
            }}
            storageBarrier();
        }}
        if (workgroupUniformLoad(&rot) == 0u) {{ break; }}
    }}
    for (var j = lid; j < nn; j += {WG}u) {{
        var s2 = R(0);
        for (var i = 0u; i < mm; i++) {{ s2 += G[g0 + i * nn + j] * G[g0 + i * nn + j]; }}
        G[sg0 + j] = r_sqrt(s2);
    }}
    storageBarrier();
    if (lid == 0u) {{
        for (var j = 0u; j < nn; j++) {{ O[o0 + j] = j; }}
        for (var a = 0u; a < nn; a++) {{
            var best = a;
            for (var c = a + 1u; c < nn; c++) {{ if (G[sg0 + O[o0 + c]] > G[sg0 + O[o0 + best]]) {{ best = c; }} }}
            let tmp = O[o0 + a]; O[o0 + a] = O[o0 + best]; O[o0 + best] = tmp;
        }}
    }}
    storageBarrier();""".split("\n")
    # output rank r (0..n) takes embedded column O[f*r] (descending); eigh: ascending
    rank = "(n - 1u - r)" if mode in ("eigh", "eigvals") else "r"
    col = f"O[o0 + {f}u * {rank}]"
    sval = f"G[sg0 + {col}]" + (" - shift" if mode in ("eigh", "eigvals") else "")
    body.append(f"    for (var r = lid; r < n; r += {WG}u) {{ Sv[b * n + r] = {sval}; }}")
    if "U" in names:
        if cplx:
            uval = "S(G[g0 + i * nn + j], G[g0 + (i + m) * nn + j]) / sg"
        else:
            uval = "G[g0 + i * nn + j] / sg"
        body += f"""    for (var e = lid; e < m * n; e += {WG}u) {{
        let i = e / n; let r = e % n; let j = {col};
        let sg = G[sg0 + j];
        var u = s_real(R(0));
        if (sg > R(0)) {{ u = {uval}; }}
        U[b * m * n + e] = u;
    }}""".split("\n")
    if "Vo" in names:
        vval = "S(V[vv0 + i * nn + j], V[vv0 + (i + n) * nn + j])" if cplx else "V[vv0 + i * nn + j]"
        body += f"""    for (var e = lid; e < n * n; e += {WG}u) {{
        let i = e / n; let r = e % n; let j = {col};
        Vo[b * n * n + e] = {vval};
    }}""".split("\n")
    body.append("}")
    return _finish(decls, t, body)
