"""Load compiled builds: validate every artifact, refuse foreign or stale ones, find tasks.

A build folder (written by `mlabc compile`) holds manifest.json, tasks/<task>/task.yaml and
agents/<agent>/{agent.json, actions.json, templates/*.j2}. The manifest records the SHA-256 of
every source and input file the build was made from; a build whose files changed since is
stale and refused when named explicitly. A task named by name or by `.mlab` path is compiled
into the build cache first, so it is never stale.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mlab.bounded_json import UntrustedFile, loads as bounded_loads, read_bytes as bounded_read
from mlab.cache import builds_cache, file_sha256, recall, remember
from mlab.documents.agent import Actions, Agent
from mlab.documents.task import Task, Variant
from mlab.documents.versions import current_form
from mlab.errors import BuildError, UnknownName, closest_hint

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class TaskBuild:
    """A compiled task: its typed view (mlab.documents.Task) and the build it came from.

    `document` is task.yaml as validated, kept only to be handed whole to the compiler's data
    model or written out again (a Harbor export); the runtime reads the view, never its keys."""

    name: str
    view: Task
    build: "Build"
    document: dict = field(compare=False, repr=False)

    @classmethod
    def of(cls, name: str, document: dict, build: "Build") -> "TaskBuild":
        """A task from its validated task.yaml document: its view is made here, once."""
        return cls(name, Task.of(document), build, document)

    @property
    def root(self) -> Path:
        """The folder of the task's .mlab source; relative paths in the task resolve here."""
        return Path(self.view.root)

    @property
    def variants(self) -> list[str]:
        return sorted(self.view.data)

    def variant(self, name: str) -> Variant:
        if name not in self.view.data:
            raise BuildError(f"task {self.name} has no data variant {name!r}; "
                             f"it declares: {', '.join(self.variants)}")
        return self.view.data[name]


@dataclass(frozen=True)
class AgentBuild:
    """A compiled agent: its typed view (mlab.documents.Agent), its action table and templates."""

    name: str
    view: Agent
    actions: Actions
    templates: dict[str, str]
    build: "Build"

    @classmethod
    def of(cls, name: str, document: dict, actions: dict, templates: dict[str, str], build: "Build") -> "AgentBuild":
        """An agent from its validated agent.json and actions.json documents: their views are made here, once."""
        return cls(name, Agent.of(document), Actions.of(actions), templates, build)


@dataclass(frozen=True)
class Build:
    """A loaded, validated build folder; tasks and agents are read on first use."""

    dir: Path
    manifest: dict
    digest: str
    _loaded: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def task_names(self) -> list[str]:
        return sorted(self.manifest["tasks"])

    @property
    def agent_names(self) -> list[str]:
        return sorted(self.manifest["agents"])

    def task(self, name: str) -> TaskBuild:
        if name not in self.manifest["tasks"]:
            raise UnknownName(f"the build in {self.dir} has no task {name!r}{closest_hint(name, self.task_names)}; "
                              f"it has: {', '.join(self.task_names) or 'none'}")
        key = ("task", name)
        if key not in self._loaded:
            doc = self._document(f"tasks/{name}/task.yaml", "task", _parse_yaml)
            self._loaded[key] = TaskBuild.of(name, doc, self)
        return self._loaded[key]

    def agent(self, name: str) -> AgentBuild:
        if name not in self.manifest["agents"]:
            raise UnknownName(f"the build in {self.dir} has no agent {name!r}{closest_hint(name, self.agent_names)}; "
                              f"it has: {', '.join(self.agent_names) or 'none'}")
        key = ("agent", name)
        if key not in self._loaded:
            doc = self._document(f"agents/{name}/agent.json", "agent", _parse_json)
            actions = self._document(f"agents/{name}/actions.json", "actions", _parse_json)
            templates = {}
            for rel in self.manifest["agents"][name]["artifacts"]:
                if rel.endswith(".j2"):
                    templates[Path(rel).stem] = _parse_text(_read_bytes(self.dir / rel), self.dir / rel)
            self._loaded[key] = AgentBuild.of(name, doc, actions, templates, self)
        return self._loaded[key]

    def _document(self, rel: str, kind: str, parse) -> dict:
        """An artifact's document, validated against spec/<kind>.schema.json: read from the store
        of validated documents when the file is the one the manifest records (mlab.cache),
        else parsed and validated here."""
        path = self.dir / rel
        data = _read_bytes(path)
        digest = hashlib.sha256(data).hexdigest()
        recorded = digest == self.manifest["artifacts"].get(rel)
        if recorded and (doc := recall(kind, digest)) is not None:
            return doc
        doc, found = current_form(kind, parse(data, path))   # by the rules of the version it records
        if found:
            raise BuildError(_mismatch(kind, path, found))
        if recorded:
            remember(kind, digest, doc)
        return doc

    def compile_command(self) -> str:
        """The command that rebuilds this folder from its sources."""
        from mlabc.resources import std_dir

        std = str(std_dir().resolve())
        sources = sorted({entry["source"] for kind in ("tasks", "agents", "experiments")
                          for entry in self.manifest[kind].values()})
        # The standard library comes in through `use std`, so the command need not name it.
        named = [s for s in sources if not s.startswith(std + os.sep)] or sources
        return f"mlabc compile {' '.join(named)} -o {self.dir}"


