"""``wgarray.special``: the special functions SciPy dispatches to (``xp.special.<name>``,
see ``scipy/special/_support_alternative_backends.py``), computed on the device.

With ``SCIPY_ARRAY_API=1``, ``scipy.special.erf(x)`` on a wgarray array finds
``wgarray.special.erf`` and no data moves between host and device. Functions with
their own algorithm (erf, gammaln, gammainc, betainc, i0, ...) are single WGSL ops
(``_wgsl/specialmath.py``); the others are compositions of namespace operations,
which the lazy graph fuses into the same one kernel. Integer arguments are converted
to the default floating dtype, as SciPy does; float32 stays float32.
Measured accuracy against SciPy: ``docs/special.md``.
"""
from __future__ import annotations

import math

from . import _core
from . import _dtypes as dt
from . import _elementwise_functions as ew
from ._graph import node as g
from ._array import Array
from ._data_type_functions import finfo as _finfo
from ._searching_functions import where

__all__ = [
    "bdtr", "bdtrc", "bdtri", "beta", "betainc", "betaincc", "betaincinv", "betaln",
    "binom", "boxcox", "boxcox1p", "cbrt", "chdtr", "chdtrc", "chdtri", "cosdg", "cosm1",
    "cotdg", "digamma", "ellipk", "ellipkm1", "entr", "erf", "erfc", "erfcx", "erfinv",
    "exp1", "exp10", "exp2", "expi", "expit", "expn", "exprel", "fdtr", "fdtrc", "fdtri",
    "gamma", "gammainc", "gammaincc", "gammainccinv", "gammaincinv", "gammaln", "gammasgn",
    "gdtr", "gdtrc", "huber", "hyp1f1", "i0", "i0e", "i1", "i1e", "inv_boxcox", "inv_boxcox1p", "j0",
    "j1", "k0", "k0e", "k1", "k1e", "kl_div", "log_expit", "log_ndtr", "loggamma", "logit", "lpmv",
    "multigammaln", "nbdtr", "nbdtrc", "nbdtri", "ndtr", "ndtri", "pdtr", "pdtrc", "pdtri",
    "poch", "polygamma", "pseudo_huber", "psi", "radian", "rel_entr", "rgamma", "sinc",
    "sindg", "spence", "stdtr", "stdtrit", "tandg", "xlog1py", "xlogy", "y0", "y1", "yn",
    "zeta", "zetac",
]

_FLOAT = "real floating-point"


def _op(name: str, *args, wide: bool = False) -> Array:
    """The device op ``name`` over ``args`` (arrays or scalars), promoted as SciPy does:
    integers to the default float, then the standard's promotion; broadcast. ``wide``:
    float32 is computed in float64 where the device has it (the casts fuse into the one
    kernel), as SciPy computes these functions in double for float32 input, for the ops
    whose float32 algorithm loses digits (lpmv, hyp1f1, the inverses) or digamma's ulps."""
    names = ("x",) if len(args) == 1 else ("x1", "x2", "x3")[: len(args)]
    device, common, nodes = _core.operands(args, name, names)
    if common.kind in "iub":
        common = device.default_float
        nodes = [_core.cast_node(n, common) for n in nodes]
    if common not in dt.CATEGORIES[_FLOAT]:
        which = ", ".join(f"{nm}: {a.dtype}" for nm, a in zip(names, args) if _core.is_array(a))
        raise TypeError(f"{name}: expected {_FLOAT} input, got {which}")
    shape, nodes = _core.broadcast_nodes(nodes, name)
    if all(isinstance(n, g.Const) for n in nodes):
        nodes = [g.realize(nodes[0])] + nodes[1:]
    if wide and common is dt.float32 and device.has_f64:
        out = g.make_op(name, [_core.cast_node(n, dt.float64) for n in nodes], dt.float64)
        return Array._new(_core.cast_node(out, dt.float32))
    return Array._new(g.make_op(name, nodes, common))


