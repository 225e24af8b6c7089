"""The catalogue of diagnostic codes: a short title and an explanation each.

`mlabc explain CODE` prints the explanation; tests check that every code the
compiler can emit is listed here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    title: str
    explanation: str


CODES: dict[str, Code] = {
    # syntax
    "E100": Code("syntax error", "The parser met a token it did not expect at this point."),
    "E101": Code("missing closing brace", "A block opened with `{` was not closed with `}`."),
    "E102": Code("unterminated string", "A string opened with a quote was not closed on the same line (or a triple-quoted string was never closed)."),
    "E103": Code("unknown keyword", "Each entry in a block starts with one of a fixed set of keywords; this word is not one of them here."),
    "E104": Code("unexpected end of file", "The file ended in the middle of a declaration."),
    "E105": Code("invalid character", "This character cannot start any token of the language."),
    "E106": Code("file is not UTF-8", ".mlab files must be UTF-8 text."),
    "E107": Code("missing value", "This keyword needs a value after it."),
    "E108": Code("missing opening brace", "A declaration or block needs `{` after its header."),
    "E109": Code("unclosed list", "A list opened with `[` was not closed with `]`."),
    "E110": Code("unknown declaration", "A file holds only `use`, `task`, `actions`, `agent` and `experiment` declarations."),
    # use / loading
    "E201": Code("imported file not found", "A `use` names a path (relative to the importing file) that does not exist."),
    "E202": Code("import cycle", "Files import each other in a cycle."),
    "E203": Code("unknown standard-library module", "`use std NAME` names a module that mlab does not ship."),
    "E204": Code("cannot read file", "The file could not be read."),
    "E205": Code("standard-library release not available", "`use std NAME version N` pins a release of the standard library that this mlab does not have."),
    # names and references
    "E301": Code("duplicate declaration", "Two declarations of the same kind share a name."),
    "E302": Code("duplicate entry", "An entry that may appear once appears twice in the same block."),
    "E303": Code("unknown action set", "An agent names, or an action set extends, an action set that no visible file declares."),
    "E304": Code("unknown agent", "A name that should refer to an agent refers to none."),
    "E305": Code("unknown task", "An experiment names a task that no visible file declares."),
    "E306": Code("unknown action", "A name in `show`, `hide` or `drop action` (or a prompt) is not an action of the set it refers to."),
    "E307": Code("inheritance cycle", "Agents, or action sets, extend each other in a cycle."),
    "E308": Code("missing entry", "A declaration lacks an entry it must have."),
    "E309": Code("inherited action missing", "An agent that extends another and names an action set of its own inherits its parent's `show` list, and that list names an action the new set lacks."),
    "E310": Code("declaration ignored", "An entry that the runtime would not act on, given the others: an `evaluator` beside a catalogue metric (mlab scores it itself), or a `split` of a source kept as it comes (`from folder`, `from torchvision`, `from ogb` without `prepare`)."),
    # values
    "E401": Code("wrong value type", "The entry takes a value of another type."),
    "E402": Code("unknown primitive", "`does` names a primitive that the runtime does not provide (spec/primitives.json)."),
    "E403": Code("unknown parameter", "A parameter or setting name is not one the primitive (a parameter, or an input it can bind), limit block or model block accepts."),
    "E404": Code("unknown metric", "`metric` names a metric that is not in the catalogue (spec/metrics.json)."),
    "E405": Code("value not allowed", "The value has the right type but is not one of the allowed values, or is out of range."),
    "E406": Code("inputs do not match the primitive", "An action must declare exactly the inputs its primitive requires, with the same types, except those its `does` binds to constants."),
    "E407": Code("model tier", "A model-backed primitive needs `model main|fast|edit`; a plain primitive must not have one."),
    "E408": Code("metric column not declared", "A tabular metric scores a column that the submission's declared columns or a data variant's answers do not hold."),
    "E409": Code("metric direction reversed", "A task declares the opposite direction of a metric whose direction the catalogue (spec/metrics.json) knows, e.g. `rmsle ... higher_is_better`."),
    "E410": Code("baseline outside the metric's range", "A `baseline VALUE` is a score the metric cannot give (the catalogue's `range`: F1, accuracy, AUC at most 1, R² at most 1, errors at least 0)."),
    # files
    "E501": Code("starter folder missing", "The task's starter folder does not exist."),
    "E502": Code("data file missing", "A bundled data file or folder named by a data variant does not exist."),
    "E503": Code("read-only pattern matches nothing", "A read-only pattern matches neither a starter file nor a declared public file, so it protects nothing."),
    "E504": Code("escape-hatch file missing", "A Python file named by `evaluator`, `from generate` or `prepare` does not exist."),
    "E505": Code("escape-hatch function missing", "The Python file exists but defines no top-level function of that name."),
    "E506": Code("escape-hatch file does not parse", "The Python file named by the task has a syntax error."),
    "E507": Code("demonstration file invalid", "The demo file must exist and hold a demonstration: steps of actions with their inputs and section texts by role (version 2), or a JSON list of replies (version 1)."),
    "E508": Code("baseline script missing", "`baseline run` names a script that the starter folder does not hold."),
    "E509": Code("data column missing", "An answer, id or split column is not in the header of the bundled CSV file."),
    "E510": Code("data file has no rows", "A bundled CSV file is empty or holds a header and no rows."),
    "E511": Code("data file is not UTF-8", "A bundled CSV file holds bytes that are not UTF-8 text."),
    "E512": Code("ids empty or repeated", "The `id` column of a bundled table has an empty value or a value twice, so the answers could not name each test row once."),
    "E513": Code("problem and submission disagree", "The problem text must name the submission file and, in the sentence that does, every declared submission column, and no other answer or id column as one to submit."),
    "E514": Code("demonstration not playable", "A step of the task's demonstration uses an action, or inputs, that an agent playing the task (its default agent, or one an experiment runs it with) does not have."),
    "E515": Code("starter file too large", "A file of the starter folder is larger than a starter file may be (20 MB) and is not declared as data, yet it would be copied into every run's workspace."),
    "E516": Code("constraint on an undeclared column", "A `column` constraint of the submission names a column that `submission ... columns [...]` does not declare, the data's id column (its values are checked against the test ids), or a column constrained twice."),
    "E517": Code("constraint malformed", "A `column` constraint has an unknown kind, a word or value its kind does not take (`max`/`exactly` belong to a ranking, `from ... to ...` to an integer or number range, `from [...]` or a file to a ranking or label), lacks one it needs, or constrains a task whose metric reads no submission table."),
    "E518": Code("constraint admits no value", "A constraint's range is inverted, a ranking's count is below 1 or (`exactly N`) above the size of its vocabulary, or a vocabulary is empty, repeats an item or holds one a submission cannot write."),
    "E519": Code("vocabulary file unavailable", "A constraint's vocabulary file is not a starter file or a public file of every data variant, is not read-only (so the agent could change what is checked), or lacks the named column."),
    # the data model (mlabc check: docs/authoring.md, "The data model")
    "E560": Code("ids do not name the test rows", "The prepared answers must give every test row an id, no id twice, and exactly the ids of the public test table: otherwise a submission that follows the test table is refused and the task's mistake is judged the agent's."),
    "E561": Code("blank target", "An answer column is blank on some rows of the prepared answers (no submission can match them) or of the training table (the starter and every agent would train on rows without a label), unless the variant declares unlabelled training rows: `answers [\"label\"] unlabelled`."),
    "E562": Code("metric cannot score the answers", "A column the metric scores is missing from the prepared answers, or holds values of a type the metric cannot score (text for an error metric, more than 0 and 1 for one probability column, fractions for qwk, negative values for rmsle)."),
    "E563": Code("probability table classes", "A probability-table metric reads each row's true class from the answers' `answer` column, and each class must be the name of one of the table's columns: a class read by column position, or one no column stands for, is refused."),
    "E564": Code("constraint broken by the task's own data", "A column constraint of the submission is broken by the task's own answers or by the public test table (a submission that copies them would be refused), or contradicts the metric (a probability metric with a constraint that admits other values than [0, 1])."),
    "E565": Code("answers leak", "A public column of the test table equals, or recodes one to one, an answer column; or the test rows' ids, sorted, put the answers in order: a submission could score without learning anything."),
    "E566": Code("data cannot be made", "The compiler made the variant's data as preparation would (a bundled table read and split, a generator run) and it failed, or it lacks a declared file."),
    "E567": Code("problem text disagrees with the declarations", "The problem text states the metric's direction against the declared one (\"lower is better\" for a higher-is-better metric), or names a column that no table of the data holds while one of a close spelling is there."),
    "E568": Code("evaluator signature", "The runtime calls a task's evaluator with two positional arguments, the submission's folder and the private folder: `def score(submission_dir, private_dir) -> float`, a plain (not async) function that requires no keyword argument."),
    "E569": Code("evaluator never rejects", "An evaluator rejects a malformed submission by raising an exception class named `SubmissionInvalid`; a file that never raises one can only score every submission (however malformed) or crash, which is the task's error."),
    "E570": Code("demonstration runs a missing script", "A step of the demonstration executes a script that neither the starter folder, a public data file nor an earlier step of the demonstration (Write File, Copy File, an edit's save_name) provides: the demonstration would fail at that step."),
    # templates
    "E601": Code("template syntax error", "A prompt is not valid Jinja."),
    "E602": Code("variable outside the template context", "A prompt uses a variable that the runtime does not provide to that template (spec/template-context.json)."),
    "E603": Code("action not usable by the agent", "A prompt or section names an action that the agent cannot call."),
    "E604": Code("missing prompt", "A model-backed action or a hook of the agent has no prompt."),
    "E605": Code("unknown prompt", "`prompts` holds a name that no primitive or hook uses."),
    "E606": Code("prompt never says how to reply", "The prompt of an agent that replies in text (sections or JSON) must render `{{ reply_format }}` (or name every section of its reply format itself): otherwise the model is never told how to reply, and every step ends in a format error."),
    "E607": Code("field outside the template context", "A prompt reads a field that its object does not have (`task.titel`): every field a prompt reads, in every branch (taken or not), is checked at compile time against the shape the catalogue gives its object (spec/template-context.json), so a misspelled field is found at its line instead of a traceback at run time."),
    # reply format
    "E701": Code("no action section", "The reply format must have exactly one section of kind `action`."),
    "E702": Code("no action-input section", "The reply format must have exactly one section of kind `json`."),
    "E703": Code("ambiguous reply format", "Two sections share a name (ignoring case), so a reply could not be split unambiguously."),
    "E704": Code("no such section", "`drop section` names a section that the inherited reply format does not have."),
    "E705": Code("bad section name", "A section name must be non-empty, on one line and without a colon."),
    "E706": Code("unknown role", "A section role must be one of the known roles."),
    "E707": Code("invalid tool name", "A tool name must be a letter or `_`, then at most 63 letters, digits, `_` or `-` (what providers accept). An action's tool name is its name in snake case unless the action declares `tool \"NAME\"`."),
    "E708": Code("duplicate tool name", "Two actions that a `respond tools` agent shows have the same tool name, so a tool call could not tell them apart."),
    "E709": Code("fallback prompt without tools", "A `respond tools` agent with a fallback format must render `{{ tools }}` in its prompt: the tools text is empty while tools are sent natively, but a model on the fallback format sees the tools only there."),
    # tree search
    "E801": Code("score pattern does not compile", "`score \"PATTERN\"` in a `search` block must be a valid Python regular expression: it is run over each node's output to read the validation score."),
    "E802": Code("score pattern captures nothing", "The score pattern needs a capture group: its first group is the validation score, e.g. \"Validation score: ([-+0-9.eE]+)\"."),
    # external agents
    "E901": Code("empty command", "An external agent's `command` is the shell command that starts it inside the sandbox; it cannot be empty."),
    "E902": Code("requirement does not parse", "Each item of an external agent's `requires` is a PEP 508 requirement (a distribution name with optional extras, version specifiers and markers), installed into the agent's own cached environment."),
    "E903": Code("model tier never used", "An external agent declares a model tier that neither its command nor its environment passes to the agent (`{{ model }}` or `{{ models.main }}`, `{{ models.fast }}`, `{{ models.edit }}`), so the declared default could never be called."),
    "E904": Code("limit the gateway cannot enforce", "An external agent's `limits` may set what mlab enforces on it from outside: steps (model calls), time, tokens and cost. Script timeouts, memory and disk are the task's limits, applied by the sandbox."),
    "E905": Code("extends across kinds", "`extends` works within a kind of agent: an external agent extends an external agent, a linear or tree-search agent extends one of those."),
    "E906": Code("unknown shaping", "`gym { shaping NAME }` names how mlab.gym shapes an episode's reward; the one shaping is `validation` (the improvement of the validation score that Validate Submission reports)."),
    "E907": Code("shaping weight out of range", "`gym { weight W }` scales the shaping beside the final reward, the improvement over the baseline: it is a number above 0 and at most 1."),
    "E908": Code("validation shaping without a validation split", "`gym { shaping validation }` rewards improvements of the validation score, which exists only where a data variant declares a validation split (`validation 0.1`); every variant of the task must declare one."),
    "E909": Code("unknown gym entry", "A `gym` block holds `shaping` and `weight`, and `weight` only beside a `shaping`."),
    # versions
    "E911": Code("task version history", "A task's `changes` name each version after the first once, none later than the task's `version`, and every version after the first has one; an `issue` is `since` a version no later than the task's and `fixed` in a later one."),
    "E912": Code("scored parts changed without a version bump", "`mlabc check --since BUILD` found a task whose scored parts (data, metric, submission, success rule or starter) differ from the previous build's while its `version` stayed (or went down), so results earned on both would be pooled as one task."),
    "E913": Code("npm package not pinned", "An external agent's `requires` may name npm packages (`npm \"NAME@VERSION\"`), each at an exact version: they are installed once into the agent cache, keyed by those versions, so a run installs exactly what the file says."),
    "E914": Code("dialect the gateway does not serve", "An external agent's `dialect` names the wire protocol its model client speaks: chat (OpenAI Chat Completions), responses (OpenAI Responses), anthropic (Anthropic Messages) or gemini (Gemini generateContent), and only one the gateway serves (spec/dialects.json)."),
    "E915": Code("base URL not named", "An external agent that declares its `dialect` must point its client at the gateway: its command or its environment names `{{ base_url }}` (or the dialect's own form: `{{ api_base }}` for chat and responses, `{{ api_root }}` for anthropic and gemini); otherwise the agent calls its provider, which the sandbox cannot reach."),
    "E916": Code("not a Python version", "An external agent's `requires` may name the Python its environment is made with (`python \"3.12\"`: any 3.12 release, or `python \"3.12.4\"`: that one), once; mlab finds that interpreter on the machine when the run starts (PATH, pyenv, uv) and refuses the run, naming what to install, when there is none."),
    # reference points (docs/reports.md)
    "E950": Code("reference number without a source", "Every number a task gives to put runs on a common scale, a `reference` score, a `thresholds` block or a `leaderboard` file, names where it comes from with `source \"...\"` (a paper, a leaderboard, the run that measured it), so a reader can check it."),
    "E951": Code("reference does not beat the baseline", "A `reference` is a better score than the task's starting point: a reference at or below a declared `baseline VALUE`, in the metric's direction, would make every normalised score meaningless (the scale would run backwards or divide by zero)."),
    "E952": Code("thresholds out of order", "Medal thresholds run from gold, the best score, down through silver and bronze to median, in the metric's direction: higher numbers first for a higher-is-better metric, lower first for an error."),
    "E953": Code("unknown threshold", "A `thresholds` block holds `gold`, `silver`, `bronze`, `median` and its `source`."),
    "E954": Code("leaderboard file missing or unreadable", "A `leaderboard` names a CSV file shipped with the task, inside its folder, UTF-8 with a header row; the compiler reads its scores into the build, so the file must be there when the task is checked."),
    "E955": Code("leaderboard column missing", "The leaderboard's scores are read from one column of its CSV file: `column \"NAME\"`, `score` when none is given (the column of MLE-bench's leaderboard files)."),
    "E956": Code("leaderboard scores not numbers", "Every row of a leaderboard file holds one entry's score, a finite number of the task's metric, and the file has at least one row."),
    "E957": Code("leaderboard against the metric's direction", "Medals and percentiles rank scores, so a task with a `leaderboard` needs a metric with a direction, and a leaderboard sorted best first, as competitions show them, must run in that direction."),
}
