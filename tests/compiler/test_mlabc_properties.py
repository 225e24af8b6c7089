"""Property tests: a damaged .mlab file gives located diagnostics, never an uncaught exception.

Every valid file (tasks/ and the golden inputs) is mutated: tokens deleted, inserted, swapped
or repeated; the bytes cut at any point; invalid UTF-8, NUL bytes or random text put in. The
mutant is written in place of the original inside a mirror of its folder (links to the other
entries), so `use` and file references still resolve, and is checked in-process. A mutant that
checks without errors must also plan a schema-valid build. MLABC_FUZZ_EXAMPLES=5000 searches
longer than the default 150 examples per test.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import jinja2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlabc.program.check import check_program
from mlabc.codes import CODES
from mlabc.diagnostics import render_all, to_json
from mlabc.program.emit import plan_build
from mlabc.program.loader import load_program

from mlabc_cases import valid_sources

SOURCES = valid_sources()
TEMPLATES = jinja2.Environment(undefined=jinja2.StrictUndefined)
BOUNDED = settings(max_examples=int(os.environ.get("MLABC_FUZZ_EXAMPLES", "150")), deadline=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TOKEN = re.compile(r'"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*|\s+|[A-Za-z_][\w-]*|-?\d[\w.%]*|>=|.')
VOCABULARY = [
    "{", "}", "[", "]", "(", ")", ",", "=", ":", ">=", ">", '"', '"""', "#", "\n", "-", "%", ".",
    "use", "std", "task", "actions", "action", "agent", "experiment", "extends", "title", "category",
    "problem", "starter", "read_only", "requires", "data", "from", "split", "seed", "id", "answers",
    "public", "private", "checksum", "limits", "hardware", "submission", "columns", "metric", "on",
    "baseline", "run", "because", "success", "improvement", "demo", "evaluator", "describe", "input",
    "returns", "does", "model", "show", "hide", "history", "steps", "summarize", "observations", "over",
    "chars", "retries", "format", "error", "prompt", "format_error", "respond", "section", "field", "role",
    "text", "json", "drop", "prompts", "before_step", "after_step", "tasks", "agents", "models", "runs",
    "override", "all", "default", "lite", "full", "required", "optional", "lower_is_better",
    "higher_is_better", "0", "-1", "3", "0.5", "1e9", "30m", "5h", "0s", "8GiB", "0B", "10%", "0%", "-5%",
    '"x"', '""', '"a:b"', '"{{ nope }}"', '"{% if %}"', '"""\n  {{ tools }}\n"""', "true", "false",
    "mae", "custom", "perplexity", "research", "core", "list_files", "understand_file", "retrieve_log",
    "tools", "tool", "tool_choice", "parallel", "fallback", "list_tools", "sections_required", "auto", "ordered",
    "off", "none", "turn", "problem", "search", "greedy", "mcts", "evolution", "drafts", "debug_probability",
    "max_debug_depth", "code_file", "score", "select", "holdout", "review", "draft", "improve", "debug",
]


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory) -> dict[Path, Path]:
    """For each valid source, the path its mutant is written to: a folder linking to its siblings."""
    root = tmp_path_factory.mktemp("mirrors")
    out = {}
    for index, source in enumerate(SOURCES):
        folder = root / str(index)
        folder.mkdir()
        for entry in source.parent.iterdir():
            if entry.name != source.name:
                (folder / entry.name).symlink_to(entry)
        out[source] = folder / source.name
    return out


def check_mutant(target: Path, data: bytes) -> None:
    """Check `data` as the file `target`: every diagnostic is registered and located; no exception."""
    target.write_bytes(data)
    program = load_program([target])
    compiled = check_program(program)
    for diagnostic in compiled.diagnostics:
        assert diagnostic.code in CODES, diagnostic
        assert diagnostic.span is not None, diagnostic
        assert diagnostic.span.line >= 1 and diagnostic.span.column >= 1, diagnostic
    render_all(compiled.diagnostics, program.sources)
    to_json(compiled.diagnostics)
    if compiled.ok:
        plan_build(compiled)  # raises when an artifact would violate its schema
        for agent in compiled.agents.values():
            for name, text in agent.templates.items():
                TEMPLATES.parse(text, name=name)  # generated templates must be valid Jinja too


