"""The TextMate grammar (grammars/mlab.tmLanguage.json) tokenizes the example files as an editor would.

It runs VS Code's own engine (npm: vscode-textmate with vscode-oniguruma) through
textmate/tokenize.js. The test is skipped when node or those packages are missing (failed under
CI=true: tests/needs.py); install them
with `npm install --prefix tests/authoring/textmate --no-audit --no-fund` (versions pinned in
textmate/package.json).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from authoring_cases import GOLDEN, REPO, TASKS
from needs import missing

HARNESS = REPO / "tests" / "authoring" / "textmate"
GRAMMAR = REPO / "grammars" / "mlab.tmLanguage.json"
INSTALL = "npm install --prefix tests/authoring/textmate --no-audit --no-fund"


def _engine_missing() -> str | None:
    if shutil.which("node") is None:
        return f"node is not installed (the grammar test needs node and `{INSTALL}`)"
    for package in ("vscode-textmate", "vscode-oniguruma"):
        if not (HARNESS / "node_modules" / package / "package.json").is_file():
            return f"npm package {package} is missing: run `{INSTALL}`"
    return None


@pytest.fixture(scope="module", autouse=True)
def engine():
    problem = _engine_missing()
    if problem is not None:
        missing(problem)


@pytest.fixture(scope="module")
def tokens() -> dict[str, list]:
    files = sorted(TASKS.rglob("*.mlab")) + sorted(GOLDEN.rglob("*.mlab"))
    result = subprocess.run(["node", str(HARNESS / "tokenize.js"), str(GRAMMAR), *map(str, files)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return {str(Path(f).relative_to(REPO)): lines
            for f, lines in json.loads(result.stdout).items()}


def scopes_of(lines, text: str, line_start: str | None = None) -> list[str]:
    """The innermost scope of the first token equal to `text` (on a line starting with line_start)."""
    for line, toks in lines:
        if line_start is not None and not line.lstrip().startswith(line_start):
            continue
        for token, scopes in toks:
            if token == text:
                return scopes
    raise AssertionError(f"no token {text!r}")


def test_every_example_file_is_tokenized_without_gaps(tokens):
    assert "tasks/house-price.mlab" in tokens and "tasks/std/agents.mlab" in tokens
    for lines in tokens.values():
        for line, toks in lines:
            assert "".join(token for token, _ in toks) == line
            assert all(scopes[0] == "source.mlab" for _, scopes in toks)


def test_declarations_keywords_strings_and_comments(tokens):
    house = tokens["tasks/house-price.mlab"]
    assert scopes_of(house, "task")[-1] == "storage.type.declaration.mlab"
    assert scopes_of(house, "house-price")[-1] == "entity.name.type.mlab"
    assert scopes_of(house, "title")[-1] == "keyword.other.entry.mlab"
    assert scopes_of(house, "Predict the sale price of houses")[-1] == "string.quoted.double.mlab"
    assert scopes_of(house, "use")[-1] == "keyword.control.import.mlab"
    assert house[0][1][0][1][-1] == "comment.line.number-sign.mlab"
    trailing = next(toks for line, toks in house if "# 2,930" in line)
    assert trailing[-1][1][-1] == "comment.line.number-sign.mlab"
    problem = next(i for i, (line, _) in enumerate(house) if line.lstrip().startswith("problem"))
    assert house[problem + 1][1][0][1][-1] == "string.quoted.triple.mlab"
    assert scopes_of(house, "lower_is_better")[-1] == "constant.language.mlab"
    assert scopes_of(house, "lite")[-1] == "entity.name.section.mlab"


def test_numbers_with_units(tokens):
    house = tokens["tasks/house-price.mlab"]
    assert scopes_of(house, "5")[-1] == "constant.numeric.duration.mlab"  # script_timeout 5m
    assert scopes_of(house, "m", "limits")[-1] == "keyword.other.unit.duration.mlab"
    assert scopes_of(house, "GiB")[-1] == "keyword.other.unit.size.mlab"
    assert scopes_of(house, "%")[-1] == "keyword.other.unit.percent.mlab"
    assert scopes_of(house, "0.2")[-1] == "constant.numeric.mlab"


def test_jinja_inside_prompts(tokens):
    agents = tokens["tasks/std/agents.mlab"]
    tools = scopes_of(agents, "tools")
    assert tools[-3:] == ["string.quoted.triple.mlab", "meta.embedded.expression.jinja", "variable.other.jinja"]
    assert scopes_of(agents, "{{")[-1] == "punctuation.section.embedded.begin.jinja"
    assert scopes_of(agents, "if")[-1] == "keyword.control.jinja"
    assert "meta.embedded.statement.jinja" in scopes_of(agents, "endif")
    assert scopes_of(agents, "join")[-1] == "support.function.filter.jinja"


def test_actions_inputs_and_primitives(tokens):
    actions = tokens["tasks/std/actions.mlab"]
    assert scopes_of(actions, "dir_path")[-1] == "variable.parameter.input.mlab"
    assert scopes_of(actions, "path")[-1] == "support.type.mlab"
    assert scopes_of(actions, "read_file")[-1] == "entity.name.function.primitive.mlab"
    assert scopes_of(actions, "max_chars")[-1] == "variable.parameter.mlab"
    agents = tokens["tasks/std/agents.mlab"]
    assert scopes_of(agents, "research", "agent research-no-plan")[-1] == "entity.other.inherited-class.mlab"


def test_tool_calling_settings_are_keywords(tokens):
    agents = tokens["tasks/std/agents.mlab"]
    for word in ("tool_choice", "parallel", "fallback", "sections_required"):
        assert scopes_of(agents, word, word)[-1] == "keyword.other.entry.mlab", word
    assert scopes_of(agents, "tools", "respond tools")[-1] != "variable.other.jinja"
    assert scopes_of(agents, "search", "search greedy")[-1] == "keyword.other.entry.mlab"


def test_external_agents_declaration_and_keywords(tokens):
    external = tokens["tasks/std/external.mlab"]
    assert scopes_of(external, "external", "agent aide external")[-1] == "storage.modifier.external.mlab"
    assert scopes_of(external, "aide", "agent aide")[-1] == "entity.name.type.mlab"
    for word in ("command", "requires", "no_deps", "env"):
        assert scopes_of(external, word, word)[-1] == "keyword.other.entry.mlab", word


def test_column_constraints(tokens):
    fathomnet = tokens["tasks/fathomnet.mlab"]
    assert scopes_of(fathomnet, "column", "column")[-1] == "keyword.other.entry.mlab"
    assert scopes_of(fathomnet, "ranking", "column")[-1] == "support.type.mlab"
    assert scopes_of(fathomnet, "max", "column")[-1] == "keyword.other.entry.mlab"
    assert scopes_of(fathomnet, "from", "column")[-1] == "keyword.other.entry.mlab"
