"""The package layers: a lower layer never imports a higher one, no module imports itself back, no
private name crosses modules, and the runtime uses only the compiler's public API.

Every import counts, at module level or inside a function. Layers, highest first (a `|` pair shares
a rank; the cycle check keeps imports between them one way):

    cli → sweeps | export → reports | viewer → search | external | gym → agent | audit → scoring → run → actions | models
        → sandbox | data → build → kernel (the modules directly in mlab/)
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNTIME, COMPILER = REPO / "runtime", REPO / "compiler"

RANKS = [("kernel",), ("build",), ("sandbox", "data"), ("actions", "models"), ("run",), ("scoring",),
         ("agent", "audit"), ("search", "external", "gym"), ("reports", "viewer"), ("sweeps", "export"), ("cli",)]
RANK = {layer: rank for rank, layers in enumerate(RANKS) for layer in layers}
# what the runtime may import from the compiler
MLABC_PUBLIC = {"mlabc", "mlabc.api"}


def modules(root: Path, package: str) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MLAB = modules(RUNTIME, "mlab")


def imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every import in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub, None, node.lineno) if sub in MLAB else (base, alias.name, node.lineno))
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 or module in ("mlab.cli",) or (len(parts) == 2 and parts[1] in RANK):
        return parts[1]
    return "build" if module == "mlab.build" else "kernel"


def edges() -> dict[str, set[str]]:
    graph = {name: set() for name in MLAB}
    for name, path in MLAB.items():
        for target, _, _ in imports(name, path):
            if target in MLAB and target != name:
                graph[name].add(target)
    return graph


def test_every_runtime_module_has_a_known_layer():
    assert all(layer(name) in RANK for name in MLAB)
    assert {layer(name) for name in MLAB} == set(RANK), "a layer without modules: update RANKS"


def test_no_lower_layer_imports_a_higher_one():
    upward = [f"{name} ({layer(name)}) imports {target} ({layer(target)}), line {line}"
              for name, path in MLAB.items() for target, _, line in imports(name, path)
              if target in MLAB and RANK[layer(target)] > RANK[layer(name)]]
    assert upward == []


def test_no_import_cycles():
    graph, cycles, state = edges(), [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append(" → ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == []


def test_no_private_name_is_imported_from_another_module():
    private = [f"{name} imports {source}.{imported}, line {line}"
               for name, path in MLAB.items() for source, imported, line in imports(name, path)
               if imported and imported.startswith("_") and not imported.startswith("__")
               and source.split(".")[0] in ("mlab", "mlabc") and source != name]
    assert private == []


def test_the_runtime_imports_only_the_public_api_of_the_compiler():
    used = [f"{name} imports {source}, line {line}" for name, path in MLAB.items()
            for source, _, line in imports(name, path)
            if source.split(".")[0] == "mlabc" and source not in MLABC_PUBLIC]
    assert used == []


def test_the_compiler_never_imports_the_runtime():
    found = []
    for path in sorted(COMPILER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(REPO)}:{node.lineno} imports {n}" for n in names
                      if n == "mlab" or n.startswith("mlab.")]
    assert found == []


def test_the_kernel_stays_small():
    assert len([p for p in RUNTIME.glob("*.py")]) <= 13
