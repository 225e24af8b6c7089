"""`mlab run --python P`: the agent's scripts (and the task's requirement check) run with P."""
from __future__ import annotations

import json
import os
import sys

from agent_helpers import mlab, research_reply, scripted, trace


def test_the_agents_scripts_run_with_the_interpreter_given(tiny_task, tmp_path):
    wrapper = tmp_path / "bin" / "wrapped-python"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\necho 'through the wrapper' >&2\nexec {sys.executable} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    model = scripted(tmp_path, [research_reply("Execute Script", {"script_name": "train.py"}),
                                research_reply("Final Answer", {"final_answer": "done"})])
    runs = tmp_path / "runs"
    code, out, err = mlab("run", tiny_task, "--model", model, "--python", wrapper, "--runs-dir", runs, "--plain")
    assert code == 0, err
    run_dir = next(runs.iterdir())
    assert json.loads((run_dir / "run.json").read_text())["python"] == str(wrapper)
    executed = next(r for r in trace(run_dir) if r["action"] == "Execute Script")
    assert "through the wrapper" in executed["observation"], executed["observation"]
    assert "Traceback" not in err
