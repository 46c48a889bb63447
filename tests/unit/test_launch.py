"""Launch records and kernel keys, without a device: the declarations a record
generates, the check of a dispatch's buffers by name, and keys that hold structure
only (equal for other sizes and scalar values, different for another structure).

Nothing here opens a device: nodes are built on a stand-in device and stand-in
buffers, and only renderers and the fusion planner's spec derivation run.
"""
from __future__ import annotations

import pytest

from wgarray import _dtypes as dt
from wgarray._graph import node as g
from wgarray._graph.fusion import _plan
from wgarray._runtime.errors import InternalError, KernelCompileError, LaunchError
from wgarray._runtime.launch import (Binding, Field, Group, Launch, check_key, even, pack_words, pad_even, param_bases,
                                     workgroups)
from wgarray._wgsl import elementwise as ew

from .catalogue import NATIVE as DEV
from .catalogue import StubBuffer as _Buffer


def _data(uid, shape, dtype=dt.float32, offset=0, strides=None):
    return g.Data(_Buffer(uid), shape, dtype, DEV, offset, strides)


def _record():
    return Launch("k", (Group("in0", (Binding("in0_B0", "vec4<f32>"), Binding("in0_B1", "i32"))),
                        Binding("O", "f32", write=True), Binding("ST", "atomic<u32>", write=True)),
                  (Field("M"), Field("L", "u32", 1), Field("x", "f32", 2), Field("in0", "block", 8)),
                  f64_params=True)


# ------------------------------------------------------------------ records

def test_record_generates_declarations_in_binding_order_then_params():
    assert _record().declarations() == [
        "@group(0) @binding(0) var<storage, read> in0_B0: array<vec4<f32>>;",
        "@group(0) @binding(1) var<storage, read> in0_B1: array<i32>;",
        "@group(0) @binding(2) var<storage, read_write> O: array<f32>;",
        "@group(0) @binding(3) var<storage, read_write> ST: array<atomic<u32>>;",
        "@group(0) @binding(4) var<storage, read> P: array<u32>;",
        "@group(0) @binding(5) var<storage, read> PD: array<f64>;",
    ]


def test_record_states_writes_and_a_single_value_binding():
    rec = Launch("s", (Binding("S", "Acc", write=True, array=False),))
    assert rec.writes == (True,)
    assert rec.declarations() == ["@group(0) @binding(0) var<storage, read_write> S: Acc;",
                                  "@group(0) @binding(1) var<storage, read> P: array<u32>;"]
    assert _record().writes == (False, False, True, True)


def test_record_packs_named_params_at_their_offsets_blocks_even():
    rec = _record()
    assert rec.offset("in0") == 8
    block = b"\x01\x00\x00\x00"
    packed = rec.pack(M=3, L=5, x=1.5, in0=block)
    assert packed == (b"\x03\0\0\0" + b"\x05\0\0\0" + b"\0\0\xc0\x3f" + b"\0" * 20 + block + b"\0" * 4)
    assert len(packed) % 8 == 0
    with pytest.raises(InternalError, match="no parameter fields"):
        rec.pack(N=1)
    with pytest.raises(InternalError, match="odd word"):
        Launch("bad", (), (Field("a"), Field("b", "block", 1)))
    # a word after a block: the general packing loop
    tail = Launch("tail", (), (Field("a"), Field("blk", "block", 2), Field("z", "u32", 6)))
    assert tail.pack(a=1, blk=b"\1" * 8, z=9) == b"\1\0\0\0" + b"\0" * 4 + b"\1" * 8 + b"\0" * 8 + b"\x09\0\0\0"
    with pytest.raises(InternalError, match="overlaps"):
        tail.pack(blk=b"\1" * 24)


def test_padding_helpers_round_to_even_words():
    assert [even(n) for n in (0, 1, 2, 7)] == [0, 2, 2, 8]
    assert pad_even(b"abcd") == b"abcd\0\0\0\0" and pad_even(b"") == b"" and len(pad_even(b"x" * 9)) == 16
    assert param_bases(5, [3, 2, 0, 1]) == [6, 10, 12, 12]
    packed, bases = pack_words([1, -1, 7], [b"\x02\0\0\0", b"\x03\0\0\0"])
    assert bases == [4, 6]
    assert packed == b"\x01\0\0\0" + b"\xff" * 4 + b"\x07\0\0\0" + b"\0" * 4 + b"\x02\0\0\0" + b"\0" * 4 + b"\x03\0\0\0"
    assert [workgroups(n) for n in (0, 1, 256, 257)] == [0, 1, 1, 2] and workgroups(65, 64) == 2


# ------------------------------------------------------------------ buffers by name

