"""`mlabc new demo SOLUTION_DIR`: a task's demonstration built from a solution folder and a list
of steps, so a winning demonstration needs no code escaped into JSON by hand.

The steps file has one action a line, its input after the name, and optionally ` -- ` and the
thought the step states (`#` starts a comment):

    List Files .                      -- See what the workspace holds.
    Write File train.py               -- Put the solution in place.
    Execute Script train.py
    Validate Submission
    Final Answer Trained the solution and wrote submission.csv.

`Write File NAME` writes the solution folder's file NAME (its text is read from there); `List
Files DIR`, `Read File NAME`, `Execute Script NAME`, `Inspect Script Lines NAME A B`, `Undo Edit
Script NAME`, `Copy File A B`, `Validate Submission` and `Final Answer TEXT` take their inputs
as written; any other action takes one JSON object (`My Action {"key": "value"}`). Without a
steps file: list the files, write each Python file of the solution, run the first (train.py
when there is one), validate the submission, finish.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from ..lower.demo import demonstration_problem


class DemoBuildError(Exception):
    """A solution folder or a steps file that cannot make a demonstration (one line for the user)."""


def _inputs(action: str, words: list[str], rest: str, solution: Path, where: str) -> dict:
    def need(count: int) -> list[str]:
        if len(words) != count:
            raise DemoBuildError(f"{where}: {action} takes {count} value(s), found {len(words)}")
        return words

    if action == "Write File":
        (name,) = need(1)
        path = solution / name
        if not path.is_file():
            raise DemoBuildError(f"{where}: the solution folder {solution} has no file {name!r} to write")
        return {"file_name": name, "content": path.read_text(encoding="utf-8")}
    fields = {"List Files": ["dir_path"], "Read File": ["file_name"], "Execute Script": ["script_name"],
              "Undo Edit Script": ["script_name"], "Copy File": ["source", "destination"],
              "Inspect Script Lines": ["script_name", "start_line_number", "end_line_number"],
              "Validate Submission": []}
    if action == "Final Answer":
        if not rest:
            raise DemoBuildError(f"{where}: Final Answer takes the text of the answer")
        return {"final_answer": rest}
    if action in fields:
        values: list = need(len(fields[action]))
        if action == "Inspect Script Lines":
            values = [values[0], *map(int, values[1:])] if all(v.isdigit() for v in values[1:]) else \
                values
        return dict(zip(fields[action], values))
    if not rest.startswith("{"):
        raise DemoBuildError(f"{where}: give {action!r} its input as one JSON object, e.g. {action} {{\"key\": 1}}")
    try:
        value = json.loads(rest)
    except ValueError as error:
        raise DemoBuildError(f"{where}: the input of {action!r} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise DemoBuildError(f"{where}: the input of {action!r} must be a JSON object")
    return value


KNOWN = ("List Files", "Read File", "Write File", "Execute Script", "Undo Edit Script", "Copy File",
         "Inspect Script Lines", "Validate Submission", "Final Answer")


def parse_steps(text: str, solution: Path, source: str = "steps") -> list[dict]:
    steps = []
    for number, raw in enumerate(text.splitlines(), 1):
        line, _, thought = raw.split("#", 1)[0].partition(" -- ")
        line = line.strip()
        if not line:
            continue
        where = f"{source}:{number}"
        action = next((name for name in sorted(KNOWN, key=len, reverse=True)
                       if line == name or line.startswith(name + " ")), None)
        if action is None:  # an action of the task's own: its name, then a JSON object
            brace = line.find("{")
            action = (line[:brace] if brace > 0 else line).strip()
            rest = line[brace:].strip() if brace > 0 else ""
        else:
            rest = line[len(action):].strip()
        try:
            words = shlex.split(rest) if action not in ("Final Answer",) and not rest.startswith("{") else []
        except ValueError as error:
            raise DemoBuildError(f"{where}: {error}") from None
        step = {"sections": {"thought": thought.strip() or f"Next: {action}."}, "action": action,
                "input": _inputs(action, words, rest, solution, where)}
        steps.append(step)
    if not steps:
        raise DemoBuildError(f"{source} lists no steps")
    return steps


def default_steps(solution: Path) -> str:
    scripts = sorted(p.name for p in solution.glob("*.py"))
    if not scripts:
        raise DemoBuildError(f"the solution folder {solution} has no Python file; give the steps with --steps")
    main = "train.py" if "train.py" in scripts else scripts[0]
    lines = ["List Files . -- See what the workspace holds."]
    lines += [f"Write File {name} -- Put the solution's {name} in place." for name in scripts]
    lines += [f"Execute Script {main} -- Train the solution and write the submission.",
              "Validate Submission -- Check the submission's format before finishing.",
              f"Final Answer Ran the solution's {main}, which wrote the submission."]
    return "\n".join(lines) + "\n"


def build_demonstration(solution: Path, steps_text: str | None = None, source: str = "steps") -> dict:
    """The version-2 demonstration document of these steps over this solution folder."""
    if not solution.is_dir():
        raise DemoBuildError(f"no solution folder {solution}")
    steps = parse_steps(steps_text if steps_text is not None else default_steps(solution), solution, source)
    written = [s["input"]["file_name"] for s in steps if s["action"] == "Write File"]
    document = {"format": "mlab-demonstration", "version": 2, "steps": steps}
    if written:
        document["solution"] = "train.py" if "train.py" in written else written[0]
    problem = demonstration_problem(document)
    if problem:
        raise DemoBuildError(f"the demonstration would be invalid: {problem}")
    return document
