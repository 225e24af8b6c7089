"""The YAML form: strict reading with located diagnostics, the same checks, mixed projects."""
from __future__ import annotations

import textwrap

import pytest

from mlabc.diagnostics import DiagnosticError
from mlabc.authoring.fmt import ast_shape
from mlabc.parser import parse_text
from mlabc.yaml.form import parse_yaml_text

from authoring_cases import REPO, build_of


def check_file(tmp_path, mlabc, name: str, text: str):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return mlabc("check", name, cwd=tmp_path)


STRICT_CASES = {
    "duplicate key": ("tasks:\n  t:\n    title: a\n    title: b\n",
                      "t.mlab.yaml:4:5: error[E302]: `title` is given twice in task `t`\n"
                      "   4 |     title: b\n     |     ^^^^^\n  = hint: the first is on line 3"),
    "unknown field": ("experiments:\n  quick:\n    agents: [research]\n    runz: 2\n",
                      "t.mlab.yaml:4:5: error[E103]: unknown keyword `runz` in experiment `quick`\n"
                      "   4 |     runz: 2\n     |     ^^^^\n  = hint: did you mean `runs`?"),
    "unknown top-level key": ("experiment:\n  quick: {agents: [research]}\n",
                              "t.mlab.yaml:1:1: error[E110]: `experiment` does not start a declaration\n"
                              "   1 | experiment:\n     | ^^^^^^^^^^\n  = hint: did you mean `experiments`?"),
    "mapping for a value": ("tasks:\n  t:\n    title: {text: a}\n",
                            "t.mlab.yaml:3:12: error[E401]: `title` takes a single value or a list, not a mapping"),
    "list for a block": ("tasks:\n  t:\n    data:\n      lite: [a]\n",
                         "t.mlab.yaml:4:13: error[E401]: data `lite` takes a mapping (key: value lines), not a list"),
    "no value": ("tasks:\n  t:\n    title:\n",
                 "t.mlab.yaml:3:5: error[E107]: `title` needs a value here"),
    "duplicate declaration": ("experiments:\n  q: {agents: [research]}\n  q: {agents: [react]}\n",
                              "t.mlab.yaml:3:3: error[E301]: `q` is declared twice in `experiments`"),
    "tab indentation": ("tasks:\n  t:\n\ttitle: x\n",
                        "t.mlab.yaml:3:1: error[E100]: invalid YAML: found character '\\t' that cannot start any token"),
    "two documents": ("tasks: {}\n---\nagents: {}\n",
                      "t.mlab.yaml:2:1: error[E100]: invalid YAML: a .mlab.yaml file holds one YAML document"),
    "custom tag": ("experiments:\n  q:\n    agents: !names [research]\n",
                   "t.mlab.yaml:3:13: error[E100]: YAML tag !names is not used in mlab files"),
    "not a mapping": ("- tasks\n", "t.mlab.yaml:1:1: error[E401]: a .mlab.yaml file holds a mapping with the keys"),
    "bad name": ('tasks:\n  "my task": {title: x}\n',
                 "t.mlab.yaml:2:3: error[E401]: 'my task' cannot be the name of a task"),
    "wrong part": ("tasks:\n  t:\n    baseline: {run: train.py, because: x}\n",
                   "t.mlab.yaml:3:5: error[E308]: `baseline` takes either `run` alone or both `value` and `because`"),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_structural_problems_are_located_diagnostics(case, tmp_path, mlabc):
    text, expected = STRICT_CASES[case]
    code, out, err = check_file(tmp_path, mlabc, "t.mlab.yaml", text)
    assert code == 1
    assert expected in err
    assert "Traceback" not in err


def test_all_structural_problems_of_a_file_are_reported_together(tmp_path, mlabc):
    text = "tasks:\n  t:\n    titel: a\n    title: {a: 1}\n    data: [x]\nagentz: {}\n"
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", text)
    assert code == 1
    assert [line.split(": error[")[1][:4] for line in err.splitlines() if ": error[" in line] == \
        ["E103", "E401", "E401", "E110"]
    assert err.rstrip().endswith("4 errors")


@pytest.mark.parametrize("entry, expected", [
    ("tasks:\n  t:\n    data:\n      lite:\n        from: 5\n",
     '`from` takes a mapping with one key, the kind of source: `{csv: "task/lite/data.csv"}`, not the number 5'),
    ("agents:\n  a:\n    respond: sections\n",
     "`respond` takes a mapping with one key, the reply format (`sections`, `json` or `tools`), not the string 'sections'"),
    ("actions:\n  s:\n    X:\n      does: [read_file]\n",
     "`does` takes a primitive name, or `{primitive: {parameter: value}}`, not a list"),
])
def test_a_one_key_entry_given_something_else_is_one_error(entry, expected, tmp_path, mlabc):
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", entry)
    assert code == 1 and expected in err
    assert err.count(": error[E401]:") == 1  # once, not also as "takes a mapping (key: value lines)"


def test_not_utf8_is_e106(tmp_path, mlabc):
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", "tasks:\n  t: {title: caf\xe9}\n".encode("latin-1"))
    assert code == 1 and "t.mlab.yaml:2:17: error[E106]: invalid UTF-8 byte 0xe9" in err


def test_value_types_are_judged_by_the_same_checks_as_mlab(tmp_path, mlabc):
    text = textwrap.dedent('''\
        use:
          - std: agents
        experiments:
          quick:
            agents: [research]
            runs: two
            limits: {time: 30 minutes, steps: 10}
        agents:
          careful:
            extends: research
            prompt: |
              Tools:
              {{ tool }}
              {{ reply_format }}
        ''')
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", text)
    assert code == 1
    assert "t.mlab.yaml:6:11: error[E401]: `runs` takes an integer, not the string 'two'" in err
    assert ("t.mlab.yaml:7:20: error[E401]: limit `time` takes a duration such as 30m or 5h, "
            "not the string '30 minutes'") in err
    assert "t.mlab.yaml:13:10: error[E602]: the prompt template of agent `careful` uses `tool`" in err
    assert "  13 |       {{ tool }}\n     |          ^^^^" in err


def test_the_yaml_form_gives_the_same_ast_as_the_mlab_form():
    mlab = textwrap.dedent('''\
        use std "agents"

        experiment quick {
          tasks  all
          agents [research, react]
          models fast ["openai/gpt-4o-mini"]
          runs   2
          data   lite
          limits { steps 10  time 10m  memory 2GiB }
          override house-price {
            runs 1
          }
        }
        ''')
    yaml = textwrap.dedent('''\
        use: [{std: agents}]
        experiments:
          quick:
            tasks: all
            agents: [research, react]
            models: {fast: [openai/gpt-4o-mini]}
            runs: 2
            data: lite
            limits: {steps: 10, time: 10m, memory: 2GiB}
            override:
              house-price: {runs: 1}
        ''')
    assert ast_shape(parse_yaml_text(yaml, "x.mlab.yaml")) == ast_shape(parse_text(mlab, "x.mlab"))


def test_quoting_keeps_a_string_a_string():
    module = parse_yaml_text('experiments:\n  q:\n    agents: [research]\n    runs: "2"\n'
                             '    limits: {time: "30m"}\n', "x.mlab.yaml")
    entries = {type(e).__name__: e for e in module.decls[0].entries}
    assert type(entries["ExpRuns"].value).__name__ == "Str"
    assert type(entries["Limits"].items[0].value).__name__ == "Str"


def test_a_project_may_mix_both_forms_and_use_across_them(tmp_path, mlabc):
    (tmp_path / "agents.mlab.yaml").write_text(textwrap.dedent('''\
        use: [{std: agents}]
        agents:
          brief:
            extends: research
            history: 1
        '''))
    (tmp_path / "runs.mlab").write_text(textwrap.dedent('''\
        use "agents"
        experiment quick {
          agents [brief]
        }
        '''))
    (tmp_path / "more.mlab.yaml").write_text('use: ["runs.mlab"]\nexperiments:\n  again: {agents: [brief, research]}\n')
    code, out, err = mlabc("check", ".", cwd=tmp_path)
    assert (code, err) == (0, "")
    assert out == "ok: 5 files, 0 tasks, 15 agents, 2 experiments\n"
    code, out, _ = mlabc("compile", ".", "-o", "build", cwd=tmp_path)
    assert code == 0
    assert (tmp_path / "build" / "agents" / "brief" / "agent.json").is_file()
    assert (tmp_path / "build" / "experiments" / "again.yaml").is_file()


def test_yaml_diagnostics_stop_the_file_like_a_syntax_error():
    with pytest.raises(DiagnosticError) as caught:
        parse_yaml_text("tasks:\n  t:\n    nope: 1\n", "x.mlab.yaml")
    assert [d.code for d in caught.value.diagnostics] == ["E103"]


def test_a_task_in_yaml_builds_like_its_mlab_twin(tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "train.py").write_text("print(1)\n")
    (tmp_path / "data.csv").write_text("id,x,y\n1,1,2\n2,2,4\n3,3,6\n4,4,8\n5,5,10\n")
    (tmp_path / "a.mlab").write_text(textwrap.dedent('''\
        task toy {
          title    "Predict y"
          category canonical
          problem  """
            Predict y from x.
            Write submission.csv.
            """
          starter  "env"
          data lite {
            from    csv "data.csv"
            split   random 20% seed 3
            id      "id"
            answers ["y"]
            public  ["train.csv", "test.csv"]
            private ["answers.csv"]
          }
          metric     rmse on "y"
          baseline   0.5 because "a guess"
          success    improvement >= 5%
          hardware   { cpus 2  gpus 1 optional  memory 1GiB }
        }
        '''))
    (tmp_path / "b.mlab.yaml").write_text(textwrap.dedent('''\
        tasks:
          toy:
            title: Predict y
            category: canonical
            problem: |-
              Predict y from x.
              Write submission.csv.
            starter: env
            data:
              lite:
                from: {csv: data.csv}
                split: {method: random, fraction: 20%, seed: 3}
                id: id
                answers: [y]
                public: [train.csv, test.csv]
                private: [answers.csv]
            metric: {name: rmse, on: y}
            baseline: {value: 0.5, because: a guess}
            success: {improvement: 5%}
            hardware: {cpus: 2, gpus: {value: 1, need: optional}, memory: 1GiB}
        '''))
    mlab_build, yaml_build = build_of([tmp_path / "a.mlab"]), build_of([tmp_path / "b.mlab.yaml"])
    assert "diagnostics" not in mlab_build, mlab_build
    assert mlab_build == yaml_build


def test_the_example_of_docs_authoring_checks_clean(repo_copy, mlabc):
    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    example = text.split("```yaml\n# house-price.mlab.yaml\n", 1)[1].split("```", 1)[0]
    (repo_copy / "tasks" / "example.mlab.yaml").write_text(example)
    code, out, err = mlabc("check", "tasks/example.mlab.yaml", cwd=repo_copy)
    assert (code, err) == (0, "")
    assert out.startswith("ok: 3 files, 1 task, 16 agents, 1 experiment")


def test_metric_parameters_in_yaml_are_checked_like_mlab(tmp_path, mlabc):
    golden = REPO / "tests" / "compiler" / "golden" / "metric-params"
    text = (golden / "input.mlab").read_text(encoding="utf-8")
    (tmp_path / "t.mlab").write_text(text.replace('average = "macro"', 'averge = "macro", k = 3'))
    assert mlabc("convert", "t.mlab", cwd=tmp_path)[0] == 0
    (tmp_path / "t.mlab").unlink()
    converted = (tmp_path / "t.mlab.yaml").read_text(encoding="utf-8")
    assert "params: {averge: macro, k: 3}" in converted
    code, _, err = mlabc("check", "t.mlab.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in err
    assert "error[E403]: metric `f1` has no parameter `averge`" in err and "did you mean `average`?" in err
    assert "error[E403]: metric `f1` has no parameter `k`" in err
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", converted.replace("params: {averge: macro, k: 3}",
                                                                                "params: [macro]"))
    assert code == 1 and "Traceback" not in err and "E401" in err


