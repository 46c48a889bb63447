"""WGSL matmul kernels: pure functions from a key to WGSL text.

Operands are strided views of device buffers: ``A[z][m, k]`` is at
``offA + zA(z) + m*sAm + k*sAk`` (element units, u32 arithmetic, so negative strides
wrap correctly), and ``zA(z)`` unravels the flat batch index over the batch shape with
per-operand batch strides (0 where a batch dim is broadcast). A transposed operand is
just another pair of strides: no copy. The output is a new contiguous
``(batch..., M, N)`` buffer.

Two families:

* ``render_tiled``: float32, float64, int32 or uint32 (one renderer, the element type
  a parameter), a BM x BN tile per workgroup (128x128 and 64x64 for
  wide outputs, e.g. 256x16 / 128x32 / 16x32 for narrow ones), each thread an
  RM x CN register block of vec4 accumulators, BK-deep slabs of
  A and B staged through workgroup memory (A transposed there, so both are read as
  vec4), with the next slab's global loads issued before the current slab is used.
  The *load class* of each operand (part of the key) says how its slab is fetched:
  ``Kv``/``Mv``/``Nv`` one vec4 along that (unit-stride, 4-aligned) dim, ``sK``/``sM``/
  ``sN`` scalars with consecutive threads along that dim (any strides).
* ``render_generic``: any numeric dtype; each invocation computes 4 consecutive
  outputs (so 8/16-bit outputs own whole u32 words) with a plain K loop.

Both take a K range per workgroup / invocation (split-K, parameter words 13-14): when
the outputs are too few to fill the GPU and K is long, ``matmul_nodes`` cuts K into
chunks whose partial products land in separate slabs of a scratch buffer, then sums
the slabs with a reduction kernel.
"""
from __future__ import annotations

import functools

from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew
from . import ops
from . import types as ty

# Parameter words shared by both families.
#   0 M, 1 N, 2 K, 3 nbatch, 4 offA, 5 offB, 6 sAm, 7 sAk, 8 sBk, 9 sBn,
#   10 tilesM, 11 tilesN, 12 total outputs, 13 K chunk, 14 number of K splits,
#   then per batch dim: size, strideA, strideB.
# Split-K: K is cut into ``nsplit`` chunks of ``kchunk``; chunk s of every output goes to
# a partial slab s of the output buffer (the caller sums the slabs). nsplit = 1 and
# kchunk >= K is the plain product.
P_HEAD = 15
_HEAD_FIELDS = ("M", "N", "K", "nbatch", "offA", "offB", "sAm", "sAk", "sBk", "sBn", "tilesM", "tilesN", "total",
                "kchunk", "nsplit")


# The tiled kernel's update modes (``upd``): 0 writes C = A B (contiguous, or its split-K
# slabs); 1 subtracts A B from a strided destination in place, C[offC + z sCz + m sCm
# + n sCn] -= (A B)[z, m, n]; 3 the same on and below the diagonal only (m >= n), tiles
# wholly above it skipped. The destination's four words follow the batch dims' words.
_UPDATE_FIELDS = ("offC", "sCz", "sCm", "sCn")


@functools.lru_cache(maxsize=None)
def _fields(rank: int, upd: int = 0) -> tuple:
    """The parameter words of either kernel, one u32 each, at words 0, 1, 2, ..."""
    head = tuple(Field(name, "u32", w) for w, name in enumerate(_HEAD_FIELDS))
    batch = tuple(Field(f"{part}{d}", "u32", P_HEAD + 3 * d + j)
                  for d in range(rank) for j, part in enumerate(("size", "sa", "sb")))
    tail = tuple(Field(name, "u32", P_HEAD + 3 * rank + j) for j, name in enumerate(_UPDATE_FIELDS)) if upd else ()
    return head + batch + tail


