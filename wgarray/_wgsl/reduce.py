"""Render reduction kernels: pure functions from a ``ReduceSpec`` to WGSL text.

A reduction is four parts (as in CuPy): a *map* on each input element, a *combine* of
two partials, a *post-map* on the result and an *identity*. The map is the fused
elementwise producer of the input (``FusedInput``: casts, ``x != 0``, ``(x - m) ** 2``
... are computed inside this kernel); the post-map is a lazy elementwise op on the
(small) result: an elementwise spec over one leaf (the result) that the last pass
applies before it stores (mean's division, std's square root: ``render_post``), so
no separate kernel runs for it; this module renders the combine and the identity
for each kind and accumulator tag.

The input is seen as ``M`` rows of ``L`` elements (flat C-order index ``m * L + l`` of
the fused input, whose reduced axes were permuted last). A workgroup of 256 threads
holds ``256 / G`` groups of ``G`` lanes; each group reduces one row's chunk
``[c * C, min(L, (c + 1) * C))`` and writes one partial at ``m * NC + c``:

* each lane accumulates every ``G``-th element of the chunk in four interleaved
  accumulators (memory-level parallelism, and shorter serial chains for float sums);
* the four are combined pairwise, then the group's lanes by a shared-memory tree.

``G = 1`` (one thread per row) keeps reads coalesced when the reduced axis is strided
and the rows are adjacent in memory. With ``quad`` the input is read four consecutive
elements at a time (one ``vec4`` load per contiguous 32-bit leaf): the bandwidth path
for a big contiguous reduction. ``NC > 1`` chunks give a partial pass; the driver
reduces the partials again (``_kernels/reduce.py``).

Arg kinds (argmin/argmax) carry ``(value, index)`` pairs; the index of an element is
its position ``l`` in its row in the first pass, and is read from a second input
(the previous pass's indices) after that. ``NONE`` marks the identity.

Parameters (u32 words of ``P``): M, L, C, NC, then the input's parameters at word 8,
the index input's (arg kinds, later passes) after them and the post-map's after
those, each at an even word.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .._ops import REDUCTIONS
from .._runtime.launch import Binding, Field, Launch
from . import elementwise as ew
from . import ops
from . import types as ty

WORKGROUP = 256
HEADER_WORDS = 8
NONE = "0xffffffffu"

# The dtype whose bytes a partial of each accumulator tag is stored as.
STORE_DTYPE = {"i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64", "ei64": "int64",
               "eu64": "uint64", "f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}

ARG_KINDS = ("argmin", "argmax")

# A kind's combine is its op's lowering (sum: add, ...; wgarray/_ops.py).
_COMBINE = {kind: op.lowering for kind, op in REDUCTIONS.items()}


def _family_lookup(table: dict, t: str) -> str:
    for key in (t,) + ops.FAMILIES[t]:
        if key in table:
            return table[key]
    raise ops.LoweringError(f"no reduction combine for accumulator {t}")


def combine_expr(kind: str, t: str, a: str, b: str) -> str:
    """WGSL expression combining partials ``a`` and ``b`` (non-arg kinds)."""
    return _family_lookup(_COMBINE[kind], t).replace("{T}", t).format(a=a, b=b)


_NEG_ZERO = {"f32": "bitcast<f32>(0x80000000u)", "f64": "f64(bitcast<f32>(0x80000000u))"}
_LOWEST = {"i32": "bitcast<i32>(0x80000000u)", "u32": "0u", "i64": "(i64(1) << 63u)", "u64": "u64(0)",
           "ei64": "vec2<u32>(0u, 0x80000000u)", "eu64": "vec2<u32>(0u)", "f32": "(-f32_inf())",
           "f64": "(-f64_inf())"}
_HIGHEST = {"i32": "2147483647i", "u32": "0xffffffffu", "i64": "(~(i64(1) << 63u))", "u64": "(~u64(0))",
            "ei64": "vec2<u32>(0xffffffffu, 0x7fffffffu)", "eu64": "vec2<u32>(0xffffffffu)", "f32": "f32_inf()",
            "f64": "f64_inf()"}


def identity(kind: str, t: str, scan: bool = False) -> str:
    """The identity of a combine. Float sums start from +0.0 as NumPy's do (a sum of
    ``[-0.0, -0.0]`` is 0.0); a running sum starts from -0.0, which keeps its first
    element as it is (NumPy's cumsum of ``[-0.0]`` is -0.0)."""
    if kind == "sum":
        if t in _NEG_ZERO and scan:
            return _NEG_ZERO[t]
        if t in ("c64", "c128"):
            r = "f32" if t == "c64" else "f64"
            return f"{ty.WGSL_TYPE[t]}({_NEG_ZERO[r]}, {_NEG_ZERO[r]})" if scan else f"{ty.WGSL_TYPE[t]}()"
        return ops.ZERO[t]
    if kind == "prod":
        return ops.ONE[t]
    if kind == "max":
        return _LOWEST[t]
    if kind == "min":
        return _HIGHEST[t]
    raise AssertionError(kind)


def _arg_better(kind: str, t: str) -> str:
    """``fn better(va, ia, vb, ib) -> bool``: does candidate b replace a? (first
    occurrence wins ties; NaN counts as the extreme for both kinds, like NumPy)."""
    wt = ty.WGSL_TYPE[t]
    cmp = ">" if kind == "argmax" else "<"
    if t in ("f32", "f64"):
        body = f"""
    if ({t}_isnan(va)) {{ return {t}_isnan(vb) && ib < ia; }}
    if ({t}_isnan(vb)) {{ return true; }}
    if (vb == va) {{ return ib < ia; }}
    return vb {cmp} va;"""
    elif t in ("ei64", "eu64"):
        rel = "gt" if kind == "argmax" else "lt"
        body = f"""
    if ({t}_eq(vb, va)) {{ return ib < ia; }}
    return {t}_{rel}(vb, va);"""
    else:
        body = f"""
    if (vb == va) {{ return ib < ia; }}
    return vb {cmp} va;"""
    return f"""fn better(va: {wt}, ia: u32, vb: {wt}, ib: u32) -> bool {{
    if (ib == {NONE}) {{ return false; }}
    if (ia == {NONE}) {{ return true; }}{body}
}}
"""


@dataclass(frozen=True)
class ReduceSpec:
    kind: str  # sum, prod, min, max, argmin, argmax, moments (for var/std: one pass over the data)
    tag: str  # compute tag of the values (and of the accumulator)
    group: int  # G: lanes per row
    quad: bool  # read 4 consecutive elements per step (vec4 leaves)
    inp: ew.ElementwiseSpec  # fused input: the values
    idx: ew.ElementwiseSpec | None  # fused input: indices of a previous pass (arg kinds)
    int64_native: bool
    post: ew.ElementwiseSpec | None = None  # map of the result before it is stored (last pass)
    scan_identity: bool = False  # start from a running sum's identity (-0.0): a scan's tile sums
    partials: bool = False  # moments: read (n, mean, m2) partials of a previous pass, not ``inp``

    @property
    def name(self) -> str:
        flags = [("_q", self.quad), ("_post", self.post), ("_s", self.scan_identity), ("_p", self.partials)]
        return f"reduce_{self.kind}_{self.tag}_g{self.group}" + "".join(f for f, on in flags if on)

    @property
    def is_arg(self) -> bool:
        return self.kind in ARG_KINDS

    @property
    def is_moments(self) -> bool:
        return self.kind == "moments"

    @property
    def n_outputs(self) -> int:
        return 2 if self.is_arg else 3 if self.is_moments and self.post is None else 1

    @property
    def has_f64_params(self) -> bool:
        return ((self.inp is not None and self.inp.has_f64_params) or (self.idx is not None and self.idx.has_f64_params)
                or (self.post is not None and self.post.has_f64_params))



# Mesa's shader compilers inline every call, and the unrolled loops below call the input
# 5 times (20 element computations with quads): lavapipe's LLVM took 59-76 s on each of
# logsumexp's complex128 reductions (complex exp: float64 sin and cos with their argument
# reduction) and 5 s on a float32 sum of sin, against 1-4 s for the same inputs' own
# elementwise kernels. An input that loops (``ew.is_heavy``) or pulls in this much helper
# code is compute-bound anyway; it is called from one place (same order of combines).
HEAVY_LIBRARY_CHARS = 5000


@functools.lru_cache(maxsize=4096)
def heavy_input(spec: ew.ElementwiseSpec) -> bool:
    """Whether the fused input ``spec`` is costly enough to compile that the reduction
    calls it from one place rather than from an unrolled loop (remembered by spec: a
    scan asks on every call)."""
    code = ew.compute_fn(spec, "in0_")
    lib = ew.library(code)
    return len(lib) > HEAVY_LIBRARY_CHARS or ew.is_heavy(lib + code)


def render_input_quad(spec: ew.ElementwiseSpec, prefix: str, pbase: int, looped: bool = False) -> str:
    """``fn {prefix}at4(q: u32) -> {prefix}Quad``: elements ``4q .. 4q + 3`` of a fused
    input planned with vec4 leaves (each 'v' leaf is one vec4 load)."""
    native = spec.int64_native
    reader = ew.LeafReader(spec, prefix, pbase)
    lines = reader.const_lets()
    loads, hoisted = reader.hoisted_loads("q")
    lines += loads
    out_t = ty.wgsl_type(spec.outputs[0][1], native)
    if looped:  # one call of compute for the four (``heavy_input``)
        ls, args = reader.element("(q * 4u + j)", "l", hoisted("j"))
        lines += [f"var y: array<{out_t}, 4>;", "for (var j = 0u; j < 4u; j = j + 1u) {"]
        lines += ["    " + x for x in ls] + [f"    y[j] = {prefix}compute({', '.join(args)});", "}"]
        ret = f"{prefix}Quad(y[0], y[1], y[2], y[3])"
    else:
        for j in range(4):
            ls, args = reader.element(f"(q * 4u + {j}u)", str(j), hoisted(j))
            lines += ls
            lines.append(f"let y{j} = {prefix}compute({', '.join(args)});")
        ret = f"{prefix}Quad(y0, y1, y2, y3)"
    struct = f"struct {prefix}Quad {{ v0: {out_t}, v1: {out_t}, v2: {out_t}, v3: {out_t} }}\n"
    fn = (f"fn {prefix}at4(q: u32) -> {prefix}Quad {{\n" + "".join(f"    {x}\n" for x in lines)
          + f"    return {ret};\n}}\n")
    return struct + fn


def _moments_fns(t: str) -> str:
    """``Acc`` (count, mean, sum of squared deviations; complex: per component) with
    ``comb``, Chan et al.'s combine of two partials, and ``comb1``, Welford's update by
    one value: a single pass as accurate as centring on the exact mean first. The new
    mean is laundered (``kz`` is a zero from ``P``): a compiler that assumes finite
    values could otherwise fold the first update's ``x - m`` to 0 and lose a NaN."""
    wt = ty.WGSL_TYPE[t]
    f = "f64" if t in ("f64", "c128") else "f32"
    return f"""struct Acc {{ n: u32, m: {wt}, s: {wt} }}
fn comb(a: Acc, b: Acc) -> Acc {{
    if (b.n == 0u) {{ return a; }}
    if (a.n == 0u) {{ return b; }}
    let n = a.n + b.n;
    let fb = {f}(b.n) / {f}(n);
    let d = b.m - a.m;
    return Acc(n, a.m + d * fb, a.s + b.s + d * d * ({f}(a.n) * fb));
}}
fn comb1(a: Acc, x: {wt}, kz: u32) -> Acc {{
    let n = a.n + 1u;
    let d = x - a.m;
    let m = {ew.launder(f"a.m + d / {f}(n)", t, 1)};
    return Acc(n, m, a.s + d * (x - m));
}}
"""


def render_post(spec: ew.ElementwiseSpec, in_t: str, pbase: int) -> str:
    """``fn post_at(x) -> U``: the post-map ``spec`` (whose one leaf is the result) of a
    result ``x``; its constants are read from word ``pbase`` of ``P``. The same
    ``compute_fn`` as its own kernel would run, so the bits are the same."""
    reader = ew.LeafReader(spec, "post_", pbase)
    lines, args = reader.element("0u", "0", {0: "x"})
    out_t = ty.wgsl_type(spec.outputs[0][1], spec.int64_native)
    body = reader.const_lets() + lines + [f"return post_compute({', '.join(args)});"]
    return (ew.compute_fn(spec, "post_", launder_outputs=False)
            + f"fn post_at(x: {in_t}) -> {out_t} {{\n" + "".join(f"    {x}\n" for x in body) + "}\n")


def input_words(spec: ew.ElementwiseSpec, params: bytes) -> int:
    """Words the input's parameters take in ``P``, rounded up to even."""
    n = len(params) // 4
    return n + n % 2


def launch_record(spec: ReduceSpec, in_words: int, idx_words: int = 0) -> Launch:
    """Bindings: the values (``in0``, a fused input; ``PN``/``PM``/``PS``, the partials
    of a previous moments pass), the indices of a previous arg pass (``ix``), then the
    outputs: ``O`` (and ``OI`` for arg kinds), or ``ON``/``OM``/``OS`` (moments
    partials). Parameters: M, L, C, NC, a zero word (the launder key of moments),
    then the blocks of ``in0`` (``in_words``), ``ix`` (``idx_words``) and ``post``."""
    t = spec.tag
    wt = ty.WGSL_TYPE[t]
    if spec.partials:
        args = [Binding("PN", "u32"), Binding("PM", wt), Binding("PS", wt)]
    else:
        args = [ew.input_group(spec.inp, "in0_")]
    if spec.idx is not None:
        args.append(ew.input_group(spec.idx, "ix_"))
    if spec.is_moments and spec.post is None:
        args += [Binding("ON", "u32", True), Binding("OM", wt, True), Binding("OS", wt, True)]
    else:
        store_t = ty.storage_type(spec.post.outputs[0][1] if spec.post else STORE_DTYPE[t], spec.int64_native)
        args.append(Binding("O", store_t, True))
    if spec.is_arg:
        args.append(Binding("OI", "u32", True))
    fields = (Field("M", "u32", 0), Field("L", "u32", 1), Field("C", "u32", 2), Field("NC", "u32", 3),
              Field("zero", "u32", 4), Field("in0", "block", HEADER_WORDS),
              Field("ix", "block", HEADER_WORDS + in_words), Field("post", "block", HEADER_WORDS + in_words + idx_words))
    return Launch(spec.name, tuple(args), fields, spec.has_f64_params, WORKGROUP)


def render(spec: ReduceSpec, in_words: int, idx_words: int = 0) -> str:
    """The WGSL of one reduction pass. ``in_words``, ``idx_words``: words (even) of the
    value and index inputs' params."""
    t = spec.tag
    wt = ty.WGSL_TYPE[t]
    G = spec.group
    fns = []
    record = launch_record(spec, in_words, idx_words)
    decls = record.declarations()
    heavy = not spec.partials and heavy_input(spec.inp)
    if spec.partials:
        fns.append("fn in0_at(e: u32) -> Acc { return Acc(PN[e], PM[e], PS[e]); }\n")
    elif spec.quad:
        fns.append(ew.compute_fn(spec.inp, "in0_")
                   + render_input_quad(spec.inp, "in0_", record.offset("in0"), looped=heavy))
    else:
        f = ew.render_input(spec.inp, "in0_", record.offset("in0"))
        fns.append(f)
    if spec.idx is not None:
        f = ew.render_input(spec.idx, "ix_", record.offset("ix"))
        fns.append(f)
    if spec.post is not None:
        # moments: the post-map takes the (real) sum of squared deviations
        fns.append(render_post(spec.post, {"c64": "f32", "c128": "f64"}.get(t, wt) if spec.is_moments else wt,
                               record.offset("post")))

    if spec.is_moments:
        acc_t = "Acc"
        fns.append(_moments_fns(t))
        zero = ops.ZERO[t] if t in ("f32", "f64") else f"{wt}()"
        ident = f"Acc(0u, {zero}, {zero})"

        def lift(v, i):
            return v
    elif spec.is_arg:
        acc_t = "Acc"
        fns.append(f"struct Acc {{ v: {wt}, i: u32 }}\n" + _arg_better(spec.kind, t)
                   + "fn comb(a: Acc, b: Acc) -> Acc {\n    if (better(a.v, a.i, b.v, b.i)) { return b; }\n    return a;\n}\n")
        ident = f"Acc({ops.ZERO[t]}, {NONE})"

        def lift(v, i):
            return f"Acc({v}, {i})"
    else:
        acc_t = wt
        fns.append(f"fn comb(a: {wt}, b: {wt}) -> {wt} {{ return {combine_expr(spec.kind, t, 'a', 'b')}; }}\n")
        ident = identity(spec.kind, t, scan=spec.scan_identity)

        def lift(v, i):
            return v

    def index_of(flat: str) -> str:
        return f"ix_at({flat})" if spec.idx is not None else f"({flat} - base)"

    def step(acc: str, value: str, flat: str) -> str:
        if spec.is_moments and not spec.partials:
            return f"{acc} = comb1({acc}, {value} - k0, kz);"
        return f"{acc} = comb({acc}, {lift(value, index_of(flat))});"

    body = [
        "@compute @workgroup_size(256)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        "    let w = wid.x + wid.y * 65535u;",
        "    let M = P[0]; let L = P[1]; let C = P[2]; let NC = P[3];",
        f"    let per_wg = {WORKGROUP // G}u;",
        "    if (w >= ((M + per_wg - 1u) / per_wg) * NC) { return; }",
        "    let c = w % NC;",
        f"    let m = (w / NC) * per_wg + lid / {G}u;",
        f"    let t = lid % {G}u;",
        "    let lo = c * C;",
        "    let hi = min(L, lo + C);",
        "    let base = m * L;",
        f"    var a0 = {ident}; var a1 = {ident}; var a2 = {ident}; var a3 = {ident};",
        "    if (m < M) {",
    ]
    if spec.is_moments and not spec.partials:
        # Every chunk of a row works on x - x[row start]: the running means stay near
        # zero, so their rounding is small beside the spread (the moments of x and of
        # x - k are the same sums of squared deviations).
        # (laundered: where the input is one broadcast value, x - k0 would fold to 0)
        body.append(f"        let kz = P[{record.offset('zero')}];  // 0")
        first = "in0_at4(base >> 2u).v0" if spec.quad else "in0_at(base)"
        body.append(f"        let k0 = {ew.launder(first, t, 2)};")
    if spec.quad:
        body += [
            "        let q1 = (base + hi) >> 2u;",
            "        var q = ((base + lo) >> 2u) + t;",
        ]
        if not heavy:
            # Four quads per step, all loads issued before any combine: 64 bytes in
            # flight per lane is what a bandwidth-bound reduction needs on a big GPU.
            # (A heavy input goes a quad at a time: quad q's element j goes to a_j
            # either way, so the combines are the same.)
            body.append(f"        for (; q + {3 * G}u < q1; q += {4 * G}u) {{")
            for k in range(4):
                body.append(f"            let y{k} = in0_at4(q + {k * G}u);")
            for k in range(4):
                for j in range(4):
                    e = f"((q + {k * G}u) * 4u + {j}u)"
                    body.append("            " + step(f"a{j}", f"y{k}.v{j}", e))
            body.append("        }")
        body += [
            f"        for (; q < q1; q += {G}u) {{",
            "            let y = in0_at4(q);",
        ]
        for j in range(4):
            body.append("            " + step(f"a{j}", f"y.v{j}", f"(q * 4u + {j}u)"))
        body += ["        }"]
    elif heavy:
        # Every G-th element in turn into the accumulator the unrolled loop below would
        # give it (a_(i mod 4) for the i-th of the first `full`, a0 after), one call of
        # the input: the same combines in the same order.
        body += [
            "        var l = lo + t;",
            f"        let full = select(0u, 4u * ((hi - l - {3 * G}u - 1u) / {4 * G}u + 1u), l + {3 * G}u < hi);",
            f"        for (var i = 0u; l < hi; l += {G}u) {{",
            "            let v = in0_at(base + l);",
            "            switch (select(0u, i & 3u, i < full)) {",
        ]
        for j in range(4):
            label = "default" if j == 0 else f"case {j}u"
            body.append(f"                {label}: {{ " + step(f"a{j}", "v", "(base + l)") + " }")
        body += ["            }", "            i += 1u;", "        }"]
    else:
        body += [
            "        var l = lo + t;",
            f"        for (; l + {3 * G}u < hi; l += {4 * G}u) {{",
        ]
        for j in range(4):
            e = f"(base + l + {j * G}u)"
            body.append("            " + step(f"a{j}", f"in0_at({e})", e))
        body += [
            "        }",
            f"        for (; l < hi; l += {G}u) {{",
            "            " + step("a0", "in0_at(base + l)", "(base + l)"),
            "        }",
        ]
    body += ["    }", "    let r = comb(comb(a0, a1), comb(a2, a3));"]
    value = "post_at({v})" if spec.post is not None else "{v}"
    if spec.is_moments:
        total = "({v}.s.x + {v}.s.y)" if t in ("c64", "c128") else "{v}.s"
        store = ([f"O[m * NC + c] = post_at({total});"] if spec.post is not None else
                 ["ON[m * NC + c] = {v}.n;", "OM[m * NC + c] = {v}.m;", "OS[m * NC + c] = {v}.s;"])
    elif spec.is_arg:
        store = ["O[m * NC + c] = {v}.v;", "OI[m * NC + c] = {v}.i;"]
    else:
        store = [f"O[m * NC + c] = {value};"]
    if G == 1:
        body.append("    if (m < M) { " + " ".join(s.format(v="r") for s in store) + " }")
        shared = ""
    else:
        shared = f"var<workgroup> sh: array<{acc_t}, 256>;\n"
        body += ["    sh[lid] = r;", "    workgroupBarrier();"]
        off = G // 2
        while off >= 1:
            body.append(f"    if (t < {off}u) {{ sh[lid] = comb(sh[lid], sh[lid + {off}u]); }}")
            body.append("    workgroupBarrier();")
            off //= 2
        body.append("    if (t == 0u && m < M) { let v = sh[lid]; " + " ".join(s.format(v="v") for s in store) + " }")
    body.append("}")
    code = "".join(fns) + "\n".join(body) + "\n"
    return "\n".join(decls) + "\n" + shared + "\n" + ew.library(code) + "\n" + code
