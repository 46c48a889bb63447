"""The WGSL lowering of every elementwise op, by compute tag (see ``types``).

``lower(op, arg, src_tags, out_tag)`` returns one WGSL expression over ``{a}``, ``{b}``,
``{c}`` (the operands). A template is looked up under the out tag (or the first
operand's tag), then its family, then ``any``. Helper functions the expression calls
(``f64_exp``, ``ei64_mul``, ...) come from the snippet libraries and are found by name.
"""
from __future__ import annotations

import re

import importlib
from .types import WGSL_TYPE

FAMILIES = {
    "b": ("b",),
    "i32": ("sint", "int", "num"), "i64": ("sint", "int", "num"),
    "u32": ("uint", "int", "num"), "u64": ("uint", "int", "num"),
    "ei64": ("eint",), "eu64": ("eint",),
    "f32": ("float", "num"), "f64": ("float", "num"),
    "c64": ("cplx",), "c128": ("cplx",),
}

ZERO = {"b": "false", "i32": "0i", "u32": "0u", "i64": "0li", "u64": "0lu", "ei64": "vec2<u32>(0u)",
        "eu64": "vec2<u32>(0u)", "f32": "0.0f", "f64": "f64(0.0)", "c64": "vec2<f32>(0.0f)",
        "c128": "vec2<f64>(f64(0.0))"}
ONE = {"b": "true", "i32": "1i", "u32": "1u", "i64": "1li", "u64": "1lu", "ei64": "vec2<u32>(1u, 0u)",
       "eu64": "vec2<u32>(1u, 0u)", "f32": "1.0f", "f64": "f64(1.0)", "c64": "vec2<f32>(1.0f, 0.0f)",
       "c128": "vec2<f64>(f64(1.0), f64(0.0))"}

_CMP = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}
_EMU_CMP = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge"}

# Functions whose float and complex lowering is the library function of the same name.
_LIBRARY_UNARY = (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
    "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh",
)

