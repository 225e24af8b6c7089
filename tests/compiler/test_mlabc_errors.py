"""The errors corpus: each errors/NAME.mlab is checked and must print exactly errors/NAME.expected.

The expected text is what `mlabc check NAME.mlab` writes to stderr when run inside errors/
(so paths are shown relative to it). A new case is a new pair of files; companions that the
cases `use` or name live in subfolders. `pytest --update-golden` rewrites the .expected files.
"""
from __future__ import annotations

import re

import pytest

from mlabc import cli
from mlabc.codes import CODES

from mlabc_cases import ERRORS_DIR, normalise_paths

CASES = sorted(p.stem for p in ERRORS_DIR.glob("*.mlab") if p.is_file())
HEADER = re.compile(r"^(?P<path>\S+?):(?P<line>\d+):(?P<column>\d+): error\[(?P<code>E\d{3})\]: ", re.MULTILINE)

# Codes that no .mlab file can provoke, with the reason. Every other code needs a case.
UNTRIGGERABLE: dict[str, str] = {
    "E912": "it compares with a previous build (`mlabc check --since BUILD`): tests/compiler/test_task_versions.py",
}


def expected_text(name: str) -> str:
    return (ERRORS_DIR / f"{name}.expected").read_text(encoding="utf-8")


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 45, f"only {len(CASES)} error cases"


@pytest.mark.parametrize("name", CASES)
def test_error_case(name, monkeypatch, capsys, update_golden):
    monkeypatch.chdir(ERRORS_DIR)
    status = cli.main(["check", f"{name}.mlab"])
    out, err = capsys.readouterr()
    actual = normalise_paths(err, ERRORS_DIR)
    if update_golden:
        (ERRORS_DIR / f"{name}.expected").write_text(actual, encoding="utf-8")
    assert status == 1, "a malformed file must exit with status 1"
    assert out == "", "diagnostics go to stderr only"
    assert actual == expected_text(name)

    headers = [m.groupdict() for m in HEADER.finditer(actual)]
    assert headers, "every diagnostic of the corpus is located"
    positions = [(h["path"], int(h["line"]), int(h["column"])) for h in headers]
    assert positions == sorted(positions), "diagnostics are sorted by position"
    assert actual.rstrip().endswith(f"{len(headers)} error" + ("s" if len(headers) != 1 else ""))
    named = re.match(r"E\d{3}", name)
    if named:
        assert f"error[{named.group(0)}]" in actual, f"{name} does not report the code its name promises"


def test_every_code_is_provoked_by_some_case():
    reported = set()
    for name in CASES:
        reported |= {m.group("code") for m in HEADER.finditer(expected_text(name))}
    assert set(UNTRIGGERABLE) <= set(CODES)
    missing = sorted(set(CODES) - reported - set(UNTRIGGERABLE))
    assert not missing, f"no error case reports {missing}"
    assert reported <= set(CODES), f"unregistered codes in the corpus: {sorted(reported - set(CODES))}"


def test_subprocess_output_matches_the_corpus(tmp_path):
    """The in-process check above prints what the installed `mlabc` command prints."""
    import subprocess
    import sys

    name = "E103-unknown-keyword-did-you-mean"
    run = subprocess.run([sys.executable, "-m", "mlabc", "check", f"{name}.mlab"], cwd=ERRORS_DIR,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == expected_text(name)