def param_words(M, N, K, nbatch, offA, offB, sAm, sAk, sBk, sBn, tilesM, tilesN,
                batch_shape, batch_sa, batch_sb, kchunk=None, nsplit=1) -> list[int]:
    """The words of the records' fields (``_fields``, consecutive u32 words), in their
    order, as u32 (negative strides wrap, as the kernels' u32 arithmetic expects)."""
    kchunk = K if kchunk is None else kchunk
    words = [M, N, K, nbatch, offA, offB, sAm, sAk, sBk, sBn, tilesM, tilesN, M * N * nbatch,
             kchunk, nsplit]
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


def _record(name: str, a_elem: str, b_elem: str, c_elem: str, rank: int, threads: int, upd: int = 0) -> Launch:
    """Both kernels' bindings: A and B read, C written; the parameter words above."""
    args = (Binding("A", a_elem), Binding("B", b_elem), Binding("C", c_elem, write=True))
    return Launch(name, args, _fields(rank, upd), False, threads)


def _decls(record: Launch) -> str:
    return "\n".join(record.declarations()) + "\n"


# ------------------------------------------------------------------ tiled

def tiled_record(a_cls: str, b_cls: str, c_vec: bool, bm: int, bn: int, bk: int, rm: int, cn: int,
                 rank: int, elem: str = "f32", upd: int = 0) -> Launch:
    name = f"matmul_{elem}_{bm}x{bn}x{bk}_r{rm}x{cn}_{a_cls}_{b_cls}{'_v' if c_vec else ''}_b{rank}" \
        + (f"_u{upd}" if upd else "")
    v4 = f"vec4<{elem}>"
    return _record(name, v4 if a_cls.endswith("v") else elem, v4 if b_cls.endswith("v") else elem,
                   v4 if c_vec else elem, rank, tiled_threads(bm, bn, rm, cn), upd)


