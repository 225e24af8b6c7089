"""Failure labels: each produced by a scripted run that causes it, and the claim rules on their own."""
from __future__ import annotations

import csv

import pytest
from scenarios import SCENARIOS

from report_helpers import mlab
from mlab.reports.runs import load_run
from mlab.reports.taxonomy import (NumberIndex, parse_number, script_failure, claimed_numbers, failure_labels,
                                   hallucinated_claims)


@pytest.fixture(scope="session")
def eval_rows(runs_dir, tmp_path_factory) -> dict[str, dict]:
    """`mlab eval -o` over every run, as the CSV a user reads, keyed by scenario."""
    output = tmp_path_factory.mktemp("eval") / "rows.csv"
    code, out, err = mlab("eval", runs_dir, "-o", output)
    assert code == 0, err
    with open(output, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {row["run_dir"].split("/")[-2]: row for row in rows}


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.expected], ids=lambda s: s.name)
def test_each_failure_label_comes_from_the_run_that_causes_it(scenario, eval_rows):
    row = eval_rows[scenario.name]
    names = {part.split(" (")[0].strip() for part in row["failure_labels"].split(";")}
    assert set(scenario.expected) <= names, row["failure_labels"]
    assert row["success"] == "False"


@pytest.mark.parametrize("name", ["research-0", "research-2", "react-0", "full-variant"])
def test_successful_runs_have_no_failure_label(name, eval_rows):
    assert eval_rows[name]["success"] == "True" and eval_rows[name]["failure_labels"] == ""


def test_limit_labels_say_which_limit(eval_rows):
    assert "limit reached (steps)" in eval_rows["steps-limit"]["failure_labels"]
    assert "limit reached (tokens)" in eval_rows["tokens-limit"]["failure_labels"]


def test_script_failures_say_crash_or_time_out(run_of):
    crash = failure_labels(load_run(run_of("crash")))
    timeout = failure_labels(load_run(run_of("timeout")))
    assert any(label.name == "script failure" and "1 crash" in label.detail for label in crash)
    assert any(label.name == "script failure" and "1 time-out" in label.detail for label in timeout)


def test_out_of_memory_anywhere_in_the_run_is_a_script_failure():
    def compute(**flags):
        return {"compute": {"exit_code": flags.get("exit_code", 0), "timed_out": False,
                            "out_of_memory": flags.get("oom", False)}}

    assert script_failure([compute(oom=True), compute()]) == "1 out of memory in 2 script run(s)"
    assert script_failure([compute(exit_code=1), compute()]) is None  # a crash the agent fixed
    assert script_failure([compute(), compute(exit_code=1)]) == "1 crash in 2 script run(s)"


def test_hallucinated_claims_use_declared_roles_for_any_section_names(run_of):
    research = hallucinated_claims(load_run(run_of("research-2")))
    assert [(c.step, c.section, c.number) for c in research] == [(3, "Fact Check", "0.0421")]
    plan = hallucinated_claims(load_run(run_of("claim")))
    assert [(c.section, c.number) for c in plan] == [("Research Plan and Status", "0.0815")]
    json_agent = hallucinated_claims(load_run(run_of("autogpt-claim")))
    assert [(c.section, c.number) for c in json_agent] == [("thoughts.plan", "0.0377")]


def test_numbers_shown_by_earlier_observations_are_not_claims(run_of, eval_rows):
    # research-0 states "W 0.6 on 15 training rows: confirmed": both numbers were printed by blend.py
    assert hallucinated_claims(load_run(run_of("research-0"))) == []
    assert eval_rows["research-0"]["hallucinated_claims"] == "0"
    assert eval_rows["research-2"]["hallucinated_claims"] == "1"


@pytest.mark.parametrize("text, role, claimed", [
    ("Accuracy 0.91: confirmed by the output.", "fact-check", ["0.91"]),
    ("Accuracy 0.91 is a guess.", "fact-check", []),
    ("We expect about 0.95 after tuning.", "fact-check", []),
    ("The gain of 38% is computed from the two numbers.", "fact-check", []),
    ("Step 12 and line 40 were read; 3 files listed.", "fact-check", []),
    ("12. Baseline run (confirmed).", "fact-check", []),
    ("train_v2.py uses lr 1e-3 and cifar10.", "fact-check", []),
    ("1. Try gradient boosting with 300 trees.", "plan", []),
    ("Status: achieved 0.912 accuracy.", "plan", ["0.912"]),
    ("Target: 0.95; achieved so far 0.90.", "plan", ["0.90"]),
])
def test_what_counts_as_a_number_stated_as_confirmed(text, role, claimed):
    assert [found for _, _, found in claimed_numbers(text, role)] == claimed


@pytest.mark.parametrize("observed, claimed, known", [
    ("Validation MAE: 23,767", "23,767", True), ("Validation MAE: 23,767", "23767", True),
    ("accuracy 0.8734", "0.87", True), ("accuracy 0.8734", "0.873", True), ("accuracy 0.8739", "0.873", True),
    ("accuracy 0.8734", "0.874", False), ("accuracy 0.8734", "87.3%", True), ("87.3% correct", "0.873", True),
    ("loss -0.52", "0.52", True), ("mae 14,709", "14,800", False),
])
def test_a_claimed_number_matches_its_rounded_or_quoted_forms(observed, claimed, known):
    index = NumberIndex()
    index.add_text(observed)
    ((_, match, _),) = claimed_numbers(f"{claimed}: confirmed.", "fact-check")
    assert index.knows(*parse_number(match)) is known


def test_a_task_error_is_the_only_label_and_not_the_agents():
    from types import SimpleNamespace

    run = SimpleNamespace(result={"success": False, "failure_mode": "task error", "submitted": True,
                                  "score": 1.0, "detail": "the baseline could not be measured: no train.py"},
                          records=[])
    labels = failure_labels(run)
    assert [(label.name, label.detail) for label in labels] == [
        ("task error", "the baseline could not be measured: no train.py")]
