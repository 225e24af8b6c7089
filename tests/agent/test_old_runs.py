"""Runs written by the previous trace version (1) are still read: resumed, scored by `mlab eval`,
shown by `mlab view` and counted by `mlab report`.

data/runs-v1/ holds a run of the tiny task by the keyless demo model (List Files, Execute Script,
Final Answer) exactly as mlab 0.1.0 wrote it before trace records carried a schema version.
"""
import json
import shutil
import sys
from pathlib import Path

import pytest

from agent_helpers import mlab, result, trace, trace_problems

OLD_RUNS = Path(__file__).parent / "data" / "runs-v1"
REPO = Path(__file__).resolve().parents[2]
OLD_RUN_ID = "20261201T182227-d6c232"


@pytest.fixture
def old_runs(tmp_path) -> Path:
    """A copy of the version-1 runs folder (the commands may write beside the runs)."""
    copy = tmp_path / "runs"
    shutil.copytree(OLD_RUNS, copy)
    meta_path = copy / OLD_RUN_ID / "run.json"
    meta = json.loads(meta_path.read_text())
    meta["python"] = sys.executable  # the interpreter of the machine that made it may not exist here
    meta_path.write_text(json.dumps(meta, indent=2))
    return copy


def test_the_fixture_is_a_version_1_run():
    records = trace(OLD_RUNS / OLD_RUN_ID)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    assert all("schema_version" not in r for r in records)
    assert json.loads((OLD_RUNS / OLD_RUN_ID / "result.json").read_text())["schema_version"] == 1


def test_a_version_1_run_killed_after_its_first_step_resumes_and_is_scored(old_runs):
    from mlab.trace import repair_trace

    run_dir = old_runs / OLD_RUN_ID
    (run_dir / "result.json").unlink()
    repair_trace(run_dir / "trace.jsonl", keep=1)  # as if killed after step 1
    (run_dir / "trace.jsonl.torn").unlink()
    code, out, err = mlab("run", "--resume", run_dir)
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    assert "wrote 4 predictions" in records[1]["observation"]
    from mlab.trace import TRACE_VERSION

    assert [r.get("schema_version") for r in records] == [None, TRACE_VERSION, TRACE_VERSION]  # version 1, then what resume wrote
    assert trace_problems(run_dir) == []
    document = result(run_dir)
    assert (document["end_reason"], document["score"], document["steps"]) == ("final_answer", 8.5, 3)


def test_mlab_eval_scores_a_version_1_run(old_runs):
    code, out, err = mlab("eval", old_runs / OLD_RUN_ID)
    assert code == 0, err
    assert OLD_RUN_ID in out and "8.5" in out


def test_mlab_view_shows_a_version_1_run(old_runs, tmp_path):
    code, out, err = mlab("view", old_runs / OLD_RUN_ID, "--output", tmp_path / "page.html")
    assert code == 0, err
    page = (tmp_path / "page.html").read_text()
    assert "List Files" in page and "wrote 4 predictions" in page and "Final Answer" in page


def test_mlab_report_counts_a_version_1_run(old_runs, tmp_path):
    code, out, err = mlab("report", old_runs, "--output", tmp_path / "report")
    assert code == 0, err
    written = "".join(p.read_text() for p in (tmp_path / "report").rglob("*.md"))
    assert "tiny" in written and "research" in written


# -- the build copy, read by the rules of the version it records (mlab.documents.versions) -----

PROBLEM = "Predict y from x. Write submission.csv with the columns Id and y."


def _readers(run_dir: Path, tmp_path: Path) -> dict:
    """What report, view, the ATIF export and eval --at make of a run folder (none may trace back);
    eval --at at 2,000 tokens scores step 1's snapshot, through the task of the build copy."""
    seen = {}
    for name, args in (("report", ("report", run_dir.parent, "-o", tmp_path / "report")),
                       ("view", ("view", run_dir, "--output", tmp_path / "page.html")),
                       ("atif", ("export", run_dir, "--to", "atif", "-o", tmp_path / "atif.json")),
                       ("eval_at", ("eval", run_dir, "--at", "tokens=2000", "--json"))):
        code, out, err = mlab(*args)
        assert "Traceback" not in out + err, (name, out, err)
        seen[name] = (code, out, err)
    return seen


