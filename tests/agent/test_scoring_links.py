"""No file an agent or its scripts made is followed out of the workspace by the harness.

Each attack makes the scored file (or the folder above it) something other than a plain file
of the workspace: a relative or absolute symbolic link to a perfect submission kept outside, a
path through a linked folder, a hard link to that file, a named pipe, a device node. Each is
tried against every place the harness reads or writes what a run produced: final scoring,
per-step scoring of snapshots (library and `mlab eval --intermediate`), timed scoring, a task
evaluator, a baseline run, the viewer's page of the snapshots, and the restore of read-only
files. A user sees `submission format error` with a detail that names the file and says why;
nothing outside is read into a score or the run's store, and nothing outside is written.
Scripts run without bubblewrap here (MLAB_NO_SANDBOX): what is tested is the harness, outside.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, research_reply, result, scripted, write_tiny_task

ATTACKS = {  # kind: (the script's code, what the refusal says)
    "relative-link": ("os.symlink(os.path.relpath(SECRET, os.path.dirname(NAME)), NAME)", "is a symbolic link to ../"),
    "absolute-link": ("os.symlink(SECRET, NAME)", "is a symbolic link to /"),
    "linked-folder": ("shutil.rmtree(os.path.dirname(NAME)); os.symlink(os.path.dirname(SECRET), os.path.dirname(NAME))",
                      "a symbolic link to /"),
    "hard-link": ("os.link(SECRET, NAME)", "is a hard link (the file has "),
    "fifo": ("os.mkfifo(NAME)", "is a named pipe (FIFO), not a regular file"),
    "device": ("os.mknod(NAME, stat.S_IFCHR | 0o600, os.makedev(1, 3))", "is a character device, not a regular file"),
}
KINDS = sorted(ATTACKS)
SUBMISSION = "out/submission.csv"  # in a folder, so that the folder can be a link
TIMED_SCRIPT = "src/train.py"
READ_ONLY = "conf/settings.txt"

FAST_PY = 'import os\nos.makedirs("out", exist_ok=True)\nopen("output.txt", "w").write("42\\n")\n'
EVALUATE_PY = '''
from pathlib import Path


class SubmissionInvalid(ValueError):
    pass


def score(submission_dir, private_dir):
    path = Path(submission_dir) / "out" / "submission.csv"
    if not path.is_file():
        raise SubmissionInvalid("out/submission.csv was not copied for the evaluator")
    return float(len(path.read_text().splitlines()))
'''


def attack_script(kind: str, name: str, secret: Path) -> str:
    """The Python code that turns `name` (relative to the current folder) into the attack."""
    code, _ = ATTACKS[kind]
    return (f"import os, shutil, stat\nNAME, SECRET = {name!r}, {str(secret)!r}\n"
            f"os.makedirs(os.path.dirname(NAME), exist_ok=True)\n"
            f"if os.path.lexists(NAME) and not os.path.isdir(NAME):\n    os.unlink(NAME)\n{code}\n")


def plant(kind: str, folder: Path, name: str, secret: Path) -> None:
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    subprocess.run([sys.executable, "-c", attack_script(kind, name, secret)], cwd=folder, check=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Three tiny tasks (tabular, timed, evaluator) built once, and the files an attack points at:
    outside/<file> holds a perfect submission (a copy of the private answers) for each name."""
    from mlab.build import load_build
    from mlab.data.prepare import prepare_data
    from mlabc.api import compile_paths

    root = tmp_path_factory.mktemp("links")
    source = write_tiny_task(root / "tasks")
    env = root / "tasks" / "env"
    (env / "conf").mkdir()
    (env / "conf" / "settings.txt").write_text("learning_rate = 0.1\n")
    (env / "src").mkdir()
    (env / "src" / "train.py").write_text(FAST_PY)
    (root / "tasks" / "evaluate.py").write_text(EVALUATE_PY)
    text = source.read_text()
    tabular = text.replace('submission "submission.csv"', f'submission "{SUBMISSION}"').replace(
        "Write submission.csv", f"Write {SUBMISSION}").replace(
        'read_only ["train.csv", "test.csv"]', f'read_only ["train.csv", "test.csv", "{READ_ONLY}"]')
    timed = tabular.replace("task tiny {", "task tiny-timed {").replace(
        f'submission "{SUBMISSION}" columns ["Id", "y"]', f'submission "{TIMED_SCRIPT}"').replace(
        'metric mae on "y" lower_is_better', 'metric runtime on "output.txt" lower_is_better').replace(
        'baseline run "train.py"', f'baseline run "{TIMED_SCRIPT}"')
    evaluated = tabular.replace("task tiny {", "task tiny-evaluated {").replace(
        'metric mae on "y" lower_is_better',
        'metric perplexity lower_is_better\n  evaluator "evaluate.py:score" because "a test of the evaluator path"')
    tasks = {}
    for name, body in (("tiny", tabular), ("tiny-timed", timed), ("tiny-evaluated", evaluated)):
        path = root / "tasks" / f"{name}.mlab"
        path.write_text(body if name == "tiny" else body.split("# The research agent")[0])
        compiled, manifest = compile_paths([str(path)], root / f"build-{name}")
        assert manifest is not None, compiled.diagnostics
        tasks[name] = load_build(root / f"build-{name}").task(name)
    outside = root / "outside"
    answers = prepare_data(tasks["tiny"], "lite").private / "answers.csv"
    for name, content in ((SUBMISSION, answers.read_bytes()), (TIMED_SCRIPT, FAST_PY.encode()),
                          (READ_ONLY, b"learning_rate = 1e9\n")):
        (outside / name).parent.mkdir(parents=True, exist_ok=True)
        (outside / name).write_bytes(content)
    return {"tasks": tasks, "outside": outside, "root": root}


