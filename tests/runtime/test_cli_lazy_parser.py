"""`mlab` builds only the named verb's arguments, which that verb's module declares; what every
help and parse gives is unchanged."""
import argparse
import subprocess
import sys

import pytest

from cli_help import fixed_width, help_text  # noqa: F401 (fixed_width: every test here at 100 columns)
from mlab import cli


def test_the_top_level_help_is_the_same_without_the_verbs_arguments():
    assert help_text(cli.build_parser(None), ["--help"]) == help_text(cli.build_parser(cli.EVERY_VERB), ["--help"])


@pytest.mark.parametrize("verb", sorted(cli.COMMANDS))
def test_each_verbs_help_is_the_same_when_only_it_is_built(verb):
    lazy = help_text(cli.build_parser(cli._named_verb([verb, "--help"])), [verb, "--help"])
    assert lazy == help_text(cli.build_parser(cli.EVERY_VERB), [verb, "--help"])
    assert "usage: mlab " + verb in lazy and "options:" in lazy


def test_a_verbs_arguments_parse_as_with_the_whole_parser():
    argv = ["run", "house-price", "--steps", "4", "--time", "1h", "--model", "mlab/demo"]
    assert cli.build_parser(cli._named_verb(argv)).parse_args(argv) == cli.build_parser().parse_args(argv)


def test_an_unknown_verb_is_still_refused_with_the_verbs_listed(capsys):
    assert cli.main(["rnu"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'rnu'" in err and "'run'" in err


def test_the_help_is_laid_out_at_shutils_width_without_importing_it(monkeypatch):
    import shutil

    for columns in ("60", "100", "160"):
        monkeypatch.setenv("COLUMNS", columns)
        assert cli._columns() == shutil.get_terminal_size().columns
        plain = argparse.ArgumentParser(prog="mlab", description="d " * 80)
        ours = argparse.ArgumentParser(prog="mlab", description="d " * 80, formatter_class=cli._Formatter)
        assert ours.format_help() == plain.format_help()


def test_the_list_of_verbs_imports_no_verbs_module():
    code = ("import sys\nfrom mlab.cli import main\nmain(['--help'])\n"
            "print('VERBS', sorted(m for m in sys.modules if m.startswith('mlab.cli.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "VERBS []" in done.stdout, done.stdout[-500:] + done.stderr
    assert all(summary in " ".join(done.stdout.split()) for summary in cli.SUMMARIES.values())


@pytest.mark.parametrize("verb", sorted(cli.COMMANDS))
def test_each_verbs_options_are_declared_by_its_own_module(verb):
    """The verb's parser holds exactly what its module's add_arguments declares: the dispatcher adds
    none of a verb's options."""
    import importlib

    module = importlib.import_module(f"mlab.cli.{cli.COMMANDS[verb]}")
    own = argparse.ArgumentParser(prog=f"mlab {verb}", formatter_class=cli._Formatter)
    module.add_arguments(own)
    verbs = next(a.choices for a in cli.build_parser(verb)._actions if isinstance(a, argparse._SubParsersAction))
    built = verbs[verb]
    assert [a.option_strings or a.dest for a in built._actions] == [a.option_strings or a.dest for a in own._actions]
    assert (built.description, built.epilog) == (own.description, own.epilog)
    assert callable(module.main)