def test_buffers_by_name_flatten_groups_in_binding_order():
    rec = _record()
    assert rec.buffers({"in0": ["a", "b"], "O": "o", "ST": "s"}) == ["a", "b", "o", "s"]


@pytest.mark.parametrize("given,message", [
    ({"in0": ["a", "b"], "O": "o"}, "kernel k: binding 'ST' missing"),
    ({"in0": ["a", "b"], "O": "o", "ST": "s", "X": "x"}, "kernel k: unknown binding 'X'"),
    ({"in0": ["a", "b"], "ST": "s", "O": "o"}, "kernel k: binding 'ST' out of order \\(expected 'O' at position 1\\)"),
    ({"in0": ["a"], "O": "o", "ST": "s"}, "kernel k: binding group 'in0' expects 2 buffers, got 1"),
])
def test_buffers_by_name_mismatch_is_an_internal_error_naming_kernel_and_binding(given, message):
    with pytest.raises(LaunchError, match=message) as exc:
        _record().buffers(given)
    assert isinstance(exc.value, InternalError) and isinstance(exc.value, RuntimeError)


def test_compile_error_keeps_key_and_wgsl_and_chains_its_cause():
    cause = ValueError("bad token")
    err = KernelCompileError("scan_x", ("scan", 1), "fn main() {}", cause)
    assert isinstance(err, InternalError) and err.wgsl == "fn main() {}" and err.key == ("scan", 1)
    assert "kernel scan_x does not compile" in str(err) and "bad token" in str(err)


def test_kernel_keys_have_one_shape():
    check_key(("elementwise", ("spec",)))
    for bad in (("reduce", "x", 3), "scan", (1, 2), ("sort", [1])):
        with pytest.raises((InternalError, TypeError)):
            check_key(bad)


# ------------------------------------------------------------------ elementwise records

def test_elementwise_record_matches_its_rendered_declarations():
    x = _data(1, (8, 8))
    y = _data(2, (8, 8), dt.int32, offset=3)
    plan = _plan([g.make_op("multiply", [x, g.make_op("cast", [y], dt.float32)], dt.float32)])
    rec = ew.launch_record(plan.spec)
    text = ew.render(plan.spec)
    assert text.startswith("\n".join(rec.declarations()) + "\n")
    assert rec.declarations() == [
        "@group(0) @binding(0) var<storage, read> B0: array<vec4<f32>>;",
        "@group(0) @binding(1) var<storage, read> B1: array<i32>;",
        "@group(0) @binding(2) var<storage, read_write> O0: array<vec4<f32>>;",
        "@group(0) @binding(3) var<storage, read> P: array<u32>;",
    ]
    assert rec.buffers({"inputs": plan.buffers, "outputs": ["out"]}) == plan.buffers + ["out"]


def _spec(shape, scalar, op="multiply", dtype=dt.float32, offset=0, strides=None):
    x = _data(10 + len(shape), shape, dtype, offset, strides)
    return _plan([g.make_op(op, [x, g.Const(scalar, dtype, DEV, shape)], dtype)]).spec


def test_elementwise_keys_equal_for_other_sizes_and_scalars():
    assert _spec((100,), 2.0) == _spec((7,), -3.5)
    assert hash(("elementwise", _spec((100,), 2.0))) == hash(("elementwise", _spec((7,), -3.5)))
    assert ew.render(_spec((100,), 2.0)) == ew.render(_spec((7,), -3.5))


def test_elementwise_keys_differ_for_other_structure():
    base = _spec((100,), 2.0)
    assert base != _spec((100,), 2.0, op="add")
    assert base != _spec((100,), 2, dtype=dt.int32)
    assert base == _spec((4, 25), 2.0)  # contiguous: one flat run, whatever the shape
    assert base != _spec((4, 25), 2.0, strides=(1, 4))  # a transposed view: strided loads
    assert base != _spec((100,), 2.0, offset=1)  # no vec4 loads at an odd offset


# ------------------------------------------------------------------ the families' records

def _fused(shape=(1000,), dtype=dt.float32, vec4=False, offset=0):
    from wgarray._graph.fusion import FusedInput

    return FusedInput(_data(50, shape, dtype, offset), vec4=vec4)


def test_reduce_record_declarations_open_its_wgsl():
    from wgarray._wgsl import reduce as rd

    inp = _fused(vec4=True)
    words = rd.input_words(inp.spec, inp.params)
    spec = rd.ReduceSpec("argmax", "f32", 256, True, inp.spec, None, True)
    rec = rd.launch_record(spec, words)
    assert rec.declarations() == [
        "@group(0) @binding(0) var<storage, read> in0_B0: array<vec4<f32>>;",
        "@group(0) @binding(1) var<storage, read_write> O: array<f32>;",
        "@group(0) @binding(2) var<storage, read_write> OI: array<u32>;",
        "@group(0) @binding(3) var<storage, read> P: array<u32>;",
    ]
    assert rd.render(spec, words).startswith("\n".join(rec.declarations()) + "\n")
    assert rec.writes == (False, True, True) and rec.arg_names == ("in0", "O", "OI")


