"""No import cycle between dpsynth modules, counting the imports inside functions too (issue 23).

import-linter checks the layers between folders; inside a folder two modules could still import each other,
one of them from inside a function to dodge the circular-import error (as ``ireduct`` and ``ireduct_queries``
once did).  This test reads every module with ``ast`` (every ``import`` statement, wherever it is) and looks
for a strongly connected component of more than one module.  An import of ``a.b.c`` is an edge to ``a.b.c``
only, not to the packages ``a`` and ``a.b`` that Python initialises on the way (as import-linter counts it).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``package_dir`` (a package's ``__init__.py`` is it)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement may refer to (module, or module.attribute for ``from``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[: len(package) - node.level + 1]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``files`` it imports anywhere in its body (functions and classes included)."""
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):  # `from a import b`: module a.b if it exists, else module a
                base = targets.pop()
                targets = [t if t in files else base for t in targets]
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_dpsynth_modules():
    files = module_files(ROOT / "dpsynth")
    assert "dpsynth.algorithms.ireduct.core" in files and "dpsynth.privacy.accountant" in files
    found = cycles(import_graph(files))
    assert not found, f"import cycles between dpsynth modules (function-level imports count): {found}"


def test_the_check_finds_a_function_level_cycle(tmp_path: Path):
    """The detector can fail: a cycle hidden behind a function-level (and a relative) import is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n    return g\n")
    (pkg / "c.py").write_text("import math\n\ndef g():\n    import pkg.a\n    return pkg.a\n")
    (pkg / "d.py").write_text("from pkg import a, c\n")  # imports into the cycle, is not part of it
    graph = import_graph(module_files(pkg))
    assert graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg.a", "pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert cycles({"x": {"y"}, "y": set()}) == []
