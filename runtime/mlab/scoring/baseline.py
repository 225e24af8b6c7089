"""`mlab baseline`: run a task's starter in the sandbox, report its score, record it with provenance.

Recorded baselines live in baselines.json beside the task's .mlab file (tasks/baselines.json
for the shipped tasks), one entry per task and data variant:

    {"schema_version": 2, "baselines": {"house-price": {"lite": {"value": 17000.0, "metric": "mae",
      "direction": "lower_is_better", "script": "train.py", "seed": 42, "code_hash": "...",
      "mlab_version": "0.1.0", "tolerance": 0.02, "wall_s": 1.9, "recorded": "2026-11-30"}}}}

The code hash covers what decides the starter's score: the starter files, the data source
(bundled file, generator folder, or remote source with its declared checksums and prepare
function), the variant's declaration, mlab's own preparation code (`preparation_code_digest`:
how sources are read, split, numbered and written), the baseline script and the metric. The
runtime uses a recorded value only while its code hash matches; otherwise it measures the starter
again, so a record that may no longer reproduce is never reported as measured. Schema version 1
files are still read, but their hashes did not cover the preparation code, so none of their
entries is used as measured: `mlab baseline TASK --record` records it again.
Timed metrics have no recorded number (the starter is timed beside each submission), and a
task whose starter is deliberately incomplete declares `baseline N because "..."` instead.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from mlab.cache import cache_root
from mlab.documents.view import thaw
from mlab.errors import MlabError, StorageError
from mlab.standard_json import write_json

BASELINES_FILE = "baselines.json"
SCHEMA_VERSION = 2  # 2: the code hash covers mlab's preparation code; 1 (read, never trusted): it did not
DEFAULT_TOLERANCE = 0.02  # relative: a starter re-run on another machine may differ a little


def baselines_path(task) -> Path:
    return task.root / BASELINES_FILE


def data_digest(task, variant_name: str) -> str:
    """The hash of what the variant's data is made from (no package versions, no download)."""
    from mlab.data.prepare import demonstration_files, folder_digest, local_source_digest, source_path

    variant = task.variant(variant_name)
    source, where = variant.source, f"data variant {variant_name} of task {task.name}"
    content = local_source_digest(task, source, where)
    if content is None:  # sklearn's bundled sets and remote sources: named by their declaration (with checksums)
        content = f"{source.kind}:{source.value}"
    if variant.prepare:
        content += " " + folder_digest(source_path(task, variant.prepare.file, where).parent, demonstration_files(task))
    return content


def code_hash(task, variant_name: str) -> str:
    """The hash a recorded baseline is valid for (see the module docstring)."""
    from mlab.data.prepare import folder_digest, preparation_code_digest, source_path

    view = task.view
    # the declarations as compiled (mlab.documents.thaw gives back the document's own keys, so
    # the hash of a recorded baseline stays that of its task.yaml)
    variant = {k: v for k, v in thaw(task.variant(variant_name)).items() if k != "limits"}
    starter = view.starter
    fields = {"starter": folder_digest(source_path(task, starter, f"task {task.name}")) if starter else None,
              "data": data_digest(task, variant_name), "variant": variant, "baseline": thaw(view.baseline),
              "metric": thaw(view.metric), "submission": thaw(view.submission),
              "preparation": preparation_code_digest()}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def read_baselines(path: Path) -> dict:
    """The baselines file's document ({"schema_version": 2, "baselines": {}} when there is none)."""
    if not path.is_file():
        return {"schema_version": SCHEMA_VERSION, "baselines": {}}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MlabError(f"the recorded baselines {path} cannot be read: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("baselines"), dict):
        raise MlabError(f"the recorded baselines {path} do not hold a `baselines` mapping")
    return document


def recorded_entry(task, variant_name: str) -> dict | None:
    """The recorded entry of task/variant, whatever its code hash (None when there is none)."""
    entry = read_baselines(baselines_path(task))["baselines"].get(task.name, {}).get(variant_name)
    return entry if isinstance(entry, dict) and isinstance(entry.get("value"), (int, float)) else None


def recorded_baseline(task, variant_name: str) -> dict | None:
    """The result.json baseline from the recorded value, when its code hash matches (in a file of the
    current schema: a version 1 hash never covered the preparation code)."""
    entry = recorded_entry(task, variant_name)
    if entry is None or not is_current(task, variant_name, entry):
        return None
    return {"kind": "run", "script": entry.get("script"), "value": float(entry["value"]), "measured": True,
            "recorded": {k: entry.get(k) for k in ("seed", "code_hash", "mlab_version", "recorded", "wall_s")},
            "from": str(baselines_path(task))}


def is_current(task, variant_name: str, entry: dict) -> bool:
    """Does the recorded entry still vouch for the starter's score: recorded under this schema, with the
    code hash of the task's starter, data and preparation code as they are now?"""
    document = read_baselines(baselines_path(task))
    return document.get("schema_version") == SCHEMA_VERSION and entry.get("code_hash") == code_hash(task, variant_name)


def record_baseline(task, variant_name: str, measured: dict) -> Path:
    """Write a measured starter score into the task's baselines file (entries kept sorted)."""
    from mlab import __version__
    from mlabc.data_model.tables import generate_seed

    path = baselines_path(task)
    document = read_baselines(path)
    entries = document["baselines"].setdefault(task.name, {})
    old = entries.get(variant_name) or {}
    entries[variant_name] = {
        "value": measured["value"], "metric": task.view.metric.name,
        "direction": task.view.metric.direction, "script": measured.get("script"),
        "seed": generate_seed(thaw(task.variant(variant_name))), "code_hash": code_hash(task, variant_name),
        "mlab_version": __version__, "tolerance": old.get("tolerance", DEFAULT_TOLERANCE),
        "wall_s": measured.get("wall_s"), "recorded": datetime.date.today().isoformat()}
    document["baselines"] = {name: dict(sorted(v.items())) for name, v in sorted(document["baselines"].items())}
    document["schema_version"] = SCHEMA_VERSION
    try:
        write_json(path, document)
    except OSError as error:
        raise StorageError(f"cannot write the recorded baselines {path}: {error.strerror or error}") from None
    return path


def measure_starter(task, variant_name: str, python: str | None = None) -> dict:
    """Run the starter on a freshly prepared run of the task and score it (never from a record).

    Returns {"kind", "script", "value", "measured", "exit_code", "wall_s", "failure"}; for a
    timed metric, the starter timed against itself ("value" is its median time).
    """
    from mlab.run.folder import Run

    declared = task.view.baseline
    if declared.kind == "value":
        return {"kind": "value", "value": declared.value, "reason": declared.reason, "measured": False}
    runs_dir = Path(tempfile.mkdtemp(prefix="mlab-baseline-runs-"))
    try:
        run = Run.create(task, task.build.agent(task.view.agent), runs_dir, data=variant_name, python=python)
        try:
            if task.view.metric.timed:
                return _time_starter(run)
            return run_starter(run, declared.script)
        finally:
            run.close()
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)