def _floats(func: str, *args):
    """``args`` as arrays of one floating dtype and one shape (for compositions)."""
    device, common, nodes = _core.operands(args, func, ("x1", "x2", "x3")[: len(args)])
    if common.kind in "iub":
        common = device.default_float
    if common not in dt.CATEGORIES[_FLOAT]:
        raise TypeError(f"{func}: expected {_FLOAT} input, got {common}")
    nodes = [_core.cast_node(n, common) for n in nodes]
    shape = _core.broadcast_shapes(*(n.shape for n in nodes), func=func)
    return [Array._new(g.broadcast_view(n, shape) if n.shape != shape else n) for n in nodes]


# ------------------------------------------------------------- WGSL ops

def erf(x, /) -> Array:
    return _op("erf", x)


def erfc(x, /) -> Array:
    return _op("erfc", x)


def erfcx(x, /) -> Array:
    return _op("erfcx", x)


def erfinv(y, /) -> Array:
    return _op("erfinv", y)


def ndtr(x, /) -> Array:
    return _op("ndtr", x)


def log_ndtr(x, /) -> Array:
    return _op("log_ndtr", x)


def ndtri(p, /) -> Array:
    return _op("ndtri", p)


def gammaln(x, /) -> Array:
    return _op("gammaln", x)


def gamma(x, /) -> Array:
    return _op("gamma", x)


def rgamma(x, /) -> Array:
    return _op("rgamma", x)


def gammasgn(x, /) -> Array:
    return _op("gammasgn", x)


# Their float32 algorithms lose digits where float64's do not (on lavapipe, against
# SciPy: lpmv 2110 ulp near x = -1 and through the degree recurrence, hyp1f1 25.7 in its
# asymptotic expansions): computed in float64 where the device has it (docs/special.md).
# digamma's float32 is within 3.5 ulp (its reflection summed in double length) and
# float64's value rounded is within one

def digamma(x, /) -> Array:
    return _op("digamma", x, wide=True)


psi = digamma


def gammainc(a, x, /) -> Array:
    return _op("gammainc", a, x)


def gammaincc(a, x, /) -> Array:
    return _op("gammaincc", a, x)


def betaln(a, b, /) -> Array:
    return _op("betaln", a, b)


def beta(a, b, /) -> Array:
    return _op("beta", a, b)


def betainc(a, b, x, /) -> Array:
    return _op("betainc", a, b, x)


def i0(x, /) -> Array:
    return _op("i0", x)


def i0e(x, /) -> Array:
    return _op("i0e", x)


def i1(x, /) -> Array:
    return _op("i1", x)


def i1e(x, /) -> Array:
    return _op("i1e", x)


def sindg(x, /) -> Array:
    return _op("sindg", x)


def cosdg(x, /) -> Array:
    return _op("cosdg", x)


def tandg(x, /) -> Array:
    return _op("tandg", x)


def cotdg(x, /) -> Array:
    return _op("cotdg", x)


def ellipk(m, /) -> Array:
    return _op("ellipk", m)


def ellipkm1(p, /) -> Array:
    return _op("ellipkm1", p)


def exp1(x, /) -> Array:
    return _op("exp1", x)


def expi(x, /) -> Array:
    return _op("expi", x)


def expn(n, x, /) -> Array:
    return _op("expn", n, x)


def spence(x, /) -> Array:
    return _op("spence", x)


def zeta(x, q=None, /) -> Array:
    """Riemann zeta (``q`` None) or Hurwitz zeta."""
    if q is None:
        return _op("riemann_zeta", x)
    return _op("zeta", x, q)


def zetac(x, /) -> Array:
    return _op("zetac", x)


def binom(n, k, /) -> Array:
    return _op("binom", n, k)


def multigammaln(a, d, /) -> Array:
    """log of the multivariate gamma function of dimension ``d`` (a Python integer).
    Where ``a <= (d - 1) / 2`` the result is NaN (SciPy raises there, which would need
    the data on the host)."""
    ok = isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d == math.floor(d) and d >= 0
    if not ok:
        raise ValueError(f"multigammaln: expected a non-negative integer dimension d, got {d!r}")
    return _op("multigammaln", a, float(d))


