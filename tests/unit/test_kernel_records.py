"""Device-free tests of the gather, matmul, fft and linalg families' launch records:
each record's declarations open the WGSL its renderer writes, its parameter fields sit
where the kernel reads them, and the keys its driver builds hold structure only."""
from __future__ import annotations

import struct

import pytest

from wgarray import _dtypes as dt
from wgarray._graph import node as g
from wgarray._graph.fusion import FusedInput
from wgarray._runtime.launch import param_bases
from wgarray._wgsl import fft as wf
from wgarray._wgsl import gather as gk
from wgarray._wgsl import linalg as kl
from wgarray._wgsl import linalg_blocked as kb
from wgarray._wgsl import linalg_eigen as ke
from wgarray._wgsl import linalg_trd as kt
from wgarray._wgsl import linalg_tsqr as kq
from wgarray._wgsl import matmul as km

from .catalogue import NATIVE as DEV
from .catalogue import StubBuffer as _Buffer


def _fused(shape, dtype=dt.float32, offset=0):
    return FusedInput(g.Data(_Buffer(len(shape)), shape, dtype, DEV, offset))


def _opens(record, text: str) -> bool:
    return text.startswith("\n".join(record.declarations()) + "\n")


# ------------------------------------------------------------------ gather family

@pytest.mark.parametrize("other, checked", [(False, False), (True, False), (False, True), (True, True)])
def test_gather_record_opens_its_wgsl_and_names_inputs_output_flag(other, checked):
    ins = [_fused((5, 6)), _fused((3, 4), dt.uint32)] + ([_fused((3, 4))] if other else [])
    pbases = param_bases(2, [fi.n_words for fi in ins])
    spec = (ins[0].spec, ins[1].spec, ins[2].spec if other else None, "float32", True, checked, tuple(pbases))
    rec, text = gk.gather_record(*spec), gk.render_gather(*spec)
    assert _opens(rec, text)
    assert rec.arg_names == ("in0", "in1") + (("in2",) if other else ()) + ("O",) + (("F",) if checked else ())
    assert rec.writes[-1 - checked] and rec.writes[-1]
    assert [rec.offset(f"in{k}") for k in range(len(ins))] == pbases
    assert "let size = P[1];" in text and rec.offset("size") == 1


def test_gather_keys_equal_for_other_sizes():
    a = [_fused((5, 6)), _fused((3, 4), dt.uint32)]
    b = [_fused((50, 7)), _fused((9, 2), dt.uint32)]
    assert [fi.spec for fi in a] == [fi.spec for fi in b]
    assert param_bases(2, [fi.n_words for fi in a]) == param_bases(2, [fi.n_words for fi in b])


def test_concat_and_winner_records_place_their_words_where_the_kernels_read_them():
    ins = [_fused((2, 3)), _fused((2, 5)), _fused((2, 1))]
    pbases = param_bases(3 + 2 * len(ins), [fi.n_words for fi in ins])
    spec = (tuple(fi.spec for fi in ins), "int16", True, tuple(pbases))
    rec, text = gk.concat_record(*spec), gk.render_concat(*spec)
    assert _opens(rec, text)
    assert [rec.offset(f"start{k}") for k in range(3)] == [3, 5, 7] and rec.offset("len2") == 8
    assert "c0 < P[3] + P[4]" in text and "P[6]" in text
    idx = _fused((7,), dt.int64)
    rec = gk.winner_record(idx.spec, True, (2,))
    assert _opens(rec, gk.render_winner(idx.spec, True, (2,)))
    assert rec.arg_names == ("in0", "W", "F") and rec.writes[-2:] == (True, True)


# ------------------------------------------------------------------ matmul

def test_matmul_records_open_their_wgsl_and_pack_the_documented_words():
    spec = ("Kv", "Nv", True, 64, 64, 16, 4, 4, 2)
    rec = km.tiled_record(*spec)
    assert _opens(rec, km.render_tiled(*spec))
    assert rec.arg_names == ("A", "B", "C") and rec.writes == (False, False, True)
    assert rec.workgroup == km.tiled_threads(64, 64, 4, 4)
    words = km.param_words(7, 8, 9, 6, 1, 2, 3, -1, 5, 6, 7, 8, (2, 3), (10, 11), (12, 13), 4, 3)
    assert words == [7, 8, 9, 6, 1, 2, 3, 0xFFFFFFFF, 5, 6, 7, 8, 7 * 8 * 6, 4, 3, 2, 10, 12, 3, 11, 13]
    # the driver packs the words in the record's order: the record's own packing agrees
    assert rec.pack(**dict(zip((f.name for f in rec.params), words))) == struct.pack(f"<{len(words)}I", *words)
    gen = km.generic_record("int16", False, 1)
    assert _opens(gen, km.render_generic("int16", False, 1)) and gen.name == "matmul_int16_b1"


# ------------------------------------------------------------------ fft

