"""`agent NAME external { ... }` (with `extends` within the kind) → agent IR, an empty action table
and the command template.

An external agent is a command run inside the sandbox; its model calls go through mlab's
gateway. The compiler checks what can be known before a run: the command and the environment
values are Jinja over the external context of spec/template-context.json, the requirements are
PEP 508 and the npm packages pinned to exact versions, every declared tier is used, the limits are
ones a gateway can enforce, and the dialect is one the gateway serves (spec/dialects.json), its base
URL named by the command or the environment.
"""
from __future__ import annotations

import re

from .. import ast as A
from ..values import Reporter, describe, did_you_mean, duplicate_entries
from .actions import TIERS
from .extends import ExtendsResolver
from ..resources import spec_json
from .templates import check_template, template_variables

# What the gateway can enforce on an outside agent: its model calls (steps, tokens, cost) and its
# wall-clock time. Every other limit of a task (script timeouts, memory, disk) belongs to the task.
ENFORCEABLE = {"steps": "int", "time": "duration", "tokens": "int", "cost": "number"}
TASK_ONLY_LIMITS = ("script_timeout", "memory", "disk")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PROBLEM_FILE = "problem.md"  # where the runner writes the problem statement, in the workspace
DEFAULT_DIALECT = "chat"
PYTHON_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?$")   # `python "3.12"` or "3.12.1" in an agent's requires
# An npm package at an exact version: an optional @scope/, a name, @, a semantic version.
NPM_PACKAGE = re.compile(r"^(?P<name>(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)@"
                         r"(?P<version>\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")


def empty_external() -> dict:
    return {"command": None, "requires": None, "npm": None, "python": None, "no_deps": None, "env": {}, "models": {},
            "submits": None, "limits": {}, "dialect": None}


def kind_of(decl: A.Agent) -> str:
    return "external" if isinstance(decl, A.ExternalAgent) else "mlab"


def crosses_kinds(decl: A.Agent, agents: dict[str, A.Agent], report: Reporter) -> bool:
    """E905 for an agent that extends an agent of the other kind; True when it does."""
    if decl.parent is None or decl.parent.value not in agents:
        return False
    parent = agents[decl.parent.value]
    if kind_of(parent) == kind_of(decl):
        return False
    mine, theirs = ("an external agent", "an mlab agent") if kind_of(decl) == "external" else \
        ("an mlab agent", "an external agent")
    report.error("E905", f"agent `{decl.name.value}` is {mine} but extends `{parent.name.value}`, {theirs}",
                 decl.parent.span, hint="`extends` works within a kind: an external agent extends an external "
                                        "agent, a linear or search agent one of those")
    return True


class ExternalResolver(ExtendsResolver):
    """Applies an external agent's entries over its parent's (lower/extends.py)."""

    kind, plural, unknown_code = "agent", "agents", "E304"

    def __init__(self, agents: dict[str, A.Agent], report: Reporter, model_entry):
        super().__init__(agents, report)
        self.agents, self.model_entry = agents, model_entry

    def empty(self) -> dict:
        return empty_external()

    def inherit(self, decl: A.Agent, parent_result: dict) -> dict:
        base = {k: (dict(v) if isinstance(v, dict) else v) for k, v in parent_result.items()}
        base["models"] = {t: dict(m) for t, m in parent_result["models"].items()}
        return base

    def apply(self, decl: A.Agent, base: dict) -> dict:
        return self._apply(decl, base)

    def _apply(self, decl: A.Agent, s: dict) -> dict:
        report = self.report
        duplicate_entries(decl.entries, report, f"agent `{decl.name.value}`")
        for entry in decl.entries:
            if isinstance(entry, A.Command):
                s["command"] = entry.value
            elif isinstance(entry, A.Requires):
                s["requires"] = _requirements(entry.value, report)
                s["npm"] = _npm_packages(entry.value, report)
                s["python"] = _python_version(entry.value, report)
            elif isinstance(entry, A.NoDeps):
                s["no_deps"] = _requirements(entry.value, report, npm=False)
            elif isinstance(entry, A.Dialect):
                s["dialect"] = entry.value
            elif isinstance(entry, A.Env):
                for item in entry.items:
                    key = item.key.value
                    if not ENV_NAME.match(key):
                        report.error("E405", f"`{key}` cannot be an environment variable's name", item.key.span,
                                     hint="use letters, digits and `_`, not starting with a digit")
                        continue
                    if report.string(item.value, f"environment variable `{key}`") is not None:
                        s["env"][key] = item.value
            elif isinstance(entry, A.Model):
                self.model_entry(entry, s)
                if entry.tier.value in s["models"]:
                    s["models"][entry.tier.value]["_span"] = entry.tier.span
            elif isinstance(entry, A.Submits):
                s["submits"] = entry.value
            elif isinstance(entry, A.Limits):
                s["limits"].update(_limits(entry, report))
        return s