TABLE: dict[str, dict[str, str]] = {
    "add": {"num": "({a} + {b})", "cplx": "({a} + {b})", "eint": "{T}_add({a}, {b})", "b": "({a} || {b})"},
    "subtract": {"num": "({a} - {b})", "cplx": "({a} - {b})", "eint": "{T}_sub({a}, {b})"},
    "multiply": {"num": "({a} * {b})", "cplx": "{T}_multiply({a}, {b})", "eint": "{T}_mul({a}, {b})",
                 "b": "({a} && {b})"},
    "divide": {"float": "{T}_divide({a}, {b})", "cplx": "{T}_divide({a}, {b})"},
    # float32 sign flips on the bits: a flushing device's negation would zero subnormals
    "negative": {"sint": "(-{a})", "float": "(-{a})", "cplx": "(-{a})", "uint": "({Z} - {a})",
                 "eint": "{T}_neg({a})", "f32": "bitcast<f32>(bitcast<u32>({a}) ^ 0x80000000u)",
                 "c64": "bitcast<vec2<f32>>(bitcast<vec2<u32>>({a}) ^ vec2<u32>(0x80000000u))"},
    "abs": {"sint": "{T}_abs({a})", "eint": "{T}_abs({a})", "uint": "{a}", "float": "{T}_abs({a})",
            "cplx": "{T}_abs({a})"},
    "square": {"num": "({a} * {a})", "eint": "{T}_mul({a}, {a})", "cplx": "{T}_square({a})"},
    "reciprocal": {"float": "{T}_reciprocal({a})", "cplx": "{T}_reciprocal({a})"},
    "floor": {"float": "{T}_floor({a})", "any": "{a}"},
    "ceil": {"float": "{T}_ceil({a})", "any": "{a}"},
    "trunc": {"float": "{T}_trunc({a})", "any": "{a}"},
    "round": {"float": "{T}_round({a})", "cplx": "{T}_round({a})", "any": "{a}"},
    "sign": {"float": "{T}_sign({a})", "cplx": "{T}_sign({a})", "sint": "{T}_sign({a})",
             "eint": "{T}_sign({a})", "uint": "select({Z}, {O}, {a} != {Z})"},
    "signbit": {"float": "{T}_signbit({a})"},
    "isnan": {"float": "{T}_isnan({a})", "cplx": "{T}_isnan({a})", "any": "false"},
    "isinf": {"float": "{T}_isinf({a})", "cplx": "{T}_isinf({a})", "any": "false"},
    "isfinite": {"float": "{T}_isfinite({a})", "cplx": "{T}_isfinite({a})", "any": "true"},
    "atan2": {"float": "{T}_atan2({a}, {b})"},
    "hypot": {"float": "{T}_hypot({a}, {b})"},
    "logaddexp": {"float": "{T}_logaddexp({a}, {b})"},
    "copysign": {"float": "{T}_copysign({a}, {b})"},
    "nextafter": {"float": "{T}_nextafter({a}, {b})"},
    "floor_divide": {"float": "{T}_floor_divide({a}, {b})", "int": "{T}_floor_divide({a}, {b})",
                     "eint": "{T}_floor_divide({a}, {b})"},
    "remainder": {"float": "{T}_remainder({a}, {b})", "int": "{T}_remainder({a}, {b})",
                  "eint": "{T}_remainder({a}, {b})"},
    "pow": {"float": "{T}_pow({a}, {b})", "int": "{T}_pow({a}, {b})", "eint": "{T}_pow({a}, {b})",
            "cplx": "{T}_pow({a}, {b})"},
    "maximum": {"float": "{T}_maximum({a}, {b})", "int": "max({a}, {b})", "eint": "{T}_maximum({a}, {b})"},
    "minimum": {"float": "{T}_minimum({a}, {b})", "int": "min({a}, {b})", "eint": "{T}_minimum({a}, {b})"},
    "clip": {"float": "{T}_minimum({T}_maximum({a}, {b}), {c})", "int": "min(max({a}, {b}), {c})",
             "eint": "{T}_minimum({T}_maximum({a}, {b}), {c})"},
    "logical_and": {"b": "({a} && {b})"},
    "logical_or": {"b": "({a} || {b})"},
    "logical_xor": {"b": "({a} != {b})"},
    "logical_not": {"b": "(!{a})"},
    "bitwise_and": {"b": "({a} && {b})", "any": "({a} & {b})"},
    "bitwise_or": {"b": "({a} || {b})", "any": "({a} | {b})"},
    "bitwise_xor": {"b": "({a} != {b})", "any": "({a} ^ {b})"},
    "bitwise_invert": {"b": "(!{a})", "any": "(~{a})"},
    "bitwise_left_shift": {"int": "{T}_bitwise_left_shift({a}, {b})", "eint": "{T}_bitwise_left_shift({a}, {b})"},
    "bitwise_right_shift": {"int": "{T}_bitwise_right_shift({a}, {b})", "eint": "{T}_bitwise_right_shift({a}, {b})"},
    "real": {"cplx": "{a}.x"},
    "imag": {"cplx": "{a}.y"},
    "conj": {"cplx": "vec2({a}.x, -{a}.y)", "c64": "vec2({a}.x, bitcast<f32>(bitcast<u32>({a}.y) ^ 0x80000000u))",
             "any": "{a}"},
    "where": {"any": "select({c}, {b}, {a})"},
    "copy": {"any": "{a}"},
}
for _name in _LIBRARY_UNARY:
    TABLE[_name] = {"float": "{T}_" + _name + "({a})", "cplx": "{T}_" + _name + "({a})"}
# Float comparisons are library functions (f32: on the bits, see realmath's f32_key).
_FLOAT_CMP = {"equal": "{T}_equal({a}, {b})", "not_equal": "(!{T}_equal({a}, {b}))",
              "less": "{T}_less({a}, {b})", "less_equal": "{T}_less_equal({a}, {b})",
              "greater": "{T}_less({b}, {a})", "greater_equal": "{T}_less_equal({b}, {a})"}
for _name, _sym in _CMP.items():
    if _name == "not_equal":  # '!=' may compile to an ordered compare; NaN != x must be true
        TABLE[_name] = {"num": "(!({a} == {b}))", "b": "({a} != {b})", "cplx": "(!all({a} == {b}))",
                        "c64": "(!(f32_equal({a}.x, {b}.x) && f32_equal({a}.y, {b}.y)))",
                        "eint": "{S}_ne({a}, {b})"}
    elif _name == "equal":
        TABLE[_name] = {"num": "({a} == {b})", "b": "({a} == {b})", "cplx": "all({a} == {b})",
                        "c64": "(f32_equal({a}.x, {b}.x) && f32_equal({a}.y, {b}.y))",
                        "eint": "{S}_eq({a}, {b})"}
    else:
        TABLE[_name] = {"num": "({a} " + _sym + " {b})", "eint": "{S}_" + _EMU_CMP[_name] + "({a}, {b})"}
    TABLE[_name]["float"] = _FLOAT_CMP[_name]

from .specialmath import TABLE as _SPECIAL_TABLE  # noqa: E402 - wgarray.special's ops

