"""Drive a run with a fixed list of actions (the scripted driver behind `mlab drive`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mlab.errors import StorageError, UsageError


@dataclass(frozen=True)
class ScriptedAction:
    action: object
    input: object


def load_actions(path: Path) -> list[ScriptedAction]:
    """A JSON list of {"action": NAME, "input": {...}} objects, or a demonstration (version 2)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StorageError(f"no such actions file: {path}") from None
    except OSError as problem:
        raise StorageError(f"cannot read the actions file {path}: {problem.strerror or problem}") from None
    except ValueError as problem:
        raise UsageError(f"the actions file {path} is not valid JSON: {problem}") from None
    from mlab.models.demonstration import DemonstrationError, is_demonstration, parse

    if is_demonstration(document):  # a task's demo.json (version 2): its steps' actions and inputs
        try:
            return [ScriptedAction(step.action, step.input) for step in parse(document, str(path)).steps]
        except DemonstrationError as problem:
            raise UsageError(str(problem)) from None
    if not isinstance(document, list):
        raise UsageError(f"{path} must hold a JSON list of {{\"action\": ..., \"input\": {{...}}}} objects")
    actions = []
    for index, item in enumerate(document):
        if not isinstance(item, dict) or "action" not in item:
            raise UsageError(f"{path}: item {index} is not an object with an \"action\" field")
        unknown = set(item) - {"action", "input"}
        if unknown:
            raise UsageError(f"{path}: item {index} has unknown field(s) {', '.join(sorted(unknown))}; "
                             "only \"action\" and \"input\" are allowed")
        actions.append(ScriptedAction(item["action"], item.get("input")))
    return actions


def drive(run, actions: list[ScriptedAction], on_step: Callable | None = None) -> int:
    """Feed the actions not yet taken (a resumed run skips those its trace holds); returns steps taken now."""
    taken = 0
    for scripted in actions[run.steps_taken:]:
        if run.ended:
            break
        observation = run.step(scripted.action, scripted.input)
        taken += 1
        if on_step is not None:
            on_step(run.records[-1], observation)
    return taken
