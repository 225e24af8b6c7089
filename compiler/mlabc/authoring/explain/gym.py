"""Long explanations of the checks of a task's `gym { ... }` block (E906–E909): mlab.gym's reward shaping."""
from __future__ import annotations

from .example import Explanation, example_task

_SPLIT = ("    split   random 0.2 seed 1", "    split   random 0.2 seed 1\n    validation 0.25")

EXPLANATIONS: dict[str, Explanation] = {
    "E906": Explanation(
        "A `gym` block says how mlab.gym shapes the reward of an episode beside its final reward, the "
        "improvement over the baseline. The one shaping is `validation`: each step whose Validate "
        "Submission reports a better validation score than before earns a share of that improvement.",
        example_task(_SPLIT, extra="  gym { shaping validation_score }\n"),
        example_task(_SPLIT, extra="  gym { shaping validation }\n")),
    "E907": Explanation(
        "The weight scales the shaping beside the final reward, where 1.0 is an improvement of 100% over "
        "the baseline. A weight above 1 lets the shaping outweigh the result the task scores, and 0 or "
        "less turns it off or against the agent: it is a number above 0 and at most 1.",
        example_task(_SPLIT, extra="  gym { shaping validation  weight 5 }\n"),
        example_task(_SPLIT, extra="  gym { shaping validation  weight 0.1 }\n")),
    "E908": Explanation(
        "Validation shaping reads the score Validate Submission gives the agent's validation_submission.csv "
        "on training rows the harness held out. A data variant without a `validation` split has no such "
        "rows, so an episode on it would never be shaped: every variant of the task declares one.",
        example_task(extra="  gym { shaping validation }\n"),
        example_task(_SPLIT, extra="  gym { shaping validation }\n")),
    "E909": Explanation(
        "A `gym` block holds `shaping` and, beside it, `weight`. Any other entry, or a weight with no "
        "shaping to scale, is a mistake the environment would otherwise ignore.",
        example_task(_SPLIT, extra="  gym { weight 0.1 }\n"),
        example_task(_SPLIT, extra="  gym { shaping validation  weight 0.1 }\n")),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding)
                for code, e in EXPLANATIONS.items()}
