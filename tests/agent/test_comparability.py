"""`mlab report` keeps apart what is not comparable: runs of different task versions (or data)
are refused as one success rate, or reported side by side with --by-version; compute is shown
beside the score; a comparison across hardware classes carries a footnote; known issues are listed."""
from __future__ import annotations

import json
import shutil

import pytest

from agent_helpers import mlab, only_run, research_reply, scripted, write_tiny_task

REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
           research_reply("Final Answer", {"final_answer": "submitted"})]


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("comparable")
    source = write_tiny_task(folder / "task")
    code, _, err = mlab("run", source, "--model", scripted(folder, REPLIES), "--runs-dir", folder / "runs")
    assert code == 0, err
    return only_run(folder / "runs")


def _copy(run, target, run_id, **changes):
    """The run under another id, with run.json (and result.json) fields changed."""
    copy = shutil.copytree(run, target / run_id)
    meta, result = json.loads((copy / "run.json").read_text()), json.loads((copy / "result.json").read_text())
    meta["id"], result["run_id"] = run_id, run_id
    for key, value in changes.items():
        if key == "model":
            result["models"]["main"]["model"] = value
        elif key == "cpus":
            meta["hardware"]["cpus_allowed"] = value
        else:
            meta[key] = value
            if key == "task_version":
                result[key] = value
    (copy / "run.json").write_text(json.dumps(meta))
    (copy / "result.json").write_text(json.dumps(result))
    return copy


def test_runs_of_two_task_versions_are_refused_as_one_rate_and_reported_side_by_side(one_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(one_run, runs / one_run.name)
    _copy(one_run, runs, "20261201T000000-aaaaaa", task_version=2)
    code, _, err = mlab("report", runs)
    assert code == 2
    assert ("runs of task tiny on data lite were made on version 1 (1 run) and version 2 (1 run): one success "
            "rate cannot pool them; give --by-version") in err
    assert not (runs / "report").exists()
    code, out, err = mlab("report", runs, "--by-version")
    assert code == 0, err
    per_task = (runs / "report" / "per_task.csv").read_text()
    assert "tiny v1" in per_task and "tiny v2" in per_task


def test_the_same_version_on_different_data_is_refused(one_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(one_run, runs / one_run.name)
    meta = json.loads((one_run / "run.json").read_text())
    _copy(one_run, runs, "20261201T000000-bbbbbb", data=dict(meta["data"], key="f" * 64))
    code, _, err = mlab("report", runs)
    assert code == 2 and "used different prepared data" in err and "without a version bump" in err


def test_the_report_shows_compute_beside_score_and_footnotes_a_comparison_across_hardware(one_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(one_run, runs / one_run.name)
    _copy(one_run, runs, "20261201T000000-cccccc", model="mlab/other", cpus=4)
    code, out, err = mlab("report", runs, "--compare", "model:mlab/scripted,model:mlab/other")
    assert code == 0, err
    report = (runs / "report" / "report.md").read_text()
    assert "## Score beside compute per run" in report and "CPU-hours per run" in report
    assert "not measured" in report and "no accelerator, 1 CPU" in report
    assert "† Not like for like: model mlab/scripted ran on no accelerator, 1 CPU and model mlab/other on " \
           "no accelerator, 4 CPU" in report
    assert "note: Not like for like" in out


def test_known_issues_of_a_task_are_listed_in_the_report(one_run, tmp_path):
    runs = tmp_path / "runs"
    meta = json.loads((one_run / "run.json").read_text())
    copy = _copy(one_run, runs, "20261201T000000-dddddd", build=dict(meta["build"], digest="e" * 64))  # its own build
    task_yaml = copy / "build" / "tasks" / "tiny" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text() + "issues:\n- text: the ids follow y\n  since: 1\n")
    code, _, err = mlab("report", runs)
    assert code == 0, err
    report = (runs / "report" / "report.md").read_text()
    assert "## Known issues of the reported tasks" in report
    assert "- tiny (version 1): the ids follow y (since version 1, open)" in report


def test_mlab_list_shows_a_task_s_known_issues_beside_it(tmp_path, monkeypatch):
    source = write_tiny_task(tmp_path / "tasks")
    source.write_text(source.read_text().replace(
        '  agent research\n', '  agent research\n  version 2\n  changes { 2 "new ids" because "they leaked y" }\n'
        '  issue "ids leaked y" since 1 fixed 2\n  issue "two rows repeat" since 1\n', 1))
    monkeypatch.chdir(tmp_path)
    code, out, err = mlab("list")
    assert code == 0, err
    lines = out.split("tasks:\n")[1].splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[0] == "tiny")
    assert lines[at + 1:at + 3] == ["    known issue (version 2; since 1, fixed in version 2): ids leaked y",
                                    "    known issue (version 2; since 1, open): two rows repeat"]
    code, out, _ = mlab("list", "--json")
    tiny = next(t for t in json.loads(out)["tasks"] if t["name"] == "tiny")
    assert tiny["version"] == 2 and tiny["issues"][1] == {"text": "two rows repeat", "since": 1}


def test_the_viewer_shows_the_task_version_and_its_known_issues(one_run, tmp_path):
    runs = tmp_path / "runs"
    meta = json.loads((one_run / "run.json").read_text())
    copy = _copy(one_run, runs, "20261201T000000-eeeeee", build=dict(meta["build"], digest="d" * 64))
    task_yaml = copy / "build" / "tasks" / "tiny" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text() + "issues:\n- text: ids <leak> y\n  since: 1\n")
    code, _, err = mlab("view", copy, "-o", tmp_path / "view.html")
    assert code == 0, err
    page = (tmp_path / "view.html").read_text()
    assert "task version" in page and "ids &lt;leak&gt; y (since version 1, open)" in page


def test_the_audit_warns_when_a_task_changes_its_scored_parts_and_keeps_its_version(tmp_path):
    from mlab.audit.versions import version_warning
    from mlab.build import resolve_task

    source = write_tiny_task(tmp_path / "task")
    assert version_warning(resolve_task(str(source))) is None  # first seen: recorded
    assert version_warning(resolve_task(str(source))) is None  # the same digests
    source.write_text(source.read_text().replace("success improvement >= 10%", "success improvement >= 5%"))
    warning = version_warning(resolve_task(str(source)))
    assert warning.startswith("task tiny version 1: its scored parts (success) differ from an earlier build of "
                              "version 1") and "bump `version`" in warning
    source.write_text(source.read_text().replace("  agent research\n", '  agent research\n  version 2\n'
                                                 '  changes { 2 "a lower bar" because "5% is enough" }\n', 1))
    assert version_warning(resolve_task(str(source))) is None  # a new version: recorded afresh

