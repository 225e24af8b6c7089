"""Execute Script through the real sandbox (mlab.sandbox), seen from a run."""
from __future__ import annotations

import pytest

from mlab.sandbox.runner import sandbox_available
from needs import missing


@pytest.fixture
def sandboxed(monkeypatch):
    usable, reason = sandbox_available()
    if not usable:
        missing(f"no working sandbox here: {reason}")


def test_a_script_runs_in_the_workspace_and_its_compute_is_recorded(new_run, sandboxed):
    run = new_run()
    run.step("Write File", {"file_name": "hello.py", "content": "import os\nprint('hello from', os.path.basename(os.getcwd()))\n"})
    observation = run.step("Execute Script", {"script_name": "hello.py"})
    assert observation.text.startswith("hello from workspace\n\nThe script ended with exit code 0")
    compute = run.records[-1]["compute"]
    assert compute["sandboxed"] is True and compute["exit_code"] == 0 and compute["peak_memory_bytes"] > 0
    assert (run.dir / "output" / "step-0002.log").read_text() == "hello from workspace\n"


def test_a_script_sees_neither_the_answers_nor_other_runs(new_run, sandboxed):
    first, run = new_run(), new_run()
    probe = ("import os\n"
             f"for path in ['../private/answers.csv', {str(first.dir / 'private' / 'answers.csv')!r},"
             f" {str(first.dir / 'workspace' / 'train.csv')!r}, {str(run.dir / 'trace.jsonl')!r}]:\n"
             "    print(path.split('/')[-1], os.path.exists(path))\n"
             f"print(sorted(os.listdir({str(run.dir.parent)!r})))\n")
    run.step("Write File", {"file_name": "probe.py", "content": probe})
    text = run.step("Execute Script", {"script_name": "probe.py"}).text
    shown = text.split("\n\n")[0]
    assert "True" not in shown and first.id not in shown, text


def test_a_script_cannot_change_a_read_only_file(new_run, sandboxed):
    run = new_run()
    original = (run.workspace.root / "train.csv").read_bytes()
    run.step("Write File", {"file_name": "spoil.py", "content": "open('train.csv', 'w').write('spoiled')\n"})
    observation = run.step("Execute Script", {"script_name": "spoil.py"})
    assert "exit code 1" in observation.text
    assert (run.workspace.root / "train.csv").read_bytes() == original


def test_the_stand_in_sandbox_offers_what_the_sandbox_offers_with_its_own_types():
    import inspect

    import stand_in_sandbox

    from mlab.sandbox import runner

    for name in ("SandboxPolicy", "ScriptResult", "describe_result"):
        assert getattr(stand_in_sandbox, name) is getattr(runner, name), name
    for name in ("run_script", "sandbox_available"):
        assert inspect.signature(getattr(stand_in_sandbox, name)) == inspect.signature(getattr(runner, name)), name
