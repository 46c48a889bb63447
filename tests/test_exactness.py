"""Fusion never changes a result, and float32 stays exact where it can on any device.

Random expression trees (shared subexpressions included) over special values (NaN,
+-inf, +-0, subnormals, huge and tiny) are computed three ways: as one fused kernel, op
by op on the device (every intermediate realized), and op by op with NumPy. Fused and op
by op must agree bit for bit (NaNs compare as NaN) for every op; with NumPy for the
correctly rounded ops, where the device keeps float32 subnormals (as probed; see
``wgarray._runtime.numerics``). ``-m slow`` runs a long version.
"""
from __future__ import annotations

import io

import numpy as np
import pytest

import wgarray as xp
from wgarray import debug
from wgarray._ops import OPS as DECLARED
from wgarray._runtime.numerics import float32_behaviour

from conftest import HAS_F64, flushed_reference


def _explain_text(x) -> str:
    buf = io.StringIO()
    debug.explain(x, file=buf)
    return buf.getvalue()

F32 = float32_behaviour(xp.asarray(0.0).device)
KEEPS_SUBNORMALS = F32.subnormal_results and F32.subnormal_inputs

FLOATS = ["float32"] + (["float64"] if HAS_F64 else [])


def specials(dtype):
    fi = np.finfo(dtype)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal,
            fi.smallest_normal * 0.375, -fi.smallest_normal, fi.smallest_normal, fi.max, -fi.max,
            fi.max / 3, 1e-30, -1e30, 1e8, 1.0, -1.0, 0.5, 3.0, -7.25, 0.1, 2.0 ** -60]
    return np.array(vals, dtype=dtype)


def same_bits(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    u = {4: np.uint32, 8: np.uint64, 1: np.uint8}[x.dtype.itemsize]
    eq = x.view(u) == y.view(u)
    if x.dtype.kind == "f":
        eq |= np.isnan(x) & np.isnan(y)
    return bool(eq.all())


def np_maximum(x, y):
    """np.maximum with max(-0, +0) = +0 (NumPy's choice between zeros varies by loop)."""
    both = (x == 0) & (y == 0)
    return np.where(both, np.where(np.signbit(x) & np.signbit(y), x, np.abs(x)), np.maximum(x, y))


def np_minimum(x, y):
    both = (x == 0) & (y == 0)
    return np.where(both, np.where(np.signbit(x) | np.signbit(y), -np.abs(x), x), np.minimum(x, y))


# The ops that expressions draw from. Each one's arity, NumPy reference and whether it is
# correctly rounded (so comparable with NumPy bit for bit) come from the op table; the
# references of maximum and minimum fix the zero sign that the standard leaves open.
_DRAWN = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "copysign", "nextafter", "negative",
          "abs", "square", "sqrt", "exp", "log", "sin", "floor", "less", "equal", "not_equal", "greater_equal"]
_REFERENCE = {"maximum": np_maximum, "minimum": np_minimum}
# name: (arity, NumPy function, correctly rounded)
OPS = {n: (DECLARED[n].arity, _REFERENCE.get(n, getattr(np, DECLARED[n].numpy)), DECLARED[n].exact != "ulp")
       for n in _DRAWN}
SCALARS = [2.0, 0.5, -4.0, 3.0, 1e8, -1.0, 1e-30]


