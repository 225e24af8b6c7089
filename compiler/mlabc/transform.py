"""Parse tree → typed AST (mlabc.ast). Values are decoded here (units, dedent)."""
from __future__ import annotations

import re
import textwrap

from lark import Token, Transformer, Tree, v_args

from . import ast as A
from .diagnostics import Span
from .units import DURATION_UNITS, SIZE_UNITS

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def decode_string(raw: str) -> str:
    """Decode a single-line string token: \\n \\t \\" \\\\ are escapes; others stay."""
    body = raw[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def decode_text(raw: str) -> str:
    """Decode a triple-quoted string: raw text, dedented, first newline dropped.

    Windows line ends become \\n: with \\r at each line end, dedent would find no common indent."""
    body = raw[3:-3].replace('\\"""', '"""').replace("\r\n", "\n")
    if body.startswith("\n"):
        body = body[1:]
    return textwrap.dedent(body).rstrip()


def dedent_width(raw: str) -> int:
    """How many columns decode_text removes from each line of a triple-quoted string."""
    body = raw[3:-3].replace("\r\n", "\n")
    body = body[1:] if body.startswith("\n") else body
    indents = [len(line) - len(line.lstrip()) for line in body.splitlines() if line.strip()]
    return min(indents, default=0)


def split_number_unit(text: str) -> tuple[float, str]:
    match = re.fullmatch(r"(-?\d+(?:\.\d+)?)([A-Za-z%]+)", text)
    assert match, text
    return float(match.group(1)), match.group(2)


@v_args(meta=True, inline=True)
class ToAst(Transformer):
    """Builds the AST of one file; `path` goes into every span."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    # -- spans ----------------------------------------------------------
    def _span(self, meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.path, 0, 0)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok: Token) -> Span:
        return Span(self.path, tok.line, tok.column, tok.end_line, tok.end_column)

    def _ident(self, tok: Token | None) -> A.Ident | None:
        return None if tok is None else A.Ident(str(tok), self._tok_span(tok))

    # -- values ---------------------------------------------------------
    def string(self, meta, tok):
        return A.Str(self._tok_span(tok), decode_string(str(tok)))

    def text(self, meta, tok):
        return A.Str(self._tok_span(tok), decode_text(str(tok)), triple=True, indent=dedent_width(str(tok)))

    def integer(self, meta, tok):
        return A.Int(self._tok_span(tok), int(tok))

    def float(self, meta, tok):
        return A.Float(self._tok_span(tok), float(tok))

    def duration(self, meta, tok):
        number, unit = split_number_unit(str(tok))
        return A.Duration(self._tok_span(tok), number * DURATION_UNITS[unit], str(tok))

    def size(self, meta, tok):
        number, unit = split_number_unit(str(tok))
        return A.Size(self._tok_span(tok), int(number * SIZE_UNITS[unit]), str(tok))

    def percent(self, meta, tok):
        return A.Percent(self._tok_span(tok), float(str(tok)[:-1]) / 100, str(tok))

    def name(self, meta, tok):
        return A.Name(self._tok_span(tok), str(tok))

    def npm(self, meta, tok, package):
        return A.Npm(self._span(meta), package.value)

    def python_version(self, meta, tok, version):
        return A.PythonVersion(self._span(meta), version.value)

    def list(self, meta, *items):
        return A.List(self._span(meta), tuple(items))

    # -- top level ------------------------------------------------------
    def start(self, meta, *decls):
        uses = tuple(d for d in decls if isinstance(d, A.Use))
        return A.Module(self.path, uses, tuple(d for d in decls if not isinstance(d, A.Use)))

    def use(self, meta, *children):
        version = children[-1] if isinstance(children[-1], A.Int) else None
        rest = children[:-1] if version is not None else children
        return A.Use(len(rest) == 2, rest[-1], self._span(meta), version)

    def use_version(self, meta, tok):
        return A.Int(self._tok_span(tok), int(tok))

    def task(self, meta, name, *entries):
        return A.Task(self._ident(name), entries, self._span(meta))

    def actions(self, meta, name, *rest):
        parent = None
        if rest and isinstance(rest[0], Token):
            parent, rest = self._ident(rest[0]), rest[1:]
        return A.Actions(self._ident(name), rest, self._span(meta), parent)

    def agent(self, meta, name, *rest):
        parent = None
        if rest and isinstance(rest[0], Token):
            parent, rest = self._ident(rest[0]), rest[1:]
        return A.Agent(self._ident(name), rest, self._span(meta), parent)

    def external_agent(self, meta, name, *rest):
        parent = None
        if rest and isinstance(rest[0], Token):
            parent, rest = self._ident(rest[0]), rest[1:]
        return A.ExternalAgent(self._ident(name), rest, self._span(meta), parent)

    def env(self, meta, *items):
        return A.Env(self._span(meta), items)

    def experiment(self, meta, name, *entries):
        return A.Experiment(self._ident(name), entries, self._span(meta))

    # -- task entries ---------------------------------------------------
    def _one(cls):  # noqa: N805 - a factory for single-value entries
        def build(self, meta, value):
            return cls(self._span(meta), value)
        return build

    title = _one(A.Title)
    category = _one(A.Category)
    problem = _one(A.Problem)
    starter = _one(A.Starter)
    read_only = _one(A.ReadOnly)
    requires = _one(A.Requires)
    command = _one(A.Command)
    submits = _one(A.Submits)
    no_deps = _one(A.NoDeps)
    dialect = _one(A.Dialect)
    baseline_run = _one(A.BaselineRun)
    success = _one(A.Success)
    demo = _one(A.Demo)
    id_column = _one(A.IdColumn)
    public = _one(A.Public)
    private = _one(A.Private)
    prepare = _one(A.Prepare)
    validation = _one(A.Validation)
    describe = _one(A.Describe)
    tool = _one(A.Tool)
    returns = _one(A.Returns)
    show = _one(A.Show)
    hide = _one(A.Hide)
    history = _one(A.History)
    summarize = _one(A.Summarize)
    retries = _one(A.Retries)
    prompt = _one(A.Prompt)
    format_error = _one(A.FormatError)
    exp_tasks = _one(A.ExpTasks)
    exp_agents = _one(A.ExpAgents)
    exp_runs = _one(A.ExpRuns)
    exp_data = _one(A.ExpData)
    exp_retries = _one(A.ExpRetries)

    def submission(self, meta, file, *rest):
        columns = next((r for r in rest if isinstance(r, A.Value)), None)
        rules = next((r for r in rest if isinstance(r, tuple)), ())
        return A.Submission(self._span(meta), file, columns, rules)

    def column_rules(self, meta, *rules):
        return tuple(rules)

    def column_rule(self, meta, column, kind, *rest):
        rest = list(rest)
        count = count_value = None
        if rest and isinstance(rest[0], Token):  # `max 20` / `exactly 5`
            count, count_value = self._ident(rest.pop(0)), rest.pop(0)
        low = rest.pop(0) if rest else None
        high = rest.pop(0) if rest else None
        return A.ColumnRule(self._span(meta), column, self._ident(kind), count, count_value, low, high)

    def metric(self, meta, name, *rest):
        on = next((r for r in rest if isinstance(r, A.Value)), None)
        direction = next((r for r in rest if isinstance(r, Token)), None)
        params = next((r for r in rest if isinstance(r, tuple)), ())
        return A.Metric(self._span(meta), self._ident(name), on, self._ident(direction), params)

    def metric_params(self, meta, *params):
        return tuple(p for p in params if p is not None)

    def baseline_value(self, meta, value, reason):
        return A.BaselineValue(self._span(meta), value, reason)

    def reference(self, meta, label, value, source=None):
        if isinstance(label, A.Name):  # a label is text: `best_human` and "best_human" are one label
            label = A.Str(label.span, label.value)
        return A.Reference(self._span(meta), label, value, source)

    def thresholds(self, meta, *items):
        return A.Thresholds(self._span(meta), tuple(items))

    def leaderboard(self, meta, file, column, source):
        return A.Leaderboard(self._span(meta), file, column, source)

    def threshold_entry(self, meta, name, value):
        return A.Limit(self._ident(name), value, self._span(meta))

    def gym(self, meta, *items):
        return A.Gym(self._span(meta), tuple(items))

    def gym_entry(self, meta, name, value):
        return A.Limit(self._ident(name), value, self._span(meta))

    def default_agent(self, meta, name):
        return A.DefaultAgent(self._span(meta), self._ident(name))

    def evaluator(self, meta, target, reason):
        return A.Evaluator(self._span(meta), target, reason)

    version = _one(A.Version)

    def changes(self, meta, *items):
        return A.Changes(self._span(meta), items)

    def change(self, meta, version, what, why):
        return A.Change(version, what, why, self._span(meta))

    def known_issue(self, meta, text, since, fixed=None):
        return A.KnownIssue(self._span(meta), text, since, fixed)

    def data(self, meta, name, *entries):
        return A.Data(self._span(meta), self._ident(name), entries)

    def answers(self, meta, value, unlabelled=None):
        return A.Answers(self._span(meta), value, self._ident(unlabelled))

    def source(self, meta, kind, value):
        return A.Source(self._span(meta), self._ident(kind), value)

    def split(self, meta, method, *rest):
        seed = None
        if rest and isinstance(rest[-1], tuple):
            seed, rest = rest[-1][0], rest[:-1]
        return A.Split(self._span(meta), self._ident(method), tuple(rest), seed)

    def seed(self, meta, value):
        return (value,)

    def checksum(self, meta, file, digest):
        return A.Checksum(self._span(meta), file, digest)

    def limits(self, meta, *items):
        return A.Limits(self._span(meta), items)

    def limit(self, meta, key, value):
        return A.Limit(self._ident(key), value, self._span(meta))

    def hardware(self, meta, *items):
        return A.Hardware(self._span(meta), items)

    def hardware_entry(self, meta, key, value, need=None):
        return A.HardwareEntry(self._ident(key), value, self._ident(need), self._span(meta))

    # -- actions --------------------------------------------------------
    def action(self, meta, *rest):
        if isinstance(rest[0], Token) and rest[0].type == "KIND":  # see `_action_word` in the grammar
            rest = rest[1:]
        return A.Action(self._span(meta), rest[0], rest[1:])

    def input(self, meta, name, type_, *rest):
        default = rest[0] if len(rest) == 2 else None
        return A.Input(self._span(meta), self._ident(name), self._ident(type_), default, rest[-1])

    def does(self, meta, primitive, *params):
        return A.Does(self._span(meta), self._ident(primitive), tuple(p for p in params if p is not None))

    def param(self, meta, name, value):
        return A.Param(self._ident(name), value, self._span(meta))

    def tier(self, meta, name):
        return A.Tier(self._span(meta), self._ident(name))

    # -- agents ---------------------------------------------------------
    def uses_actions(self, meta, name):
        return A.UsesActions(self._span(meta), self._ident(name))

    def model(self, meta, tier, default, params=()):
        return A.Model(self._span(meta), self._ident(tier), default, tuple(params))

    def model_params(self, meta, *items):
        return items

    def respond(self, meta, fmt, *entries):
        sections = tuple(e for e in entries if isinstance(e, A.Section))
        settings = tuple(e for e in entries if isinstance(e, A.RespondSetting))
        return A.Respond(self._span(meta), self._ident(fmt), sections, settings)

    def respond_setting(self, meta, key, value):
        return A.RespondSetting(self._ident(key), value, self._span(meta))

    def search(self, meta, policy, *items):
        return A.Search(self._span(meta), self._ident(policy), items)

    def section(self, meta, word, name, *rest):
        role = next((r.value for r in rest if isinstance(r, tuple) and r[0] == "role"), None)
        kind = next((r.value for r in rest if isinstance(r, tuple) and r[0] == "kind"), None)
        return A.Section(str(word), name, self._ident(role), self._ident(kind), rest[-1], self._span(meta))

    def role(self, meta, tok):
        return _Attr("role", tok)

    def kind(self, meta, tok):
        return _Attr("kind", tok)

    def drop_action(self, meta, name):
        return A.DropAction(self._span(meta), name)

    def drop_section(self, meta, word, name):
        return A.DropSection(self._span(meta), name)

    def prompts(self, meta, *items):
        return A.Prompts(self._span(meta), items)

    def named_prompt(self, meta, name, value):
        return A.NamedPrompt(self._ident(name), value, self._span(meta))

    def hook(self, meta, time, name):
        return A.Hook(self._span(meta), self._ident(time), self._ident(name))

    # -- experiments ----------------------------------------------------
    def exp_tasks_category(self, meta, name):
        return A.ExpTasksCategory(self._span(meta), self._ident(name))

    def exp_models(self, meta, *rest):
        tier = rest[0] if len(rest) == 2 else None
        return A.ExpModels(self._span(meta), self._ident(tier), rest[-1])

    def exp_override(self, meta, name, *entries):
        return A.ExpOverride(self._span(meta), self._ident(name), entries)

    def exp_agent_override(self, meta, name, *entries):
        return A.ExpOverride(self._span(meta), self._ident(name), entries, agent=True)


class _Attr(tuple):
    """A (attribute, token) pair of a section; `.value` is the token."""

    def __new__(cls, attr: str, tok: Token):
        return super().__new__(cls, (attr, tok))

    @property
    def value(self) -> Token:
        return self[1]


def to_ast(tree: Tree, path: str) -> A.Module:
    return ToAst(path).transform(tree)
