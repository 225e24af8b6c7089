"""Golden tests: each folder of golden/ is a case; its lowered IR and its build must not change.

A case folder holds `input.mlab` (and the files it names), `ir.json` (the IR of every
declaration the program holds) and `build/` (what `mlabc compile` writes). A new case is a new
folder; `pytest --update-golden` writes the expected files of every case from the compiler.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mlabc import cli
from mlabc.program.check import check_program
from mlabc.diagnostics import render_all
from mlabc.program.loader import load_program

from mlabc_cases import GOLDEN_DIR, normalise_paths

CASES = sorted(p.name for p in GOLDEN_DIR.iterdir() if (p / "input.mlab").is_file())
SHA256 = re.compile(r"\b[0-9a-f]{64}\b")


def lowered_ir(case_dir: Path) -> str:
    """The IR of every task, agent (with its action table) and experiment, as stable JSON text."""
    compiled = check_program(load_program([Path("input.mlab")]))
    assert compiled.ok, render_all(compiled.diagnostics, compiled.program.sources)
    document = {
        "tasks": {name: {"file": path, "ir": ir} for name, (ir, path) in sorted(compiled.tasks.items())},
        "agents": {name: {"file": agent.path, "ir": agent.ir, "actions": agent.actions,
                          "templates": sorted(agent.templates)}
                   for name, agent in sorted(compiled.agents.items())},
        "experiments": {name: {"file": path, "ir": ir} for name, (ir, path) in sorted(compiled.experiments.items())},
    }
    return normalise_paths(json.dumps(document, indent=2, ensure_ascii=False) + "\n", case_dir)


def normalised_manifest(text: str) -> str:
    """The manifest without what varies between machines and versions: hashes and the version."""
    manifest = json.loads(text)
    manifest["compiler_version"] = "<version>"
    return SHA256.sub("<sha256>", json.dumps(manifest, indent=2, ensure_ascii=False)) + "\n"


def built_files(case_dir: Path, out: Path) -> dict[str, str]:
    """What `mlabc compile input.mlab -o OUT` writes, by relative path, paths normalised."""
    assert cli.main(["compile", "input.mlab", "-o", str(out)]) == 0
    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            relative = path.relative_to(out).as_posix()
            text = path.read_text(encoding="utf-8")
            if relative == "manifest.json":
                text = normalised_manifest(text)
            files[relative] = normalise_paths(text, case_dir)
    return files


def read_expected_build(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file()}


def write_expected_build(folder: Path, files: dict[str, str]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    for relative, text in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def test_there_are_golden_cases():
    assert len(CASES) >= 8, CASES


@pytest.mark.parametrize("case", CASES)
def test_golden_case(case, tmp_path, monkeypatch, capsys, update_golden):
    case_dir = GOLDEN_DIR / case
    monkeypatch.chdir(case_dir)
    ir_text = lowered_ir(case_dir)
    files = built_files(case_dir, tmp_path / "build")
    capsys.readouterr()
    if update_golden:
        (case_dir / "ir.json").write_text(ir_text, encoding="utf-8")
        write_expected_build(case_dir / "build", files)
    assert (case_dir / "ir.json").is_file(), f"no ir.json in {case}: run pytest --update-golden"
    assert ir_text == (case_dir / "ir.json").read_text(encoding="utf-8")
    expected = read_expected_build(case_dir / "build")
    assert sorted(files) == sorted(expected), "the build holds other files than expected"
    for relative, text in files.items():
        assert text == expected[relative], f"{case}: build/{relative} differs"


@pytest.mark.parametrize("case", CASES)
def test_windows_line_ends_give_the_same_ir(case, tmp_path, monkeypatch):
    copy = tmp_path / case
    shutil.copytree(GOLDEN_DIR / case, copy, ignore=shutil.ignore_patterns("build"))
    source = copy / "input.mlab"
    source.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.chdir(copy)
    assert lowered_ir(copy) == (GOLDEN_DIR / case / "ir.json").read_text(encoding="utf-8")
