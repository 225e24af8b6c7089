"""The texts of an exported Harbor task: task.toml, instruction.md, the Dockerfiles, test.sh, solve.sh."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath

from mlab.errors import MlabError

SCHEMA_VERSION = "1.4"  # Harbor's task.toml format version these texts follow
WORKSPACE = "/workspace"
VERIFIER_HOME = "/mlab"  # where the verifier image keeps the task, its private files and its baseline
AGENT_USER = "agent"
BUILD_TIMEOUT_S = 1800.0  # installing torch and friends takes longer than Harbor's default 10 minutes
SCORING_MARGIN_S = 300.0  # set-up and reading on top of the scripts that scoring runs
MIB = 2 ** 20


def _toml_value(value) -> str:
    """A TOML value: strings as JSON basic strings (the escapes agree), lists, numbers, booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value), ensure_ascii=False)


def _table(name: str | None, fields: dict) -> str:
    lines = [f"[{name}]"] if name else []
    lines += [f"{key} = {_toml_value(value)}" for key, value in fields.items() if value is not None]
    return "\n".join(lines)


def limits_of(task, variant_name: str):
    from mlab.limits import resolve_limits

    return resolve_limits(task.view.limits, task.variant(variant_name).limits)


def verifier_timeout(task, script_timeout: float) -> float:
    """How long scoring may take: the scripts it runs (a timed metric's rounds, an evaluator) and a margin."""
    from mlab.scoring.timed import TIMED_EXTRA_RUNS, TIMED_RUNS

    kind = task.view.metric.kind
    if kind == "timed":  # each round runs the starter and the submission
        return 2 * (TIMED_RUNS + TIMED_EXTRA_RUNS) * script_timeout + SCORING_MARGIN_S
    if kind == "evaluator":
        return script_timeout + SCORING_MARGIN_S
    return SCORING_MARGIN_S


