"""The pre-commit hooks: what they run, on which files, and that a task repository passes or fails them."""
from __future__ import annotations

import re
import shlex

from ruamel.yaml import YAML

from authoring_cases import REPO

HOOKS = {hook["id"]: hook for hook in YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())}


def run_hook(mlabc, hook_id: str, files: list[str], cwd):
    """Run a hook as pre-commit would: its entry, then the matching files when it takes them."""
    hook = HOOKS[hook_id]
    words = shlex.split(hook["entry"]) + hook.get("args", [])
    assert words[0] == "mlabc"
    matching = [f for f in files if re.search(hook["files"], f)]
    return mlabc(*words[1:], *(matching if hook.get("pass_filenames", True) else []), cwd=cwd)


def test_the_hooks_and_their_files():
    assert sorted(HOOKS) == ["mlabc-check", "mlabc-fmt"]
    assert HOOKS["mlabc-check"]["entry"] == "mlabc check" and HOOKS["mlabc-check"]["pass_filenames"] is False
    assert HOOKS["mlabc-fmt"]["entry"] == "mlabc fmt --check"
    for hook in HOOKS.values():
        assert hook["language"] == "python" and hook["name"] and hook["description"]
    assert re.search(HOOKS["mlabc-check"]["files"], "tasks/a.mlab.yaml")
    assert re.search(HOOKS["mlabc-fmt"]["files"], "tasks/a.mlab")
    assert not re.search(HOOKS["mlabc-fmt"]["files"], "tasks/a.mlab.yaml")


def test_a_task_repository_passes_and_then_fails_the_hooks(tmp_path, mlabc):
    assert mlabc("new", "task", "mine", cwd=tmp_path)[0] == 0
    changed = ["tasks/mine.mlab", "tasks/mine/env/train.py"]
    assert run_hook(mlabc, "mlabc-check", changed, tmp_path)[0] == 0
    assert run_hook(mlabc, "mlabc-fmt", changed, tmp_path)[0] == 0

    task = tmp_path / "tasks" / "mine.mlab"
    task.write_text(task.read_text().replace("  title     ", "  title ").replace("  baseline   run", "  baseline   rn"))
    code, _, err = run_hook(mlabc, "mlabc-check", changed, tmp_path)
    assert code == 1 and "tasks/mine.mlab:" in err
    task.write_text(task.read_text().replace("baseline   rn", "baseline   run"))
    code, out, _ = run_hook(mlabc, "mlabc-fmt", changed, tmp_path)
    assert (code, out) == (1, "would reformat tasks/mine.mlab\n")
