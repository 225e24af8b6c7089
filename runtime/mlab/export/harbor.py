"""`mlab export-task --to harbor`: a compiled task as a Harbor task folder (task.toml schema 1.4).

    <task>/task.toml          time-outs, CPUs, memory and GPUs from the task's limits and hardware;
                              no network for the agent; a separate verifier environment
    <task>/instruction.md     the problem, the workspace, the submission format, the metric and bar
    <task>/environment/       the agent's image: Dockerfile (pinned Python base, the task's
                              requirements pinned exactly), workspace/ = starter files + public data
    <task>/tests/             the verifier's image: Dockerfile, test.sh, this project's wheel, its
                              pinned requirements, and mlab/ (the compiled task, the private files,
                              the baseline, the starter for timed metrics, the evaluator)
    <task>/solution/          solve.sh and the winning files of the task's demonstration

The agent's workspace (/workspace) travels to the verifier as a Harbor artifact; test.sh runs
mlab's own scorer on it (mlab.export.harbor_verify) and writes /logs/verifier/reward.json. Every
task is written into a staging folder beside the output and moved into place only when all are
done, so a failure leaves nothing half-written.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlab.errors import UsageError
from mlab.installation import DISTRIBUTION

from mlab.export.harbor_files import (SCHEMA_VERSION, VERIFIER_HOME, ExportError, agent_dockerfile, instruction,
                                      solution_files, task_toml, test_script, verifier_dockerfile)
from mlab.export.pins import distribution_requirements, pinned

__all__ = ["SCHEMA_VERSION", "ExportError", "Options", "check_output", "export_tasks", "prepare"]

WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "compiler", "runtime", "grammars", "spec", "tasks")


@dataclass(frozen=True)
class Options:
    variant: str = "lite"
    wheel: Path | None = None  # this project's wheel; built from the checkout when None
    base_image: str | None = None  # the Python base of both images; python:<this version>-slim-bookworm by default


def default_base_image() -> str:
    version = sys.version_info
    return f"python:{version.major}.{version.minor}.{version.micro}-slim-bookworm"


def export_tasks(tasks: list, out: Path, options: Options = Options(), *, say=print) -> list[Path]:
    """Write each TaskBuild in `tasks` as a Harbor task folder under `out` (new or empty)."""
    out = Path(out)
    check_output(out)
    names = [task.name for task in tasks]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise UsageError(f"task {doubled[0]} is named twice")
    if options.wheel is not None:
        check_wheel(Path(options.wheel))
    parent = out.resolve().parent
    made = [p for p in (parent, *parent.parents) if not p.exists()]  # folders to take away again on failure
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=parent))
    except OSError as error:
        raise ExportError(f"cannot write beside {out}: {error.strerror or error}") from None
    done = False
    try:
        # Every task's data and baseline first: a task that cannot be exported stops the export
        # before anything slow (the wheel) or large (the data) is written.
        ready = [(task, prepare(task, options.variant)) for task in tasks]
        wheel = options.wheel or build_wheel(staging / ".wheel")
        written = []
        for task, (prepared, baseline) in ready:
            _export_one(task, staging / task.name, options, Path(wheel), prepared, baseline)
            written.append(out / task.name)
            say(f"{task.name}: exported ({options.variant} data) to {out / task.name}")
        shutil.rmtree(staging / ".wheel", ignore_errors=True)
        if out.is_dir():
            out.rmdir()  # empty, checked above
        os.rename(staging, out)
        done = True
    except OSError as error:
        raise ExportError(f"cannot write the export into {out}: {error.strerror or error}"
                          f"{': ' + str(error.filename) if error.filename else ''}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if not done:
            for folder in made:  # innermost first
                with contextlib.suppress(OSError):
                    folder.rmdir()
    return written


def check_wheel(wheel: Path) -> None:
    if not wheel.is_file():
        raise UsageError(f"no such wheel: {wheel}")
    if not wheel.name.startswith(DISTRIBUTION.replace("-", "_") + "-") or wheel.suffix != ".whl":
        raise UsageError(f"{wheel} is not a wheel of {DISTRIBUTION} (expected {DISTRIBUTION.replace('-', '_')}-VERSION-"
                         f"py3-none-any.whl, as `pip wheel . --no-deps` writes)")


def check_output(out: Path) -> None:
    """The output must be a new or empty folder: an export never mixes with or replaces other files."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder; give a new or empty folder with -o")
    if out.is_dir() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; give a new or empty folder with -o (nothing was written)")


def build_wheel(into: Path) -> Path:
    """This project's wheel, built from the checkout mlab runs from (`pip wheel . --no-deps`), or
    for an installed copy packed from its installed files (mlab.export.wheel)."""
    from mlabc.resources import checkout_root

    checkout = checkout_root()
    if checkout is None:
        from mlab.export.wheel import repack_installed

        return repack_installed(into)
    into.mkdir(parents=True, exist_ok=True)
    # Built from a clean copy of the sources: setuptools builds in place, and a build/ folder left in
    # the checkout by an earlier build would bring modules since deleted into the wheel.
    source = into / "source"
    for name in WHEEL_SOURCES:
        path = checkout / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif path.is_file():
            source.mkdir(exist_ok=True)
            shutil.copyfile(path, source / name)
    # With setuptools and bdist_wheel here, build with them (no index needed); else pip fetches them.
    offline = ["--no-build-isolation"] if _can_build_here() else []
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", *offline,
                           "-q", "-w", str(into)], capture_output=True, text=True)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        reason = (done.stderr.strip().splitlines() or ["no wheel was written"])[-1]
        raise ExportError(f"cannot build the {DISTRIBUTION} wheel from {checkout}: {reason}")
    return wheels[0]


