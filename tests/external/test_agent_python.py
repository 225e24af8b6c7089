"""The Python an external agent's environment is made with: `requires [python "X.Y", ...]` names one
found on the host (PATH, pyenv's versions, uv's), recorded in run.json; a run whose agent names a Python
the machine lacks is refused before anything is made, naming what to install. Agents installed ahead
of their first run with `mlab prepare TASK --agent NAME`, and through a wheelhouse that serves a second
install without the index."""
from __future__ import annotations

import json
import os
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, result, scripted
from mlab.sandbox.runner import sandbox_available
from needs import missing, needs

RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"


def other_python():
    """A CPython on this machine of another X.Y than the one running the tests (CI has 3.12 for Harbor)."""
    from mlab.run.agent_python import PythonMissing, find_python

    for wanted in ("3.12", "3.13", "3.11", "3.10", "3.14"):
        if wanted != RUNNING:
            try:
                return find_python(wanted)
            except PythonMissing:
                continue
    missing("no CPython of another version than this one (install python3.12 with its venv module)")


def agent_naming(version: str) -> str:
    return f'''
agent versioned external {{
  requires [python "{version}"]
  command  "{{{{ python }}}} -c 'import sys; print(\\"agent python\\", sys.version.split()[0])' > agent-python.txt"
}}
'''


def fake_python(folder: Path, name: str, version: str) -> Path:
    """An executable that answers mlab's probe as a CPython of `version` would."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{{\"version\": \"{version}\", \"executable\": \"{path}\", "
                    f"\"implementation\": \"cpython\"}}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_pyenvs_versions_are_searched_beside_path(tmp_path, monkeypatch):
    from mlab.run.agent_python import PythonMissing, find_python

    root = tmp_path / "pyenv"
    older = fake_python(root / "versions" / "3.97.1" / "bin", "python3.97", "3.97.1")
    newer = fake_python(root / "versions" / "3.97.4" / "bin", "python3.97", "3.97.4")
    monkeypatch.setenv("PYENV_ROOT", str(root))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert find_python("3.97", "mine").path == str(newer), "any 3.97: the newest patch release"
    found = find_python("3.97.1", "mine")
    assert (found.path, found.version, found.wanted) == (str(older), "3.97.1", "3.97.1")
    on_path = fake_python(tmp_path / "bin", "python3.97", "3.97.9")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert find_python("3.97", "mine").path == str(on_path), "PATH comes first"
    with pytest.raises(PythonMissing) as raised:
        find_python("3.98", "mine")
    message = str(raised.value)
    assert "agent mine installs into Python 3.98" in message and "pyenv install 3.98" in message
    assert "apt-get install python3.98 python3.98-venv" in message and f"{root}/versions" in message


def test_a_missing_python_refuses_the_run_naming_what_to_install(tmp_path, tiny_task):
    from test_external_runs import build_with

    build = build_with(tmp_path, tiny_task, agent_naming("3.98"))
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "versioned", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    assert code != 0 and "Traceback" not in err
    assert "agent versioned installs into Python 3.98" in err and "install Python 3.98" in err, err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "no run was made"


@needs(None if sandbox_available()[0] else "bubblewrap cannot start a sandbox here")
def test_the_agent_runs_on_the_python_it_names_recorded_in_run_json(tmp_path, tiny_task):
    from test_external_runs import build_with

    python = other_python()
    wanted = ".".join(python.version.split(".")[:2])
    build = build_with(tmp_path, tiny_task, agent_naming(wanted))
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "versioned", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert result(run)["end_reason"] == "agent_exited", err
    said = (run / "workspace" / "agent-python.txt").read_text()
    assert said.strip() == f"agent python {python.version}", "the agent's own interpreter, inside the sandbox"
    meta = json.loads((run / "run.json").read_text())
    assert meta["schema_version"] == 7
    assert meta["agent_python"] == {"path": python.path, "version": python.version, "wanted": wanted}
    recorded = json.loads((run / "output" / "agent-environment.json").read_text())
    assert recorded["python"].startswith(python.version)


def test_an_agent_naming_no_python_keeps_the_runs_and_run_json_has_none(tmp_path, tiny_task):
    from test_external_runs import build_with

    build = build_with(tmp_path, tiny_task, agent_naming(RUNNING).replace(f'requires [python "{RUNNING}"]\n', ""))
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "versioned", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    meta = json.loads((run / "run.json").read_text())
    assert "agent_python" not in meta and meta["schema_version"] == 7, err
    recorded = json.loads((run / "output" / "agent-environment.json").read_text())
    assert recorded["python"].startswith(".".join(map(str, sys.version_info[:3])))


def test_mlab_prepare_installs_an_agent_before_its_first_run(tmp_path, tiny_task, monkeypatch):
    from test_external_runs import build_with

    monkeypatch.setenv("MLAB_AGENT_ENVS", str(tmp_path / "envs"))

    build = build_with(tmp_path, tiny_task, agent_naming(RUNNING))
    code, out, err = mlab("prepare", "tiny", "--build", build, "--agent", "versioned")
    assert code == 0, err
    assert "preparing the environment of agent versioned" in out and "agent versioned: environment in" in out
    folder = Path(out.strip().splitlines()[-1].split("environment in ", 1)[1])
    assert (folder / ".mlab-ready").is_file()
    code, out, err = mlab("prepare", "tiny", "--build", build, "--agent", "versioned")
    assert code == 0 and "preparing the environment" not in out, "installed once"
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "versioned", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    assert "preparing the environment" not in err, "the run found what prepare installed"
    code, out, err = mlab("prepare", "tiny", "--build", build, "--agent", "no-such-agent")
    assert code == 2 and "has no agent 'no-such-agent'" in err and "Traceback" not in err


def tiny_wheel(folder: Path) -> Path:
    """A wheel of one module (mlabtinywheel 1.0), made by hand: no build backend, no index."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mlabtinywheel-1.0-py3-none-any.whl"
    info = "mlabtinywheel-1.0.dist-info"
    files = {"mlabtinywheel.py": "VALUE = 42\n",
             f"{info}/METADATA": "Metadata-Version: 2.1\nName: mlabtinywheel\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n")
    return path


def test_a_second_install_is_served_by_the_wheelhouse_without_the_index(tmp_path, monkeypatch):
    """The first install takes the wheel from where pip finds it and keeps it in the wheelhouse; with
    that source gone and the environment removed, the environment is made again from the wheelhouse,
    and byte-compiled."""
    import shutil

    from mlab.external.environment import WHEELS, environment_python, prepare_environment

    source = tiny_wheel(tmp_path / "source")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(source.parent))
    cache = tmp_path / "envs"
    folder = prepare_environment("tiny-wheel", ["mlabtinywheel==1.0"], sys.executable, say=lambda line: None,
                                 cache=cache)
    assert (cache / WHEELS / source.name).is_file(), "the wheel is kept in the wheelhouse"
    shutil.rmtree(source.parent)
    shutil.rmtree(folder)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "nowhere"))
    again = prepare_environment("tiny-wheel", ["mlabtinywheel==1.0"], sys.executable, say=lambda line: None,
                                cache=cache)
    import subprocess

    done = subprocess.run([str(environment_python(again)), "-c", "import mlabtinywheel; print(mlabtinywheel.VALUE)"],
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("PYTHON")})
    assert done.stdout.strip() == "42", done.stderr
    assert list(again.glob("lib/python*/site-packages/__pycache__/mlabtinywheel.*.pyc")), \
        "byte-compiled when installed: the environment is read-only in the sandbox"
