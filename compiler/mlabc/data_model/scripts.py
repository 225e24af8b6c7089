"""The task's Python the runtime would run, checked before it runs: the scripts a demonstration
executes (E570) and the evaluator's signature and its way to reject a submission (E568, E569).

Nothing here imports the task's code: the evaluator is read with `ast`, the demonstration as JSON.
"""
from __future__ import annotations

import ast
from pathlib import Path

from .. import ast as A
from ..lower.data_files import normalise_pattern
from ..lower.demo import demo_steps
from ..values import Reporter, did_you_mean

# the inputs of a step that name a file the step writes (Write File, Append File, Copy File,
# Edit Script (AI), Edit Script Segment (AI))
WRITES = ("save_name", "destination")
REJECTION = "SubmissionInvalid"


def _written(step: dict) -> list[str]:
    given = step.get("input") or {}
    names = [given[key] for key in WRITES if isinstance(given.get(key), str)]
    if "content" in given and isinstance(given.get("file_name"), str):
        names.append(given["file_name"])
    return [normalise_pattern(n) for n in names]


def missing_script(steps: list[dict], present: set[str]) -> tuple[int, str, list[str]] | None:
    """(step number, script, the scripts there) of the first step that executes a script which
    neither `present` (the starter's and the public files) nor an earlier step provides; None when
    every executed script is there. The compiler's E570 and the runtime's verdict on a played
    demonstration (mlab.data.faults.demonstration_fault) both ask this."""
    present = {normalise_pattern(p) for p in present}
    for number, step in enumerate(steps, 1):
        script = (step.get("input") or {}).get("script_name")
        if "execute" in str(step.get("action", "")).lower() and isinstance(script, str):
            name = normalise_pattern(script)
            if name not in present:
                return number, script, sorted(p for p in present if p.endswith(".py"))
        present.update(_written(step))
    return None


def check_demo_scripts(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """E570 for a demonstration step that executes a script no starter file, public file or
    earlier step provides: the demonstration would fail at that step, at run time."""
    if not ir.get("demo"):
        return
    entry = next(e for e in decl.entries if isinstance(e, A.Demo))
    starter = root / ir["starter"] if ir.get("starter") else None
    present = set()
    if starter is not None and starter.is_dir():
        present = {p.relative_to(starter).as_posix() for p in starter.rglob("*") if p.is_file()}
    present |= {normalise_pattern(n) for variant in ir["data"].values() for n in variant["public"]}
    missing = missing_script(demo_steps(root, ir["demo"]), present)
    if missing is not None:
        number, script, scripts = missing
        report.error("E570", f"demonstration {ir['demo']!r} step {number} executes {script!r}, which no "
                     "starter file, public file or earlier step provides", entry.value.span,
                     hint=did_you_mean(normalise_pattern(script), scripts, "the scripts there") if scripts
                     else "write the script in an earlier step (Write File), or add it to the starter")


def check_evaluator(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """E568 for an evaluator whose signature the runtime cannot call (two positional parameters:
    the submission's folder and the private folder); E569 for one that can never reject a
    submission (no `raise SubmissionInvalid` in its file): every submission it cannot score
    would be a task error, and every one it scores counted, however malformed."""
    evaluator = ir.get("evaluator")
    if not evaluator:
        return
    entry = next(e for e in decl.entries if isinstance(e, A.Evaluator))
    try:
        tree = ast.parse((root / evaluator["file"]).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return  # E504, E506 say why
    function = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == evaluator["function"]), None)
    if function is None:
        return  # E505
    where = f"{evaluator['file']}:{evaluator['function']}"
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    required = len(positional) - len(arguments.defaults)
    kw_required = [a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is None]
    if isinstance(function, ast.AsyncFunctionDef) or kw_required or required > 2 or \
            (len(positional) < 2 and arguments.vararg is None):
        shown = ", ".join(a.arg for a in positional) or "no parameters"
        report.error("E568", f"evaluator {where} cannot be called as the runtime calls it: "
                     f"{'it is async' if isinstance(function, ast.AsyncFunctionDef) else 'it takes ' + shown}"
                     + (f" and requires the keyword(s) {', '.join(kw_required)}" if kw_required else ""),
                     entry.target.span, hint=f"def {evaluator['function']}(submission_dir, private_dir) -> float")
        return
    raises = [n for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc is not None
              and REJECTION in ast.unparse(n.exc)]
    if not raises:
        report.error("E569", f"evaluator {where} never rejects a submission: its file raises no {REJECTION}",
                     entry.target.span, hint=f"check the submission's files and raise an exception class named "
                                             f"{REJECTION} with what is wrong (docs/authoring.md, the evaluator contract)")
