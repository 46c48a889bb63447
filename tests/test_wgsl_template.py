"""The math libraries' one templating style (``wgarray._wgsl.template``): placeholders,
dependencies read from the text, and the one 32 x 32 -> 64-bit multiply they share.
Pure text: no device is used."""
import re

import pytest

from wgarray._wgsl import complexmath, intmath, ops, realmath, snippets, specialmath, template


def test_placeholders_are_upper_case_words():
    text = "fn $C_exp(z: vec2<$T>) -> $T { return ${TOP}u + $PI2_HI; }"
    out = template.substitute(text, C="c64", T="f32", TOP=31, PI2_HI="1.5")
    assert out == "fn c64_exp(z: vec2<f32>) -> f32 { return 31u + 1.5; }"
    with pytest.raises(KeyError):
        template.substitute("$T_x $MISSING", T="f32")
    # a two-step fill keeps what it does not know
    assert template.partial("$A + $B", A="x") == "x + $B"


def test_dependencies_are_the_called_functions_in_first_call_order():
    texts = {
        "f_a": "fn f_a() -> u32 { return 1u; }",
        "f_b": "fn f_b() -> u32 { return f_helper() + f_a(); }\nfn f_helper() -> u32 { return 2u; }",
        "f_c": "fn f_c() -> u32 { return max(f_helper(), ext_x(f_a())); }",
    }
    lib = template.library(texts, external={"ext_x"})
    assert lib["f_a"].deps == ()
    assert lib["f_b"].deps == ("f_a",)                    # its own helper is no dependency
    assert lib["f_c"].deps == ("f_b", "ext_x", "f_a")     # f_helper lives in f_b; builtins skipped
    stated = template.library(texts, external={"ext_x"}, stated={"f_c": ("f_a", "f_b", "ext_x")})
    assert stated["f_c"].deps == ("f_a", "f_b", "ext_x")
    with pytest.raises(AssertionError):                    # a stated order must name the same calls
        template.library(texts, external={"ext_x"}, stated={"f_c": ("f_a",)})


@pytest.mark.parametrize("lib", [intmath.LIBRARY, realmath.LIBRARY, complexmath.LIBRARY, specialmath.LIBRARY],
                         ids=["intmath", "realmath", "complexmath", "specialmath"])
def test_no_placeholder_survives_and_every_call_resolves(lib):
    merged = ops.LIBRARY
    for key, snip in lib.items():
        assert "$" not in snip.source and "%(" not in snip.source, key
        text = snippets.resolve(merged, [key])
        defined = set(re.findall(r"\bfn\s+(\w+)\s*\(", text))
        for called in re.findall(r"\b((?:[a-z]+\d+|_c\d+)_\w+)\s*\(", text):
            assert called in defined, (key, called)


def test_one_wide_multiply():
    assert realmath.LIBRARY["eu64_mul_wide"] is intmath.LIBRARY["eu64_mul_wide"]
    assert "eu64_mul_wide" in realmath.LIBRARY["f32_rem_pio2_large"].deps
    assert not [k for k, s in ops.LIBRARY.items() if "umul_wide" in s.source]
