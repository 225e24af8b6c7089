"""Long explanations of the checks that catch a task author's mistakes before any script runs:
the metric against its catalogue entry, the answers' ids, the problem text against the declared
submission, the demonstration against the agents that play it, the starter's file sizes, and
the inherited show lists of agents that replace a standard agent's action set."""
from __future__ import annotations

from .example import Explanation, example_task

_LEAN = '''use std "agents"

actions lean {
  action "List Files" {
    describe "List a folder."
    input    dir_path: path "the folder"
    returns  "its entries"
    does     list_files
  }
  action "Final Answer" {
    describe "Finish the task."
    input    final_answer: text "what was done"
    returns  "nothing"
    does     final_answer
  }
}

'''

def _constrained(rule: str) -> str:
    """The example task with its submission declared and one column constraint."""
    return example_task(('  metric   mae on "y"',
                         '  submission "submission.csv" columns ["id", "y"] {\n    ' + rule + '\n  }\n  metric   mae on "y"'))


_RESEARCH_EXTRAS = ('["Execute Script", "Copy File", "Undo Edit Script", "Validate Submission", "Understand File", '
                    '"Inspect Script Lines", "Edit Script (AI)"]')

EXPLANATIONS: dict[str, Explanation] = {
    "E205": Explanation(
        "`use std \"agents\" version N` says which release of the standard library a file was written "
        "against (docs/std-library.md lists them). A release newer than the one this mlab ships does "
        "not exist here: pin one it has, or install a newer mlab. An earlier release compiles against "
        "this one, and what changed since that could break the file is reported at the file's own lines.",
        'use std "agents" version 99\n\nagent mine extends research {\n  history 2 steps\n}\n',
        'use std "agents" version 3\n\nagent mine extends research {\n  history 2 steps\n}\n'),
    "E309": Explanation(
        "An agent that extends another (a standard agent, say) and names an action set of its own "
        "inherits its parent's `show` list. When that list names actions the new set lacks (the "
        "standard agent came to show a new action, or the set was always smaller), the agent is "
        "reported here, at its own `actions` line, with the missing actions: `hide` them in the "
        "agent to do without them (hiding an inherited action the set lacks is allowed), or add "
        "them to the set.",
        _LEAN + "agent lean extends research {\n  actions lean\n}\n",
        _LEAN + 'agent lean extends research {\n  actions lean\n  hide    ' + _RESEARCH_EXTRAS + '\n}\n'),
    "E310": Explanation(
        "An entry the runtime would not act on, given the others, is refused rather than silently "
        "dropped: an `evaluator` beside a catalogue metric never runs (mlab scores `mae`, `accuracy`, "
        "`column_roc_auc`, ... itself, with the submission checks), and a `split` of a source kept as it "
        "comes (`from folder`; `from torchvision` and `from ogb` keep their datasets' own split) changes "
        "nothing. Remove the entry, score with the evaluator through `metric custom`, or write `split none`.",
        example_task(('  metric   mae on "y"',
                      '  metric   mae on "y"\n  evaluator "evaluate.py:score" because "our own MAE"')),
        example_task(('  metric   mae on "y"',
                      '  metric   custom(name = "mae") on "y" lower_is_better\n'
                      '  evaluator "evaluate.py:score" because "our own MAE"'))),
    "E409": Explanation(
        "The metric catalogue (spec/metrics.json) knows the direction of every metric but `custom`: "
        "an error (RMSE, RMSLE, MAE, log loss) is lower-is-better, a score (accuracy, F1, AUC, R²) "
        "higher-is-better. A task declaring the opposite would judge a worse model an improvement. "
        "Leave the direction out (the catalogue's is used), or score a metric of your own with "
        "`metric custom` and an evaluator.",
        example_task(('  metric   mae on "y"', '  metric   mae on "y" higher_is_better')),
        example_task(('  metric   mae on "y"', '  metric   mae on "y" lower_is_better'))),
    "E410": Explanation(
        "A declared `baseline VALUE` is the score the starter reaches, from which every run's "
        "improvement is measured, so it must be a score the metric can give: the catalogue's "
        "`range` (`mlabc schema metrics`). Accuracy, F1, precision, recall, AUC and MAP@k lie "
        "between 0 and 1 (not percentages), R² is at most 1, an error is at least 0.",
        example_task(('  metric   mae on "y"', '  metric   accuracy on "y"'),
                     ('  baseline run "train.py"', '  baseline 72 because "the starter\'s accuracy, in percent"')),
        example_task(('  metric   mae on "y"', '  metric   accuracy on "y"'),
                     ('  baseline run "train.py"', '  baseline 0.72 because "the starter\'s accuracy"'))),
    "E513": Explanation(
        "The agent learns what to submit from the problem text only, while Validate Submission and "
        "scoring check `submission FILE columns [...]`. So the problem must name the submission "
        "file, and the sentence that does must name every declared column (as a word of its own) "
        "and no other answer, id or data column: an agent that follows a problem asking for "
        "`price` writes a file that is refused for lacking `SalePrice`, and the run is judged the "
        "agent's failure.",
        example_task(('  metric   mae on "y"', '  submission "submission.csv" columns ["id", "y"]\n  metric   mae on "y"'),
                     ("write submission.csv with the columns id and y.", "write submission.csv with the columns id and x.")),
        example_task(('  metric   mae on "y"', '  submission "submission.csv" columns ["id", "y"]\n  metric   mae on "y"'))),
    "E514": Explanation(
        "The keyless demo model plays the task's demonstration through whichever agent runs the task, "
        "so every step must be an action of that agent, with the inputs the action takes. It is "
        "checked for the task's default agent and for every agent an experiment runs the task with "
        "(tree-search agents play it as operator variants instead). Without the check, `mlab drive` "
        "plays such a demonstration through and `mlab run` refuses it.",
        'use std "agents"\n\n' + example_task(extra='  demo     "peek-demo.json"\n'),
        'use std "agents"\n\n' + example_task(extra='  demo     "list-demo.json"\n')),
    "E512": Explanation(
        "The answers of a split table name each test row by the variant's `id` column, and scoring "
        "aligns a submission on it. A bundled table whose id column is empty on some row, or holds "
        "a value twice, could not be answered row by row (at preparation, mlab also refuses answers "
        "whose ids differ from the public test file's, as a task error).",
        example_task(('csv "data.csv"', 'csv "repeated-ids.csv"')), example_task()),
    "E515": Explanation(
        "Every run copies the starter folder into its workspace, so a file there costs each run its "
        "size: a dataset or checkpoint left in the folder by mistake (here a 30 MB checkpoint.pt) is "
        "refused past 20 MB. Remove it, or make it data: a file a data variant declares `public` is "
        "prepared once and installed from the cache.",
        example_task(('starter  "env"', 'starter  "big-env"')), example_task()),
    "E516": Explanation(
        "A `column` line constrains the values of one declared submission column. A rule on a "
        "column the submission does not declare would check nothing (a misspelt name, usually); "
        "the id column's values are already checked against the test ids; and two rules on one "
        "column would leave it unclear which holds.",
        _constrained('column "Y" number from 0 to 10'), _constrained('column "y" number from 0 to 10')),
    "E517": Explanation(
        "Each kind takes its own words: a `ranking` takes `max N` or `exactly N` and needs `from` "
        "a vocabulary, a `label` needs `from` a vocabulary, an `integer` or `number` takes `from LOW` "
        "and optionally `to HIGH`, and a `probability` (0 to 1) takes nothing. A word another kind "
        "takes is refused rather than ignored, so a rule never checks less than it reads.",
        _constrained('column "y" probability from 0 to 5'), _constrained('column "y" number from 0 to 5')),
    "E518": Explanation(
        "A rule that no value meets would refuse every submission, the task's own answers "
        "included: a range whose first bound is above its second, a ranking of fewer than one "
        "item, `exactly N` distinct items from a vocabulary of fewer than N, an empty vocabulary, "
        "or one that lists an item twice (usually a typing slip).",
        _constrained('column "y" number from 5 to 0'), _constrained('column "y" number from 0 to 5')),
    "E519": Explanation(
        "A vocabulary file is read from the task, not from the agent's workspace: preparation keeps "
        "a copy with the private answers. So it must be a file every run's workspace holds (a "
        "starter file, or a public file of every data variant), and read-only, so that the agent "
        "reads the vocabulary its submission is checked against; a CSV vocabulary must hold the "
        "named column.",
        _constrained('column "y" label from "train.csv:y"'),
        _constrained('column "y" label from "values.csv:y"').replace('  starter  "env"\n',
                                                                     '  starter  "env"\n  read_only ["values.csv"]\n')),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding)
                for code, e in EXPLANATIONS.items()}
