"""The views of a compiled agent (agent.json, spec/agent.schema.json) and of its action table
(actions.json, spec/actions.schema.json)."""
from __future__ import annotations

from collections.abc import Mapping

from mlab.documents.view import EMPTY, View


class ModelParams(View):
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None


class Tier(View):
    """A model tier of an agent (main, fast, edit): its default model and call parameters."""

    default: str | None = None
    params: ModelParams = ModelParams()


class Models(View):
    main: Tier = Tier()
    fast: Tier = Tier()
    edit: Tier = Tier()


class Section(View):
    """A section of a text reply (or of a tools reply's text)."""

    name: str
    kind: str
    role: str | None
    instruction: str


class TextReply(View):
    """A text reply format (`sections` or `json`): a tools reply's fallback."""

    format: str
    sections: tuple[Section, ...] = ()


class Reply(View):
    """The reply format: text sections, or tool calls with their settings and fallback."""

    format: str
    sections: tuple[Section, ...] = ()
    sections_required: bool = False
    tool_choice: str | None = None
    parallel: str | None = None
    list_tools: bool = False
    fallback: TextReply | None = None   # a tools reply's text reply for models that cannot take tools


class Hooks(View):
    before_step: tuple[str, ...] = ()
    after_step: tuple[str, ...] = ()


class Score(View):
    """Where a tree search reads a node's score: a pattern in the output, or the harness's scorer."""

    KEYS = {"from_": "from"}
    from_: str
    pattern: str | None = None
    group: int | None = None


class Search(View):
    """A tree-search agent's settings."""

    policy: str
    params: Mapping[str, object]
    parallel: int
    code_file: str
    score: Score
    select: str
    operators: tuple[str, ...] = ()


class ExternalLimits(View):
    steps: int | None = None
    time: float | None = None
    tokens: int | None = None
    cost: float | None = None


class External(View):
    """An agent from outside mlab (`agent NAME external`)."""

    requires: tuple[str, ...]
    env: Mapping[str, str]
    submits: str | None
    problem_file: str
    limits: ExternalLimits = ExternalLimits()
    npm: tuple[str, ...] = ()
    python: str | None = None   # the Python its requires install into ("3.12")
    dialect: str | None = None
    no_deps: tuple[str, ...] = ()


class Agent(View):
    """A compiled agent (agent.json)."""

    schema: str
    schema_version: int
    name: str
    action_set: str
    models: Models
    history_steps: int
    summarize_over_chars: int
    format_retries: int
    reply: Reply | None
    extends: str | None = None
    shown: tuple[str, ...] = ()
    hooks: Hooks = Hooks()
    search: Search | None = None
    templates: Mapping[str, str] = EMPTY
    external: External | None = None

    @property
    def kind(self) -> str:
        """external, search or loop: how a run of this agent is driven."""
        return "external" if self.external else "search" if self.search else "loop"


# -- the action table (spec/actions.schema.json) -----------------------------------------------

class Input(View):
    name: str
    type: str
    description: str
    required: bool
    default: object = None

    @property
    def has_default(self) -> bool:
        """Whether the input declares a default (which may be null)."""
        return "default" in (getattr(self, "_present", None) or ())


class Action(View):
    """One action of an agent's table: its inputs, the primitive it does and how it is shown."""

    name: str
    description: str
    inputs: tuple[Input, ...]
    returns: str
    primitive: str
    params: Mapping[str, object]
    tier: str
    prompts: tuple[str, ...]
    shown: bool
    usage: str
    input_schema: object
    bound: Mapping[str, object] = EMPTY
    tool_name: str | None = None
    tool: object = None


class Actions(View):
    """A compiled action table (actions.json)."""

    schema: str
    schema_version: int
    agent: str
    action_set: str
    actions: tuple[Action, ...] = ()

