"""A task's demonstration (tasks/<task>/demo.json): the actions of a winning run with their
inputs and the texts of the agent's sections by role, so that `mlab/demo` can render it into
the reply format of whichever agent runs it, and `mlab drive` can feed its actions.

Version 2 (written by the tasks' generators)::

    {"format": "mlab-demonstration", "version": 2, "solution": "train.py",
     "steps": [{"sections": {"thought": "..."}, "action": "List Files", "input": {"dir_path": "."}}, ...],
     "variants": [{"description": "...", "files": {"train.py": "..."}}]}

Version 1 (still read): a JSON list of reply strings in one agent's text format.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mlab.models.decode import FILE_CHARS, loads
from mlab.errors import MlabError

FORMAT = "mlab-demonstration"
VERSION = 2
ROLES = ("reflection", "plan", "fact-check", "thought", "criticism", "speak")
_FIELDS = {"format", "version", "solution", "steps", "variants"}
_STEP_FIELDS = {"sections", "action", "input"}


class DemonstrationError(MlabError):
    """A demonstration file that cannot be read or does not follow the format."""


@dataclass(frozen=True)
class DemoStep:
    action: str
    input: object
    sections: dict  # role -> text


@dataclass(frozen=True)
class Variant:
    description: str
    files: dict  # file name -> content


@dataclass(frozen=True)
class Demonstration:
    steps: tuple = ()
    solution: str | None = None
    variants: tuple = ()
    replies: tuple | None = None  # version 1: the replies as written, played as they are

    @property
    def version(self) -> int:
        return 1 if self.replies is not None else VERSION

    def written(self, file_name: str) -> str | None:
        """The content of the last Write File of file_name in the steps (None if never written)."""
        content = None
        for step in self.steps:
            if step.action == "Write File" and isinstance(step.input, dict) \
                    and step.input.get("file_name") == file_name:
                content = step.input.get("content")
        return content


def is_demonstration(document) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def parse(document, source: str) -> Demonstration:
    """A Demonstration from a parsed demo.json (either version); source names the file in errors."""
    if isinstance(document, list):
        if not all(isinstance(reply, str) for reply in document):
            raise DemonstrationError(f"{source}: a version-1 demonstration is a JSON list of reply strings")
        return Demonstration(replies=tuple(document))
    if not is_demonstration(document):
        raise DemonstrationError(f"{source}: not a demonstration (expected an object with "
                                 f"\"format\": \"{FORMAT}\", or a JSON list of replies)")
    version = document.get("version")
    if version != VERSION:
        raise DemonstrationError(f"{source}: demonstration version {version!r} is not supported "
                                 f"(this mlab reads version {VERSION} and version-1 reply lists)")
    unknown = set(document) - _FIELDS
    if unknown:
        raise DemonstrationError(f"{source}: unknown field(s) {', '.join(sorted(unknown))}")
    solution = document.get("solution")
    if solution is not None and (not isinstance(solution, str) or not solution):
        raise DemonstrationError(f"{source}: \"solution\" must be a file name")
    steps = document.get("steps")
    if not isinstance(steps, list) or not steps:
        raise DemonstrationError(f"{source}: \"steps\" must be a non-empty list")
    parsed = tuple(_step(item, f"{source}: step {index + 1}") for index, item in enumerate(steps))
    variants = document.get("variants", [])
    if not isinstance(variants, list):
        raise DemonstrationError(f"{source}: \"variants\" must be a list")
    return Demonstration(parsed, solution, tuple(_variant(v, f"{source}: variant {i + 1}")
                                                 for i, v in enumerate(variants)))


def _step(item, where: str) -> DemoStep:
    if not isinstance(item, dict):
        raise DemonstrationError(f"{where} is not an object")
    unknown = set(item) - _STEP_FIELDS
    if unknown:
        raise DemonstrationError(f"{where} has unknown field(s) {', '.join(sorted(unknown))}; "
                                 "a step has \"sections\", \"action\" and \"input\"")
    action = item.get("action")
    if not isinstance(action, str) or not action:
        raise DemonstrationError(f"{where} has no \"action\" name")
    action_input = item.get("input", {})
    if not isinstance(action_input, dict):
        raise DemonstrationError(f"{where} ({action}): \"input\" must be an object")
    sections = item.get("sections", {})
    if not isinstance(sections, dict) or not all(isinstance(t, str) for t in sections.values()):
        raise DemonstrationError(f"{where} ({action}): \"sections\" must map roles to texts")
    unknown = set(sections) - set(ROLES)
    if unknown:
        raise DemonstrationError(f"{where} ({action}): unknown section role(s) {', '.join(sorted(unknown))}; "
                                 f"roles: {', '.join(ROLES)}")
    return DemoStep(action, action_input, dict(sections))


def _variant(item, where: str) -> Variant:
    if not isinstance(item, dict) or not isinstance(item.get("files"), dict) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in item["files"].items()):
        raise DemonstrationError(f"{where} must be {{\"description\": ..., \"files\": {{NAME: CONTENT}}}}")
    description = item.get("description", "")
    if not isinstance(description, str):
        raise DemonstrationError(f"{where}: \"description\" must be a text")
    return Variant(description, dict(item["files"]))


def load(path: Path) -> Demonstration:
    """Read and check a demo.json (a DemonstrationError naming the file and the step if malformed)."""
    try:
        document = loads(Path(path).read_text(encoding="utf-8"), what="the file", max_chars=FILE_CHARS)
    except OSError as problem:
        raise DemonstrationError(f"cannot read the demonstration {path}: {problem.strerror or problem}") from None
    except ValueError as problem:
        raise DemonstrationError(f"the demonstration {path} is not valid JSON: {problem}") from None
    return parse(document, str(path))


def check_playable(demonstration: Demonstration, action_names: list[str], agent: str, source: str) -> None:
    """Before a run starts: every step's action must be one the agent can call (shown or hidden)."""
    if demonstration.replies is not None:
        return  # version 1: replies as written, checked as each is parsed
    known = set(action_names)
    for index, step in enumerate(demonstration.steps):
        if step.action not in known:
            raise DemonstrationError(f"{source}: step {index + 1} uses the action {step.action!r}, which agent "
                                     f"{agent} does not have (its actions: {', '.join(action_names)}); "
                                     "the demonstration cannot be played by this agent")
