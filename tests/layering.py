"""The layer checker behind tests/test_layers.py: every import of a package's modules, resolved to
the module that defines what is imported, checked against an order of layers.

An import counts wherever it is written (module level or inside a function) and however it is
written:

- `import a.b`, `from a import b` (a module, or a name of `a`), relative or not;
- a name a package's `__init__` re-exports (`from .m import n`, or a lazy table of
  name → module such as `_NAMES = {"n": "m"}`) counts as an import of the module defining it;
- a string import, `importlib.import_module("a.b")`, or `import_module(f"a.{x}")` completed by a
  table of module names in the same module (`COMMANDS = {"run": "run"}`): one import of each;
- a table of module names alone (a dict whose values all name modules beside it, as lazy
  tables do) counts as importing them.

A string import whose module cannot be read from the source is itself a violation: the check
must see every edge.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Import:
    target: str  # the module imported (after re-exports are followed)
    name: str | None  # the name imported from it, or None for a module
    line: int
    how: str  # "import", "re-export", "string", "table"


@dataclass
class Tree:
    """The modules of one package folder: dotted name → file."""

    package: str
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    _parsed: dict[str, ast.Module] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for path in sorted(self.root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = [self.package, *path.relative_to(self.root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            self.modules[".".join(parts)] = path

    def is_package(self, name: str) -> bool:
        return name in self.modules and self.modules[name].name == "__init__.py"

    def parsed(self, name: str) -> ast.Module:
        if name not in self._parsed:
            self._parsed[name] = ast.parse(self.modules[name].read_text(encoding="utf-8"))
        return self._parsed[name]

    def home(self, name: str) -> str:
        """The package a module's relative imports start from."""
        return name if self.is_package(name) else name.rpartition(".")[0]


def _absolute(tree: Tree, name: str, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    parts = tree.home(name).split(".")
    parts = parts[: len(parts) - level + 1]
    return ".".join(parts + ([module] if module else []))


def _tables(tree: Tree, name: str) -> list[tuple[dict[str, str], int]]:
    """The module's dict literals whose values are all strings naming modules beside it:
    (name → module, line)."""
    found = []
    home = tree.home(name)
    for node in ast.walk(tree.parsed(name)):
        if not isinstance(node, ast.Dict) or not node.values:
            continue
        if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.keys + node.values):
            continue
        table = {k.value: f"{home}.{v.value.lstrip('.')}" for k, v in zip(node.keys, node.values)}
        if all(module in tree.modules for module in table.values()):
            found.append((table, node.lineno))
    return found


def reexports(tree: Tree, package: str) -> dict[str, str]:
    """Name → the module defining it, for the names a package's `__init__` re-exports."""
    if not tree.is_package(package):
        return {}
    found = {}
    for table, _ in _tables(tree, package):
        found.update(table)
    for node in tree.parsed(package).body:
        if isinstance(node, ast.ImportFrom):
            base = _absolute(tree, package, node.module, node.level)
            for alias in node.names:
                if base in tree.modules and base != package:
                    found[alias.asname or alias.name] = base
    return found


def _resolve(tree: Tree, base: str, name: str, seen: frozenset = frozenset()) -> str:
    """The module that defines `name` as `from base import name` reaches it."""
    if f"{base}.{name}" in tree.modules:
        return f"{base}.{name}"
    defining = reexports(tree, base).get(name)
    if defining is None or defining in seen:
        return base
    return _resolve(tree, defining, name, seen | {base}) if tree.is_package(defining) else defining


def _string_import(node: ast.Call) -> ast.expr | None:
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return node.args[0] if called == "import_module" and node.args else None


def imports(tree: Tree, name: str) -> list[Import]:
    """Every import `name` makes, each resolved to its defining module; a string import that names
    no module this check can see comes back with target "?<source text>"."""
    found: list[Import] = []
    tables = _tables(tree, name)
    for node in ast.walk(tree.parsed(name)):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, None, node.lineno, "import") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(tree, name, node.module, node.level)
            for alias in node.names:
                if f"{base}.{alias.name}" in tree.modules:
                    found.append(Import(f"{base}.{alias.name}", None, node.lineno, "import"))
                    continue
                target = _resolve(tree, base, alias.name) if base.split(".")[0] == tree.package else base
                found.append(Import(target, alias.name, node.lineno, "import" if target == base else "re-export"))
        elif isinstance(node, ast.Call) and (arg := _string_import(node)) is not None:
            found += _string_targets(tree, name, arg, tables)
    if not tree.is_package(name):  # an __init__'s table is read name by name, through _resolve
        for table, line in tables:
            found += [Import(module, None, line, "table") for module in table.values()]
    return found


