"""The start both command lines share (`mlabc` and the runtime's `mlab`): parse, --version, no verb."""
from __future__ import annotations

import argparse


def parse_command(parser: argparse.ArgumentParser, argv: list[str] | None, program: str,
                  version: str) -> argparse.Namespace | int:
    """The parsed arguments of a verb to run, or the exit code when there is none: argparse's own
    (2 for a usage error, 0 for --help), 0 after printing --version, 2 after the help for no verb."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    if args.version:
        print(f"{program} {version}")
        return 0
    if args.verb is None:
        parser.print_help()
        return 2
    return args
