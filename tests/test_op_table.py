"""The op table (wgarray/_ops.py) is complete and agrees with what is built from it.

Device-free: these check text and tables only (every dtype, whatever this device offers).
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import wgarray as xp
from wgarray import _dtypes as dt
from wgarray._ops import EXACTNESS, FUNCTIONS, HANDWRITTEN, OPS, REDUCTIONS, RESULT_RULES
from wgarray._wgsl import ops as lowering
from wgarray._wgsl import reduce as rd
from wgarray._wgsl import types as ty

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _operand_dtype(op, d):
    """The dtype the op's operands have for an input of dtype ``d`` (as _core promotes)."""
    if op.result == "float" and d.kind in "iu":
        return dt.float32
    if op.truth:
        return dt.bool
    return d


def _result_dtype(op, d):
    return {"same": d, "float": d, "bool": dt.bool, "real": dt.real_of(d) if d.kind == "c" else d}[op.result]


def _lowered_cases():
    for name, op in FUNCTIONS.items():
        for d in dt.CATEGORIES[op.category]:
            yield name, op, d
        if op.result == "float":
            for d in dt.INTEGER:
                yield name, op, d
        if op.truth:
            for d in dt.NUMERIC:
                yield name, op, d


@pytest.mark.parametrize("native", [True, False], ids=["int64", "emulated-int64"])
def test_every_public_op_lowers_for_every_dtype_it_takes(native):
    missing = []
    for name, op, d in _lowered_cases():
        src = _operand_dtype(op, d)
        if src.kind in op.passthrough or src.kind in op.zeros_on:
            continue  # the namespace returns the input, or zeros, without a node
        src_tag, out_tag = ty.tag(src.name, native), ty.tag(_result_dtype(op, src).name, native)
        try:
            text = lowering.lower(name, None, (src_tag,) * op.arity, out_tag)
        except lowering.LoweringError:
            missing.append(f"{name}({src})")
            continue
        # every helper the expression calls exists, and only its operands are named
        for helper in lowering._CALL.findall(text):
            assert helper in lowering.LIBRARY, (name, src, helper)
        assert set(_PLACEHOLDER.findall(text)) <= set("abc"[:op.arity]), (name, src, text)
    assert not missing, missing


def test_generated_functions_are_the_table():
    for name, op in FUNCTIONS.items():
        fn = getattr(xp, name)
        assert tuple(inspect.signature(fn).parameters) == op.params, name
        assert fn.__doc__.splitlines()[0] == op.summary, name
        assert f"Input: {op.category} dtypes. Result: {RESULT_RULES[op.result]}." in fn.__doc__, name
    for name in HANDWRITTEN:
        assert callable(getattr(xp, name))
    assert set(FUNCTIONS) | set(HANDWRITTEN) <= set(xp.__all__)


def test_declarations_are_consistent():
    for name, op in OPS.items():
        assert op.category in dt.CATEGORIES and op.result in RESULT_RULES and op.exact in EXACTNESS, name
        assert not op.public or callable(getattr(np, op.numpy)), name
        for kinds in (op.passthrough, op.zeros_on):
            assert set(kinds) <= set("biufc"), name
        for cheaper in op.scalar_rhs.values():
            assert cheaper in OPS, name
        if op.lower_by is not None:
            assert op.lower_by < max(op.arity, 1) or op.lower_by == -1, name


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_reduction_combine_is_its_op_for_every_accumulator(kind):
    op = REDUCTIONS[kind]
    tags = ("i32", "u32", "i64", "u64", "ei64", "eu64", "f32", "f64")
    for t in tags + (("c64", "c128") if kind in ("sum", "prod") else ()):
        assert rd.combine_expr(kind, t, "p", "q") == lowering.lower(op.name, None, (t, t), t).format(a="p", b="q")
    assert op.reduction_identity is None or op.reduction_identity in (0, 1)
