"""Load .mlab files and everything they `use`, into one Program.

Each file is read and parsed once. `use std "x"` names std/x.mlab: the standard library
shipped with mlab, or a copy of it in a `std/` folder beside (or holding) a file being loaded,
such as the tasks/ folder of a checkout or a copied tasks/ folder. One program uses one
standard library, so a copy and the installed one are never both loaded (their declarations
would clash). `use "path"` is relative to the importing file. Missing files and cycles are
diagnostics at the `use` that names them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import ast as A
from ..diagnostics import Diagnostic, DiagnosticError, SourceCache, Span, display_path
from ..resources import std_dir

SUFFIX = ".mlab"
YAML_SUFFIX = ".mlab.yaml"  # the same declarations written as YAML (yaml_form.py)


@dataclass
class Program:
    """All loaded files, their imports, and the diagnostics met while loading."""

    modules: dict[str, A.Module] = field(default_factory=dict)
    imports: dict[str, list[str]] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: SourceCache = field(default_factory=SourceCache)
    raw: dict[str, bytes] = field(default_factory=dict)
    std: Path | None = None  # the standard library's folder; None: the one shipped with mlab

    def visible_files(self, path: str) -> set[str]:
        """The file itself and every file it uses, directly or not."""
        seen: set[str] = set()
        stack = [path]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            stack.extend(self.imports.get(current, []))
        return seen

    def decls(self):
        """Every declaration with the path of its file, in load order."""
        for path, module in self.modules.items():
            for decl in module.decls:
                yield path, decl


def expand_paths(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Files named, plus *.mlab and *.mlab.yaml files under folders named; and the names that do not exist."""
    files, missing = [], []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.name.endswith((SUFFIX, YAML_SUFFIX)) and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(name)
    return files, missing


def local_std(files: list[Path]) -> Path | None:
    """The `std/` folder of .mlab files beside (or holding) the first file that has one, unless
    it is the shipped standard library."""
    shipped = std_dir().resolve()
    for file in files:
        parent = file.resolve().parent
        for folder in (parent, parent / "std") if parent.name == "std" else (parent / "std",):
            if folder != shipped and folder.is_dir() and any(folder.glob(f"*{SUFFIX}")):
                return folder
    return None


def load_program(files: list[Path]) -> Program:
    program = Program(std=local_std(files))
    for file in files:
        key = display_path(file.resolve())
        program.roots.append(key)
        _load(program, file.resolve(), stack=[])
    return program


def _load(program: Program, path: Path, stack: list[str], at: Span | None = None) -> None:
    if path.name.endswith(YAML_SUFFIX):
        from ..yaml.form import parse_yaml_bytes as parse_bytes
    else:
        from ..ast_cache import parse_module as parse_bytes  # unchanged files are not parsed again

    key = display_path(path)
    if key in program.modules or key in program.imports:
        return
    program.imports[key] = []
    try:
        data = path.read_bytes()
    except OSError as error:
        program.diagnostics.append(Diagnostic("E204", f"cannot read {key}: {error.strerror or error}", at))
        return
    program.raw[key] = data
    program.sources.texts[key] = data.decode("utf-8", errors="replace")
    try:
        module = parse_bytes(data, key)
    except DiagnosticError as error:
        program.diagnostics.extend(error.diagnostics)
        return
    program.modules[key] = module
    for use in module.uses:
        target = _resolve_use(program, use, path)
        if target is None:
            continue
        target_key = display_path(target)
        if target_key in stack + [key]:
            cycle = " -> ".join(stack[stack.index(target_key):] + [key, target_key]) \
                if target_key in stack else f"{key} -> {key}"
            program.diagnostics.append(Diagnostic(
                "E202", f"import cycle: {cycle}", use.target.span,
                hint="move the shared declarations into a file both can use"))
            continue
        program.imports[key].append(target_key)
        _load(program, target, stack + [key], at=use.target.span)


def std_release(folder: Path) -> int:
    """The release of the standard library in `folder` (its release.json), 0 when it has none."""
    import json

    try:
        return int(json.loads((folder / "release.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def shown_since(folder: Path, pinned: int) -> set[str]:
    """The actions the standard agents came to show in the releases after `pinned` (release.json's
    `shows`): what a file pinned to that release does not inherit."""
    import json

    try:
        shows = json.loads((folder / "release.json").read_text(encoding="utf-8")).get("shows", {})
        return {action for release, actions in shows.items() if int(release) > pinned for action in actions}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()


def _check_pin(program: Program, use: A.Use, folder: Path) -> None:
    """`use std "agents" version N`: a release this library has not reached is refused (E205); an
    earlier one compiles against this release, less the actions its agents came to show since
    (`shown_since`), so that a pinned file never breaks; its other changes are located in the file."""
    have, pinned = std_release(folder), use.version.value
    if pinned > have or pinned < 1:
        program.diagnostics.append(Diagnostic(
            "E205", f"the standard library has no release {pinned}: this one is release {have}", use.version.span,
            hint=f"pin a release from 1 to {have} (docs/std-library.md lists them), or use a newer mlab"))


def _resolve_use(program: Program, use: A.Use, importer: Path) -> Path | None:
    name = use.target.value
    if use.std:
        folders = ([program.std] if program.std else []) + [std_dir()]
        candidates = sorted({p.name[: -len(SUFFIX)] for folder in folders for p in folder.glob(f"*{SUFFIX}")})
        # A module the copy lacks comes from the shipped library.
        target = next((f / f"{name}{SUFFIX}" for f in folders if (f / f"{name}{SUFFIX}").is_file()), None)
        if target is None:
            program.diagnostics.append(Diagnostic(
                "E203", f"the standard library has no module {name!r}", use.target.span,
                hint="available: " + ", ".join(candidates)))
            return None
        if use.version is not None:
            _check_pin(program, use, target.parent)
        return target.resolve()
    target = (importer.parent / name).resolve()
    if target.is_dir():
        program.diagnostics.append(Diagnostic(
            "E204", f"cannot read {name!r}: it is a folder", use.target.span,
            hint="`use` takes a .mlab file; name a file inside the folder"))
        return None
    for suffix in (SUFFIX, YAML_SUFFIX):  # `use "name"` finds name.mlab or name.mlab.yaml
        if not target.is_file() and not name.endswith(suffix) and target.with_name(target.name + suffix).is_file():
            target = target.with_name(target.name + suffix)
    if not target.is_file():
        program.diagnostics.append(Diagnostic(
            "E201", f"cannot find {name!r}" + (f" (looked for {display_path(target)})"
                                               if display_path(target) != name else ""), use.target.span,
            hint="a `use` path is relative to the file that contains it"))
        return None
    return target
