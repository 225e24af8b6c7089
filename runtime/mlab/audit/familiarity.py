"""`mlab probe TASK --model M`: how familiar a model is with a task, from what it can continue.

Three kinds of question, each a plain completion ("continue this text"):
- the canary: the task's canary line cut inside its GUID (runtime/mlab/run/canary.py); only a model
  trained on a document holding the canary can give the rest of the GUID;
- prefixes: windows of the task's problem text and starter code, cut at a seeded place, whose
  true continuation the model should give only if it has seen the text;
- controls: each prefix's window with its words shuffled (the same seed), so that predicting a
  continuation from general fluency alone earns nothing a shuffled text would not.

Each answer is scored by how much of the expected continuation it gives, in order (the share of
the expected words in the longest in-order match, 0 to 1). The familiarity is the mean score of
the prefixes minus that of their controls, with a seeded bootstrap interval over the pairs;
the canary's score is reported on its own.
"""
from __future__ import annotations

import difflib
import random
import re
from dataclasses import dataclass

PREFIX_WORDS = 24
CONTINUATION_WORDS = 12
CANARY_KEEP = 8  # characters of the GUID given; the model is asked for the rest
BOOTSTRAP = 1000
INSTRUCTION = ("Continue the following text exactly as it goes on in its source. Reply with the next "
               "words only, no commentary.\n\n")


@dataclass(frozen=True)
class Item:
    kind: str  # "canary", "prefix" or "control"
    source: str  # where the text comes from
    prompt: str
    expected: str


def _words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def task_texts(task) -> list[tuple[str, str]]:
    """(name, text): the problem text and each starter code file of the task."""
    texts = [("problem", task.view.problem or "")]
    starter = task.view.starter
    if starter and (task.root / starter).is_dir():
        for path in sorted((task.root / starter).rglob("*.py")):
            if "__pycache__" not in path.parts:
                try:
                    texts.append((f"starter/{path.relative_to(task.root / starter).as_posix()}",
                                  path.read_text(encoding="utf-8")))
                except (OSError, UnicodeDecodeError):
                    continue
    return [(name, text) for name, text in texts if len(_words(text)) >= PREFIX_WORDS + CONTINUATION_WORDS]


def probe_items(task, prefixes: int = 8, seed: int = 0) -> list[Item]:
    """The canary question, then each prefix followed by its shuffled control, in asking order."""
    from mlab.run.canary import canary_guid, canary_line

    version = task.view.version
    line, guid = canary_line(task.name, version), canary_guid(task.name, version)
    cut = line.index(guid) + CANARY_KEEP
    items = [Item("canary", "canary", INSTRUCTION + line[:cut], guid[CANARY_KEEP:])]
    texts = task_texts(task)
    rng = random.Random(seed)
    window = PREFIX_WORDS + CONTINUATION_WORDS
    for number in range(prefixes if texts else 0):
        name, text = texts[number % len(texts)]
        words = _words(text)
        start = rng.randrange(0, len(words) - window + 1)
        chosen = words[start:start + window]
        shuffled = list(chosen)
        rng.shuffle(shuffled)
        for kind, sequence in (("prefix", chosen), ("control", shuffled)):
            items.append(Item(kind, name, INSTRUCTION + " ".join(sequence[:PREFIX_WORDS]),
                              " ".join(sequence[PREFIX_WORDS:])))
    return items


def overlap(answer: str, expected: str) -> float:
    """The share of the expected words that the answer gives in order (0 to 1)."""
    want, got = _words(expected), _words(answer)[: 2 * max(len(_words(expected)), 1)]
    if not want:
        return 0.0
    matcher = difflib.SequenceMatcher(a=want, b=got, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(want)


def familiarity(items: list[Item], answers: list[str], seed: int = 0) -> dict:
    """The probe's figures: the canary's score, the mean prefix and control scores, their
    difference (the familiarity) with a 95% bootstrap interval over the prefix/control pairs."""
    scored = [overlap(answer, item.expected) for item, answer in zip(items, answers)]
    canary = next((s for item, s in zip(items, scored) if item.kind == "canary"), None)
    prefix = [s for item, s in zip(items, scored) if item.kind == "prefix"]
    control = [s for item, s in zip(items, scored) if item.kind == "control"]
    differences = [p - c for p, c in zip(prefix, control)]
    out = {"canary": canary, "prefix_mean": _mean(prefix), "control_mean": _mean(control),
           "familiarity": _mean(differences), "interval": None, "pairs": len(differences)}
    if differences:
        rng = random.Random(seed)
        means = sorted(_mean([rng.choice(differences) for _ in differences]) for _ in range(BOOTSTRAP))
        out["interval"] = [means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP) - 1]]
    out["verdict"] = verdict(out)
    return out


def verdict(figures: dict) -> str:
    if figures["canary"] is not None and figures["canary"] >= 0.5:
        return "contaminated: the model continues the task's canary"
    low = (figures["interval"] or [None])[0]
    if low is not None and low > 0:
        return "familiar: the model continues the task's texts better than shuffled controls"
    if figures["pairs"] == 0:
        return "not measured: the task has no text long enough to probe"
    return "no sign of familiarity"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def run_probe(task, client, prefixes: int = 8, seed: int = 0) -> dict:
    """Ask the client's main tier every question; the figures with the questions and answers."""
    items = probe_items(task, prefixes, seed)
    answers = [client.complete("main", item.prompt, purpose="probe").response or "" for item in items]
    figures = familiarity(items, answers, seed)
    figures["items"] = [{"kind": i.kind, "source": i.source, "expected": i.expected, "answer": a,
                         "score": round(overlap(a, i.expected), 4)} for i, a in zip(items, answers)]
    return figures


def render(task_name: str, model: str, figures: dict) -> str:
    def number(value) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    interval = figures["interval"]
    span = f" (95% interval {interval[0]:+.3f} to {interval[1]:+.3f})" if interval else ""
    familiarity_text = "n/a" if figures["familiarity"] is None else f"{figures['familiarity']:+.3f}"
    return (f"probe of {model} on task {task_name}\n"
            f"canary continued: {number(figures['canary'])} (share of the GUID's rest given)\n"
            f"prefixes: {number(figures['prefix_mean'])}, shuffled controls: {number(figures['control_mean'])} "
            f"over {figures['pairs']} pair(s)\n"
            f"familiarity: {familiarity_text}{span}\nverdict: {figures['verdict']}")
