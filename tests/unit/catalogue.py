"""Kernels of every renderer family, rendered without a device.

Graph nodes need no device to be built or planned: a ``Data`` leaf only holds its
buffer (here a stand-in with the ``uid`` the planner reads), and the planner asks the
device only whether int64 is native. So the fused inputs here come from the same
planner (``wgarray._graph.fusion``) that feeds the kernels on a device.

``kernels(variant)`` maps a kernel's name to a function that renders its WGSL. Variants
0 and 1 build the same structures over different sizes, offsets and scalar values
(``SIZES``, ``SCALARS``), so equal text for both says that none of them reaches the text.
"""
from __future__ import annotations

import hashlib
import json
import sys

from wgarray import _dtypes as dt
from wgarray._graph import fusion
from wgarray._graph import node as g
from wgarray._kernels import sort as ksort
from wgarray._runtime import numerics
from wgarray._runtime.launch import param_bases
from wgarray._wgsl import elementwise as ew
from wgarray._wgsl import fft as wf
from wgarray._wgsl import gather as gk
from wgarray._wgsl import linalg as kl
from wgarray._wgsl import linalg_blocked as kb
from wgarray._wgsl import linalg_eigen as ke
from wgarray._wgsl import linalg_trd as kt
from wgarray._wgsl import linalg_tsqr as kq
from wgarray._wgsl import matmul as km
from wgarray._wgsl import ops, snippets
from wgarray._wgsl import reduce as rd
from wgarray._wgsl import scan as sc
from wgarray._wgsl import sort as ws
from wgarray._wgsl import write as wk

# Sizes and scalars that no kernel text would contain by chance.
SIZES = ((61, 7919), (83, 104729))
OFFSETS = (1237, 54443)
SCALARS = (2.718281, 0.318309)
INT_SCALARS = (977, 65537)


class StubDevice:
    """What the planner reads of a device, and nothing that opens one."""

    name = "stand-in"
    big = False  # no buffer past the binding limit (the planner then looks for no windows)

    def __init__(self, has_int64: bool):
        self.has_int64 = has_int64
        self.has_f64 = True


class StubBuffer:
    def __init__(self, uid: int):
        self.uid = uid


NATIVE = StubDevice(True)
EMULATED = StubDevice(False)
# the probed float32 behaviour, as a device would report it: one stand-in whose fma is
# fused (float32 division's short fma path), one whose fma rounds twice
numerics._cache[NATIVE] = numerics.Float32Behaviour(True, True, True)
numerics._cache[EMULATED] = numerics.Float32Behaviour(True, True, False)


def data(uid, shape, dtype, device, offset=0, strides=None) -> g.Data:
    return g.Data(StubBuffer(uid), shape, dtype, device, offset, strides)


def op(name, srcs, dtype, arg=None) -> g.Op:
    return g.Op(name, srcs, dtype, arg)


def const(value, dtype, device) -> g.Const:
    return g.Const(value, dtype, device)


# ------------------------------------------------------------------ graphs
# Each takes the variant and the device and returns the output nodes of one kernel.

def float_chain(v, dev):
    """exp(x - y) * c over a 2-D float32 grid."""
    shape = SIZES[v]
    x = data(1, shape, dt.float32, dev)
    y = data(2, shape, dt.float32, dev)
    return [op("multiply", [op("exp", [op("subtract", [x, y], dt.float32)], dt.float32),
                            const(SCALARS[v], dt.float32, dev)], dt.float32)]


def int64_mixed(v, dev):
    """floor_divide and remainder of int64 by a scalar, from an int32 input cast up."""
    shape = SIZES[v]
    a = op("cast", [data(1, shape, dt.int32, dev)], dt.int64)
    k1, k2 = (const(INT_SCALARS[v], dt.int64, dev) for _ in range(2))  # one per use, as the namespace makes them
    return [op("add", [op("floor_divide", [a, k1], dt.int64), op("remainder", [a, k2], dt.int64)], dt.int64)]