class Expr:
    """A random expression DAG, evaluated by any of three backends."""

    def __init__(self, rng, n_leaves: int, depth: int):
        self.rng = rng
        self.nodes: list = []  # ('leaf', i) / ('scalar', v) / (op, child indices) / ('where', c, x, y)
        self.n_leaves = n_leaves
        self.root = self._build(depth)

    def _build(self, depth: int) -> int:
        rng = self.rng
        if self.nodes and rng.random() < 0.2:  # share a subexpression: x - x and friends
            cands = [i for i, n in enumerate(self.nodes) if not self._is_bool(i)]
            if cands:
                return int(rng.choice(cands))
        if depth == 0 or rng.random() < 0.15:
            node = ("leaf", int(rng.integers(self.n_leaves)))
        else:
            r = rng.random()
            if r < 0.1:
                cmp = str(rng.choice(["less", "equal", "not_equal", "greater_equal"]))
                c = self._add((cmp, (self._build(depth - 1), self._build(depth - 1))))
                node = ("where", (c, self._build(depth - 1), self._build(depth - 1)))
            else:
                name = str(rng.choice([k for k in OPS if k not in ("less", "equal", "not_equal",
                                                                   "greater_equal")]))
                arity = OPS[name][0]
                kids = []
                for _ in range(arity):
                    if arity == 2 and rng.random() < 0.2:
                        kids.append(self._add(("scalar", float(rng.choice(SCALARS)))))
                    else:
                        kids.append(self._build(depth - 1))
                if all(self.nodes[k][0] == "scalar" for k in kids):
                    kids[0] = self._add(("leaf", 0))
                node = (name, tuple(kids))
        return self._add(node)

    def _add(self, node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def _is_bool(self, i) -> bool:
        return self.nodes[i][0] in ("less", "equal", "not_equal", "greater_equal")

    @property
    def numpy_comparable(self) -> bool:
        return all(OPS[n[0]][2] for n in self.nodes if n[0] in OPS)

    def text(self, i=None) -> str:
        i = self.root if i is None else i
        kind, arg = self.nodes[i]
        if kind == "leaf":
            return "abc"[arg]
        if kind == "scalar":
            return repr(arg)
        return f"{kind}({', '.join(self.text(k) for k in arg)})"

    def run(self, leaves, lib, step=None):
        memo = {}

        def ev(i):
            if i in memo:
                return memo[i]
            kind, arg = self.nodes[i]
            if kind == "leaf":
                out = leaves[arg]
            elif kind == "scalar":
                out = lib.dtype_scalar(arg)
            elif kind == "where":
                out = lib.where(*(ev(k) for k in arg))
            else:
                out = lib.op(kind, *(ev(k) for k in arg))
                if step is not None:
                    step(out)
            memo[i] = out
            return out

        return ev(self.root)


class DeviceLib:
    def __init__(self, dtype):
        self.dtype = dtype

    def dtype_scalar(self, v):
        return v  # a Python scalar: it takes the array's dtype

    def op(self, name, *args):
        if all(not isinstance(a, xp.Array) for a in args):
            args = (xp.asarray(args[0], dtype=getattr(xp, self.dtype)),) + args[1:]
        return getattr(xp, {"abs": "abs"}.get(name, name))(*args)

    def where(self, c, x, y):
        return xp.where(c, x, y)


class NumpyLib:
    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def dtype_scalar(self, v):
        return self.dtype.type(v)

    unspecified = np.False_  # elements whose result depends on a NaN's sign (copysign)

    def op(self, name, *args):
        if name == "copysign":
            self.unspecified = self.unspecified | np.isnan(args[1])
        with np.errstate(all="ignore"):
            return np.asarray(OPS[name][1](*args))

    def where(self, c, x, y):
        return np.where(c, x, y)


def leaves_for(dtype, rng):
    s = specials(dtype)
    n = len(s)
    a = np.repeat(s, n)  # every pair of specials once
    b = np.tile(s, n)
    c = rng.permutation(a)
    return [a, b, c]


def check_expressions(dtype: str, n_exprs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    hosts = leaves_for(dtype, rng)
    dev = [xp.asarray(h) for h in hosts]
    xp.evaluate(*dev)
    dlib, nlib = DeviceLib(dtype), NumpyLib(dtype)
    for k in range(n_exprs):
        e = Expr(rng, 3, int(rng.integers(2, 5)))
        debug.reset_counters()
        fused = e.run(dev, dlib)
        if not isinstance(fused, xp.Array):
            continue
        got = np.asarray(fused)
        one_by_one = np.asarray(e.run(dev, dlib, step=xp.evaluate))
        assert same_bits(got, one_by_one), f"{dtype} fused != op by op: {e.text()}"
        if e.numpy_comparable and (dtype != "float32" or KEEPS_SUBNORMALS):
            nlib.unspecified = np.False_  # a NumPy bool, so that ~ negates it
            want = e.run(hosts, nlib)
            bad = ~nlib.unspecified & ~((got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "b" else
                    ((got.view(f"u{got.dtype.itemsize}") == want.view(f"u{got.dtype.itemsize}"))
                     | (np.isnan(got) & np.isnan(want))))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                vals = [h[i] for h in hosts]
                raise AssertionError(f"{dtype} {e.text()} at a, b, c = {vals}: got {got[i]!r}, NumPy {want[i]!r}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_fused_expressions_match_op_by_op_and_numpy(dtype):
    check_expressions(dtype, 12, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("dtype", FLOATS)
def test_random_fused_expressions_long(dtype, seed):
    check_expressions(dtype, 150, seed=100 + seed)


# ------------------------------------------------------------- named regressions

def f32(values):
    return xp.asarray(np.array(values, dtype=np.float32))


@pytest.mark.parametrize("dtype", FLOATS)
def test_x_minus_x_is_nan_for_nan_and_inf(dtype):
    h = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], dtype=dtype)
    x = xp.asarray(h)
    with np.errstate(invalid="ignore"):
        assert same_bits(np.asarray(x - x), h - h)
        assert same_bits(np.asarray((x + 1) - (x + 1)), (h + 1) - (h + 1))
        assert same_bits(np.asarray(x * 0.0), h * 0.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_plus_b_minus_a_is_not_reassociated(dtype):
    a = xp.asarray(np.array([1e8, 1e16, -3.0], dtype=dtype))
    b = xp.asarray(np.array([1.0, 1.0, 1e-9], dtype=dtype))
    ha, hb = np.asarray(a), np.asarray(b)
    assert same_bits(np.asarray((a + b) - a), (ha + hb) - ha)


def test_compensated_summation_keeps_its_error_term():
    # two_sum written with array ops: err is the exact rounding error of a + b
    ha = np.array([1e8, 1.0, 3.0e7, -2.5], dtype=np.float32)
    hb = np.array([1.0, 1e-8, 7.0, 1e-7], dtype=np.float32)
    a, b = xp.asarray(ha), xp.asarray(hb)
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    hs = ha + hb
    hbb = hs - ha
    assert same_bits(np.asarray(err), (ha - (hs - hbb)) + (hb - hbb))
    assert np.asarray(err)[1] == np.float32(1e-8)  # what a fold of err to 0 would lose


def test_multiply_add_is_not_contracted():
    # a * s + b rounded twice, as NumPy does it, not once as an FMA would
    ha = (1 + np.arange(257, dtype=np.float32) * np.float32(2.0 ** -12)).astype(np.float32)
    hb = -(ha * ha)
    a, b = xp.asarray(ha), xp.asarray(hb)
    assert same_bits(np.asarray(a * a + b), ha * ha + hb)
    s = 0.5 + 3 * 0.37
    assert same_bits(np.asarray(a * s + b), ha * np.float32(s) + hb)


def test_fused_chain_is_one_kernel_and_exact():
    rng = np.random.default_rng(3)
    ha, hb, hc = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    a, b, c = xp.asarray(ha), xp.asarray(hb), xp.asarray(hc)
    xp.evaluate(a, b, c)
    debug.reset_counters()
    y = xp.exp(-(a - b) ** 2 / 2) * c + a
    xp.evaluate(y)
    assert debug.counters()["dispatches"] == 1
    t = a - b
    for step in (t := t ** 2, t := -t, t := t / 2, t := xp.exp(t), t := t * c, t := t + a):
        xp.evaluate(step)
    assert same_bits(np.asarray(y), np.asarray(t))
    # the power-of-two divisor is exact: the same bits as NumPy's division
    d = np.asarray((a - b) ** 2 / 2)
    assert same_bits(d, np.square(ha - hb) / np.float32(2))


@pytest.mark.parametrize("divisor", [2.0, -0.25, 2.0 ** 126, 2.0 ** -126, 3.0, 2.0 ** 127])
def test_division_by_powers_of_two_is_correctly_rounded(divisor):
    h = specials(np.float32)
    x = xp.asarray(h)
    with np.errstate(all="ignore"):
        want = h / np.float32(divisor)
    got = np.asarray(x / divisor)
    assert _same_or_flushed(got, want, lambda a: a / np.float32(divisor), [h])


def _same_or_flushed(got, want, fn, args) -> bool:
    """Bit for bit IEEE's result, or where the device flushes subnormals in arithmetic its
    model's (flushed inputs, flushed result), element by element."""
    ok = _bits_equal(got, want)
    alt = flushed_reference(fn, args, got.dtype)
    if alt is not None:
        ok |= _bits_equal(got, alt)
    return bool(ok.all())


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


# ------------------------------------------------- bit-exact on flushing devices too

SUB = np.array([1.4e-45, -1.4e-45, 5.9e-39, -1.1754942e-38, 0.0, -0.0, 1.1754944e-38, np.nan, np.inf, -np.inf, 2.0],
               dtype=np.float32)


def test_subnormal_comparisons_and_selection_are_exact():
    a = np.repeat(SUB, len(SUB))
    b = np.tile(SUB, len(SUB))
    x, y = xp.asarray(a), xp.asarray(b)
    for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
        assert np.array_equal(np.asarray(getattr(xp, name)(x, y)), getattr(np, name)(a, b)), name
    # NumPy's choice between -0 and +0 varies (its SIMD loops differ); ours: max +0, min -0
    assert same_bits(np.asarray(xp.maximum(x, y)), np_maximum(a, b))
    assert same_bits(np.asarray(xp.minimum(x, y)), np_minimum(a, b))
    assert same_bits(np.asarray(xp.nextafter(x, y)), np.nextafter(a, b))
    assert same_bits(np.asarray(xp.copysign(x, y)), np.copysign(a, b))


def test_subnormal_sign_operations_and_casts_are_exact():
    x = xp.asarray(SUB)
    assert same_bits(np.asarray(-x), -SUB)
    assert same_bits(np.asarray(xp.abs(x)), np.abs(SUB))
    assert np.array_equal(np.asarray(xp.signbit(x)), np.signbit(SUB))
    assert np.array_equal(np.asarray(xp.astype(x, xp.bool)), SUB.astype(bool))
    assert same_bits(np.asarray(xp.astype(x, xp.complex64)), SUB.astype(np.complex64))
    if HAS_F64:
        assert same_bits(np.asarray(xp.astype(x, xp.float64)), SUB.astype(np.float64))
        d = np.array([1e-45, -3e-40, 1.1754942e-38, 1.17549425e-38, 7e-46, 1e-300, -0.0, np.nan, 1e300],
                     dtype=np.float64)
        with np.errstate(over="ignore"):
            assert same_bits(np.asarray(xp.astype(xp.asarray(d), xp.float32)), d.astype(np.float32))


def test_info_reports_the_float32_behaviour():
    text = F32.describe()
    assert "float32 subnormals" in text and "fma" in text


def test_fma_division_kernel_where_fma_is_fused(monkeypatch):
    # the kernel a fused-fma device gets (the short fma path of f32_divide_fma): exact
    # there; on a device whose fma rounds twice (lavapipe) the same code still compiles
    # and runs, within an ulp (its remainders are then inexact)
    import wgarray._graph.fusion as realize
    from wgarray._runtime.numerics import Float32Behaviour

    fused = Float32Behaviour(F32.subnormal_results, F32.subnormal_inputs, True)
    monkeypatch.setattr(realize, "float32_behaviour", lambda device: fused)
    rng = np.random.default_rng(5)
    ha = (rng.standard_normal(4096) * 10.0 ** rng.integers(-30, 30, 4096)).astype(np.float32)
    hb = (rng.standard_normal(4096) * 10.0 ** rng.integers(-30, 30, 4096)).astype(np.float32)
    a, b = xp.asarray(ha), xp.asarray(hb)
    assert "f32_divide_fma" in _explain_text(a / b)
    assert "f32_sqrt_fma" not in _explain_text(xp.sqrt(a))
    with np.errstate(all="ignore"):
        got, want = np.asarray(a / b), np.divide(ha, hb)
    if F32.fma_fused:
        bad = ~_bits_equal(got, want)
        alt = flushed_reference(np.divide, [ha, hb], got.dtype)
        if alt is not None:
            bad &= ~_bits_equal(got, alt)
        assert not bad.any(), [(ha[i], hb[i], got[i], want[i]) for i in np.flatnonzero(bad)[:6]]
    else:
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
        normal = np.abs(want) >= np.finfo(np.float32).smallest_normal
        assert ulps[normal].max() <= 1


@pytest.mark.parametrize("dtype", FLOATS)
def test_fused_inputs_of_reductions_and_scans_match_realized_inputs(dtype):
    # the elementwise producer fused into a reduction is laundered at its output too, so
    # sum(a * b + c) is the sum of the rounded products, as with the product realized
    rng = np.random.default_rng(11)
    ha, hb, hc = (rng.standard_normal(5000).astype(dtype) for _ in range(3))
    a, b, c = xp.asarray(ha), xp.asarray(hb), xp.asarray(hc)
    fused = [xp.sum(a * b + c), xp.sum(a * b), xp.max(a - a * b), xp.cumulative_sum(a * b + c)]
    t, p, m = a * b + c, a * b, a - a * b
    xp.evaluate(t, p, m)
    one_by_one = [xp.sum(t), xp.sum(p), xp.max(m), xp.cumulative_sum(t)]
    for f, o in zip(fused, one_by_one):
        assert same_bits(np.asarray(f), np.asarray(o))