def j0(x, /) -> Array:
    return _op("j0", x)


def j1(x, /) -> Array:
    return _op("j1", x)


def y0(x, /) -> Array:
    return _op("y0", x)


def y1(x, /) -> Array:
    return _op("y1", x)


def yn(n, x, /) -> Array:
    return _op("yn", n, x)


def k0(x, /) -> Array:
    return _op("k0", x)


def k0e(x, /) -> Array:
    return _op("k0e", x)


def k1(x, /) -> Array:
    return _op("k1", x)


def k1e(x, /) -> Array:
    return _op("k1e", x)


def lpmv(m, v, x, /) -> Array:
    """Associated Legendre function P_v^m(x) of integer order ``m`` (NaN otherwise) and
    real degree ``v``, with the Condon-Shortley phase, as SciPy defines it."""
    return _op("lpmv", m, v, x, wide=True)


def hyp1f1(a, b, x, /) -> Array:
    """Confluent hypergeometric function 1F1(a; b; x) (Kummer's M)."""
    return _op("hyp1f1", a, b, x, wide=True)


# inverses: a guess, then Halley's iteration inside a bracket, all in the kernel. float32
# runs in float64 where the device has it: the inverse's condition (1/a for x ~ p^(1/a))
# multiplies the forward function's float32 error into hundreds of ulp, which float64
# arithmetic rounded once to float32 does not have (SciPy computes them in double too)

def gammaincinv(a, y, /) -> Array:
    return _op("gammaincinv", a, y, wide=True)


def gammainccinv(a, y, /) -> Array:
    return _op("gammainccinv", a, y, wide=True)


def chdtri(v, p, /) -> Array:
    return _op("chdtri", v, p, wide=True)


def pdtri(k, y, /) -> Array:
    return _op("pdtri", k, y, wide=True)


def betaincinv(a, b, y, /) -> Array:
    return _op("betaincinv", a, b, y, wide=True)


def bdtri(k, n, y, /) -> Array:
    return _op("bdtri", k, n, y, wide=True)


def nbdtri(k, n, y, /) -> Array:
    return _op("nbdtri", k, n, y, wide=True)


def fdtri(dfn, dfd, p, /) -> Array:
    return _op("fdtri", dfn, dfd, p, wide=True)


def stdtrit(df, p, /) -> Array:
    return _op("stdtrit", df, p, wide=True)


# The distributions whose argument is formed from theirs (a x, t^2 / (df + t^2), dfn x /
# (dfd + dfn x)) take its rounding error into account (_wgsl/specialmath.py: ibeta_dx)

def gdtr(a, b, x, /) -> Array:
    return _op("gdtr", a, b, x)


def gdtrc(a, b, x, /) -> Array:
    return _op("gdtrc", a, b, x)


def stdtr(df, t, /) -> Array:
    return _op("stdtr", df, t)


def fdtr(dfn, dfd, x, /) -> Array:
    return _op("fdtr", dfn, dfd, x)


def fdtrc(dfn, dfd, x, /) -> Array:
    return _op("fdtrc", dfn, dfd, x)


# ------------------------------------------------------------- compositions

def loggamma(x, /) -> Array:
    (x,) = _floats("loggamma", x)
    # the real branch: NaN for negative x, as SciPy gives for real input
    return where(x < 0.0, math.nan, gammaln(x))


def polygamma(n, x, /) -> Array:
    n, x = _floats("polygamma", n, x)
    # psi^(n)(x) = (-1)^(n + 1) n! zeta(n + 1, x), as SciPy defines it
    s = n + 1.0
    z = zeta(s, x)
    sign = ew.pow(-1.0, s)
    fac = sign * gamma(s) * z
    # where zeta(n + 1, x) falls below the smallest normal while n! times it does not
    # (float32 polygamma(20, 85.3) = -3.3e-22 was 199 ulp off, polygamma(15, 923.7) 0):
    # n! x^-(n + 1) (x^(n + 1) zeta(n + 1, x)), the power in two halves
    small = 2.0 ** -100 if x.dtype == dt.float32 else 2.0 ** -1000
    half = ew.floor(0.5 * s)
    scaled = sign * ((gamma(s) * ew.pow(x, -half)) * ew.pow(x, half - s)) * _op("zeta_scaled", s, x)
    fac = where((ew.abs(z) < small) & (x >= 1.0) & ew.isfinite(scaled), scaled, fac)
    return where(n == 0.0, digamma(x), fac)