def strided_where(v, dev):
    """where(x > c, x, y): x a transposed view (strided), y a row broadcast, int8 out."""
    rows, cols = SIZES[v]
    x = data(1, (rows, cols), dt.int8, dev, OFFSETS[v], (1, rows))
    y = data(2, (rows, cols), dt.int8, dev, OFFSETS[v] + 4, (0, 1))
    c = const(INT_SCALARS[v] % 100, dt.int8, dev)
    return [op("where", [op("greater", [x, c], dt.bool), x, y], dt.int8)]


def complex_two_outputs(v, dev):
    """z * w and the real part of z + w, two outputs of one kernel."""
    shape = SIZES[v]
    z = data(1, shape, dt.complex64, dev)
    w = data(2, shape, dt.complex64, dev)
    return [op("multiply", [z, w], dt.complex64), op("real", [op("add", [z, w], dt.complex64)], dt.float32)]


def float64_sqrt(v, dev):
    """sqrt(|x| + c) in float64, with an index grid (iota) as a second leaf."""
    shape = SIZES[v]
    x = data(1, shape, dt.float64, dev)
    i = op("cast", [g.Iota(shape, dev, OFFSETS[v])], dt.float64)
    return [op("sqrt", [op("add", [op("abs", [x], dt.float64), op("multiply", [i, const(SCALARS[v], dt.float64, dev)],
                                                                 dt.float64)], dt.float64)], dt.float64)]


def heavy_strided(v, dev):
    """betainc(a, b, x) and erf(x), two outputs: x a transposed view, a a row broadcast;
    betainc's continued fractions make the kernel loop over its 4 elements."""
    rows, cols = SIZES[v]
    x = data(1, (rows, cols), dt.float32, dev, OFFSETS[v], (1, rows))
    a = data(2, (rows, cols), dt.float32, dev, OFFSETS[v] + 4, (0, 1))
    b = const(SCALARS[v], dt.float32, dev)
    return [op("betainc", [a, b, x], dt.float32), op("erf", [x], dt.float32)]


GRAPHS = {
    "float_chain": float_chain,
    "int64_mixed": int64_mixed,
    "strided_where": strided_where,
    "complex_two_outputs": complex_two_outputs,
    "float64_sqrt": float64_sqrt,
    "heavy_strided": heavy_strided,
}


def elementwise_spec(outputs, vec4: bool = True) -> ew.ElementwiseSpec:
    return fusion._plan(outputs, vec4).spec


def fused(node) -> fusion.FusedInput:
    return fusion.FusedInput(node)


# ------------------------------------------------------------------ kernels by family

def _elementwise(v):
    out = {}
    for name, build in GRAPHS.items():
        for dev in (NATIVE, EMULATED):
            mode = "native" if dev.has_int64 else "emulated"
            out[f"elementwise/{name}/{mode}"] = lambda build=build, dev=dev: ew.render(elementwise_spec(build(v, dev)))
    return out


def _reduce(v):
    x = float_chain(v, NATIVE)[0]
    fi = fused(x)
    words = rd.input_words(fi.spec, fi.params)
    quad = fusion._plan([x], True)
    quad_words = rd.input_words(quad.spec, ew.param_words(quad.spec, 1, quad.shape, quad.const_blobs, quad.leaf_views))
    ints = fused(int64_mixed(v, EMULATED)[0])
    idx = fused(data(9, SIZES[v], dt.uint32, NATIVE))
    result = data(3, (SIZES[v][0],), dt.float32, NATIVE)
    post = elementwise_spec([op("sqrt", [op("divide", [result, const(SCALARS[v], dt.float32, NATIVE)], dt.float32)],
                                dt.float32)])
    return {
        "reduce/sum_f32_g256": lambda: rd.render(rd.ReduceSpec("sum", "f32", 256, False, fi.spec, None, True), words),
        "reduce/sum_f32_quad": lambda: rd.render(rd.ReduceSpec("sum", "f32", 64, True, quad.spec, None, True),
                                                 quad_words),
        "reduce/max_ei64_g1": lambda: rd.render(rd.ReduceSpec("max", "ei64", 1, False, ints.spec, None, False),
                                                rd.input_words(ints.spec, ints.params)),
        "reduce/argmin_f32": lambda: rd.render(rd.ReduceSpec("argmin", "f32", 32, False, fi.spec, idx.spec, True),
                                               words, rd.input_words(idx.spec, idx.params)),
        "reduce/moments_post": lambda: rd.render(rd.ReduceSpec("moments", "f32", 256, False, fi.spec, None, True,
                                                               post), words),
        "reduce/scan_partials": lambda: rd.render(rd.ReduceSpec("sum", "f32", 256, False, fi.spec, None, True,
                                                                scan_identity=True), words),
    }