def _read_bytes(path: Path) -> bytes:
    """A build file's bytes, read as a run folder's (it may be a run's copy from elsewhere: mlab.bounded_json)."""
    try:
        return bounded_read(path)
    except FileNotFoundError:
        raise BuildError(f"{path} is missing from the build; rebuild it with `mlabc compile ... -o "
                         f"{path.parent}`") from None
    except (OSError, UntrustedFile) as error:   # UntrustedFile: a link, a named pipe, too large
        raise BuildError(f"cannot read {path}: {error}") from None


def _parse_text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BuildError(f"cannot read {path}: {error}") from None


def _parse_json(data: bytes, path: Path) -> dict:
    try:
        doc = bounded_loads(data, what=str(path))   # bounded: a build copy may come from elsewhere
    except ValueError as error:  # UnicodeDecodeError included
        raise BuildError(f"{path} is not valid JSON ({error}); rebuild with `mlabc compile`") from None
    if not isinstance(doc, dict):
        raise BuildError(f"{path} does not hold a JSON object; rebuild with `mlabc compile`")
    return doc


def _parse_yaml(data: bytes, path: Path) -> dict:
    from ruamel.yaml import YAML, YAMLError

    try:
        doc = YAML(typ="safe").load(_parse_text(data, path))
    except (YAMLError, RecursionError) as error:   # RecursionError: a hostile copy nested thousands of levels deep
        raise BuildError(f"{path} is not valid YAML ({error}); rebuild with `mlabc compile`") from None
    if not isinstance(doc, dict):
        raise BuildError(f"{path} does not hold a task; rebuild with `mlabc compile`")
    return doc


def _validate(schema_name: str, doc: dict, path: Path) -> None:
    from mlabc.schemas import problems

    found = problems(schema_name, doc)
    if found:
        raise BuildError(_mismatch(schema_name, path, found))


def _mismatch(schema_name: str, path: Path, found: list[str]) -> str:
    return (f"{path} does not match spec/{schema_name}.schema.json (was it made by another mlabc?):\n  "
            + "\n  ".join(found[:10]))


def compiler_version() -> str:
    from mlabc import __version__

    return __version__


def stale_files(manifest: dict) -> list[str]:
    """Source and input files of a build that changed or vanished since it was compiled."""
    stale = []
    for group in ("sources", "inputs"):
        for name, digest in manifest.get(group, {}).items():
            path = Path(name)
            try:
                if file_sha256(path) != digest:
                    stale.append(f"{name} (changed)")
            except FileNotFoundError:
                stale.append(f"{name} (missing)")
            except OSError as error:
                stale.append(f"{name} (unreadable: {error.strerror})")
    return stale


