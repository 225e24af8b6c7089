"""Long explanations of the value, file, template and reply-format diagnostics (E4xx–E7xx)."""
from __future__ import annotations

from .example import Explanation, example_task


def _agent(body: str, before: str = "") -> str:
    return 'use std "agents"\n\n' + before + "agent careful extends research {\n" + body + "}\n"


_EVALUATED = ('  metric   mae on "y"\n', '  metric   perplexity\n')


def _respond(*sections: str) -> str:
    return "  respond sections {\n" + "".join(f"    {s}\n" for s in sections) + "  }\n"


_PROMPT = '''  prompt """
    {{ tools }}
    {{ reply_format }}
    {{ history }}
    """
'''

_LEAN_SET = '''actions basic {
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

agent plain {
  actions basic
''' + _PROMPT + '''  respond sections {
    section "Action" action "The tool to use."
    section "Action Input" json "Its input as JSON."
  }
'''

_STD = 'use std "agents"\n\n'


def _search_agent(pattern: str) -> str:
    return (_STD + "agent my-tree extends tree-greedy {\n  search greedy {\n    drafts 3\n"
            f"    score  {pattern}\n  }}\n}}\n")

_TOOLS_PROMPT = '''  prompt """
    Solve the problem with the tools you are given.
{tools}    {{{{ reply_format }}}}
    """
'''

_TOOLS_RESPOND = '''  respond tools {
    section "Thought" role thought "What you will do now, and why."
  }
'''

_TOOL_SET = '''actions looks extends core {{
  action "2nd Look" {{
    describe "List a folder once more."
{tool}    input    dir_path: path "the folder"
    returns  "its entries"
    does     list_files
  }}
}}

'''

_TOOLS_AGENT = '''agent tooled extends research {
  actions looks
  show    ["2nd Look"]
''' + _TOOLS_PROMPT.format(tools="    {{ tools }}\n") + _TOOLS_RESPOND + "}\n"

_TWIN_SET = '''actions twins extends core {{
  action "List-Files" {{
    describe "List a folder, too."
{tool}    input    dir_path: path "the folder"
    returns  "its entries"
    does     list_files
  }}
}}

'''

_TWINS_AGENT = '''agent tooled extends research {
  actions twins
  show    ["List-Files"]
''' + _TOOLS_PROMPT.format(tools="    {{ tools }}\n") + _TOOLS_RESPOND + "}\n"

_PEEK = '''actions extra {
  action "Peek File" {
    describe "Show the start of a file."
    input    file_name: path "the file"
    returns  "its first characters"
    does     read_file(max_chars = 2000)
  }
}

'''

_ACTION = '''actions mine {
  action "List Files" {
    describe "List a folder of the workspace."
    input    dir_path: path "the folder"
    returns  "the names in it"
    does     %s
  }
}
'''

def _external(body: str) -> str:
    return "agent mine external {\n" + body + "}\n"