def _requirements(value: A.Value, report: Reporter, npm: bool = True) -> list[str]:
    """PEP 508 requirements, each checked with `packaging` (E902 at the item that does not parse);
    npm packages (`npm "..."`, where `npm`) are left to _npm_packages."""
    from packaging.requirements import InvalidRequirement, Requirement

    items = value.items if isinstance(value, A.List) else (value,)
    out = []
    for item in items:
        if npm and isinstance(item, (A.Npm, A.PythonVersion)):
            continue
        text = report.string(item, "a requirement")
        if text is None:
            continue
        try:
            out.append(str(Requirement(text)))
        except InvalidRequirement as problem:
            first = str(problem).splitlines()[0]
            report.error("E902", f"requirement {text!r} is not a PEP 508 requirement: {first}", item.span,
                         hint='write e.g. "mini-swe-agent==1.17.4" or "numpy>=1.26,<2"')
    return out


def _npm_packages(value: A.Value, report: Reporter) -> list[str]:
    """The npm packages of a `requires`, each NAME@VERSION at an exact version (E913 otherwise): the
    agent cache is keyed by the exact versions, so what a run installs is what the file says."""
    items = value.items if isinstance(value, A.List) else (value,)
    out = []
    for item in items:
        if not isinstance(item, A.Npm):
            continue
        text = item.value.strip()
        if NPM_PACKAGE.match(text):
            out.append(text)
            continue
        bare = text.rsplit("@", 1)[0] if text.count("@") > (1 if text.startswith("@") else 0) else text
        report.error("E913", f"npm package {text!r} is not NAME@VERSION at an exact version", item.span,
                     hint=f'pin it, e.g. npm "{bare or "@openai/codex"}@1.2.3" (`npm view {bare or "PACKAGE"} version` '
                          "prints the newest); ranges and tags (^1.2, latest) are refused")
    return out


def _python_version(value: A.Value, report: Reporter) -> str | None:
    """The Python a `requires` names (`python "3.12"`), X.Y or X.Y.Z, at most once (E916 otherwise): the
    agent's environment is made with that interpreter from the host, not with the run's."""
    items = value.items if isinstance(value, A.List) else (value,)
    named = [item for item in items if isinstance(item, A.PythonVersion)]
    for extra in named[1:]:
        report.error("E916", f'`requires` names a second Python ("{extra.value}", after "{named[0].value}")',
                     extra.span, hint="an environment is made with one interpreter: keep one `python \"X.Y\"`")
    if not named:
        return None
    text = named[0].value.strip()
    if not PYTHON_VERSION.match(text):
        report.error("E916", f'`python "{named[0].value}"` is not a Python version', named[0].span,
                     hint='name it as X.Y (any patch release, e.g. python "3.12") or X.Y.Z (that one)')
        return None
    return text


def _dialect(s: dict, report: Reporter, where: str) -> str | None:
    """The agent's dialect, checked against those the gateway serves (E914)."""
    value = s["dialect"]
    if value is None:
        return DEFAULT_DIALECT
    known = spec_json("dialects.json")["dialects"]
    if not isinstance(value, (A.Name, A.Str)):
        report.error("E401", f"`dialect` takes a name, not {describe(value)}", value.span,
                     hint=f"one of {', '.join(sorted(known))}")
        return None
    name = value.value
    if name not in known:
        report.error("E914", f"{where} speaks `{name}`, which is no dialect the gateway knows", value.span,
                     did_you_mean(name, known, "dialects"))
        return None
    if not known[name]["served"]:
        served = sorted(d for d, spec in known.items() if spec["served"])
        report.error("E914", f"{where} speaks `{name}` ({known[name]['title']}), which the gateway does not serve yet",
                     value.span, hint=f"the gateway serves {', '.join(served)} (spec/dialects.json)")
        return None
    return name


def _names_base_url(dialect: str, s: dict, text: str, command: A.Value | None, report: Reporter,
                    where: str) -> None:
    """E915 when neither the command nor the environment names the dialect's base URL."""
    spec = spec_json("dialects.json")["dialects"][dialect]
    wanted = {"base_url", spec["base_url"]}
    used: set[str] = set()
    for template in [text] + [v.value for v in s["env"].values()]:
        used |= template_variables(template) or set()
    if used & wanted:
        return
    others = sorted(used & {"api_base", "api_root"})
    wrong = (f"; it names `{{{{ {others[0]} }}}}`, which is not the form {spec['title']} clients take"
             if others else "")
    at = command.span if command is not None else s["dialect"].span if s["dialect"] is not None else None
    report.error("E915", f"{where} speaks `{dialect}` but neither its command nor its environment names the gateway's "
                 f"base URL for it{wrong}", at,
                 hint=f"pass `{{{{ base_url }}}}` (or `{{{{ {spec['base_url']} }}}}`) to the agent's base-URL setting, "
                      "else it calls its provider, which the sandbox cannot reach")


