"""`MlabEnv`: one task and one agent's action table as a Gymnasium environment; an episode is a run.

    env = MlabEnv("house-price", runs_dir="runs")
    observation, info = env.reset(seed=0)            # the problem and the workspace, as text
    observation, reward, terminated, truncated, info = env.step(
        {"action": "Execute Script", "input": {"script_name": "train.py"}})

An action is {"action": NAME, "input": OBJECT or JSON text} (or a (NAME, INPUT) pair). Its input
is checked against the action's compiled input schema by the action table: a bad action is an
observation saying why (and a step of the run), never an exception. `terminated` is set on Final
Answer and on a time, token or cost limit, `truncated` on the step limit. The reward is 0 until
the episode ends, then the scored improvement over the baseline (0 when nothing could be scored).
A reward per step is added by the task's declared shaping (`gym { shaping validation weight W }`
in its .mlab file: W times each improvement of the validation score that Validate Submission
reports, made afresh for each episode) or, when one is passed, by a `shaping(record) -> float`
callable, which wins over the declaration. Each episode is an ordinary run folder
(trace, snapshots, result.json), so `mlab report` and `mlab view` read it.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from mlab.errors import MlabError
from mlab.installation import install_hint

MAX_TEXT = 4_000_000  # the observation space's bound on a text


def _gymnasium():
    try:
        import gymnasium
    except ImportError:
        raise MlabError(f"mlab.gym needs gymnasium: {install_hint('gym')} (or pip install gymnasium)") from None
    return gymnasium


def _text_space(gymnasium, max_length: int):
    """A Text space that holds any string up to max_length (Gymnasium's Text checks a charset)."""

    class AnyText(gymnasium.spaces.Text):
        def contains(self, x: Any) -> bool:
            return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    return AnyText(max_length=max_length, min_length=0)


def validation_shaping(direction: str = "lower_is_better", weight: float = 1.0) -> Callable[[dict], float]:
    """A shaping that rewards each improvement of the best validation score, as a fraction of the
    first one (so it is in the reward's units), times `weight`; an episode's shaped rewards add up
    to at most `weight`. The score is the harness's own: the record's `validation_score`, which the
    environment sets from what Validate Submission measured (never from a text the policy can
    print), None on every other step."""
    state: dict = {}

    def shape(record: dict) -> float:
        value = record.get("validation_score")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return 0.0
        first, best = state.setdefault("first", value), state.get("best", value)
        better = (best - value) if direction == "lower_is_better" else (value - best)
        state["best"] = value if better > 0 else best
        earned = weight * max(better, 0.0) / abs(first) if first else 0.0
        paid = state.get("paid", 0.0)
        earned = min(earned, max(weight - paid, 0.0)) if math.isfinite(earned) else max(weight - paid, 0.0)
        state["paid"] = paid + earned
        return earned

    return shape


def declared_shaping(task) -> Callable[[dict], float] | None:
    """The shaping the task declares (`gym { ... }`, the IR's optional `gym`), new state each call."""
    gym = task.view.gym
    if gym is None:
        return None
    return validation_shaping(task.view.metric.direction, float(gym.weight))


gymnasium = _gymnasium()


class MlabEnv(gymnasium.Env):
    """A task and an agent's action table as an environment; each episode a run folder."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, task: str = "house-price", agent: str | None = None, *, data: str = "lite",
                 runs_dir: str | Path = "runs", limits: dict | None = None, build: str | Path | None = None,
                 shaping: Callable[[dict], float] | None = None, render_mode: str | None = None):
        from mlab.build import load_build, resolve_task

        self.task = resolve_task(task, Path(build) if build else None)
        source = load_build(Path(build)) if build else self.task.build
        self.agent = source.agent(agent or self.task.view.agent)
        if self.agent.view.kind != "loop":
            raise MlabError(f"agent {self.agent.name} has no action table to step: pick a linear agent")
        self.data, self.runs_dir, self.limits = data, Path(runs_dir), dict(limits or {})
        self.given_shaping = shaping  # a passed callable wins over the task's declared shaping
        self.shaping = shaping or declared_shaping(self.task)
        self.render_mode = render_mode
        names = [a.name for a in self.agent.actions.actions]
        self.action_names = names
        self.observation_space = _text_space(gymnasium, MAX_TEXT)
        self.action_space = gymnasium.spaces.Dict({"action": _text_space(gymnasium, 200),
                                                   "input": _text_space(gymnasium, MAX_TEXT)})
        self.run = None
        self._ended_dir: Path | None = None
        self.result: dict | None = None
        self._last = ""

    # -- the Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        from mlab.run.folder import Run
        from mlab.scoring.validation import install

        super().reset(seed=seed)
        self.close()
        self.result = None
        if self.given_shaping is None:  # the declared shaping starts each episode afresh
            self.shaping = declared_shaping(self.task)
        self.run = Run.create(self.task, self.agent, self.runs_dir, data=self.data, seed=seed or 0,
                              limits=self.limits)
        install(self.run)
        files = sorted(p.relative_to(self.run.workspace.root).as_posix()
                       for p in self.run.workspace.root.rglob("*") if p.is_file())
        view = self.task.view
        self._last = (f"Research problem ({view.title or view.name}):\n{view.problem.strip()}\n\n"
                      f"Your workspace holds: {', '.join(files)}\n"
                      f"Actions: {', '.join(self.action_names)}")
        return self._last, self._info()

    def step(self, action):
        if self.run is None or self.run.ended:
            raise MlabError("the episode has ended: call reset() first")
        name, given = _split(action)
        observation = self.run.step(name, given)
        self._last = observation.text
        record = self.run.records[-1]
        # the validation score the harness measured (Validate Submission's own), for the shaping
        validated = (record.get("resolved") or {}).get("primitive") == "validate_submission"
        record = {**record, "validation_score": observation.details.get("validation_score") if validated else None}
        reward = self.shaping(record) if self.shaping else 0.0
        terminated = truncated = False
        if self.run.ended:
            reason = self.run.end_reason or ""
            truncated = reason == "steps_limit"
            terminated = not truncated
            self.result = self._score()
            improvement = self.result.get("improvement")
            reward += float(improvement) if improvement is not None else 0.0
        return self._last, float(reward), terminated, truncated, self._info()

    def render(self):
        return self._last if self.render_mode == "ansi" else None

    def close(self):
        if self.run is not None:
            self._ended_dir = self.run.dir
            self.run.close()
            self.run = None

    # -- helpers ---------------------------------------------------------------------------
    @property
    def run_dir(self) -> Path | None:
        """The run folder of the current episode (None before the first reset)."""
        return self.run.dir if self.run is not None else self._ended_dir

    def _info(self) -> dict:
        # no run folder here: an info must be the same for the same seed and actions (the env checker)
        info = {"step": self.run.steps_taken, "actions": list(self.action_names)}
        if self.result is not None:
            info["result"] = self.result
        return info

    def _score(self) -> dict:
        from mlab.agent.outcome import LoopOutcome
        from mlab.failure import FailureMode
        from mlab.scoring.result import write_result

        reason = self.run.end_reason or "ended"
        limited = reason.endswith("_limit")
        outcome = LoopOutcome(reason, FailureMode.LIMIT_REACHED if limited else None,
                              reason.replace("_", " ") if limited else None)
        return write_result(self.run, outcome, {}, {"api_base": None}, False, driven=True)


def _split(action) -> tuple[object, object]:
    """(name, input) of an action given as a mapping, a pair or a bare name."""
    if isinstance(action, dict):
        return action.get("action"), action.get("input")   # JSON text is decoded by the table, within bounds
    if isinstance(action, (tuple, list)) and len(action) == 2:
        return action[0], action[1]
    return action, None