def tokens_of(source: Path) -> list[str]:
    return TOKEN.findall(source.read_text(encoding="utf-8"))


@st.composite
def token_mutants(draw) -> tuple[Path, bytes]:
    source = draw(st.sampled_from(SOURCES))
    tokens = tokens_of(source)
    words = [t for t in tokens if not t.isspace()]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "insert", "swap", "repeat"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if op == "delete":
            del tokens[i]
        elif op == "insert":
            tokens.insert(i, " " + draw(st.sampled_from(VOCABULARY + words)) + " ")
        elif op == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        else:
            tokens.insert(i, tokens[i])
        if not tokens:
            break
    return source, "".join(tokens).encode("utf-8")


@st.composite
def cut_mutants(draw) -> tuple[Path, bytes]:
    source = draw(st.sampled_from(SOURCES))
    data = source.read_bytes()
    return source, data[: draw(st.integers(0, len(data)))]


@st.composite
def spliced_mutants(draw, pieces) -> tuple[Path, bytes]:
    """The source with one to three pieces drawn from `pieces` put in at random offsets."""
    source = draw(st.sampled_from(SOURCES))
    data = source.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(pieces) + data[at:]
    return source, data


INVALID_UTF8 = st.sampled_from([b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"])
NUL = st.sampled_from([b"\x00", b"\x00\x00", b'"\x00"', b"#\x00"])
UNICODE = st.text(min_size=1, max_size=8).map(lambda s: s.encode("utf-8", errors="surrogatepass"))


@BOUNDED
@given(mutant=token_mutants())
def test_token_mutations_are_diagnosed(mirrors, mutant):
    source, data = mutant
    check_mutant(mirrors[source], data)


@BOUNDED
@given(mutant=cut_mutants())
def test_truncation_at_any_byte_is_diagnosed(mirrors, mutant):
    source, data = mutant
    check_mutant(mirrors[source], data)


@BOUNDED
@given(mutant=spliced_mutants(INVALID_UTF8))
def test_invalid_utf8_is_diagnosed(mirrors, mutant):
    source, data = mutant
    check_mutant(mirrors[source], data)


@BOUNDED
@given(mutant=spliced_mutants(NUL))
def test_nul_bytes_are_diagnosed(mirrors, mutant):
    source, data = mutant
    check_mutant(mirrors[source], data)


@BOUNDED
@given(mutant=spliced_mutants(UNICODE))
def test_random_unicode_is_diagnosed(mirrors, mutant):
    source, data = mutant
    check_mutant(mirrors[source], data)


def test_every_source_is_valid(mirrors):
    """The unmutated sources check cleanly, so any diagnostic above comes from the mutation."""
    for source, target in mirrors.items():
        target.write_bytes(source.read_bytes())
        compiled = check_program(load_program([target]))
        assert compiled.ok, (source, render_all(compiled.diagnostics, compiled.program.sources))


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("[", "")])
def test_absurd_nesting_is_a_diagnostic(tmp_path, opening, closing):
    """Thousands of nested lists exhaust the transformer's recursion: a located E100, not a crash."""
    target = tmp_path / "deep.mlab"
    target.write_text("task t {\n  title " + opening * 5000 + closing * 5000 + "\n}\n", encoding="utf-8")
    compiled = check_program(load_program([target]))
    [diagnostic] = compiled.diagnostics
    assert diagnostic.code in ("E100", "E109")
    assert (diagnostic.span.line, diagnostic.span.column) == ((2, 108) if closing else (3, 1))
