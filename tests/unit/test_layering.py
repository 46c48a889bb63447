"""The package's import structure, read from the source (no device): pipeline stages
import one way (the runtime and the WGSL renderers below the lazy graph, the graph below
the kernel drivers, those below the namespace), no module imports a wgarray module from
inside a function, and there is no import cycle."""
from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "wgarray"

# what each stage may import from inside wgarray (a stage always imports itself)
BASE = {"wgarray._dtypes", "wgarray._ops"}  # dtypes and the op table: facts, no imports
ALLOWED = {
    "wgarray._dtypes": set(),
    "wgarray._ops": set(),
    # the launch record is the contract a renderer and its driver both read: pure data
    "wgarray._wgsl": BASE | {"wgarray._runtime.launch", "wgarray._runtime.errors"},
    "wgarray._runtime": BASE,
    "wgarray._graph": BASE | {"wgarray._runtime", "wgarray._wgsl", "wgarray._kernels.elementwise"},
    "wgarray._kernels": BASE | {"wgarray._runtime", "wgarray._wgsl", "wgarray._graph"},
}


def _modules():
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("wgarray",) + path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name, path):
    """(imported wgarray module, inside a function?) for each import in ``path``."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        found += [(t, id(node) in nested) for t in targets if t in MODULES and t != name]
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _stage(name):
    return next((s for s in sorted(ALLOWED, key=len, reverse=True) if name == s or name.startswith(s + ".")), None)


def test_stages_import_one_way():
    bad = []
    for name, imports in GRAPH.items():
        stage = _stage(name)
        if stage is None:
            continue  # the namespace layer may import any stage
        for target, _ in imports:
            if _stage(target) == stage or any(target == a or target.startswith(a + ".") for a in ALLOWED[stage]):
                continue
            bad.append(f"{name} imports {target}")
    assert not bad, "\n".join(bad)


def test_no_function_level_imports():
    bad = sorted({f"{name} -> {t}" for name, imports in GRAPH.items() for t, nested in imports if nested})
    assert not bad, "imports inside functions (lift them, or fix the layering that needs them):\n" + "\n".join(bad)


def test_no_import_cycles():
    adj = {n: sorted({t for t, _ in imps}) for n, imps in GRAPH.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in adj:
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_checker_sees_imports():
    # the rules above are only as good as the parser: it must find known edges
    assert ("wgarray._graph.node", False) in GRAPH["wgarray._graph.fusion"]
    assert any(t == "wgarray._runtime.runtime" for t, _ in GRAPH["wgarray._runtime.device"])


def test_package_kernels_launch_through_records():
    """Inside the package every kernel is compiled from a launch record (``rt.compile``)
    and dispatched by name (``rt.launch``); the list-based ``rt.kernel`` / ``rt.dispatch``
    are for hand-written WGSL outside it (benchmarks)."""
    bad = []
    for name, path in MODULES.items():
        if name.startswith("wgarray._runtime"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("kernel", "dispatch")
                    and isinstance(node.func.value, (ast.Name, ast.Attribute))):
                bad.append(f"{name}:{node.lineno} .{node.func.attr}(...)")
    assert not bad, bad