def load_build(folder: Path, *, check_fresh: bool = True) -> Build:
    """Load and validate a build folder; refuse another compiler's build or a stale one.

    `check_fresh=False` reads a run's build copy, which cannot be recompiled: it is neither
    checked for staleness nor refused for another mlabc's version, since each of its documents is
    checked by the rules of the schema version it records (mlab.documents.versions)."""
    folder = Path(folder).resolve()
    if not (folder / MANIFEST).is_file():
        hint = " (it looks like a task folder inside a build; give the build folder)" \
            if (folder / "task.yaml").is_file() else ""
        raise BuildError(f"{folder} holds no mlab build (no {MANIFEST}){hint}; "
                         "make one with `mlabc compile <paths> -o <dir>`")
    raw = _read_bytes(folder / MANIFEST)   # bounded: a run's build copy may come from elsewhere
    try:
        manifest = bounded_loads(raw, what=str(folder / MANIFEST))
    except ValueError as error:
        raise BuildError(f"{folder / MANIFEST} is not valid JSON ({error}); recompile with "
                         f"`mlabc compile <paths> -o {folder}`") from None
    if not isinstance(manifest, dict):
        raise BuildError(f"{folder / MANIFEST} is not a build manifest")
    version, made_by = manifest.get("schema_version"), manifest.get("compiler_version")
    if version != SCHEMA_VERSION or (check_fresh and made_by != compiler_version()):
        raise BuildError(
            f"the build in {folder} was made by mlabc {made_by} (schema version {version}), but this "
            f"runtime reads builds of mlabc {compiler_version()} (schema version {SCHEMA_VERSION}); "
            f"recompile it with `mlabc compile <paths> -o {folder}`")
    digest = hashlib.sha256(raw).hexdigest()
    if recall("manifest", digest) is None:  # a manifest validated once is not validated again
        _validate("manifest", manifest, folder / MANIFEST)
        remember("manifest", digest, manifest)
    build = Build(folder, manifest, digest)
    if check_fresh:
        stale = stale_files(manifest)
        if stale:
            shown = "\n  ".join(stale[:10]) + (f"\n  ... and {len(stale) - 10} more" if len(stale) > 10 else "")
            raise BuildError(f"the build in {folder} is stale; these files changed since it was "
                             f"compiled:\n  {shown}\nrebuild it with `{build.compile_command()}`")
        modified = _modified_artifacts(folder, manifest)
        if modified:
            raise BuildError(f"the build in {folder} was edited after it was compiled "
                             f"({', '.join(modified[:5])}); rebuild it with `{build.compile_command()}`")
    return build


def _modified_artifacts(folder: Path, manifest: dict) -> list[str]:
    out = []
    for rel, digest in manifest["artifacts"].items():
        try:
            if file_sha256(folder / rel) != digest:
                out.append(f"{rel} changed")
        except OSError:
            out.append(f"{rel} missing")
    return out


# -- finding and compiling tasks ------------------------------------------------------------

def task_search_dirs() -> list[Path]:
    """Where tasks named by name are looked for: ./tasks, then the bundled tasks."""
    from mlabc.resources import tasks_dir

    dirs = [Path("tasks").resolve()] if Path("tasks").is_dir() else []
    bundled = tasks_dir().resolve()
    return dirs + ([bundled] if bundled not in dirs else [])


def task_sources() -> list[Path]:
    """The .mlab files at the top of ./tasks, then those of the bundled tasks that no local file
    shadows: one of the same file name, or one declaring a task of the bundled file's name (a
    copy of the bundled folder, or of one task, replaces the bundled files instead of clashing
    with them). A bundled file that uses a shadowed one is left out with it."""
    dirs = task_search_dirs()
    local = sorted(dirs[0].glob("*.mlab")) if len(dirs) > 1 else []
    bundled = sorted(dirs[-1].glob("*.mlab"))
    shadowed = {path.name for path in bundled if path.name in {own.name for own in local} or any(
        _declares_task(own, own.stat().st_mtime, source_name(path)) for own in local)}
    kept = [path for path in bundled if path.name not in shadowed
            and not {Path(used).name for used in _USE.findall(_text(path))} & shadowed]
    return local + kept


_USE = re.compile(r'^\s*use\s+"([^"]+)"', re.MULTILINE)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


@functools.cache
def _declares_task(path: Path, mtime: float, name: str) -> bool:
    return re.search(rf"^\s*task\s+{re.escape(name)}\s*\{{", _text(path), re.MULTILINE) is not None


SOURCE_SUFFIXES = (".mlab", ".mlab.yaml")


