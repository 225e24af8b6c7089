"""Contamination canaries and `mlab probe`: the canary GUID is derived as documented and sits in
every run's workspace; the probe tells a model that has memorised the task from one that has not."""
from __future__ import annotations

import json
import uuid

from agent_helpers import mlab, only_run, research_reply, scripted, write_tiny_task

PROBLEM = ("Each row of train.csv holds a measurement x of a small physical system and the response y "
           "that the system gave, recorded by a careful lab over many quiet afternoons. Predict the "
           "response y of every row of test.csv from its x and write submission.csv with the columns "
           "Id and y, one row per test row, in any order you like.")


def _task(folder):
    source = write_tiny_task(folder)
    source.write_text(source.read_text().replace(
        'problem "Predict y from x. Write submission.csv with the columns Id and y."', f'problem "{PROBLEM}"'))
    return source


def test_the_canary_guid_is_the_documented_uuid5_and_changes_with_the_version():
    from mlab.run.canary import canary_guid

    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "https://mlab.dev/canary")
    assert canary_guid("tiny", 1) == str(uuid.uuid5(namespace, "tiny@1"))
    assert canary_guid("tiny", 2) != canary_guid("tiny", 1) != canary_guid("tinier", 1)


def test_every_workspace_holds_the_canary_of_the_task_and_its_version(tmp_path):
    from mlab.run.canary import canary_guid

    source = write_tiny_task(tmp_path / "task")
    source.write_text(source.read_text().replace(
        "  agent research\n", '  agent research\n  version 3\n  changes { 2 "a" because "b"  3 "c" because "d" }\n'))
    replies = [research_reply("Final Answer", {"final_answer": "nothing"})]
    code, _, err = mlab("run", source, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1 and "Traceback" not in err  # a run without a submission fails, and still had its canary
    canary = (only_run(tmp_path / "runs") / "workspace" / "CANARY.txt").read_text()
    assert canary.startswith(f"MLAB CANARY GUID {canary_guid('tiny', 3)} (task tiny, version 3)")
    assert canary_guid("tiny", 3) != canary_guid("tiny", 1)


def _probe(tmp_path, source, answers_for, name):
    from mlab.audit.familiarity import probe_items
    from mlab.build import resolve_task

    items = probe_items(resolve_task(str(source)), 8, 0)
    model = scripted(tmp_path, [answers_for(item) for item in items], name=f"{name}.json")
    out_file = tmp_path / f"{name}-probe.json"
    code, out, err = mlab("probe", source, "--model", model, "-o", out_file)
    assert code == 0, err
    return json.loads(out_file.read_text()), out


def test_the_probe_separates_a_model_that_memorised_the_task_from_one_that_did_not(tmp_path):
    source = _task(tmp_path / "task")
    # memorised: gives the true continuation of the canary and of every real prefix; a shuffled
    # control's true continuation it cannot know, so it answers with what it remembers of the text
    remembered, out = _probe(tmp_path, source, lambda i: i.expected if i.kind != "control" else
                             "Predict the response y of every row", "memorised")
    fresh, fresh_out = _probe(tmp_path, source, lambda i: "the model writes a plausible but unrelated sentence",
                              "fresh")
    assert remembered["pairs"] == fresh["pairs"] == 8 and len(remembered["items"]) == 17
    assert remembered["canary"] == 1.0 and fresh["canary"] == 0.0
    low, high = remembered["interval"]
    assert low > 0.5 and remembered["familiarity"] > 0.5
    assert fresh["interval"][1] < low and abs(fresh["familiarity"]) < 0.2
    assert remembered["verdict"].startswith("contaminated") and fresh["verdict"] == "no sign of familiarity"
    assert "familiarity: +" in out and "95% interval" in out and "verdict: no sign of familiarity" in fresh_out


def test_the_probe_refuses_a_bad_count_and_reports_a_model_that_runs_out(tmp_path):
    source = _task(tmp_path / "task")
    code, _, err = mlab("probe", source, "--model", "mlab/demo", "--prefixes", "-1")
    assert code == 2 and "--prefixes -1" in err
    code, _, err = mlab("probe", source, "--model", scripted(tmp_path, ["one answer"]))
    assert code == 1 and err.startswith("mlab: probe of mlab/scripted:") and "Traceback" not in err


def test_the_report_shows_saved_probes_beside_the_scores(tmp_path):
    source = _task(tmp_path / "task")
    runs = tmp_path / "runs"
    mlab("run", source, "--model", scripted(tmp_path, [research_reply("Final Answer", {"final_answer": "x"})],
                                            name="run.json"), "--runs-dir", runs)
    (runs / "probes").mkdir()
    _probe(tmp_path, source, lambda i: "an unrelated sentence", "fresh")
    (tmp_path / "fresh-probe.json").rename(runs / "probes" / "fresh.json")
    # probes/ of a runs folder from elsewhere: a file of the wrong shape is not read as a probe, and
    # a probe's texts reach report.md without terminal control sequences or a '|' that breaks the row
    (runs / "probes" / "shape.json").write_text(json.dumps({"task": ["x"], "model": 1, "familiarity": "high",
                                                            "canary": None, "interval": [1], "verdict": {}}))
    hostile = json.loads((runs / "probes" / "fresh.json").read_text())
    (runs / "probes" / "title.json").write_text(json.dumps({**hostile, "verdict": "owned\x1b]0;pwned\x07 | extra"}))
    code, _, err = mlab("report", runs)
    assert code == 0, err
    report = (runs / "report" / "report.md").read_text()
    assert "## Familiarity probes" in report
    assert "| tiny | 1 | mlab/scripted:" in report and "| no sign of familiarity |" in report
    assert "| shape.json | | | not a probe result | | |" in report
    assert "\x1b" not in report and "\x07" not in report and "owned" in report and "\\| extra |" in report