@pytest.fixture(autouse=True)
def _no_bubblewrap(monkeypatch):
    monkeypatch.setenv("MLAB_NO_SANDBOX", "1")


def new_run(lab, tmp_path, name: str = "tiny"):
    from mlab.run.folder import Run

    task = lab["tasks"][name]
    return Run.create(task, task.build.agent("research"), tmp_path / "runs")


def outside_unchanged(lab) -> None:
    assert (lab["outside"] / READ_ONLY).read_bytes() == b"learning_rate = 1e9\n"
    assert sorted(p.name for p in (lab["outside"] / "conf").iterdir()) == ["settings.txt"]


def assert_refused(kind: str, failure_mode, detail, name: str = SUBMISSION) -> None:
    assert failure_mode == "submission format error"
    assert ATTACKS[kind][1] in detail, detail
    shown = os.path.dirname(name) if kind == "linked-folder" else name
    assert shown in detail, detail


@pytest.mark.parametrize("kind", KINDS)
def test_final_scoring_refuses(kind, lab, tmp_path):
    from mlab.scoring.evaluate import evaluate

    run = new_run(lab, tmp_path)
    try:
        plant(kind, run.workspace.root, SUBMISSION, lab["outside"] / SUBMISSION)
        document = evaluate(run)
    finally:
        run.close()
    assert document["score"] is None and document["success"] is False
    assert_refused(kind, document["failure_mode"], document["detail"])


def snapshot_after_attack(kind, lab, tmp_path, name: str = SUBMISSION):
    """A run whose first step's snapshot was taken after the attack was planted."""
    run = new_run(lab, tmp_path)
    plant(kind, run.workspace.root, name, lab["outside"] / name)
    run.step("List Files", {"dir_path": "."})
    run.close()
    return run


def assert_step_refused(kind: str, row: dict) -> None:
    """A per-step score: a link is kept in the snapshot as a link and refused; a hard link or special
    file was never taken into it, and a linked folder is not entered, so the step has no submission."""
    assert row["score"] is None
    if kind in ("relative-link", "absolute-link"):
        assert ATTACKS[kind][1] in row["problem"], row["problem"]
    else:
        assert f"no submission: {SUBMISSION}" in row["problem"], row["problem"]


def assert_store_clean(run, secret: bytes) -> None:
    for path in (run.dir / "objects").rglob("*"):
        if path.is_file():
            assert path.read_bytes() != secret, f"{path} holds the contents of a file outside the workspace"


@pytest.mark.parametrize("kind", KINDS)
def test_intermediate_scoring_refuses(kind, lab, tmp_path):
    from mlab.reports.eval import score_steps
    from mlab.reports.runs import load_runs

    run = snapshot_after_attack(kind, lab, tmp_path)
    (loaded,) = load_runs([run.dir])
    assert_step_refused(kind, score_steps(loaded)[-1])
    assert_store_clean(run, (lab["outside"] / SUBMISSION).read_bytes())


@pytest.mark.parametrize("kind", KINDS)
def test_mlab_eval_rescoring_refuses(kind, lab, tmp_path):
    run = snapshot_after_attack(kind, lab, tmp_path)
    code, out, err = mlab("eval", "--intermediate", run.dir)
    assert code == 0, err
    rows = [json.loads(line) for line in (run.dir / "scores.jsonl").read_text().splitlines()]
    assert_step_refused(kind, rows[-1])


@pytest.mark.parametrize("kind", KINDS)
def test_the_viewer_shows_no_contents_from_outside(kind, lab, tmp_path):
    from mlab.viewer.page import write_run_page

    run = snapshot_after_attack(kind, lab, tmp_path)
    page = write_run_page(run.dir, tmp_path / "view.html").read_text()
    secret = (lab["outside"] / SUBMISSION).read_bytes()
    assert secret.decode().splitlines()[1] not in page
    assert_store_clean(run, secret)


