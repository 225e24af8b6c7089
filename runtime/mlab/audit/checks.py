"""`mlab audit TASK`: check that a task can be trusted as a benchmark task.

On a fresh run of the task (its real workspace, private folder and sandbox policy):
1. leaks: no public file holds an answer column or values that reproduce the answers
   (mlab.audit.leaks);
2. confinement: a probe script in the sandbox reaches none of private/, the prepared data
   and caches, the task sources and bundled data, the source tree (mlab.audit.probe);
3. baseline: the starter's score reproduces the recorded baseline (tasks/baselines.json)
   within its declared relative tolerance (untimed metrics); a timed task's starter runs and
   writes the expected output; a declared `baseline N because` is reported as such;
4. prompt: what the agent's model first reads (a text agent's prompt; a tool agent's system
   prompt and first user message) names the submission file and its columns;
5. column constraints (a task that declares any): the task's own answers keep them, or a
   perfect submission would be refused;
6. exploits: constant predictions, the sample submission, predictions from the ids alone, from
   row order and from test rows that duplicate training rows, each scored by the task's own
   scorer, stay below the success threshold (mlab.audit.exploits).
The audit passes when there are no findings.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class AuditReport:
    """What the audit checked and what it found (findings make it fail)."""

    task: str
    variant: str
    passed: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    baseline: float | None = None  # the score exploits are compared with (measured, else declared)
    exploits: list = field(default_factory=list)  # mlab.audit.exploits.ExploitResult, one per exploit tried

    @property
    def ok(self) -> bool:
        return not self.findings

    def check(self, name: str, problems: list[str]) -> None:
        if problems:
            self.findings += [f"{name}: {p}" for p in problems]
        else:
            self.passed.append(name)


def audit_task(task, variant_name: str = "lite", python: str | None = None, agent: str | None = None) -> AuditReport:
    """Run every audit check on a fresh run of the task's variant, with the task's default agent
    or the one named (whose first messages the prompt check reads)."""
    from mlab.audit.exploits import CHECK as EXPLOITS
    from mlab.audit.leaks import leak_findings
    from mlab.audit.probe import run_probe
    from mlab.data.prepare import prepare_data
    from mlab.run.folder import Run

    report = AuditReport(task.name, variant_name)
    from mlab.audit.versions import version_warning

    warning = version_warning(task)
    if warning:
        report.notes.append(f"warning: {warning}")
    prepared = prepare_data(task, variant_name)
    report.check("answers stay private", leak_findings(task.variant(variant_name), prepared.public, prepared.private))
    report.check("prompt names the submission", prompt_findings(task, agent))
    if task.view.submission and task.view.submission.constraints:
        from mlab.scoring.constraints import answer_problems

        report.check("answers keep the column constraints", answer_problems(task, variant_name, prepared.private))
    runs_dir = Path(tempfile.mkdtemp(prefix="mlab-audit-runs-"))
    try:
        run = Run.create(task, task.build.agent(agent or task.view.agent), runs_dir, data=variant_name, python=python)
        try:
            reached, sandboxed = run_probe(run, prepared.folder)
            if not sandboxed:
                report.notes.append("scripts ran without the bubblewrap sandbox, so confinement rests on "
                                    "file permissions alone")
            report.check("sandbox confines scripts", reached)
            report.check("baseline reproduces", baseline_findings(run, report))
            report.check(EXPLOITS, exploit_findings(task, variant_name, prepared, report))
        finally:
            run.close()
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    return report


def exploit_findings(task, variant_name: str, prepared, report: AuditReport) -> list[str]:
    """The cheap exploits, scored against the starter's baseline; each one that reaches the
    success threshold is a finding, and every score is a note."""
    from mlab.audit.exploits import exploit_check

    results, findings, notes = exploit_check(task, variant_name, prepared.public, prepared.private, report.baseline)
    report.exploits = results
    report.notes += notes
    return findings


def first_messages(task, agent) -> str:
    """What the agent's model reads of the task at its first step, as the agent's kind sends it:
    a text agent's one prompt; a tool agent's system prompt and first user message (the problem,
    or its `problem` template); a tree-search agent's operators, which are given the problem."""
    from mlab.agent import context as C
    from mlab.agent.prompting import Templates

    templates = Templates(agent.templates)
    steps = task.view.limits.steps or 0
    if agent.view.search:
        return task.view.problem or ""
    if agent.view.reply and agent.view.reply.format == "tools":
        system = templates.render("prompt", **C.tools_prompt_context(
            task=task, tools="", tool_names=[], reply_format="", max_steps=steps))
        problem = templates.render("problem", **C.problem_context(task=task)) if templates.has("problem") \
            else task.view.problem or ""
        return system + "\n" + problem
    return templates.render("prompt", **C.prompt_context(
        task=task, tools="", tool_names=[], reply_format="", history="", research_log="", retrieved="",
        step=1, max_steps=steps))