def task_toml(task, variant_name: str) -> str:
    from mlab import __version__

    view = task.view
    limits = limits_of(task, variant_name)
    hardware = view.hardware
    script_timeout = float(limits.script_timeout or 1800.0)
    memory = hardware.memory or limits.memory
    resources = {"build_timeout_sec": BUILD_TIMEOUT_S, "cpus": view.cpus,
                 "memory_mb": int(memory // MIB) if memory else None,
                 "storage_mb": int(limits.disk // MIB) if limits.disk else None,
                 "gpus": hardware.gpus}
    metadata = {"mlab_task": task.name, "mlab_version": __version__, "data_variant": variant_name,
                "category": view.category or None, "metric": view.metric.name, "metric_kind": view.metric.kind,
                "direction": view.metric.direction, "success_improvement": view.success.improvement,
                "steps": limits.steps, "script_timeout_sec": script_timeout,
                "gpus_required": hardware.gpus_required}
    parts = [
        _table(None, {"schema_version": SCHEMA_VERSION,
                      # the agent's workspace goes to the separate verifier, restored at the same path
                      "artifacts": [{"source": WORKSPACE}]}),
        _table("task", {"name": f"mlab/{task.name}", "description": view.title or task.name,
                        "keywords": [k for k in ("mlab", view.category, view.metric.name) if k]}),
        _table("metadata", metadata),
        _table("verifier", {"timeout_sec": verifier_timeout(task, script_timeout), "environment_mode": "separate"}),
        _table("verifier.environment", {**resources, "network_mode": "no-network"}),
        _table("agent", {"timeout_sec": float(limits.time) if limits.time else None, "user": AGENT_USER,
                         "network_mode": "no-network"}),
        _table("environment", {**resources, "workdir": WORKSPACE}),
    ]
    return "# Exported by mlab export-task; the mlab task's metric and bar are in [metadata].\n" \
        + "\n\n".join(parts) + "\n"


def _duration(seconds: float | None) -> str:
    if not seconds:
        return "no limit"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return " ".join(f"{n} {unit}" for n, unit in ((hours, "h"), (minutes, "min"), (secs, "s")) if n) or "0 s"


def _submission_text(task, variant) -> str:
    view = task.view
    metric, submission = view.metric, view.submission
    direction = "lower is better" if metric.direction == "lower_is_better" else "higher is better"
    if metric.kind == "timed":
        output = metric.columns[0] if metric.columns else "its output"
        return (f"Your submission is the script `{submission.file}` in {WORKSPACE}. It must write the `{output}` "
                f"the starter's `{view.baseline.script or submission.file}` writes (arrays equal within a small "
                "tolerance, text identical); it is scored by "
                f"its median wall time ({metric.name}, {direction}), timed side by side with the starter in "
                "alternating rounds. An output that differs scores nothing.")
    if metric.kind == "evaluator":
        return (f"Your submission is `{submission.file if submission else 'the workspace'}` in {WORKSPACE}, scored "
                f"by the task's evaluator on private data: {metric.name} ({direction}).")
    file = submission.file if submission and submission.file else "submission.csv"
    columns = ", ".join(f"`{c}`" for c in (submission.columns if submission else ())) or "the declared columns"
    scored = ", ".join(f"`{c}`" for c in metric.columns if c != variant.id)
    return (f"Write `{file}` in {WORKSPACE} with the columns {columns}, one row for every "
            f"`{variant.id}` of the test data. It is scored with {metric.name} on {scored} ({direction}) "
            "against answers that are not in your environment.")


def instruction(task, variant_name: str, variant, baseline: dict | None) -> str:
    view = task.view
    limits = limits_of(task, variant_name)
    workspace_note = f"You work in `{WORKSPACE}`, which holds the task's starter files and its data."
    if view.read_only:
        workspace_note += " Leave these unchanged (scoring uses the originals): " \
            + ", ".join(f"`{p}`" for p in view.read_only) + "."
    if baseline is not None and baseline.get("value") is not None:
        bar = f"The starter scores {baseline['value']:.6g} ({view.metric.name})."
    else:
        bar = "The starter is measured beside your submission when it is scored."
    if view.success.improvement is not None:
        bar += (f" Success is an improvement of at least {view.success.improvement:.0%} over the starter "
                "(the relative change of the score in the metric's direction).")
    return "\n\n".join([
        f"# {view.title or task.name}",
        view.problem.strip(),
        "## Your environment",
        workspace_note + " There is no network: the Python packages you have are installed already "
        "(`pip list`).",
        "## What you submit",
        _submission_text(task, variant),
        "## The bar",
        bar + f" You have {_duration(limits.time)} in all; each script run while scoring may take up to "
        f"{_duration(limits.script_timeout)}.",
    ]) + "\n"


class ExportError(MlabError):
    """A task that cannot be exported as asked."""


_UNQUOTABLE = re.compile("[\x00-\x1f\x7f-\x9f]")   # control characters, newline and NUL among them


def shell_word(name: str, what: str) -> str:
    """`name` quoted as one word of a shell line (a Dockerfile's RUN, test.sh, solve.sh), or
    ExportError: a control character cannot be quoted there (a newline ends a Dockerfile
    instruction whatever the quotes, so a file named with one would inject the next one)."""
    bad = _UNQUOTABLE.search(name)
    if bad:
        raise ExportError(f"{what} {name!r} holds the control character {bad.group()!r} "
                          "(a newline, NUL or another): it cannot be written into a Dockerfile or shell "
                          "script, rename it")
    return shlex.quote(name)


def dockerfile_word(value: str, what: str) -> str:
    """A value written bare into a Dockerfile instruction (FROM's image, COPY's wheel): one word
    without spaces or control characters, or ExportError."""
    if _UNQUOTABLE.search(value) or not value or any(c.isspace() for c in value):
        raise ExportError(f"{what} {value!r} cannot be written into a Dockerfile: it must be one "
                          "word, without spaces or control characters")
    return value


def agent_dockerfile(task, base: str, workspace: Path) -> str:
    from mlab.actions.workspace import Workspace

    read_only = [Path(WORKSPACE) / p.relative_to(workspace.resolve()).as_posix()
                 for p in Workspace(workspace, task.view.read_only).read_only_files()]
    lines = [
        "# The agent's environment: the task's requirements pinned exactly, its starter files and public data.",
        f"FROM {dockerfile_word(base, 'the base image')}",
        f"RUN useradd --create-home --uid 1000 {AGENT_USER}",
        "COPY requirements.txt /opt/mlab/requirements.txt",
        "RUN pip install --no-cache-dir -r /opt/mlab/requirements.txt",
        f"COPY --chown={AGENT_USER}:{AGENT_USER} workspace/ {WORKSPACE}/",
    ]
    locked = ""
    if read_only:  # the task's read-only files: the agent's user may read them, not change them
        files = " ".join(shell_word(str(p), "the read-only file") for p in read_only)
        locked = f" && chown root:root {files} && chmod 0444 {files}"
    lines.append(f"RUN chown {AGENT_USER}:{AGENT_USER} {WORKSPACE}{locked}")
    lines.append(f"WORKDIR {WORKSPACE}")
    return "\n".join(lines) + "\n"


def verifier_dockerfile(base: str, wheel: str) -> str:
    return "\n".join([
        "# The verifier's environment: mlab (this wheel, its dependencies pinned), the task, its private files.",
        f"FROM {dockerfile_word(base, 'the base image')}",
        "COPY requirements.txt /opt/mlab/requirements.txt",
        "RUN pip install --no-cache-dir -r /opt/mlab/requirements.txt",
        f"COPY {dockerfile_word(wheel, 'the wheel')} /opt/mlab/{wheel}",
        f"RUN pip install --no-cache-dir --no-deps /opt/mlab/{wheel}",
        f"COPY mlab/ {VERIFIER_HOME}/",
        "COPY test.sh /tests/test.sh",
        "RUN chmod 0755 /tests/test.sh",
    ]) + "\n"


def test_script() -> str:
    return "\n".join([
        "#!/usr/bin/env bash",
        "# Score the agent's workspace with mlab's scorer for this task's metric;",
        "# writes /logs/verifier/reward.json (success, score, improvement) and result.json.",
        "set -u",
        f"exec python -m mlab.export.harbor_verify --home {VERIFIER_HOME} --workspace {WORKSPACE} "
        "--logs /logs/verifier",
    ]) + "\n"


def solution_files(task) -> tuple[str, dict[str, bytes]] | None:
    """solve.sh and the winning files (name → content) of the task's demonstration; None without one.

    The winning files are those the demonstration writes, taken from the task's solution/ folder
    (its reference solution) where it holds them, else as the demonstration writes them.
    """
    from mlab.models.demonstration import load

    if not task.view.demo:
        return None
    demo_path = task.root / task.view.demo
    demonstration = load(demo_path)
    if demonstration.version != 2:
        return None
    folder = demo_path.parent / "solution"
    written = [i for i, step in enumerate(demonstration.steps) if step.action == "Write File"]
    names = list(dict.fromkeys(demonstration.steps[i].input.get("file_name") for i in written))
    files = {}
    for name in names:
        parts = PurePosixPath(name).parts if isinstance(name, str) else ("..",)
        if not parts or parts[0] == "/" or ".." in parts:  # only files inside the workspace
            continue
        reference = folder / name
        content = reference.read_bytes() if reference.is_file() else (demonstration.written(name) or "").encode()
        files[name] = content
    if not files:
        return None
    after = written[-1] + 1
    scripts = [step.input["script_name"] for step in demonstration.steps[after:]
               if step.action == "Execute Script" and isinstance(step.input.get("script_name"), str)]
    lines = ["#!/usr/bin/env bash",
             "# The task's winning demonstration: the files it writes, then the scripts it runs after them.",
             "set -euo pipefail",
             f"cp -r /solution/files/. {WORKSPACE}/",
             f"cd {WORKSPACE}"]
    lines += [f"python {shell_word(script, 'the demonstration script')}" for script in scripts]
    return "\n".join(lines) + "\n", files