@pytest.mark.parametrize("kind", KINDS)
def test_timed_scoring_refuses(kind, lab, tmp_path):
    from mlab.scoring.timed import score_timed

    run = new_run(lab, tmp_path, "tiny-timed")
    try:
        plant(kind, run.workspace.root, TIMED_SCRIPT, lab["outside"] / TIMED_SCRIPT)
        score = score_timed(run.task, "lite", run.workspace.root, run.private_dir, runs=1)
    finally:
        run.close()
    assert score.value is None
    assert_refused(kind, score.failure_mode, score.detail, TIMED_SCRIPT)


@pytest.mark.parametrize("kind", KINDS)
def test_evaluator_scoring_refuses(kind, lab, tmp_path):
    from mlab.scoring.evaluator import score_with_evaluator

    run = new_run(lab, tmp_path, "tiny-evaluated")
    try:
        plant(kind, run.workspace.root, SUBMISSION, lab["outside"] / SUBMISSION)
        score = score_with_evaluator(run.task, "lite", run.workspace.root, run.private_dir)
    finally:
        run.close()
    assert score.value is None
    assert_refused(kind, score.failure_mode, score.detail)


@pytest.mark.parametrize("kind", KINDS)
def test_a_baseline_run_refuses(kind, lab, monkeypatch):
    """The starter itself makes the link: a baseline is scored by the same confined reader."""
    from mlab.build import TaskBuild
    from mlab.scoring.baseline import measure_starter

    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    task = lab["tasks"]["tiny"]
    script = f"attack_{kind.replace('-', '_')}.py"
    (task.root / "env" / script).write_text(attack_script(kind, SUBMISSION, lab["outside"] / SUBMISSION))
    task = TaskBuild.of(task.name, {**task.document, "baseline": {"kind": "run", "script": script}}, task.build)
    measured = measure_starter(task, "lite")
    assert measured["value"] is None and measured["exit_code"] == 0
    assert_refused(kind, "submission format error", measured["failure"])


@pytest.mark.parametrize("kind", KINDS)
def test_restoring_a_read_only_file_never_writes_through(kind, lab, tmp_path):
    """A read-only file replaced by an attack is put back as a plain file; nothing outside changes."""
    run = snapshot_after_attack(kind, lab, tmp_path, READ_ONLY)
    restored = run.workspace.root / READ_ONLY
    assert not restored.is_symlink() and not restored.parent.is_symlink() and restored.is_file()
    assert restored.read_text() == "learning_rate = 0.1\n" and os.stat(restored).st_nlink == 1
    outside_unchanged(lab)


def test_a_checkout_never_writes_through_a_link_it_made(lab, tmp_path):
    """A run folder whose snapshots name a link and a file below it (a tampered trace) checks out
    without writing into the folder the link points at."""
    from mlab.run.checkout import checkout
    from mlab.snapshots import SYMLINK_PREFIX

    run = snapshot_after_attack("relative-link", lab, tmp_path)
    trace = run.dir / "trace.jsonl"
    record = json.loads(trace.read_text().splitlines()[0])
    digest = run.store.put_bytes(b"written through\n")
    record["snapshot"]["changed"].update({"conf": SYMLINK_PREFIX + str(lab["outside"] / "conf"),
                                          "conf/new.txt": digest})
    trace.write_text(json.dumps(record) + "\n")
    checkout(run.dir, 1, tmp_path / "copy")
    outside_unchanged(lab)
    assert (tmp_path / "copy" / "conf" / "new.txt").read_text() == "written through\n"


def test_a_script_linking_the_answers_as_its_submission_does_not_score(tiny_task, tmp_path, monkeypatch):
    """End to end, in the sandbox where there is one: os.symlink('../private/answers.csv',
    'submission.csv') made by the agent's script is a submission format error, not a perfect score."""
    monkeypatch.delenv("MLAB_NO_SANDBOX")
    leak = "import os\nos.symlink('../private/answers.csv', 'submission.csv')\nprint('linked')\n"
    replies = [research_reply("Write File", {"file_name": "leak.py", "content": leak}),
               research_reply("Execute Script", {"script_name": "leak.py"}),
               research_reply("Final Answer", {"final_answer": "submitted"})]
    code, out, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    document = result(only_run(tmp_path / "runs"))
    assert document["score"] is None and document["success"] is False
    assert document["failure_mode"] == "submission format error"
    assert "submission.csv is a symbolic link to ../private/answers.csv" in document["detail"]
    assert "mae: none" in out