def expit(x, /) -> Array:
    (x,) = _floats("expit", x)
    # e / (1 + e) below 0, where exp(-x) would overflow before the result underflows
    e = ew.exp(-ew.abs(x))
    return where(x < 0.0, e / (1.0 + e), 1.0 / (1.0 + e))


def log_expit(x, /) -> Array:
    (x,) = _floats("log_expit", x)
    # -log1p(exp(-|x|)) + min(x, 0): no overflow, no cancellation
    return ew.minimum(x, 0.0) - ew.log1p(ew.exp(-ew.abs(x)))


def logit(p, /) -> Array:
    (p,) = _floats("logit", p)
    # near 1/2, p / (1 - p) = 1 + (2p - 1) / (1 - p): log1p keeps the small result exact
    mid = (p > 0.3) & (p < 0.65)
    return where(mid, ew.log1p((2.0 * p - 1.0) / (1.0 - p)), ew.log(p / (1.0 - p)))


def xlogy(x, y, /) -> Array:
    x, y = _floats("xlogy", x, y)
    return where((x == 0.0) & ~ew.isnan(y), 0.0, x * ew.log(y))


def xlog1py(x, y, /) -> Array:
    x, y = _floats("xlog1py", x, y)
    return where((x == 0.0) & ~ew.isnan(y), 0.0, x * ew.log1p(y))


def entr(x, /) -> Array:
    (x,) = _floats("entr", x)
    return where(x > 0.0, -x * ew.log(x), where(x == 0.0, 0.0, where(ew.isnan(x), x, -math.inf)))


def _log_ratio(x, y) -> Array:
    """log(x / y) for x, y > 0: log(x) - log(y) where x / y would overflow, underflow or
    lose digits as a subnormal (rel_entr(1e-300, 7.2e42): -inf from log(0) otherwise)."""
    r = x / y
    normal = (r >= float(_finfo(r.dtype).smallest_normal)) & (r < math.inf)
    return where(normal, ew.log(r), ew.log(x) - ew.log(y))


def rel_entr(x, y, /) -> Array:
    x, y = _floats("rel_entr", x, y)
    # the inner where keeps x's dtype (two Python scalars alone would give the default float)
    out = where((x > 0.0) & (y > 0.0), x * _log_ratio(x, y), where((x == 0.0) & (y >= 0.0), ew.abs(x), math.inf))
    return where(ew.isnan(x) | ew.isnan(y), math.nan, out)


def kl_div(x, y, /) -> Array:
    x, y = _floats("kl_div", x, y)
    out = where((x > 0.0) & (y > 0.0), x * _log_ratio(x, y) - x + y, where((x == 0.0) & (y >= 0.0), y, math.inf))
    return where(ew.isnan(x) | ew.isnan(y), math.nan, out)


def sinc(x, /) -> Array:
    (x,) = _floats("sinc", x)
    y = math.pi * x
    # sin(pi x) from x - k, k the nearest integer (exact, in [-1/2, 1/2]: pi x rounded
    # would not vanish at integers, and a remainder near +-1 would not either), its sign
    # flipped for odd k; the series near 0, where sin(y) / y would lose subnormal y
    k = ew.round(x)
    s = ew.sin(math.pi * (x - k))
    s = where(k - 2.0 * ew.floor(0.5 * k) != 0.0, -s, s)
    return where(ew.abs(y) < 1.0e-4, 1.0 - y * y / 6.0, s / y)


def huber(delta, r, /) -> Array:
    delta, r = _floats("huber", delta, r)
    a = ew.abs(r)
    out = where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
    return where(delta < 0.0, math.inf, out)


