"""WGSL matmul kernels: pure functions from a key to WGSL text.

Operands are strided views of device buffers: ``A[z][m, k]`` is at
``offA + zA(z) + m*sAm + k*sAk`` (element units, u32 arithmetic, so negative strides
wrap correctly), and ``zA(z)`` unravels the flat batch index over the batch shape with
per-operand batch strides (0 where a batch dim is broadcast). A transposed operand is
just another pair of strides: no copy. The output is a new contiguous
``(batch..., M, N)`` buffer.

Two families:

* ``render_tiled_f32``: float32, a BM x BN tile per workgroup of 256 threads (16 x 16),
  each thread an (BM/16) x (BN/16) register block of vec4 accumulators, BK-deep slabs of
  A and B staged through workgroup memory (A transposed there, so both are read as
  vec4), with the next slab's global loads issued before the current slab is used.
  The *load class* of each operand (part of the key) says how its slab is fetched:
  ``Kv``/``Mv``/``Nv`` one vec4 along that (unit-stride, 4-aligned) dim, ``sK``/``sM``/
  ``sN`` scalars with consecutive threads along that dim (any strides).
* ``render_generic``: any numeric dtype; each invocation computes 4 consecutive
  outputs (so 8/16-bit outputs own whole u32 words) with a plain K loop.
"""
from __future__ import annotations

from . import elementwise as ew
from . import ops
from . import types as ty

THREADS = 256

# Parameter words shared by both families.
#   0 M, 1 N, 2 K, 3 nbatch, 4 offA, 5 offB, 6 sAm, 7 sAk, 8 sBk, 9 sBn,
#   10 tilesM, 11 tilesN, 12 total outputs, then per batch dim: size, strideA, strideB.
P_HEAD = 13


def param_words(M, N, K, nbatch, offA, offB, sAm, sAk, sBk, sBn, tilesM, tilesN,
                batch_shape, batch_sa, batch_sb) -> list[int]:
    words = [M, N, K, nbatch, offA, offB, sAm, sAk, sBk, sBn, tilesM, tilesN, M * N * nbatch]
    for n, sa, sb in zip(batch_shape, batch_sa, batch_sb):
        words += [n, sa, sb]
    return [w & 0xFFFFFFFF for w in words]


def _batch_offsets(rank: int, z: str) -> list[str]:
    """Statements computing ``zA``/``zB`` (batch offsets) from flat batch index ``z``."""
    lines = ["var zA = 0u;", "var zB = 0u;"]
    if rank:
        lines.append(f"var zr = {z};")
    for d in reversed(range(rank)):
        w = P_HEAD + 3 * d
        lines.append(f"{{ let i = zr % P[{w}]; zr = zr / P[{w}]; zA += i * P[{w + 1}]; zB += i * P[{w + 2}]; }}")
    return lines


def _decls(a_elem: str, b_elem: str, c_elem: str) -> str:
    return (f"@group(0) @binding(0) var<storage, read> A: array<{a_elem}>;\n"
            f"@group(0) @binding(1) var<storage, read> B: array<{b_elem}>;\n"
            f"@group(0) @binding(2) var<storage, read_write> C: array<{c_elem}>;\n"
            "@group(0) @binding(3) var<storage, read> P: array<u32>;\n")


# ------------------------------------------------------------------ tiled float32

def tiled_name(key) -> str:
    _, a_cls, b_cls, c_vec, bm, bk, rank = key
    return f"matmul_f32_{bm}x{bm}x{bk}_{a_cls}_{b_cls}{'_v' if c_vec else ''}_b{rank}"


