"""WGSL for sorting, searching and sets: pure text from structure, no GPU.

Every comparison goes through an order-preserving *key*: a ``vec2<u32>`` (low word,
high word) whose unsigned order is the standard's sort order of the values:

    bool, uint*       the value itself
    int8/16           value + 2^(bits-1)
    int32/64          the bits with the sign bit flipped
    float32/64        -0 -> +0, then negative: all bits flipped, else sign bit set;
                      every NaN -> all ones (after everything, equal to each other)

Descending order flips every key bit except a NaN's, so NaNs stay last. Keys of
fewer than 64 bits leave the high word (and the unused low bits) zero.

The radix sort moves 8-bit digits, stably (LSD, 4 passes for 32-bit keys). Per pass
an *upsweep* (``render_upsweep``) writes each tile's digit histogram digit-major
(``counts[d * n_tiles + tile]``), their exclusive scan gives every (digit, tile) its
first output slot, and a *downsweep* (``render_downsweep``) ranks the tile in
workgroup memory (256-bit digit masks, popcounts), reorders it by digit there and
writes each digit's run to consecutive slots. Batched sorts sort the flat index (the
payload) by key, then by segment (the payload divided by the segment length).
"""
from __future__ import annotations

from .._runtime.launch import Binding, Field, Group, Launch
from . import elementwise as ew
from . import types as ty

WG = 256
RADIX_BITS = 8
RADIX_KPT = 8  # elements per invocation in a radix tile (tile = WG * RADIX_KPT)

KEY_BITS = {"bool": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32,
            "float32": 32, "int64": 64, "uint64": 64, "float64": 64}

# The parameter header of a radix pass (upsweep and downsweep).
RADIX_PARAMS = (Field("n", "u32", 0), Field("seglen", "u32", 1), Field("n_tiles", "u32", 2), Field("shift", "u32", 3),
                Field("word", "u32", 4))


def _out(name: str) -> Binding:
    return Binding(name, "u32", write=True)


def raw_group(prefix: str) -> Group:
    """The bindings of a key source read as raw float64 words (``{prefix}RAW``)."""
    return Group(prefix.rstrip("_"), (Binding(prefix + "RAW", "vec2<u32>"),))


def linear_id() -> str:
    return "(wid.x + wid.y * 65535u)"


# ------------------------------------------------------------------- keys

def key_body(dtype_name: str, native: bool, bits: int) -> str:
    """Statements computing ``k`` (the ascending key) and ``nan`` from ``v`` (the value;
    for float64, ``w``: its raw words)."""
    t = ty.tag(dtype_name, native) if dtype_name != "float64" else "f64raw"
    if t == "b":
        return "let k = vec2<u32>(select(0u, 1u, v), 0u); let nan = false;"
    if t == "i32":
        if bits < 32:
            return f"let k = vec2<u32>(bitcast<u32>(v + {1 << (bits - 1)}), 0u); let nan = false;"
        return "let k = vec2<u32>(bitcast<u32>(v) ^ 0x80000000u, 0u); let nan = false;"
    if t == "u32":
        return "let k = vec2<u32>(v, 0u); let nan = false;"
    if t in ("i64", "u64"):
        flip = " ^ 0x80000000u" if t == "i64" else ""
        cast = "bitcast<u64>(v)" if t == "i64" else "v"
        return (f"let b = {cast}; let k = vec2<u32>(u32(b & u64(0xffffffffu)), u32(b >> 32u){flip});"
                " let nan = false;")
    if t in ("ei64", "eu64"):
        flip = " ^ 0x80000000u" if t == "ei64" else ""
        return f"let k = vec2<u32>(v.x, v.y{flip}); let nan = false;"
    if t == "f32":
        return ("let b = bitcast<u32>(v); let a = b & 0x7fffffffu; let nan = a > 0x7f800000u;\n"
                "    var k = vec2<u32>(select(b | 0x80000000u, ~b, (b >> 31u) == 1u), 0u);\n"
                "    if (a == 0u) { k = vec2<u32>(0x80000000u, 0u); }")
    if t == "f64raw":
        return ("let lo = w.x; let hi = w.y; let a = hi & 0x7fffffffu;\n"
                "    let nan = a > 0x7ff00000u || (a == 0x7ff00000u && lo != 0u);\n"
                "    var k = select(vec2<u32>(lo, hi | 0x80000000u), vec2<u32>(~lo, ~hi), (hi >> 31u) == 1u);\n"
                "    if (a == 0u && lo == 0u) { k = vec2<u32>(0u, 0x80000000u); }")
    raise TypeError(f"sort: no key for dtype {dtype_name}")