def source_name(path: Path) -> str:
    """`house-price` for house-price.mlab and house-price.mlab.yaml."""
    name = path.name
    for suffix in SOURCE_SUFFIXES[::-1]:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def source_files(folder: Path, recursive: bool = False) -> list[Path]:
    """The .mlab and .mlab.yaml files of a folder."""
    pattern = folder.rglob if recursive else folder.glob
    return sorted(p for suffix in SOURCE_SUFFIXES for p in pattern(f"*{suffix}") if p.is_file())


def find_task_source(name: str) -> Path:
    """The .mlab file that declares task `name`: in ./tasks, then in the bundled tasks, the file
    <name>.mlab first, else any file declaring it (so a local declaration shadows a bundled one)."""
    dirs = task_search_dirs()
    for folder in dirs:
        for suffix in SOURCE_SUFFIXES:
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
        for candidate in source_files(folder, recursive=True):
            if _declares_task(candidate, candidate.stat().st_mtime, name):
                return candidate
    known = sorted({source_name(p) for folder in dirs for p in source_files(folder)} - {"experiments"})
    raise UnknownName(f"no task named {name!r}{closest_hint(name, known)} in {', '.join(map(str, dirs))}; "
                     f"known: {', '.join(known) or 'none'} (or give a .mlab path or a build folder)")


def compile_into_cache(sources: list[Path]) -> Build:
    """Compile .mlab files into the build cache (reusing a fresh earlier build)."""
    from mlabc.api import compile_paths
    from mlabc.diagnostics import render_all
    from mlabc.resources import BuildWriteError

    resolved = sorted(str(Path(s).resolve()) for s in sources)
    key = hashlib.sha256("\n".join(resolved).encode()).hexdigest()[:16]
    out = builds_cache() / key
    if (out / MANIFEST).is_file():
        try:
            return load_build(out)
        except BuildError:
            pass  # stale or foreign: recompile below
    # Compile next to the cache entry and swap it in, so a process reading the entry never
    # sees a half-written build (runs of a sweep may start together).
    try:
        builds_cache().mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-new-", dir=builds_cache()))
        retired = staging.with_name(staging.name.replace("-new-", "-old-"))
    except OSError as error:
        raise BuildError(f"cannot write the build cache in {builds_cache()}: {error.strerror or error}") from None
    try:
        compiled, manifest = compile_paths(resolved, staging)
        if manifest is None:
            errors = [d for d in compiled.diagnostics if d.severity == "error"]
            raise BuildError(f"{', '.join(resolved)} does not compile ({len(errors)} "
                             f"error{'s' if len(errors) != 1 else ''}):\n"
                             + render_all(compiled.diagnostics, compiled.program.sources))
        try:
            os.rename(out, retired)  # the stale entry, if any
        except OSError:
            pass
        try:
            os.rename(staging, out)
        except OSError:
            pass  # another process put its (identical) build there first
    except BuildWriteError as error:
        raise BuildError(f"cannot write the build cache: {error}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)
    return load_build(out)


def _only_task(build: Build, described: str) -> TaskBuild:
    names = build.task_names
    if len(names) != 1:
        raise BuildError(f"{described} holds {len(names)} tasks ({', '.join(names) or 'none'}); "
                         "name one, e.g. `mlab prepare TASK --build DIR`")
    return build.task(names[0])


def resolve_task(spec: str, build_dir: Path | None = None) -> TaskBuild:
    """A task given by name, by .mlab path or as a build folder; with build_dir, from that build.

    A build given explicitly must be fresh; a name or .mlab path is compiled into the cache.
    """
    if build_dir is not None:
        build = load_build(build_dir)
        name = source_name(Path(spec)) if spec.endswith(SOURCE_SUFFIXES) else spec
        return build.task(name)
    path = Path(spec)
    if path.is_dir():
        if (path / MANIFEST).is_file():
            return _only_task(load_build(path), str(path))
        if (path / "task.yaml").is_file() and (path.parent.parent / MANIFEST).is_file():
            return load_build(path.parent.parent).task(path.name)
        raise BuildError(f"{path} is a folder but holds no mlab build (no {MANIFEST})")
    if spec.endswith(SOURCE_SUFFIXES) or os.sep in spec:
        if not path.is_file():
            raise BuildError(f"no such .mlab file: {spec}")
        return _only_task(compile_into_cache([path]), str(path))
    source = find_task_source(spec)
    return compile_into_cache([source]).task(spec)
