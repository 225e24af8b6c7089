"""What `mlab run` shows on a terminal while a step runs: the step's elapsed time ticking and the
last line of its script's output as it comes, its control characters made harmless."""
from __future__ import annotations

import re
import sys

from agent_helpers import on_a_terminal, only_run, research_reply, scripted, trace

EPOCHS = """\
import time

print("\\x1b]0;pwned\\x07 starting \\x1b[2J", flush=True)
time.sleep(0.7)
for epoch in range(1, 6):
    print(f"epoch {epoch} loss {1 / epoch:.3f}", flush=True)
    time.sleep(0.7)
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # the cursor and colour sequences rich writes


def test_a_running_script_shows_its_elapsed_time_and_last_output_line(tiny_task, tmp_path):
    model = scripted(tmp_path, [
        research_reply("Write File", {"file_name": "epochs.py", "content": EPOCHS}),
        research_reply("Execute Script", {"script_name": "epochs.py"}),
        research_reply("Final Answer", {"final_answer": "done"}),
    ])
    argv = [sys.executable, "-m", "mlab.cli", "run", str(tiny_task), "--model", model, "--runs-dir",
            str(tmp_path / "runs")]
    chunks = on_a_terminal(argv, tmp_path)
    screen = ANSI.sub("", "".join(text for _, text in chunks))
    assert "step   2  Execute Script" in screen, screen[-3000:]
    ran = trace(only_run(tmp_path / "runs"))[1]["observation"]
    assert "epoch 5 loss 0.200" in ran, ran  # the script ran to its end (else what follows cannot be seen)
    # the step under way, while the script prints: its number, its elapsed time ticking, its last line
    running = re.findall(r"step   2  running (\d+)s(?:  \| ([^\n│]*?))?\s*│", screen)
    seconds = sorted({int(s) for s, _ in running})
    assert seconds[:3] == [0, 1, 2], (running, screen[-4000:])
    shown = [line for _, line in running if line]
    assert {"epoch 1 loss 1.000", "epoch 3 loss 0.333", "epoch 5 loss 0.200"} <= set(shown), shown
    # each line showed while the script ran: the epochs came 0.7 s apart, so not all at the end
    times = [at for at, text in chunks if "epoch 2 loss" in ANSI.sub("", text)]
    ends = [at for at, text in chunks if "epoch 5 loss" in ANSI.sub("", text)]
    assert times and ends and min(ends) - min(times) > 1.5
    # the script's terminal sequences reach the screen as text, never as sequences
    raw = "".join(text for _, text in chunks)
    assert "\x1b]0;pwned" not in raw and "| \\x1b]0;pwned\\x07 starting \\x1b[2J" in screen
    # once the run has ended, no step is shown running
    assert "step   4  running" not in screen
