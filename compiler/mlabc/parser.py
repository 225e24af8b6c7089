"""Text → parse tree → AST. The only module that knows lark."""
from __future__ import annotations

import difflib
import re
import functools
from typing import NamedTuple

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast as A
from .diagnostics import Diagnostic, DiagnosticError, Span, decode_utf8, reject_nul
from .resources import grammar_cache_path, grammar_path
from .transform import to_ast


@functools.cache
def mlab_parser(cached: bool = True) -> Lark:
    """The LALR parser of grammars/mlab.lark; its tables come from the user cache when they can
    (building them costs several times the rest of a one-file `mlabc check`)."""
    cache = grammar_cache_path() if cached else None
    return Lark.open(str(grammar_path()), parser="lalr", propagate_positions=True,
                     maybe_placeholders=True, cache=str(cache) if cache else False)


class Comment(NamedTuple):
    """A `# ...` comment: where it starts (1-based) and its text, `#` included."""

    line: int
    column: int
    text: str


# The terminals that may hold a `#` that starts no comment (grammars/mlab.lark: TEXT, STRING, COMMENT).
_QUOTED_OR_COMMENT = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*', re.S)


def comment_tokens(text: str) -> list[Comment]:
    """The comments of a text that parses, in order: the COMMENT tokens the lexer skips.

    In valid source a `"` only starts a string and a `#` outside one only starts a comment, so
    scanning for the leftmost string or comment finds exactly the tokens the lexer makes."""
    found = []
    for match in _QUOTED_OR_COMMENT.finditer(text):
        if match.group().startswith("#"):
            line, column = _position(text, match.start())
            found.append(Comment(line, column, match.group().rstrip()))
    return found


def parse_text(text: str, path: str, comments: list[Comment] | None = None) -> A.Module:
    """Parse one file's text into its AST, or raise DiagnosticError (one syntax error).

    When `comments` is a list, the file's comments are appended to it in order."""
    reject_nul(text, path)
    try:
        tree = mlab_parser().parse(text)
    except UnexpectedInput as error:
        first = syntax_diagnostic(error, text, path)
        raise DiagnosticError([first, *_later_syntax_errors(text, path, first.span.line)]) from None
    if comments is not None:
        comments.extend(comment_tokens(text))
    try:
        return to_ast(tree, path)
    except RecursionError:  # the transformer recurses once per nesting level
        raise DiagnosticError([_too_deep(text, path)]) from None
    except VisitError as error:  # a transformer bug, never the user's fault
        if isinstance(error.orig_exc, RecursionError):
            raise DiagnosticError([_too_deep(text, path)]) from None
        raise error.orig_exc from None


_DECLARATION = re.compile(r"(use|task|actions|agent|experiment)(?![A-Za-z0-9_-])")
_TRIPLE_QUOTE = re.compile(r'(?<!\\)"""')


def _declaration_starts(lines: list[str]) -> list[int]:
    """Line indexes (0-based) where a top-level declaration surely starts: its keyword at column 0
    right after a line that ended the one before (`}` or a `use` line at column 0), blank lines and
    comments between. Lines inside a triple-quoted text almost never look like that."""
    starts, ended = [], True
    for index, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if ended and _DECLARATION.match(line):
            starts.append(index)
        ended = line.rstrip() == "}" or line.startswith("use ")
    return starts


def _later_syntax_errors(text: str, path: str, first_line: int) -> list[Diagnostic]:
    """The syntax errors of the declarations after the one that failed, each parsed on its own.

    The parser stops at a file's first error; an author fixing a contributed file wants every
    broken declaration at once. Each declaration that starts after the first error's line is
    parsed alone (padded with newlines, so lines and columns stay the file's) and gives at most
    one diagnostic of its own.
    """
    lines = text.split("\n")
    starts = [i for i in _declaration_starts(lines) if i + 1 > first_line]
    found = []
    for start, end in zip(starts, [*starts[1:], len(lines)]):
        if len(_TRIPLE_QUOTE.findall("\n".join(lines[:start]))) % 2:
            continue  # inside a triple-quoted text that only looks like a declaration
        chunk = "\n" * start + "\n".join(lines[start:end])
        try:
            mlab_parser().parse(chunk)
        except UnexpectedInput as error:
            found.append(syntax_diagnostic(error, chunk, path))
    return found


_SANE_DEPTH = 100