def test_fft_records_open_their_wgsl_and_put_scale_and_input_at_their_words():
    x = _fused((4, 64), dt.complex64)
    tile = wf.TileSpec(cname="complex64", capacity=4096, src="input", in_spec=x.spec, lchirp=True, mul_b=True)
    rec = wf.tile_record(tile)
    assert _opens(rec, wf.render_tile(tile, lambda code: ""))
    assert rec.arg_names == ("TW", "in0", "W", "BB", "Y")
    assert rec.offset("scale") == 38 and rec.offset("in0") == wf.TILE_PBASE
    words = dict(groups=1, L=8, log_ci=0, log_cb=0, J=1, nct=1, B=1, A=1, IA=0, IK=1, OA=0, OK=1, lin=8, n=8,
                 n_out=8, inner=1, conj_in=0, conj_mid=0, conj_out=0, tw_div=1, nh=0, tw_unit=1, tw_n=0)
    packed = rec.pack(**wf.tile_params(radices=[8], scale=0.5, cname="complex64", **words))
    assert len(packed) == 4 * wf.TILE_PBASE
    assert struct.unpack_from("<I", packed, 4 * 22)[0] == 8 and struct.unpack_from("<f", packed, 4 * 38)[0] == 0.5
    assert struct.unpack_from("<I", packed, 4 * 36)[0] == 15  # a power-of-two tile swizzles
    split = wf.SplitSpec("complex128")
    assert _opens(wf.split_record(split), wf.render_split(split, lambda code: ""))
    assert wf.split_record(split).f64_params
    gen = wf.GenSpec("chirp", "complex64")
    assert _opens(wf.gen_record(gen), wf.render_gen(gen, lambda code: ""))


# ------------------------------------------------------------------ linalg

def _opens_aliased(record, text: str) -> bool:
    return text.startswith(kl._alias("\n".join(record.declarations())) + "\n")


@pytest.mark.parametrize("record, render, spec", [
    (kl.lu_record, kl.render_lu, ("f32", "solve")),
    (kl.lu_record, kl.render_lu, ("c64", "det")),
    (kl.qr_record, kl.render_qr, ("f32",)),
    (kl.svd_record, kl.render_svd, ("c64", "svd")),
    (kl.svd_record, kl.render_svd, ("f32", "eigvals")),
    (kl.eig_record, kl.render_eig, ("c64", True, True, 60)),
    (kb.store_record, kb.render_store, ("f32",)),
    (kb.leaf_record, kb.render_leaf, ("c64",)),
    (kb.leaf_shared_record, kb.render_leaf_shared, ("f32", 65)),
    (kb.leaf_shared_record, kb.render_leaf_shared, ("f64", 65, 1024)),
    (kb.leaf_shared_record, kb.render_leaf_shared, ("c128", 64)),
    (kb.panel_record, kb.render_panel, ("f32",)),
    (kb.panel_reg_record, kb.render_panel_reg, ("f32", 1024, 32)),
    (kb.panel_reg_record, kb.render_panel_reg, ("f32", 256, 8, True)),
    (kb.chol_panel_record, kb.render_chol_panel, ("f32",)),
    (kb.chol_panel_record, kb.render_chol_panel, ("c64", 128, True)),
    (kb.hh_record, kb.render_hh, ("f32",)),
    (kb.hh_record, kb.render_hh, ("f64", 256, 16)),
    (kb.hh_t_record, kb.render_hh_t, ("f32",)),
    (kq.up_record, kq.render_up, ("f32", 256, 33)),
    (kq.up_record, kq.render_up, ("f64", 128, 33, 1024)),
    (kq.down_record, kq.render_down, ("f64", 64, 32)),
    (kq.rebuild_record, kq.render_rebuild, ("f32",)),
    (kq.fix_record, kq.render_fix, ("f64",)),
    (ke.jeig_record, ke.render_jeig, ("f32", 64, True, False, 256)),
    (ke.jeig_record, ke.render_jeig, ("f64", 64, False, False, 1024, True)),
    (ke.permute_record, ke.render_permute, ("c64",)),
    (ke.order_record, ke.render_order, ("f32",)),
    (ke.ojac_record, ke.render_ojac, ("f32", 256)),
    (ke.ojac_record, ke.render_ojac, ("c64", 512, 32, True)),
    (ke.ojac_record, ke.render_ojac, ("f64", 256, 48, False)),
    (ke.refine_eigh_record, ke.render_refine_eigh, ("f64",)),
    (ke.refine_svd_record, ke.render_refine_svd, ("c128",)),
    (ke.post_eigh_record, ke.render_post_eigh, ("f64", "f32")),
    (ke.post_svd_record, ke.render_post_svd, ("f64", "f32")),
    (kt.bisect_record, kt.render_bisect, ("f64", 64)),
    (kt.multisect_record, kt.render_multisect, ("f32", 64)),
    (kt.stein_record, kt.render_stein, ("f32", 256, 64)),
], ids=lambda v: v.__name__ if callable(v) else "-".join(map(str, v)))
def test_linalg_records_open_their_wgsl(record, render, spec):
    rec = record(*spec)
    assert _opens_aliased(rec, render(*spec))
    assert not rec.f64_params and [f.offset for f in rec.params] == list(range(len(rec.params)))
    assert {f.type for f in rec.params} == {"u32"}  # the driver packs them in order


def test_linalg_records_name_what_the_drivers_pass():
    assert kl.lu_record("f32", "solve").arg_names == ("A", "B", "W", "X", "FL")
    assert kl.lu_record("f32", "inv").arg_names == ("A", "W", "X", "FL")
    assert kl.svd_record("f32", "svd").arg_names[-3:] == ("Sv", "U", "Vo")
    assert kl.svd_record("f32", "eigh").arg_names[-2:] == ("Sv", "Vo")
    assert kl.qr_record("f32").offset("j1") == 12
    # the block permutation's table follows its PERMUTE_HEAD fields
    assert len(ke.permute_record("f32").params) == ke.PERMUTE_HEAD
    # stein reads bisect's brackets and the tridiagonal under the names trd wrote
    assert kt.stein_record("f64", 128, 64).arg_names == ("DT", "ET", "LO", "HI", "SH", "SW", "ZT")
    assert kt.bisect_record("f64", 64).arg_names[:5] == ("DT", "ET", "SC", "LO", "HI")