def tiled_threads(bm: int, bn: int, rm: int, cn: int) -> int:
    return (bm // rm) * (bn // cn)


def render_tiled(a_cls: str, b_cls: str, c_vec: bool, bm: int, bn: int, bk: int, rm: int, cn: int,
                 rank: int, elem: str = "f32", upd: int = 0) -> str:
    """The tiled kernel: a ``bm x bn`` tile per workgroup, each thread an ``rm x cn``
    register block (multiples of 4: ``rm/4`` vec4 row groups, ``cn/4`` vec4 column
    groups, strided by the thread grid), ``bk``-deep slabs. Threads per workgroup:
    ``(bm/rm) * (bn/cn)``. Vec4 classes get offsets and strides in vec4 units (the caller
    divides them). Workgroup ``w`` covers tile ``w % tiles`` of batch ``(w / tiles) %
    nbatch`` over K chunk ``w / (tiles * nbatch)``, written to that chunk's slab of C
    (``upd`` 1 or 3: subtracted from the strided destination instead, one K chunk)."""
    if upd and c_vec:
        raise ValueError("render_tiled: an update mode writes scalars (c_vec False)")
    T = tiled_threads(bm, bn, rm, cn)
    TY, TX = bm // rm, bn // cn
    floating = elem in ("f32", "f64")
    zero1 = "0.0" if floating else "0"

    def mul_add(a, b, c):   # integers wrap, as WGSL's i32 / u32 arithmetic does
        return f"fma({a}, {b}, {c})" if floating else f"{c} + {a} * {b}"

    hm, hn = rm // 4, cn // 4
    L = []
    L.append(_decls(tiled_record(a_cls, b_cls, c_vec, bm, bn, bk, rm, cn, rank, elem, upd)))
    L.append(f"var<workgroup> As: array<vec4<{elem}>, {bk * bm // 4}>;  // [k][m]")
    L.append(f"var<workgroup> Bs: array<vec4<{elem}>, {bk * bn // 4}>;  // [k][n]")
    L.append(f"@compute @workgroup_size({T})")
    L.append("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {")
    body = []
    body += ["let w = wid.x + wid.y * 65535u;",
             "let M = P[0]; let N = P[1];",
             "let tilesM = P[10]; let tilesN = P[11];",
             "let per = tilesM * tilesN;",
             "let nb = P[3];",
             "let zs = w / per;",
             "if (zs >= nb * P[14]) { return; }",
             "let z = zs % nb;",
             "let kbeg = (zs / nb) * P[13];",
             "let K = min(P[2], kbeg + P[13]);  // end of this chunk",
             "let tile = w % per;",
             f"let m0 = (tile / tilesN) * {bm}u; let n0 = (tile % tilesN) * {bn}u;"]
    if upd == 3:
        body.append(f"if (m0 + {bm}u <= n0) {{ return; }}  // wholly above the diagonal")
    body += [
             f"let tx = tid % {TX}u; let ty = tid / {TX}u;",
             "let sAm = P[6]; let sAk = P[7]; let sBk = P[8]; let sBn = P[9];"]
    body += _batch_offsets(rank, "z")
    body += ["let baseA = P[4] + zA;", "let baseB = P[5] + zB;"]

    def slots(n_items):
        """(slot count, whether the last slot needs a guard) for n_items over T threads."""
        n = -(-n_items // T)
        return n, n_items % T != 0

    load_a, store_a, load_b, store_b, idx = [], [], [], [], []

    def guarded(lines, r, n, ragged, n_items, pre):
        if ragged and r == n - 1:
            return [f"if ({pre}v{r} < {n_items}u) {{"] + ["    " + x for x in lines] + ["}"]
        return lines

    # --- slab loads into registers (ra*, rb*) and stores into workgroup memory
    if a_cls in ("Kv", "Mv"):
        n_items = bm * bk // 4
        n_ra, rag_a = slots(n_items)
        ra_t = f"vec4<{elem}>"
    else:
        n_items = bm * bk
        n_ra, rag_a = slots(n_items)
        ra_t = elem
    for r in range(n_ra):
        v = f"av{r}"
        idx.append(f"let {v} = tid + {r * T}u;")
        if a_cls == "Kv":  # vec4 along K; A4[baseA + m*sAm + k/4]
            idx.append(f"let am{r} = {v} / {bk // 4}u; let ak{r} = ({v} % {bk // 4}u) * 4u;")
            ld = f"A[baseA + (m0 + am{r}) * sAm + ((k0 + ak{r}) >> 2u)]"
            st = [f"As[(ak{r} + {i}u) * {bm // 4}u + (am{r} >> 2u)][am{r} & 3u] = ra{r}[{i}];" for i in range(4)]
            zero = f"vec4<{elem}>({zero1})"
        elif a_cls == "Mv":  # vec4 along M; A4[baseA + k*sAk + m/4]
            idx.append(f"let ak{r} = {v} / {bm // 4}u; let am{r} = ({v} % {bm // 4}u) * 4u;")
            ld = f"A[baseA + (k0 + ak{r}) * sAk + ((m0 + am{r}) >> 2u)]"
            st = [f"As[ak{r} * {bm // 4}u + (am{r} >> 2u)] = ra{r};"]
            zero = f"vec4<{elem}>({zero1})"
        else:  # scalars, consecutive threads along K (sK) or M (sM)
            if a_cls == "sK":
                idx.append(f"let am{r} = {v} / {bk}u; let ak{r} = {v} % {bk}u;")
            else:
                idx.append(f"let ak{r} = {v} / {bm}u; let am{r} = {v} % {bm}u;")
            ld = f"A[baseA + (m0 + am{r}) * sAm + (k0 + ak{r}) * sAk]"
            st = [f"As[ak{r} * {bm // 4}u + (am{r} >> 2u)][am{r} & 3u] = ra{r};"]
            zero = zero1
        load_a += guarded([f"ra{r} = {zero};",
                           f"if (m0 + am{r} < M && k0 + ak{r} < K) {{ ra{r} = {ld}; }}"], r, n_ra, rag_a, n_items, "a")
        store_a += guarded(st, r, n_ra, rag_a, n_items, "a")

    if b_cls in ("Nv", "Kv"):
        n_items = bn * bk // 4
        n_rb, rag_b = slots(n_items)
        rb_t = f"vec4<{elem}>"
    else:
        n_items = bn * bk
        n_rb, rag_b = slots(n_items)
        rb_t = elem
    for r in range(n_rb):
        v = f"bv{r}"
        idx.append(f"let {v} = tid + {r * T}u;")
        if b_cls == "Nv":  # vec4 along N; B4[baseB + k*sBk + n/4]
            idx.append(f"let bk{r} = {v} / {bn // 4}u; let bn{r} = ({v} % {bn // 4}u) * 4u;")
            ld = f"B[baseB + (k0 + bk{r}) * sBk + ((n0 + bn{r}) >> 2u)]"
            st = [f"Bs[bk{r} * {bn // 4}u + (bn{r} >> 2u)] = rb{r};"]
            zero = f"vec4<{elem}>({zero1})"
        elif b_cls == "Kv":  # vec4 along K; B4[baseB + n*sBn + k/4]
            idx.append(f"let bn{r} = {v} / {bk // 4}u; let bk{r} = ({v} % {bk // 4}u) * 4u;")
            ld = f"B[baseB + (n0 + bn{r}) * sBn + ((k0 + bk{r}) >> 2u)]"
            st = [f"Bs[(bk{r} + {i}u) * {bn // 4}u + (bn{r} >> 2u)][bn{r} & 3u] = rb{r}[{i}];" for i in range(4)]
            zero = f"vec4<{elem}>({zero1})"
        else:
            if b_cls == "sN":
                idx.append(f"let bk{r} = {v} / {bn}u; let bn{r} = {v} % {bn}u;")
            else:
                idx.append(f"let bn{r} = {v} / {bk}u; let bk{r} = {v} % {bk}u;")
            ld = f"B[baseB + (k0 + bk{r}) * sBk + (n0 + bn{r}) * sBn]"
            st = [f"Bs[bk{r} * {bn // 4}u + (bn{r} >> 2u)][bn{r} & 3u] = rb{r};"]
            zero = zero1
        load_b += guarded([f"rb{r} = {zero};",
                           f"if (n0 + bn{r} < N && k0 + bk{r} < K) {{ rb{r} = {ld}; }}"], r, n_rb, rag_b, n_items, "b")
        store_b += guarded(st, r, n_rb, rag_b, n_items, "b")

    body += [f"var ra{r}: {ra_t};" for r in range(n_ra)]
    body += [f"var rb{r}: {rb_t};" for r in range(n_rb)]
    body += [f"var c{i}_{j} = vec4<{elem}>({zero1});" for i in range(rm) for j in range(hn)]
    body += idx
    body.append("var k0 = kbeg;")
    body.append("{")
    body += ["    " + x for x in load_a + load_b]
    body.append("}")
    body.append(f"let nslabs = select(0u, (K - kbeg + {bk - 1}u) / {bk}u, K > kbeg);")
    body.append("for (var s = 0u; s < nslabs; s++) {")
    inner = list(store_a + store_b)
    inner.append("workgroupBarrier();")
    inner.append(f"k0 += {bk}u;")
    inner.append("if (s + 1u < nslabs) {")
    inner += ["    " + x for x in load_a + load_b]
    inner.append("}")
    for kk in range(bk):
        for h in range(hm):
            inner.append(f"let a{kk}_{h} = As[{kk * bm // 4}u + {h * TY}u + ty];")
        for j in range(hn):
            inner.append(f"let b{kk}_{j} = Bs[{kk * bn // 4}u + {j * TX}u + tx];")
        for h in range(hm):
            for i in range(4):
                r = h * 4 + i
                for j in range(hn):
                    inner.append(f"c{r}_{j} = {mul_add(f'vec4<{elem}>(a{kk}_{h}[{i}])', f'b{kk}_{j}', f'c{r}_{j}')};")
    inner.append("workgroupBarrier();")
    body += ["    " + x for x in inner]
    body.append("}")
    # --- store the register block
    u0 = P_HEAD + 3 * rank
    if upd:
        body.append(f"let zC = P[{u0}] + z * P[{u0 + 1}]; let sCm = P[{u0 + 2}]; let sCn = P[{u0 + 3}];")
    else:
        body.append("let zC = zs * M * N;")
    for h in range(hm):
        for i in range(4):
            r = h * 4 + i
            body.append(f"let mr{r} = m0 + {h * TY * 4 + i}u + ty * 4u;")
            body.append(f"if (mr{r} < M) {{")
            for j in range(hn):
                body.append(f"    let n{r}_{j} = n0 + {j * TX * 4}u + tx * 4u;")
                if upd:
                    for c in range(4):
                        cond = f"n{r}_{j} + {c}u < N" + (f" && n{r}_{j} + {c}u <= mr{r}" if upd == 3 else "")
                        body.append(f"    if ({cond}) {{ let at = zC + mr{r} * sCm + (n{r}_{j} + {c}u) * sCn; "
                                    f"C[at] = C[at] - c{r}_{j}[{c}]; }}")
                elif c_vec:
                    body.append(f"    if (n{r}_{j} < N) {{ C[(zC + mr{r} * N + n{r}_{j}) >> 2u] = c{r}_{j}; }}")
                else:
                    for c in range(4):
                        body.append(f"    if (n{r}_{j} + {c}u < N) {{ C[zC + mr{r} * N + n{r}_{j} + {c}u] = c{r}_{j}[{c}]; }}")
            body.append("}")
    L += ["    " + x for x in body]
    L.append("}")
    return "\n".join(L) + "\n"


# ------------------------------------------------------------------ generic

def generic_record(dname: str, native: bool, rank: int) -> Launch:
    st = ty.storage_type(dname, native)
    c_elem = f"vec4<{st}>" if ty.is_vec4able(dname) else st
    return _record(f"matmul_{dname}_b{rank}", st, st, c_elem, rank, 64)


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
    L = [_decls(generic_record(dname, native, rank))]
    L.append("@compute @workgroup_size(64)")
    L.append("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {")
    # gid = split * q + (its group of 4 outputs): split s's partial slab starts at
    # element 4*q*s of C (word aligned for 8/16-bit outputs)
    body = ["let gid = (wid.x + wid.y * 65535u) * 64u + lid;",
            "let M = P[0]; let N = P[1]; let total = P[12];",
            "let sAm = P[6]; let sAk = P[7]; let sBk = P[8]; let sBn = P[9];",
            "let q = (total + 3u) / 4u;",
            "let split = gid / q;",
            "if (split >= P[14]) { return; }",
            "let g4 = gid - split * q;",
            "let kbeg = split * P[13];",
            "let kn = min(P[2], kbeg + P[13]) - min(P[2], kbeg);"]
    vals = []
    for j in range(4):
        body.append(f"var y{j} = {zero};")
        body.append("{")
        inner = [f"let e = min(g4 * 4u + {j}u, total - 1u);",
                 "let n = e % N; let t = e / N; let m = t % M; let z = t / M;"]
        inner += _batch_offsets(rank, "z")
        inner += ["var ia = P[4] + zA + m * sAm + kbeg * sAk;", "var ib = P[5] + zB + n * sBn + kbeg * sBk;",
                  f"var acc = {zero};",
                  "for (var k = 0u; k < kn; k++) {",
                  f"    let a = {ty.load(dname, 'A', 'ia', native)};",
                  f"    let b = {ty.load(dname, 'B', 'ib', native)};",
                  "    acc = " + add.format(a="acc", b=mul.format(a="a", b="b")) + ";",
                  "    ia += sAk; ib += sBk;",
                  "}",
                  f"y{j} = acc;"]
        body += ["    " + x for x in inner]
        body.append("}")
        vals.append(f"y{j}")
    body += ew.store4("C", dname, vals, native)
    L += ["    " + x for x in body]
    L.append("}")
    code = "\n".join(L) + "\n"
    return L[0] + ew.library(code) + "\n" + "\n".join(L[1:]) + "\n"
