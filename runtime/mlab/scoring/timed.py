"""Score a timed metric (`metric runtime on "output file"`): starter and submission timed side by side.

The task's starter script (from the run's initial workspace, or the task's starter folder
with the prepared data) and the submitted script run in TIMED_RUNS rounds in the sandbox, one
run of each per round, the order alternating from round to round (round_order), each run in a
fresh copy of its workspace without the output file. The output the submission writes must
match the starter's (mlab.scoring.metrics.compare_outputs: arrays close, text equal), and the task's
private expected output when it has one; otherwise the submission scores nothing and the
reason says what differed. The score is the submission's median wall time, the baseline the
starter's median, so the improvement is 1 - 1/speed-up. Each round's own speed-up is kept too:
success needs it to clear the threshold in enough rounds to be told apart from timing noise (a
sign test, mlab.scoring.metrics.rounds_required: all of the first five; when the medians clear it but
a round did not, TIMED_EXTRA_RUNS more rounds are timed and 12 of the 15 must). A starter that
fails or disagrees with the expected output is a fault of the task, reported as such.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

from mlab.confined import Refused, copy_out, open_file
from mlab.errors import MlabError
from mlab.failure import FailureMode
from mlab.scoring.outcome import Score
from mlab.scoring.timed_sandbox import copy_files, fresh_copy, how_it_ended, output_tail, scoring_sandbox

TIMED_RUNS = 5  # rounds; a submission must clear the threshold in all five...
TIMED_EXTRA_RUNS = 10  # ...or, when its medians do and some round did not, in 12 of 15 (metrics.rounds_required)


def round_order(number: int) -> tuple[str, str]:
    """Which program runs first in round `number` (from 1): the starter in odd rounds, so round 1
    makes the reference output; the submission in even ones, so that warm caches and drifting
    clocks favour neither."""
    return ("starter", "submission") if number % 2 == 1 else ("submission", "starter")


def expected_output(task, variant_name: str, private_dir: Path, output: str) -> Path | None:
    """The task's private reference output: `expected_<output>`, else its only private file of that kind."""
    private = list(task.variant(variant_name).private)
    named = f"expected_{Path(output).name}"
    if named in private:
        return Path(private_dir) / named
    same_kind = [name for name in private if Path(name).suffix == Path(output).suffix]
    return Path(private_dir) / same_kind[0] if len(same_kind) == 1 else None


def starter_folder(task, variant_name: str, into: Path) -> Path:
    """The workspace a run starts from: the task's starter files and the prepared public data."""
    from mlab.data.prepare import copy_tree, install_starter, prepare_data

    into.mkdir(parents=True, exist_ok=True)
    install_starter(task, into)
    copy_tree(prepare_data(task, variant_name).public, into)
    return into


def say_on_stderr(line: str) -> None:
    """The default progress of timed scoring: a line on stderr, so stdout keeps only results."""
    print(line, file=sys.stderr, flush=True)


def score_timed(task, variant_name: str, workspace: Path, private_dir: Path, *, starter: Path | None = None,
                runs: int | None = None, python: str | None = None, device: str | None = None,
                progress: Callable[[str], None] = say_on_stderr):
    """The Score of the submitted script in workspace, with the side-by-side baseline in Score.baseline.

    `progress` gets one line per timed round (rounds take as long as the scripts), so a caller
    can show that scoring is under way.
    """
    from mlab.scoring.metrics.timing import needs_more_rounds, timed_score

    runs = TIMED_RUNS if runs is None else runs
    view = task.view
    script = view.submission.file
    workspace = Path(workspace)
    missing = _missing_submission(workspace, script)
    if missing is not None:
        return missing
    sandbox = scoring_sandbox(task, variant_name, workspace, private_dir, python=python, device=device)
    expected = expected_output(task, variant_name, private_dir, view.metric.columns[0])
    scratch = Path(tempfile.mkdtemp(prefix="mlab-timed-"))
    try:
        base = starter if starter is not None else starter_folder(task, variant_name, scratch / "starter")
        rounds = _Rounds(task, scratch, base, workspace, progress, sandbox, expected)
        first = max(1, runs)
        invalid = rounds.time(1, first)
        if invalid is None and needs_more_rounds(rounds.times["starter"], rounds.times["submission"],
                                                 view.success.improvement):
            invalid = rounds.time(first + 1, first + TIMED_EXTRA_RUNS)
        if invalid is not None:
            return invalid
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    timing = timed_score(rounds.times["starter"], rounds.times["submission"])
    baseline = _baseline(rounds.reference_script, rounds.times)
    baseline["speedup"] = round(timing["speedup"], 4)
    baseline["paired_speedups"] = [round(r, 6) for r in timing["paired_speedups"]]
    baseline["speedup_floor"] = round(timing["speedup_floor"], 4)
    return Score(timing["score"], True, baseline=baseline)


def _missing_submission(workspace: Path, script: str) -> Score | None:
    """The Score of a workspace without the script to time (or where it may not be read), else None."""
    try:
        os.close(open_file(workspace, script)[0])
    except (FileNotFoundError, NotADirectoryError):
        return Score(None, False, FailureMode.SUBMISSION_FORMAT_ERROR,
                     f"no submission: {script} (the script to time) was not found in the workspace")
    except Refused as why:
        return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, str(why))
    return None


