"""What `mlab run` shows on a terminal while an external agent runs: each model exchange as it
happens, with the command its reply asks for, and the agent's last line of output with the elapsed
time ticking (before, the panel said `starting...` for the whole run)."""
from __future__ import annotations

import re
import sys

import pytest

from agent_helpers import FIT_PY, on_a_terminal, scripted
from mlab.sandbox.runner import sandbox_available
from needs import needs

needs_sandbox = needs(None if sandbox_available()[0] else f"bubblewrap cannot start a sandbox here: {sandbox_available()[1]}")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

SLOW_FIT = 'print("fitting the line", flush=True)\nimport time\ntime.sleep(2.5)\n' + FIT_PY


@needs_sandbox
def test_each_exchange_of_an_external_agent_shows_as_it_happens(tmp_path, tiny_task):
    model = scripted(tmp_path, [f"Here is the script.\n```python\n{SLOW_FIT}```\n", "The submission is written; done."])
    argv = [sys.executable, "-m", "mlab.cli", "run", str(tiny_task), "--agent", "own-script", "--model", model,
            "--runs-dir", str(tmp_path / "runs")]
    chunks = on_a_terminal(argv, tmp_path)
    screen = ANSI.sub("", "".join(text for _, text in chunks))
    assert "starting..." not in screen
    first = [at for at, text in chunks if "step   1  model: $ print(\"fitting the line\", flush=True)" in ANSI.sub("", text)]
    second = [at for at, text in chunks if "step   2  model: The submission is written; done." in ANSI.sub("", text)]
    assert first and second, screen[-3000:]
    assert min(second) - min(first) > 2, "the first exchange showed when it happened, not at the end"
    # between the two: the agent's step under way, its time ticking, the agent's script's last line
    running = re.findall(r"step   2  running (\d+)s(?:  \| ([^\n│]*?))?\s*│", screen)
    assert {0, 1, 2} <= {int(s) for s, _ in running}, running