def test_reduce_pass_params_are_the_records_layout():
    from wgarray._kernels import reduce as kr
    from wgarray._wgsl import reduce as rd

    inp, idx = _fused(), _fused((7, 3), dt.uint32)
    in_words, idx_words = rd.input_words(inp.spec, inp.params), rd.input_words(idx.spec, idx.params)
    spec = rd.ReduceSpec("argmin", "f32", 1, False, inp.spec, idx.spec, True)
    rec = rd.launch_record(spec, in_words, idx_words)
    assert rec.offset("in0") == rd.HEADER_WORDS and rec.offset("ix") == rd.HEADER_WORDS + in_words
    by_hand = kr.pass_params(5, 1000, 64, 16, inp.params, idx.params)
    assert by_hand == rec.pack(M=5, L=1000, C=64, NC=16, in0=inp.params, ix=idx.params)


def test_reduce_keys_hold_structure_not_sizes():
    from wgarray._wgsl import reduce as rd

    def key(kind, n, dtype=dt.float32):
        inp = _fused((n,), dtype, vec4=True)
        return ("reduce", (rd.ReduceSpec(kind, "f32" if dtype is dt.float32 else "i32", 256, True, inp.spec, None,
                                         True), rd.input_words(inp.spec, inp.params), 0))

    assert key("sum", 1000) == key("sum", 70_000)
    assert key("sum", 1000) != key("max", 1000)
    assert key("sum", 1000) != key("sum", 1000, dt.int32)


def test_scan_records_declare_offsets_or_lookback_state():
    from wgarray._wgsl import scan as sc

    inp = _fused()
    tile = sc.ScanSpec("sum", "f32", inp.spec, True, "tile", False, True, False)
    rec = sc.launch_record(tile)
    assert rec.declarations()[1:] == [
        "@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;",
        "@group(0) @binding(2) var<storage, read> X: array<f32>;",
        "@group(0) @binding(3) var<storage, read> P: array<u32>;",
    ]
    assert sc.render(tile).startswith("\n".join(rec.declarations()) + "\n")
    look = sc.launch_record(sc.ScanSpec("sum", "f32", inp.spec, True, "lookback"))
    assert look.declarations()[2] == "@group(0) @binding(2) var<storage, read_write> ST: array<atomic<u32>>;"
    assert look.arg_names == ("in0", "O", "ST") and look.offset("in0") == sc.HEADER_WORDS
    assert tile.name != sc.ScanSpec("sum", "f32", inp.spec, True, "tile", False, True, True).name
    from wgarray._kernels.scan import scan_params

    assert scan_params(3, 1000, 2, 1001, 1, 256, 1, 7, inp.params) == rec.pack(
        M=3, L=1000, NC=2, R=1001, S=1, C=256, HAS_OFFSETS=1, INNER=7, in0=inp.params)


def test_sort_records_name_the_bindings_their_wgsl_declares():
    from wgarray._wgsl import sort as ws

    rec, text = ws.render_downsweep("key", 1, True, 8)
    assert rec.arg_names == ("KIN", "VIN", "SCAN", "KOUT", "VOUT") and rec.writes == (False,) * 3 + (True,) * 2
    assert text.startswith("\n".join(rec.declarations()) + "\n")
    assert rec.declarations()[-1] == "@group(0) @binding(5) var<storage, read> P: array<u32>;"
    rec, text = ws.render_unique_compact(True)
    assert rec.declarations()[4:] == ["@group(0) @binding(4) var<storage, read_write> INV: array<u32>;",
                                      "@group(0) @binding(5) var<storage, read> P: array<u32>;"]
    assert text.startswith("\n".join(rec.declarations()) + "\n")


def test_write_record_places_inputs_then_target():
    from wgarray._wgsl import write as wk

    value, pred = _fused((4, 5)), _fused((4, 5), dt.bool)
    pbases = param_bases(6, [value.n_words, pred.n_words])
    rec, text = wk.render_write(value.spec, pred.spec, None, "int16", True, 2, pbases)
    assert rec.arg_names == ("value", "pred", "O")
    assert rec.declarations()[-2:] == ["@group(0) @binding(2) var<storage, read_write> O: array<atomic<u32>>;",
                                       "@group(0) @binding(3) var<storage, read> P: array<u32>;"]
    assert text.startswith("\n".join(rec.declarations()) + "\n")
    assert rec.offset("stride1") == 5 and rec.offset("value") == 6 and rec.offset("pred") == pbases[1]
