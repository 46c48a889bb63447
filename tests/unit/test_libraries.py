"""The WGSL helper libraries (realmath, intmath, complexmath, specialmath), without a
device: every snippet defines the function it is named after, declares exactly the
library functions it calls, and ``snippets.resolve`` closes over them (every function
called in the resolved text is defined there exactly once, callees first)."""
from __future__ import annotations

import pytest

from wgarray._wgsl import complexmath, elementwise, intmath, ops, realmath, specialmath
from wgarray._wgsl.snippets import Snippet, resolve

from .wgsl_check import called_functions, defined_functions, problems

LIBRARIES = {"realmath": realmath, "intmath": intmath, "complexmath": complexmath, "specialmath": specialmath}
ALL = ops.LIBRARY
NAMES = sorted(ALL)


def test_the_libraries_are_disjoint_and_all_reachable():
    sizes = {name: len(mod.LIBRARY) for name, mod in LIBRARIES.items()}
    assert all(sizes.values()), sizes
    owners = {}
    for lib, mod in LIBRARIES.items():
        for name, snippet in mod.LIBRARY.items():
            owners.setdefault(name, []).append((lib, snippet))
    assert set(owners) == set(ALL)  # none left out
    # a name in two libraries is one shared snippet (realmath carries intmath's wide
    # multiply so that it resolves alone), never two definitions
    for name, found in owners.items():
        assert all(snippet is found[0][1] for _, snippet in found), (name, [lib for lib, _ in found])


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_snippets_define_their_name_and_declare_what_they_call(library):
    wrong = []
    for name, snippet in LIBRARIES[library].LIBRARY.items():
        defined = defined_functions(snippet.source)
        calls = called_functions(snippet.source) - set(defined)
        if name not in defined:
            wrong.append(f"{name}: does not define fn {name}")
        if calls - set(ALL):
            wrong.append(f"{name}: calls {sorted(calls - set(ALL))}, in no library")
        if set(snippet.deps) != calls:
            wrong.append(f"{name}: declares {sorted(snippet.deps)}, calls {sorted(calls)}")
        own = [p for p in problems(snippet.source, kernel=False) if not p.startswith("called but not defined")]
        if own:
            wrong.append(f"{name}: {own}")
    assert not wrong, "\n".join(wrong[:20])


def _position(text: str) -> dict[str, int]:
    return {m: i for i, m in enumerate(defined_functions(text))}


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_resolve_closes_over_the_dependencies(library):
    wrong = []
    for name in LIBRARIES[library].LIBRARY:
        text = resolve(ALL, [name])
        bad = problems(text, kernel=False)
        if bad:
            wrong.append(f"{name}: {bad}")
            continue
        where = _position(text)
        for caller in where:
            snippet = ALL.get(caller)
            late = [d for d in (snippet.deps if snippet else ()) if where.get(d, -1) > where[caller]]
            if late:
                wrong.append(f"{name}: {caller} comes before its callees {late}")
    assert not wrong, "\n".join(wrong[:20])


def test_resolve_of_everything_defines_each_function_once():
    text = resolve(ALL, NAMES)
    assert problems(text, kernel=False) == []
    assert sorted(set(defined_functions(text))) == sorted(defined_functions(text))


def test_resolve_orders_callees_first_and_includes_each_once():
    lib = {"a": Snippet("fn a() -> u32 { return b() + c(); }", ("b", "c")),
           "b": Snippet("fn b() -> u32 { return c(); }", ("c",)),
           "c": Snippet("fn c() -> u32 { return 1u; }")}
    assert defined_functions(resolve(lib, ["a", "b"])) == ["c", "b", "a"]
    assert resolve(lib, ["c"]).strip() == "fn c() -> u32 { return 1u; }"


def test_resolve_reports_a_cycle():
    lib = {"a": Snippet("fn a() {}", ("b",)), "b": Snippet("fn b() {}", ("a",))}
    with pytest.raises(ValueError, match="cycle"):
        resolve(lib, ["a"])


def test_library_of_code_is_what_the_code_calls():
    code = "fn compute(x: f64) -> f64 { return f64_exp(x) + f64_log1p(x); }"
    text = elementwise.library(code)
    assert {"f64_exp", "f64_log1p"} <= set(defined_functions(text))
    assert problems(text + code, kernel=False) == []
    assert elementwise.library("fn compute(x: f32) -> f32 { return x; }") == ""


def test_no_library_function_multiplies_by_an_infinity_constant():
    # NVIDIA's Vulkan compiler made a subnormal of s * f64_inf() (beta(-1, 0) = 3.2e-313
    # on an H100): a signed infinity is chosen by select
    import re
    bad = [name for name, snippet in ALL.items()
           if re.search(r"\*\s*(f32|f64)_inf\(\)|(f32|f64)_inf\(\)\s*\*", snippet.source)]
    assert not bad, bad


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_a_quotient_passed_to_two_prod_with_its_divisor_is_laundered(T):
    # q = n / d passed to two_prod with d: q d is n to a compiler that cancels, and the
    # error term n - q d then 0; and the product is laundered before two_prod subtracts
    # it (a contraction takes it exactly)
    import re
    assert f"let p = {T}_launder(a * b);" in ALL[f"{T}_two_prod"].source
    bad = []
    for name, snippet in ALL.items():
        if not name.startswith(T + "_"):
            continue
        lines = snippet.source.split("\n")
        for i, line in enumerate(lines):
            call = re.search(rf"{T}_two_prod\((\w+), (\w+)", line)
            if not call:
                continue
            q, d = call.groups()
            for before in reversed(lines[:i]):
                made = re.search(rf"\blet {q} = (.*);", before)
                if made:
                    if re.search(rf"/ *(\(|abs\(|{d}\b)", made.group(1)) or re.search(rf"divide\(\w+, *{d}\)", made.group(1).replace(" ", "")):
                        if not made.group(1).startswith(f"{T}_launder("):
                            bad.append(f"{name}: {before.strip()}")
                    break
    assert not bad, bad
