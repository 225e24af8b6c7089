"""The start both command lines share (`mlabc` and the runtime's `mlab`): parse, --version, no verb."""
from __future__ import annotations

import argparse
import sys


def parse_command(parser: argparse.ArgumentParser, argv: list[str] | None, program: str,
                  version: str) -> argparse.Namespace | int:
    """The parsed arguments of a verb to run, or the exit code when there is none: argparse's own
    (2 for a usage error, 0 for --help), 0 after printing --version, 2 after the help for no verb.
    A misspelled option is a usage error that names the verb's option closest to it."""
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        _refuse_misspelled(parser, words)
        args = parser.parse_args(words)
    except SystemExit as stop:
        return int(stop.code or 0)
    if args.version:
        print(f"{program} {version}")
        return 0
    if args.verb is None:
        parser.print_help()
        return 2
    return args


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings]


def _refuse_misspelled(parser: argparse.ArgumentParser, words: list[str]) -> None:
    """parser.error (exit 2) on the first option word that is none of its parser's options, nor the
    unique start of one (argparse takes those), but close to one: 'unrecognized arguments: --modle
    (did you mean `--model`?)', printed with the usage of the verb it was given to."""
    import difflib

    verbs = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    current = parser
    for word in words:
        if word == "--":
            return
        if current is parser and verbs and not word.startswith("-"):
            if word not in verbs:
                close = difflib.get_close_matches(word, list(verbs), n=1, cutoff=0.6)
                if close:
                    parser.error(f"argument COMMAND: invalid choice: {word!r} (did you mean `{close[0]}`? "
                                 f"choose from {', '.join(map(repr, verbs))})")
                return
            current = verbs[word]
            continue
        if not word.startswith("-") or word == "-" or word[1:2].isdigit() or word[1:2] == ".":
            continue
        name = word.split("=", 1)[0]
        known = _options(current)
        if name in known or (name.startswith("--") and sum(o.startswith(name) for o in known) == 1):
            continue
        close = difflib.get_close_matches(name, [o for o in known if o.startswith("--")] or known, n=1, cutoff=0.6)
        if close:
            current.error(f"unrecognized arguments: {word} (did you mean `{close[0]}`?)")
