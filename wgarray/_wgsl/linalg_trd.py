"""WGSL kernels of the tridiagonal route of the real symmetric eigensolver (host side:
``wgarray/_kernels/linalg_trd.py``).

  trd    Householder reduction of a whole symmetric matrix to tridiagonal form,
         A = Q T Q^T, one workgroup per matrix (phase 0, columns k0..k1), and the
         explicit Q by backward accumulation of the reflectors (phase 1)
  tql    implicit QL with Wilkinson shifts on T, the rotations applied to the rows of
         Q (its columns becoming the eigenvectors; for devices without float64); Q's
         rows can be cut over several workgroups per matrix, each of which runs the
         same scalar iteration on its own copy of (d, e)
  wy     Q's compact WY blocks (V^T and V T) for the back-transformation by matmul
  bisect the eigenvalues of T by bisection on Sturm counts, an invocation each, T
         split into unreduced blocks at its negligible off-diagonals
  multisect  the same by multisection, a workgroup each (GPUs)
  stein  T's eigenvectors by inverse iteration, a workgroup per eigenvalue, each
         cluster's vectors computed in order by its first one's workgroup and
         re-orthogonalized there

They run in phases over several dispatches where the device bounds an invocation's
loops (lavapipe: 65535 iterations of all loops together), the state between them in
device buffers: trd over column ranges and bisect over steps planned on the host,
stein and tql over as many inverse or QL iterations as a per-dispatch budget of
loop iterations (a parameter) allows, counted in the kernel. Real element types
only (f32, f64).
"""
from __future__ import annotations

import math

from .._runtime.launch import Launch
from .linalg import _finish, record


def _eps(r: str) -> str:
    return "R(2.220446049250313e-16)" if r == "f64" else "R(1.1920929e-07)"


def _tree(wg: int, arr: str, op: str) -> str:
    """A tree reduction of workgroup array ``arr`` (wg entries) into arr[0]; ``op``
    combines ``arr[lid]`` and ``arr[o]``."""
    return f"""    workgroupBarrier();
    for (var st = {wg // 2}u; st > 0u; st >>= 1u) {{
        if (lid < st) {{ let o = lid + st; {arr}[lid] = {op}; }}
        workgroupBarrier();
    }}"""


def reduce_to(name: str, wg: int, arr: str, val: str, op: str, sg: int = 0) -> str:
    """WGSL making ``let name`` the workgroup's reduction of ``val`` by ``op`` ('add'
    or 'max'; values >= 0 for 'max') in every invocation. A tree in workgroup array
    ``arr`` (wg entries), or with ``sg`` (the device's subgroup size: full subgroups of
    consecutive invocations) a subgroup reduction, the subgroups' results through
    ``arr`` (each lane combining every sg-th of them where there are more than sg),
    and a second subgroup reduction in every subgroup: two barriers where the tree
    takes log2(wg) + 1. ``arr`` may be written again after one more barrier (the next
    reduce_to's first)."""
    if not sg:
        comb = f"{arr}[lid] + {arr}[o]" if op == "add" else f"max({arr}[lid], {arr}[o])"
        return f"    {arr}[lid] = {val};\n{_tree(wg, arr, comb)}\n    let {name} = {arr}[0];\n"
    fn = "subgroupAdd" if op == "add" else "subgroupMax"
    first = f"select(R(0), {arr}[lid % {sg}u], lid % {sg}u < {wg // sg}u)"
    out = (f"    let {name}_sg = {fn}({val});\n"
           "    workgroupBarrier();\n"
           f"    if (lid % {sg}u == 0u) {{ {arr}[lid / {sg}u] = {name}_sg; }}\n"
           "    workgroupBarrier();\n")
    if wg // sg <= sg:
        return out + f"    let {name} = {fn}({first});\n"
    comb = f"{name}_p + {arr}[q]" if op == "add" else f"max({name}_p, {arr}[q])"
    return out + (f"    var {name}_p = {first};\n"
                  f"    for (var q = lid % {sg}u + {sg}u; q < {wg // sg}u; q += {sg}u) {{ {name}_p = {comb}; }}\n"
                  f"    let {name} = {fn}({name}_p);\n")


def pow2_scale_fn(t: str) -> str:
    """WGSL ``fn pow2_scale(mx: R) -> R``: the power of two that brings a matrix's
    largest magnitude mx into [1, 2), its exponent clamped to +-120 (1 where mx is 0,
    NaN or past 1e38): an exact scaling, after which the reduction's norms and
    rotations neither overflow nor underflow."""
    cast = "f32(mx)" if t == "f32" else "f32(min(mx, R(1e30)))"
    return f"""fn pow2_scale(mx: R) -> R {{
    if (mx > R(0) && mx < R(1e30) * R(1e8)) {{ return R(exp2(-clamp(floor(log2({cast})), -120.0, 120.0))); }}
    return R(1);
}}
"""


# the last 2 x 2 block of T, once the reduction has reached column n - 2 (lid 0 of a
# workgroup whose matrix starts at a0 in A and v0 in D, E, TAU)
LAST_BLOCK = """        D[v0 + n - 2u] = A[a0 + (n - 2u) * (n + 1u)];
        E[v0 + n - 2u] = A[a0 + (n - 1u) * n + n - 2u];
        D[v0 + n - 1u] = A[a0 + (n - 1u) * (n + 1u)];
        E[v0 + n - 1u] = R(0);
        TAU[v0 + n - 2u] = R(0);
        TAU[v0 + n - 1u] = R(0);
"""

def reflector_fn(wg: int, extra: str, stage: str, sg: int = 0) -> str:
    """WGSL ``fn reflect(a0, v0, k, m, n, lid{extra})`` for a workgroup of ``wg``: the
    Householder reflector H = I - tau v v^T (v_0 = 1, LAPACK's dlarfg, the norm taken
    scaled by the largest entry) that maps row k of A past the diagonal (m entries from
    rk = a0 + k n + k + 1) onto beta e_0; d_k = a_kk, e_k = beta and tau into D, E, TAU,
    tau in ``g_tau``; then ``stage`` stores v, ``scal`` being 1 / (alpha - beta) (v_i =
    a_i scal past the first). The caller declares g_r (wg entries), g_tau and g_sc.
    ``sg``: the two sums by subgroups (``reduce_to``)."""
    return f"""fn reflect(a0: u32, v0: u32, k: u32, m: u32, n: u32, lid: u32{extra}) {{
    let rk = a0 + k * n + k + 1u;
    var mx = R(0);
    for (var i = lid + 1u; i < m; i += {wg}u) {{ mx = max(mx, r_abs(A[rk + i])); }}
{reduce_to("gmx", wg, "g_r", "mx", "max", sg)}    var ss = R(0);
    if (gmx > R(0)) {{
        let inv = R(1) / gmx;
        for (var i = lid + 1u; i < m; i += {wg}u) {{ let x = A[rk + i] * inv; ss += x * x; }}
    }}
    workgroupBarrier();
{reduce_to("ssum", wg, "g_r", "ss", "add", sg)}    if (lid == 0u) {{
        let alpha = A[rk];
        let xn = gmx * r_sqrt(ssum);
        var tau = R(0); var beta = alpha; var scal = R(0);
        if (xn > R(0)) {{
            let big = max(r_abs(alpha), xn);
            let qa = alpha / big; let qx = xn / big;
            beta = -select(R(-1), R(1), alpha >= R(0)) * big * r_sqrt(qa * qa + qx * qx);
            tau = (beta - alpha) / beta;
            scal = R(1) / (alpha - beta);
        }}
        g_tau = tau; g_sc = scal;
        D[v0 + k] = A[a0 + k * n + k]; E[v0 + k] = beta; TAU[v0 + k] = tau;
    }}
    workgroupBarrier();
    let scal = g_sc;
{stage}    storageBarrier(); workgroupBarrier();
}}
"""