def _new_digest(run_dir: Path, digest: str) -> None:
    """Build copies are read once per build digest: a changed copy is another build."""
    meta = json.loads((run_dir / "run.json").read_text())
    meta["build"]["digest"] = digest * 64
    (run_dir / "run.json").write_text(json.dumps(meta))


def test_the_build_copy_of_a_version_1_run_is_read_whole(old_runs, tmp_path):
    """mlab 0.1.0's build copy (its documents at schema version 1) is no missing one: the viewer
    shows the task's problem, the export names tools by its action table, eval --at scores it."""
    from mlab.reports.runs import load_run, task_document

    run_dir = old_runs / OLD_RUN_ID
    run = load_run(run_dir)
    assert task_document(run).problem == PROBLEM
    assert run.agent_doc.history_steps == 3 and [a.name for a in run.actions_doc.actions][:1] == ["List Files"]
    seen = _readers(run_dir, tmp_path)
    assert f"Research problem</summary><pre>{PROBLEM}" in (tmp_path / "page.html").read_text()
    steps = json.loads((tmp_path / "atif.json").read_text())["steps"]
    assert [c["function_name"] for s in steps for c in s.get("tool_calls") or ()] == \
        ["list_files", "execute_script", "final_answer"]
    code, out, err = seen["eval_at"]
    assert code == 0, err
    assert json.loads((run_dir / "budgets.json").read_text())["points"]["tokens_2000"]["status"] == "no submission"


def test_a_run_copy_made_by_another_mlabc_is_scored_and_resumed_but_the_build_is_not_run_afresh(old_runs, tmp_path):
    """A run's build copy cannot be recompiled: one made by another mlabc (its documents checked by
    their versions' rules) is read by eval --at and resume; the same folder named as a build is
    refused, with the command that recompiles it."""
    run_dir = old_runs / OLD_RUN_ID
    manifest = json.loads((run_dir / "build" / "manifest.json").read_text())
    manifest["compiler_version"] = "0.0.1"
    (run_dir / "build" / "manifest.json").write_text(json.dumps(manifest))
    _new_digest(run_dir, "3")
    code, out, err = mlab("eval", run_dir, "--at", "tokens=2000", "--json")
    assert code == 0, err
    assert json.loads((run_dir / "budgets.json").read_text())["points"]["tokens_2000"]["status"] == "no submission"
    from mlab.trace import repair_trace

    (run_dir / "result.json").unlink()
    repair_trace(run_dir / "trace.jsonl", keep=1)  # as if killed after step 1
    code, out, err = mlab("run", "--resume", run_dir)
    assert code in (0, 1) and "made by mlabc" not in out + err, err
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "Execute Script", "Final Answer"]
    code, out, err = mlab("run", "tiny", "--build", run_dir / "build", "--model", "mlab/demo",
                          "--runs-dir", tmp_path / "runs")
    assert code != 0 and "made by mlabc 0.0.1" in err and "recompile it with `mlabc compile" in err, err


