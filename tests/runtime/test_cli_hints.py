"""Every verb's hints: a misspelled option gets "did you mean" with the verb's own option, and an
option a message suggests is one the verb that prints it takes (or is quoted with its own verb,
as in "`mlab run --tokens`")."""
from __future__ import annotations

import argparse
import re

import pytest

from mlab import cli


def _verb_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"]


def _misspelled(option: str, others: list[str]) -> str:
    """The option with two neighbouring letters of its name swapped: no option, nor the start of one."""
    name = option[2:]
    for i in range(1, len(name) - 1):
        if name[i] != name[i + 1] and "-" not in name[i:i + 2]:
            wrong = "--" + name[:i] + name[i + 1] + name[i] + name[i + 2:]
            if not any(o.startswith(wrong) for o in others):
                return wrong
    return option + option[-1]  # a doubled last letter: `--plainn`


def _suggested(err: str) -> set[str]:
    """The options a message names, less the usage lines and those quoted after another verb."""
    text = "\n".join(line for line in err.splitlines() if not line.lstrip().startswith(("usage:", "[")))
    text = re.sub(r"`mlab [a-z-]+[^`]*`", "", text)
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


EVERY_OPTION = [(verb, option) for verb, parser in sorted(_verb_parsers(cli.build_parser()).items())
                for option in _long_options(parser)]


@pytest.mark.parametrize(("verb", "option"), EVERY_OPTION, ids=[f"{v} {o}" for v, o in EVERY_OPTION])
def test_a_misspelled_option_of_every_verb_gets_the_verbs_own_option(verb, option, capsys):
    parser = _verb_parsers(cli.build_parser())[verb]
    wrong = _misspelled(option, _long_options(parser))
    assert cli.main([verb, wrong, "x"]) == 2
    err = capsys.readouterr().err
    assert f"mlab {verb}: error: unrecognized arguments: {wrong} (did you mean `{option}`?)" in err, err


def test_the_readme_example_and_a_misspelled_verb(capsys):
    assert cli.main(["run", "house-price", "--modle", "openai/gpt-4o"]) == 2
    assert "mlab run: error: unrecognized arguments: --modle (did you mean `--model`?)" in capsys.readouterr().err
    assert cli.main(["lock", "--chek", "runs/x"]) == 2  # before argparse's "--check is required"
    assert "(did you mean `--check`?)" in capsys.readouterr().err
    assert cli.main(["sweeep", "smoke"]) == 2
    assert "invalid choice: 'sweeep' (did you mean `sweep`?" in capsys.readouterr().err


def test_the_compilers_verbs_get_it_too(capsys):
    from mlabc.cli import main

    assert main(["compile", "x.mlab", "--ouptut", "b"]) == 2
    assert "(did you mean `--output`?)" in capsys.readouterr().err


# each verb's messages that suggest options: a missing key, a misspelled option, a bad value
PROVOKED = [
    ("run", ["run", "house-price", "--model", "anthropic/claude-sonnet-4-5"]),
    ("run", ["run", "house-price", "--model", "openai/gpt-4o", "--fast-model", "anthropic/claude-haiku-4-5"]),
    ("sweep", ["sweep", "research-vs-tools", "--runs-dir", "RUNS"]),
    ("sweep", ["sweep", "smoke", "--json", "--runs-dir", "RUNS"]),
    ("sweep", ["sweep", "smoke", "--address", "auto", "--runs-dir", "RUNS"]),
    ("probe", ["probe", "house-price", "--model", "anthropic/claude-sonnet-4-5"]),
    ("drive", ["drive", "--actions", "a.json"]),
    ("eval", ["eval", "RUNS", "--at", "time=x"]),
]


@pytest.mark.parametrize(("verb", "argv"), PROVOKED, ids=[" ".join(a[:3]) for _, a in PROVOKED])
def test_every_option_a_verbs_message_suggests_is_one_of_that_verb(verb, argv, capsys, tmp_path, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "RUNS").mkdir()
    (tmp_path / "a.json").write_text("[]")
    assert cli.main([a.replace("RUNS", str(tmp_path / "RUNS")) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlab: "), err
    own = set(_long_options(_verb_parsers(cli.build_parser())[verb]))
    assert _suggested(err) - own == set(), err
