"""The `mlabc` command: exit codes, JSON output, `schema`, reproducible and schema-valid builds,
and a start-up that imports none of the heavy libraries."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from mlabc import cli

from mlabc_cases import ERRORS_DIR, GOLDEN_DIR, REPO_ROOT, REPO_TASKS

SPEC = REPO_ROOT / "spec"
BAD_FILE = ERRORS_DIR / "all-errors-sorted-by-position.mlab"
MINIMAL = GOLDEN_DIR / "minimal-task"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def minimal_case(tmp_path, monkeypatch) -> Path:
    """A copy of the minimal golden case as the working directory."""
    case = tmp_path / "case"
    shutil.copytree(MINIMAL, case, ignore=shutil.ignore_patterns("build", "ir.json"))
    monkeypatch.chdir(case)
    return case


# ---- exit codes -----------------------------------------------------------

def test_check_of_the_bundled_tasks_exits_0(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    status, out, err = run_cli(capsys, "check")
    assert status == 0, err
    assert out.startswith("ok: ") and err == ""


def test_diagnostics_exit_1(capsys):
    status, out, err = run_cli(capsys, "check", str(BAD_FILE))
    assert status == 1
    assert "error[E305]" in err and err.rstrip().endswith("7 errors")


@pytest.mark.parametrize("argv", [
    ["check", "--no-such-option"],
    ["frobnicate"],
    [],
    ["check", "--format", "xml"],
    ["schema", "no-such-schema"],
])
def test_usage_errors_exit_2(capsys, argv):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert "usage: mlabc" in out + err or "no schema named" in err


def test_missing_path_exits_3(capsys, tmp_path):
    status, out, err = run_cli(capsys, "check", str(tmp_path / "nowhere.mlab"))
    assert status == 3
    assert err.startswith("mlabc: no such file or folder: ") and "nowhere.mlab" in err


def test_folder_without_mlab_files_exits_3(capsys, tmp_path):
    status, out, err = run_cli(capsys, "check", str(tmp_path))
    assert status == 3
    assert "no .mlab files" in err


def test_compile_refuses_a_non_empty_folder_that_is_no_build(capsys, minimal_case, tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not delete")
    status, out, err = run_cli(capsys, "compile", "input.mlab", "-o", str(precious))
    assert status == 3
    assert "refusing to overwrite" in err
    assert tree_bytes(precious) == {"thesis.tex": b"do not delete"}


def test_compile_refuses_an_output_that_is_a_file(capsys, minimal_case, tmp_path):
    target = tmp_path / "build.txt"
    target.write_text("x")
    status, out, err = run_cli(capsys, "compile", "input.mlab", "-o", str(target))
    assert status == 3
    assert "not a folder" in err


def test_compile_with_diagnostics_exits_1_and_writes_nothing(capsys, tmp_path):
    status, out, err = run_cli(capsys, "compile", str(BAD_FILE), "-o", str(tmp_path / "out"))
    assert status == 1
    assert not (tmp_path / "out").exists()


# ---- output formats ---------------------------------------------------------

def test_json_format_of_diagnostics(capsys):
    status, out, err = run_cli(capsys, "check", str(BAD_FILE), "--format", "json")
    assert status == 1 and err == ""
    report = json.loads(out)
    assert set(report) == {"diagnostics", "errors"}
    assert report["errors"] == len(report["diagnostics"]) == 7
    for item in report["diagnostics"]:
        assert set(item) == {"code", "severity", "message", "hint", "path", "line", "column", "end_line",
                             "end_column"}
        assert item["severity"] == "error" and item["code"].startswith("E")
        assert item["path"].endswith("all-errors-sorted-by-position.mlab")
        assert item["line"] >= 1 and item["column"] >= 1
    first = report["diagnostics"][0]
    assert (first["code"], first["line"], first["column"], first["end_column"]) == ("E305", 4, 10, 17)


def test_json_format_when_all_is_well(capsys, minimal_case):
    status, out, err = run_cli(capsys, "check", "--format", "json", "input.mlab")
    assert status == 0 and err == ""
    assert json.loads(out) == {"diagnostics": [], "errors": 0}


def test_compile_defaults_to_build_in_the_working_directory(capsys, minimal_case):
    status, out, err = run_cli(capsys, "compile", "input.mlab")
    assert status == 0, err
    assert out == "compiled 1 task, 0 agents, 0 experiments into build/\n"
    assert (minimal_case / "build" / "tasks" / "minimal" / "task.yaml").is_file()


# ---- schema -----------------------------------------------------------------

def test_schema_lists_the_schemas_of_spec(capsys):
    status, out, err = run_cli(capsys, "schema")
    assert status == 0
    assert out.split() == sorted(p.name[: -len(".schema.json")] for p in SPEC.glob("*.schema.json"))
    assert {"task", "agent", "actions", "experiment", "manifest"} <= set(out.split())


@pytest.mark.parametrize("name", ["task", "agent", "actions", "experiment", "manifest"])
def test_schema_prints_the_schema(capsys, name):
    status, out, err = run_cli(capsys, "schema", name)
    assert status == 0
    assert json.loads(out) == json.loads((SPEC / f"{name}.schema.json").read_text(encoding="utf-8"))


# ---- the build --------------------------------------------------------------

@pytest.fixture(scope="module")
def bundled_build(tmp_path_factory) -> Path:
    """The bundled tasks compiled once for the tests below."""
    out = tmp_path_factory.mktemp("bundled") / "build"
    assert cli.main(["compile", str(REPO_TASKS), "-o", str(out)]) == 0
    return out


def test_recompiling_gives_byte_identical_output(bundled_build, tmp_path, capsys):
    again = tmp_path / "again"
    assert cli.main(["compile", str(REPO_TASKS), "-o", str(again)]) == 0
    assert cli.main(["compile", str(REPO_TASKS), "-o", str(again)]) == 0  # over its own earlier build
    capsys.readouterr()
    assert tree_bytes(again) == tree_bytes(bundled_build)


def test_recompiling_replaces_the_build_but_keeps_other_files(capsys, minimal_case):
    assert cli.main(["compile", "input.mlab", "-o", "out"]) == 0
    (minimal_case / "out" / "agents" / "stale").mkdir(parents=True)
    (minimal_case / "out" / "agents" / "stale" / "agent.json").write_text("{}")
    (minimal_case / "out" / "notes.txt").write_text("mine")
    assert cli.main(["compile", "input.mlab", "-o", "out"]) == 0
    capsys.readouterr()
    assert not (minimal_case / "out" / "agents" / "stale").exists()
    assert (minimal_case / "out" / "notes.txt").read_text() == "mine"


def _schema_validator(name: str):
    document = json.loads((SPEC / f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(document)(document)


def _artifact_schema(relative: str) -> str | None:
    parts = relative.split("/")
    if relative == "manifest.json":
        return "manifest"
    if parts[0] == "tasks" and parts[-1] == "task.yaml":
        return "task"
    if parts[0] == "experiments" and relative.endswith(".yaml"):
        return "experiment"
    if parts[0] == "agents" and parts[-1] in ("agent.json", "actions.json"):
        return parts[-1][: -len(".json")]
    return None


def test_the_build_validates_against_spec(bundled_build):
    yaml = YAML(typ="safe")
    checked = set()
    for relative, data in tree_bytes(bundled_build).items():
        name = _artifact_schema(relative)
        if name is None:
            assert relative.startswith("agents/") and "/templates/" in relative and relative.endswith(".j2"), relative
            continue
        text = data.decode("utf-8")
        document = yaml.load(text) if relative.endswith(".yaml") else json.loads(text)
        errors = [e.message for e in _schema_validator(name).iter_errors(document)]
        assert not errors, (relative, errors)
        assert document["schema"] == json.loads((SPEC / f"{name}.schema.json").read_text())["$id"]
        checked.add(name)
    assert checked == {"task", "agent", "actions", "experiment", "manifest"}


def test_the_manifest_hashes_what_was_built_and_read(bundled_build):
    manifest = json.loads((bundled_build / "manifest.json").read_text(encoding="utf-8"))
    built = tree_bytes(bundled_build)
    del built["manifest.json"]
    assert set(manifest["artifacts"]) == set(built)
    for relative, digest in manifest["artifacts"].items():
        assert hashlib.sha256(built[relative]).hexdigest() == digest, relative
    for source, digest in {**manifest["sources"], **manifest["inputs"]}.items():
        assert hashlib.sha256(Path(source).read_bytes()).hexdigest() == digest, source
    assert Path(manifest["tasks"]["house-price"]["source"]) == (REPO_TASKS / "house-price.mlab").resolve()


# ---- start-up ---------------------------------------------------------------

HEAVY = "sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'pandas', 'sklearn'))"


@pytest.mark.parametrize("argv", [["check", "tasks"], ["--help"]])
def test_start_up_imports_no_heavy_library(argv):
    code = f"import mlabc.cli, sys; mlabc.cli.main({argv!r}); print({HEAVY})"
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"


def test_help_in_a_subprocess():
    run = subprocess.run([sys.executable, "-m", "mlabc", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: mlabc")
    for verb in ("check", "compile", "schema"):
        assert verb in run.stdout
    assert "exit codes: 0 ok, 1 diagnostics, 2 usage, 3 I/O" in run.stdout


@pytest.mark.parametrize("paths, status", [([], 0), ([str(BAD_FILE)], 1),
                                           ([str(REPO_TASKS / "house-price.mlab"), "nowhere.mlab"], 3)],
                         ids=["default", "diagnostics", "missing"])
def test_a_check_without_options_reads_as_argparse_reads_it(capsys, monkeypatch, paths, status):
    """`mlabc check PATH...` skips building the parser of every verb; what it prints and returns
    is what the same command with an option for argparse to parse (the default format) gives."""
    monkeypatch.chdir(REPO_ROOT)
    plain = run_cli(capsys, "check", *paths)
    assert plain == run_cli(capsys, "check", "--format", "text", *paths)
    assert plain[0] == status
    assert cli._plain_check(["check", *paths]) is not None and cli._plain_check(["check", "--json", *paths]) is None


def test_a_one_file_check_does_without_argparse_and_the_writing_of_caches():
    task = REPO_TASKS / "house-price.mlab"
    code = ("import mlabc.cli, sys; mlabc.cli.main(['check', sys.argv[1]]); "
            "print(sorted(m for m in ('argparse', 'tempfile', 'difflib', 'lark', 'jinja2') if m in sys.modules))")
    # the first check may fill the caches; a new process then reads them
    subprocess.run([sys.executable, "-c", code, str(task)], cwd=REPO_ROOT, capture_output=True, timeout=120)
    run = subprocess.run([sys.executable, "-c", code, str(task)], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.splitlines()[0] == "ok: 3 files, 1 task, 14 agents, 0 experiments"
    assert run.stdout.splitlines()[-1] == "[]", run.stdout
