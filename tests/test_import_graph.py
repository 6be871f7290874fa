"""No import circle under posenc/: the modules import one another in one direction only.

The graph holds every ``import posenc...`` and ``from posenc... import ...`` anywhere in a module's source --
at the top, inside a function, under ``if TYPE_CHECKING`` -- so a lazy import does not hide a cycle.  Relative
imports are resolved against the module's package, ``from posenc.ui import frame`` is an edge to the module
``posenc.ui.frame`` (when that is a module; else to the package ``posenc.ui``), and a package's
``__init__.py`` is a module like any other.  (The package ``__init__`` that Python runs before a submodule is not
an edge: a package that imports its own submodules -- ``posenc/__init__.py`` -- is no circle.)
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "posenc"


def module_files() -> dict[str, Path]:
    """{dotted module name: source file} of every module and package under posenc/."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` names, or its closest enclosing module or package that is one (None outside posenc)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The posenc modules that ``module`` imports anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # "from posenc.ui import frame": the module posenc.ui.frame when there is one, else the package itself
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names]
        else:
            continue
        for name in names:
            if name == "posenc" or name.startswith("posenc."):
                target = _resolve(name, modules)
                if target is not None:
                    found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    out.append(sorted(component))
    return out


def _a_cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through the component's first module, for the failure message (a -> b -> a)."""
    members = set(component)
    start = component[0]
    seen = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return [*seen[node], start]
            if nxt not in seen:
                seen[nxt] = [*seen[node], nxt]
                todo.append(nxt)
    return component  # pragma: no cover


def cycles(graph: dict[str, set[str]]) -> list[str]:
    found = [f"{', '.join(c)} (e.g. {' -> '.join(_a_cycle(c, graph))})" for c in strongly_connected(graph) if len(c) > 1]
    found += [f"{m} -> {m}" for m in sorted(graph) if m in graph[m]]
    return found


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "posenc.ui.quiz" in graph["posenc.ui.frame"]      # from posenc.ui.quiz import ...
    assert "posenc.ui.controls" in graph["posenc.ui.frame"]  # from posenc.ui import compat, controls, md
    assert "posenc.registry" in graph["posenc"]              # a package's __init__ is a module of the graph
    assert all(m.startswith("posenc") for deps in graph.values() for m in deps)


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path):
    pkg = tmp_path / "posenc"
    (pkg / "ui").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ui" / "__init__.py").write_text("")
    (pkg / "ui" / "a.py").write_text("from posenc.ui import b\n")
    (pkg / "ui" / "b.py").write_text("def f():\n    from posenc.ui.a import x\n    return x\n")
    (pkg / "ui" / "c.py").write_text("from . import c\n")
    modules = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {m: imports_of(m, p, modules) for m, p in modules.items()}
    assert cycles(graph) == ["posenc.ui.a, posenc.ui.b (e.g. posenc.ui.a -> posenc.ui.b -> posenc.ui.a)", "posenc.ui.c -> posenc.ui.c"]


def test_no_import_circle_under_posenc():
    found = cycles(import_graph())
    assert not found, "import circle(s) under posenc/ (move what both sides need into a lower module):\n" + "\n".join(found)