def prompt_findings(task, agent_name: str | None = None) -> list[str]:
    """The agent's first messages must name the submission file and every column, each as a word
    of its own (a column `y` is not named by "you")."""
    import re

    agent = task.build.agent(agent_name or task.view.agent)
    text = first_messages(task, agent)
    submission = task.view.submission
    wanted = [submission.file, *submission.columns] if submission else [None]
    missing = [w for w in wanted if w and not re.search(rf"(?<![\w.-]){re.escape(w)}(?![\w-])", text)]
    return [f"the first messages of agent {agent.name} do not mention {', '.join(map(repr, missing))}"] \
        if missing else []


def baseline_findings(run, report: AuditReport) -> list[str]:
    """Does the starter reproduce the recorded baseline (or, when timed, run correctly)?"""
    from mlab.scoring.baseline import is_current, recorded_entry, within_tolerance
    from mlab.errors import MlabError
    from mlab.scoring.baseline import run_starter

    task, variant = run.task, run.meta["data"]["variant"]
    declared = task.view.baseline
    if declared.kind == "value":
        report.baseline = float(declared.value)
        report.notes.append(f"declared baseline {declared.value} because {declared.reason!r}: "
                            "the starter is deliberately incomplete")
        return []
    if task.view.metric.timed:
        from mlab.scoring.timed import score_run_timed

        try:
            timed = score_run_timed(run, workspace=run.workspace.root, runs=1)  # a check, not a timing
        except MlabError as problem:
            return [str(problem)]
        if timed.value is None:
            return [f"the starter timed against itself failed: {timed.detail}"]
        report.notes.append(f"timed metric: the starter ran in {timed.value:.3g} s and wrote the expected output; "
                            "no number is recorded (it is timed beside each submission)")
        return []
    measured = run_starter(run, declared.script)
    if measured.get("value") is None:
        return [f"the starter {declared.script} gave no score (exit code {measured.get('exit_code')}): "
                f"{measured.get('failure')}"]
    report.baseline = float(measured["value"])
    entry = recorded_entry(task, variant)
    if entry is None:
        return [f"no recorded baseline for {task.name} ({variant}); measured {measured['value']:.6g}: record it "
                f"with `mlab baseline {task.name} --data {variant} --record`"]
    problems = []
    if not is_current(task, variant, entry):
        problems.append("the recorded baseline was measured on other starter code or data (code hash differs); "
                        f"re-record it with `mlab baseline {task.name} --data {variant} --record`")
    tolerance = float(entry.get("tolerance", 0.02))
    if not within_tolerance(measured["value"], float(entry["value"]), tolerance):
        problems.append(f"the starter scored {measured['value']:.6g}, the recorded baseline is {entry['value']:.6g} "
                        f"(tolerance {tolerance:.0%})")
    else:
        report.notes.append(f"starter scored {measured['value']:.6g}; recorded {entry['value']:.6g}")
    return problems
