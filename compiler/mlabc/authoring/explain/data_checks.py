"""Long explanations of the checks made against a task's data model (E560–E567): the variant made
in memory by `mlabc check`, profiled, and each declaration checked against what its tables hold."""
from __future__ import annotations

from .example import Explanation, example_task

_DATA = ('    from    csv "data.csv"', '    from    csv "{}"')


def _table(file: str, *changes: tuple[str, str]) -> str:
    """The example task on another bundled table (and other lines replaced)."""
    return example_task((_DATA[0], _DATA[1].format(file)), *changes)


_LABELS = (('    answers ["y"]', '    answers ["label"]'), ('  metric   mae on "y"', '  metric   accuracy on "label"'),
           ('columns id and y', 'columns id and label'))

def _agent(body: str) -> str:
    return 'use std "agents"\n\nagent careful extends research {\n' + body + "}\n"


_CUSTOM = ('  metric   mae on "y"', '  metric   custom lower_is_better')

EXPLANATIONS: dict[str, Explanation] = {
    "E560": Explanation(
        "Scoring matches each submission row to an answer by its id. The prepared answers must give "
        "every test row an id, no id twice, and exactly the ids of the public test table: otherwise a "
        "submission that follows the test table is refused (\"test ids are missing\") and the task's "
        "mistake is judged the agent's. `mlabc check` runs the generator and compares the tables.",
        example_task((_DATA[0], '    from    generate "gen.py:mismatched"'), ("    split   random 0.2 seed 1", "    split   none")),
        example_task((_DATA[0], '    from    generate "gen.py:matched"'), ("    split   random 0.2 seed 1", "    split   none"))),
    "E561": Explanation(
        "A blank answer can never be matched by a prediction, and training rows without a label make "
        "the starter (and every agent) train on rows that say nothing. Drop the rows without a label "
        "from the source, or fill them; where training rows without a label are meant (a semi-supervised "
        "task), declare them: `answers [\"y\"] unlabelled`.",
        _table("blank-y.csv"), example_task()),
    "E562": Explanation(
        "The metric's columns must hold, in the prepared answers, values it can score: numbers for an "
        "error metric, whole numbers for qwk, values of at least 0 for rmsle, 0 and 1 for one "
        "probability column. Choose the metric that fits the answers, or recode them.",
        _table("colours.csv", ('    answers ["y"]', '    answers ["colour"]'), ('  metric   mae on "y"', '  metric   mae on "colour"'),
               ('columns id and y', 'columns id and colour')),
        _table("colours.csv", ('    answers ["y"]', '    answers ["colour"]'),
               ('  metric   mae on "y"', '  metric   accuracy on "colour"'), ('columns id and y', 'columns id and colour'))),
    "E563": Explanation(
        "A probability table has one column per class, and each row's true class is read from the "
        "answers' `answer` column (`label` unless declared). Each class must be the name of one of "
        "the table's columns, written as the answers write it: a class matched to a column by its "
        "position would silently score the wrong columns.",
        _table("classes.csv", ('    answers ["y"]', '    answers ["label"]'),
               ('  metric   mae on "y"', '  metric   log_loss on ["cat", "dog", "bird"]'),
               ('columns id and y', 'columns id, cat, dog and bird')),
        _table("classes.csv", ('    answers ["y"]', '    answers ["label"]'),
               ('  metric   mae on "y"', '  metric   log_loss on ["0", "1", "2"]'),
               ('columns id and y', 'columns id, 0, 1 and 2'))),
    "E564": Explanation(
        "A column constraint of the submission must admit the task's own answers and every value of "
        "the public test table's column of that name: a perfect submission that copies the answers "
        "would otherwise be refused, the task's mistake judged the agent's. A probability metric's "
        "columns take `probability` (or a number range inside [0, 1]).",
        _table("classes.csv", *_LABELS, ('  metric   accuracy on "label"', '  submission "submission.csv" columns ["id", "label"] {\n'
               '    column "label" label from ["0", "1"]\n  }\n  metric   accuracy on "label"')),
        _table("classes.csv", *_LABELS, ('  metric   accuracy on "label"', '  submission "submission.csv" columns ["id", "label"] {\n'
               '    column "label" label from ["0", "1", "2"]\n  }\n  metric   accuracy on "label"'))),
    "E565": Explanation(
        "A public column of the test table that equals an answer column, or maps one to one onto it "
        "(a grade A for 0 and B for 1), lets a submission score without learning; so do ids numbered "
        "after the rows were sorted by their answer. Drop the column; shuffle the rows before "
        "numbering them, or let mlab number them (leave the id column out of the source).",
        _table("recoded.csv", *_LABELS), _table("recoded.csv", *_LABELS[1:], ('    answers ["y"]', '    answers ["label"]'),
                                                ('    id      "id"', '    id      "id"'))
        .replace('"recoded.csv"', '"unrecoded.csv"')),
    "E566": Explanation(
        "`mlabc check` makes each variant it can reach offline as preparation would: a bundled table "
        "read and split, a generator run into a temporary folder. A failure there would fail every "
        "run's preparation: it is reported at the source, with what went wrong.",
        example_task((_DATA[0], '    from    generate "gen.py:crashes"'), ("    split   random 0.2 seed 1", "    split   none")),
        example_task((_DATA[0], '    from    generate "gen.py:matched"'), ("    split   random 0.2 seed 1", "    split   none"))),
    "E567": Explanation(
        "The agent reads the problem text, not the declarations: a direction it states against the "
        "metric's (\"lower is better\" of accuracy), or a column name with a slip (a `SalePirce` "
        "where the data has `SalePrice`), sends a faithful agent the wrong way.",
        example_task(("  problem  \"Fit y from x, then write submission.csv with the columns id and y.\"",
                      "  problem  \"Fit y from x, then write submission.csv with the columns id and y. Higher is better.\"")),
        example_task(("  problem  \"Fit y from x, then write submission.csv with the columns id and y.\"",
                      "  problem  \"Fit y from x, then write submission.csv with the columns id and y. Lower is better.\""))),
    "E568": Explanation(
        "The runtime calls an evaluator as `score(submission_dir, private_dir)`: two positional "
        "arguments, the folder of the submission's files and the folder of the private files; it "
        "returns one finite number. Read with `ast` (the file is never imported by mlabc), a "
        "function that takes other arguments would end every run in a traceback.",
        example_task(_CUSTOM, extra='  evaluator "seeded.py:score" because "scored by our own rule"\n'),
        example_task(_CUSTOM, extra='  evaluator "evaluate.py:score" because "scored by our own rule"\n')),
    "E569": Explanation(
        "An evaluator rejects a malformed submission by raising an exception class named "
        "`SubmissionInvalid` (the run ends as a submission format error, with its message). A file "
        "that never raises one scores whatever the agent wrote, or crashes on it, which is a task "
        "error: check the files, headers, ids and values, and raise SubmissionInvalid on each fault.",
        example_task(_CUSTOM, extra='  evaluator "count.py:score" because "scored by our own rule"\n'),
        example_task(_CUSTOM, extra='  evaluator "evaluate.py:score" because "scored by our own rule"\n')),
    "E570": Explanation(
        "A demonstration is played step by step at run time; a step that executes a script no "
        "starter file, public file or earlier step (Write File, Copy File, an edit's `save_name`) "
        "provides fails there. The check follows the steps in order, as the run would.",
        'use std "agents"\n\n' + example_task(extra='  demo     "run-demo.json"\n'),
        'use std "agents"\n\n' + example_task(extra='  demo     "ran-demo.json"\n')),
    "E606": Explanation(
        "An agent that replies in text learns its reply format from the prompt: `{{ reply_format }}` "
        "renders the sections (or the JSON shape) it must write. A custom prompt without it, that "
        "does not name the sections either, leaves the model guessing, and every step would end in "
        "a format error charged to nobody's mistake but the prompt's.",
        _agent('  prompt """\n    Solve {{ task.problem }}.\n    {{ tools }}\n    """\n'),
        _agent('  prompt """\n    Solve {{ task.problem }}.\n    {{ tools }}\n    {{ reply_format }}\n    """\n')),
    "E607": Explanation(
        "Every field a prompt reads is checked at compile time against the shape "
        "spec/template-context.json gives its object (the task's fields, the actions', the sections'...), "
        "in every branch, taken or not (an `if`, its `else`, a loop's body): a misspelled field is "
        "reported at its line with the object's fields, instead of failing a step of some run.",
        _agent('  prompt """\n    Task: {{ task.titel }}\n    {{ tools }}\n    {{ reply_format }}\n    """\n'),
        _agent('  prompt """\n    Task: {{ task.title }}\n    {{ tools }}\n    {{ reply_format }}\n    """\n')),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding)
                for code, e in EXPLANATIONS.items()}
