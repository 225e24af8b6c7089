"""Expand a compiled experiment into the runs of a sweep: task × agent × models × seed.

An experiment is named (its .mlab declaration is found in ./tasks or the bundled tasks and
compiled into the build cache), given as a .mlab file as `mlab run` takes a task (FILE.mlab, or
FILE.mlab:NAME when the file declares several), or as build/experiments/<name>.yaml inside a build. Tasks
`all` or a category are resolved against the tasks of the build; for a named experiment that
build holds every task found, so `tasks all` means every task there is.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from mlab.build import MANIFEST, Build, compile_into_cache, load_build, task_search_dirs
from mlab.documents.agent import Agent
from mlab.documents.experiment import Override, TaskSelection
from mlab.documents.view import thaw
from mlab.documents.experiment import Experiment as ExperimentView
from mlab.errors import BuildError, UsageError, closest_hint

TIERS = ("main", "fast", "edit")
# Limits `mlab run` takes on its command line (every limit an experiment can set).
CLI_LIMITS = {"steps": "--steps", "time": "--time", "tokens": "--tokens", "cost": "--cost", "calls": "--calls",
              "script_timeout": "--script-timeout", "memory": "--memory", "disk": "--disk"}
# Model calls per step beyond the main call (observation summaries, Understand File, AI edits):
# the demonstrations of the bundled tasks make about one helper call every four steps.
HELPER_CALL_FACTOR = 0.25


def calls_per_step(agent: Agent) -> float:
    """Model calls one step may make: a linear agent's main call and its share of helper calls; a
    tree-search node's operator call, and the fast model's review where the score comes from one
    (format retries are not counted, as for linear agents)."""
    search = agent.search
    if search:
        return 1.0 + (1.0 if search.score.from_ == "review" else 0.0)
    return 1.0 + HELPER_CALL_FACTOR


@dataclass(frozen=True)
class RunSpec:
    """One run the experiment asks for, and what it needs."""

    task: str
    agent: str
    data: str
    seed: int
    models: tuple[tuple[str, str], ...]  # (tier, model) for the tiers the experiment gives
    limits: tuple[tuple[str, float], ...] = ()  # limits the experiment sets, passed to `mlab run`
    steps_limit: int | None = None  # the run's resolved step limit, for the estimate
    time_limit: float | None = None
    hardware: dict = field(default_factory=dict, compare=False, hash=False)
    calls_per_step: float = field(default=1.0 + HELPER_CALL_FACTOR, compare=False, hash=False)

    @property
    def key(self) -> str:
        """The run's identity in the sweep's state: stable across re-runs of the sweep."""
        models = ",".join(f"{tier}={model}" for tier, model in self.models) or "default-models"
        return f"{self.task}/{self.agent}/{self.data}/{models}/seed={self.seed}"

    @property
    def gpus(self) -> int:
        return int(self.hardware.get("gpus") or 0)

    @property
    def gpus_required(self) -> bool:
        return bool(self.hardware.get("gpus_required")) and self.gpus > 0

    def models_text(self) -> str:
        return " ".join(f"{tier}={model}" for tier, model in self.models) or "(agent defaults)"

    def run_arguments(self, build_dir: Path, runs_dir: Path) -> list[str]:
        """The arguments of `mlab run` that start this run."""
        args = ["run", self.task, "--build", str(build_dir), "--agent", self.agent, "--data", self.data,
                "--seed", str(self.seed), "--runs-dir", str(runs_dir), "--plain"]
        flags = {"main": "--model", "fast": "--fast-model", "edit": "--edit-model"}
        for tier, model in self.models:
            args += [flags[tier], model]
        for name, value in self.limits:
            if name in CLI_LIMITS:
                args += [CLI_LIMITS[name], _number(value)]
        return args

    def estimated_calls(self, steps_done: int = 0) -> int | None:
        """Model calls the run may still make: remaining steps (a tree search's nodes) × the agent's
        calls per step (calls_per_step)."""
        if self.steps_limit is None:
            return None
        remaining = max(self.steps_limit - steps_done, 0)
        return int(round(remaining * self.calls_per_step))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class Experiment:
    """A loaded experiment: its compiled document's view and the build its tasks and agents come from."""

    name: str
    view: ExperimentView
    build: Build

    @property
    def retries(self) -> int:
        return self.view.retries


# -- finding and loading ----------------------------------------------------------------

_EXPERIMENT = re.compile(r"^\s*experiment\s+([A-Za-z0-9_.-]+)\s*\{", re.MULTILINE)
_TASK = re.compile(r"^\s*task\s+[A-Za-z0-9_.-]+\s*\{", re.MULTILINE)


def _mlab_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.mlab"))


def _declared(path: Path, pattern: re.Pattern) -> list[str]:
    try:
        return pattern.findall(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []


def find_experiment_source(name: str) -> Path:
    """The .mlab file that declares `experiment name` in ./tasks or the bundled tasks."""
    known: set[str] = set()
    for folder in task_search_dirs():
        for path in _mlab_files(folder):
            declared = _declared(path, _EXPERIMENT)
            if name in declared:
                return path
            known.update(declared)
    raise UsageError(f"no experiment named {name!r}{closest_hint(name, known)} in "
                     f"{', '.join(map(str, task_search_dirs()))}; "
                     f"known: {', '.join(sorted(known)) or 'none'} (or give build/experiments/<name>.yaml)")


def experiment_names() -> list[str]:
    """Every experiment declared in ./tasks or the bundled tasks (the standard library's too)."""
    names: set[str] = set()
    for folder in task_search_dirs():
        for path in _mlab_files(folder):
            names.update(_declared(path, _EXPERIMENT))
    return sorted(names)


def task_sources() -> list[Path]:
    """The .mlab files declaring tasks at the top of each search folder; ./tasks wins over the
    bundled tasks for a file of the same name, so a local copy of a task replaces the bundled one."""
    chosen: dict[str, Path] = {}
    for folder in task_search_dirs():
        for path in sorted(folder.glob("*.mlab")):
            if path.stem not in chosen and _declared(path, _TASK):
                chosen[path.stem] = path
    return list(chosen.values())


def _read_experiment(path: Path) -> ExperimentView:
    from ruamel.yaml import YAML, YAMLError

    from mlab.documents.versions import current_form

    try:
        doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise BuildError(f"cannot read {path}: {error}") from None
    except YAMLError as error:
        raise BuildError(f"{path} is not valid YAML ({error}); rebuild with `mlabc compile`") from None
    doc, found = current_form("experiment", doc) if isinstance(doc, dict) else (doc, ["not a mapping"])
    if found:
        raise BuildError(f"{path} does not match spec/experiment.schema.json (was it made by another "
                         "mlabc?):\n  " + "\n  ".join(found[:10]))
    return ExperimentView.of(doc)


def load_experiment(spec: str) -> Experiment:
    """An experiment by name (compiled into the build cache), as a .mlab file (FILE.mlab or
    FILE.mlab:NAME), or as a .yaml inside a build."""
    path = Path(spec)
    if spec.endswith((".yaml", ".yml")):
        if not path.is_file():
            raise UsageError(f"no such experiment file: {spec}")
        build_dir = path.resolve().parent.parent
        if path.resolve().parent.name != "experiments" or not (build_dir / MANIFEST).is_file():
            raise UsageError(f"{spec} is not an experiment inside a build; expected BUILD/experiments/"
                             f"<name>.yaml next to BUILD/{MANIFEST} (make one with `mlabc compile`)")
        build = load_build(build_dir)
        view = _read_experiment(path)
        return Experiment(view.name, view, build)
    file, _, chosen = spec.partition(".mlab:") if ".mlab:" in spec else (spec, "", "")
    if file.endswith(".mlab") or chosen:
        source = Path(file if file.endswith(".mlab") else file + ".mlab")
        return _experiment_of_file(source, chosen or None)
    if "/" in spec:
        raise UsageError(f"give an experiment by name (e.g. `mlab sweep smoke`), as a .mlab file (FILE.mlab, or "
                         f"FILE.mlab:NAME when it declares several) or as build/experiments/<name>.yaml, "
                         f"not {spec!r}")
    source = find_experiment_source(spec)
    return _compiled_experiment(spec, source)


def _experiment_of_file(source: Path, chosen: str | None) -> Experiment:
    """`mlab sweep path/to/file.mlab[:NAME]`, as `mlab run` takes a task's .mlab file: the file is
    compiled into the build cache and its experiment (the one named, or its only one) is run."""
    if not source.is_file():
        raise UsageError(f"no such .mlab file: {source}")
    build = compile_into_cache([source])
    declared = sorted(build.manifest.get("experiments") or {})
    if chosen is None and len(declared) != 1:
        raise UsageError(f"{source} declares {'no experiment' if not declared else 'the experiments ' + ', '.join(declared)}"
                         + ("" if not declared else f"; choose one with {source}:NAME"))
    name = chosen or declared[0]
    if name not in declared:
        raise UsageError(f"{source} declares no experiment {name!r}; it declares: {', '.join(declared) or 'none'}")
    return _compiled_experiment(name, source)


def _compiled_experiment(spec: str, source: Path) -> Experiment:
    build = compile_into_cache([source])
    view = _read_experiment(build.dir / "experiments" / f"{spec}.yaml")
    if view.tasks.names is None:
        # `all` or a category: the tasks to choose from are every task there is.
        build = compile_into_cache([source, *[p for p in task_sources() if p.resolve() != source.resolve()]])
        view = _read_experiment(build.dir / "experiments" / f"{spec}.yaml")
    return Experiment(spec, view, build)


# -- expansion ------------------------------------------------------------------------

def resolve_tasks(selector: TaskSelection, build: Build) -> list[str]:
    if selector.names is not None:
        missing = [n for n in selector.names if n not in build.task_names]
        if missing:
            raise BuildError(f"the experiment names task(s) {', '.join(missing)} that its build does not "
                             f"hold; it holds: {', '.join(build.task_names) or 'none'}")
        return list(selector.names)
    if selector.all:
        return build.task_names
    category = selector.category
    chosen = [n for n in build.task_names if build.task(n).view.category == category]
    if not chosen:
        categories = sorted({build.task(n).view.category for n in build.task_names})
        raise BuildError(f"no task of category {category!r} in the build; categories: "
                         f"{', '.join(categories) or 'none'}")
    return chosen


def _model_combinations(models: dict) -> list[tuple[tuple[str, str], ...]]:
    unknown = sorted(set(models) - set(TIERS))
    if unknown:
        raise BuildError(f"unknown model tier(s) {', '.join(unknown)}; tiers are {', '.join(TIERS)}")
    tiers = [t for t in TIERS if models.get(t)]
    lists = [[(tier, model) for model in dict.fromkeys(models[tier])] for tier in tiers]
    return [tuple(combo) for combo in itertools.product(*lists)]


def chosen_tasks(experiment: Experiment, given: str | None) -> list[str]:
    """The experiment's tasks that `--tasks` names (comma-separated; None: all of them), in the
    experiment's order; a name the experiment does not hold is refused."""
    tasks = resolve_tasks(experiment.view.tasks, experiment.build)
    if given is None:
        return tasks
    names = [n.strip() for n in given.split(",") if n.strip()]
    unknown = [n for n in names if n not in tasks]
    if not names or unknown:
        raise UsageError(f"--tasks names {', '.join(unknown) or 'nothing'}: the experiment's tasks "
                         f"are {', '.join(sorted(tasks))}")
    return [t for t in tasks if t in names]


def expand(experiment: Experiment, tasks: list[str] | None = None,
           skipped: list[str] | None = None) -> list[RunSpec]:
    """Every run of the experiment, per-task overrides applied, in a stable order.

    `tasks`: only these of the experiment's tasks are looked at (None: all). A task that has no
    data variant the experiment asks for is left out, with a line saying so appended to `skipped`.
    """
    from mlab.limits import resolve_limits

    view, build = experiment.view, experiment.build
    every = resolve_tasks(view.tasks, build)
    stray = sorted(set(view.overrides) - set(every))
    if stray:
        raise BuildError(f"experiment {experiment.name} overrides task(s) {', '.join(stray)} that it "
                         f"does not run; it runs: {', '.join(every)}")
    specs: list[RunSpec] = []
    for name in every if tasks is None else [t for t in every if t in tasks]:
        task = build.task(name)
        override = view.overrides.get(name) or Override()
        data = override.data or view.data
        if data not in task.variants:
            if skipped is not None:
                skipped.append(f"skipped task {name}: it has no data variant {data!r} "
                               f"(it declares: {', '.join(task.variants)})")
            continue
        variant = task.variant(data)
        agents = list(dict.fromkeys(view.agents if override.agents is None else override.agents))
        missing = [a for a in agents if a not in build.agent_names]
        if missing:
            raise BuildError(f"experiment {experiment.name} uses agent(s) {', '.join(missing)} that its build "
                             f"does not hold; it holds: {', '.join(build.agent_names)}")
        runs = view.runs if override.runs is None else override.runs
        shared = {**thaw(view.limits), **thaw(override.limits)}   # the limits each declares
        for agent in agents:
            # `override agent NAME { limits }` last: a tree search counts nodes where a linear agent counts steps
            own = thaw(view.agent_overrides[agent].limits) if agent in view.agent_overrides else {}
            limits = {k: v for k, v in {**shared, **own}.items() if v is not None}
            resolved = resolve_limits(task.view.limits, variant.limits, limits)
            per_step = calls_per_step(build.agent(agent).view)
            for models in _model_combinations({**view.models, **(override.models or {})}):
                for seed in range(runs):
                    specs.append(RunSpec(task=name, agent=agent, data=data, seed=seed, models=models,
                                         limits=tuple(sorted(limits.items())), steps_limit=resolved.steps,
                                         time_limit=resolved.time, hardware=thaw(task.view.hardware),
                                         calls_per_step=per_step))
    return specs


def limits_not_passed(specs: list[RunSpec]) -> list[str]:
    """Experiment limits `mlab run` cannot take on its command line (the task's own apply)."""
    return sorted({name for spec in specs for name, _ in spec.limits if name not in CLI_LIMITS})


# -- filters and cost ---------------------------------------------------------------------

def select(specs: list[RunSpec], tasks: str | None = None, agents: str | None = None) -> list[RunSpec]:
    """The runs of the named tasks and agents (comma-separated; None: all); unknown names are refused."""
    for given, field_name, option in ((tasks, "task", "--tasks"), (agents, "agent", "--agents")):
        if given is None:
            continue
        names = [n.strip() for n in given.split(",") if n.strip()]
        known = sorted({getattr(spec, field_name) for spec in specs})
        unknown = [n for n in names if n not in known]
        if not names or unknown:
            raise UsageError(f"{option} names {', '.join(unknown) or 'nothing'}: the experiment's {field_name}s "
                             f"are {', '.join(known)}")
        specs = [spec for spec in specs if getattr(spec, field_name) in names]
    return specs


# The token figures the cost estimate assumes per model call: a research-agent prompt carries the
# problem, the action table and a history of recent steps (about 4,000 tokens in the bundled
# demonstrations), and a reply is about 500 tokens. Every call is priced at the main model's rate.
PROMPT_TOKENS_PER_CALL = 4000
COMPLETION_TOKENS_PER_CALL = 500
COST_ASSUMPTION = (f"estimate: model calls × ({PROMPT_TOKENS_PER_CALL:,} prompt + {COMPLETION_TOKENS_PER_CALL:,} "
                   "completion tokens) at the main model's price in litellm's price map; helper calls priced "
                   "as main calls; models without a price (offline, unlisted) count as unknown")


def _price(model: str) -> tuple[float, float] | None:
    """(input, output) dollars per token from litellm's bundled price map; None when not listed."""
    from mlab.models.prices import price_of

    price = price_of(model)
    return None if price is None else (price.input, price.output)


def estimated_cost(model: str | None, calls: int | None) -> float | None:
    """Dollars `calls` model calls of `model` may cost (see COST_ASSUMPTION); None when unknown."""
    if model is None or calls is None or model.startswith("mlab/"):
        return 0.0 if model and model.startswith("mlab/") and calls is not None else None
    price = _price(model)
    if price is None:
        return None
    return calls * (PROMPT_TOKENS_PER_CALL * price[0] + COMPLETION_TOKENS_PER_CALL * price[1])
