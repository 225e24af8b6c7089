"""A task's version, its `changes` and its known issues → IR, and the digests of its scored parts.

`version N` (default 1) names the task's version; `changes { N "what" because "why" }` says what
changed in each version after the first and why; `issue "text" since N fixed M` declares a known
issue. The IR keys are absent when a task declares none of them, so such a task lowers as before
(the runtime reads an absent version as 1).

The scored parts (data, metric, submission, success, starter) each get a SHA-256 over their IR and
the contents of the files they read; the manifest records them per task, and `mlabc check --since
BUILD` (`version_diagnostics`) refuses a change to any of them that keeps the version.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import ast as A
from ..values import Reporter

VERSION_ENTRIES = (A.Version, A.Changes, A.KnownIssue)
SCORED_PARTS = ("data", "metric", "submission", "success", "starter")


def lower_version_entry(entry, ir: dict, report: Reporter) -> None:
    """One `version`, `changes` or `issue` entry into the IR (checked together by `check_versions`)."""
    if isinstance(entry, A.Version):
        value = report.integer(entry.value, "`version`", minimum=1)
        if value is not None:
            ir["version"] = value
    elif isinstance(entry, A.Changes):
        changes = ir.setdefault("changes", [])
        for item in entry.items:
            version = report.integer(item.version, "a change's version", minimum=1)
            what = report.string(item.what, "what changed")
            why = report.string(item.why, "`because`")
            if version is not None and what is not None and why is not None:
                changes.append({"version": version, "what": what, "why": why, "_span": item.version.span})
    else:
        text = report.string(entry.text, "`issue`")
        since = report.integer(entry.since, "`since`", minimum=1)
        fixed = report.integer(entry.fixed, "`fixed`", minimum=1) if entry.fixed is not None else None
        if text is not None and since is not None:
            issue = {"text": text, "since": since, "_span": entry.since.span}
            if fixed is not None:
                issue["fixed"], issue["_fixed_span"] = fixed, entry.fixed.span
            ir.setdefault("issues", []).append(issue)


def check_versions(decl: A.Task, ir: dict, report: Reporter) -> None:
    """E911: every version after the first says what changed, once; nothing names a later version."""
    version = ir.get("version", 1)
    name = decl.name.value
    seen: set[int] = set()
    for change in ir.get("changes", []):
        span = change.pop("_span")
        if change["version"] == 1:
            report.error("E911", "version 1 is the task's first: a change names the version it made",
                         span, hint="number the change after the version it produced (2, 3, ...)")
        elif change["version"] > version:
            report.error("E911", f"a change names version {change['version']}, but task `{name}` is "
                         f"version {version}", span, hint=f"write `version {change['version']}` in the task")
        elif change["version"] in seen:
            report.error("E911", f"version {change['version']} has two `changes` entries", span,
                         hint="say everything that changed in that version in one entry")
        seen.add(change["version"])
    missing = [v for v in range(2, version + 1) if v not in seen]
    if missing and "version" in ir:
        where = next(e.value.span for e in decl.entries if isinstance(e, A.Version))
        listed = ", ".join(map(str, missing))
        report.error("E911", f"task `{name}` is version {version}, but `changes` does not say what changed "
                     f"in version {listed}", where,
                     hint=f'add `changes {{ {missing[0]} "what changed" because "why" }}`')
    if "changes" in ir:
        ir["changes"].sort(key=lambda c: c["version"])
    for issue in ir.get("issues", []):
        span, fixed_span = issue.pop("_span"), issue.pop("_fixed_span", None)
        if issue["since"] > version:
            report.error("E911", f"the issue is since version {issue['since']}, but task `{name}` is "
                         f"version {version}", span)
        elif "fixed" in issue and issue["fixed"] <= issue["since"]:
            report.error("E911", f"an issue fixed in version {issue['fixed']} cannot be since version "
                         f"{issue['since']}", fixed_span, hint="`fixed` names a later version than `since`")
        elif issue.get("fixed", 0) > version:
            report.error("E911", f"the issue is fixed in version {issue['fixed']}, but task `{name}` is "
                         f"version {version}", fixed_span,
                         hint=f"bump the task to `version {issue['fixed']}` with the fix")


def _digest(document) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()


def _files(paths: list[Path], base: Path) -> dict[str, str]:
    out = {}
    for path in sorted(paths):
        try:
            name = path.relative_to(base).as_posix()
        except ValueError:
            name = path.name
        out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def scored_digests(ir: dict, root: Path) -> dict[str, str]:
    """Part name → SHA-256 over the part's IR and the contents of the files it reads."""
    def tree(folder: Path) -> list[Path]:
        return [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts] \
            if folder.is_dir() else []

    data = {}
    for name, variant in sorted(ir["data"].items()):
        source = variant.get("source") or {}
        target = root / source.get("file", source.get("value", ""))
        files = tree(target) if source.get("kind") == "folder" else \
            [target] if source.get("kind") in ("csv", "parquet", "generate") and target.is_file() else []
        prepare = (variant.get("prepare") or {}).get("file")
        if prepare and (root / prepare).is_file():
            files.append(root / prepare)
        data[name] = {"ir": variant, "files": _files(files, root)}
    evaluator = ir.get("evaluator") or {}
    evaluator_file = root / evaluator["file"] if evaluator.get("file") else None
    metric = {"ir": ir.get("metric"), "evaluator": evaluator,
              "files": _files([evaluator_file], root) if evaluator_file and evaluator_file.is_file() else {}}
    starter = root / ir["starter"] if ir.get("starter") else None
    return {
        "data": _digest(data),
        "metric": _digest(metric),
        "submission": _digest(ir.get("submission")),
        "success": _digest({"success": ir.get("success"), "baseline": ir.get("baseline")}),
        "starter": _digest({"read_only": ir.get("read_only"),
                            "files": _files(tree(starter), starter) if starter else {}}),
    }