def _string_targets(tree: Tree, name: str, arg: ast.expr, tables) -> list[Import]:
    line = arg.lineno
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [Import(arg.value, None, line, "string")]
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = arg.values[0].value
        if len(arg.values) == 2 and prefix.endswith("."):
            completions = [m for table, _ in tables for m in table.values() if m.startswith(prefix)]
            if completions:
                return [Import(module, None, line, "string") for module in completions]
    return [Import(f"?{ast.unparse(arg)}", None, line, "string")]


@dataclass
class Layers:
    """An order of layers (lowest first; a tuple holds layers of one rank) and how a module maps
    to its layer."""

    ranks: list[tuple[str, ...]]
    layer_of: object  # Callable[[str], str | None]; None: the module stands above every layer

    def rank(self, module: str) -> int:
        layer = self.layer_of(module)
        if layer is None:
            return len(self.ranks)
        return next(i for i, names in enumerate(self.ranks) if layer in names)


def edges(tree: Tree) -> dict[str, list[Import]]:
    """Each module's imports of the tree's modules. Reading the root package's `__version__` is no
    edge: the root is the entry (its public API names modules of every layer, each loaded on first
    use), and its version is a constant any layer may read."""
    return {name: [i for i in imports(tree, name) if (i.target in tree.modules or i.target.startswith("?"))
                   and not (i.target == tree.package and i.name == "__version__")]
            for name in tree.modules}


def unseen_string_imports(tree: Tree, machinery: frozenset = frozenset()) -> list[str]:
    return [f"{name}:{i.line} imports {i.target[1:]}, which names no module this check can see"
            for name, found in edges(tree).items() for i in found if i.target.startswith("?") and name not in machinery]


def upward(tree: Tree, layers: Layers) -> list[str]:
    return [f"{name} ({layers.layer_of(name)}) imports {i.target} ({layers.layer_of(i.target)}), line {i.line}"
            f"{'' if i.how == 'import' else f' ({i.how})'}"
            for name, found in edges(tree).items() for i in found
            if i.target in tree.modules and layers.rank(i.target) > layers.rank(name)]


def both_ways(tree: Tree, layers: Layers) -> list[str]:
    """Pairs of layers of one rank that import each other."""
    between: dict[tuple[str, str], str] = {}
    for name, found in edges(tree).items():
        for i in found:
            if i.target not in tree.modules:
                continue
            a, b = layers.layer_of(name), layers.layer_of(i.target)
            if a != b and a is not None and b is not None and layers.rank(name) == layers.rank(i.target):
                between.setdefault((a, b), f"{name} → {i.target}, line {i.line}")
    return [f"{a} and {b} import each other: {between[a, b]}; {between[b, a]}"
            for a, b in sorted(between) if a < b and (b, a) in between]


def cycles(tree: Tree) -> list[str]:
    graph = {name: sorted({i.target for i in found if i.target in tree.modules and i.target != name})
             for name, found in edges(tree).items()}
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for target in graph[node]:
            if state.get(target) == "open":
                found.append(" → ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def violations(tree: Tree, layers: Layers, machinery: frozenset = frozenset()) -> list[str]:
    """Everything wrong with the tree's imports under `layers`, one line each. `machinery`: the
    modules that import by a name they are given (lazy re-exports), whose imports are read at
    the tables that call them."""
    unknown = [f"{name} fits no layer" for name in tree.modules
               if layers.layer_of(name) is not None and not any(layers.layer_of(name) in r for r in layers.ranks)]
    return unknown + unseen_string_imports(tree, machinery) + upward(tree, layers) + both_ways(tree, layers) + cycles(tree)