def _time_starter(run) -> dict:
    """A timed task's starter, timed side by side with itself (as a submission would be)."""
    from mlab.scoring.timed import score_run_timed

    score = score_run_timed(run, workspace=run.workspace.root)
    baseline = dict(score.baseline or {})
    baseline.update(failure=score.detail if score.value is None else None,
                    wall_s=baseline.get("value"), exit_code=0 if score.value is not None else None)
    return baseline


def _baseline_key(run) -> str:
    import hashlib

    parts = [run.meta["build"]["digest"], run.meta["data"]["key"], json.dumps(thaw(run.task.view.baseline), sort_keys=True),
             run.meta["python"]]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def measure_baseline(run) -> dict:
    """The baseline: declared, or measured by running the starter script (cached)."""
    baseline = run.task.view.baseline
    if baseline.kind == "value":
        return {"kind": "value", "value": baseline.value, "reason": baseline.reason, "measured": False}
    if run.task.view.metric.timed:
        return {"kind": "run", "script": baseline.script, "value": None, "measured": True,
                "timed": "measured side by side with the submission at evaluation"}
    recorded = recorded_baseline(run.task, run.meta["data"]["variant"])
    if recorded is not None:
        return recorded
    cache = cache_root() / "baselines" / f"{run.task.name}-{run.meta['data']['variant']}-{_baseline_key(run)}.json"
    if cache.is_file():
        try:
            return json.loads(cache.read_text(encoding="utf-8"))
        except ValueError:
            pass
    result = run_starter(run, baseline.script)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(result, indent=2), encoding="utf-8")
    except OSError:
        pass  # the cache is an optimisation; the result stands without it
    return result


def run_starter(run, script: str) -> dict:
    """Run `script` on a fresh copy of the run's initial workspace and score what it leaves."""
    from mlab.scoring.score import score_workspace
    from mlab.snapshots import ObjectStore, restore_files

    store = ObjectStore(run.dir / "objects", durable=False)
    initial = store.get_json(run.meta["initial_snapshot"])
    folder = Path(tempfile.mkdtemp(prefix="mlab-baseline-"))
    try:
        workspace = folder / "workspace"
        restore_files(store, initial, workspace)
        outcome = run.scripts.run(workspace, [script])
        score = score_workspace(run.task, run.meta["data"]["variant"], workspace, run.private_dir)
        failure = None
        if score.value is None:
            failure = starter_failure(script, outcome.exit_code, outcome.output) if outcome.exit_code \
                else score.detail
        return {"kind": "run", "script": script, "value": score.value, "measured": True,
                "exit_code": outcome.exit_code, "wall_s": round(outcome.wall_s, 3), "failure": failure}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def starter_failure(script: str, exit_code: int | None, output: str) -> str:
    """Why the starter gave no score when it failed: its own error, quoted from its output (the
    last line Python's traceback ends with), rather than the missing submission that follows."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    errors = [line for line in lines if _is_error_line(line)]
    quoted = errors[-1] if errors else (lines[-1] if lines else "no output")
    missing = "FileNotFoundError" in quoted or "No such file or directory" in quoted
    where = "; the workspace lacks a file the starter reads" if missing else ""
    return f"the starter {script} failed (exit code {exit_code}): {quoted[:300]}{where}"


def _is_error_line(line: str) -> bool:
    head = line.split(":", 1)[0].rsplit(".", 1)[-1]  # pandas.errors.EmptyDataError: ...
    return ":" in line and head.isidentifier() and (head.endswith(("Error", "Exception")) or head in ("KeyboardInterrupt", "SystemExit"))


def starter_crashed(baseline: dict) -> bool:
    """Did a measured baseline fail because its script failed (a task error, whatever the agent did)?"""
    return bool(baseline.get("measured")) and baseline.get("value") is None and baseline.get("exit_code") not in (0, None)


def within_tolerance(measured: float, recorded: float, tolerance: float) -> bool:
    """Whether a re-measured score is the recorded one within a relative tolerance."""
    scale = max(abs(recorded), 1e-12)
    return abs(measured - recorded) <= tolerance * scale + 1e-12