def version_changes(previous: dict, current: dict) -> tuple[list[str], int, int]:
    """The scored parts that differ between two manifest task entries, and both versions."""
    old, new = previous.get("scored") or {}, current.get("scored") or {}
    changed = [part for part in SCORED_PARTS if part in old and old.get(part) != new.get(part)]
    return changed, int(previous.get("version", 1)), int(current.get("version", 1))


def read_previous_manifest(where: str) -> dict:
    """The manifest of the build named by `--since` (a build folder or its manifest.json); OSError or
    ValueError with a one-line reason when it cannot be read."""
    path = Path(where)
    if path.is_dir():
        path = path / "manifest.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OSError(f"--since {where}: no build manifest at {path}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"--since {where}: {path} is not JSON ({error.msg})") from None
    if not isinstance(document, dict) or not isinstance(document.get("tasks"), dict):
        raise ValueError(f"--since {where}: {path} is not an mlab build manifest")
    return document


def since_diagnostics(compiled, previous: dict) -> list:
    """E912 for each task whose scored parts differ from the previous build's at the same version
    (or whose version went down). Tasks the previous build lacks, or recorded without digests
    (builds before versions), are not compared."""
    decls = {decl.name.value: decl for _, decl in compiled.program.decls() if isinstance(decl, A.Task)}
    report = Reporter()
    for name, (ir, path) in sorted(compiled.tasks.items()):
        before = previous["tasks"].get(name)
        if not isinstance(before, dict) or not isinstance(before.get("scored"), dict) or name not in decls:
            continue
        now = {"version": ir.get("version", 1), "scored": scored_digests(ir, Path(path).resolve().parent)}
        changed, old, new = version_changes(before, now)
        decl = decls[name]
        where = next((e.value.span for e in decl.entries if isinstance(e, A.Version)), decl.name.span)
        if new < old:
            report.error("E912", f"task `{name}` is version {new}, but the previous build has version {old}",
                         where, hint="a version only goes up")
        elif changed and new == old:
            report.error("E912", f"task `{name}` changed its scored parts ({', '.join(changed)}) but keeps "
                         f"version {new}", where,
                         hint=f'write `version {new + 1}` and add `changes {{ {new + 1} "what changed" '
                              'because "why" }`, so results of both versions are not pooled')
    return report.diagnostics
