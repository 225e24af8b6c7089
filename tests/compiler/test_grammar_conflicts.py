"""grammars/mlab.lark is conflict-free LALR(1): lark resolves a shift/reduce conflict silently
(preferring shift) and only logs it, so a new entry that made one would change what parses
without any error. Building the tables in debug mode must log no conflict."""
from __future__ import annotations

import io
import logging

from lark import Lark, logger

from mlabc.resources import grammar_path


def test_the_grammar_has_no_shift_reduce_conflict():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        Lark.open(str(grammar_path()), parser="lalr", propagate_positions=True, maybe_placeholders=True,
                  debug=True, cache=False)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert "conflict" not in stream.getvalue().lower(), stream.getvalue()
