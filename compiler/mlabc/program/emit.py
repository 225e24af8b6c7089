"""Write a checked program as a build folder, validated against spec/.

build/ holds tasks/<task>/task.yaml, agents/<agent>/{agent.json, actions.json,
templates/*.j2}, experiments/<name>.yaml and manifest.json. Output is
byte-identical when the sources are unchanged.
"""
from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from .. import __version__
from .check import Compiled
from ..resources import BuildWriteError  # noqa: F401 (raised here; defined with the file locations so the CLI need not import this module)
from ..lower.versions import scored_digests
from ..schemas import problems, stamp

OWNED = ("tasks", "agents", "experiments", "manifest.json")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _literal_strings(value):
    """Multi-line strings as YAML block scalars, so task.yaml stays readable."""
    if isinstance(value, dict):
        return {k: _literal_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal_strings(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def to_yaml(document: dict) -> str:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 100
    stream = io.StringIO()
    yaml.dump(_literal_strings(document), stream)
    return stream.getvalue()


def to_json(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def task_inputs(ir: dict) -> list[Path]:
    """Files a compiled task depends on besides its .mlab source."""
    root = Path(ir["root"])
    paths: list[Path] = []
    if ir["starter"] and (root / ir["starter"]).is_dir():
        paths += [p for p in (root / ir["starter"]).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for variant in ir["data"].values():
        source = variant["source"] or {}
        target = root / source.get("file", source.get("value", ""))
        if source.get("kind") in ("csv", "parquet", "generate") and target.is_file():
            paths.append(target)
        elif source.get("kind") == "folder" and target.is_dir():
            paths += [p for p in target.rglob("*") if p.is_file()]
        prepare = (variant.get("prepare") or {}).get("file")
        if prepare and (root / prepare).is_file():
            paths.append(root / prepare)
    for extra in (ir["demo"], (ir["evaluator"] or {}).get("file")):
        if extra and (root / extra).is_file():
            paths.append(root / extra)
    return sorted(set(paths))


def plan_build(compiled: Compiled) -> dict[str, str]:
    """Every artifact to write: relative path → text. Raises on a schema violation (a compiler bug)."""
    files: dict[str, str] = {}

    def add(path: str, schema_name: str, body: dict, render=to_json) -> None:
        document = stamp(schema_name, body)
        found = problems(schema_name, document)
        if found:
            raise AssertionError(f"mlabc produced an invalid {schema_name} artifact {path}:\n  " + "\n  ".join(found))
        files[path] = render(document)

    for name, (ir, path) in sorted(compiled.tasks.items()):
        add(f"tasks/{name}/task.yaml", "task", dict(ir, root=str(Path(path).resolve().parent)), to_yaml)
    for name, agent in sorted(compiled.agents.items()):
        add(f"agents/{name}/agent.json", "agent", agent.ir)
        add(f"agents/{name}/actions.json", "actions", agent.actions)
        for template, text in sorted(agent.templates.items()):
            files[f"agents/{name}/templates/{template}"] = text
    for name, (ir, path) in sorted(compiled.experiments.items()):
        add(f"experiments/{name}.yaml", "experiment", ir, to_yaml)
    return files


def manifest(compiled: Compiled, files: dict[str, str]) -> dict:
    program = compiled.program
    sources = {str(Path(p).resolve()): sha256(data) for p, data in sorted(program.raw.items())}
    inputs: dict[str, str] = {}
    for ir, path in compiled.tasks.values():
        for file in task_inputs(dict(ir, root=str(Path(path).resolve().parent))):
            inputs[str(file)] = sha256(file.read_bytes())

    def entry(prefix: str, source: str) -> dict:
        return {"source": str(Path(source).resolve()), "artifacts": sorted(f for f in files if f.startswith(prefix))}

    def task_entry(name: str, ir: dict, source: str) -> dict:
        return dict(entry(f"tasks/{name}/", source), version=ir.get("version", 1),
                    scored=scored_digests(ir, Path(source).resolve().parent))

    return {
        "compiler": "mlabc", "compiler_version": __version__,
        "sources": sources, "inputs": dict(sorted(inputs.items())),
        "artifacts": {p: sha256(t.encode()) for p, t in sorted(files.items())},
        "tasks": {n: task_entry(n, ir, p) for n, (ir, p) in sorted(compiled.tasks.items())},
        "agents": {n: entry(f"agents/{n}/", a.path) for n, a in sorted(compiled.agents.items())},
        "experiments": {n: entry(f"experiments/{n}.", p) for n, (_, p) in sorted(compiled.experiments.items())},
    }


def write_build(compiled: Compiled, out: Path) -> dict:
    """Replace the build in `out` by this program's; returns the manifest."""
    files = plan_build(compiled)
    document = stamp("manifest", manifest(compiled, files))
    found = problems("manifest", document)
    if found:
        raise AssertionError("mlabc produced an invalid manifest:\n  " + "\n  ".join(found))
    if out.exists() and not out.is_dir():
        raise BuildWriteError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").is_file():
        raise BuildWriteError(f"{out} is not empty and holds no mlab build (no manifest.json); "
                         "refusing to overwrite it — choose another folder with -o")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for owned in OWNED:
            target = out / owned
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        for rel, text in files.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (out / "manifest.json").write_text(to_json(document), encoding="utf-8")
    except OSError as error:
        raise BuildWriteError(f"cannot write the build to {out}: {error.strerror or error}") from None
    return document
