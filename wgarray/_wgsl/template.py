"""The one templating style of the WGSL math libraries (intmath, realmath, complexmath, specialmath).

A function is written once as WGSL text with ``$NAME`` placeholders: upper-case words
joined by ``_`` (``$T``, ``$PI2_HI``), so ``$C_exp`` reads as ``$C`` followed by
``_exp`` and needs no braces; ``${NAME}`` is used where a letter or digit follows
(``${TOP}u``). :func:`substitute` fills them in per type.

A snippet's dependencies are read from its text: every call of a function that another
snippet of the library defines (or that a named external library holds) is one, in the
order of first call, which is the order :func:`wgarray._wgsl.snippets.resolve` emits
them in.
"""
from __future__ import annotations

import re
from string import Template

from .snippets import Snippet

__all__ = ["WgslTemplate", "library", "partial", "substitute"]


class WgslTemplate(Template):
    """``$NAME`` placeholders of upper-case words joined by '_'."""

    flags = 0
    idpattern = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*"


def substitute(text: str, values=None, /, **more) -> str:
    """``text`` with every placeholder replaced (a missing one is a KeyError)."""
    return WgslTemplate(text).substitute({**(values or {}), **more})


def partial(text: str, **values) -> str:
    """``text`` with the placeholders in ``values`` replaced and the others kept, for a
    template that is filled in two steps."""
    return WgslTemplate(text).safe_substitute(values)


_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_DEFN = re.compile(r"\bfn\s+([A-Za-z_]\w*)\s*\(")


def library(texts: dict[str, str], external=(), stated=None) -> dict[str, Snippet]:
    """Snippets of ``texts`` (key -> WGSL text defining one or a few functions).

    A call of a function defined by another text makes that text's key a dependency; a
    call of a name in ``external`` (the keys of another library, which the caller merges
    in) makes that name one. ``stated`` maps a key to its dependencies in a fixed order,
    checked against the text."""
    owner = {fn: key for key, src in texts.items() for fn in _DEFN.findall(src)}
    out = {}
    for key, src in texts.items():
        own = set(_DEFN.findall(src))
        deps: dict[str, None] = {}
        for called in _CALL.findall(src):
            if called in own:
                continue
            dep = owner.get(called, called if called in external else None)
            if dep is not None and dep != key:
                deps[dep] = None
        if stated and key in stated:
            assert set(stated[key]) == set(deps), (key, stated[key], tuple(deps))
            deps = dict.fromkeys(stated[key])
        out[key] = Snippet(src, tuple(deps))
    return out