def pseudo_huber(delta, r, /) -> Array:
    delta, r = _floats("pseudo_huber", delta, r)
    t = r / delta
    # delta^2 (sqrt(1 + t^2) - 1) without the cancellation
    out = delta * delta * (t * t / (ew.sqrt(1.0 + t * t) + 1.0))
    out = where(ew.isinf(t) & ~ew.isinf(delta), ew.abs(delta) * ew.abs(r), out)
    # SciPy's order: delta < 0 gives inf, then a zero delta or r gives 0 (whatever the
    # other one is, NaN and inf included), then NaN
    out = where(ew.isnan(delta) | ew.isnan(r), math.nan, out)
    return where(delta < 0.0, math.inf, where((delta == 0.0) | (r == 0.0), 0.0, out))


def boxcox(x, lmbda, /) -> Array:
    return _op("boxcox", x, lmbda)


def boxcox1p(x, lmbda, /) -> Array:
    return _op("boxcox1p", x, lmbda)


def inv_boxcox(y, lmbda, /) -> Array:
    return _op("inv_boxcox", y, lmbda)


def inv_boxcox1p(y, lmbda, /) -> Array:
    return _op("inv_boxcox1p", y, lmbda)


def exp2(x, /) -> Array:
    (x,) = _floats("exp2", x)
    # pow flushes subnormal results: square the root of those
    h = ew.pow(2.0, 0.5 * x)
    return where(x < -1000.0, h * h, ew.pow(2.0, x))


def exp10(x, /) -> Array:
    (x,) = _floats("exp10", x)
    h = ew.pow(10.0, 0.5 * x)
    return where(x < -300.0, h * h, ew.pow(10.0, x))


def cbrt(x, /) -> Array:
    (x,) = _floats("cbrt", x)
    a = ew.abs(x)
    y = ew.pow(a, 1.0 / 3.0)
    # one Newton step removes the error of pow with the rounded exponent 1/3
    y = where((a > 0.0) & ~ew.isinf(a), y - (y - a / (y * y)) / 3.0, y)
    return ew.copysign(y, x)


def cosm1(x, /) -> Array:
    (x,) = _floats("cosm1", x)
    s = ew.sin(0.5 * x)
    return -2.0 * s * s


def exprel(x, /) -> Array:
    (x,) = _floats("exprel", x)
    small = ew.abs(x) < 1.0e-8
    # where expm1(x) = exp(x) to the last bit: e^(x/2) (e^(x/2) / x), which stays finite
    # past exp's overflow (x - log x rounded would cost |x| eps: 250 ulp at 693)
    h = ew.exp(0.5 * x)
    big = where(x > 50.0, h * (h / x), ew.expm1(x) / x)
    return where(small, 1.0 + 0.5 * x, where(ew.isinf(x) & (x > 0.0), math.inf, big))


def radian(d, m, s, /) -> Array:
    d, m, s = _floats("radian", d, m, s)
    return (d + m / 60.0 + s / 3600.0) * (math.pi / 180.0)