def test_column_constraints_read_the_same_in_both_forms():
    mlab = textwrap.dedent('''\
        task t {
          submission "submission.csv" columns ["id", "items", "age", "p", "label", "price"] {
            column "items" ranking max 20 from "key.csv:id"
            column "age"   integer from 0 to 120
            column "p"     probability
            column "label" label from ["0", "1"]
            column "price" number from 0.5
          }
        }
        ''')
    yaml = textwrap.dedent('''\
        tasks:
          t:
            submission:
              file: submission.csv
              columns: [id, items, age, p, label, price]
              column:
                items: {kind: ranking, max: 20, from: "key.csv:id"}
                age: {kind: integer, from: 0, to: 120}
                p: probability
                label: {kind: label, from: ["0", "1"]}
                price: {kind: number, from: 0.5}
        ''')
    assert ast_shape(parse_yaml_text(yaml, "x.mlab.yaml")) == ast_shape(parse_text(mlab, "x.mlab"))


def test_a_column_constraint_in_yaml_is_checked_like_mlab(tmp_path, mlabc):
    text = ("tasks:\n  t:\n    submission:\n      file: s.csv\n      columns: [id, y]\n      column:\n"
            "        y: {kind: rankng, from: [a]}\n        z: probability\n")
    code, _, err = check_file(tmp_path, mlabc, "t.mlab.yaml", text)
    assert code == 1
    assert "t.mlab.yaml:7:19: error[E517]: unknown constraint `rankng` on column `y`" in err
    assert "t.mlab.yaml:8:9: error[E516]: constraint on column `z`, which the submission does not declare" in err
