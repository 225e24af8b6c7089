"""The operator's terminal: what an agent or its scripts made is printed with control characters
escaped and rich markup left unread, in every command (issue 25)."""
from __future__ import annotations

import io
import json

from mlab.cli import main
from mlab.text import printable

HOSTILE = "\x1b]0;owned\x07\x1b]52;c;aGVsbG8=\x07\x1b[2J\r\u202e"
ESCAPED = "\\x1b]0;owned\\x07\\x1b]52;c;aGVsbG8=\\x07\\x1b[2J\\x0d\\u202e"


def test_printable_escapes_every_control_character_but_newline_and_tab():
    assert printable(HOSTILE) == ESCAPED
    assert printable("two\tcolumns\nand lines, ü and 東京 kept") == "two\tcolumns\nand lines, ü and 東京 kept"
    assert printable("\x00\x7f\x9b") == "\\x00\\x7f\\x9b"


def test_mlab_drive_escapes_script_output_and_unknown_action_names(house_build, mlab_env, tmp_path, capsys,
                                                                    stand_in_sandbox):
    script = f"import sys\nsys.stdout.write({HOSTILE!r} + 'after')\n"
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([
        {"action": "Write File", "input": {"file_name": "evil.py", "content": script}},
        {"action": "Execute Script", "input": {"script_name": "evil.py"}},
        {"action": "No Such\x1b]0;title\x07 Action", "input": {}}]))
    code = main(["drive", "house-price", "--build", str(house_build), "--actions", str(actions),
                 "--runs-dir", str(tmp_path / "runs")])
    captured = capsys.readouterr()
    assert code == 0
    assert "\x1b" not in captured.out and "\x07" not in captured.out and "\u202e" not in captured.out
    assert ESCAPED + "after" in captured.out
    assert "--- step 3: No Such\\x1b]0;title\\x07 Action [error]" in captured.out


def test_the_live_display_shows_an_action_name_as_text_not_markup():
    from types import SimpleNamespace

    from rich.console import Console

    from mlab.cli.display import Display

    display = Display.__new__(Display)
    display.start, display.demo = 0.0, False
    display.run = SimpleNamespace(id="r1", task=SimpleNamespace(name="t"), agent=SimpleNamespace(name="a"),
                                  limits=SimpleNamespace(steps=10))
    record = {"step": 1, "action": "[bold red]Final Answer[/bold red]" + HOSTILE, "status": "error"}
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, color_system="truecolor", width=200)
    display.last, display.closed = display._line(record, None), True  # the panel after that step
    console.print(display._panel())
    shown = screen.getvalue()
    assert "[bold red]Final Answer[/bold red]" + ESCAPED in shown
    assert "\x1b]" not in shown and "\x07" not in shown and "\x1b[1;31m" not in shown


def test_an_error_message_quoting_agent_text_is_escaped(capsys, tmp_path):
    # checkout of a run folder named by whoever made it: the message names it, escaped
    missing = tmp_path / "run\x1b]0;x\x07"
    assert main(["checkout", str(missing), str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "run\\x1b]0;x\\x07" in err


def test_a_sweep_event_quoting_a_run_log_is_escaped():
    from mlab.sweeps.progress import Progress

    for live in (True, False):
        stream = io.StringIO()
        Progress("exp", stream=stream, live=live).event("FAILED run-1: the log ends " + HOSTILE)
        shown = stream.getvalue()
        assert ESCAPED in shown and "\x1b]" not in shown and "\x07" not in shown
