"""The examples of `mlabc explain`: their type, the files beside them, and how one is checked.

Examples are whole files that may use the small files of SUPPORT_FILES and the standard
library; `check_example` runs one.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

EXAMPLE_NAME = "example.mlab"

# Files next to every example: a starter folder, a data table, a demo, Python escape hatches.
SUPPORT_FILES = {
    "env/train.py": "import pandas as pd\n\nprint(len(pd.read_csv('train.csv')))\n",
    "env/values.csv": "y\n" + "".join(f"{2 * i / 10 + 0.1:.1f}\n" for i in range(1, 11)),  # every y of data.csv
    "data.csv": "id,x,y\n" + "".join(f"{i},{i / 10:.1f},{2 * i / 10 + 0.1:.1f}\n" for i in range(1, 11)),
    "demo.json": '["Action: Final Answer\\nAction Input: {\\"final_answer\\": \\"done\\"}"]\n',
    "peek-demo.json": ('{"format": "mlab-demonstration", "version": 2, "steps": [{"action": "Peek File", '
                       '"input": {"file_name": "train.csv"}}, {"action": "Final Answer", "input": {"final_answer": "done"}}]}\n'),
    "list-demo.json": ('{"format": "mlab-demonstration", "version": 2, "steps": [{"action": "List Files", '
                       '"input": {"dir_path": "."}}, {"action": "Final Answer", "input": {"final_answer": "done"}}]}\n'),
    "evaluate.py": ("class SubmissionInvalid(ValueError):\n    pass\n\n\ndef score(submission_dir, answers_dir):\n"
                    "    if not submission_dir:\n        raise SubmissionInvalid('no submission')\n    return 0.0\n"),
    "count.py": "def score(submission_dir, answers_dir):\n    return 0.0\n",
    "seeded.py": ("class SubmissionInvalid(ValueError):\n    pass\n\n\ndef score(submission_dir, answers_dir, seed):\n"
                  "    raise SubmissionInvalid('never')\n"),
    "run-demo.json": ('{"format": "mlab-demonstration", "version": 2, "steps": [{"action": "Execute Script", '
                      '"input": {"script_name": "trian.py"}}, {"action": "Final Answer", "input": {"final_answer": "done"}}]}\n'),
    "ran-demo.json": ('{"format": "mlab-demonstration", "version": 2, "steps": [{"action": "Execute Script", '
                      '"input": {"script_name": "train.py"}}, {"action": "Final Answer", "input": {"final_answer": "done"}}]}\n'),
    "broken.py": "def score(submission_dir, answers_dir)\n    return 0.0\n",
    "header-only.csv": "id,x,y\n",
    "big-env/train.py": "import pandas as pd\n\nprint(len(pd.read_csv('train.csv')))\n",
    "big-env/checkpoint.pt": 30 * 10**6,  # a size: written as a sparse file of that many bytes
    "repeated-ids.csv": "id,x,y\n" + "".join(f"{i % 9},{i / 10:.1f},{2 * i / 10 + 0.1:.1f}\n" for i in range(1, 11)),
    "latin1.csv": b"id,x,y\n1,K\xf6ln,0.3\n",  # not UTF-8: written as bytes
    "leaderboard.csv": "team,score\n" + "".join(f"team {i},{0.1 + i / 20:.2f}\n" for i in range(10)),
    "leaderboard-text.csv": "team,score\nteam 0,0.10\nteam 1,n/a\n",
    # the data model's examples (explain/data_checks.py)
    "gen.py": ("import pandas as pd\n\n\ndef _tables(public, private, answer_ids):\n"
               "    pd.DataFrame({'id': range(20), 'x': range(20), 'y': range(20)}).to_csv(public / 'train.csv', index=False)\n"
               "    pd.DataFrame({'id': range(20, 30), 'x': range(10)}).to_csv(public / 'test.csv', index=False)\n"
               "    pd.DataFrame({'id': answer_ids, 'y': [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]}).to_csv(private / 'answers.csv', index=False)\n\n\n"
               "def matched(public, private, seed):\n    _tables(public, private, range(20, 30))\n\n\n"
               "def mismatched(public, private, seed):\n    _tables(public, private, range(21, 31))\n\n\n"
               "def crashes(public, private, seed):\n    return pd.DataFrame({'id': [1]})['missing']\n"),
    "blank-y.csv": "id,x,y\n" + "".join(f"{i},{i / 10:.1f},{'' if i % 4 == 0 else i}\n" for i in range(1, 41)),
    "colours.csv": "id,x,colour\n" + "".join(f"{i},{i % 7},{('red', 'green', 'blue')[i * 7 % 3]}\n" for i in range(1, 41)),
    "classes.csv": "id,x,label\n" + "".join(f"{i},{i % 5},{i * 7 % 3}\n" for i in range(1, 41)),
    "recoded.csv": "id,x,grade,label\n" + "".join(f"{i},{i % 5},{'AB'[i * 7 % 2]},{i * 7 % 2}\n" for i in range(1, 81)),
    "unrecoded.csv": "id,x,grade,label\n" + "".join(f"{i},{i % 5},{'AB'[i % 3 % 2]},{i * 7 % 2}\n" for i in range(1, 81)),
    "shared.mlab": '# Declarations several files share.\nuse std "agents"\n',
}


@dataclass(frozen=True)
class Explanation:
    """What a code means and how to fix it; `wrong` gives the code, `right` checks clean."""

    text: str
    wrong: str
    right: str
    encoding: str = "utf-8"  # how `wrong` is saved (E106 needs a file that is not UTF-8)
    since: str | None = None  # the file of a previous build, for codes of `mlabc check --since` (E912)


def example_task(*changes: tuple[str, str], extra: str = "") -> str:
    """A small complete task (it checks clean), with lines replaced: (old line, new line)."""
    text = '''task toy {
  title    "Predict y from x"
  category canonical
  problem  "Fit y from x, then write submission.csv with the columns id and y."
  starter  "env"
  data lite {
    from    csv "data.csv"
    split   random 0.2 seed 1
    id      "id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  metric   mae on "y"
  baseline run "train.py"
''' + extra + "}\n"
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    return text


def check_example(text: str, encoding: str = "utf-8", since: str | None = None):
    """Check an example file next to SUPPORT_FILES in a fresh folder; returns the Compiled result.
    With `since`, that text is compiled first and the example is checked against its build."""
    from ...lower.versions import since_diagnostics
    from ...program.check import check_program
    from ...program.emit import write_build
    from ...program.loader import load_program

    with tempfile.TemporaryDirectory(prefix="mlabc-explain-") as folder:
        root = Path(folder)
        for name, content in SUPPORT_FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, int):
                with (root / name).open("wb") as file:
                    file.truncate(content)
                continue
            (root / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        example = root / EXAMPLE_NAME
        previous = None
        if since is not None:
            example.write_text(since, encoding="utf-8")
            previous = write_build(check_program(load_program([example])), root / "previous-build")
        example.write_bytes(text.encode(encoding))
        compiled = check_program(load_program([example]), data=True)
        if previous is not None:
            compiled.diagnostics += since_diagnostics(compiled, previous)
        return compiled