def _too_deep(text: str, path: str) -> Diagnostic:
    """Where brackets first nest deeper than any real file does."""
    depth, at = 0, 0
    for offset, char in enumerate(text):
        depth += char in "[{"
        depth -= char in "]}"
        if depth > _SANE_DEPTH:
            at = offset
            break
    line, column = _position(text, at)
    return Diagnostic("E100", f"lists and blocks are nested more than {_SANE_DEPTH} levels deep here",
                      Span(path, line, column, line, column + 1), hint="flatten the value")


def parse_bytes(data: bytes, path: str, comments: list[Comment] | None = None) -> A.Module:
    """Decode (UTF-8, located diagnostic otherwise) and parse."""
    text = decode_utf8(data, path)
    if text.startswith("\ufeff"):
        text = text[1:]
    return parse_text(text, path, comments)


# ---- friendly syntax errors --------------------------------------------

def _literal(name: str) -> str | None:
    """The keyword a terminal stands for, if it is a plain keyword."""
    try:
        pattern = mlab_parser().get_terminal(name).pattern
    except KeyError:
        return None
    if pattern.type == "str" and pattern.value.replace("_", "").isalpha():
        return pattern.value
    return None


def _keywords(name: str) -> list[str]:
    """The keywords a terminal stands for: a plain one, or the words of one like (text|action|json)."""
    literal = _literal(name)
    if literal:
        return [literal]
    try:
        pattern = mlab_parser().get_terminal(name).pattern
    except KeyError:
        return []
    words = re.match(r"\(?([a-z_|]+)\)?\(\?!", pattern.value) if pattern.type == "re" else None
    return words.group(1).split("|") if words else []


@functools.cache
def _all_keywords() -> frozenset[str]:
    return frozenset(k for terminal in mlab_parser().terminals for k in _keywords(terminal.name))


_VALUE_TERMINALS = {"STRING", "TEXT", "INT", "FLOAT", "DURATION", "SIZE", "PERCENT", "NAME", "LSQB"}
_DECL_KEYWORDS = {"use", "task", "actions", "agent", "experiment"}
_DESCRIBE = {"RBRACE": "`}`", "LBRACE": "`{`", "RSQB": "`]`", "LSQB": "`[`", "$END": "end of file",
             "STRING": "a string", "TEXT": "a triple-quoted string", "NAME": "a name", "INT": "an integer",
             "FLOAT": "a number", "COLON": "`:`", "EQUAL": "`=`", "COMMA": "`,`", "LPAR": "`(`",
             "RPAR": "`)`", "DURATION": "a duration", "SIZE": "a size", "PERCENT": "a percentage",
             "MORETHAN": "`>`", "__ANON_0": "`>=`"}


def _describe_expected(expected: set[str]) -> list[str]:
    words = []
    for name in sorted(expected):
        keywords = _keywords(name)
        words.extend(f"`{k}`" for k in keywords) if keywords else words.append(_DESCRIBE.get(name, name.lower()))
    return sorted(set(words))


def _unclosed(text: str, upto: int) -> tuple[str, int] | None:
    """The innermost bracket opened before `upto` and never closed (strings and comments skipped)."""
    stack: list[tuple[str, int]] = []
    i, n = 0, min(upto, len(text))
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            i = n if j < 0 else j + 3
            continue
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c in "{[":
            stack.append((c, i))
        elif c in "}]" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def syntax_diagnostic(error: UnexpectedInput, text: str, path: str) -> Diagnostic:
    if isinstance(error, UnexpectedCharacters):
        return _bad_character(error, text, path)
    token = getattr(error, "token", None)
    if isinstance(error, UnexpectedEOF) or (token is not None and token.type == "$END"):
        return _early_end(text, path)
    assert isinstance(error, UnexpectedToken)
    return _bad_token(error, text, path)


def _bad_character(error: UnexpectedCharacters, text: str, path: str) -> Diagnostic:
    pos = error.pos_in_stream
    span = Span(path, error.line, error.column, error.line, error.column + 1)
    # an unclosed `"""` lexes as an empty string `""` followed by an unclosed `"`
    triple_start = next((start for start in (pos, pos - 2) if start >= 0 and text.startswith('"""', start)), None)
    if triple_start is not None:
        line, column = _position(text, triple_start)
        return Diagnostic("E102", "unterminated triple-quoted string", Span(path, line, column, line, column + 3),
                          hint='close it with """')
    if text[pos] == '"':
        return Diagnostic("E102", "unterminated string", span,
                          hint='close it with " on the same line, or use """ for text over several lines')
    char = text[pos]
    shown = repr(char) if not char.isprintable() or char.isspace() else f"`{char}`"
    allowed = set(error.allowed or ())
    if allowed and not allowed & _VALUE_TERMINALS:  # only punctuation fits here, e.g. `>=`
        hint = "expected " + ", ".join(_describe_expected(allowed))
    else:
        hint = "names use letters, digits, `_` and `-`; text goes in quotes"
    return Diagnostic("E105", f"unexpected character {shown}", span, hint=hint)


