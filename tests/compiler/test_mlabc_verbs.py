"""`mlabc` routes each verb to the module that declares its arguments (add_<verb>) and does it
(cmd_<verb>); it builds only the named verb's arguments, and every help is as before."""
import argparse
import subprocess
import sys

import pytest

from cli_help import fixed_width, help_text  # noqa: F401 (fixed_width: every test here at 100 columns)
from mlabc import cli


def test_the_top_level_help_lists_every_verb_without_building_their_arguments():
    assert help_text(cli._parser(None), ["--help"]) == help_text(cli._parser(cli.EVERY_VERB), ["--help"])
    code = ("import sys\nfrom mlabc.cli import main\nmain(['--help'])\n"
            "print('AUTHORING', 'mlabc.authoring.cli' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "AUTHORING False" in done.stdout, done.stdout[-500:] + done.stderr
    assert all(verb in done.stdout for verb in cli.SUMMARIES)


@pytest.mark.parametrize("verb", sorted(cli.SUMMARIES))
def test_each_verbs_arguments_are_its_modules_and_its_help_is_the_same_when_only_it_is_built(verb):
    module = cli._verb_module(verb)
    own = argparse.ArgumentParser(prog=f"mlabc {verb}")
    getattr(module, f"add_{verb}")(own)
    verbs = next(a.choices for a in cli._parser(verb)._actions if isinstance(a, argparse._SubParsersAction))
    assert [a.option_strings or a.dest for a in verbs[verb]._actions] == [a.option_strings or a.dest
                                                                          for a in own._actions]
    assert callable(getattr(module, f"cmd_{verb}"))
    lazy = help_text(cli._parser(cli._named_verb([verb, "--help"])), [verb, "--help"])
    assert lazy == help_text(cli._parser(cli.EVERY_VERB), [verb, "--help"]) and "usage: mlabc " + verb in lazy


def test_a_misspelled_option_of_an_authoring_verb_gets_its_own_option(capsys):
    assert cli.main(["fmt", "--chek"]) == 2
    assert "(did you mean `--check`?)" in capsys.readouterr().err