def key_mask(bits: int) -> str:
    if bits >= 64:
        return "vec2<u32>(0xffffffffu, 0xffffffffu)"
    if bits == 32:
        return "vec2<u32>(0xffffffffu, 0u)"
    return f"vec2<u32>({(1 << bits) - 1}u, 0u)"


def key_fn(prefix: str, dtype_name: str, native: bool, raw_f64: bool, pbase: int = 0) -> str:
    """``fn {prefix}key(e: u32, desc: bool) -> vec2<u32>``: the key of flat element e, and
    ``fn {prefix}isnan(k: vec2<u32>) -> bool`` for an ascending key."""
    bits = KEY_BITS[dtype_name]
    load = f"let w = {prefix}RAW[P[{pbase}] + e];" if raw_f64 else f"let v = {prefix}at(e);"
    nan_key = "vec2<u32>(0xffffffffu, 0xffffffffu)" if bits == 64 else "vec2<u32>(0xffffffffu, 0u)"
    is_float = dtype_name.startswith("float")
    return (
        f"fn {prefix}key(e: u32, desc: bool) -> vec2<u32> {{\n"
        f"    {load}\n"
        f"    {key_body(dtype_name, native, bits)}\n"
        f"    if (nan) {{ return {nan_key}; }}\n"
        f"    return select(k, (~k) & {key_mask(bits)}, desc);\n"
        "}\n"
        f"fn {prefix}isnan(k: vec2<u32>) -> bool {{ return {'all(k == ' + nan_key + ')' if is_float else 'false'}; }}\n"
    )


KEY_LT = "fn key_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }\n"


# ------------------------------------------------------------------- radix sort