TABLE.update(_SPECIAL_TABLE)


def _library() -> dict:
    lib = {}
    for name in ("realmath", "intmath", "complexmath", "specialmath"):
        try:  # TODO(lead): drop the fallback once all three libraries have landed
            lib.update(importlib.import_module(f"{__package__}.{name}").LIBRARY)
        except ImportError:
            pass
    return lib


LIBRARY = _library()
_CALL = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]+)\s*\(")


class LoweringError(TypeError):
    pass


def _lookup(op: str, t: str) -> str:
    table = TABLE[op]
    for key in (t,) + FAMILIES[t] + ("any",):
        if key in table:
            return table[key]
    raise LoweringError(f"{op} has no WGSL lowering for {t}")


def lower(op: str, arg, src_tags: tuple[str, ...], out_tag: str) -> str:
    """The WGSL expression template of one op (operands as {a}, {b}, {c})."""
    if op == "cast":
        return cast(src_tags[0], out_tag)
    # Ops whose result type differs from their operands' are lowered by operand type.
    by_src = op in _CMP or op in ("isnan", "isinf", "isfinite", "signbit", "abs", "real", "imag", "copy")
    t = src_tags[-1] if op == "where" else (src_tags[0] if by_src else out_tag)
    template = _lookup(op, t)
    real = {"c64": "f32", "c128": "f64"}.get(t, t)
    return (template.replace("{T}", t).replace("{S}", t).replace("{Z}", ZERO[t]).replace("{O}", ONE[t])
            .replace("{R}", real))


def cast(src: str, dst: str) -> str:
    """Conversion between compute tags, as NumPy's ``astype`` does it."""
    if src == dst:
        return "{a}"
    if src == "b":
        return f"select({ZERO[dst]}, {ONE[dst]}, {{a}})"
    if dst == "b":
        if src in ("ei64", "eu64"):
            return "any({a} != vec2<u32>(0u))"
        # float32 truth on the bits: nonzero (NaN and subnormals included) is true
        if src == "f32":
            return "((bitcast<u32>({a}) & 0x7fffffffu) != 0u)"
        if src == "c64":
            return "any((bitcast<vec2<u32>>({a}) & vec2<u32>(0x7fffffffu)) != vec2<u32>(0u))"
        return f"(!all({{a}} == {ZERO[src]}))" if src in ("c64", "c128") else f"(!({{a}} == {ZERO[src]}))"
    if src in ("c64", "c128"):
        if dst in ("c64", "c128"):
            if src != dst:  # per part, so that subnormal parts convert exactly
                part = cast(src.replace("c64", "f32").replace("c128", "f64"), "f64" if dst == "c128" else "f32")
                return f"{WGSL_TYPE[dst]}({part.replace('{a}', '{a}.x')}, {part.replace('{a}', '{a}.y')})"
            return f"{WGSL_TYPE[dst]}({{a}})"
        return cast(src.replace("c64", "f32").replace("c128", "f64"), dst).replace("{a}", "{a}.x")
    if dst in ("c64", "c128"):
        real = "f32" if dst == "c64" else "f64"
        inner = cast(src, real)
        return f"{WGSL_TYPE[dst]}({inner}, {ZERO[real]})"
    if src in ("ei64", "eu64") and dst in ("ei64", "eu64"):
        return "{a}"
    if src in ("ei64", "eu64"):
        if dst in ("i32", "u32"):
            return f"{dst}({{a}}.x)"
        return f"{src}_to_{dst}({{a}})"
    if dst in ("ei64", "eu64"):
        return f"{dst}_from_{src}({{a}})"
    if dst in ("i64", "u64") and src in ("f32", "f64"):
        return f"{dst}_from_{src}({{a}})"
    if (src, dst) in (("f32", "f64"), ("f64", "f32")):
        return f"{src}_to_{dst}({{a}})"
    if src in ("i64", "u64") and dst in ("f32", "f64"):
        return f"{src}_to_{dst}({{a}})"
    if src in ("i32", "u32") and dst in ("i64", "u64") and src[0] != dst[0]:
        # naga extends a 32-bit int by the destination's signedness; widen by the source's
        return f"{WGSL_TYPE[dst]}({'i64' if src == 'i32' else 'u64'}({{a}}))"
    return f"{WGSL_TYPE[dst]}({{a}})"


def helpers_used(code: str) -> list[str]:
    """Names of library snippets that ``code`` calls."""
    return [m for m in dict.fromkeys(_CALL.findall(code)) if m in LIBRARY]
