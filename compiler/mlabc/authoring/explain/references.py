"""Long explanations of the checks of a task's reference points: `reference`, `thresholds` and
`leaderboard`."""
from __future__ import annotations

from .example import Explanation, example_task

_BASE = ('  baseline run "train.py"', '  baseline 0.5 because "the starter\'s mean absolute error"')
_SOURCE = 'source "Kaggle private leaderboard, 2019"'


def _board(file: str = "leaderboard.csv", column: str = "") -> str:
    return f'  leaderboard "{file}"{column} {_SOURCE}\n'


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
    "E954": Explanation(
        "A `leaderboard` names a CSV file of a public leaderboard's scores that ships with the task, "
        "inside the task's folder (the path is relative to the task's file). The compiler reads the "
        "scores into the build, so reports of old runs find them in the run's build copy; the file "
        "must be there, readable as UTF-8, when the task is checked.",
        example_task(extra=_board("public-leaderboard.csv")),
        example_task(extra=_board())),
    "E955": Explanation(
        "The scores are read from one column of the leaderboard file: the one `column \"NAME\"` "
        "names, or `score` when none is given, the column of MLE-bench's leaderboard files. The "
        "message lists the columns the file has.",
        example_task(extra=_board(column=' column "private_score"')),
        example_task(extra=_board(column=' column "score"'))),
    "E956": Explanation(
        "Every row of a leaderboard file is one team's entry, and its score is a number of the task's "
        "metric: medals and percentiles rank a run's score among them. A cell that is not a finite "
        "number (empty, `n/a`, `inf`), or a file with no rows, has nothing to rank against.",
        example_task(extra=_board("leaderboard-text.csv")),
        example_task(extra=_board())),
    "E957": Explanation(
        "Medals and percentiles rank scores, so a leaderboard needs a metric with a direction, and a "
        "leaderboard sorted best first, as competitions list it, runs in that direction: rising "
        "for an error (lower is better), falling for an accuracy. Here the file rises from 0.10 to "
        "0.55, an error's leaderboard, but the metric is r2, where higher is better.",
        example_task(('  metric   mae on "y"', '  metric   r2 on "y"'), extra=_board()),
        example_task(extra=_board())),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding)
                for code, e in EXPLANATIONS.items()}
