"""The standard's elementwise functions, declared once.

Each entry: name -> (parameters, input category, result rule, summary).
- parameters: the positional-only operands (``x`` or ``x1, x2``);
- category: the dtype category the standard allows (a key of ``wgarray._dtypes.CATEGORIES``);
- result rule: 'same' (the promoted dtype), 'bool', 'real' (a complex input's component
  dtype), 'float' (integer inputs are first converted to the default floating dtype);
- summary: the first line of the docstring (our words).

``codegen/generate.py`` turns this into ``wgarray/_elementwise_functions.py`` and the
coverage table in ``docs/api-coverage.md``.
"""

UNARY = ("x",)
BINARY = ("x1", "x2")

FUNCTIONS = {
    "abs": (UNARY, "numeric", "real", "Absolute value (magnitude for complex input)."),
    "acos": (UNARY, "floating-point", "float", "Inverse cosine, in radians."),
    "acosh": (UNARY, "floating-point", "float", "Inverse hyperbolic cosine."),
    "add": (BINARY, "numeric", "same", "Sum of x1 and x2."),
    "asin": (UNARY, "floating-point", "float", "Inverse sine, in radians."),
    "asinh": (UNARY, "floating-point", "float", "Inverse hyperbolic sine."),
    "atan": (UNARY, "floating-point", "float", "Inverse tangent, in radians."),
    "atan2": (BINARY, "real floating-point", "float", "Angle of the point (x2, x1), in radians, in [-pi, pi]."),
    "atanh": (UNARY, "floating-point", "float", "Inverse hyperbolic tangent."),
    "bitwise_and": (BINARY, "integer or boolean", "same", "Bitwise AND."),
    "bitwise_left_shift": (BINARY, "integer", "same", "Shift the bits of x1 left by x2 (zeros shifted in)."),
    "bitwise_invert": (UNARY, "integer or boolean", "same", "Bitwise NOT."),
    "bitwise_or": (BINARY, "integer or boolean", "same", "Bitwise OR."),
    "bitwise_right_shift": (BINARY, "integer", "same", "Shift the bits of x1 right by x2 (arithmetic for signed)."),
    "bitwise_xor": (BINARY, "integer or boolean", "same", "Bitwise exclusive OR."),
    "ceil": (UNARY, "real-valued", "same", "Smallest integer not less than x."),
    "conj": (UNARY, "numeric", "same", "Complex conjugate (the input itself for real dtypes)."),
    "copysign": (BINARY, "real floating-point", "float", "Magnitude of x1 with the sign of x2."),
    "cos": (UNARY, "floating-point", "float", "Cosine of x, in radians."),
    "cosh": (UNARY, "floating-point", "float", "Hyperbolic cosine."),
    "divide": (BINARY, "floating-point", "float", "True division x1 / x2."),
    "equal": (BINARY, "any", "bool", "Whether x1 == x2."),
    "exp": (UNARY, "floating-point", "float", "e raised to x."),
    "expm1": (UNARY, "floating-point", "float", "exp(x) - 1, accurate for small x."),
    "floor": (UNARY, "real-valued", "same", "Largest integer not greater than x."),
    "floor_divide": (BINARY, "real-valued", "same", "Floor of x1 / x2 (Python's //)."),
    "greater": (BINARY, "real-valued", "bool", "Whether x1 > x2."),
    "greater_equal": (BINARY, "real-valued", "bool", "Whether x1 >= x2."),
    "hypot": (BINARY, "real floating-point", "float", "sqrt(x1**2 + x2**2) without undue overflow or underflow."),
    "imag": (UNARY, "numeric", "real", "Imaginary component (zero for real dtypes)."),
    "isfinite": (UNARY, "numeric", "bool", "Whether x is finite (neither infinite nor NaN)."),
    "isinf": (UNARY, "numeric", "bool", "Whether x is positive or negative infinity."),
    "isnan": (UNARY, "numeric", "bool", "Whether x is NaN."),
    "less": (BINARY, "real-valued", "bool", "Whether x1 < x2."),
    "less_equal": (BINARY, "real-valued", "bool", "Whether x1 <= x2."),
    "log": (UNARY, "floating-point", "float", "Natural logarithm."),
    "log1p": (UNARY, "floating-point", "float", "log(1 + x), accurate for small x."),
    "log2": (UNARY, "floating-point", "float", "Base-2 logarithm."),
    "log10": (UNARY, "floating-point", "float", "Base-10 logarithm."),
    "logaddexp": (BINARY, "real floating-point", "float", "log(exp(x1) + exp(x2)) without overflow."),
    "logical_and": (BINARY, "bool", "bool", "Logical AND; numbers count as their truth (nonzero, NaN too), as in NumPy."),
    "logical_not": (UNARY, "bool", "bool", "Logical NOT; numbers count as their truth (nonzero, NaN too), as in NumPy."),
    "logical_or": (BINARY, "bool", "bool", "Logical OR; numbers count as their truth (nonzero, NaN too), as in NumPy."),
    "logical_xor": (BINARY, "bool", "bool", "Logical exclusive OR; numbers count as their truth (nonzero, NaN too), as in NumPy."),
    "maximum": (BINARY, "real-valued", "same", "Larger of x1 and x2 (NaN if either is NaN)."),
    "minimum": (BINARY, "real-valued", "same", "Smaller of x1 and x2 (NaN if either is NaN)."),
    "multiply": (BINARY, "numeric", "same", "Product of x1 and x2."),
    "negative": (UNARY, "numeric", "same", "Numerical negative."),
    "nextafter": (BINARY, "real floating-point", "float", "Next representable value after x1 toward x2."),
    "not_equal": (BINARY, "any", "bool", "Whether x1 != x2."),
    "positive": (UNARY, "numeric", "same", "Numerical positive (the values unchanged)."),
    "pow": (BINARY, "numeric", "same", "x1 raised to x2."),
    "real": (UNARY, "numeric", "real", "Real component (the input itself for real dtypes)."),
    "reciprocal": (UNARY, "floating-point", "float", "1 / x."),
    "remainder": (BINARY, "real-valued", "same", "Remainder of floor division; the sign of x2 (Python's %)."),
    "round": (UNARY, "numeric", "same", "Round to the nearest integer, halves to even."),
    "sign": (UNARY, "numeric", "same", "Sign of x: -1, 0 or 1 (x / |x| for complex)."),
    "signbit": (UNARY, "real floating-point", "bool", "Whether the sign bit of x is set."),
    "sin": (UNARY, "floating-point", "float", "Sine of x, in radians."),
    "sinh": (UNARY, "floating-point", "float", "Hyperbolic sine."),
    "square": (UNARY, "numeric", "same", "x * x."),
    "sqrt": (UNARY, "floating-point", "float", "Principal square root."),
    "subtract": (BINARY, "numeric", "same", "Difference x1 - x2."),
    "tan": (UNARY, "floating-point", "float", "Tangent of x, in radians."),
    "tanh": (UNARY, "floating-point", "float", "Hyperbolic tangent."),
    "trunc": (UNARY, "real-valued", "same", "Integer part of x, rounded toward zero."),
}

# clip has optional bounds and is written by hand in wgarray/_elementwise_extra.py.
HANDWRITTEN = ("clip",)
