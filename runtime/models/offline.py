"""Offline models, registered as the litellm custom provider `mlab`.

- `mlab/scripted:PATH`  replies read from a JSON list of strings, one per call, in order
- `mlab/replay:RUN_DIR` the replies recorded in a run's trace, per tier, in order
- `mlab/human`          shows the prompt and reads the reply from the terminal
- `mlab/demo`           plays the task's demonstration replies (a keyless demonstration,
                        not an agent result); without a demonstration it lists files,
                        runs the starter and submits

State (how many replies were used) lives here, per model name and tier, so that a
resumed run continues at the next reply (`set_position`).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from mlab.models.errors import RepliesExhausted

_STATE: dict[str, "OfflineModel"] = {}
_DEMO: dict[str, object] = {"replies": None, "script": "train.py"}


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
    """Plays the task's demonstration for the main tier; other tiers get a labelled stand-in."""

    def queue(self, tier: str) -> list[str]:
        replies = _DEMO["replies"]
        if replies is None:
            replies = fallback_demo(str(_DEMO["script"]))
        return list(replies)

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        if tier != "main":
            self.position[tier] = self.position.get(tier, 0) + 1
            return demo_helper_reply(purpose, prompt)
        return super().reply(tier, purpose, prompt)


def fallback_demo(script: str) -> list[str]:
    """For a task without a demonstration: list files, run the starter, submit."""
    def reply(thought: str, action: str, payload: dict) -> str:
        return (f"Reflection: (demo model) {thought}\nResearch Plan and Status: (demo model) list files, run the "
                f"starter, submit its output.\nFact Check: nothing is claimed.\nThought: {thought}\n"
                f"Action: {action}\nAction Input: {json.dumps(payload)}\n")
    return [reply("see what the workspace holds", "List Files", {"dir_path": "."}),
            reply("run the starter script as given", "Execute Script", {"script_name": script}),
            reply("submit what the starter produced", "Final Answer",
                  {"final_answer": "The demo model ran the starter script unchanged."})]


def demo_helper_reply(purpose: str, prompt: str) -> str:
    """A deterministic stand-in for helper-model calls made during a demonstration."""
    if purpose.startswith("edit"):
        return "```python\n# (demo model) no edit is made in a demonstration\n```"
    excerpt = prompt[-400:].strip().replace("\n", " ")
    return f"(demo model: no real model was called) The last part of the request read: {excerpt}"


def configure_demo(replies: list[str] | None, starter_script: str = "train.py") -> None:
    _DEMO["replies"] = replies
    _DEMO["script"] = starter_script
    _STATE.pop("demo", None)


def model_state(model: str) -> OfflineModel:
    """The offline model for `mlab/...`, created on first use."""
    name = model[len("mlab/"):] if model.startswith("mlab/") else model
    model = f"mlab/{name}"
    if name not in _STATE:
        kind, _, argument = name.partition(":")
        if kind == "scripted" and argument:
            _STATE[name] = Scripted(model, argument)
        elif kind == "replay" and argument:
            _STATE[name] = Replay(model, argument)
        elif kind == "human":
            _STATE[name] = Human(model)
        elif kind == "demo":
            _STATE[name] = Demo(model)
        else:
            raise RepliesExhausted(f"unknown offline model {model!r}: use mlab/scripted:PATH, mlab/replay:RUN_DIR, "
                                   "mlab/human or mlab/demo")
    return _STATE[name]


def set_position(model: str, tier: str, used: int) -> None:
    """Resume: the first `used` replies of this tier were consumed by the earlier part of the run."""
    state = model_state(model)
    key = "all" if isinstance(state, Scripted) else tier
    state.position[key] = state.position.get(key, 0) + used if key == "all" else used


def reset() -> None:
    _STATE.clear()


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
            text = model_state(model).reply(metadata.get("mlab_tier", "main"),
                                            metadata.get("mlab_purpose", "step"), prompt)
            model_response.choices[0].message.content = text
            model_response.model = f"mlab/{model}"
            return model_response

    litellm.custom_provider_map = list(litellm.custom_provider_map or []) + [
        {"provider": "mlab", "custom_handler": MlabProvider()}]
    litellm.custom_provider_map = litellm.custom_provider_map
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
