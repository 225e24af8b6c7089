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

TOOLS = """\
tools: agents whose actions are provider tool calls (`respond tools`)

    respond tools {
      section "Thought" role thought "What you will do now, and why."
      sections_required true       # default false: a reply without them is still used
      tool_choice       required   # required (default) | auto
      parallel          off        # off (default): one call per step | ordered: run all, in order
      fallback          sections   # sections (default) | json | none: the text format for models
                                   # that cannot take tools
      list_tools        false      # default false: {{ tools }} is empty while tools are sent natively
    }

The shown actions go to the model as tools: the name is the action's name in snake case
(`Edit Script (AI)` is `edit_script_ai`) unless the action declares `tool "NAME"`; the
parameters are the action's inputs as JSON Schema; the description is the action's
description and its returns text. Names must match ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ (E707) and
differ among the shown actions (E708).

The sections of the block are expected in the text of the message that carries the call.
Action and action-input sections, if declared, are used only by the fallback; without them
the fallback gets `Action` / `Action Input` (sections) or `action` / `action_input` (json).

Templates. `prompt` is the system message, the same at every step: it receives task, tools,
tool_names, reply_format and max_steps, not step, history or retrieved (E602 says where they
go). `prompts { problem "..." }` is the first user message (default: the research problem);
`prompts { turn "..." }` closes each step (default: "This is step N of at most M.", with
what the research log retrieved). With a fallback the prompt must render {{ tools }} (E709).
"""

SEARCH = """\
search: tree-search agents (`search POLICY { ... }`)

    search greedy {                  # greedy | mcts | evolution
      drafts            5            # greedy: AIDE's defaults (5, 0.5, 3)
      debug_probability 0.5
      max_debug_depth   3
      parallel          1            # node evaluations at once (every policy)
      code_file         "train.py"   # where a node's code is written
      score             "Validation score: ([-+0-9.eE]+)"   # or: score review
      select            validation   # or: holdout (a split the harness holds out)
    }

mcts takes exploration (1.414), children (3), max_debug_depth (3), steps (20); evolution takes
population (4), islands (2), crossover_probability (0.5), migration_probability (0.1),
temperature_start (1.0), temperature_end (0.1), generations (3). Counts are integers >= 1,
probabilities lie in [0, 1], temperatures are above 0 and do not rise. A child agent's
`search` block keeps its parent's shared settings (parallel, code_file, score, select).

A search agent runs no linear loop: it needs no `respond` and no `prompt`. Its operators are
prompts: `prompts { draft ... improve ... debug ... }`, plus `crossover` for evolution and
`review` for `score review`. They receive task, parent (plan, code, output, validation,
buggy; none for a draft), parents (crossover), journal, data_preview, code_file, node and
max_nodes; review receives task, code, output and code_file. A reply is a plan in prose,
then exactly one ```python block.
"""

TOPICS = {"evaluator": EVALUATOR, "tools": TOOLS, "search": SEARCH}