def render_tiled_f32(a_cls: str, b_cls: str, c_vec: bool, bm: int, bk: int, rank: int) -> str:
    """The tiled kernel. ``bm`` (= BN) is 64 or 128; vec4 classes get offsets and strides
    in vec4 units (the caller divides them)."""
    bn = bm
    hm = bm // 64  # 4-row (4-col) groups per thread: rows ty*4 + h*64 + i
    n_a = bm * bk // THREADS  # A elements per thread per slab
    n_b = bk * bn // THREADS
    L = []
    L.append(_decls("vec4<f32>" if a_cls.endswith("v") else "f32",
                    "vec4<f32>" if b_cls.endswith("v") else "f32",
                    "vec4<f32>" if c_vec else "f32"))
    L.append(f"var<workgroup> As: array<vec4<f32>, {bk * bm // 4}>;  // [k][m]")
    L.append(f"var<workgroup> Bs: array<vec4<f32>, {bk * bn // 4}>;  // [k][n]")
    L.append("@compute @workgroup_size(256)")
    L.append("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {")
    body = []
    body += ["let w = wid.x + wid.y * 65535u;",
             "let M = P[0]; let N = P[1]; let K = P[2];",
             "let tilesM = P[10]; let tilesN = P[11];",
             "let per = tilesM * tilesN;",
             "let z = w / per;",
             "if (z >= P[3]) { return; }",
             "let tile = w % per;",
             f"let m0 = (tile / tilesN) * {bm}u; let n0 = (tile % tilesN) * {bn}u;",
             "let tx = tid % 16u; let ty = tid / 16u;",
             "let sAm = P[6]; let sAk = P[7]; let sBk = P[8]; let sBn = P[9];"]
    body += _batch_offsets(rank, "z")
    body += ["let baseA = P[4] + zA;", "let baseB = P[5] + zB;"]

    # --- slab loads into registers (ra*, rb*) and stores into workgroup memory
    load_a, store_a, load_b, store_b, idx = [], [], [], [], []
    if a_cls == "Kv":  # vec4 along K; A4[baseA + m*sAm + k/4]
        for r in range(n_a // 4):
            v = f"(tid + {r * THREADS}u)"
            idx.append(f"let am{r} = {v} / {bk // 4}u; let ak{r} = ({v} % {bk // 4}u) * 4u;")
            load_a += [f"ra{r} = vec4<f32>(0.0);",
                       f"if (m0 + am{r} < M && k0 + ak{r} < K) {{ ra{r} = A[baseA + (m0 + am{r}) * sAm + ((k0 + ak{r}) >> 2u)]; }}"]
            for i in range(4):
                store_a.append(f"As[(ak{r} + {i}u) * {bm // 4}u + (am{r} >> 2u)][am{r} & 3u] = ra{r}[{i}];")
        n_ra, ra_t = n_a // 4, "vec4<f32>"
    elif a_cls == "Mv":  # vec4 along M; A4[baseA + k*sAk + m/4]
        for r in range(n_a // 4):
            v = f"(tid + {r * THREADS}u)"
            idx.append(f"let ak{r} = {v} / {bm // 4}u; let am{r} = ({v} % {bm // 4}u) * 4u;")
            load_a += [f"ra{r} = vec4<f32>(0.0);",
                       f"if (m0 + am{r} < M && k0 + ak{r} < K) {{ ra{r} = A[baseA + (k0 + ak{r}) * sAk + ((m0 + am{r}) >> 2u)]; }}"]
            store_a.append(f"As[ak{r} * {bm // 4}u + (am{r} >> 2u)] = ra{r};")
        n_ra, ra_t = n_a // 4, "vec4<f32>"
    else:  # scalars, consecutive threads along K (sK) or M (sM)
        for r in range(n_a):
            v = f"(tid + {r * THREADS}u)"
            if a_cls == "sK":
                idx.append(f"let am{r} = {v} / {bk}u; let ak{r} = {v} % {bk}u;")
            else:
                idx.append(f"let ak{r} = {v} / {bm}u; let am{r} = {v} % {bm}u;")
            load_a += [f"ra{r} = 0.0;",
                       f"if (m0 + am{r} < M && k0 + ak{r} < K) {{ ra{r} = A[baseA + (m0 + am{r}) * sAm + (k0 + ak{r}) * sAk]; }}"]
            store_a.append(f"As[ak{r} * {bm // 4}u + (am{r} >> 2u)][am{r} & 3u] = ra{r};")
        n_ra, ra_t = n_a, "f32"
    if b_cls == "Nv":  # vec4 along N; B4[baseB + k*sBk + n/4]
        for r in range(n_b // 4):
            v = f"(tid + {r * THREADS}u)"
            idx.append(f"let bk{r} = {v} / {bn // 4}u; let bn{r} = ({v} % {bn // 4}u) * 4u;")
            load_b += [f"rb{r} = vec4<f32>(0.0);",
                       f"if (n0 + bn{r} < N && k0 + bk{r} < K) {{ rb{r} = B[baseB + (k0 + bk{r}) * sBk + ((n0 + bn{r}) >> 2u)]; }}"]
            store_b.append(f"Bs[bk{r} * {bn // 4}u + (bn{r} >> 2u)] = rb{r};")
        n_rb, rb_t = n_b // 4, "vec4<f32>"
    elif b_cls == "Kv":  # vec4 along K; B4[baseB + n*sBn + k/4]
        for r in range(n_b // 4):
            v = f"(tid + {r * THREADS}u)"
            idx.append(f"let bn{r} = {v} / {bk // 4}u; let bk{r} = ({v} % {bk // 4}u) * 4u;")
            load_b += [f"rb{r} = vec4<f32>(0.0);",
                       f"if (n0 + bn{r} < N && k0 + bk{r} < K) {{ rb{r} = B[baseB + (n0 + bn{r}) * sBn + ((k0 + bk{r}) >> 2u)]; }}"]
            for i in range(4):
                store_b.append(f"Bs[(bk{r} + {i}u) * {bn // 4}u + (bn{r} >> 2u)][bn{r} & 3u] = rb{r}[{i}];")
        n_rb, rb_t = n_b // 4, "vec4<f32>"
    else:
        for r in range(n_b):
            v = f"(tid + {r * THREADS}u)"
            if b_cls == "sN":
                idx.append(f"let bk{r} = {v} / {bn}u; let bn{r} = {v} % {bn}u;")
            else:
                idx.append(f"let bn{r} = {v} / {bk}u; let bk{r} = {v} % {bk}u;")
            load_b += [f"rb{r} = 0.0;",
                       f"if (n0 + bn{r} < N && k0 + bk{r} < K) {{ rb{r} = B[baseB + (k0 + bk{r}) * sBk + (n0 + bn{r}) * sBn]; }}"]
            store_b.append(f"Bs[bk{r} * {bn // 4}u + (bn{r} >> 2u)][bn{r} & 3u] = rb{r};")
        n_rb, rb_t = n_b, "f32"

    body += [f"var ra{r}: {ra_t};" for r in range(n_ra)]
    body += [f"var rb{r}: {rb_t};" for r in range(n_rb)]
    rows = 4 * hm
    body += [f"var c{i}_{j} = vec4<f32>(0.0);" for i in range(rows) for j in range(hm)]
    body += idx
    body.append("var k0 = 0u;")
    body.append("{")
    body += ["    " + x for x in load_a + load_b]
    body.append("}")
    body.append(f"let nslabs = (K + {bk - 1}u) / {bk}u;")
    body.append("for (var s = 0u; s < nslabs; s++) {")
    inner = list(store_a + store_b)
    inner.append("workgroupBarrier();")
    inner.append(f"k0 += {bk}u;")
    inner.append("if (s + 1u < nslabs) {")
    inner += ["    " + x for x in load_a + load_b]
    inner.append("}")
    for kk in range(bk):
        for h in range(hm):
            inner.append(f"let a{kk}_{h} = As[{kk * bm // 4}u + {h * 16}u + ty];")
            inner.append(f"let b{kk}_{h} = Bs[{kk * bn // 4}u + {h * 16}u + tx];")
        for h in range(hm):
            for i in range(4):
                r = h * 4 + i
                for j in range(hm):
                    inner.append(f"c{r}_{j} = fma(vec4<f32>(a{kk}_{h}[{i}]), b{kk}_{j}, c{r}_{j});")
    inner.append("workgroupBarrier();")
    body += ["    " + x for x in inner]
    body.append("}")
    # --- store the register block
    body.append("let zC = z * M * N;")
    for h in range(hm):
        for i in range(4):
            r = h * 4 + i
            body.append(f"let mr{r} = m0 + {h * 64 + i}u + ty * 4u;")
            body.append(f"if (mr{r} < M) {{")
            for j in range(hm):
                body.append(f"    let n{r}_{j} = n0 + {j * 64}u + tx * 4u;")
                if c_vec:
                    body.append(f"    if (n{r}_{j} < N) {{ C[(zC + mr{r} * N + n{r}_{j}) >> 2u] = c{r}_{j}; }}")
                else:
                    for c in range(4):
                        body.append(f"    if (n{r}_{j} + {c}u < N) {{ C[zC + mr{r} * N + n{r}_{j} + {c}u] = c{r}_{j}[{c}]; }}")
            body.append("}")
    L += ["    " + x for x in body]
    L.append("}")
    return "\n".join(L) + "\n"


# ------------------------------------------------------------------ generic

def generic_name(key) -> str:
    return f"matmul_{key[1]}_b{key[3]}"


def _mul_add(dname: str, native: bool) -> tuple[str, str, str]:
    """(multiply template, add template, zero) in the dtype's compute tag."""
    t = ty.tag(dname, native)
    if t in ("c64", "c128"):
        mul = "vec2({a}.x * {b}.x - {a}.y * {b}.y, {a}.x * {b}.y + {a}.y * {b}.x)"
    else:
        mul = ops.lower("multiply", None, (t, t), t)
    return mul, ops.lower("add", None, (t, t), t), ops.ZERO[t]


def render_generic(dname: str, native: bool, rank: int) -> str:
    """One invocation: 4 consecutive outputs (flat C order over batch, M, N)."""
    mul, add, zero = _mul_add(dname, native)
    st = ty.storage_type(dname, native)
    c_elem = f"vec4<{st}>" if ty.is_vec4able(dname) else st
    L = [_decls(st, st, c_elem)]
    L.append("@compute @workgroup_size(64)")
    L.append("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {")
    body = ["let gid = (wid.x + wid.y * 65535u) * 64u + lid;",
            "let M = P[0]; let N = P[1]; let K = P[2]; let total = P[12];",
            "let sAm = P[6]; let sAk = P[7]; let sBk = P[8]; let sBn = P[9];",
            "if (gid * 4u >= total) { return; }"]
    vals = []
    for j in range(4):
        body.append(f"var y{j} = {zero};")
        body.append("{")
        inner = [f"let e = min(gid * 4u + {j}u, total - 1u);",
                 "let n = e % N; let t = e / N; let m = t % M; let z = t / M;"]
        inner += _batch_offsets(rank, "z")
        inner += ["var ia = P[4] + zA + m * sAm;", "var ib = P[5] + zB + n * sBn;",
                  f"var acc = {zero};",
                  "for (var k = 0u; k < K; k++) {",
                  f"    let a = {ty.load(dname, 'A', 'ia', native)};",
                  f"    let b = {ty.load(dname, 'B', 'ib', native)};",
                  "    acc = " + add.format(a="acc", b=mul.format(a="a", b="b")) + ";",
                  "    ia += sAk; ib += sBk;",
                  "}",
                  f"y{j} = acc;"]
        body += ["    " + x for x in inner]
        body.append("}")
        vals.append(f"y{j}")
    body += ew._store("C", dname, vals, native)
    L += ["    " + x for x in body]
    L.append("}")
    code = "\n".join(L) + "\n"
    return L[0] + ew.library(code) + "\n" + "\n".join(L[1:]) + "\n"
