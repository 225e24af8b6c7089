"""Who is at fault: the task's data model (mlabc.data_model) read from a prepared variant.

The compiler checks every variant it can make offline; a remote variant is made only here, so
preparation checks it the same way before any script runs (`check_prepared`). At scoring,
mlab.scoring.score asks `findings` whether the task's own data explains a refused or meaningless
score (ids that do not name the test rows, blank answers, answers the metric cannot score, classes
a probability table cannot name, constraints the answers break): then the run is a task error,
never charged to the agent. A demonstration played by mlab/demo that executes a script nothing
provides (`demonstration_fault`, the compiler's E570) fails at that step by the task's own doing:
the run is a task error, never the demonstration's "agent" failing.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError

# the findings that explain a failed or meaningless score (leaks and the problem text do not)
SCORING_CODES = ("E560", "E561", "E562", "E563", "E564")


def findings(task, variant_name: str, public: Path, private: Path, codes: tuple[str, ...] | None = None,
             light: bool = False) -> list:
    """The data model's findings on the prepared folders (only those of `codes`, when given);
    `light` reads only the answers, the public test table and vocabulary files (scoring's)."""
    from mlabc.data_model.checks import task_findings
    from mlabc.data_model.model import read_prepared

    from mlab.documents.view import thaw
    variant = task.variant(variant_name)
    only = None
    if light:
        only = {f"private/{name}" for name in variant.private[:1]}
        only |= {f"public/{name}" for name in variant.public if Path(name).name.startswith("test")}
        if task.view.submission:  # the constraints' vocabulary files
            only |= {f"public/{c.vocabulary_file}" for c in task.view.submission.constraints if c.vocabulary_file}
    # the compiler's data model reads the IR's own form: the documents are handed to it whole
    model = read_prepared(public, private, thaw(variant), only)
    found = task_findings(task.document, variant_name, model)
    return [f for f in found if codes is None or f.code in codes]


def describe(found: list) -> str:
    return "; ".join(f"{f.message} ({f.code}: {f.hint})" if f.hint else f"{f.message} ({f.code})" for f in found)


def check_prepared(task, variant_name: str, public: Path, private: Path, where: str,
                   codes: tuple[str, ...] | None = None) -> None:
    """DataError (a task error) when the prepared variant breaks what the task declares (the
    findings of `codes` only, when given)."""
    found = findings(task, variant_name, public, private, codes)
    if found:
        raise DataError(f"{where}: the prepared data breaks the task's declarations: {describe(found)}")


def demonstration_fault(task, variant_name: str, steps) -> str | None:
    """Why the task's demonstration cannot play through on this variant (a step executes a
    script that no starter file, public file or earlier step provides), or None."""
    from mlabc.data_model.scripts import missing_script

    starter = task.root / task.view.starter if task.view.starter else None
    present = set()
    if starter is not None and starter.is_dir():
        present = {p.relative_to(starter).as_posix() for p in starter.rglob("*") if p.is_file()}
    present |= set(task.variant(variant_name).public)
    missing = missing_script([{"action": s.action, "input": s.input} for s in steps], present)
    if missing is None:
        return None
    number, script, _ = missing
    return (f"the task's demonstration {task.view.demo} executes {script!r} at step {number}, which no "
            f"starter file, public file or earlier step provides (mlabc check: E570)")
