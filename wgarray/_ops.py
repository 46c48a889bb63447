"""Every elementwise op, declared once.

One ``Op`` per op says all there is to know about it: the public function's operands,
dtype category, result rule and summary; its WGSL lowering per compute tag or family;
the shortcuts the namespace takes for it; the reduction it is the combine of; and how
the tests compare it with NumPy. Everything else derives from this table:

- ``codegen/generate.py`` writes ``wgarray/_elementwise_functions.py`` (the wrappers)
  and ``docs/api-coverage.md`` from it;
- ``_core.elementwise_function`` takes its shortcuts from it (``shortcuts``);
- ``_wgsl/ops.py`` lowers an op from its templates (``Op.lowering``);
- reductions take their combine and the value of an empty reduction from ``REDUCTIONS``;
- the tests take their op lists, NumPy references and exactness classes from it.

This module imports nothing of the package, so every layer may read it. The ops of
``wgarray.special`` are declared with their library in ``_wgsl/specialmath.py``;
``cast`` is lowered by ``_wgsl/ops.cast`` (a conversion between any two dtypes).

WGSL templates: ``{a}``, ``{b}``, ``{c}`` are the operands, ``{T}`` the compute tag
(``f32``, ``ei64``, ``c64``, ...; see ``_wgsl/types``), ``{Z}`` and ``{O}`` the tag's
zero and one. A template is looked up under the tag, then the tag's families
(``_wgsl/ops.FAMILIES``: ``sint``, ``int``, ``num``, ``float``, ``cplx``, ``eint``,
``b``), then ``any``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

UNARY = ("x",)
BINARY = ("x1", "x2")

# How an op's result dtype follows from its (promoted) operands.
RESULT_RULES = {
    "same": "the promoted dtype of the inputs",
    "bool": "a bool array",
    "real": "a real array (the component dtype for complex input)",
    "float": "the floating dtype of the input (integer input: the default floating dtype)",
}

# How exactly an op's real floating result matches NumPy's (the tests' classes).
EXACTNESS = {
    "bits": "exact on the bits, also on a device that flushes float32 subnormals",
    "rounded": "correctly rounded: NumPy's result in the argument's own dtype",
    "ulp": "within Op.ulp units in the last place of a correctly rounded result",
}


@dataclass(frozen=True, eq=False)  # one per name: compared by identity
class Op:
    name: str
    # The public function: positional operands (empty for ops only the package builds),
    # the dtype category the standard allows (a key of _dtypes.CATEGORIES), the result
    # rule (a key of RESULT_RULES) and the docstring's first line.
    params: tuple[str, ...] = ()
    category: str = "any"
    result: str = "same"
    summary: str = ""
    # WGSL: templates by tag or family, and the families whose lowering is the library
    # function ``{T}_<name>`` of the operands (realmath, intmath, complexmath).
    wgsl: dict = field(default_factory=dict)
    library: tuple[str, ...] = ()
    # The operand whose tag selects the template (None: the result's); ops whose result
    # type differs from their operands' are lowered by an operand's.
    lower_by: int | None = None
    # Namespace shortcuts, exact as NumPy's: dtype kinds on which the result is the input
    # itself (no node) or zeros of its shape; numbers taken by their truth (nonzero, NaN
    # included), as NumPy and PyTorch do; a Python scalar second operand that turns the
    # op into a cheaper one (x ** 2 is x * x).
    passthrough: str = ""
    zeros_on: str = ""
    truth: bool = False
    scalar_rhs: dict = field(default_factory=dict)
    # Written by hand (wgarray/_elementwise_extra.py), not generated.
    handwritten: bool = False
    # The reduction this op is the combine of, and the value of an empty one (None: an
    # empty reduction is an error).
    reduction: str | None = None
    reduction_identity: int | None = None
    # The tests: NumPy's name for it (default: the same), the exactness class of real
    # floating results (a key of EXACTNESS) and the ulp bound (float32, float64) of the
    # "ulp" class, the bound on a complex result's normwise relative error in eps (None:
    # exact), and whether the sign of a zero result is left open by the standard.
    numpy: str = ""
    exact: str = "rounded"
    ulp: tuple[int, int] = (2, 4)
    complex_eps: int | None = None
    zero_sign_free: bool = False
    # The templates by tag or family: ``wgsl`` over the library calls.
    lowering: dict = field(init=False, repr=False)

    def __post_init__(self):
        args = ", ".join("{" + "abc"[i] + "}" for i in range(max(len(self.params), 1)))
        lowering = {fam: f"{{T}}_{self.name}({args})" for fam in self.library}
        lowering.update(self.wgsl)
        object.__setattr__(self, "lowering", lowering)
        if not self.numpy:
            object.__setattr__(self, "numpy", self.name)
        if self.result not in RESULT_RULES or self.exact not in EXACTNESS:
            raise ValueError(f"Op {self.name}: expected a result rule of {sorted(RESULT_RULES)} and an exactness "
                             f"of {sorted(EXACTNESS)}, got {self.result!r} and {self.exact!r}")

    @property
    def public(self) -> bool:
        return bool(self.params)

    @property
    def arity(self) -> int:
        return len(self.params)


def _unary(name, category, result, summary, **kw) -> Op:
    return Op(name, UNARY, category, result, summary, **kw)


def _binary(name, category, result, summary, **kw) -> Op:
    return Op(name, BINARY, category, result, summary, **kw)


_FC = ("float", "cplx")  # a library function for real and complex floats
_TRUTH = "numbers count as their truth (nonzero, NaN too), as in NumPy."
_NEG32 = "bitcast<f32>(bitcast<u32>({a}) ^ 0x80000000u)"  # float32 sign flip on the bits
_C64_EQ = "(f32_equal({a}.x, {b}.x) && f32_equal({a}.y, {b}.y))"


def _transcendental(name, summary, complex_eps=8, **kw) -> Op:
    return _unary(name, "floating-point", "float", summary, library=_FC, exact="ulp", complex_eps=complex_eps, **kw)


def _compare(name, symbol, emulated, float_template, summary, category="real-valued", **wgsl) -> Op:
    templates = {"num": f"({{a}} {symbol} {{b}})", "eint": f"{{T}}_{emulated}({{a}}, {{b}})",
                 "float": float_template, **wgsl}
    return _binary(name, category, "bool", summary, wgsl=templates, lower_by=0, exact="bits")


_DECLARED = [
    # ---------------------------------------------------------------- arithmetic
    _binary("add", "numeric", "same", "Sum of x1 and x2.",
            wgsl={"num": "({a} + {b})", "cplx": "({a} + {b})", "eint": "{T}_add({a}, {b})", "b": "({a} || {b})"},
            reduction="sum", reduction_identity=0),
    _binary("subtract", "numeric", "same", "Difference x1 - x2.",
            wgsl={"num": "({a} - {b})", "cplx": "({a} - {b})", "eint": "{T}_sub({a}, {b})"}),
    _binary("multiply", "numeric", "same", "Product of x1 and x2.",
            wgsl={"num": "({a} * {b})", "cplx": "{T}_multiply({a}, {b})", "eint": "{T}_mul({a}, {b})",
                  "b": "({a} && {b})"},
            reduction="prod", reduction_identity=1, complex_eps=4),
    _binary("divide", "floating-point", "float", "True division x1 / x2.", library=_FC, complex_eps=4),
    _binary("floor_divide", "real-valued", "same", "Floor of x1 / x2 (Python's //).",
            library=("float", "int", "eint")),
    _binary("remainder", "real-valued", "same", "Remainder of floor division; the sign of x2 (Python's %).",
            library=("float", "int", "eint")),
    _binary("pow", "numeric", "same", "x1 raised to x2.", library=("float", "int", "eint", "cplx"),
            scalar_rhs={2: "square", 1: "copy"}, numpy="power", exact="ulp", ulp=(4, 8), complex_eps=64),
    # float32 sign flips on the bits: a flushing device's negation would zero subnormals
    _unary("negative", "numeric", "same", "Numerical negative.",
           wgsl={"sint": "(-{a})", "float": "(-{a})", "cplx": "(-{a})", "uint": "({Z} - {a})",
                 "eint": "{T}_neg({a})", "f32": _NEG32,
                 "c64": "bitcast<vec2<f32>>(bitcast<vec2<u32>>({a}) ^ vec2<u32>(0x80000000u))"},
           exact="bits"),
    _unary("positive", "numeric", "same", "Numerical positive (the values unchanged).",
           passthrough="iufc", exact="bits"),
    _unary("abs", "numeric", "real", "Absolute value (magnitude for complex input).",
           library=("sint", "eint", "float", "cplx"), wgsl={"uint": "{a}"}, lower_by=0, exact="bits",
           complex_eps=2),
    _unary("square", "numeric", "same", "x * x.",
           wgsl={"num": "({a} * {a})", "eint": "{T}_mul({a}, {a})", "cplx": "{T}_square({a})"}, complex_eps=4),
    _unary("reciprocal", "floating-point", "float", "1 / x.", library=_FC, complex_eps=4),
    _unary("sqrt", "floating-point", "float", "Principal square root.", library=_FC, complex_eps=4),
    _unary("sign", "numeric", "same", "Sign of x: -1, 0 or 1 (x / |x| for complex).",
           library=("float", "cplx", "sint", "eint"), wgsl={"uint": "select({Z}, {O}, {a} != {Z})"},
           exact="bits", complex_eps=4, zero_sign_free=True),
    # ---------------------------------------------------------------- rounding
    _unary("floor", "real-valued", "same", "Largest integer not greater than x.",
           library=("float",), wgsl={"any": "{a}"}, passthrough="iu"),
    _unary("ceil", "real-valued", "same", "Smallest integer not less than x.",
           library=("float",), wgsl={"any": "{a}"}, passthrough="iu"),
    _unary("trunc", "real-valued", "same", "Integer part of x, rounded toward zero.",
           library=("float",), wgsl={"any": "{a}"}, passthrough="iu"),
    _unary("round", "numeric", "same", "Round to the nearest integer, halves to even.",
           library=_FC, wgsl={"any": "{a}"}, passthrough="iu"),
    # ---------------------------------------------------------------- classification
    _unary("isnan", "numeric", "bool", "Whether x is NaN.", library=_FC, wgsl={"any": "false"}, lower_by=0,
           exact="bits"),
    _unary("isinf", "numeric", "bool", "Whether x is positive or negative infinity.", library=_FC,
           wgsl={"any": "false"}, lower_by=0, exact="bits"),
    _unary("isfinite", "numeric", "bool", "Whether x is finite (neither infinite nor NaN).", library=_FC,
           wgsl={"any": "true"}, lower_by=0, exact="bits"),
    _unary("signbit", "real floating-point", "bool", "Whether the sign bit of x is set.",
           library=("float",), lower_by=0, exact="bits"),
    # ---------------------------------------------------------------- comparison
    # Float comparisons are library functions (f32: on the bits, see realmath's f32_key).
    _compare("equal", "==", "eq", "{T}_equal({a}, {b})", "Whether x1 == x2.", category="any",
             b="({a} == {b})", cplx="all({a} == {b})", c64=_C64_EQ),
    # '!=' may compile to an ordered compare; NaN != x must be true
    _compare("not_equal", "!=", "ne", "(!{T}_equal({a}, {b}))", "Whether x1 != x2.", category="any",
             num="(!({a} == {b}))", b="({a} != {b})", cplx="(!all({a} == {b}))", c64=f"(!{_C64_EQ})"),
    _compare("less", "<", "lt", "{T}_less({a}, {b})", "Whether x1 < x2."),
    _compare("less_equal", "<=", "le", "{T}_less_equal({a}, {b})", "Whether x1 <= x2."),
    _compare("greater", ">", "gt", "{T}_less({b}, {a})", "Whether x1 > x2."),
    _compare("greater_equal", ">=", "ge", "{T}_less_equal({b}, {a})", "Whether x1 >= x2."),
    _binary("maximum", "real-valued", "same", "Larger of x1 and x2 (NaN if either is NaN).",
            library=("float", "eint"), wgsl={"int": "max({a}, {b})"}, reduction="max", exact="bits",
            zero_sign_free=True),
    _binary("minimum", "real-valued", "same", "Smaller of x1 and x2 (NaN if either is NaN).",
            library=("float", "eint"), wgsl={"int": "min({a}, {b})"}, reduction="min", exact="bits",
            zero_sign_free=True),
    # ---------------------------------------------------------------- real floating
    _binary("atan2", "real floating-point", "float", "Angle of the point (x2, x1), in radians, in [-pi, pi].",
            library=("float",), numpy="arctan2", exact="ulp"),
    _binary("hypot", "real floating-point", "float", "sqrt(x1**2 + x2**2) without undue overflow or underflow.",
            library=("float",), exact="ulp"),
    # m + log1p(exp(-d)) cancels where the result is much smaller than m: a wider bound
    _binary("logaddexp", "real floating-point", "float", "log(exp(x1) + exp(x2)) without overflow.",
            library=("float",), exact="ulp", ulp=(8, 8)),
    _binary("copysign", "real floating-point", "float", "Magnitude of x1 with the sign of x2.",
            library=("float",), exact="bits"),
    _binary("nextafter", "real floating-point", "float", "Next representable value after x1 toward x2.",
            library=("float",), exact="bits"),
    # ---------------------------------------------------------------- transcendental
    _transcendental("acos", "Inverse cosine, in radians.", numpy="arccos"),
    _transcendental("acosh", "Inverse hyperbolic cosine.", numpy="arccosh"),
    _transcendental("asin", "Inverse sine, in radians.", numpy="arcsin"),
    _transcendental("asinh", "Inverse hyperbolic sine.", numpy="arcsinh"),
    _transcendental("atan", "Inverse tangent, in radians.", numpy="arctan"),
    _transcendental("atanh", "Inverse hyperbolic tangent.", numpy="arctanh"),
    _transcendental("cos", "Cosine of x, in radians."),
    _transcendental("cosh", "Hyperbolic cosine."),
    _transcendental("exp", "e raised to x.", complex_eps=6),
    _transcendental("expm1", "exp(x) - 1, accurate for small x."),
    _transcendental("log", "Natural logarithm.", complex_eps=6),
    _transcendental("log1p", "log(1 + x), accurate for small x."),
    _transcendental("log2", "Base-2 logarithm."),
    _transcendental("log10", "Base-10 logarithm."),
    _transcendental("sin", "Sine of x, in radians."),
    _transcendental("sinh", "Hyperbolic sine."),
    _transcendental("tan", "Tangent of x, in radians."),
    _transcendental("tanh", "Hyperbolic tangent."),
    # ---------------------------------------------------------------- complex parts
    _unary("real", "numeric", "real", "Real component (the input itself for real dtypes).",
           wgsl={"cplx": "{a}.x"}, lower_by=0, passthrough="iuf"),
    _unary("imag", "numeric", "real", "Imaginary component (zero for real dtypes).",
           wgsl={"cplx": "{a}.y"}, lower_by=0, zeros_on="iuf"),
    _unary("conj", "numeric", "same", "Complex conjugate (the input itself for real dtypes).",
           wgsl={"cplx": "vec2({a}.x, -{a}.y)",
                 "c64": "vec2({a}.x, bitcast<f32>(bitcast<u32>({a}.y) ^ 0x80000000u))", "any": "{a}"},
           passthrough="iuf"),
    # ---------------------------------------------------------------- logical and bitwise
    _binary("logical_and", "bool", "bool", "Logical AND; " + _TRUTH, wgsl={"b": "({a} && {b})"}, truth=True),
    _binary("logical_or", "bool", "bool", "Logical OR; " + _TRUTH, wgsl={"b": "({a} || {b})"}, truth=True),
    _binary("logical_xor", "bool", "bool", "Logical exclusive OR; " + _TRUTH, wgsl={"b": "({a} != {b})"},
            truth=True),
    _unary("logical_not", "bool", "bool", "Logical NOT; " + _TRUTH, wgsl={"b": "(!{a})"}, truth=True),
    _binary("bitwise_and", "integer or boolean", "same", "Bitwise AND.",
            wgsl={"b": "({a} && {b})", "any": "({a} & {b})"}),
    _binary("bitwise_or", "integer or boolean", "same", "Bitwise OR.",
            wgsl={"b": "({a} || {b})", "any": "({a} | {b})"}),
    _binary("bitwise_xor", "integer or boolean", "same", "Bitwise exclusive OR.",
            wgsl={"b": "({a} != {b})", "any": "({a} ^ {b})"}),
    _unary("bitwise_invert", "integer or boolean", "same", "Bitwise NOT.",
           wgsl={"b": "(!{a})", "any": "(~{a})"}, numpy="invert"),
    _binary("bitwise_left_shift", "integer", "same", "Shift the bits of x1 left by x2 (zeros shifted in).",
            library=("int", "eint"), numpy="left_shift"),
    _binary("bitwise_right_shift", "integer", "same", "Shift the bits of x1 right by x2 (arithmetic for signed).",
            library=("int", "eint"), numpy="right_shift"),
    # ---------------------------------------------------------------- written by hand
    # clip has optional bounds; it is maximum and minimum nodes (wgarray/_elementwise_extra.py).
    Op("clip", ("x",), "real-valued", "same", handwritten=True),
    # ---------------------------------------------------------------- internal
    Op("where", wgsl={"any": "select({c}, {b}, {a})"}, lower_by=-1),
    Op("copy", wgsl={"any": "{a}"}, lower_by=0),
]

OPS: dict[str, Op] = {op.name: op for op in _DECLARED}
if len(OPS) != len(_DECLARED):
    _names = [op.name for op in _DECLARED]
    raise ValueError("wgarray._ops: expected each op declared once, got "
                     + ", ".join(sorted({n for n in _names if _names.count(n) > 1})) + " twice")

# The generated public functions, by name (clip is written by hand).
FUNCTIONS: dict[str, Op] = {name: op for name, op in sorted(OPS.items()) if op.public and not op.handwritten}
HANDWRITTEN: dict[str, Op] = {name: op for name, op in OPS.items() if op.handwritten}

# Reduction kind ("sum", "prod", "max", "min") -> the op that combines two partials.
REDUCTIONS: dict[str, Op] = {op.reduction: op for op in _DECLARED if op.reduction}


def shortcuts() -> dict[str, Op]:
    """The public ops that ``_core.elementwise_function`` may not simply build a node for."""
    return {name: op for name, op in FUNCTIONS.items()
            if op.passthrough or op.zeros_on or op.truth or op.scalar_rhs}
