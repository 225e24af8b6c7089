"""mlabc's layout: no import cycle, no private name across modules, a small flat kernel.

The import graph counts imports inside functions too: a lazy import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

from mlabc_cases import REPO_ROOT

COMPILER = REPO_ROOT / "compiler" / "mlabc"


def _module(path: Path) -> str:
    parts = path.relative_to(COMPILER).with_suffix("").parts
    return ".".join(("mlabc", *(parts[:-1] if parts[-1] == "__init__" else parts)))


MODULES = {_module(p): p for p in COMPILER.rglob("*.py") if "__pycache__" not in p.parts}


def _imports(module: str) -> list[tuple[str, str]]:
    """(imported module, imported name) for each `from ... import name` of mlabc in `module`."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "mlabc":
                found += [(target, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.split(".")[0] == "mlabc"]
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        edges = set()
        for target, name in _imports(module):
            edges.add(f"{target}.{name}" if f"{target}.{name}" in MODULES else target)
        graph[module] = edges & MODULES.keys()
    return graph


def test_no_import_cycles():
    graph, state, cycles = _graph(), {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target] if target in path else [module, target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # a package's __init__ re-exporting its own modules is not a cycle of the code
    cycles = [c for c in cycles if not all(m == c[0] or m.startswith(c[0] + ".") for m in c)]
    assert cycles == []


def test_no_private_name_crosses_a_module():
    crossing = [(module, target, name) for module in MODULES for target, name in _imports(module)
                if name.startswith("_") and not name.startswith("__") and target != module]
    assert crossing == []


def test_the_kernel_stays_flat_and_small():
    assert len(list(COMPILER.glob("*.py"))) <= 20