def _limits(entry: A.Limits, report: Reporter) -> dict:
    out: dict = {}
    for item in entry.items:
        key = item.key.value
        if key in TASK_ONLY_LIMITS:
            report.error("E904", f"the gateway cannot enforce `{key}` for an external agent", item.key.span,
                         hint="an external agent's limits are its model calls and its time (steps, time, tokens, "
                              f"cost); `{key}` is the task's to set, and the sandbox applies it")
            continue
        kind = ENFORCEABLE.get(key)
        if kind is None:
            report.error("E403", f"unknown limit `{key}` in an external agent", item.key.span,
                         did_you_mean(key, ENFORCEABLE, "limits"))
            continue
        reader = {"int": lambda v, w: report.integer(v, w, minimum=1), "duration": report.duration,
                  "number": report.number}[kind]
        got = reader(item.value, f"limit `{key}`")
        if got is not None:
            out[key] = got
    return out


def _tier_pattern(tier: str) -> str:
    main = r"|(?<![\w.])model(?![\w])" if tier == "main" else ""
    return rf"models\s*(\.\s*{tier}\b|\[\s*['\"]{tier}['\"]\s*\]){main}"


def lower_external(decl: A.Agent, s: dict, report: Reporter) -> tuple[dict, dict, dict[str, str]] | None:
    """The agent IR (with its `external` block), an empty action table and the command template."""
    name = decl.name.value
    where = f"agent `{name}`"
    before = len(report.diagnostics)
    command = s["command"]
    text = ""
    if command is None:
        report.error("E308", f"{where} declares no `command`", decl.name.span,
                     hint='add e.g. `command "python {{ workspace }}/my_agent.py"`')
    elif not isinstance(command, A.Str):
        report.error("E401", f"`command` takes a string, not {describe(command)}", command.span)
    elif not command.value.strip():
        report.error("E901", f"the command of {where} is empty", command.span,
                     hint="write the shell command that starts the agent")
    else:
        text = command.value
        check_template(text, command, "command", report, where, kind="external")
    env_texts = {}
    for key, value in s["env"].items():
        check_template(value.value, value, "env", report, f"{where} (environment variable `{key}`)",
                       kind="external")
        env_texts[key] = value.value
    submits = None
    if s["submits"] is not None:
        submits = report.string(s["submits"], "`submits`")
        if submits is not None and (not submits.strip() or submits.startswith("/") or ".." in submits.split("/")):
            report.error("E405", f"`submits` names {submits!r}, not a file inside the workspace",
                         s["submits"].span, hint='name a workspace-relative file, e.g. "submission.csv"')
    dialect = _dialect(s, report, where)
    # An agent that declares its dialect names the gateway's base URL itself; one that does not speaks
    # chat, which the runner's OPENAI_BASE_URL and OPENAI_API_BASE point at the gateway anyway.
    if dialect is not None and s["dialect"] is not None and text:
        _names_base_url(dialect, s, text, command, report, where)
    used_texts = [(text, command)] + [(v.value, v) for v in s["env"].values()]
    for tier, model in sorted(s["models"].items()):
        if not any(re.search(_tier_pattern(tier), t) for t, _ in used_texts):
            spelled = "`{{ model }}` or `{{ models.main }}`" if tier == "main" else f"`{{{{ models.{tier} }}}}`"
            report.error("E903", f"{where} declares a `{tier}` model, but neither its command nor its environment "
                         f"uses it", model["_span"], hint=f"pass {spelled} to the agent, or remove the `model "
                                                          f"{tier}` entry")
    if len(report.diagnostics) != before:
        return None
    models = {tier: {k: v for k, v in s["models"][tier].items() if not k.startswith("_")}
              if tier in s["models"] else {"default": None, "params": {}} for tier in TIERS}
    external = {"requires": s["requires"] or [], "npm": s["npm"] or [], "no_deps": s["no_deps"] or [],
                **({"python": s["python"]} if s["python"] else {}),
                "dialect": dialect, "env": env_texts,
                "submits": submits, "limits": s["limits"],
                "problem_file": PROBLEM_FILE}
    ir = {"name": name, "extends": decl.parent.value if decl.parent else None, "action_set": "", "shown": [],
          "models": models, "history_steps": 0, "summarize_over_chars": 1, "format_retries": 0, "reply": None,
          "hooks": {"before_step": [], "after_step": []}, "search": None,
          "templates": {"command": "templates/command.j2"}, "external": external}
    table = {"agent": name, "action_set": "", "actions": []}
    return ir, table, {"command.j2": text if text.endswith("\n") else text + "\n"}