def _early_end(text: str, path: str) -> Diagnostic:
    opened = _unclosed(text, len(text))
    if opened:
        char, offset = opened
        line, column = _position(text, offset)
        code, closer = ("E101", "}") if char == "{" else ("E109", "]")
        what = "block" if char == "{" else "list"
        return Diagnostic(code, f"this {what} is never closed", Span(path, line, column, line, column + 1),
                          hint=f"add `{closer}` at its end")
    line, column = _position(text, len(text.rstrip()))
    return Diagnostic("E104", "the file ends in the middle of a declaration", Span(path, line, column))


def _bad_token(error: UnexpectedToken, text: str, path: str) -> Diagnostic:
    token: Token = error.token
    # `npm "..."` and `python "..."` are values only an external agent's requires takes: not offered
    # where any value fits
    expected = set(error.expected) - {"NPM", "PYTHON"}
    span = Span(path, token.line, token.column, token.end_line or token.line,
                token.end_column or token.column + 1)
    word = str(token)
    keywords = sorted({k for e in expected for k in _keywords(e)})
    wants_value = bool(expected & _VALUE_TERMINALS) and not keywords and token.type != "COMMA"
    if expected >= {"TASK", "AGENT"} and token.type == "NAME":
        guess = difflib.get_close_matches(word, sorted(_DECL_KEYWORDS), n=1)
        return Diagnostic("E110", f"`{word}` does not start a declaration", span,
                          hint=f"did you mean `{guess[0]}`?" if guess else
                          "declarations are: use, task, actions, agent, experiment")
    if expected == {"LBRACE"} or (expected <= {"LBRACE", "EXTENDS"} and "LBRACE" in expected):
        return Diagnostic("E108", f"expected `{{` before {_token_words(token)}", span)
    if token.type == "RBRACE" and "RBRACE" not in expected and _unclosed(text, token.start_pos or 0) is None:
        return Diagnostic("E100", "unexpected `}`: no block is open here", span,
                          hint="delete it, or look for a `{` missing before it")
    if wants_value:
        previous = _previous_word(text, token)
        opened = _unclosed(text, token.start_pos or 0)
        if "RSQB" in expected and opened and opened[0] == "[":
            return Diagnostic("E109", f"expected `]` to close the list before {_token_words(token)}", span)
        if expected == {"NAME"}:
            return Diagnostic("E107", f"`{previous}` needs a name here, found {_token_words(token)}", span,
                              hint="a name is letters, digits, `_` and `-`, starting with a letter")
        return Diagnostic("E107", f"`{previous}` needs a value here, found {_token_words(token)}", span,
                          hint="values are strings, numbers, durations (30m), sizes (8GiB), "
                               "percentages (10%), names or lists")
    if keywords and (token.type == "NAME" or _keywords(token.type)):
        guess = difflib.get_close_matches(word, keywords, n=1, cutoff=0.6)
        hint = f"did you mean `{guess[0]}`?" if guess else "expected one of: " + ", ".join(keywords)
        return Diagnostic("E103", f"unknown keyword `{word}` here", span, hint=hint)
    if token.type == "RBRACE" and "RBRACE" not in expected:
        previous = _previous_word(text, token)
        what = f"`{previous}`" if previous in _all_keywords() else "this entry"
        return Diagnostic("E107", f"{what} is incomplete before `}}`", span,
                          hint="expected " + ", ".join(_describe_expected(expected)))
    return Diagnostic("E100", f"did not expect {_token_words(token)} here", span,
                      hint="expected " + ", ".join(_describe_expected(expected)))


def _token_words(token: Token) -> str:
    if token.type in ("STRING", "TEXT"):
        return "a string"
    if token.type == "$END":
        return "end of file"
    return f"`{token}`"


def _previous_word(text: str, token: Token) -> str:
    """The keyword-ish word before the token, to name the incomplete entry."""
    before = text[: token.start_pos or 0].rstrip()
    start = len(before)
    while start > 0 and (before[start - 1].isalnum() or before[start - 1] in "_-"):
        start -= 1
    return before[start:] or before[-1:]
