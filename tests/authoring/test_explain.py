"""mlabc explain: every code has a long explanation whose wrong example gives it and right one is clean."""
from __future__ import annotations

import pytest

from mlabc.codes import CODES
from mlabc.authoring.explain.example import check_example
from mlabc.authoring.explain.lookup import explanations
from mlabc.authoring.fmt import format_text


def test_every_code_is_explained():
    assert sorted(explanations()) == sorted(CODES)


@pytest.mark.parametrize("code", sorted(explanations()))
def test_the_wrong_example_gives_the_code_and_only_it(code):
    found = explanations()[code]
    compiled = check_example(found.wrong, found.encoding, since=found.since)
    assert {d.code for d in compiled.diagnostics} == {code}, [d.message for d in compiled.diagnostics]


@pytest.mark.parametrize("code", sorted(explanations()))
def test_the_right_example_checks_clean_and_is_formatted(code):
    found = explanations()[code]
    compiled = check_example(found.right, since=found.since)
    assert compiled.diagnostics == []
    assert format_text(found.right, "example.mlab") == found.right


def test_mlabc_explain_prints_the_explanation_and_both_examples(mlabc):
    code, out, _ = mlabc("explain", "e302")
    assert code == 0
    assert out.startswith("E302: duplicate entry\n\nMost entries may appear once in a block")
    wrong, right = out.split("\nWrong:\n\n")[1].split("\nRight:\n\n")
    assert wrong.count("\n      runs   ") == 2 and right.count("\n      runs   ") == 1


def test_mlabc_explain_lists_codes_and_refuses_unknown_ones(mlabc):
    code, out, _ = mlabc("explain")
    assert code == 0 and len(out.splitlines()) == len(CODES) and "E401  wrong value type" in out
    code, _, err = mlabc("explain", "E999")
    assert code == 2 and "no diagnostic code 'E999'" in err


def test_mlabc_explain_has_topics_for_tool_calling_and_tree_search(mlabc):
    from mlabc.lower.agent import TOOLS_SETTINGS
    from mlabc.lower.search import POLICIES

    code, out, _ = mlabc("explain", "tools")
    assert code == 0 and out.startswith("tools: agents whose actions are provider tool calls")
    for key, allowed in TOOLS_SETTINGS.items():
        assert f"{key} " in out and allowed[0] in out, key
    code, out, _ = mlabc("explain", "search")
    assert code == 0 and out.startswith("search: tree-search agents")
    for table in POLICIES.values():
        for name, param in table.items():
            assert name in out and f"{param.default:g}" in out, name