EXPLANATIONS: dict[str, Explanation] = {
    "E401": Explanation(
        "Each entry takes values of one type: `runs` an integer, `time` a duration such as 30m, "
        "`memory` a size such as 8GiB, `success improvement >=` a percentage, `title` a string, "
        "`read_only` a list of strings, .... The value given has another type. Quote text, leave "
        "numbers and units unquoted. In a .mlab.yaml file a mapping or list where the form wants "
        "something else is reported with this code too.",
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  runs   "two"\n}\n',
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  runs   2\n}\n'),
    "E402": Explanation(
        "`does` binds an action to a primitive of the runtime, and a hook (`before_step`, "
        "`after_step`) names one too; spec/primitives.json lists them all. The name given is not "
        "among them; the hint shows the closest.",
        _ACTION % "list_file", _ACTION % "list_files"),
    "E403": Explanation(
        "A setting inside a block is not one the block knows: limits take steps, time, "
        "script_timeout, memory, disk, tokens and cost; hardware takes cpus, gpus and memory; a model takes "
        "temperature, max_tokens, stop and top_p; a primitive takes the parameters listed for it in "
        "spec/primitives.json.",
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  limits { step 10 }\n}\n',
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  limits { steps 10 }\n}\n'),
    "E404": Explanation(
        "`metric` names a metric from the catalogue spec/metrics.json (mae, rmse, accuracy, ...), "
        "which says how submissions are scored and which direction is better. The name is not in "
        "the catalogue.",
        example_task(('metric   mae', 'metric   mea')), example_task()),
    "E405": Explanation(
        "The value has the right type but is not allowed here: a name outside the allowed set (a "
        "data variant other than lite and full, an unknown category or split), a number out of "
        "range (a test fraction must lie between 0 and 1), or a count of columns that the metric "
        "does not take.",
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  data   medium\n}\n',
        'use std "agents"\n\nexperiment quick {\n  agents [research]\n  data   lite\n}\n'),
    "E406": Explanation(
        "An action passes its inputs to its primitive, so it must declare exactly the inputs the "
        "primitive reads, with the same names and types (spec/primitives.json lists them); a missing, "
        "extra or differently typed input would fail at run time.",
        '''actions mine {
  action "Inspect Script Lines" {
    describe "Show some lines of a script."
    input    script_name: path "the script"
    input    start_line_number: int "the first line"
    returns  "the lines"
    does     inspect_lines
  }
}
''', '''actions mine {
  action "Inspect Script Lines" {
    describe "Show some lines of a script."
    input    script_name: path "the script"
    input    start_line_number: int "the first line"
    input    end_line_number: int "the last line"
    returns  "the lines"
    does     inspect_lines
  }
}
'''),
    "E407": Explanation(
        "Some primitives call a language model (understand_file, edit_script, reflection, ...); "
        "their action says which of the agent's models to use with `model main`, `model fast` or "
        "`model edit`. A primitive that calls no model takes no `model` line.",
        '''actions mine {
  action "Understand File" {
    describe "Ask questions about a file."
    input    file_name: path "the file"
    input    things_to_look_for: text "what to find"
    returns  "the answer"
    does     understand_file
  }
}
''', '''actions mine {
  action "Understand File" {
    describe "Ask questions about a file."
    input    file_name: path "the file"
    input    things_to_look_for: text "what to find"
    returns  "the answer"
    does     understand_file
    model    fast
  }
}
'''),
    "E408": Explanation(
        "A tabular metric reads each column it scores (`metric NAME on ...`) from the submission "
        "and from the answers. When the submission declares its columns (`submission FILE columns "
        "[...]`), every scored column must be one of them, and one of each data variant's `answers`; "
        "otherwise a file that follows the declaration could not be scored and one that breaks it "
        "would be.",
        example_task(('  metric   mae on "y"\n', '  submission "submission.csv" columns ["id", "y"]\n'
                      '  metric   mae on "target"\n')),
        example_task(('  metric   mae on "y"\n', '  submission "submission.csv" columns ["id", "y"]\n'
                      '  metric   mae on "y"\n'))),
    "E501": Explanation(
        "`starter` names the folder (relative to the task's file) whose files are copied into every "
        "run's workspace: the starter script and any files the agent begins with. It does not exist.",
        example_task(('starter  "env"', 'starter  "envs"')), example_task()),
    "E502": Explanation(
        "A data variant's source names a bundled file or folder (`from csv`, `from parquet`, "
        "`from folder`), relative to the task's file, and it is not there.",
        example_task(('csv "data.csv"', 'csv "dataset.csv"')), example_task()),
    "E503": Explanation(
        "`read_only` patterns protect workspace files from the agent's writes. A pattern that "
        "matches no starter file and no public data file protects nothing, and is almost always a "
        "typo.",
        example_task(extra='  read_only ["train.cvs"]\n'), example_task(extra='  read_only ["train.csv"]\n')),
    "E504": Explanation(
        "An escape hatch (`evaluator \"file.py:function\"` or `from generate \"file.py:function\"`) "
        "names a Python file, relative to the task's file, that does not exist.",
        example_task(_EVALUATED, extra='  evaluator "evaluation.py:score" because "perplexity needs the model"\n'),
        example_task(_EVALUATED, extra='  evaluator "evaluate.py:score" because "perplexity needs the model"\n')),
    "E505": Explanation(
        "The Python file of an escape hatch exists, but defines no top-level function with the "
        "name after the colon. mlabc reads the file without running it.",
        example_task(_EVALUATED, extra='  evaluator "evaluate.py:scores" because "perplexity needs the model"\n'),
        example_task(_EVALUATED, extra='  evaluator "evaluate.py:score" because "perplexity needs the model"\n')),
    "E506": Explanation(
        "The Python file of an escape hatch has a syntax error, so its functions cannot be found "
        "(and it could not run). The message gives Python's own description.",
        example_task(_EVALUATED, extra='  evaluator "broken.py:score" because "perplexity needs the model"\n'),
        example_task(_EVALUATED, extra='  evaluator "evaluate.py:score" because "perplexity needs the model"\n')),
    "E507": Explanation(
        "`demo` names a JSON file holding the demonstration that the keyless demo model plays: "
        "{\"format\": \"mlab-demonstration\", \"version\": 2, \"steps\": [{\"sections\": {ROLE: TEXT}, "
        "\"action\": NAME, \"input\": {...}}, ...]} (docs/tasks.md), or a version-1 list of reply strings. "
        "It must exist and follow that format.",
        example_task(extra='  demo     "demo.jsn"\n'), example_task(extra='  demo     "demo.json"\n')),
    "E508": Explanation(
        "`baseline run \"script\"` names the starter's script, which every run copies into the "
        "workspace and `mlab baseline` runs for the score to beat. The starter folder holds no such "
        "file, so the baseline could not be measured and a good submission would look like a failure. "
        "The path is relative to the starter folder.",
        example_task(('baseline run "train.py"', 'baseline run "trian.py"')), example_task()),
    "E509": Explanation(
        "The answer columns (`answers`), the `id` column and the column of a `split group` or "
        "`split time` must be columns of a bundled CSV table, as its header line names them; "
        "otherwise preparing the data fails before the agent can start.",
        example_task(('id      "id"', 'id      "ID"')), example_task()),
    "E510": Explanation(
        "A bundled CSV table is empty or holds only its header: there are no rows to train on or "
        "to score, and every run would end with an unscorable submission.",
        example_task(('csv "data.csv"', 'csv "header-only.csv"')), example_task()),
    "E511": Explanation(
        "A bundled CSV table must be UTF-8 text. The message gives the line and column of the first "
        "byte that is not; files saved as Latin-1 or Windows-1252 are the usual cause. Re-save the "
        "file as UTF-8 (or bundle it as Parquet).",
        example_task(('csv "data.csv"', 'csv "latin1.csv"')), example_task()),
    "E601": Explanation(
        "Prompts are Jinja templates, compiled when the agent is built. This one does not parse: "
        "typically a `{{` without `}}` or an `{% if %}` without `{% endif %}`.",
        _agent('  prompt """\n    {{ tools }\n    {{ reply_format }}\n    """\n'),
        _agent('  prompt """\n    {{ tools }}\n    {{ reply_format }}\n    """\n')),
    "E602": Explanation(
        "Each template receives a fixed set of variables (spec/template-context.json); an unknown "
        "one would render empty or fail at run time. The hint lists what this template receives.",
        _agent('  prompt """\n    {{ tool }}\n    {{ reply_format }}\n    """\n'),
        _agent('  prompt """\n    {{ tools }}\n    {{ reply_format }}\n    """\n')),
    "E603": Explanation(
        "A prompt or a section's instruction names an action that the program declares but that "
        "this agent cannot call (it belongs to another action set). The agent would try it and "
        "fail; name an action of its own set, or add the action to that set.",
        _agent('  prompt """\n    Use Peek File before you read a whole file.\n    {{ tools }}\n'
               '    {{ reply_format }}\n    """\n', before=_PEEK),
        _agent('  prompt """\n    Use Inspect Script Lines before you read a whole file.\n    {{ tools }}\n'
               '    {{ reply_format }}\n    """\n', before=_PEEK)),
    "E604": Explanation(
        "The runtime needs a prompt for every model call the agent can make: summarising long "
        "observations (`summarize_observation`), each model-backed action, each hook. One of them "
        "is neither declared in `prompts { ... }` nor inherited with `extends`.",
        'use std "agents"\n\n' + _LEAN_SET + "}\n",
        'use std "agents"\n\n' + _LEAN_SET
        + '  prompts {\n    summarize_observation "Summarise this for the agent: {{ observation }}"\n  }\n}\n'),
    "E605": Explanation(
        "`prompts { NAME ... }` provides the prompt that a primitive or hook asks for by NAME; no "
        "primitive or hook uses this name, so it would never be read. It is often misspelled.",
        _agent('  prompts {\n    summarise_observation "Summarise: {{ observation }}"\n  }\n'),
        _agent('  prompts {\n    summarize_observation "Summarise: {{ observation }}"\n  }\n')),
    "E701": Explanation(
        "The reply format tells the runtime how to find the action in a model's reply, so exactly "
        "one section (or JSON field) has the kind `action`.",
        _agent(_respond('section "Thought" role thought "What you think."',
                        'section "Tool" "The tool to use."',
                        'section "Action Input" json "Its input as JSON."')),
        _agent(_respond('section "Thought" role thought "What you think."',
                        'section "Tool" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."'))),
    "E702": Explanation(
        "The reply format needs exactly one section (or JSON field) of kind `json`: the one that "
        "holds the action's input.",
        _agent(_respond('section "Action" action "The tool to use."',
                        'section "Action Input" "Its input as JSON."')),
        _agent(_respond('section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."'))),
    "E703": Explanation(
        "Replies are split at section names without regard to case, so two sections whose names "
        "differ only in capitals (or are equal) make a reply ambiguous.",
        _agent(_respond('section "Thought" role thought "What you think."',
                        'section "thought" "What you think, again."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."')),
        _agent(_respond('section "Thought" role thought "What you think."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."'))),
    "E704": Explanation(
        "`drop section NAME` removes a section from the reply format the agent inherits; the "
        "inherited format has no section of that exact name.",
        _agent('  drop section "Fact check"\n'), _agent('  drop section "Fact Check"\n')),
    "E705": Explanation(
        "A section name starts a line of the reply (`Name: ...`), so it must be one non-empty line "
        "without a colon.",
        _agent(_respond('section "Plan:" role plan "Your plan."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."')),
        _agent(_respond('section "Plan" role plan "Your plan."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."'))),
    "E706": Explanation(
        "A section's `role` tells the runtime what the section holds (reflection, plan, fact-check, "
        "thought, criticism, speak), for traces and ablations. The role given is not one of them.",
        _agent(_respond('section "Plan" role planning "Your plan."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."')),
        _agent(_respond('section "Plan" role plan "Your plan."',
                        'section "Action" action "The tool to use."',
                        'section "Action Input" json "Its input as JSON."'))),
    "E707": Explanation(
        "With `respond tools` each shown action is sent to the model as a provider tool, named by the "
        "action's name in snake case (`List Files` is `list_files`) unless the action declares "
        "`tool \"NAME\"`. Providers accept only a letter or `_` first, then up to 63 letters, digits, `_` "
        "or `-`; this name breaks that rule. Declare a tool name the providers accept.",
        _STD + _TOOL_SET.format(tool="") + _TOOLS_AGENT,
        _STD + _TOOL_SET.format(tool='    tool     "second_look"\n') + _TOOLS_AGENT),
    "E708": Explanation(
        "A tool call names its tool, so two actions that a `respond tools` agent shows cannot share a "
        "tool name. Both names here give the same snake case; give one of them a `tool` name of its own.",
        _STD + _TWIN_SET.format(tool="") + _TWINS_AGENT,
        _STD + _TWIN_SET.format(tool='    tool     "list_folder"\n') + _TWINS_AGENT),
    "E709": Explanation(
        "A `respond tools` agent with a fallback format (`fallback sections` or `fallback json`, the "
        "default being sections) runs that text format when a model cannot take tools. Such a model "
        "sees the tools only where the prompt renders `{{ tools }}`, which is empty while the tools are "
        "sent natively. Render it, or declare `fallback none` when the agent must not run without tools.",
        _agent(_TOOLS_PROMPT.format(tools="") + _TOOLS_RESPOND),
        _agent(_TOOLS_PROMPT.format(tools="    {{ tools }}\n") + _TOOLS_RESPOND)),
    "E801": Explanation(
        "`score \"PATTERN\"` in a `search` block is a Python regular expression that the runtime runs over "
        "each node's output to read its validation score. This one does not compile.",
        _search_agent('"Validation score: ([-+0-9.eE]+"'),
        _search_agent('"Validation score: ([-+0-9.eE]+)"')),
    "E802": Explanation(
        "The score pattern's first capture group is the validation score, so the pattern needs one: put "
        "the part that matches the number in parentheses.",
        _search_agent('"Validation score: [-+0-9.eE]+"'),
        _search_agent('"Validation score: ([-+0-9.eE]+)"')),
    "E901": Explanation(
        "An external agent runs its `command` inside the sandbox, where it reaches mlab's model gateway "
        "and nothing else. An empty command would start nothing: write the shell command that starts the "
        "agent, as a Jinja template over the external context.",
        _external('    command ""\n'),
        _external('    command "{{ python }} -m my_agent --task-file {{ problem_file }}"\n')),
    "E902": Explanation(
        "`requires` lists the agent's Python requirements in PEP 508 form; mlab installs them into a "
        "cached environment of the agent's own, keyed by their digest, never into the workspace. This one "
        "does not parse as a requirement.",
        _external('    command  "{{ python }} -m my_agent"\n    requires ["my-agent = 1.0"]\n'),
        _external('    command  "{{ python }} -m my_agent"\n    requires ["my-agent==1.0"]\n')),
    "E913": Explanation(
        "An npm package in `requires` is installed once into the agent cache, keyed by its exact "
        "version, with the registry's integrity hashes recorded; a range or a tag would install whatever "
        "the registry holds on the day, so two runs of the same file could run different agents.",
        _external('    command  "codex exec --model {{ model }}"\n    requires [npm "@openai/codex@latest"]\n'),
        _external('    command  "codex exec --model {{ model }}"\n    requires [npm "@openai/codex@0.171.0"]\n')),
    "E914": Explanation(
        "`dialect` names the wire protocol the agent's model client speaks; the gateway answers it on the "
        "dialect's own paths. It must be one the gateway serves (spec/dialects.json lists them).",
        _external('    dialect chat-completions\n    command "my-agent --base-url {{ base_url }}"\n'),
        _external('    dialect chat\n    command "my-agent --base-url {{ base_url }}"\n')),
    "E915": Explanation(
        "An agent that declares its dialect must be pointed at the gateway by its command or its "
        "environment, in the form its client takes (`{{ base_url }}`); otherwise it calls its provider, "
        "which the sandbox cannot reach, and the run fails at its first call.",
        _external('    dialect chat\n    command "my-agent --model {{ model }}"\n'),
        _external('    dialect chat\n    command "my-agent --model {{ model }} --base-url {{ base_url }}"\n')),
    "E916": Explanation(
        "`python \"X.Y\"` in an agent's `requires` names the interpreter its environment is made with (an "
        "agent that needs a newer Python than the run's); mlab finds it on the machine when the run starts. "
        "It is a version, X.Y for any patch release or X.Y.Z for one, and named once.",
        _external('    command  "openhands --headless --task go"\n    requires [python "3.12+", "openhands==1.16.0"]\n'),
        _external('    command  "openhands --headless --task go"\n    requires [python "3.12", "openhands==1.16.0"]\n')),
    "E903": Explanation(
        "A declared model tier is only called when the agent is told its name at the gateway; neither "
        "the command nor an environment variable passes this tier, so its default could never be used. "
        "Pass it (`{{ models.fast }}`), or remove the entry.",
        _external('    command "{{ python }} -m my_agent --model {{ model }}"\n'
                  '    model   fast default "gpt-4o-mini"\n'),
        _external('    command "{{ python }} -m my_agent --model {{ model }} --cheap-model {{ models.fast }}"\n'
                  '    model   fast default "gpt-4o-mini"\n')),
    "E904": Explanation(
        "mlab enforces an external agent's model calls and its time from outside: the gateway counts "
        "steps, tokens and cost, and the run's clock stops the command. A script timeout, memory or disk "
        "limit is the task's, applied by the sandbox to everything the agent runs; it cannot be set here.",
        _external('    command "{{ python }} -m my_agent"\n    limits {\n        memory 4GB\n    }\n'),
        _external('    command "{{ python }} -m my_agent"\n    limits {\n        tokens 200000\n    }\n')),
    "E905": Explanation(
        "`extends` copies a parent's entries, which only make sense within one kind of agent: an external "
        "agent declares a command, an mlab agent a loop over actions. Extend an agent of the same kind.",
        'agent mine external {\n    command "{{ python }} -m my_agent"\n}\n\nagent child extends mine {\n'
        '    actions core\n}\n',
        'agent mine external {\n    command "{{ python }} -m my_agent"\n}\n\nagent child external extends mine {\n'
        '    env {\n        MY_AGENT_VERBOSE "1"\n    }\n}\n'),
    "E911": Explanation(
        "A task's `version` counts its scored revisions (1 when absent). Each version after the first "
        "has one entry in `changes` saying what changed and why, and no entry names a version the task "
        "has not reached; a known `issue` is `since` a version the task has reached and, once fixed, "
        "`fixed` in a later one.",
        example_task(extra='  version  2\n'),
        example_task(extra='  version  2\n  changes {\n    2 "reshuffled the ids" because "they leaked the order of y"\n  }\n')),
    "E912": Explanation(
        "`mlabc check --since BUILD` compares each task with the same task in a previous build. A change "
        "to a scored part (its data and split, metric, submission, success rule and baseline, or starter) "
        "makes scores before and after it incomparable, so it needs a new `version` with a `changes` "
        "entry; then reports keep the two versions apart. Here the test split changed and the version "
        "stayed.",
        example_task(("split   random 0.2 seed 1", "split   random 0.3 seed 1")),
        example_task(("split   random 0.2 seed 1", "split   random 0.3 seed 1"),
                     extra='  version  2\n  changes {\n    2 "a larger test split" because "0.2 left too few rows"\n  }\n'),
        since=example_task()),
}


def _canonical(text: str) -> str:
    from ..fmt import format_text

    return format_text(text, "example.mlab")


# Examples are shown as `mlabc fmt` would write them.
EXPLANATIONS = {code: Explanation(e.text, _canonical(e.wrong), _canonical(e.right), e.encoding, e.since)
                for code, e in EXPLANATIONS.items()}
