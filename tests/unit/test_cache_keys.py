"""Kernel cache keys, without a device: the elementwise planner's spec (the key of a
fused kernel, and the structure of every other family's fused input) is equal for two
graphs of one structure whatever their sizes, offsets and scalar values, which travel
in the parameters instead; a change of structure (op, dtype, layout class, int64 mode,
scalar dtype) changes the key."""
from __future__ import annotations

import itertools

import pytest

from wgarray import _dtypes as dt
from wgarray._graph import fusion
from wgarray._wgsl import elementwise as ew
from wgarray._wgsl import reduce as rd
from wgarray._wgsl import scan as sc

from . import catalogue as c
from .catalogue import EMULATED, NATIVE, const, data, op

GRAPHS = sorted(c.GRAPHS)


def spec_of(outputs, vec4=True) -> ew.ElementwiseSpec:
    return c.elementwise_spec(outputs, vec4)


@pytest.mark.parametrize("device", [NATIVE, EMULATED], ids=["int64-native", "int64-emulated"])
@pytest.mark.parametrize("graph", GRAPHS)
def test_key_ignores_sizes_offsets_and_scalars(graph, device):
    build = c.GRAPHS[graph]
    a, b = spec_of(build(0, device)), spec_of(build(1, device))
    assert a == b and hash(a) == hash(b)
    assert fusion.FusedInput(build(0, device)[0]).spec == fusion.FusedInput(build(1, device)[0]).spec


@pytest.mark.parametrize("graph", GRAPHS)
def test_sizes_and_scalars_travel_in_the_parameters(graph):
    build = c.GRAPHS[graph]
    first, second = (fusion.FusedInput(build(v, NATIVE)[0]) for v in (0, 1))
    assert first.spec == second.spec
    assert len(first.params) == len(second.params)  # one layout...
    assert first.params != second.params  # ...other values


@pytest.mark.parametrize("device", [NATIVE, EMULATED], ids=["int64-native", "int64-emulated"])
def test_different_graphs_have_different_keys(device):
    specs = {name: spec_of(c.GRAPHS[name](0, device)) for name in GRAPHS}
    for (n1, s1), (n2, s2) in itertools.combinations(specs.items(), 2):
        assert s1 != s2, (n1, n2)


def test_int64_mode_is_part_of_the_key():
    assert spec_of(c.int64_mixed(0, NATIVE)) != spec_of(c.int64_mixed(0, EMULATED))


def _binary(name="add", dtype=dt.float32, shape=(64, 48), x_offset=0, y_strides=None, scalar=None):
    x = data(1, shape, dtype, NATIVE, x_offset)
    y = const(scalar, dtype, NATIVE) if scalar is not None else data(2, shape, dtype, NATIVE, 0, y_strides)
    return [op(name, [x, y], dtype)]


BASE = _binary()
CHANGES = {
    "op": _binary("subtract"),
    "dtype": _binary(dtype=dt.int32),
    "misaligned leaf (no vec4 loads)": _binary(x_offset=3),
    "broadcast leaf": _binary(y_strides=(0, 1)),
    "strided leaf": _binary(y_strides=(1, 64)),
    "scalar operand": _binary(scalar=1.5),
    "rank": _binary(shape=(64, 48, 5), y_strides=(1, 64, 64 * 48)),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_of_structure_changes_the_key(change):
    assert spec_of(CHANGES[change]) != spec_of(BASE)


def test_aligned_offsets_share_a_key():
    """Offsets that keep vec4 loads (multiples of 4) are parameters, not structure."""
    assert spec_of(_binary(x_offset=4)) == spec_of(_binary(x_offset=4096)) == spec_of(BASE)


def test_scalar_dtype_is_part_of_the_key():
    x = data(1, (64, 48), dt.float64, NATIVE)
    k32 = [op("add", [x, op("cast", [const(1.5, dt.float32, NATIVE)], dt.float64)], dt.float64)]
    k64 = [op("add", [x, const(1.5, dt.float64, NATIVE)], dt.float64)]
    assert spec_of(k32) != spec_of(k64)


def test_contiguous_shapes_of_one_rank_share_a_key():
    """Dims that every leaf walks contiguously merge: a (61, 7919) and a (7919 * 61,)
    contiguous add are one kernel."""
    assert spec_of(_binary(shape=(61, 7919))) == spec_of(_binary(shape=(61 * 7919,)))


def test_reduction_and_scan_keys_ignore_sizes():
    """The keys that the reduction and scan drivers build from a fused input."""
    keys = []
    for v in (0, 1):
        fi = fusion.FusedInput(c.float_chain(v, NATIVE)[0])
        keys.append((("reduce", rd.ReduceSpec("sum", "f32", 256, False, fi.spec, None, True)),
                     ("scan", sc.ScanSpec("sum", "f32", fi.spec, True, "tile")),
                     rd.input_words(fi.spec, fi.params)))
    assert keys[0] == keys[1]
    other = fusion.FusedInput(c.int64_mixed(0, NATIVE)[0])
    assert rd.ReduceSpec("sum", "f32", 256, False, other.spec, None, True) != keys[0][0][1]


def test_spec_text_holds_no_size():
    """The spec itself (what a cache-miss log prints) names no size or scalar."""
    text = repr(spec_of(c.float_chain(1, NATIVE)))
    for value in (*c.SIZES[1], c.SCALARS[1]):
        assert str(value) not in text