@pytest.fixture
def version_0(monkeypatch, tmp_path):
    """A version 0 of the task and agent documents, as a format change leaves one behind: version 0
    named the task's `problem` `problem_text` and the agent's `history_steps` `history`. Its schemas
    are kept as spec/older/ keeps them and its upgrades registered, as a version bump does."""
    from mlab.documents import versions

    kept = tmp_path / "older"
    kept.mkdir()
    renames = {"task": ("problem", "problem_text"), "agent": ("history_steps", "history")}
    for kind, (now, then) in renames.items():
        rules = json.loads((REPO / "spec" / f"{kind}.schema.json").read_text())
        rules["properties"][then] = rules["properties"].pop(now)
        rules["properties"]["schema_version"] = {"const": 0}
        rules["required"] = [then if name == now else name for name in rules["required"]]
        (kept / f"{kind}.v0.schema.json").write_text(json.dumps(rules))

        def upgrade(document, now=now, then=then):
            return {**{(now if key == then else key): value for key, value in document.items()}, "schema_version": 1}

        monkeypatch.setitem(versions.UPGRADES, (kind, 0), upgrade)
    monkeypatch.setattr(versions, "older_schema", lambda kind, version: kept / f"{kind}.v{version}.schema.json")
    return renames


def _as_version(run_dir: Path, version: int, renames: dict, spoil=None) -> None:
    """The run's task.yaml and agent.json rewritten in another version's form."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    for kind, rel in (("task", "tasks/tiny/task.yaml"), ("agent", "agents/research/agent.json")):
        path = run_dir / "build" / rel
        document = yaml.load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())
        now, then = renames[kind]
        document = {(then if key == now else key): value for key, value in document.items()}
        document["schema_version"] = version
        if spoil:
            spoil(kind, document)
        if path.suffix == ".yaml":
            with path.open("w") as stream:
                yaml.dump(document, stream)
        else:
            path.write_text(json.dumps(document))


def test_a_build_copy_of_an_older_version_is_checked_by_its_rules_and_read_in_todays_form(old_runs, version_0,
                                                                                          tmp_path):
    """A copy that today's schema refuses (its version and two property names are older) matches
    its own version's: it is upgraded, and report, view, the export and eval --at read it whole."""
    from mlab.reports.runs import load_run, task_document
    from mlabc.schemas import problems

    run_dir = old_runs / OLD_RUN_ID
    _as_version(run_dir, 0, version_0)
    _new_digest(run_dir, "0")
    assert problems("agent", json.loads((run_dir / "build/agents/research/agent.json").read_text()))
    run = load_run(run_dir)
    assert task_document(run).problem == PROBLEM and run.agent_doc.history_steps == 3
    seen = _readers(run_dir, tmp_path)
    assert f"Research problem</summary><pre>{PROBLEM}" in (tmp_path / "page.html").read_text()
    code, out, err = seen["eval_at"]
    assert code == 0, err
    assert json.loads((run_dir / "budgets.json").read_text())["points"]["tokens_2000"]["status"] == "no submission"


def test_a_copy_that_breaks_its_own_versions_rules_or_records_an_unknown_version_reads_as_missing(
        old_runs, version_0, tmp_path):
    from mlab.reports.runs import load_run, task_document

    run_dir = old_runs / OLD_RUN_ID

    def spoil(kind, document):   # a number where version 0's problem text is
        if kind == "task":
            document["problem_text"] = 7
    _as_version(run_dir, 0, version_0, spoil)
    _new_digest(run_dir, "1")
    assert task_document(load_run(run_dir)) is None
    seen = _readers(run_dir, tmp_path / "spoiled")
    assert "Research problem</summary>" not in (tmp_path / "spoiled" / "page.html").read_text()
    code, out, err = seen["eval_at"]
    assert code != 0 and "at problem_text: 7 is not of type 'string'" in err, err

    run_dir = shutil.copytree(OLD_RUNS / OLD_RUN_ID, tmp_path / "newer" / OLD_RUN_ID)
    _as_version(run_dir, 2, {"task": ("problem", "problem"), "agent": ("history_steps", "history_steps")})
    _new_digest(run_dir, "2")
    run = load_run(run_dir)
    assert task_document(run) is None and run.agent_doc is None
    seen = _readers(run_dir, tmp_path / "newer-out")
    code, out, err = seen["eval_at"]
    assert code != 0 and "schema_version: 2 is not a version this mlab reads (0, 1; a newer mlabc's build?)" in err, err