def _stirling_s(x: Array) -> Array:
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 8."""
    w = 1.0 / x
    z = w * w
    return w * (0.08333333333333333 + z * (-0.002777777777777778 + z * (0.0007936507936507937
        + z * (-0.0005952380952380952 + z * (0.0008417508417508417 + z * (-0.0019175269175269176
        + z * (0.00641025641025641 + z * -0.029550653594771242)))))))


def poch(z, m, /) -> Array:
    z, m = _floats("poch", z, m)
    y = z + m
    # Gamma(z + m) / Gamma(z) where both gammas are in range (their reflections included),
    # Gamma(z + m) with the rounding e of z + m put back to first order: Gamma(y + e) =
    # Gamma(y) (1 + psi(y) e) (poch(-3.7, -0.5) in float32: 10.8 ulp from e alone)
    big = 160.0 if z.dtype == dt.float64 else 30.0
    bv = y - z
    e = (z - (y - bv)) + (m - bv)
    direct = gamma(y) * rgamma(z)
    direct = where(e == 0.0, direct, direct * (1.0 + digamma(y) * e))
    # both >= 8 and one past the range: Stirling's series for both, the log of the
    # quotient as m log y + z log1pmx(t) - log1p(t) / 2 + S(y) - S(z) with t = m / z,
    # log1pmx(t) = log1p(t) - t from atanh's series in u = t / (2 + t) where it cancels
    t = m / z
    u = t / (2.0 + t)
    u2 = u * u
    series = -t * u + 2.0 * u * u2 * (1.0 / 3.0 + u2 * (0.2 + u2 * (1.0 / 7.0 + u2 * (1.0 / 9.0
                                      + u2 * (1.0 / 11.0 + u2 / 13.0)))))
    log1pmx = where(ew.abs(t) <= 0.1, series, ew.log1p(t) - t)
    stirling = ew.pow(y, m) * ew.exp(z * log1pmx - 0.5 * ew.log1p(t) + (_stirling_s(y) - _stirling_s(z)))
    past = (z > big) | (y > big)
    logform = gammasgn(y) * gammasgn(z) * ew.exp(gammaln(y) - gammaln(z))
    out = where(past & (z >= 8.0) & (y >= 8.0), stirling, where(past & (z > 0.0) & (y > 0.0), logform, direct))
    # an integer |m| <= 16: the product z (z + 1) ... (z + m - 1), or 1 / ((z - 1) ... (z + m))
    # (the gammas' ratio: 56 ulp at poch(22.76, 10)); a factor 0 gives 0 (SciPy's +0), or
    # inf for m < 0
    n = ew.abs(m)
    up = m > 0.0
    prod = 1.0
    for k in range(16):
        prod = where(n > k, prod * where(up, z + float(k), z - float(k + 1)), prod)
    prod = where(up, where(prod == 0.0, 0.0, prod), where(prod == 0.0, math.inf, 1.0 / prod))
    out = where((m == ew.floor(m)) & (n <= 16.0), prod, out)
    # SciPy's values at the poles and infinities (those of Cephes' recurrence in m):
    # Gamma(z) at a pole (z a non-positive integer) gives 0, Gamma(z + m) inf, both the
    # limit (-1)^m Gamma(1 - z) / Gamma(1 - z - m)
    zpole = (z <= 0.0) & (z == ew.floor(z)) & (ew.abs(z) < 1e13)
    ypole = (y <= 0.0) & (y == ew.floor(y)) & (ew.abs(y) < 1e13)
    odd = (m - 2.0 * ew.floor(0.5 * m)) != 0.0
    both = gamma(1.0 - z) * rgamma(1.0 - y)
    out = where(zpole & ypole, where(odd, -both, both), out)
    out = where(zpole & ~ypole, 0.0, where(ypole & ~zpole, math.inf, out))
    # m = inf: 0 at a pole of Gamma(z), else inf with Gamma(z)'s sign; m = -inf: NaN
    nan = m * math.nan  # of the arguments' dtype (two Python scalars would make float64)
    minf = where(zpole, 0.0, where(m < 0.0, math.nan, ew.copysign(math.inf, gammasgn(z))))
    out = where(ew.isinf(m), minf, out)
    # z = inf: inf for 0 < m <= 2, 0 for -2 <= m < 0; z = -inf: -inf at m = 1, -0 at
    # m = -1; NaN otherwise (the recurrence's first step overflows or vanishes)
    zinf = where((m > 0.0) & (m <= 2.0), math.inf, where((m < 0.0) & (m >= -2.0), 0.0, nan))
    zninf = where(m == 1.0, -math.inf, where(m == -1.0, -0.0, nan))
    out = where(ew.isinf(z), where(z > 0.0, zinf, zninf), out)
    out = where(ew.isnan(m), where(zpole, 0.0, nan), where(ew.isnan(z), math.nan, out))
    return where(m == 0.0, 1.0, out)


# ------------------------------------------------------------- distributions

def chdtr(v, x, /) -> Array:
    v, x = _floats("chdtr", v, x)
    out = gammainc(0.5 * v, 0.5 * x)
    return where((v == 0.0) & (x > 0.0), 1.0, where(v < 0.0, math.nan, out))


def chdtrc(v, x, /) -> Array:
    v, x = _floats("chdtrc", v, x)
    out = gammaincc(0.5 * v, 0.5 * x)
    return where((v == 0.0) & (x > 0.0), 0.0, where(v < 0.0, math.nan, out))


def pdtr(k, m, /) -> Array:
    k, m = _floats("pdtr", k, m)
    out = gammaincc(ew.floor(k) + 1.0, m)
    # k = inf: 1 for finite m (NaN for m = inf, as gammaincc gives); m = 0: 1 for any
    # k but a negative one, NaN included (as SciPy)
    out = where((ew.isinf(k) & (k > 0.0) & ew.isfinite(m)) | (m == 0.0), 1.0, out)
    return where((k < 0.0) | (m < 0.0), math.nan, out)


def pdtrc(k, m, /) -> Array:
    k, m = _floats("pdtrc", k, m)
    out = gammainc(ew.floor(k) + 1.0, m)
    out = where((ew.isinf(k) & (k > 0.0) & ew.isfinite(m)) | (m == 0.0), 0.0, out)
    return where((k < 0.0) | (m < 0.0), math.nan, out)


def _c_int(v: Array) -> Array:
    """SciPy's reading of a float argument that its C code takes as an int (bdtr's n,
    nbdtr's k and n): truncated toward zero, NaN outside int's range (bdtr(1, 2.5, p) is
    bdtr(1, 2, p); nbdtr(-0.5, 2, p) is nbdtr(0, 2, p); bdtr(1, 2^31, p) NaN)."""
    return where(ew.abs(v) < 2147483648.0, ew.trunc(v), math.nan)


def bdtr(k, n, p, /) -> Array:
    k, n, p = _floats("bdtr", k, n, p)
    n = _c_int(n)
    fk = ew.floor(k)
    # I_{1-p}(n - k, k + 1) as the complement of I_p(k + 1, n - k): p is exact, 1 - p is
    # not (bdtr(0, 300, 0.1) = 0.9^300: 62 ulp in float32 through 1 - p)
    out = where(fk == n, 1.0, betaincc(fk + 1.0, n - fk, p))
    bad = (k < 0.0) | (fk > n) | (p < 0.0) | (p > 1.0) | ew.isnan(k) | ew.isnan(n) | ew.isnan(p)
    return where(bad, math.nan, out)


def bdtrc(k, n, p, /) -> Array:
    k, n, p = _floats("bdtrc", k, n, p)
    n = _c_int(n)
    fk = ew.floor(k)
    # SciPy's: 1 for k < 0 (-inf included), 0 at k = n, NaN past n
    out = where(k < 0.0, 1.0, where(fk == n, 0.0, betainc(fk + 1.0, n - fk, p)))
    bad = (fk > n) | (p < 0.0) | (p > 1.0) | ew.isnan(k) | ew.isnan(n) | ew.isnan(p)
    return where(bad, math.nan, out)


def nbdtr(k, n, p, /) -> Array:
    k, n, p = _floats("nbdtr", k, n, p)
    k, n = _c_int(k), _c_int(n)
    out = betainc(n, k + 1.0, p)
    bad = (k < 0.0) | (n <= 0.0) | (p < 0.0) | (p > 1.0) | ew.isnan(k) | ew.isnan(n)
    return where(bad, math.nan, out)


def nbdtrc(k, n, p, /) -> Array:
    k, n, p = _floats("nbdtrc", k, n, p)
    k, n = _c_int(k), _c_int(n)
    out = betaincc(n, k + 1.0, p)  # I_{1-p}(k + 1, n), p exact (as bdtr)
    bad = (k < 0.0) | (n <= 0.0) | (p < 0.0) | (p > 1.0) | ew.isnan(k) | ew.isnan(n)
    return where(bad, math.nan, out)


def betaincc(a, b, x, /) -> Array:
    return _op("betaincc", a, b, x)