def _scan(v):
    x = fused(float_chain(v, NATIVE)[0])
    ints = fused(int64_mixed(v, EMULATED)[0])
    nonzero = op("not_equal", [data(1, SIZES[v], dt.float32, NATIVE), const(0.0, dt.float32, NATIVE)], dt.bool)
    flags = fused(op("cast", [nonzero], dt.uint32))  # nonzero's flags, as the compaction reads them
    out = {"scan/fill": sc.render_fill, "scan/scatter": lambda: sc.render_scatter(flags.spec)}
    for layout in ("tile", "thread", "lookback"):
        out[f"scan/{layout}_f32"] = lambda layout=layout: sc.render(sc.ScanSpec("sum", "f32", x.spec, True, layout))
    out["scan/tile_f32_subgroups"] = lambda: sc.render(sc.ScanSpec("sum", "f32", x.spec, True, "tile",
                                                                   vec_out=True, subgroups=True))
    out["scan/lookback_f32_window"] = lambda: sc.render(sc.ScanSpec("sum", "f32", x.spec, True, "lookback",
                                                                    subgroups=True, window=sc.LOOKBACK_WINDOW))
    out["scan/thread_prod_ei64"] = lambda: sc.render(sc.ScanSpec("prod", "ei64", ints.spec, False, "thread"))
    return out


