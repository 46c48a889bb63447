"""WGSL helper-function libraries, included in a shader only when it uses them.

Each library is a mapping ``name -> Snippet``; a snippet is the WGSL text of one
function (or a few tightly bound ones) and the names of the snippets it calls.
``resolve`` returns the text of the requested snippets and everything they depend
on, each once, callees before callers.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snippet:
    source: str
    deps: tuple[str, ...] = ()


def resolve(library: dict[str, Snippet], names) -> str:
    """WGSL text for ``names`` and their dependencies, in dependency order."""
    done: dict[str, None] = {}

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in stack:
            raise ValueError(f"resolve: snippet dependency cycle through {name!r}")
        snippet = library[name]
        for dep in snippet.deps:
            visit(dep, stack + (name,))
        done[name] = None

    for name in names:
        visit(name, ())
    return "\n".join(library[name].source.strip() + "\n" for name in done)
