"""Long explanations of the checks of a task's reference points: `reference` and `thresholds`."""
from __future__ import annotations

from .example import Explanation, example_task

_BASE = ('  baseline run "train.py"', '  baseline 0.5 because "the starter\'s mean absolute error"')
_SOURCE = 'source "Kaggle private leaderboard, 2019"'

EXPLANATIONS: dict[str, Explanation] = {
    "E950": Explanation(
        "Reference points put every run on a scale the field shares: RE-Bench's normalised score, "
        "MLRC-Bench's share of the gap closed, MLE-bench's medals (`mlab report`, docs/reports.md). "
        "A number on that scale is only as good as where it came from, so each `reference` names its "
        "source after the score, and a `thresholds` block names it as one more entry.",
        example_task(extra='  reference "expert" 0.12\n'),
        example_task(extra='  reference "expert" 0.12 source "the winning entry of the 2019 competition"\n')),
    "E951": Explanation(
        "The normalised score is 0 at the starting point and 1 at the reference. A reference that is "
        "no better than the declared baseline, in the metric's direction, turns that scale around (or "
        "divides by zero). Here the metric is an error (lower is better): a reference of 0.9 is worse "
        "than the starter's 0.5. Check the number's sign and scale, and the metric.",
        example_task(_BASE, extra='  reference "expert" 0.9 source "the winning entry"\n'),
        example_task(_BASE, extra='  reference "expert" 0.2 source "the winning entry"\n')),
    "E952": Explanation(
        "MLE-bench's medals are earned from the best down: a score at least as good as gold earns "
        "gold, else silver, else bronze. So gold is the best number of the block in the metric's "
        "direction, then silver, bronze and median. For an error (lower is better) gold is the "
        "smallest.",
        example_task(extra=f'  thresholds {{\n    gold 0.3\n    silver 0.2\n    bronze 0.4\n    {_SOURCE}\n  }}\n'),
        example_task(extra=f'  thresholds {{\n    gold 0.2\n    silver 0.3\n    bronze 0.4\n    {_SOURCE}\n  }}\n')),
    "E953": Explanation(
        "A `thresholds` block holds the medal thresholds MLE-bench grades with, `gold`, `silver`, "
        "`bronze` and `median`, each a score of the task's metric, and its `source`.",
        example_task(extra=f'  thresholds {{\n    gold 0.2\n    platinum 0.1\n    {_SOURCE}\n  }}\n'),
        example_task(extra=f'  thresholds {{\n    gold 0.2\n    silver 0.3\n    {_SOURCE}\n  }}\n')),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding)
                for code, e in EXPLANATIONS.items()}
