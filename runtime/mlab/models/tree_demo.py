"""`mlab/demo` for tree-search agents: operator calls answered from the demonstration's variants.

A task's demo.json may list `variants` ({"description", "files"}), the solutions a tree search is
handed. Each variant's description starts with the operator it answers, then the plan its reply
states::

    {"description": "draft: Fit a ridge regression on log(SalePrice) ...", "files": {"train.py": "..."}}

- `draft:` a first solution (so is a variant whose description names no operator). Draft calls get
  the drafts in turn, skipping one whose plan the prompt's journal already shows (so a resumed
  run goes on with the drafts not yet made), then again from the first.
- `improve:` a change to a working solution. An improve (or crossover) call whose prompt shows the
  parent's code gets the improvements listed after that parent's variant, in turn, and once they
  are used up the parent's code unchanged (nothing more is prepared for it); one whose parent it
  does not recognise gets the improvements in turn, round and round.
- `debug:` the fix of the variant listed just before it. A debug call whose prompt shows that
  variant's code gets its fix; any other debug call gets the best working variant the demonstration
  has (the task's reference solution when it has one).

So whatever the policy asks, a call gets a reply until the demonstration has nothing new: once
every draft and improvement variant has been given, a call whose reply would repeat one (an
unchanged parent, a draft again) raises DemonstrationDone, and the tree search ends there as if
its policy were done, submitting its best node, instead of running unchanged code node after node.
A tree of five nodes or more has at least two drafts as soon as two draft calls were made. A reply is an operator reply: the plan in prose,
then one ```python block (the variant's code file). A review call gets the review JSON
(runtime/mlab/search/operators.py: {"is_bug", "metric", "summary"}) read off the script output in its
prompt: the last "Validation score: N" line, a bug when there is none or the output holds a
traceback; asked through a chat call that offers one tool (submit_review), the review comes as a
call of that tool.

Beyond what the prompts show, the choices depend on the calls made in this process: a resumed run
starts the improvements' turns again (its tree stays a valid tree, the earlier nodes are kept).
"""
from __future__ import annotations

import json
import re

from mlab.models.demonstration import Demonstration, Variant
from mlab.models.errors import DemonstrationDone, RepliesExhausted

