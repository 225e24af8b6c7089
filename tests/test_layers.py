"""The package layers: a lower layer never imports a higher one, two layers of one rank import each
other one way only, no module imports itself back, no private name crosses modules, and the
runtime uses only the compiler's public modules.

Every import counts: at module level or inside a function, through the root package's lazy
public API, and by string (tests/layering.py says how each is read; tests/test_layering.py plants each kind of
violation). Layers, highest first (a `|` pair shares a rank):

    mlab:  the package and api (the entry modules, above every layer) → cli → sweeps | export → reports | viewer → search | external | gym → agent | audit → scoring → run
               → actions | models → sandbox | data → build → documents → kernel (the modules directly in mlab/)
    mlabc: the package, api, cli, __main__ (the entry modules, above every layer) → authoring → program → yaml
               → data_model → lower → kernel (the modules directly in mlabc/)
"""
from __future__ import annotations

import ast
from pathlib import Path

from layering import Layers, Tree, imports, violations

REPO = Path(__file__).resolve().parent.parent
RUNTIME, COMPILER = REPO / "runtime" / "mlab", REPO / "compiler" / "mlabc"

RANKS = [("kernel",), ("documents",), ("build",), ("sandbox", "data"), ("actions", "models"), ("run",), ("scoring",),
         ("agent", "audit"), ("search", "external", "gym"), ("reports", "viewer"), ("sweeps", "export"), ("cli",)]
RANK = {layer: rank for rank, layers in enumerate(RANKS) for layer in layers}
COMPILER_RANKS = [("kernel",), ("lower",), ("data_model",), ("yaml",), ("program",), ("authoring",)]
COMPILER_ENTRY = {"mlabc", "mlabc.api", "mlabc.cli", "mlabc.__main__"}
# what the runtime may import from the compiler: compiling and checking (api), the data model both
# halves use (mlabc.data_model's modules), and the kernel modules that hold a rule both halves follow
MLABC_PUBLIC = {"mlabc", "mlabc.api", "mlabc.resources", "mlabc.units", "mlabc.names", "mlabc.literals",
                "mlabc.cli_start", "mlabc.schemas", "mlabc.diagnostics"}
# the entry modules, above every layer: the package (its public API, docs/api.md) and api (run_task)
ENTRY = {"mlab", "mlab.api"}

MLAB = Tree("mlab", RUNTIME)
MLABC = Tree("mlabc", COMPILER)


def layer(module: str) -> str | None:
    if module in ENTRY:
        return None
    parts = module.split(".")
    if len(parts) > 2 or module in ("mlab.cli",) or (len(parts) == 2 and parts[1] in RANK):
        return parts[1]
    return "build" if module == "mlab.build" else "kernel"


def compiler_layer(module: str) -> str | None:
    if module in COMPILER_ENTRY:
        return None
    parts = module.split(".")
    if parts[1:2] == ["ast"]:
        return "kernel"  # the AST's node modules are one package inside the kernel: every layer reads it
    return parts[1] if len(parts) > 2 or MLABC.is_package(module) and len(parts) == 2 else "kernel"


def test_every_runtime_module_has_a_known_layer():
    assert all(layer(name) in RANK for name in MLAB.modules if name not in ENTRY)
    assert {layer(name) for name in MLAB.modules} - {None} == set(RANK), "a layer without modules: update RANKS"


def test_the_runtime_keeps_its_layers():
    # mlab.scoring.child imports the scoring function its caller names ("module:function"), in a
    # child interpreter: machinery
    assert violations(MLAB, Layers(RANKS, layer), machinery=frozenset({"mlab.scoring.child"})) == []


def test_the_compiler_keeps_its_layers():
    found = {compiler_layer(name) for name in MLABC.modules} - {None}
    assert found == {name for rank in COMPILER_RANKS for name in rank}, "a layer without modules, or a new one"
    assert violations(MLABC, Layers(COMPILER_RANKS, compiler_layer)) == []


def test_no_private_name_is_imported_from_another_module():
    private = [f"{name} imports {i.target}.{i.name}, line {i.line}"
               for tree in (MLAB, MLABC) for name in tree.modules for i in imports(tree, name)
               if i.name and i.name.startswith("_") and not i.name.startswith("__")
               and i.target.split(".")[0] in ("mlab", "mlabc") and i.target != name]
    assert private == []


def test_no_test_imports_a_private_name_of_mlab():
    """A test goes through what the modules offer: a name a test needs is public where it is defined
    (`from mlab.x import _y` is refused; the test files that are deliberately broken are not Python)."""
    private = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        private += [f"{path.relative_to(REPO)}:{node.lineno} imports {node.module}.{alias.name}"
                    for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and not node.level
                    and (node.module or "").split(".")[0] in ("mlab", "mlabc")
                    for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert private == []


def test_the_runtime_imports_only_the_public_modules_of_the_compiler():
    used = [f"{name} imports {i.target}, line {i.line}" for name in MLAB.modules for i in imports(MLAB, name)
            if i.target.split(".")[0] == "mlabc" and i.target not in MLABC_PUBLIC
            and not i.target.startswith("mlabc.data_model")]
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
    # __init__ and api (the entry), build and the kernel's modules (bounded_json: the one bounded decoder, used from trace.py up;
    # text, standard_json and installation: what observation.py and errors.py held beside their own job)
    assert len([p for p in RUNTIME.glob("*.py")]) <= 17


def test_the_runtime_starts_without_the_compiler():
    import subprocess
    import sys

    code = ("import sys, mlab.scoring, mlab.search, mlab.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith('mlabc') or m in ('lark', 'jinja2', 'ruamel')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_only_the_root_packages_export_names():
    """The public API is what `mlab` and `mlabc` export (docs/api.md); a subpackage's `__init__`
    re-exports nothing (no name imported from its own modules, no lazy `__getattr__`), so every
    import names the module that defines what it imports. mlabc.ast is the one namespace: the node
    classes of its five modules are `mlabc.ast.X` everywhere."""
    found = []
    for tree in (MLAB, MLABC):
        for package in tree.modules:
            if not tree.is_package(package) or package in (tree.package, "mlabc.ast"):
                continue
            for i in imports(tree, package):
                if i.name and i.target.startswith(package + ".") and i.line and _at_top(tree, package, i.line):
                    found.append(f"{package} re-exports {i.name} from {i.target}")
            if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.parsed(package).body):
                found.append(f"{package} defines __getattr__")
    assert found == []


def _at_top(tree: Tree, module: str, line: int) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.lineno == line for node in tree.parsed(module).body)
