"""`mlabc explain TOPIC`: contracts an author writes code against, beside the diagnostic codes."""
from __future__ import annotations

EVALUATOR = """\
evaluator: the contract of a task's own scorer

A task whose metric the catalogue cannot compute declares one in Python, with a reason:

    metric    custom(name = "Dice over masks") higher_is_better
    evaluator "evaluate.py:score" because "masks are scored per image"

`name` is the display name result.json (`metric_display`) and the reports show; without it
they show `custom`. `perplexity` is the other metric scored this way.

Signature. A top-level function of the named file (mlabc checks it with `ast`, never imports
it):

    def score(submission_dir: str, private_dir: str) -> float

What it receives. It runs in the sandbox, as a script, with the task's script time and memory
limits, in a scratch folder: `submission_dir` is a copy of the agent's workspace (plain files
only), `private_dir` the task's private files (the answers), read-only. Nothing of mlab, the
run folder or the caches is there.

What it returns. One finite number: the score, better in the metric's direction.

How it rejects a submission. Raise an exception whose class is named `SubmissionInvalid`
(define it in the file, e.g. `class SubmissionInvalid(ValueError): pass`) with a message that
says what is wrong: the run ends as "submission format error" with that message, the agent's
failure. Any other exception, a value that is not a finite number, or a crash is the task's
fault: the run ends as "task error", never counted against the agent. A submission that makes
scoring run past the limits scores nothing.

Helpers it may use to validate a submission. The standard library and the packages of the
task's `requires` list (they are installed in the sandbox); no mlab module is importable
there. Validate before computing: the expected files exist (`os.path.isfile`), tables have
the expected header and one row per id (`csv`, or pandas when required), values parse as
numbers; and load data formats that run no code (CSV, JSON, safetensors), never a pickle of
the agent's.
"""

TOPICS = {"evaluator": EVALUATOR}