OPERATORS = ("draft", "improve", "debug", "crossover")
PURPOSES = OPERATORS + ("review",)
_ROLE = re.compile(r"\s*(draft|improve|debug)\s*:\s*", re.IGNORECASE)
_SCORE = re.compile(r"Validation score:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_TRACEBACK = "Traceback (most recent call last)"
_RECOGNISED = 0.8  # share of a variant's lines a prompt must show for its code to count as shown
_PLAN_HEAD = 60  # a draft whose plan begins the prompt's journal of nodes already made is skipped
UNCHANGED_PLAN = ("The demonstration has no further change prepared for this solution, so it is run again "
                  "as it is.")
DEMO_NOTE = "(demonstration: a prepared variant of the task's solution, not a model's reply)"


class TreeDemo:
    """The variants of one demonstration and how far each operator's sequence has got."""

    def __init__(self, demonstration: Demonstration | None, name: str = "mlab/demo"):
        self.name = name
        self.variants = [] if demonstration is None else list(demonstration.variants)
        self.roles = [_role(v) for v in self.variants]
        self.reference = _reference(demonstration)
        self.drafts_made = 0
        self.improved: dict[int | None, int] = {}  # parent variant (None: unrecognised) -> improvements given
        self.given: set[int] = set()  # the variants replied so far

    def reply(self, purpose: str, prompt: str) -> str:
        if purpose == "review":
            return review(prompt)
        if not self.variants:
            raise RepliesExhausted(
                f"{self.name} cannot play a tree-search agent here: the task's demonstration has no "
                "variants (demo.json \"variants\": the solutions a tree search is handed, each described "
                "\"draft: ...\", \"improve: ...\" or \"debug: ...\"; see docs/tasks.md)")
        drafts = self._indices("draft")
        if not drafts:
            raise RepliesExhausted(f"{self.name} cannot play a tree-search agent here: none of the "
                                   "demonstration's variants is a draft (its description starts \"draft:\" "
                                   "or names no operator)")
        if purpose == "draft":
            turn = drafts[self.drafts_made % len(drafts):] + drafts[:self.drafts_made % len(drafts)]
            unseen = [i for i in turn if _plan(self.variants[i])[:_PLAN_HEAD] not in prompt]
            self.drafts_made += 1
            return self._answer((unseen or turn)[0])
        parent = self.shown(prompt)
        if purpose == "debug":
            return self._debug(parent)
        return self._improve(parent)

    def message(self, purpose: str, prompt: str, tools: list[dict] | None) -> dict:
        """A chat call's assistant message: the review as a call of the tool offered, else the text."""
        text = self.reply(purpose, prompt)
        names = [(tool.get("function") or {}).get("name") for tool in tools or []]
        if purpose == "review" and len(names) == 1 and names[0]:
            return {"content": None, "tool_calls": [{"name": names[0], "arguments": json.loads(text)}]}
        return {"content": text}

    def shown(self, prompt: str) -> int | None:
        """The variant whose code the prompt shows (the parent's), or None."""
        lines = {line.strip() for line in prompt.splitlines() if line.strip()}
        best, best_share = None, 0.0
        for index, variant in enumerate(self.variants):
            own = {line.strip() for line in _code(variant).splitlines() if line.strip()}
            share = len(own & lines) / len(own) if own else 0.0
            if share >= max(best_share, _RECOGNISED):  # a tie goes to the later variant (a fix follows its bug)
                best, best_share = index, share
        return best

    def _improve(self, parent: int | None) -> str:
        improvements = self._indices("improve") or self._indices("draft")
        given = self.improved.get(parent, 0)
        self.improved[parent] = given + 1
        if parent is None:
            return self._answer(improvements[given % len(improvements)])
        later = [i for i in improvements if i > parent]
        if given < len(later):
            return self._answer(later[given])
        self._repeat()
        return _reply(UNCHANGED_PLAN, _code(self.variants[parent]))

    def _debug(self, parent: int | None) -> str:
        if parent is not None and parent + 1 < len(self.variants) and self.roles[parent + 1] == "debug":
            return self._answer(parent + 1)
        if self.reference is not None:
            plan = ("The previous run did not give a valid result. Rather than patch it, go back to the "
                    "demonstration's reference solution, which runs and writes the submission.")
            return _reply(plan, self.reference)
        working = [i for i, role in enumerate(self.roles) if role != "debug"
                   and not (i + 1 < len(self.roles) and self.roles[i + 1] == "debug")]
        return self._answer((working or self._indices("draft"))[-1])

    def _indices(self, role: str) -> list[int]:
        return [i for i, own in enumerate(self.roles) if own == role]

    def _answer(self, index: int) -> str:
        """Variant `index` as a reply; once every variant has been given, a repeat ends the search."""
        if index in self.given:
            self._repeat()
        self.given.add(index)
        variant = self.variants[index]
        return _reply(_plan(variant), _code(variant))

    def _repeat(self) -> None:
        """The next reply repeats what was given: when every variant a draft or improvement can be
        has been given, the demonstration has no change left to offer, and the search ends."""
        offered = {i for i, role in enumerate(self.roles) if role != "debug"}
        if offered <= self.given:
            raise DemonstrationDone(
                f"{self.name} has played every variant of the demonstration ({len(self.given)} given); "
                "its next reply could only repeat one, so the search ends here")


def review(prompt: str) -> str:
    """The review JSON for the script output shown in the prompt."""
    found = _SCORE.findall(prompt)
    score = float(found[-1]) if found else None
    crashed = _TRACEBACK in prompt
    if crashed:
        last = [line for line in prompt.splitlines() if line.strip()]
        error = next((line.strip() for line in reversed(last) if re.match(r"\s*\w+(Error|Exception)\b", line)), "")
        summary = f"(demo review) the script failed{': ' + error if error else ''}."
    elif score is None:
        summary = "(demo review) the output shows no \"Validation score:\" line."
    else:
        summary = f"(demo review) the script ran and printed a validation score of {score:g}."
    return json.dumps({"is_bug": crashed or score is None, "metric": None if crashed else score,
                       "summary": summary})


def _role(variant: Variant) -> str:
    found = _ROLE.match(variant.description)
    return found.group(1).lower() if found else "draft"  # a variant that names no operator is a whole solution


def _plan(variant: Variant) -> str:
    return _ROLE.sub("", variant.description, count=1).strip()


def _code(variant: Variant) -> str:
    return next(iter(variant.files.values()), "")


def _reference(demonstration: Demonstration | None) -> str | None:
    if demonstration is None or not demonstration.solution:
        return None
    return demonstration.written(demonstration.solution)


def _reply(plan: str, code: str) -> str:
    return f"{plan}\n\n{DEMO_NOTE}\n\n```python\n{code.rstrip()}\n```\n"
