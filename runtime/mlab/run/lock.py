"""The reproduction lock of a run (lock.json, spec/lock.schema.json) and what differs from it.

Written when `mlab run` starts a run: the build (its digest, the `.mlab` sources', inputs' and
artifacts' digests, the task's scored digests), the resolved models per tier with their
parameters, the seed, the limits, the data variant with its preparation key and a digest of the
prepared files, the package versions and the hardware record. `mlab run --reproduce RUN` runs
from it; `mlab lock --check RUN` compares it with the current checkout (`checkout_rows`), and
`difference_rows` compares two finished runs.
"""
from __future__ import annotations

import hashlib
import json
import platform
import re
import sys
from pathlib import Path

from mlab.errors import MlabError, UsageError

LOCK = "lock.json"
LOCK_SCHEMA_ID = "https://mlab.dev/spec/lock.schema.json"
# What a script's observation says about the time and memory it took (sandbox/runner.py), which no
# rerun repeats exactly: left out when two traces are compared.
MEASURED = re.compile(r"\(\d+(?:\.\d+)? s wall, \d+(?:\.\d+)? s CPU, [^()]*\)")


def comparable(observation):
    """An observation without its measured times and memory."""
    return MEASURED.sub("(measured)", observation) if isinstance(observation, str) else observation


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_versions(requires=(), python: str | None = None, known: dict | None = None) -> dict[str, str | None]:
    """mlab, mlabc, litellm and Python here, and the task's requirements in the scripts' interpreter
    (`known`: those already asked for, as the hardware record holds them)."""
    from importlib.metadata import PackageNotFoundError, version

    from mlab import __version__ as mlab_version
    from mlab.run.hardware import requirement_versions

    def installed(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    from mlab.build import compiler_version

    out = {"mlab": mlab_version, "mlabc": compiler_version(), "litellm": installed("litellm"),
           "python": platform.python_version()}
    found = known if known is not None else requirement_versions(requires, python)
    out.update({f"requires:{name}": v for name, v in found.items()})
    return out


def data_digest(run) -> str:
    """SHA-256 over the prepared files of the run's variant: the public ones as the workspace held
    them before step 1, and the private ones."""
    initial = run.store.get_json(run.meta["initial_snapshot"])
    public = set(run.task.variant(run.meta["data"]["variant"]).public)
    entries = sorted((f"public/{name}", digest) for name, digest in initial.items() if name in public)
    private = Path(run.private_dir)
    entries += sorted((f"private/{p.relative_to(private).as_posix()}", _sha256(p))
                      for p in private.rglob("*") if p.is_file())
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


def build_lock(run, config: dict) -> dict:
    manifest = run.task.build.manifest
    task_entry = manifest["tasks"][run.task.name]
    artifacts = task_entry["artifacts"] + manifest["agents"][run.agent.name]["artifacts"]
    build = {"digest": run.meta["build"]["digest"], "compiler_version": manifest["compiler_version"],
             "task_source": task_entry["source"], "sources": manifest["sources"], "inputs": manifest["inputs"],
             "artifacts": {rel: manifest["artifacts"][rel] for rel in artifacts}}
    if isinstance(task_entry.get("scored"), dict):
        build["scored"] = task_entry["scored"]
    lock = {
        "schema": LOCK_SCHEMA_ID, "schema_version": 1, "run_id": run.id, "task": run.task.name,
        "task_version": int(run.meta.get("task_version", 1)), "agent": run.agent.name, "build": build,
        "models": config["tiers"], "api_base": config.get("api_base"), "seed": int(run.meta["seed"]),
        "limits": run.meta["limits"],
        "data": {"variant": run.meta["data"]["variant"], "key": run.meta["data"]["key"], "digest": data_digest(run)},
        "packages": package_versions(run.task.view.requires, run.meta["python"],
                                     (run.meta.get("hardware") or {}).get("requirements")),
        "hardware": run.meta.get("hardware"),
    }
    if config.get("no_tools"):
        lock["no_tools"] = True
    return lock


def write_lock(run, config: dict) -> dict:
    from mlabc.schemas import problems

    lock = build_lock(run, config)
    found = problems("lock", lock)
    if found:
        raise MlabError("internal error: the lock does not match spec/lock.schema.json: " + "; ".join(found))
    from mlab.standard_json import write_json

    write_json(Path(run.dir) / LOCK, lock)
    return lock


def read_lock(folder: Path) -> dict:
    """A run folder's lock, validated; a UsageError naming the problem otherwise."""
    from mlab.bounded_json import UntrustedFile, read_json

    path = Path(folder) / LOCK
    try:
        lock = read_json(path, schema="lock")   # a run folder from elsewhere is hostile data
    except UntrustedFile as problem:
        raise UsageError(str(problem)) from None
    except FileNotFoundError:
        if not Path(folder).is_dir():
            raise UsageError(f"{folder}: no such run folder") from None
        raise UsageError(f"{folder} has no {LOCK} (runs made before mlab wrote locks cannot be "
                         "reproduced from one)") from None
    except OSError as problem:
        raise UsageError(f"cannot read {path}: {problem}") from None
    return lock


# -- what differs ------------------------------------------------------------------------------

def _short(value) -> str:
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text[:12] if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _digest_rows(kind: str, locked: dict, now: dict) -> list[tuple[str, str, str]]:
    rows = []
    for name in sorted(set(locked) | set(now)):
        if locked.get(name) != now.get(name):
            rows.append((f"{kind} {name}", _short(locked.get(name)), _short(now.get(name)) if name in now
                         else "missing"))
    return rows


def current_digests(paths) -> dict[str, str]:
    """Each existing file of `paths` → its SHA-256 (a missing one is left out)."""
    out = {}
    for path in paths:
        if Path(path).is_file():
            out[path] = _sha256(Path(path))
    return out


def checkout_rows(lock: dict) -> list[tuple[str, str, str]]:
    """(what, locked, now) for every digest or version in which the current checkout differs from
    the lock: the `.mlab` sources and inputs, the recompiled task's and agent's artifacts and scored
    parts, the compiler, and the package versions."""
    from mlab.build import compile_into_cache, compiler_version
    from mlab.errors import BuildError

    build = lock["build"]
    rows = _digest_rows("source", build["sources"], current_digests(build["sources"]))
    rows += _digest_rows("input", build["inputs"], current_digests(build["inputs"]))
    if build["compiler_version"] != compiler_version():
        rows.append(("compiler", build["compiler_version"], compiler_version()))
    try:
        compiled = compile_into_cache([Path(build["task_source"])]) if Path(build["task_source"]).is_file() else None
    except BuildError as problem:
        rows.append(("build", "compiles", f"does not compile: {str(problem).splitlines()[0]}"))
        compiled = None
    if compiled is not None:
        manifest = compiled.manifest
        if lock["task"] not in manifest["tasks"]:
            rows.append(("task", lock["task"], "not declared"))
        else:
            entry = manifest["tasks"][lock["task"]]
            artifacts = list(entry["artifacts"]) + list(manifest["agents"].get(lock["agent"], {}).get("artifacts", []))
            now = {rel: manifest["artifacts"][rel] for rel in artifacts}
            rows += _digest_rows("artifact", build["artifacts"], now)
            if int(entry.get("version", 1)) != lock["task_version"]:
                rows.append(("task version", str(lock["task_version"]), str(entry.get("version", 1))))
            rows += _digest_rows("scored", build.get("scored") or {}, entry.get("scored") or {}) \
                if build.get("scored") else []
    requires = [name.split(":", 1)[1] for name in lock["packages"] if name.startswith("requires:")]
    # The interpreter the lock names is compared as data and never run: a run folder from elsewhere
    # could name a program it ships. The task's packages are asked of this mlab's own interpreter.
    recorded = (lock.get("hardware") or {}).get("scripts_python")
    if recorded is not None and recorded != sys.executable:
        rows.append(("scripts python", _short(recorded), sys.executable))
    now_packages = package_versions(requires, sys.executable)
    rows += [(f"package {name}", _short(lock["packages"].get(name)), _short(now_packages.get(name)))
             for name in sorted(lock["packages"]) if lock["packages"].get(name) != now_packages.get(name)]
    return rows


def recompiled(lock: dict):
    """The build this checkout compiles the lock's task into now (from the locked source, else the
    task of that name here), or a sentence saying why there is none."""
    from mlab.build import compile_into_cache, resolve_task

    source = Path(lock["build"]["task_source"])
    try:
        if source.is_file():
            return compile_into_cache([source])
        return resolve_task(lock["task"]).build
    except MlabError as problem:   # BuildError, an unknown task
        return f"does not compile here: {str(problem).splitlines()[0]}"


def build_copy_rows(folder: Path, lock: dict) -> list[tuple[str, str, str]]:
    """(what, the run's build copy, recompiled) for each artifact of the task and agent whose bytes in
    the run folder's build/ differ from the build this checkout compiles: a reproduction runs the
    copy, so an edited copy (a metric's direction flipped) is a difference, whatever its manifest or
    the lock claim."""
    build = recompiled(lock)
    if isinstance(build, str):
        return [("build copy", "as run", build)]
    manifest = build.manifest
    if lock["task"] not in manifest["tasks"] or lock["agent"] not in manifest["agents"]:
        return [("build copy", f"task {lock['task']}, agent {lock['agent']}", "not both declared here")]
    rows = []
    for rel in [*manifest["tasks"][lock["task"]]["artifacts"], *manifest["agents"][lock["agent"]]["artifacts"]]:
        path = Path(folder) / "build" / rel
        try:
            copy = _sha256(path) if path.is_file() and not path.is_symlink() else "missing"
        except OSError:
            copy = "unreadable"
        if copy != manifest["artifacts"][rel]:
            rows.append((f"build copy {rel}", _short(copy), _short(manifest["artifacts"][rel])))
    return rows


def difference_rows(original: dict, again: dict) -> list[tuple[str, str, str]]:
    """(what, original, reproduction) for what differs between two runs' facts (`run_facts`)."""
    rows = []
    for name in original:
        if original[name] != again.get(name):
            rows.append((name, _short(original[name]), _short(again.get(name))))
    return rows


def run_facts(folder: Path) -> dict:
    """What a reproduction is compared on: the score and verdict, the steps and the actions taken
    with what the agent saw (a digest of the trace's actions and observations), the data, the
    package versions and the hardware class."""
    from mlab.run.hardware import hardware_class
    from mlab.trace import read_trace

    from mlab.bounded_json import read_json

    folder = Path(folder)
    result = read_json(folder / "result.json", schema="result")   # UntrustedFile: a message, never a crash
    lock = read_lock(folder)
    records = read_trace(folder / "trace.jsonl").records
    steps = [[r.get("action"), r.get("action_input"), r.get("status"), comparable(r.get("observation"))]
             for r in records]
    facts = {"score": result.get("score"), "success": result.get("success"),
             "failure mode": result.get("failure_mode"), "steps": result.get("steps"),
             "trace (actions and observations)": hashlib.sha256(json.dumps(steps, sort_keys=True,
                                                                           default=str).encode()).hexdigest(),
             "data digest": lock["data"]["digest"], "task version": lock["task_version"],
             "hardware class": hardware_class(lock.get("hardware"))}
    facts.update({f"package {name}": v for name, v in sorted(lock["packages"].items())})
    return facts


def render_rows(rows: list[tuple[str, str, str]], headers: tuple[str, str, str]) -> str:
    if not rows:
        return ""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(3)]
    lines = ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