class _Rounds:
    """The timed rounds of one scoring: the starter and the submission each run in a fresh copy of
    their workspace (the submission's files over the starter's), their times kept in `times`."""

    def __init__(self, task, scratch: Path, base: Path, workspace: Path, progress: Callable[[str], None],
                 sandbox, expected: Path | None):
        view = task.view
        self.task, self.scratch, self.base, self.progress = task, scratch, base, progress
        self.sandbox, self.expected = sandbox, expected
        self.script = view.submission.file
        self.output = view.metric.columns[0]
        self.reference_script = view.baseline.script if view.baseline.kind == "run" else self.script
        self.candidate_base = fresh_copy(base, scratch / "candidate-base", leave_out=(self.output,))
        copy_files(workspace, self.candidate_base)  # the submission over the starter's files
        self.times: dict[str, list[float]] = {"starter": [], "submission": []}
        self.reference = scratch / f"reference-{Path(self.output).name}"

    def time(self, first: int, last: int) -> Score | None:
        """Time rounds first..last; the Score of an invalid submission, else None."""
        for number in range(first, last + 1):
            for which in round_order(number):
                invalid = self._time_starter(number == 1) if which == "starter" else self._time_submission()
                if invalid is not None:
                    return invalid
            self.progress(f"timed scoring: round {number} of {last}: starter {self.times['starter'][-1]:.2f}s, "
                          f"{self.script} {self.times['submission'][-1]:.2f}s")
        return None

    def _time_starter(self, first: bool) -> None:
        folder = fresh_copy(self.base, self.scratch / "run", leave_out=(self.output,))
        result = self.sandbox.run(folder, [self.reference_script])
        written = _take_output(folder, self.output, self.scratch)
        _check_starter(self.task, result, written, self.expected, self.reference_script, self.output)
        self.times["starter"].append(max(result.wall_s, 1e-6))
        if first:
            shutil.copyfile(written, self.reference)  # both harness-owned: taken through the confined reader

    def _time_submission(self) -> Score | None:
        folder = fresh_copy(self.candidate_base, self.scratch / "run", leave_out=(self.output,))
        result = self.sandbox.run(folder, [self.script])
        failure = how_it_ended(result)
        if failure:
            return _invalid(f"{self.script} {failure}; its last output:\n{output_tail(result)}", self.times,
                            self.reference_script)
        written = _take_output(folder, self.output, self.scratch)
        problem = written if isinstance(written, str) else _output_problem(written, self.reference, self.expected)
        if problem:
            return _invalid(f"{self.script} wrote a wrong {self.output}, so its time does not count: {problem}",
                            self.times, self.reference_script)
        self.times["submission"].append(max(result.wall_s, 1e-6))
        return None


def _take_output(folder: Path, output: str, scratch: Path) -> Path | str:
    """A harness-owned copy of the output a script wrote in folder, taken through the confined
    reader (mlab.confined), or why there is none: a link or special file is never followed."""
    taken = scratch / "written" / Path(output).name
    taken.parent.mkdir(exist_ok=True)
    taken.unlink(missing_ok=True)
    try:
        copy_out(folder, output, taken)
    except (FileNotFoundError, NotADirectoryError):
        return f"the script did not write {Path(output).name}"
    except Refused as why:
        return str(why)
    return taken


def _check_starter(task, result, written: Path | str, expected: Path | None, script: str, output: str) -> None:
    """A starter that fails or writes a wrong output makes every score meaningless: the task's fault."""
    from mlab.scoring.metrics.outputs import compare_outputs

    failure = how_it_ended(result)
    if failure:
        raise MlabError(f"task {task.name}: its starter {script} {failure} while being timed; "
                        f"its last output:\n{output_tail(result)}")
    if isinstance(written, str):
        raise MlabError(f"task {task.name}: its starter {script} did not write {output} as a plain file: {written}")
    if expected is not None:
        same, why = compare_outputs(expected, written)
        if not same:
            raise MlabError(f"task {task.name}: its starter's {output} differs from the task's expected "
                            f"output {expected.name}: {why}")


def _output_problem(written: Path, reference: Path, expected: Path | None) -> str | None:
    from mlab.scoring.metrics.outputs import compare_outputs

    for target, what in ((reference, "the starter's output"), (expected, "the expected output")):
        if target is None:
            continue
        same, why = compare_outputs(target, written)
        if not same:
            return f"{why} (compared with {what})"
    return None


def _baseline(script: str, times: dict[str, list[float]]) -> dict:
    from statistics import median

    starter = times["starter"]
    return {"kind": "run", "script": script, "value": float(median(starter)) if starter else None,
            "measured": True, "timed": "side by side with the submission in alternating rounds, median wall seconds",
            "runs": len(starter), "starter_times_s": [round(t, 4) for t in starter],
            "submission_times_s": [round(t, 4) for t in times["submission"]]}


def _invalid(detail: str, times: dict[str, list[float]], script: str):
    return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, detail, baseline=_baseline(script, times))


def score_run_timed(run, workspace: Path | None = None, runs: int | None = None,
                    progress: Callable[[str], None] = say_on_stderr):
    """score_timed for a run: the starter from the run's initial snapshot, the run's interpreter."""
    from mlab.snapshots import ObjectStore, restore_files

    store = ObjectStore(run.dir / "objects", durable=False)
    scratch = Path(tempfile.mkdtemp(prefix="mlab-timed-starter-"))
    try:
        restore_files(store, store.get_json(run.meta["initial_snapshot"]), scratch / "starter")
        return score_timed(run.task, run.meta["data"]["variant"], workspace or run.workspace.root, run.private_dir,
                           starter=scratch / "starter", runs=runs, python=run.scripts.python,
                           device=run.scripts.device, progress=progress)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
