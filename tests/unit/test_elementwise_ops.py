"""Every elementwise op of the lowering table, for every compute tag it has a lowering
for, renders a well-formed kernel whose helper library closes (each function called is
defined once), without a device. (That the texts are the same in every process is
checked with the other kernels, test_renderers.py.)"""
from __future__ import annotations

import pytest

from wgarray._wgsl import ops
from wgarray._wgsl import types as ty

from . import catalogue as c
from .wgsl_check import problems

KERNELS = c.op_kernels()


@pytest.mark.parametrize("name", sorted(ops.TABLE))
def test_op_renders_for_every_tag_it_lowers(name):
    mine = {key: render for key, render in KERNELS.items() if key.split("/")[0] == name}
    assert mine, f"{name}: no compute tag has a lowering"
    wrong = [f"{key}: {bad}" for key, render in mine.items() if (bad := problems(render()))]
    assert not wrong, "; ".join(wrong)


def test_every_op_renders_for_float32():
    """float32 is every device's: each op lowers for it but the integer and bool ones,
    and real/imag (of a real array the namespace takes the array or zeros itself)."""
    without = {name for name in ops.TABLE if c.lowering(name, "f32") is None}
    assert without <= {name for name in ops.TABLE if name.startswith(("bitwise_", "logical_"))} | {"real", "imag"}


def test_the_tags_are_the_planners():
    """The stand-ins give each dtype the compute tag this test names it by."""
    for tag, (dname, device) in c.OP_TAGS.items():
        assert ty.tag(dname, device.has_int64) == tag