def _sort(v):
    f32 = ksort.KeySource(float_chain(v, NATIVE)[0])
    i64 = ksort.KeySource(int64_mixed(v, EMULATED)[0])
    out = {}
    for name, src in (("f32", f32), ("ei64", i64)):
        out[f"sort/keys_{name}"] = lambda src=src: _keys(src, False)
        for kind in ("key", "seg"):
            out[f"sort/upsweep_{kind}_{name}"] = lambda kind=kind, src=src: ws.render_upsweep(kind, src.kw, 8)
        for mode in ("key0", "key", "seg"):
            for sg in (False, True):
                out[f"sort/downsweep_{mode}_{name}_{sg}"] = lambda mode=mode, src=src, sg=sg: ws.render_downsweep(
                    mode, src.kw, mode != "seg", 8, sg)
    out["sort/keys_values"] = lambda: _keys(f32, True)

    def search(mode):
        pbases = param_bases(4, [len(f32.params) // 4] * 2)
        a_group, a_fns = f32.render("a_", pbases[0])
        b_group, b_fns = f32.render("b_", pbases[1])
        return ws.render_search(a_group, a_fns, None, "", None, b_group, b_fns, mode, pbases)

    def unique_flags():
        group, fns = i64.render("src_", 2)
        return ws.render_unique_flags(group, fns)

    out["sort/searchsorted"] = lambda: search("searchsorted")
    out["sort/isin"] = lambda: search("isin")
    out["sort/unique_flags"] = unique_flags
    for inv in (False, True):
        out[f"sort/unique_compact_{inv}"] = lambda inv=inv: ws.render_unique_compact(inv)
    return out


def _keys(src, values: bool):
    group, fns = src.render("src_", 2)
    return ws.render_keys(group, fns, src.kw, values)


def _pbases(head_words: int, inputs) -> list[int]:
    return param_bases(head_words, [fi.n_words for fi in inputs])


def _gather(v):
    values = fused(float_chain(v, NATIVE)[0])
    index = fused(op("cast", [data(5, SIZES[v], dt.int64, NATIVE)], dt.uint32))
    other = fused(data(6, SIZES[v], dt.float32, NATIVE, OFFSETS[v]))
    three = [values, index, other]
    concat = [fused(float_chain(v, NATIVE)[0]), fused(data(7, SIZES[v], dt.float32, NATIVE))]
    return {
        "gather/gather": lambda: gk.render_gather(values.spec, index.spec, None, "float32", True, False,
                                                  _pbases(2, three[:2])),
        "gather/gather_other_checked": lambda: gk.render_gather(values.spec, index.spec, other.spec, "float32", True,
                                                                True, _pbases(2, three)),
        "gather/winner": lambda: gk.render_winner(index.spec, True, _pbases(2, [index])),
        "gather/concat": lambda: gk.render_concat([fi.spec for fi in concat], "float32", True,
                                                  _pbases(3 + 2 * len(concat), concat)),
    }


def _write(v):
    value = fused(float_chain(v, NATIVE)[0])
    pred = fused(op("greater", [data(4, SIZES[v], dt.float32, NATIVE), const(SCALARS[v], dt.float32, NATIVE)],
                    dt.bool))
    index = fused(data(5, SIZES[v], dt.uint32, NATIVE))
    narrow = fused(strided_where(v, EMULATED)[0])
    ndim = 2
    head = 2 + 2 * ndim
    return {
        "write/region": lambda: wk.render_write(value.spec, None, None, "float32", True, ndim,
                                                _pbases(head, [value])),
        "write/masked": lambda: wk.render_write(value.spec, pred.spec, None, "float32", True, ndim,
                                                _pbases(head, [value, pred])),
        "write/indexed": lambda: wk.render_write(value.spec, None, index.spec, "float32", True, ndim,
                                                 _pbases(head, [value, index])),
        "write/narrow_emulated": lambda: wk.render_write(narrow.spec, None, None, "int8", False, ndim,
                                                         _pbases(head, [narrow])),
        "write/element_int16": lambda: wk.render_write_element("int16", True),
        "write/element_int64_emulated": lambda: wk.render_write_element("int64", False),
    }


def _matmul(v):
    out = {}
    for a_cls, b_cls, c_vec in (("Kv", "Nv", True), ("sM", "sK", False), ("Mv", "Kv", True)):
        for tile in ((64, 64, 16, 4, 4), (128, 128, 16, 8, 8)):
            name = f"matmul/tiled_{a_cls}_{b_cls}_{c_vec}_{tile[0]}"
            out[name] = lambda a=a_cls, b=b_cls, c=c_vec, t=tile: km.render_tiled(a, b, c, *t, 1)
    for dname, native in (("float64", True), ("int64", False), ("complex64", True), ("int8", True)):
        out[f"matmul/generic_{dname}_{native}"] = lambda d=dname, n=native: km.render_generic(d, n, 2)
    return out


LINALG_TAGS = ("f32", "f64", "c64", "c128")


def _linalg(v):
    out = {}
    for t in LINALG_TAGS:
        for mode in ("solve", "inv", "det"):
            out[f"linalg/lu_{mode}_{t}"] = lambda t=t, m=mode: kl.render_lu(t, m)
        out[f"linalg/qr_{t}"] = lambda t=t: kl.render_qr(t)
        for mode in ("svd", "vals", "eigh", "eigvals"):
            out[f"linalg/svd_{mode}_{t}"] = lambda t=t, m=mode: kl.render_svd(t, m)
    for t in ("c64", "c128"):  # eig works in complex whatever its input
        for real_in in (False, True):
            for vectors in (False, True):
                out[f"linalg/eig_{t}_{real_in}_{vectors}"] = lambda t=t, r=real_in, w=vectors: kl.render_eig(t, r, w, 64)
    return out


def _linalg_blocked(v):
    out = {}
    for t in LINALG_TAGS:
        for name in ("store", "leaf", "panel"):
            out[f"linalg_blocked/{name}_{t}"] = lambda t=t, f=getattr(kb, f"render_{name}"): f(t)
        out[f"linalg_blocked/leaf_sh_{t}"] = lambda t=t: kb.render_leaf_shared(t)
        out[f"linalg_blocked/leaf_sh_{t}_w1024"] = lambda t=t: kb.render_leaf_shared(t, 65, 1024)
        out[f"linalg_blocked/panel1024_{t}"] = lambda t=t: kb.render_panel(t, 1024)
    for unrolled in (False, True):
        out[f"linalg_blocked/panelr1024_f32_sg32_{unrolled}"] = lambda u=unrolled: kb.render_panel_reg("f32", 1024, 32, u)
        for t in ("f32", "f64", "c64"):
            out[f"linalg_blocked/cholp256_{t}_{unrolled}"] = lambda t=t, u=unrolled: kb.render_chol_panel(t, 256, u)
    for t in ("f32", "f64"):
        out[f"linalg_blocked/hh_{t}"] = lambda t=t: kb.render_hh(t)
        out[f"linalg_blocked/hh1024_{t}"] = lambda t=t: kb.render_hh(t, 1024)
        out[f"linalg_blocked/hh1024_sg32_{t}"] = lambda t=t: kb.render_hh(t, 1024, 32)
        out[f"linalg_blocked/hh_t_{t}"] = lambda t=t: kb.render_hh_t(t)
        out[f"linalg_tsqr/up256_33_{t}"] = lambda t=t: kq.render_up(t, 256, 33)
        out[f"linalg_tsqr/up256_33_1024_{t}"] = lambda t=t: kq.render_up(t, 256, 33, 1024)
        out[f"linalg_tsqr/down256_33_1024_{t}"] = lambda t=t: kq.render_down(t, 256, 33, 1024)
        out[f"linalg_tsqr/up64_32_{t}"] = lambda t=t: kq.render_up(t, 64, 32)
        out[f"linalg_tsqr/down128_33_{t}"] = lambda t=t: kq.render_down(t, 128, 33)
        out[f"linalg_tsqr/rebuild_{t}"] = lambda t=t: kq.render_rebuild(t)
        out[f"linalg_tsqr/fix_{t}"] = lambda t=t: kq.render_fix(t)
    return out


def _linalg_eigen(v):
    out = {}
    for t in LINALG_TAGS:
        out[f"linalg_eigen/jeig_{t}"] = lambda t=t: ke.render_jeig(t)
        out[f"linalg_eigen/jeig_{t}_mem"] = lambda t=t: ke.render_jeig(t, 32, True, True, 128)
        out[f"linalg_eigen/jeig_{t}_slots"] = lambda t=t: ke.render_jeig(t, 64, True, True, 1024, True)
        out[f"linalg_eigen/permute_{t}"] = lambda t=t: ke.render_permute(t)
        out[f"linalg_eigen/order_{t}"] = lambda t=t: ke.render_order(t)
        out[f"linalg_eigen/ojac_{t}"] = lambda t=t: ke.render_ojac(t, 256)
        out[f"linalg_eigen/ojac_{t}_sh"] = lambda t=t: ke.render_ojac(t, 512, 32, t in ("f32", "c64"))
        out[f"linalg_eigen/refine_eigh_{t}"] = lambda t=t: ke.render_refine_eigh(t)
        out[f"linalg_eigen/refine_svd_{t}"] = lambda t=t: ke.render_refine_svd(t)
    for wt, it in (("f32", "f32"), ("f64", "f64"), ("f64", "f32")):  # real matrices only
        out[f"linalg_eigen/post_eigh_{wt}_{it}"] = lambda wt=wt, it=it: ke.render_post_eigh(wt, it)
        out[f"linalg_eigen/post_svd_{wt}_{it}"] = lambda wt=wt, it=it: ke.render_post_svd(wt, it)
    return out


def _linalg_trd(v):
    out = {}
    for t in ("f32", "f64"):  # real matrices only
        out[f"linalg_trd/trd_{t}"] = lambda t=t: kt.render_trd(t, 128, 64)
        out[f"linalg_trd/wy_{t}"] = lambda t=t: kt.render_wy(t, 64)
        out[f"linalg_trd/tql_{t}"] = lambda t=t: kt.render_tql(t, 128, 64)
        out[f"linalg_trd/bisect_{t}"] = lambda t=t: kt.render_bisect(t, 64)
        out[f"linalg_trd/multisect_{t}"] = lambda t=t: kt.render_multisect(t, 64)
        out[f"linalg_trd/stein_{t}"] = lambda t=t: kt.render_stein(t, 128, 64)
        out[f"linalg_trd/stein_{t}_wide"] = lambda t=t: kt.render_stein(t, 1024, 128)
    return out


def _fft(v):
    out = {}
    real = fused(float_chain(v, NATIVE)[0])
    cplx = fused(complex_two_outputs(v, NATIVE)[0])
    for cname in ("complex64", "complex128"):
        for mode in ("table", "chirp", "chirpb"):
            out[f"fft/gen_{mode}_{cname}"] = lambda m=mode, c=cname: wf.render_gen(wf.GenSpec(m, c), ew.library)
        out[f"fft/split_{cname}"] = lambda c=cname: wf.render_split(wf.SplitSpec(c), ew.library)
        tiles = {
            "buf": wf.TileSpec(cname, 4096),
            "buf_twiddle": wf.TileSpec(cname, 1024, twiddle=True),
            "bluestein": wf.TileSpec(cname, 2048, lchirp=True, mul_b=True, schirp=True),
            "herm_real": wf.TileSpec(cname, 512, load="herm", store="real"),
            "c2r_unpack": wf.TileSpec(cname, 512, load="c2r", store="unpack"),
            "planned_4096": wf.TileSpec(cname, 4096, radices=(8, 8, 8, 8)),
            "planned_twiddle_128": wf.TileSpec(cname, 1024, twiddle=True, radices=(8, 8, 2)),
            "planned_r2c_2": wf.TileSpec(cname, 512, store="r2c", radices=(2,)),
        }
        for name, spec in tiles.items():
            out[f"fft/tile_{name}_{cname}"] = lambda spec=spec: wf.render_tile(spec, ew.library)
    inputs = {
        "input_plain": (wf.TileSpec("complex64", 4096, src="input", in_spec=cplx.spec), cplx),
        "input_pack_r2c": (wf.TileSpec("complex64", 2048, src="input", in_spec=real.spec, load="pack", store="r2c"),
                           real),
    }
    for name, (spec, fi) in inputs.items():
        out[f"fft/tile_{name}"] = lambda spec=spec: wf.render_tile(spec, ew.library)
    return out


FAMILIES = {
    "elementwise": _elementwise,
    "reduce": _reduce,
    "scan": _scan,
    "sort": _sort,
    "gather": _gather,
    "write": _write,
    "matmul": _matmul,
    "linalg": _linalg,
    "linalg_blocked": _linalg_blocked,
    "linalg_eigen": _linalg_eigen,
    "linalg_trd": _linalg_trd,
    "fft": _fft,
}


# ------------------------------------------------------------------ every op of the lowering table

# A dtype per compute tag, and the stand-in device that gives it that tag.
OP_TAGS = {"b": ("bool", NATIVE), "i32": ("int32", NATIVE), "u32": ("uint32", NATIVE),
           "i64": ("int64", NATIVE), "u64": ("uint64", NATIVE), "ei64": ("int64", EMULATED),
           "eu64": ("uint64", EMULATED), "f32": ("float32", NATIVE), "f64": ("float64", NATIVE),
           "c64": ("complex64", NATIVE), "c128": ("complex128", NATIVE)}
BOOL_RESULT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf", "isfinite",
               "signbit"}
REAL_RESULT = {"real", "imag", "abs"}  # of a complex operand
# The lowering table finds the bitwise ops' templates for floats too (through the "num"
# family); the namespace never asks for them there.
INTEGER_ONLY = ("bitwise_",)


def lowering(name: str, tag: str) -> str | None:
    """The op's WGSL template for operands of ``tag``, or None where it has none."""
    try:
        return ops.lower(name, None, (tag,) * 3, tag)
    except ops.LoweringError:
        return None


def op_kernels() -> dict:
    """'op/tag' -> a function rendering the one-op kernel, for every op of the lowering
    table and every compute tag it has a lowering for."""
    out = {}
    for name in sorted(ops.TABLE):
        for tag in OP_TAGS:
            if name.startswith(INTEGER_ONLY) and tag not in ("b", "i32", "u32", "i64", "u64", "ei64", "eu64"):
                continue
            template = lowering(name, tag)
            if template is not None:
                out[f"{name}/{tag}"] = lambda name=name, tag=tag, template=template: _op_kernel(name, tag, template)
    return out


def _op_kernel(name: str, tag: str, template: str) -> str:
    dname, device = OP_TAGS[tag]
    dtype = dt.BY_NAME[dname]
    arity = max((i + 1 for i, ch in enumerate("abc") if "{" + ch + "}" in template), default=1)
    srcs = [data(i + 1, (64, 48), dtype, device) for i in range(arity)]
    if name == "where":
        srcs[0] = data(1, (64, 48), dt.bool, device)
    out = dt.bool if name in BOOL_RESULT else dt.real_of(dtype) if name in REAL_RESULT and dtype.kind == "c" else dtype
    return ew.render(elementwise_spec([op(name, srcs, out)]))


def text_of(rendered) -> str:
    """The WGSL text of a renderer's result: the text itself, or the one text among
    what it returns with it (its launch record, or which bindings it writes)."""
    if isinstance(rendered, str):
        return rendered
    texts = [part for part in rendered if isinstance(part, str)]
    assert len(texts) == 1, f"text_of: expected one WGSL text, got {type(rendered)}"
    return texts[0]


def kernels(variant: int = 0) -> dict:
    """Kernel name -> a function that renders its WGSL, for every family."""
    out = {}
    for build in FAMILIES.values():
        for name, render in build(variant).items():
            out[name] = lambda render=render: text_of(render())
    return out


def digests(variant: int = 0) -> dict[str, str]:
    """sha256 of each kernel's text, of the helper libraries resolved whole, and of
    every op's one-op kernel."""
    found = {name: hashlib.sha256(render().encode()).hexdigest() for name, render in kernels(variant).items()}
    everything = snippets.resolve(ops.LIBRARY, sorted(ops.LIBRARY))
    found["libraries"] = hashlib.sha256(everything.encode()).hexdigest()
    each_op = hashlib.sha256()
    for name, render in op_kernels().items():
        each_op.update(f"{name}\n{render()}\n".encode())
    found["elementwise ops"] = each_op.hexdigest()
    return found


def refuse_adapters() -> None:
    """Make every wgpu adapter request raise, so that nothing below can open a device."""
    import wgpu

    def refuse(*args, **kwargs):
        raise RuntimeError("catalogue: a device was asked for")

    for name in ("enumerate_adapters", "enumerate_adapters_sync", "enumerate_adapters_async",
                 "request_adapter", "request_adapter_sync", "request_adapter_async"):
        setattr(wgpu.gpu, name, refuse)


if __name__ == "__main__":  # the digests as JSON, for the test that compares processes
    refuse_adapters()
    json.dump(digests(int(sys.argv[1]) if len(sys.argv) > 1 else 0), sys.stdout, sort_keys=True)