def trd_record(t: str, cap: int, wg: int) -> Launch:
    return record(f"linalg_trd_{t}_{cap}_{wg}",
                  [("SRC", "S", False), ("A", "S", True), ("Q", "S", True), ("D", "R", True), ("E", "R", True),
                   ("TAU", "R", True), ("SC", "R", True)],
                  ("nz", "n", "off", "s_mat", "phase", "k0", "k1", "init"), wg)


def render_trd(t: str, cap: int, wg: int) -> str:
    """Bindings SRC (read: nz matrices at off + z s_mat, rows of n, the lower triangle
    read), A (the work copy, nz x n x n), Q (nz x n x n), D, E, TAU (nz x n), SC (nz:
    the power of two the matrix was scaled by, inverted); P: nz, n, off, s_mat, phase,
    k0, k1, init. n >= 3, n <= cap.

    Phase 0 reduces columns k0..k1 (k1 <= n - 2); with init (k0 = 0) it first loads
    A symmetric from SRC's lower triangle, scaled by the power of two that brings its
    largest entry into [1, 2) (exact; the norms and rotations below then neither
    overflow nor underflow for any representable input). Column k: the reflector
    H = I - tau v v^T (v_0 = 1, LAPACK's dlarfg with the norm taken scaled by the
    largest entry) that maps A[k+1:, k] onto beta e_0; p = tau A22 v,
    w = p - (tau / 2) (p . v) v, A22 -= v w^T + w v^T (two-sided, in full storage so
    that every product reads columns, contiguous across threads); d_k = a_kk,
    e_k = beta, v in row k of A (past the diagonal), tau in TAU. The dispatch that
    reaches k1 = n - 2 writes the last 2 x 2 block.

    Phase 1 applies the reflectors k1 - 1 down to k0 to Q from the left (with init:
    Q = I first): Q = H_0 H_1 ... H_{n-3} once all have run."""
    r = t
    eps = _eps(r)
    decls = trd_record(t, cap, wg).declarations()
    decls += [f"var<workgroup> g_v: array<R, {2 * cap}>;", f"var<workgroup> g_w: array<R, {2 * cap}>;",
              f"var<workgroup> g_r: array<R, {wg}>;", "var<workgroup> g_tau: R;", "var<workgroup> g_sc: R;"]
    stage = f"""    for (var i = lid; i < m; i += {wg}u) {{ g_v[h + i] = select(A[rk + i] * scal, R(1), i == 0u); }}
    workgroupBarrier();
    for (var i = lid; i < m; i += {wg}u) {{ A[rk + i] = g_v[h + i]; }}
"""
    # the reflector of row k past the diagonal (m entries): tau in g_tau, v (v_0 = 1)
    # into g_v[h..] and over the row; d_k, e_k = beta, tau into D, E, TAU
    body = (pow2_scale_fn(t) + reflector_fn(wg, ", h: u32", stage)).split("\n")
    body += [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0]) { return; }"]
    body += f"""    let n = P[1]; let a0 = b * n * n; let v0 = b * n;
    let k0 = P[5]; let k1 = P[6];
    if (P[4] == 0u) {{
    if (P[7] == 1u) {{
        let s0 = P[2] + b * P[3];
        var mx = R(0);
        for (var e = lid; e < n * n; e += {wg}u) {{
            let i = e / n; let j = e % n;
            mx = max(mx, r_abs(SRC[s0 + max(i, j) * n + min(i, j)]));
        }}
        g_r[lid] = mx;
{_tree(wg, "g_r", "max(g_r[lid], g_r[o])")}
        if (lid == 0u) {{
            let sc = pow2_scale(g_r[0]);
            g_sc = sc;
            SC[b] = R(1) / sc;
        }}
        let sc = workgroupUniformLoad(&g_sc);
        for (var e = lid; e < n * n; e += {wg}u) {{
            let i = e / n; let j = e % n;
            A[a0 + e] = SRC[s0 + max(i, j) * n + min(i, j)] * sc;
        }}
        storageBarrier(); workgroupBarrier();
    }}
    var hb = 0u;  // the half of the double buffers (g_v, g_w) holding column k's v and p
    for (var k = k0; k < k1; k++) {{
        let m = n - k - 1u;
        let rk = a0 + k * n + k + 1u;  // row k past the diagonal: the column below it
        let h0 = hb * {cap}u;
        if (k == k0) {{
            // the dispatch's first column: reflector and p = tau A22 v by a pass of its own
            reflect(a0, v0, k, m, n, lid, h0);
            let tau = workgroupUniformLoad(&g_tau);
            if (tau != R(0)) {{
                let t0 = a0 + (k + 1u) * n + k + 1u;
                for (var i = lid; i < m; i += {wg}u) {{
                    var s = R(0);
                    for (var j = 0u; j < m; j++) {{ s += A[t0 + j * n + i] * g_v[h0 + j]; }}
                    g_w[h0 + i] = tau * s;
                }}
            }} else {{
                for (var i = lid; i < m; i += {wg}u) {{ g_w[h0 + i] = R(0); }}
            }}
            workgroupBarrier();
        }}
        let tau = workgroupUniformLoad(&g_tau);
        // w = p - (tau / 2) (p . v) v
        var dp = R(0);
        for (var i = lid; i < m; i += {wg}u) {{ dp += g_w[h0 + i] * g_v[h0 + i]; }}
        g_r[lid] = dp;
{_tree(wg, "g_r", "g_r[lid] + g_r[o]")}
        let kk = R(0.5) * tau * g_r[0];
        workgroupBarrier();
        for (var i = lid; i < m; i += {wg}u) {{ g_w[h0 + i] = g_w[h0 + i] - kk * g_v[h0 + i]; }}
        workgroupBarrier();
        let t0 = a0 + (k + 1u) * n + k + 1u;
        if (k + 1u < k1) {{
            // A22 -= v w^T + w v^T fused with the next column's p: its row first (the
            // next reflector), then the block below it, each entry read and written once
            let v1 = g_v[h0]; let w1 = g_w[h0];
            for (var j = lid; j < m; j += {wg}u) {{ A[t0 + j] -= v1 * g_w[h0 + j] + w1 * g_v[h0 + j]; }}
            storageBarrier(); workgroupBarrier();
            let h1 = (1u - hb) * {cap}u;
            reflect(a0, v0, k + 1u, m - 1u, n, lid, h1);
            let tau1 = workgroupUniformLoad(&g_tau);
            let t1 = t0 + n + 1u;
            for (var i = lid; i < m - 1u; i += {wg}u) {{
                let vi = g_v[h0 + i + 1u]; let wi = g_w[h0 + i + 1u];
                var s = R(0);
                for (var j = 0u; j < m - 1u; j++) {{
                    let a = A[t1 + j * n + i] - (g_v[h0 + j + 1u] * wi + g_w[h0 + j + 1u] * vi);
                    A[t1 + j * n + i] = a;
                    s += a * g_v[h1 + j];
                }}
                g_w[h1 + i] = tau1 * s;
            }}
            hb = 1u - hb;
        }} else {{
            for (var e = lid; e < m * m; e += {wg}u) {{
                let i = e / m; let j = e % m;
                A[t0 + i * n + j] -= g_v[h0 + i] * g_w[h0 + j] + g_w[h0 + i] * g_v[h0 + j];
            }}
        }}
        storageBarrier(); workgroupBarrier();
    }}
    if (k1 == n - 2u && lid == 0u) {{
{LAST_BLOCK}    }}
    return;
    }}
    if (P[7] == 1u) {{
        for (var e = lid; e < n * n; e += {wg}u) {{ Q[a0 + e] = select(R(0), R(1), e / n == e % n); }}
        storageBarrier(); workgroupBarrier();
    }}
    for (var kk = k1; kk > k0; kk--) {{
        let k = kk - 1u;
        let m = n - k - 1u;
        if (lid == 0u) {{ g_tau = TAU[v0 + k]; }}
        let tau = workgroupUniformLoad(&g_tau);
        if (tau != R(0)) {{
            let rk = a0 + k * n + k + 1u;
            for (var i = lid; i < m; i += {wg}u) {{ g_v[i] = A[rk + i]; }}
            workgroupBarrier();
            let t0 = a0 + (k + 1u) * n + k + 1u;
            for (var j = lid; j < m; j += {wg}u) {{
                var s = R(0);
                for (var i = 0u; i < m; i++) {{ s += g_v[i] * Q[t0 + i * n + j]; }}
                g_w[j] = tau * s;
            }}
            workgroupBarrier();
            for (var e = lid; e < m * m; e += {wg}u) {{
                let i = e / m; let j = e % m;
                Q[t0 + i * n + j] -= g_v[i] * g_w[j];
            }}
            storageBarrier(); workgroupBarrier();
        }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def tql_record(t: str, cap: int, wg: int) -> Launch:
    return record(f"linalg_trd_tql_{t}_{cap}_{wg}",
                  [("DT", "R", False), ("ET", "R", False), ("SC", "R", False), ("D", "R", True), ("E", "R", True),
                   ("SW", "u32", True), ("Q", "S", True), ("LAM", "R", True)],
                  ("nz", "n", "nchunk", "rows", "vectors", "budget", "maxit", "first"), wg)


APPLY0 = 32  # invocations below this one (a GPU's first warp) do not rotate rows of Q


def render_tql(t: str, cap: int, wg: int) -> str:
    """Bindings DT, ET (nz x n: the tridiagonal from trd, e_i coupling d_i and
    d_{i+1}), SC (nz: the scale to undo), D, E (nz nchunk x n: each workgroup's own
    (d, e), kept between dispatches), SW (nz nchunk x 2 u32: the index l of the next
    eigenvalue, iterations spent on it), Q (nz x n x n: rotated in place, its rows
    split over the nchunk workgroups of a matrix, ``rows`` each), LAM (nz x n: the
    eigenvalues, unsorted, written by chunk 0 once l reaches n); P: nz, n, nchunk,
    rows, vectors, budget (loop iterations one invocation may run in this dispatch;
    0: unbounded), maxit (QL iterations per eigenvalue at most), first (copy DT, ET;
    else resume). wg > APPLY0.

    QL (EISPACK's tql2): for l = 0, 1, ..., find the first m >= l with
    |e_m| <= eps (|d_m| + |d_m+1|); while m > l, one implicit QL step with the
    Wilkinson shift on the block l..m. Invocation 0 computes a step's rotations
    (m - 1 down to l) into one half of a double buffer and updates (d, e), while
    invocations APPLY0.. apply the previous step's rotations from the other half to
    their rows of Q (the carried entry in a register: one load and one store per
    rotation); one barrier a step. The scalar chain is the critical path, the
    rotation of Q runs beside it. T came scaled to [1, 2), so the unscaled hypot of
    two entries neither overflows nor loses precision to underflow where it
    matters. Every workgroup of a matrix runs the same scalar steps on its own
    copy, bit for bit alike."""
    r = t
    eps = _eps(r)
    decls = tql_record(t, cap, wg).declarations()
    decls += [f"var<workgroup> g_c: array<R, {2 * cap}>;", f"var<workgroup> g_s: array<R, {2 * cap}>;",
              "var<workgroup> g_m: u32;", "var<workgroup> g_lo: u32;", "var<workgroup> g_l: u32;",
              "var<workgroup> g_it: u32;"]
    napply = wg - APPLY0
    body = [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0] * P[2]) { return; }"]
    body += f"""    let n = P[1]; let z = b / P[2]; let ch = b % P[2];
    let s0 = b * n; let t0 = z * n;
    let first = P[7] == 1u;
    if (lid == 0u) {{
        g_l = select(SW[2u * b], 0u, first);
        g_it = select(SW[2u * b + 1u], 0u, first);
    }}
    let l0 = workgroupUniformLoad(&g_l);
    if (l0 >= n) {{ return; }}
    if (first) {{
        for (var i = lid; i < n; i += {wg}u) {{ D[s0 + i] = DT[t0 + i]; E[s0 + i] = select(ET[t0 + i], R(0), i + 1u == n); }}
        storageBarrier(); workgroupBarrier();
        if (lid == 0u) {{
            // a NaN anywhere (an inf or NaN input): NaN values at once, no iterations
            var bad = false;
            for (var i = 0u; i < n; i++) {{ bad = bad || {r}_isnan(D[s0 + i]) || {r}_isnan(E[s0 + i]); }}
            if (bad) {{
                for (var i = 0u; i < n; i++) {{ D[s0 + i] = {r}_nan(); }}
                g_l = n;
            }}
        }}
        storageBarrier(); workgroupBarrier();
    }}
    let vec = P[4] == 1u;
    let r0 = ch * P[3]; let r1 = min(n, r0 + P[3]);
    let rpt = select(0u, (P[3] + {napply - 1}u) / {napply}u, vec);
    let budget = P[5];
    let q0 = z * n * n;
    var cost = 0u;
    var pend = false; var pm = 0u; var plo = 0u; var par = 0u;
    var par_next = 0u;
    loop {{
        let l = workgroupUniformLoad(&g_l);
        // this step's scalar part, the pending rotations, and this step's own (which a
        // stopping iteration still applies)
        let need = 2u * (n - l) + select(0u, rpt * (pm - plo + 1u), pend) + rpt * (n - l + 1u) + 16u;
        let stop = l >= n || (budget != 0u && cost + need > budget);
        if (stop && !pend) {{ break; }}
        if (!stop && lid == 0u) {{
            let h = par_next * {cap}u;
            var m = l;
            for (; m + 1u < n; m++) {{
                let dd = r_abs(D[s0 + m]) + r_abs(D[s0 + m + 1u]);
                if (r_abs(E[s0 + m]) <= {eps} * dd) {{ break; }}
            }}
            g_m = m;
            g_lo = m;
            if (m == l || g_it >= P[6]) {{
                g_l = l + 1u; g_it = 0u; g_m = l;
            }} else {{
                g_it += 1u;
                let el = E[s0 + l]; let dl = D[s0 + l];
                var g = (D[s0 + l + 1u] - dl) / (R(2) * el);
                var rr = sqrt(g * g + R(1));
                g = D[s0 + m] - dl + el / (g + select(-rr, rr, g >= R(0)));
                var s = R(1); var c = R(1); var p = R(0);
                var i = m;
                var under = false;
                var dn = D[s0 + m];  // d_(i+1), carried
                while (i > l) {{
                    i -= 1u;
                    let ei = E[s0 + i]; let di = D[s0 + i];
                    let f = s * ei; let bb = c * ei;
                    rr = sqrt(f * f + g * g);  // the native root: its argument is finite, >= 0
                    E[s0 + i + 1u] = rr;
                    if (rr == R(0)) {{
                        D[s0 + i + 1u] = dn - p; E[s0 + m] = R(0); under = true;
                        break;
                    }}
                    let ir = R(1) / rr;
                    s = f * ir; c = g * ir;
                    g = dn - p;
                    rr = (di - g) * s + R(2) * c * bb;
                    p = s * rr;
                    D[s0 + i + 1u] = g + p;
                    g = c * rr - bb;
                    g_c[h + i] = c; g_s[h + i] = s;
                    g_lo = i;
                    dn = di;
                }}
                if (!under) {{
                    D[s0 + l] = dn - p; E[s0 + l] = g; E[s0 + m] = R(0);
                }}
            }}
        }}
        if (pend && lid >= {APPLY0}u) {{
            let h = par * {cap}u;
            for (var k = r0 + lid - {APPLY0}u; k < r1; k += {napply}u) {{
                let row = q0 + k * n;
                var cur = Q[row + pm];
                for (var i = pm; i > plo; i--) {{
                    let a = Q[row + i - 1u];
                    Q[row + i] = g_s[h + i - 1u] * a + g_c[h + i - 1u] * cur;
                    cur = g_c[h + i - 1u] * a - g_s[h + i - 1u] * cur;
                }}
                Q[row + plo] = cur;
            }}
        }}
        workgroupBarrier();
        if (pend) {{ cost += rpt * (pm - plo + 1u); }}
        if (stop) {{ break; }}
        cost += 2u * (n - l) + 8u;
        let m = workgroupUniformLoad(&g_m);
        let lo = workgroupUniformLoad(&g_lo);
        pend = vec && lo < m; pm = m; plo = lo; par = par_next;
        par_next = 1u - par_next;
    }}
    let l = workgroupUniformLoad(&g_l);
    if (lid == 0u) {{ SW[2u * b] = l; SW[2u * b + 1u] = g_it; }}
    if (l >= n && ch == 0u) {{
        storageBarrier(); workgroupBarrier();
        let sc = SC[z];
        for (var i = lid; i < n; i += {wg}u) {{ LAM[t0 + i] = D[s0 + i] * sc; }}
    }}
}}""".split("\n")
    return _finish(decls, t, body)


WY_NB = 32  # reflectors per compact WY block


def wy_record(t: str, wg: int) -> Launch:
    return record(f"linalg_trd_wy_{t}_{wg}",
                  [("A", "S", False), ("TAU", "R", False), ("VT", "S", True), ("MB", "S", True)],
                  ("nz", "n", "nblk"), wg)


def render_wy(t: str, wg: int) -> str:
    """Bindings A (trd's work copy: reflector k's v in row k past the diagonal), TAU
    (nz x n), VT (nz x nblk WY_NB x n), MB (nz x nblk x n x WY_NB); P: nz, n, nblk.
    A workgroup per (matrix, block b) of the reflectors k = b WY_NB + j: the block's
    rows of V^T (row k: 0 up to column k, 1 at k + 1, then v; rows past the last
    reflector zero) into VT, and M_b = V_b T_b into MB, where
    H_k0 ... H_k1-1 = I - V_b T_b V_b^T (LAPACK's dlarft, forward and columnwise:
    T_jj = tau_j, T[0:j, j] = -tau_j T[0:j, 0:j] (V_b^T v_j)[0:j]), so that Q's block
    product applies as X - M_b (V_b^T X): two matrix products."""
    nb = WY_NB
    decls = wy_record(t, wg).declarations()
    decls += [f"var<workgroup> g_g: array<R, {nb * nb}>;", f"var<workgroup> g_t: array<R, {nb * nb}>;",
              f"var<workgroup> g_tau: array<R, {nb}>;"]
    body = [f"@compute @workgroup_size({wg})",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
            "    let b = wid.x + wid.y * 65535u;",
            "    if (b >= P[0] * P[2]) { return; }"]
    body += f"""    let n = P[1]; let z = b / P[2]; let blk = b % P[2];
    let k0 = blk * {nb}u;
    let a0 = z * n * n;
    let vt0 = (z * P[2] + blk) * {nb}u * n;
    for (var e = lid; e < {nb}u * n; e += {wg}u) {{
        let j = e / n; let c = e % n; let k = k0 + j;
        var v = R(0);
        if (k < n - 2u) {{
            if (c == k + 1u) {{ v = R(1); }} else if (c > k + 1u) {{ v = A[a0 + k * n + c]; }}
        }}
        VT[vt0 + e] = v;
    }}
    for (var j = lid; j < {nb}u; j += {wg}u) {{
        let k = k0 + j;
        g_tau[j] = select(R(0), TAU[z * n + k], k < n - 2u);
    }}
    storageBarrier(); workgroupBarrier();
    for (var e = lid; e < {nb * nb}u; e += {wg}u) {{
        let i = e / {nb}u; let j = e % {nb}u;
        var s = R(0);
        if (i < j) {{
            for (var c = k0 + j + 1u; c < n; c++) {{ s += VT[vt0 + i * n + c] * VT[vt0 + j * n + c]; }}
        }}
        g_g[e] = s;
        g_t[e] = R(0);
    }}
    workgroupBarrier();
    for (var j = 0u; j < {nb}u; j++) {{
        let tj = g_tau[j];
        for (var i = lid; i < j; i += {wg}u) {{
            var s = R(0);
            for (var q = i; q < j; q++) {{ s += g_t[i * {nb}u + q] * g_g[q * {nb}u + j]; }}
            g_t[i * {nb}u + j] = -tj * s;
        }}
        if (lid == 0u) {{ g_t[j * {nb}u + j] = tj; }}
        workgroupBarrier();
    }}
    let m0 = (z * P[2] + blk) * n * {nb}u;
    for (var e = lid; e < n * {nb}u; e += {wg}u) {{
        let c = e / {nb}u; let j = e % {nb}u;
        var s = R(0);
        for (var i = 0u; i <= j; i++) {{ s += VT[vt0 + i * n + c] * g_t[i * {nb}u + j]; }}
        MB[m0 + e] = s;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


def _negligible(r: str) -> str:
    """``negligible(t0, i)``: whether e_i (coupling rows i and i + 1 of the tridiagonal
    at t0 in DT, ET) splits T: e_i = 0 or e_i^2 <= eps^2 |d_i d_i+1| (dsteqr's test,
    squared: a square that underflows is below eps ||T|| by far, T being scaled to
    [1, 2)). bisect and stein read the same blocks from it."""
    eps = _eps(r)
    return f"""fn negligible(t0: u32, i: u32) -> bool {{
    let x = ET[t0 + i];
    return x == R(0) || x * x <= {eps} * {eps} * r_abs(DT[t0 + i] * DT[t0 + i + 1u]);
}}
fn block_of(t0: u32, n: u32, j: u32) -> vec2<u32> {{
    // the rows [b0, b1) of the unreduced block that holds row j
    var b0 = j;
    while (b0 > 0u && !negligible(t0, b0 - 1u)) {{ b0 -= 1u; }}
    var b1 = j + 1u;
    while (b1 < n && !negligible(t0, b1 - 1u)) {{ b1 += 1u; }}
    return vec2<u32>(b0, b1);
}}
"""


def bisect_record(t: str, wg: int) -> Launch:
    return record(f"linalg_trd_bisect_{t}_{wg}",
                  [("DT", "R", False), ("ET", "R", False), ("SC", "R", False), ("LO", "R", True), ("HI", "R", True),
                   ("LAM", "R", True)],
                  ("nz", "n", "iters", "first", "last"), wg)


def render_bisect(t: str, wg: int) -> str:
    """Bindings DT, ET (nz x n: trd's tridiagonal, scaled), SC (nz: the scale to undo),
    LO, HI (nz x n: each eigenvalue's bracket between dispatches), LAM (nz x n);
    P: nz, n, bisection steps this dispatch, first (brackets from the Gershgorin
    interval), last (write LAM = the midpoint, unscaled).

    T splits at its negligible off-diagonals (``negligible``) into unreduced blocks;
    invocation j takes the block [b0, b1) that holds row j and finds that block's
    eigenvalue j - b0 (ascending): the values come out by block, each block's in
    order (LAPACK's dstebz, order 'B'), and entry j of LO, HI, LAM belongs to the
    block of row j, which is what stein reads. Bisection of [lo, hi] on the Sturm
    count of T_block - x I (the number of negative pivots of its LDL^T, pivots below
    pivmin replaced by -pivmin, as dstebz), keeping count(lo) <= j - b0 < count(hi);
    the steps stop once no representable midpoint is left. T came scaled to [1, 2),
    so the Gershgorin width is a few units and 2 + the mantissa's bits of steps reach
    the eigenvalue's rounding level; a 1 x 1 block's value is its entry. A NaN
    anywhere in T gives NaN values for the whole matrix."""
    r = t
    eps = _eps(r)
    tiny = "R(2.2250738585072014e-308)" if r == "f64" else "R(1.1754944e-38)"
    decls = bisect_record(t, wg).declarations()
    body = _negligible(r).split("\n")
    body += [f"@compute @workgroup_size({wg})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
             f"    let e = (wid.x + wid.y * 65535u) * {wg}u + lid;"]
    body += f"""    let n = P[1];
    if (e >= P[0] * n) {{ return; }}
    let z = e / n; let j = e % n;
    let t0 = z * n;
    var emax = R(0);
    var bad = false;
    for (var i = 0u; i + 1u < n; i++) {{
        let x = ET[t0 + i];
        emax = max(emax, x * x);
        bad = bad || {r}_isnan(x) || {r}_isnan(DT[t0 + i]);
    }}
    bad = bad || {r}_isnan(DT[t0 + n - 1u]);
    let bl = block_of(t0, n, j);
    let b0 = bl.x; let b1 = bl.y; let jl = j - b0;
    let pivmin = max({tiny} * R(1e4), emax * {tiny} * R(1e4));
    var lo = R(0); var hi = R(0);
    if (P[3] == 1u) {{
        lo = DT[t0 + b0]; hi = lo;
        for (var i = b0; i < b1; i++) {{
            var rad = R(0);
            if (i > b0) {{ rad += r_abs(ET[t0 + i - 1u]); }}
            if (i + 1u < b1) {{ rad += r_abs(ET[t0 + i]); }}
            lo = min(lo, DT[t0 + i] - rad); hi = max(hi, DT[t0 + i] + rad);
        }}
        let w = hi - lo;
        let pad = R(2) * {eps} * max(r_abs(lo), r_abs(hi)) + R(2) * pivmin + {eps} * w;
        lo -= pad; hi += pad;
        if (b1 == b0 + 1u) {{ lo = DT[t0 + b0]; hi = lo; }}  // a 1 x 1 block: its entry, exactly
    }} else {{
        lo = LO[e]; hi = HI[e];
    }}
    for (var it = 0u; it < P[2]; it++) {{
        let mid = R(0.5) * (lo + hi);
        if (!(mid > lo && mid < hi)) {{ break; }}
        var cnt = 0u;
        var q = DT[t0 + b0] - mid;
        if (r_abs(q) < pivmin) {{ q = -pivmin; }}
        if (q < R(0)) {{ cnt += 1u; }}
        for (var i = b0 + 1u; i < b1; i++) {{
            let ei = ET[t0 + i - 1u];
            q = DT[t0 + i] - mid - ei * ei / q;
            if (r_abs(q) < pivmin) {{ q = -pivmin; }}
            if (q < R(0)) {{ cnt += 1u; }}
        }}
        if (cnt > jl) {{ hi = mid; }} else {{ lo = mid; }}
    }}
    LO[e] = lo; HI[e] = hi;
    if (P[4] == 1u) {{
        var v = R(0.5) * (lo + hi) * SC[z];
        if (bad) {{ v = {r}_nan(); }}
        LAM[e] = v;
    }}
}}""".split("\n")
    return _finish(decls, t, body)


STEIN_MAXITS = 5   # inverse iterations per eigenvalue at most (LAPACK's dstein: 5)
STEIN_EXTRA = 2    # iterations past the first that passes the growth test (dstein: 2)
STEIN_ORTOL = 1e-6  # consecutive eigenvalues closer than this times ||T_block||_1 form a cluster


def stein_record(t: str, cap: int, wg: int, reorth: bool = True, stage: bool = False,
                 spill: bool = False) -> Launch:
    return record(f"linalg_trd_stein_{t}_{cap}_{wg}" + ("" if reorth else "_alone") + ("_st" if stage else "")
                  + ("_sp" if spill else ""),
                  [("DT", "R", False), ("ET", "R", False), ("LO", "R", False), ("HI", "R", False),
                   ("SH", "R", True), ("SW", "u32", True), ("ZT", "R", True)] + ([("SU", "R", True)] if spill else []),
                  ("nz", "n", "budget", "first"), wg)


def stein_workgroup_bytes(t: str, cap: int, wg: int, stage: bool = False) -> int:
    """stein's workgroup arrays in its workgroup-memory form: U's superdiagonal, the
    pivots' reciprocals and the iterate (cap each), the row swaps (a bit a row) and
    the reduction array (four entries a thread); with ``stage`` the block's diagonal
    and off-diagonal too."""
    isz = 8 if t == "f64" else 4
    return ((5 if stage else 3) * cap + 4 * wg) * isz + cap // 8 + 64


# stein's three row arrays in workgroup memory, and where ``spill`` puts them: slot
# b's three rows of n in SU, from b 3 n
_SPILLED = {"g_u1[": "SU[su + ", "g_u2[": "SU[su + n + ", "g_v[": "SU[su + 2u * n + "}


def render_stein(t: str, cap: int, wg: int, reorth: bool = True, stage: bool = False, spill: bool = False) -> str:
    """Bindings DT, ET (nz x n: trd's tridiagonal, scaled), LO, HI (bisect's brackets:
    slot j's eigenvalue, of the block that holds row j, is their midpoint), SH (nz x n:
    the shift each slot's inverse iteration uses), SW (nz x n x 3 u32: a cluster's
    next slot, its iterations and passed growth tests, between dispatches), ZT (nz x
    n x n: the eigenvectors of T as rows, slot j in row j; zero outside the slot's
    block); P: nz, n, budget (loop iterations one invocation may run in this dispatch;
    0: unbounded), first (start from scratch, else resume). n <= cap.

    Inverse iteration (LAPACK's dstein in shape), a workgroup per slot j: slot j
    leads a cluster when it is its block's first or its eigenvalue lies more than
    STEIN_ORTOL ||T_block||_1 above the slot before it; the leader runs its
    cluster's eigenvalues one after another (the other workgroups return at once),
    each from a pseudo-random start vector (a hash of row and slot): shift sigma =
    the eigenvalue, raised to 10 eps |sigma| past the previous slot's shift where
    they meet (so that repeated values get distinct factorizations); per iteration
    the right side scaled to a 1-norm of m ||T_block|| eps, one solve with
    T_block - sigma I by LU with partial pivoting (invocation 0: the factorization
    fused with the forward substitution, U's first superdiagonal, its pivots'
    reciprocals and the iterate in workgroup memory, the row swaps as bits, the
    second superdiagonal read back from ET where a row was swapped; a pivot below
    eps ||T_block||, an exact zero included, replaced by that size with its sign:
    a perturbation of the shift in that row within the backward error; the solve
    is one chain of dependent steps, so one reciprocal a row serves both the
    multiplier and the back substitution), then modified Gram-Schmidt against the
    cluster's earlier vectors (all invocations: one tree reduction a vector),
    until the iterate's largest entry passes sqrt(0.1 / m) and STEIN_EXTRA more
    iterations ran, STEIN_MAXITS at most; then scaled to unit 2-norm with its
    largest entry positive. A 1 x 1 block's vector is the unit vector, exactly.
    Where the back substitution's entries grow past BIG (several tiny pivots),
    the entries so far are scaled down by BIG. A NaN in the block gives NaN
    vectors.

    With ``spill`` (orders whose rows do not fit workgroup memory) U's superdiagonal,
    the pivots' reciprocals and the iterate live in a binding of their own, SU (nz x
    n x 3 n: three rows a slot), every barrier then a storage barrier too."""
    assert not (stage and spill)
    r = t
    eps = _eps(r)
    big = "R(1e150)" if r == "f64" else "R(1e15)"
    lg = wg.bit_length() - 1
    nw = max(1, cap // 32)
    decls = stein_record(t, cap, wg, reorth, stage, spill).declarations()
    # without reorth no slot joins another's cluster: each iterates alone (the caller
    # orthonormalizes the vectors afterwards)
    ortol_c = f"R({STEIN_ORTOL})" if reorth else "R(-1)"
    rows = [] if spill else [f"var<workgroup> g_u1: array<R, {cap}>;", f"var<workgroup> g_u2: array<R, {cap}>;",
                             f"var<workgroup> g_v: array<R, {cap}>;"]
    decls += rows + [f"var<workgroup> g_sw: array<u32, {nw}>;",
              f"var<workgroup> g_q: array<vec4<R>, {wg}>;",
              "var<workgroup> g_k: u32;", "var<workgroup> g_b0: u32;", "var<workgroup> g_b1: u32;",
              "var<workgroup> g_bad: u32;", "var<workgroup> g_done: u32;", "var<workgroup> g_extra: u32;",
              "var<workgroup> g_nrm: R;", "var<workgroup> g_lo: atomic<u32>;", "var<workgroup> g_hi: atomic<u32>;"]
    body = _negligible(r).split("\n")
    body += f"""fn lam(i: u32) -> R {{ return R(0.5) * (LO[i] + HI[i]); }}
fn pivot(p: R, tol: R) -> R {{
    // a pivot below tol (an exact zero too) raised to tol, its sign kept
    if (r_abs(p) < tol) {{ return select(tol, -tol, p < R(0)); }}
    return p;
}}
fn rnd(row: u32, k: u32, s: u32) -> R {{
    // uniform in [-1, 1), a hash of (row, slot, attempt)
    var h = (row * 0x9E3779B1u) ^ ((k * 0x85EBCA77u) + (s * 0xC2B2AE3Du) + 0x27D4EB2Fu);
    h = h ^ (h >> 15u); h = h * 0x2C1B3C6Du; h = h ^ (h >> 12u); h = h * 0x297A2D39u; h = h ^ (h >> 15u);
    return R(f32(h >> 8u) * (1.0 / 8388608.0) - 1.0);
}}
fn shift_of(t0: u32, k: u32, lead: u32) -> R {{
    var x = lam(t0 + k);
    if (k > lead) {{
        let xm = SH[t0 + k - 1u];
        let pert = R(10) * {eps} * r_abs(x);
        if (x - xm < pert) {{ x = xm + pert; }}
    }}
    SH[t0 + k] = x;
    return x;
}}
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let b = wid.x + wid.y * 65535u;
    if (b >= P[0] * P[1]) {{ return; }}
    let n = P[1]; let z = b / n; let j = b % n; let t0 = z * n;
    let budget = P[2]; let first = P[3] == 1u;
    var its = 0u; var nconv = 0u;
    if (lid == 0u) {{
        var k = j;
        if (!first) {{ k = SW[3u * b]; its = SW[3u * b + 1u]; nconv = SW[3u * b + 2u]; }}
        g_k = k;
        atomicStore(&g_lo, 0u); atomicStore(&g_hi, n);
    }}
    if (workgroupUniformLoad(&g_k) >= n) {{ return; }}
    // the block of row j (the nearest splits on either side), its norm and whether
    // it holds a NaN: all invocations
    for (var i = lid; i + 1u < n; i += {wg}u) {{
        if (negligible(t0, i)) {{
            if (i < j) {{ atomicMax(&g_lo, i + 1u); }} else {{ atomicMin(&g_hi, i + 1u); }}
        }}
    }}
    workgroupBarrier();
    if (lid == 0u) {{ g_b0 = atomicLoad(&g_lo); g_b1 = atomicLoad(&g_hi); }}
    let bl = vec2<u32>(workgroupUniformLoad(&g_b0), workgroupUniformLoad(&g_b1));
    var rmax = R(0);
    var bad = false;
    for (var i = bl.x + lid; i < bl.y; i += {wg}u) {{
        var rs = r_abs(DT[t0 + i]);
        if (i > bl.x) {{ rs += r_abs(ET[t0 + i - 1u]); }}
        if (i + 1u < bl.y) {{ rs += r_abs(ET[t0 + i]); }}
        if ({r}_isnan(rs)) {{ bad = true; }} else {{ rmax = max(rmax, rs); }}
    }}
    g_q[lid] = vec4<R>(rmax, select(R(0), R(1), bad), R(0), R(0));
{_tree(wg, "g_q", "vec4<R>(max(g_q[lid].xy, g_q[o].xy), R(0), R(0))")}
    if (lid == 0u) {{
        let nrm = g_q[0].x;
        g_nrm = nrm;
        g_bad = select(0u, 1u, g_q[0].y > R(0));
        if (g_bad == 0u && first && j > bl.x && lam(t0 + j) - lam(t0 + j - 1u) <= {ortol_c} * nrm) {{
            // not a cluster's first slot: its leader computes it (the test is the
            // leader's own for going on, so that every slot has one leader)
            g_k = n;
            SW[3u * b] = n;
        }}
    }}
    let k0 = workgroupUniformLoad(&g_k);
    if (k0 >= n) {{ return; }}
    let b0 = workgroupUniformLoad(&g_b0); let b1 = workgroupUniformLoad(&g_b1);
    let m = b1 - b0;
    let row0 = (t0 + j) * n;
    if (workgroupUniformLoad(&g_bad) == 1u || m == 1u) {{
        // a NaN in the block: NaN vectors; a 1 x 1 block: the unit vector
        let one = select(R(1), {r}_nan(), g_bad == 1u);
        let fill = select(R(0), {r}_nan(), g_bad == 1u);
        for (var i = lid; i < n; i += {wg}u) {{ ZT[row0 + i] = select(fill, one, i == b0); }}
        if (lid == 0u) {{ SW[3u * b] = n; }}
        return;
    }}
    let nrm = workgroupUniformLoad(&g_nrm);
    let lead = j;
    let ortol = {ortol_c} * nrm;
    let tol = {eps} * nrm;
    let bnorm = R(m) * nrm * {eps};
    let crit = r_sqrt(R(0.1) / R(m));
    let eb = t0 + b0;
    var sig = R(0);
    if (first) {{
        if (lid == 0u) {{ sig = shift_of(t0, j, lead); }}
        for (var i = lid; i < m; i += {wg}u) {{ g_v[i] = rnd(b0 + i, j, 0u); }}
    }} else {{
        if (lid == 0u) {{ sig = SH[t0 + k0]; }}
        for (var i = lid; i < m; i += {wg}u) {{ g_v[i] = ZT[(t0 + k0) * n + b0 + i]; }}
    }}
{{STAGE_LOADS}}
    workgroupBarrier();
    let per = ({wg}u + m - 1u) / {wg}u;
    var cost = 0u;
    loop {{
        let k = workgroupUniformLoad(&g_k);
        if (k >= n) {{ break; }}
        let vrow = (t0 + k) * n;
        let need = 2u * m + (k - lead + 4u) * (2u * per + {lg + 2}u) + (n + {wg - 1}u) / {wg}u + 16u;
        if (budget != 0u && cost > 0u && cost + need > budget) {{
            // out of this dispatch's budget: the iterate to ZT, resumed by the next
            for (var i = lid; i < m; i += {wg}u) {{ ZT[vrow + b0 + i] = g_v[i]; }}
            break;
        }}
        cost += need;
        var acc = R(0);
        for (var i = lid; i < m; i += {wg}u) {{ acc += r_abs(g_v[i]); }}
        g_q[lid] = vec4<R>(acc, R(0), R(0), R(0));
{_tree(wg, "g_q", "g_q[lid] + g_q[o]")}
        let sum1 = g_q[0].x;
        var s = bnorm / sum1;
        if (!(sum1 > R(0))) {{
            // the iterate vanished (the cluster's earlier vectors span it): a fresh start
            for (var i = lid; i < m; i += {wg}u) {{ g_v[i] = rnd(b0 + i, k, its + 1u); }}
            s = bnorm / R(m);
        }}
        workgroupBarrier();
        if (lid == 0u) {{
            // (T_block - sig I) x = s v: LU with partial pivoting, the forward
            // substitution fused with the factorization (one reciprocal a row: the
            // pivot's, which both the multiplier and the back substitution use), then
            // the back substitution
            var a = DT[eb] - sig; var bb = ET[eb];
            var rr = g_v[0] * s;
            var word = 0u;
            for (var i = 0u; i + 1u < m; i++) {{
                let ei = ET[eb + i]; let dn = DT[eb + i + 1u] - sig;
                var en = R(0);
                if (i + 2u < m) {{ en = ET[eb + i + 1u]; }}
                let q = g_v[i + 1u] * s;
                if (r_abs(a) >= r_abs(ei)) {{
                    let rp = R(1) / pivot(a, tol);
                    g_u1[i] = rp; g_u2[i] = bb; g_v[i] = rr;
                    let l = ei * rp;
                    a = dn - l * bb; bb = en; rr = q - l * rr;
                }} else {{
                    let rp = R(1) / pivot(ei, tol);
                    g_u1[i] = rp; g_u2[i] = dn; g_v[i] = q;
                    word = word | (1u << (i & 31u));
                    let l = a * rp;
                    a = bb - l * dn; bb = -l * en; rr = rr - l * q;
                }}
                if ((i & 31u) == 31u || i + 2u == m) {{ g_sw[i >> 5u] = word; word = 0u; }}
            }}
            g_u1[m - 1u] = R(1) / pivot(a, tol); g_u2[m - 1u] = R(0); g_v[m - 1u] = rr;
            var x1 = R(0); var x2 = R(0); var fac = R(1); var extra = 0u;
            for (var ii = m; ii > 0u; ii--) {{
                let i = ii - 1u;
                var u3 = R(0);
                if (i + 2u < m && ((g_sw[i >> 5u] >> (i & 31u)) & 1u) == 1u) {{ u3 = ET[eb + i + 1u]; }}
                var x = (g_v[i] * fac - g_u2[i] * x1 - u3 * x2) * g_u1[i];
                if (r_abs(x) > {big}) {{
                    let f = R(1) / {big};
                    x *= f; x1 *= f; x2 *= f; fac *= f;
                    for (var q = i + 1u; q < m; q++) {{ g_v[q] *= f; }}
                    extra += m - i;
                }}
                g_v[i] = x; x2 = x1; x1 = x;
            }}
            g_extra = extra;
        }}
        cost += workgroupUniformLoad(&g_extra);
        // modified Gram-Schmidt against the cluster's finished vectors
        for (var p = lead; p < k; p++) {{
            let prow = (t0 + p) * n + b0;
            var d = R(0);
            for (var i = lid; i < m; i += {wg}u) {{ d += ZT[prow + i] * g_v[i]; }}
            g_q[lid] = vec4<R>(d, R(0), R(0), R(0));
{_tree(wg, "g_q", "g_q[lid] + g_q[o]")}
            let c = workgroupUniformLoad(&g_q[0]).x;
            for (var i = lid; i < m; i += {wg}u) {{ g_v[i] -= c * ZT[prow + i]; }}
        }}
        // the largest entry (by magnitude, with its sign), the 1-norm, the 2-norm squared
        var st = vec4<R>(R(0), R(0), R(0), R(0));
        for (var i = lid; i < m; i += {wg}u) {{
            let x = g_v[i]; let ax = r_abs(x);
            if (ax > st.x) {{ st.x = ax; st.y = x; }}
            st.z += ax; st.w += x * x;
        }}
        g_q[lid] = st;
{_tree(wg, "g_q", "vec4<R>(select(g_q[lid].xy, g_q[o].xy, g_q[o].x > g_q[lid].x), g_q[lid].zw + g_q[o].zw)")}
        if (lid == 0u) {{
            its += 1u;
            if (g_q[0].x >= crit) {{ nconv += 1u; }}
            g_done = select(0u, 1u, nconv > {STEIN_EXTRA}u || its >= {STEIN_MAXITS}u);
        }}
        if (workgroupUniformLoad(&g_done) == 1u) {{
            let fin = g_q[0];
            let sc = select(R(-1), R(1), fin.y >= R(0)) / r_sqrt(fin.w);
            for (var i = lid; i < n; i += {wg}u) {{
                var x = R(0);
                if (i >= b0 && i < b1) {{ x = g_v[i - b0] * sc; }}
                ZT[vrow + i] = x;
            }}
            storageBarrier();
            if (lid == 0u) {{
                let kn = k + 1u;
                if (kn < b1 && lam(t0 + kn) - lam(t0 + k) <= ortol) {{
                    g_k = kn; sig = shift_of(t0, kn, lead); its = 0u; nconv = 0u;
                }} else {{
                    g_k = n;
                }}
            }}
            let kn = workgroupUniformLoad(&g_k);
            if (kn < n) {{
                for (var i = lid; i < m; i += {wg}u) {{ g_v[i] = rnd(b0 + i, kn, 0u); }}
            }}
            workgroupBarrier();
        }}
    }}
    if (lid == 0u) {{ SW[3u * b] = g_k; SW[3u * b + 1u] = its; SW[3u * b + 2u] = nconv; }}
}}""".split("\n")
    body = _stein_stage(body, cap, wg, stage)
    if spill:
        body = _stein_spill(body)
    return _finish(decls + ([f"var<workgroup> g_d: array<R, {cap}>;", f"var<workgroup> g_e: array<R, {cap}>;"]
                            if stage else []), t, body)


def _stein_spill(body: list[str]) -> list[str]:
    """stein's lines with its row arrays in SU (``_SPILLED``): each slot's base su,
    and a storage barrier wherever invocations meet (where one reads what another
    wrote: the solve's rows after it, the iterate before it)."""
    out = []
    for line in body:
        for a, b in _SPILLED.items():
            line = line.replace(a, b)
        line = line.replace("workgroupBarrier();", "storageBarrier(); workgroupBarrier();")
        if "cost += workgroupUniformLoad(&g_extra);" in line:
            out.append("        storageBarrier();")
        out.append(line)
        if line.lstrip().startswith("let n = P[1];"):
            out.append("    let su = b * 3u * n;")
    return out


def _stein_stage(body: list[str], cap: int, wg: int, stage: bool) -> list[str]:
    """stein's lines with the block's diagonal and off-diagonal read from workgroup
    memory in the solves (loaded once by all invocations) where ``stage``, else as
    they are (read from DT and ET, row by row, by the one invocation that solves)."""
    out = []
    for line in body:
        if "{STAGE_LOADS}" in line:
            if stage:
                out.append(f"    for (var i = lid; i < m; i += {wg}u) {{ g_d[i] = DT[eb + i]; g_e[i] = ET[eb + i]; }}")
            continue
        if stage and ("DT[eb" in line or "ET[eb" in line):
            line = (line.replace("DT[eb + ", "g_d[").replace("ET[eb + ", "g_e[")
                    .replace("DT[eb]", "g_d[0]").replace("ET[eb]", "g_e[0]"))
        out.append(line)
    return out


def multisect_record(t: str, wg: int) -> Launch:
    return record(f"linalg_trd_multisect_{t}_{wg}",
                  [("DT", "R", False), ("ET", "R", False), ("SC", "R", False), ("LO", "R", True), ("HI", "R", True),
                   ("LAM", "R", True)],
                  ("nz", "n", "iters"), wg)


def multisect_steps(t: str, wg: int) -> int:
    """Multisection steps to the bracket width that bisect's steps reach: each step
    cuts it wg + 1 ways."""
    bits = (53 if t == "f64" else 24) + 4
    return -(-bits * 1000 // int(1000 * math.log2(wg + 1))) + 1


def render_multisect(t: str, wg: int) -> str:
    """bisect's job (the same bindings, brackets and values; P: nz, n, steps) by
    multisection, a workgroup per eigenvalue: each step evaluates the Sturm count at
    wg points spread evenly inside [lo, hi], one an invocation, and keeps the piece
    between the last point whose count is at most j - b0 and the first past it, so
    that the bracket shrinks wg + 1 times a step (wg = 64: 10 steps of one Sturm
    count where bisect runs 57 one after another; the count's division makes each a
    chain of n dependent steps). The same invariant count(lo) <= j - b0 < count(hi)
    holds whatever the counts' rounding, and the block, Gershgorin interval and
    pivmin are bisect's, computed by all invocations. For GPUs; lavapipe, which runs
    a workgroup's invocations one after another, takes bisect."""
    r = t
    eps = _eps(r)
    tiny = "R(2.2250738585072014e-308)" if r == "f64" else "R(1.1754944e-38)"
    decls = multisect_record(t, wg).declarations()
    decls += [f"var<workgroup> g_r: array<vec4<R>, {wg}>;", "var<workgroup> g_lo: atomic<u32>;",
              "var<workgroup> g_hi: atomic<u32>;", "var<workgroup> g_first: atomic<u32>;",
              "var<workgroup> g_b0: u32;", "var<workgroup> g_b1: u32;", "var<workgroup> g_t: u32;"]
    body = _negligible(r).split("\n")
    body += [f"@compute @workgroup_size({wg})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
             "    let e = wid.x + wid.y * 65535u;"]
    body += f"""    let n = P[1];
    if (e >= P[0] * n) {{ return; }}
    let z = e / n; let j = e % n;
    let t0 = z * n;
    if (lid == 0u) {{ atomicStore(&g_lo, 0u); atomicStore(&g_hi, n); }}
    workgroupBarrier();
    var emax = R(0);
    var bad = false;
    for (var i = lid; i < n; i += {wg}u) {{
        bad = bad || {r}_isnan(DT[t0 + i]);
        if (i + 1u < n) {{
            let x = ET[t0 + i];
            emax = max(emax, x * x);
            bad = bad || {r}_isnan(x);
            if (negligible(t0, i)) {{
                if (i < j) {{ atomicMax(&g_lo, i + 1u); }} else {{ atomicMin(&g_hi, i + 1u); }}
            }}
        }}
    }}
    workgroupBarrier();
    if (lid == 0u) {{ g_b0 = atomicLoad(&g_lo); g_b1 = atomicLoad(&g_hi); }}
    let b0 = workgroupUniformLoad(&g_b0); let b1 = workgroupUniformLoad(&g_b1);
    let jl = j - b0;
    var glo = DT[t0 + b0]; var ghi = glo;
    for (var i = b0 + lid; i < b1; i += {wg}u) {{
        var rad = R(0);
        if (i > b0) {{ rad += r_abs(ET[t0 + i - 1u]); }}
        if (i + 1u < b1) {{ rad += r_abs(ET[t0 + i]); }}
        glo = min(glo, DT[t0 + i] - rad); ghi = max(ghi, DT[t0 + i] + rad);
    }}
    g_r[lid] = vec4<R>(emax, select(R(0), R(1), bad), -glo, ghi);
{_tree(wg, "g_r", "max(g_r[lid], g_r[o])")}
    let red = g_r[0];
    let pivmin = max({tiny} * R(1e4), red.x * {tiny} * R(1e4));
    var lo = -red.z; var hi = red.w;
    let w = hi - lo;
    let pad = R(2) * {eps} * max(r_abs(lo), r_abs(hi)) + R(2) * pivmin + {eps} * w;
    lo -= pad; hi += pad;
    if (b1 == b0 + 1u) {{ lo = DT[t0 + b0]; hi = lo; }}  // a 1 x 1 block: its entry, exactly
    for (var it = 0u; it < P[2]; it++) {{
        let step = (hi - lo) / R({wg + 1});
        let x = min(lo + R(lid + 1u) * step, hi);
        var cnt = 0u;
        var q = DT[t0 + b0] - x;
        if (r_abs(q) < pivmin) {{ q = -pivmin; }}
        if (q < R(0)) {{ cnt += 1u; }}
        for (var i = b0 + 1u; i < b1; i++) {{
            let ei = ET[t0 + i - 1u];
            q = DT[t0 + i] - x - ei * ei / q;
            if (r_abs(q) < pivmin) {{ q = -pivmin; }}
            if (q < R(0)) {{ cnt += 1u; }}
        }}
        if (lid == 0u) {{ atomicStore(&g_first, {wg}u); }}
        workgroupBarrier();
        if (cnt > jl) {{ atomicMin(&g_first, lid); }}
        workgroupBarrier();
        if (lid == 0u) {{ g_t = atomicLoad(&g_first); }}
        let tf = workgroupUniformLoad(&g_t);
        // every invocation computes the same points from the same lo, hi
        let nlo = select(min(lo + R(tf) * step, hi), lo, tf == 0u);
        let nhi = select(min(lo + R(tf + 1u) * step, hi), hi, tf == {wg}u);
        lo = nlo; hi = nhi;
    }}
    if (lid == 0u) {{
        LO[e] = lo; HI[e] = hi;
        var v = R(0.5) * (lo + hi) * SC[z];
        if (red.y > R(0)) {{ v = {r}_nan(); }}
        LAM[e] = v;
    }}
}}""".split("\n")
    return _finish(decls, t, body)