def prepare(task, variant_name: str):
    """The task's prepared data variant and the baseline its verifier compares with."""
    from mlab.data.prepare import prepare_data
    from mlab.errors import DataError

    task.variant(variant_name)  # a variant the task does not declare is named as such
    try:
        prepared = prepare_data(task, variant_name)
    except DataError as error:
        raise ExportError(f"task {task.name}: its {variant_name} data cannot be prepared, so it cannot be "
                          f"exported: {error}") from None
    return prepared, _baseline(task, variant_name)


def _can_build_here() -> bool:
    """setuptools >= 69 (what pyproject.toml asks for) with bdist_wheel (the `wheel` package, or
    setuptools >= 70.1) in this interpreter."""
    import importlib.util

    from packaging.version import Version

    try:
        import setuptools
    except ImportError:
        return False
    version = Version(setuptools.__version__)
    return version >= Version("69") and (version >= Version("70.1") or importlib.util.find_spec("wheel") is not None)


def _export_one(task, folder: Path, options: Options, wheel: Path, prepared, baseline: dict | None) -> None:
    from mlab.data.prepare import copy_tree, install_starter
    from mlab.run.canary import canary_line, write_canary

    variant = task.variant(options.variant)
    base = options.base_image or default_base_image()
    environment, tests = folder / "environment", folder / "tests"
    workspace = environment / "workspace"
    workspace.mkdir(parents=True)
    install_starter(task, workspace)
    copy_tree(prepared.public, workspace)
    version = task.view.version
    write_canary(workspace, task.name, version)  # runtime/mlab/run/canary.py: the task's contamination canary

    home = tests / "mlab"
    (home / "private").mkdir(parents=True)
    copy_tree(prepared.private, home / "private")
    if task.view.metric.timed:  # the starter is timed beside the submission: it travels with the verifier
        copy_tree(workspace, home / "starter")
    evaluator = task.view.evaluator
    if evaluator:
        target = home / "root" / evaluator.file
        target.parent.mkdir(parents=True)
        shutil.copyfile(task.root / evaluator.file, target)
    doc = dict(task.document, root=f"{VERIFIER_HOME}/root")  # the document written out whole
    (home / "task.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (home / "export.json").write_text(json.dumps({"task": task.name, "variant": options.variant, "baseline": baseline},
                                                 indent=2) + "\n", encoding="utf-8")

    requires = list(task.view.requires)
    (environment / "requirements.txt").write_text(
        "\n".join(pinned(requires, what=f"task {task.name}")) + "\n", encoding="utf-8")
    (environment / "Dockerfile").write_text(agent_dockerfile(task, base, workspace), encoding="utf-8")
    verifier_needs = distribution_requirements(DISTRIBUTION) + requires
    (tests / "requirements.txt").write_text(
        "\n".join(pinned(verifier_needs, what=f"the verifier of task {task.name}")) + "\n", encoding="utf-8")
    shutil.copyfile(wheel, tests / Path(wheel).name)
    (tests / "Dockerfile").write_text(verifier_dockerfile(base, Path(wheel).name), encoding="utf-8")
    _write_script(tests / "test.sh", test_script())
    (folder / "instruction.md").write_text(instruction(task, options.variant, variant, baseline)
                                           + f"\n<!-- {canary_line(task.name, version)} -->\n", encoding="utf-8")
    (folder / "task.toml").write_text(task_toml(task, options.variant), encoding="utf-8")
    solution = solution_files(task)
    if solution is not None:
        script, files = solution
        (folder / "solution" / "files").mkdir(parents=True)
        for name, content in files.items():
            target = folder / "solution" / "files" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        _write_script(folder / "solution" / "solve.sh", script)


def _write_script(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def _baseline(task, variant_name: str) -> dict | None:
    """The baseline the verifier compares with: declared, recorded, or measured now (timed: at scoring)."""
    from mlab.scoring.baseline import measure_starter, recorded_baseline

    declared = task.view.baseline
    if declared.kind == "value":
        return {"kind": "value", "value": declared.value, "reason": declared.reason, "measured": False}
    if task.view.metric.timed:
        return None
    recorded = recorded_baseline(task, variant_name)
    if recorded is not None:
        recorded.pop("from", None)  # a path on this machine
        return recorded
    measured = measure_starter(task, variant_name)
    if measured.get("value") is None:
        raise ExportError(f"task {task.name}: its starter gives no score on the {variant_name} data "
                          f"({measured.get('failure') or 'no value'}), so the export has no baseline")
    return measured


