"""Offline models, registered as the litellm custom provider `mlab`.

- `mlab/scripted:PATH`  replies read from a JSON list of strings, one per call, in order
- `mlab/replay:RUN_DIR` the replies recorded in a run's trace, per tier, in order
- `mlab/human`          shows the prompt and reads the reply from the terminal
- `mlab/demo`           plays the task's demonstration (a keyless demonstration, not an
                        agent result), each step rendered in the running agent's reply
                        format; without a demonstration it lists files, runs the starter
                        and submits

The litellm provider is registered once per process (litellm's provider map is global); what
a run plays lives in an OfflineModels object its ModelClient owns and hands to the provider with
each call: the demonstration and the running agent's reply format, and per model name and tier
how many replies were used, so that a resumed run continues at the next reply
(`OfflineModels.set_position`).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from mlab.models.demonstration import Demonstration, DemoStep
from mlab.models.errors import RepliesExhausted


class OfflineModel:
    """Base: a sequence of replies per tier with a position each."""

    def __init__(self, name: str):
        self.name = name
        self.position: dict[str, int] = {}

    def queue(self, tier: str) -> list[str]:
        raise NotImplementedError

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        queue = self.queue(tier)
        index = self.position.get(tier, 0)
        if index >= len(queue):
            whose = "" if tier == "all" else f" for the {tier} model"
            raise RepliesExhausted(f"{self.name} has no reply left{whose} "
                                   f"(it had {len(queue)}; reply {index + 1} was asked for)")
        self.position[tier] = index + 1
        return queue[index]


class Scripted(OfflineModel):
    """All tiers share one list: the file holds every reply the run will ask for, in order."""

    def __init__(self, name: str, path: str):
        super().__init__(name)
        try:
            replies = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise RepliesExhausted(f"cannot read scripted replies from {path}: {error.strerror or error}") from None
        except ValueError as error:
            raise RepliesExhausted(f"{path} is not valid JSON: {error}") from None
        if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
            raise RepliesExhausted(f"{path} must hold a JSON list of strings")
        self.replies = replies

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        return super().reply("all", purpose, prompt)

    def queue(self, tier: str) -> list[str]:
        return self.replies


class Replay(OfflineModel):
    """Replies recorded in RUN_DIR/trace.jsonl, per tier, in the order they were made."""

    def __init__(self, name: str, run_dir: str):
        super().__init__(name)
        from mlab.errors import RunError
        from mlab.trace import TRACE, full_text, read_trace

        trace = Path(run_dir) / TRACE
        if not trace.is_file():
            raise RepliesExhausted(f"cannot replay {run_dir}: it has no {TRACE}")
        try:
            records = read_trace(trace).records  # lines end at b"\n" only: replies may hold other line breaks
        except RunError as error:
            raise RepliesExhausted(f"cannot replay {run_dir}: {error}") from None
        self.by_tier: dict[str, list[str]] = {}
        objects = Path(run_dir) / "objects"
        for record in records:
            for index, call in enumerate((record.get("model") or {}).get("calls", [])):
                try:  # a long reply is kept in objects/ and the record holds a preview (trace version 2)
                    response = full_text(record, ["model", "calls", index, "response"], objects)
                except RunError as error:
                    raise RepliesExhausted(f"cannot replay {run_dir}: {error}") from None
                self.by_tier.setdefault(call.get("tier", "main"), []).append(response or "")

    def queue(self, tier: str) -> list[str]:
        return self.by_tier.get(tier, [])


class Human(OfflineModel):
    """Interactive: the prompt goes to stdout, the reply is read until a line with a single '.'."""

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        print(f"\n===== prompt for the {tier} model ({purpose}) =====\n{prompt}\n"
              "===== type the reply; end with a line holding only '.' =====", flush=True)
        lines = []
        for line in sys.stdin:
            if line.rstrip("\n") == ".":
                break
            lines.append(line)
        else:
            if not lines:
                raise RepliesExhausted("no reply on standard input (end of input)")
        return "".join(lines)


class Demo(OfflineModel):
    """Plays the task's demonstration for the main tier, each step rendered in the running agent's
    reply format (a version-1 demonstration: its replies as written); other tiers get a labelled
    stand-in."""

    def __init__(self, name: str, demonstration: Demonstration | None, starter_script: str,
                 reply_format: dict | None = None):
        super().__init__(name)
        demonstration = demonstration if demonstration is not None else fallback_demo(starter_script)
        if demonstration.replies is not None:
            self.replies = list(demonstration.replies)
        else:
            reply_format = reply_format or RESEARCH_REPLY
            self.replies = [render_step(step, reply_format) for step in demonstration.steps]

    def queue(self, tier: str) -> list[str]:
        return self.replies

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        if tier != "main":
            self.position[tier] = self.position.get(tier, 0) + 1
            return demo_helper_reply(purpose, prompt)
        return super().reply(tier, purpose, prompt)


# The research agent's reply format: what a demonstration is rendered in when no agent's is known.
RESEARCH_REPLY = {"format": "sections", "sections": [
    {"name": "Reflection", "kind": "text", "role": "reflection"},
    {"name": "Research Plan and Status", "kind": "text", "role": "plan"},
    {"name": "Fact Check", "kind": "text", "role": "fact-check"},
    {"name": "Thought", "kind": "text", "role": "thought"},
    {"name": "Action", "kind": "action", "role": None},
    {"name": "Action Input", "kind": "json", "role": None}]}
NEUTRAL_TEXT = "(demonstration) —"  # a declared section the step has no text for


def render_step(step: DemoStep, reply_format: dict) -> str:
    """The reply that the agent's declared format expects for one demonstration step: labelled
    `Name:` sections in declared order, or for `respond json` one object with the dotted fields."""
    def value(section: dict):
        if section["kind"] == "action":
            return step.action
        if section["kind"] == "json":
            return step.input
        text = step.sections.get(section.get("role") or "", "").strip()
        return text or NEUTRAL_TEXT

    if reply_format.get("format") == "json":
        document: dict = {}
        for section in reply_format["sections"]:
            *parents, leaf = section["name"].split(".")
            node = document
            for key in parents:
                node = node.setdefault(key, {})
            node[leaf] = value(section)
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    lines = []
    for section in reply_format["sections"]:
        shown = value(section)
        lines.append(f"{section['name']}: {json.dumps(shown, ensure_ascii=False) if section['kind'] == 'json' else shown}")
    return "\n".join(lines) + "\n"


def fallback_demo(script: str) -> Demonstration:
    """For a task without a demonstration: list files, run the starter, submit."""
    def step(thought: str, action: str, payload: dict) -> DemoStep:
        return DemoStep(action, payload, {
            "reflection": f"(demo model) {thought}",
            "plan": "(demo model) list files, run the starter, submit its output.",
            "fact-check": "nothing is claimed.", "thought": thought,
            "criticism": "(demo model) this only replays the starter; it does not try to improve it.",
            "speak": f"(demo model) {thought}"})
    return Demonstration((step("see what the workspace holds", "List Files", {"dir_path": "."}),
                          step("run the starter script as given", "Execute Script", {"script_name": script}),
                          step("submit what the starter produced", "Final Answer",
                               {"final_answer": "The demo model ran the starter script unchanged."})))


def demo_helper_reply(purpose: str, prompt: str) -> str:
    """A deterministic stand-in for helper-model calls made during a demonstration."""
    if purpose.startswith("edit"):
        return "```python\n# (demo model) no edit is made in a demonstration\n```"
    excerpt = prompt[-400:].strip().replace("\n", " ")
    return f"(demo model: no real model was called) The last part of the request read: {excerpt}"


class OfflineModels:
    """The offline models of one run, each made on first use, with how far each has played."""

    def __init__(self, demo: Demonstration | list[str] | None = None, starter_script: str = "train.py",
                 reply_format: dict | None = None):
        if isinstance(demo, list):  # a version-1 demonstration: replies as written
            demo = Demonstration(replies=tuple(demo))
        self.demo = demo  # the task's demonstration; None: list files, run the starter, submit
        self.starter_script = starter_script
        self.reply_format = reply_format  # the running agent's (AgentView.reply); None: the research agent's
        self._models: dict[str, OfflineModel] = {}

    def model(self, model: str) -> OfflineModel:
        """The offline model for `mlab/...` (a RepliesExhausted error if it cannot play)."""
        name = model[len("mlab/"):] if model.startswith("mlab/") else model
        model = f"mlab/{name}"
        if name not in self._models:
            kind, _, argument = name.partition(":")
            if kind == "scripted" and argument:
                self._models[name] = Scripted(model, argument)
            elif kind == "replay" and argument:
                self._models[name] = Replay(model, argument)
            elif kind == "human":
                self._models[name] = Human(model)
            elif kind == "demo":
                self._models[name] = Demo(model, self.demo, self.starter_script, self.reply_format)
            else:
                raise RepliesExhausted(f"unknown offline model {model!r}: use mlab/scripted:PATH, "
                                       "mlab/replay:RUN_DIR, mlab/human or mlab/demo")
        return self._models[name]

    def set_position(self, model: str, tier: str, used: int) -> None:
        """Resume: the first `used` replies of this tier were consumed by the earlier part of the run."""
        state = self.model(model)
        key = "all" if isinstance(state, Scripted) else tier
        state.position[key] = state.position.get(key, 0) + used if key == "all" else used


OFFLINE_METADATA = "mlab_offline"  # the litellm metadata key that carries a call's OfflineModels


def register(litellm) -> None:
    """Register the `mlab` provider with litellm (once per process)."""
    if any(entry.get("provider") == "mlab" for entry in (litellm.custom_provider_map or [])):
        return
    from litellm import CustomLLM

    class MlabProvider(CustomLLM):
        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                       encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                       **kwargs):
            metadata = (litellm_params or {}).get("metadata") or {}
            prompt = messages[-1]["content"]
            if isinstance(prompt, list):
                prompt = "".join(part.get("text", "") for part in prompt)
            models = metadata.get(OFFLINE_METADATA)
            if models is None:
                raise RepliesExhausted(f"mlab/{model} is called without the run's offline models "
                                       "(call it through a ModelClient)")
            text = models.model(model).reply(metadata.get("mlab_tier", "main"),
                                             metadata.get("mlab_purpose", "step"), prompt)
            model_response.choices[0].message.content = text
            model_response.model = f"mlab/{model}"
            return model_response

    litellm.custom_provider_map = list(litellm.custom_provider_map or []) + [
        {"provider": "mlab", "custom_handler": MlabProvider()}]
    litellm.custom_provider_map = litellm.custom_provider_map
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
