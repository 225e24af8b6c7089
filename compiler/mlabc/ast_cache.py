"""The ASTs of unchanged .mlab files, kept in the user cache so that a check parses only what changed.

A one-file `mlabc check` of a task also reads the standard library files it uses; parsing them
(and importing lark to do it) is most of the command's time. A file that parsed is stored as the
pickled AST under a key made of its path, its bytes and the code that turns text into an AST
(the grammar and the modules parser, transform, the ast package, diagnostics, units), so any change to
either parses afresh. A file that fails to parse is never stored: its diagnostics come from the
parser every time. Without a usable cache folder nothing is stored and every file is parsed.
"""
from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path

from . import __version__
from . import ast as A
from .resources import cache_root, grammar_path, store_in_cache

_CODE = ("parser.py", "transform.py", "diagnostics.py", "units.py", "ast_cache.py")


@functools.cache
def _code_digest() -> str:
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__).parent
    for path in (grammar_path(), *(here / name for name in _CODE), *sorted((here / "ast").glob("*.py"))):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _entry(data: bytes, path: str) -> Path:
    key = hashlib.sha256(b"\0".join((_code_digest().encode(), path.encode(), data))).hexdigest()
    return cache_root() / "mlabc" / "ast" / key[:2] / f"{key}.pickle"


def parse_module(data: bytes, path: str) -> A.Module:
    """The AST of one .mlab file's bytes (as parser.parse_bytes), from the cache when it has them;
    raises DiagnosticError as the parser does."""
    entry = _entry(data, path)
    try:
        with open(entry, "rb") as stream:
            module = pickle.load(stream)
        if isinstance(module, A.Module):
            return module
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError,
            RecursionError):
        pass  # absent, unreadable or written by other code: parse
    from .parser import parse_bytes

    module = parse_bytes(data, path)
    _store(entry, module)
    return module


def _store(entry: Path, module: A.Module) -> None:
    try:
        data = pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, RecursionError):
        return  # an AST pickle cannot hold: the next check parses the file again
    store_in_cache(entry, data)