"""Long explanations of the syntax, loading and naming diagnostics (E1xx–E3xx), with examples.

Each example is a whole file. Examples may use the files of explain.SUPPORT_FILES (a starter
folder `env/`, `data.csv`, `shared.mlab`, ...) and the standard library; a test checks that
every `wrong` example gives its code and every `right` one checks clean.
"""
from __future__ import annotations

from .example import Explanation, example_task

_RUNS_OK = '''use std "agents"

experiment quick {
  agents [research]
  runs   2
}
'''

EXPLANATIONS: dict[str, Explanation] = {
    "E100": Explanation(
        "The parser read a token that cannot come next. Often a value was given twice, a separator "
        "was doubled, or a `}` closes a block that was never opened. The message names the token; the "
        "hint lists what could have followed at that point. In a .mlab.yaml file, E100 means the YAML "
        "itself is invalid (for example a tab used for indentation).",
        '''use std "agents"

experiment quick {
  agents [research]
  runs   2 3
}
''', _RUNS_OK),
    "E101": Explanation(
        "A `{` opened a block (a declaration, a data variant, an action, ...) and the file ended before "
        "the matching `}`. The diagnostic points at the `{` that is still open; the missing brace usually "
        "belongs at the end of that block.",
        '''use std "agents"

experiment quick {
  agents [research]
  runs   2
''', _RUNS_OK),
    "E102": Explanation(
        "A string started with `\"` and the line ended before the closing quote, or a `\"\"\"` text was "
        "never closed. Ordinary strings stay on one line; text over several lines goes between triple "
        "quotes.",
        '''use std "agents"

experiment quick {
  agents [research]
  models ["openai/gpt-4o-mini]
}
''', '''use std "agents"

experiment quick {
  agents [research]
  models ["openai/gpt-4o-mini"]
}
'''),
    "E103": Explanation(
        "Every line of a block starts with a keyword, and each kind of block has its own set: a task "
        "knows `title`, `problem`, `data`, ...; an experiment knows `tasks`, `agents`, `runs`, .... "
        "The word found is not one of them here, often a typo; the hint suggests the closest keyword. "
        "In a .mlab.yaml file the same code marks a key that the block does not take.",
        '''use std "agents"

experiment quick {
  agents [research]
  runz   2
}
''', _RUNS_OK),
    "E104": Explanation(
        "The file stopped in the middle of a declaration: after a keyword that needs more, such as "
        "`experiment` without its name and block. The file may have been cut off, or the rest of the "
        "declaration was deleted.",
        '''use std "agents"

experiment quick
''', _RUNS_OK),
    "E105": Explanation(
        "The character cannot begin any token: names are letters, digits, `_` and `-`; text is quoted; "
        "numbers may carry a unit. Stray punctuation such as `;` (entries need no terminator) or a "
        "character pasted from elsewhere causes this, and so does a NUL byte in a damaged file.",
        '''use std "agents"

experiment quick {
  agents [research]
  runs   2;
}
''', _RUNS_OK),
    "E106": Explanation(
        "mlab reads source files as UTF-8. The file holds a byte that is not valid UTF-8, usually "
        "because an editor saved it in another encoding (Latin-1, Windows-1252). Save it again as "
        "UTF-8. The example shows the text; the wrong file is that text saved as Latin-1.",
        '''use std "agents"

experiment quick {
  agents [research]
  models ["local/modèle"]
}
''', '''use std "agents"

experiment quick {
  agents [research]
  models ["local/modèle"]
}
''', encoding="latin-1"),
    "E107": Explanation(
        "The keyword needs a value after it (a string, a number, a duration such as 30m, a size such "
        "as 8GiB, a percentage, a name or a list), and none follows: the next thing is already the "
        "block's end or another entry. In a .mlab.yaml file, a key with nothing after its colon "
        "gets this code.",
        '''use std "agents"

experiment quick {
  agents [research]
  runs
}
''', _RUNS_OK),
    "E108": Explanation(
        "After a declaration's name (and `extends PARENT` for an agent) comes `{`, which opens its "
        "block. The parser found something else, usually the first entry because the brace was left "
        "out.",
        '''use std "agents"

experiment quick
  agents [research]
  runs   2
}
''', _RUNS_OK),
    "E109": Explanation(
        "A list opened with `[` did not end with `]` before the next entry or the end of the file. "
        "Close the list; items may be separated by commas or by spaces and new lines.",
        '''use std "agents"

experiment quick {
  agents [research
  runs   2
}
''', _RUNS_OK),
    "E110": Explanation(
        "At the top level a .mlab file holds only `use`, `task`, `actions`, `agent` and `experiment` "
        "(a .mlab.yaml file: the keys `use`, `tasks`, `actions`, `agents`, `experiments`). Anything "
        "else, such as a misspelled declaration keyword, is reported here.",
        '''use std "agents"

experiments quick {
  agents [research]
  runs   2
}
''', _RUNS_OK),
    "E201": Explanation(
        "`use \"PATH\"` imports the declarations of another file, with PATH relative to the file that "
        "says it (the suffix .mlab or .mlab.yaml may be left out). No file exists there. Check the "
        "spelling and the folder; the standard library is imported with `use std \"NAME\"` instead.",
        '''use "sahred.mlab"
''', '''use "shared.mlab"
'''),
    "E202": Explanation(
        "Files import each other in a circle (a uses b, b uses a), or a file imports itself. Imports "
        "must form a tree: move what both files need into a third file that each of them uses.",
        '''use "example.mlab"
use std "agents"

experiment quick {
  agents [research]
}
''', '''use std "agents"

experiment quick {
  agents [research]
}
'''),
    "E203": Explanation(
        "`use std \"NAME\"` names a module of the standard library that mlab ships with (`actions`, "
        "`agents`, `experiments`); NAME is not one of them. The hint lists the modules.",
        'use std "action"\n', 'use std "actions"\n'),
    "E204": Explanation(
        "A file that had to be read could not be: it is a folder, it is not readable, or it vanished "
        "while mlabc ran. `use` takes a file, not a folder.",
        '''use "env"
''', '''use "shared.mlab"
'''),
    "E301": Explanation(
        "Declarations of one kind share one name space across all the files a program loads: two "
        "tasks, two agents, two action sets or two experiments with the same name cannot be told "
        "apart, and neither can two actions of one set. Rename one of them. Having both x.mlab and "
        "x.mlab.yaml in one folder declares everything twice.",
        '''use std "agents"

experiment quick {
  agents [research]
}

experiment quick {
  agents [react]
}
''', '''use std "agents"

experiment quick {
  agents [research]
}

experiment quick-react {
  agents [react]
}
'''),
    "E302": Explanation(
        "Most entries may appear once in a block; a second one would silently win or lose. Keep one. "
        "(Entries that add up, such as `data`, `input`, `model`, `show` or `checksum`, may repeat.)",
        '''use std "agents"

experiment quick {
  agents [research]
  runs   2
  runs   3
}
''', '''use std "agents"

experiment quick {
  agents [research]
  runs   3
}
'''),
    "E303": Explanation(
        "An agent's `actions NAME` names the action set whose actions it may call. No file that this "
        "agent's file can see declares that set. Import the file that declares it (the standard "
        "set `core` comes with `use std \"actions\"` or `use std \"agents\"`), or fix the name.",
        '''use std "agents"

agent careful extends research {
  actions cor
}
''', '''use std "agents"

agent careful extends research {
  actions core
}
'''),
    "E304": Explanation(
        "A name that should be an agent is not one: in an experiment's `agents`, a task's `agent` or "
        "an `extends`. Either no loaded file declares it, or it is declared in a file this one does "
        "not `use` (the hint then says which).",
        '''use std "agents"

experiment quick {
  agents [reserch]
}
''', '''use std "agents"

experiment quick {
  agents [research]
}
'''),
    "E305": Explanation(
        "An experiment names a task (in `tasks [...]` or `override NAME`) that no file it can see "
        "declares. Fix the name, `use` the task's file, or run every task with `tasks all`.",
        'use std "agents"\n\n' + example_task() + '''
experiment quick {
  tasks  [tyo]
  agents [research]
}
''', 'use std "agents"\n\n' + example_task() + '''
experiment quick {
  tasks  [toy]
  agents [research]
}
'''),
    "E306": Explanation(
        "`show` and `hide` pick actions out of the agent's action set by their exact names (with "
        "spaces and capitals). A name given there is not an action of that set.",
        '''use std "agents"

agent careful extends research {
  hide ["Edit Script AI"]
}
''', '''use std "agents"

agent careful extends research {
  hide ["Edit Script (AI)"]
}
'''),
    "E307": Explanation(
        "An agent inherits from its parent through `extends`; following the parents must end at an "
        "agent that extends nothing. Here the chain comes back to where it started.",
        '''use std "agents"

agent first extends second {
  history 2 steps
}

agent second extends first {
  history 4 steps
}
''', '''use std "agents"

agent first extends research {
  history 2 steps
}

agent second extends first {
  history 4 steps
}
'''),
    "E308": Explanation(
        "A declaration lacks something it cannot do without: a task needs its title, category, "
        "problem, starter, metric, baseline and data; a data variant its source and public files; "
        "an action its `does`; an agent its action set, reply format and prompt; an experiment "
        "its agents. The message names what is missing.",
        '''use std "agents"

experiment quick {
  runs 2
}
''', _RUNS_OK),
}
