"""Who is at fault: the task's data model (mlabc.data_model) read from a prepared variant.

The compiler checks every variant it can make offline; a remote variant is made only here, so
preparation checks it the same way before any script runs (`check_prepared`), as it does a
generator's (the compiler checked a sample of it: `preparation_codes`). The verdict is kept
beside the prepared data (`checked.json`) under a digest of the declarations the checks read
(`verdict_digest`): prepared data reused after such a declaration changed (a metric, a
constraint, the answers' kind) is checked again, never taken on an old verdict. At scoring,
mlab.scoring.score asks `findings` whether the task's own data explains a refused or meaningless
score (ids that do not name the test rows, blank answers, answers the metric cannot score, classes
a probability table cannot name, constraints the answers break): then the run is a task error,
never charged to the agent. A demonstration played by mlab/demo that executes a script nothing
provides (`demonstration_fault`, the compiler's E570) fails at that step by the task's own doing:
the run is a task error, never the demonstration's "agent" failing.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mlab.errors import DataError

# the findings that explain a failed or meaningless score (leaks and the problem text do not)
SCORING_CODES = ("E560", "E561", "E562", "E563", "E564")
VERDICTS = "checked.json"   # in a prepared folder: the digests of the declarations its data passed
VERDICTS_KEPT = 16


def preparation_codes(variant_name: str, variant) -> tuple[str, ...] | None:
    """The findings preparation refuses a variant for (None: all of them). `mlabc check` made a
    bundled table, a scikit-learn set or a folder whole, so preparation repeats only the findings
    that would fail its scoring (for a task built without the check); a remote variant, a `prepare`
    hook or a `full` generator it never made, and a generator it may have asked for a sample only
    (mlabc.data_model.build.SAMPLE_ROWS): those get every check on their real data."""
    from mlabc.data_model.build import modelled

    from mlab.documents.view import thaw
    if variant.source.kind == "generate" or not modelled(variant_name, thaw(variant)):
        return None
    return SCORING_CODES


def verdict_digest(task, variant_name: str, codes: tuple[str, ...] | None) -> str:
    """The SHA-256 of what a verdict on prepared data depends on beyond the data itself (which the
    preparation key names): the declarations the checks read (the metric, the submission and its
    constraints, the variant), the findings asked for, and the checks' own code."""
    from mlabc.data_model.build import code_digest

    from mlab.documents.view import thaw
    fields = {"metric": thaw(task.view.metric), "submission": thaw(task.view.submission),
              "variant": thaw(task.variant(variant_name)), "codes": codes, "checks": code_digest().hex()}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


def _verdicts(folder: Path) -> list[str]:
    try:
        kept = json.loads((folder / VERDICTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in kept if isinstance(d, str)] if isinstance(kept, list) else []


def check_declarations(task, variant_name: str, folder: Path, where: str) -> None:
    """DataError (a task error) when the prepared variant in `folder` breaks the task's declarations
    (the findings of preparation_codes); a verdict already given on the same declarations is not
    asked again. A passed verdict is added to the folder's record (a record the harness cannot
    write is only asked again next time)."""
    codes = preparation_codes(variant_name, task.variant(variant_name))
    digest = verdict_digest(task, variant_name, codes)
    kept = _verdicts(folder)
    if digest in kept:
        return
    check_prepared(task, variant_name, folder / "public", folder / "private", where, codes)
    from mlab.standard_json import write_json

    try:
        write_json(folder / VERDICTS, (kept + [digest])[-VERDICTS_KEPT:], indent=None)
    except OSError:
        pass


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
