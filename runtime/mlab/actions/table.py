"""Dispatch actions through an agent's compiled action table (build/agents/<a>/actions.json).

An action is looked up by name (exactly, then ignoring case, spaces and punctuation), its
input coerced where the mistake is obvious (a number given as text, "true" for a boolean, a
one-element list for a text) and validated against the action's JSON Schema. Every problem,
and every exception inside a primitive, becomes an observation the agent can act on.
"""
from __future__ import annotations

import difflib
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from mlab.actions.primitives import PrimitiveContext, PrimitiveRegistry, base_registry
from mlab.documents.agent import Action, Actions
from mlab.documents.view import thaw
from mlab.observation import ActionFailed, Observation, error
from mlab.actions.workspace import PathRefused

TRUE_WORDS = {"true", "yes", "1", "on"}
FALSE_WORDS = {"false", "no", "0", "off"}


def fold(name: str) -> str:
    """A name reduced to lowercase letters and digits, for forgiving matches."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


class ActionRejected(Exception):
    """The action cannot run as given; the message is the observation."""


@dataclass(frozen=True)
class PreparedAction:
    """A resolved action with its validated input, ready to run."""

    action: Action
    inputs: dict

    @property
    def name(self) -> str:
        return self.action.name

    @property
    def primitive(self) -> str:
        return self.action.primitive


class ActionTable:
    """The actions of one agent, shown and hidden, by name, and the primitives they run
    (this table's own registry: what the agent loop installs there stays with this table)."""

    def __init__(self, table: Actions, primitives: PrimitiveRegistry | None = None):
        self.table = table
        self.primitives = primitives if primitives is not None else base_registry()
        self.actions: dict[str, Action] = {a.name: a for a in table.actions}
        folded: dict[str, list[str]] = {}
        for name in self.actions:
            folded.setdefault(fold(name), []).append(name)
        self._folded = {key: names[0] for key, names in folded.items() if len(names) == 1}
        self._validators = {}

    def names(self, shown_only: bool = False) -> list[str]:
        return [a.name for a in self.table.actions if a.shown or not shown_only]

    def usage(self, action: Action) -> str:
        return f"Action: {action.name}\nAction Input: {action.usage}"

    def lookup(self, given: object) -> Action:
        if not isinstance(given, str) or not given.strip():
            raise ActionRejected("no action was named; " + self._valid_names())
        name = given.strip()
        if name in self.actions:
            return self.actions[name]
        match = self._folded.get(fold(name))
        if match is not None:
            return self.actions[match]
        shown = self.names(shown_only=True) or self.names()
        close = difflib.get_close_matches(name, shown, n=1, cutoff=0.5)
        if not close:
            by_fold = {fold(n): n for n in shown}
            close = [by_fold[c] for c in difflib.get_close_matches(fold(name), list(by_fold), n=1, cutoff=0.5)]
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ActionRejected(f"there is no action named {name!r}.{hint} " + self._valid_names())

    def _valid_names(self) -> str:
        return "Valid actions: " + ", ".join(self.names(shown_only=True) or self.names()) + "."

    def prepare(self, given_name: object, given_input: object) -> PreparedAction:
        """Resolve and validate an action; ActionRejected says what is wrong and how to call it."""
        action = self.lookup(given_name)
        try:
            inputs = self._coerce(action, given_input)
            self._validate(action, inputs)
        except ActionRejected as problem:
            raise ActionRejected(f"{problem}\nUse the action like this:\n{self.usage(action)}") from None
        return PreparedAction(action, inputs)

    # -- input handling ------------------------------------------------------------------
    def _coerce(self, action: Action, given: object) -> dict:
        declared = {spec.name: spec for spec in action.inputs}
        required = [spec.name for spec in action.inputs if spec.required]
        if given is None or (isinstance(given, str) and not given.strip()):
            given = {}
        if isinstance(given, str):
            from mlab.bounded_json import TooDeep, TooLarge, loads
            from mlab.standard_json import MAX_JSON_DEPTH

            try:  # bounded as a model's reply is: deep or huge text is refused, never decoded
                parsed = loads(given, what="the action input", max_depth=MAX_JSON_DEPTH)
            except (TooDeep, TooLarge) as problem:
                raise ActionRejected(str(problem)) from None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                given = parsed
            elif len(required) == 1:
                given = {required[0]: given}  # a bare value for the one input the action takes
            else:
                raise ActionRejected("the action input must be a JSON object with the fields "
                                     + ", ".join(declared))
        if not isinstance(given, dict):
            raise ActionRejected(f"the action input must be a JSON object, not {type(given).__name__}")
        by_fold = {fold(name): name for name in declared}
        inputs: dict = {}
        extra = []
        for key, value in given.items():
            name = key if key in declared else by_fold.get(fold(str(key)))
            if name is None or name in inputs:
                extra.append(str(key))
                continue
            inputs[name] = coerce_value(value, declared[name].type)
        for name, spec in declared.items():
            if name not in inputs and not spec.required and spec.has_default:
                inputs[name] = thaw(spec.default)
        missing = [name for name in required if name not in inputs]
        problems = []
        if missing:
            problems.append("missing " + ", ".join(repr(m) for m in missing))
        if extra:
            problems.append("unknown field" + ("s " if len(extra) > 1 else " ")
                            + ", ".join(repr(e) for e in extra) + f" (this action takes: {', '.join(declared) or 'nothing'})")
        if problems:
            raise ActionRejected(f"the input of {action.name} is wrong: " + "; ".join(problems))
        return inputs

    def _validate(self, action: Action, inputs: dict) -> None:
        validator = self._validators.get(action.name)
        if validator is None:
            schema = thaw(action.input_schema)   # a JSON Schema, as jsonschema takes it
            validator = jsonschema.validators.validator_for(schema)(schema)
            self._validators[action.name] = validator
        errors = sorted(validator.iter_errors(inputs), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            described = []
            for problem in errors[:5]:
                where = "/".join(map(str, problem.absolute_path))
                described.append(f"{where}: {problem.message}" if where else problem.message)
            raise ActionRejected(f"the input of {action.name} is wrong: " + "; ".join(described))

    # -- running -------------------------------------------------------------------------
    def run(self, prepared: PreparedAction, context: PrimitiveContext) -> Observation:
        """Run a prepared action; whatever goes wrong inside becomes an error observation."""
        primitive = self.primitives.get(prepared.primitive)
        if primitive is None:
            return error(f"the action {prepared.name!r} uses the primitive {prepared.primitive!r}, which "
                         "this runtime does not have (the build is newer than the runtime?)")
        params = dict(primitive.params)
        params.update(thaw(prepared.action.params))
        try:
            # inputs the action binds to constants (`does prim(input = value)`); the agent gives none
            inputs = {**prepared.inputs, **thaw(prepared.action.bound)}  # a bound input always wins
            return primitive.run(context, inputs, params)
        except (ActionFailed, PathRefused) as problem:
            return error(str(problem))
        except UnicodeError as problem:
            return error(f"{prepared.name} failed: the text could not be encoded or decoded ({problem.reason})")
        except OSError as problem:
            inside = problem.filename and str(problem.filename).startswith(str(context.workspace.root))
            detail = f" ({context.workspace.relative(Path(problem.filename))})" if inside else ""
            return error(f"{prepared.name} failed: {problem.strerror or problem}{detail}")
        except Exception as problem:  # a harness bug must not end the run: report it and go on
            observation = error(f"{prepared.name} failed with an internal error of the harness "
                                f"({type(problem).__name__}: {problem}); try again differently")
            observation.details["traceback"] = traceback.format_exc(limit=8)
            return observation


def coerce_value(value: object, kind: str) -> object:
    """Fix obvious type mistakes; anything else is left for the schema to report."""
    if isinstance(value, list) and len(value) == 1 and kind in ("string", "text", "path"):
        value = value[0]
    if kind == "int":
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif kind == "float":
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    elif kind == "bool":
        if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
            return value.strip().lower() in TRUE_WORDS
        if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
    elif kind in ("string", "text", "path"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return value