def render_keys(src: Group, src_fns: str, kw: int, values: bool = False) -> tuple[Launch, str]:
    """KOUT[e * kw + w] = word w of element e's key (``src_key``); with ``values`` also
    VOUT[e] = the bits of the (32-bit) value itself, the payload of a sort that needs no
    gather. P: n, desc, then the key source's words at 2."""
    record = Launch("sort_keys", (src, _out("KOUT")) + ((_out("VOUT"),) if values else ()),
                    (Field("n", "u32", 0), Field("desc", "u32", 1), Field("src", "block", 2)))
    decls = record.declarations()
    store = "KOUT[e * 2u] = k.x; KOUT[e * 2u + 1u] = k.y;" if kw == 2 else "KOUT[e] = k.x;"
    if values:
        store += " VOUT[e] = bitcast<u32>(src_at(e));"
    main = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let e = {linear_id()} * {WG}u + lid;
    if (e >= P[0]) {{ return; }}
    let k = src_key(e, P[1] != 0u);
    {store}
}}
"""
    code = src_fns + main
    return record, "\n".join(decls) + "\n" + ew.library(code) + "\n" + code


def workgroup_scan(own: str, sh: str, subgroups: bool) -> str:
    """Statements giving ``excl`` (the exclusive prefix sum over ``lid`` of the u32
    ``own`` of each of the WG invocations) and ``wtot`` (the workgroup's total).

    With ``subgroups`` (contiguous full subgroups, see Runtime.subgroup_size) each
    subgroup scans itself and adds the totals of the subgroups before it: two barriers.
    Without, a Hillis-Steele scan through ``sh`` (WG words of workgroup memory):
    2 log2(WG) barriers. ``sh`` must hold WG u32 either way.
    """
    if subgroups:
        return f"""    let incl_ = subgroupInclusiveAdd({own});
    if (lane == sgs - 1u) {{ {sh}[lid / sgs] = incl_; }}
    workgroupBarrier();
    var before_ = 0u;
    var wtot = 0u;
    for (var q = 0u; q < WG / sgs; q++) {{
        let t = {sh}[q];
        before_ += select(0u, t, q < lid / sgs);
        wtot += t;
    }}
    let excl = before_ + incl_ - ({own});
    workgroupBarrier();"""
    return f"""    {sh}[lid] = {own};
    workgroupBarrier();
    for (var s = 1u; s < WG; s <<= 1u) {{
        var t = 0u;
        if (lid >= s) {{ t = {sh}[lid - s]; }}
        workgroupBarrier();
        {sh}[lid] += t;
        workgroupBarrier();
    }}
    let excl = {sh}[lid] - ({own});
    let wtot = {sh}[WG - 1u];
    workgroupBarrier();"""


def scan_builtins(subgroups: bool) -> str:
    """The extra entry-point parameters ``workgroup_scan`` needs."""
    return ", @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) lane: u32" if subgroups else ""


def _radix_load(src: str, kw: int) -> tuple[str, str]:
    """(statements loading element ``e`` into k and v, the digit expression) for a pass."""
    if src in ("key0", "key"):
        load = ("let k = vec2<u32>(KIN[e * 2u], KIN[e * 2u + 1u]);" if kw == 2 else "let k = vec2<u32>(KIN[e], 0u);") \
            + (" let v = e;" if src == "key0" else " let v = VIN[e];")
        digit = "(select(k.x, k.y, word == 1u) >> shift) & 255u"
    else:
        load = "let k = vec2<u32>(0u); let v = VIN[e];"
        digit = "((v / seglen) >> shift) & 255u"
    return load, digit


def _radix_inputs(src: str) -> list[str]:
    names = []
    if src in ("key0", "key"):
        names.append("KIN")
    if src in ("key", "seg"):
        names.append("VIN")
    return names


def render_upsweep(src: str, kw: int, kpt: int) -> tuple[Launch, str]:
    """Per-tile histogram of one 8-bit digit: COUNTS[d * n_tiles + tile].

    src: 'key' (digit of the key in KIN) or 'seg' (digit of the payload's segment, VIN).
    P: n, seglen, n_tiles, shift, word. Loads are coalesced (element j * WG + lid).
    """
    record = Launch("radix_up_" + src, (Binding("KIN" if src == "key" else "VIN"), _out("COUNTS")), RADIX_PARAMS)
    decls = record.declarations()
    if src == "key":
        load = "let k = vec2<u32>(KIN[e * 2u], KIN[e * 2u + 1u]);" if kw == 2 else "let k = vec2<u32>(KIN[e], 0u);"
        digit = "(select(k.x, k.y, word == 1u) >> shift) & 255u"
    else:
        load = "let v = VIN[e];"
        digit = "((v / seglen) >> shift) & 255u"
    main = f"""
const WG: u32 = {WG}u;
const TILE: u32 = {WG * kpt}u;
var<workgroup> hist: array<atomic<u32>, 256>;

@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let n = P[0]; let seglen = P[1]; let n_tiles = P[2]; let shift = P[3]; let word = P[4];
    let blk = {linear_id()};
    atomicStore(&hist[lid], 0u);
    workgroupBarrier();
    if (blk < n_tiles) {{
        let base = blk * TILE;
        let m = min(TILE, n - base);
        for (var i = lid; i < m; i += WG) {{
            let e = base + i;
            {load}
            atomicAdd(&hist[{digit}], 1u);
        }}
    }}
    workgroupBarrier();
    if (blk < n_tiles) {{ COUNTS[lid * n_tiles + blk] = atomicLoad(&hist[lid]); }}
}}
"""
    return record, "\n".join(decls) + "\n" + main


def downsweep_shared_bytes(kpt: int) -> int:
    """Workgroup memory of ``render_downsweep`` (mask, dig, cnt, ofs, buf)."""
    tile = WG * kpt
    return 4 * (256 * WG // 32 + tile // 4 + 512 + tile)


def render_downsweep(src: str, kw: int, write_keys: bool, kpt: int,
                     subgroups: bool = False) -> tuple[Launch, str]:
    """One stable 8-bit radix pass over tiles of WG * kpt elements (every dtype: keys are
    already words).

    src:  'key0' (keys from KIN, payload = the index), 'key' (keys and payloads from
          the previous pass), 'seg' (digit from the payload's segment).
    P: n, seglen, n_tiles, shift, word.
    Bindings: KIN (key0) | KIN, VIN (key) | VIN (seg); then SCAN, [KOUT], VOUT.

    Each tile is loaded coalesced; elements are ranked in rounds of WG consecutive
    elements: every invocation sets its bit in a 256-bit mask of its digit (8 words of
    32 invocations), so its rank among equal digits before it in the round is a
    popcount, and one running counter per digit carries the rounds. The tile is then
    reordered by digit in workgroup memory, so that each invocation writes consecutive
    output slots of a digit's run (coalesced), at SCAN[d * n_tiles + tile] (the exclusive
    scan of every tile's digit counts) plus its place in the run. The per-element code
    is unrolled (scalars, not arrays: dynamically indexed arrays spill to local memory).
    """
    args = [Binding(nm) for nm in _radix_inputs(src)] + [Binding("SCAN")]
    args += [_out("KOUT")] * write_keys + [_out("VOUT")]
    record = Launch(f"radix_down_{src}", tuple(args), RADIX_PARAMS)
    decls = record.declarations()
    load, digit = _radix_load(src, kw)
    tile = WG * kpt
    groups = WG // 32
    J = range(kpt)
    keep = [("v", "v")] + ([("kx", "k.x")] if write_keys else []) + ([("ky", "k.y")] if write_keys and kw == 2 else [])
    phases = []
    if write_keys:
        phases.append(("kx", "KOUT[t{j} * 2u] = buf[{i}];" if kw == 2 else "KOUT[t{j}] = buf[{i}];"))
        if kw == 2:
            phases.append(("ky", "KOUT[t{j} * 2u + 1u] = buf[{i}];"))
    phases.append(("v", "VOUT[t{j}] = buf[{i}];"))

    out = []
    w = out.append
    for j in J:
        w(f"    let ok{j} = {j * WG}u + lid < m;")
        w(f"    var d{j} = 0u; var p{j} = 0u; var t{j} = 0u;")
        w("    " + " ".join(f"var {r}{j} = 0u;" for r, _ in keep))
    for j in J:
        w(f"    if (ok{j}) {{ let e = base + {j * WG}u + lid; {load} d{j} = {digit}; "
          + " ".join(f"{r}{j} = {x};" for r, x in keep) + " }")
    w("    workgroupBarrier();")
    for j in J:
        w(f"""    if (ok{j}) {{ atomicOr(&mask[grp * 256u + d{j}], bit); }}
    workgroupBarrier();
    if (ok{j}) {{
        var r = 0u; var tot = 0u;
        for (var g = 0u; g < {groups}u; g++) {{
            let mw = atomicLoad(&mask[g * 256u + d{j}]);
            let c = countOneBits(mw);
            tot += c;
            r += select(0u, c, g < grp) + select(0u, countOneBits(mw & below), g == grp);
        }}
        p{j} = cnt[d{j}] + r;
        last = select(0u, tot, r + 1u == tot);
    }}
    workgroupBarrier();
    if (ok{j}) {{
        atomicAnd(&mask[grp * 256u + d{j}], ~bit);
        if (last != 0u) {{ cnt[d{j}] += last; last = 0u; }}
    }}""")
    ranking = "\n".join(out)
    out.clear()
    for j in J:
        w(f"    if (ok{j}) {{ p{j} += cnt[d{j}]; atomicOr(&dig[p{j} >> 2u], d{j} << ((p{j} & 3u) * 8u)); }}")
    w("    workgroupBarrier();")
    for j in J:
        i = f"{j * WG}u + lid"
        w(f"    if (ok{j}) {{ let i = {i}; t{j} = ofs[(atomicLoad(&dig[i >> 2u]) >> ((i & 3u) * 8u)) & 255u] + i; }}")
    for reg, store in phases:
        for j in J:
            w(f"    if (ok{j}) {{ buf[p{j}] = {reg}{j}; }}")
        w("    workgroupBarrier();")
        for j in J:
            w(f"    if (ok{j}) {{ {store.format(j=j, i=str(j * WG) + 'u + lid')} }}")
        w("    workgroupBarrier();")
    scatter = "\n".join(out)
    main = f"""
const WG: u32 = {WG}u;
const TILE: u32 = {tile}u;
var<workgroup> mask: array<atomic<u32>, {256 * groups}>;
var<workgroup> dig: array<atomic<u32>, {tile // 4}>;
var<workgroup> cnt: array<u32, 256>;
var<workgroup> ofs: array<u32, 256>;
var<workgroup> buf: array<u32, TILE>;

@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32{scan_builtins(subgroups)}) {{
    let n = P[0]; let seglen = P[1]; let n_tiles = P[2]; let shift = P[3]; let word = P[4];
    let blk = {linear_id()};
    let base = blk * TILE;
    var m = 0u;
    if (blk < n_tiles) {{ m = min(TILE, n - base); }}
    for (var i = lid; i < {256 * groups}u; i += WG) {{ atomicStore(&mask[i], 0u); }}
    for (var i = lid; i < TILE / 4u; i += WG) {{ atomicStore(&dig[i], 0u); }}
    cnt[lid] = 0u;
    let grp = lid >> 5u;
    let bit = 1u << (lid & 31u);
    let below = bit - 1u;
    var last = 0u;
{ranking}
    workgroupBarrier();
    // tile-local start of each digit (exclusive scan of cnt)
    let own = cnt[lid];
{workgroup_scan("own", "ofs", subgroups)}
    let lstart = excl;
    cnt[lid] = lstart;
    var g0 = 0u;
    if (blk < n_tiles) {{ g0 = SCAN[lid * n_tiles + blk]; }}
    workgroupBarrier();
    ofs[lid] = g0 - lstart;
{scatter}
}}
"""
    return record, "\n".join(decls) + "\n" + main


# ------------------------------------------------------------------- searching

def render_search(a: Group, a_fns, s: Group | None, s_fns, s_tag, b: Group, b_fns, mode: str,
                  pbases) -> tuple[Launch, str]:
    """Binary search of each b key among the sorted a keys.

    mode 'searchsorted': O[i] = first position whose key is >= (left) or > (right) b's.
    mode 'isin': O[i] = 1 when some a key equals b's key (NaN never), xor invert.
    The a order is given by the sorter s when there is one (a fused integer input, or the
    radix permutation bound as a fused u32 input). P: n, m, right/invert, -, then a's,
    s's, b's words at the even bases ``pbases`` the caller chose.
    """
    groups = (a,) + ((s,) if s is not None else ()) + (b,)
    fields = (Field("n", "u32", 0), Field("m", "u32", 1), Field("flag", "u32", 2))
    fields += tuple(Field(grp.name, "block", at) for grp, at in zip(groups, pbases))
    record = Launch(f"sort_{mode}", groups + (_out("O"),), fields)
    decls = record.declarations()
    if s is not None:
        to_u32 = {"i32": "u32(s_at(mid))", "u32": "s_at(mid)", "i64": "u32(s_at(mid))", "u64": "u32(s_at(mid))",
                  "ei64": "s_at(mid).x", "eu64": "s_at(mid).x"}[s_tag]
        idx = to_u32
    else:
        idx = "mid"
    if mode == "searchsorted":
        go = "select(key_lt(km, kv), !key_lt(kv, km), flag)"
        result = "lo"
    else:
        go = "key_lt(km, kv)"
        result = ("u32((!b_isnan(kv) && lo < m && all(a_key(" + idx.replace("mid", "lo") + ", false) == kv)) != flag)")
    main = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let n = P[0]; let m = P[1]; let flag = P[2] != 0u;
    let i = {linear_id()} * {WG}u + lid;
    if (i >= n) {{ return; }}
    let kv = b_key(i, false);
    var lo = 0u;
    var hi = m;
    while (lo < hi) {{
        let mid = (lo + hi) >> 1u;
        let km = a_key({idx}, false);
        if ({go}) {{ lo = mid + 1u; }} else {{ hi = mid; }}
    }}
    O[i] = {result};
}}
"""
    code = a_fns + s_fns + b_fns + KEY_LT + main
    return record, "\n".join(decls) + "\n" + ew.library(code) + "\n" + code


# ------------------------------------------------------------------- sets

def render_unique_flags(src: Group, k_fns) -> tuple[Launch, str]:
    """F[i] = 1 where sorted element i starts a new value (every NaN does); F[n] = 0.
    Bindings: key source, PERM, F. P: n, then the key source's words at 2."""
    record = Launch("unique_flags", (src, Binding("PERM"), _out("F")), (Field("n", "u32", 0), Field("src", "block", 2)))
    decls = record.declarations()
    main = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let n = P[0];
    let i = {linear_id()} * {WG}u + lid;
    if (i > n) {{ return; }}
    if (i == n) {{ F[i] = 0u; return; }}
    if (i == 0u) {{ F[i] = 1u; return; }}
    let k = src_key(PERM[i], false);
    let prev = src_key(PERM[i - 1u], false);
    F[i] = select(0u, 1u, any(k != prev) || src_isnan(k));
}}
"""
    code = k_fns + main
    return record, "\n".join(decls) + "\n" + ew.library(code) + "\n" + code


def render_unique_compact(with_inverse: bool) -> tuple[Launch, str]:
    """For each sorted i that starts a value (POS[i+1] != POS[i]): SRC[k] = PERM[i],
    STARTS[k] = i, with STARTS[K] = n; and INV[PERM[i]] = POS[i+1] - 1."""
    inv = "INV[PERM[i]] = POS[i + 1u] - 1u;" if with_inverse else ""
    record = Launch("unique_compact", (Binding("PERM"), Binding("POS"), _out("SRC"), _out("STARTS"))
                    + ((_out("INV"),) if with_inverse else ()), (Field("n"),))
    decls = "\n".join(record.declarations())
    return record, f"""{decls}

@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let n = P[0];
    let i = {linear_id()} * {WG}u + lid;
    if (i >= n) {{ return; }}
    let p = POS[i];
    if (POS[i + 1u] != p) {{ SRC[p] = PERM[i]; STARTS[p] = i; }}
    if (i == n - 1u) {{ STARTS[POS[n]] = n; }}
    {inv}
}}
"""
