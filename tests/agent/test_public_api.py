"""The public API of docs/api.md: `mlab` and `mlabc` export exactly the names the page lists, and
each does what the page says (a small call each, on the tiny task)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import mlab
import mlabc
from agent_helpers import research_reply, scripted, write_tiny_task
from needs import module

PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def documented(package: str) -> set[str]:
    """The names in the first column of the table of the page's section about `package`."""
    text = PAGE.read_text(encoding="utf-8")
    section = re.search(rf"\n## [^\n]*`{package}`\n(.*?)(?=\n## |\Z)", text, re.DOTALL).group(1)
    return {m[1] for m in re.finditer(r"^\| `([A-Za-z_]+)", section, re.MULTILINE)}


@pytest.mark.parametrize("package", [mlab, mlabc], ids=["mlab", "mlabc"])
def test_each_package_exports_exactly_the_documented_names(package):
    names = documented(package.__name__)
    assert names and set(package.__all__) == names
    assert all(getattr(package, name) is not None for name in names)
    assert names <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'shared'"):
        package.shared  # noqa: B018  (a name of the API is not any module's name)


def test_importing_the_packages_imports_nothing_else():
    code = "import sys, mlab, mlabc; print(sorted(m for m in sys.modules if m.startswith(('mlab', 'lark', 'pandas'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['mlab', 'mlabc']"


def test_check_and_compile_a_file(tmp_path):
    source = write_tiny_task(tmp_path / "task")
    compiled = mlabc.check_paths([str(source)])
    assert compiled.ok and "tiny" in compiled.tasks
    compiled, manifest = mlabc.compile_paths([str(source)], tmp_path / "build")
    assert "tiny" in manifest["tasks"] and (tmp_path / "build" / "manifest.json").is_file()

    broken = tmp_path / "task" / "broken.mlab"
    broken.write_text(source.read_text().replace("metric mae", "metric maee"))
    compiled = mlabc.check_paths([str(broken)])
    assert not compiled.ok
    shown = mlabc.render_all(compiled.diagnostics, compiled.program.sources)
    assert "broken.mlab" in shown and "maee" in shown
    assert mlabc.compile_paths([str(broken)], tmp_path / "none")[1] is None and not (tmp_path / "none").exists()

    with pytest.raises(mlabc.PathsError, match="no such file"):
        mlabc.check_paths([str(tmp_path / "missing.mlab")])
    (tmp_path / "a-file").write_text("")
    with pytest.raises(mlabc.BuildWriteError):
        mlabc.compile_paths([str(source)], tmp_path / "a-file")
    assert mlabc.__version__ == mlab.__version__


def test_run_a_task_and_read_the_run(tmp_path, capsys):
    source = write_tiny_task(tmp_path / "task")
    replies = [research_reply("Execute Script", {"script_name": "fit.py"}),
               research_reply("Final Answer", {"final_answer": "fit.py wrote submission.csv"})]
    run = mlab.run_task(str(source), model=scripted(tmp_path, replies), runs_dir=tmp_path / "runs",
                        options=("--steps", "5"))
    assert isinstance(run, mlab.LoadedRun) and run.finished and run.task == "tiny"
    assert run.result["submitted"] and run.result["score"] is not None and run.result["steps"] == 2
    assert run.dir.parent == (tmp_path / "runs").resolve()
    assert capsys.readouterr().out == ""  # progress goes to stderr, the result is returned
    again = mlab.load_run(run.dir)
    assert again.id == run.id and again.result == run.result

    with pytest.raises(mlab.MlabError, match="no-such-task") as refused:
        mlab.run_task("no-such-task", model="mlab/demo", runs_dir=tmp_path / "runs")
    assert refused.value.exit_code == 2
    with pytest.raises(mlab.MlabError, match="--steps"):
        mlab.run_task(str(source), model="mlab/demo", runs_dir=tmp_path / "runs", options=("--steps", "many"))
    with pytest.raises(mlab.MlabError, match="not a folder"):
        mlab.load_run(tmp_path / "nowhere")


def test_the_gym_environment(tmp_path):
    module("gymnasium", "mlab.MlabEnv needs the optional extra `gym` (gymnasium)")
    source = write_tiny_task(tmp_path / "task")
    env = mlab.MlabEnv(str(source), runs_dir=tmp_path / "runs", limits={"steps": 3})
    observation, info = env.reset(seed=0)
    assert "Predict y from x" in observation and "List Files" in info["actions"]
    observation, reward, terminated, truncated, info = env.step({"action": "List Files", "input": {"dir_path": "."}})
    assert "fit.py" in observation and reward == 0.0 and not (terminated or truncated)
    env.close()
