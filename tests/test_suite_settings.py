"""The suite's own settings: the README's command runs it in parallel workers with a duration
report, tests that share an expensive fixture stay on one worker, and the README says how long
the whole suite takes."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

from suite_groups import defines_shared_fixtures, group_of, slow_first, workers

REPO = Path(__file__).resolve().parents[1]


def pytest_settings() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_readme_command_runs_parallel_workers_and_prints_the_slowest_tests():
    document = pytest_settings()
    addopts = document["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert "-n" in addopts and addopts[addopts.index("-n") + 1] == "auto"
    assert "--dist" in addopts and addopts[addopts.index("--dist") + 1] == "loadgroup"
    assert any(re.fullmatch(r"--durations=\d+", option) for option in addopts), "CI's output keeps a duration report"
    test_extra = document["project"]["optional-dependencies"]["test"]
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in test_extra), \
        "`pip install -e '.[test]'` installs what -n needs"


def test_the_readme_says_how_long_the_whole_suite_takes():
    commands = (REPO / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].splitlines()
    assert commands[1].startswith("pip install -e '.[test]' && python -m pytest ")
    assert re.search(r"\(about \d+ minutes on 2 cores\)$", commands[1]), commands[1]


def test_the_whole_suite_gets_two_workers_or_more_and_one_file_none(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    assert workers(["tests"], tmp_path, cpus=1) == 2, "sandboxed tests wait: two workers share one core"
    assert workers(["tests"], tmp_path, cpus=4) == 4
    assert workers(["tests"], tmp_path, cpus=64) == 8
    assert workers(["tests/test_a.py"], tmp_path, cpus=4) == 0
    assert workers(["tests/test_a.py::test_x", "tests/test_a.py::test_y"], tmp_path, cpus=4) == 0
    assert workers(["tests/test_a.py", "tests"], tmp_path, cpus=4) == 4


def test_tests_sharing_an_expensive_fixture_get_one_group_and_the_rest_none():
    assert group_of("tests/reports/test_eval.py::test_x") == group_of("tests/reports/test_viewer.py::test_y") == "reports"
    assert group_of("tests/export/test_atif.py::test_x") == "export"
    demo = group_of("tests/tasks/test_demonstrations.py::test_the_demonstration_wins[clrs]")
    audit = group_of("tests/tasks/test_audits.py::test_lite_task_passes_its_audit[clrs]")
    assert demo == audit == "task-clrs"
    assert group_of("tests/tasks/test_audits.py::test_lite_task_passes_its_audit[babylm]") == "task-babylm"
    # a module with a module-scoped fixture of its own, and one without
    assert group_of("tests/search/test_tree_demo.py::test_x") == "tests/search/test_tree_demo.py"
    assert group_of("tests/agent/test_models.py::test_x") is None
    assert group_of("tests/test_bench_quick.py::test_the_quick_run_of_a_bench_script_ends_well[tasks.py]") is None


def test_the_scheduler_hands_a_group_to_one_worker_as_one_unit():
    from xdist.scheduler import LoadGroupScheduling

    from suite_groups import scheduler

    config = SimpleNamespace(option=SimpleNamespace(loadscopereorder=True, maxschedchunk=None),
                             getvalue={"tx": ["popen", "popen"]}.get)
    chosen = scheduler(config, log=None)
    assert isinstance(chosen, LoadGroupScheduling)
    assert chosen._split_scope("tests/reports/test_eval.py::test_x") == "reports"
    assert chosen._split_scope("tests/agent/test_models.py::test_x") == "tests/agent/test_models.py::test_x"
    assert chosen._split_scope("tests/agent/test_models.py::test_x@mine") == "mine", "an explicit group still counts"


def test_the_groups_name_fixtures_and_modules_that_still_exist():
    assert "def runs_dir(" in (REPO / "tests" / "reports" / "conftest.py").read_text(encoding="utf-8")
    assert "def std_runs(" in (REPO / "tests" / "export" / "conftest.py").read_text(encoding="utf-8")
    assert defines_shared_fixtures("tests/search/test_tree_demo.py")
    assert not defines_shared_fixtures("tests/agent/test_models.py")


def test_a_worker_is_handed_the_slow_tier_first_in_its_own_order():
    def marked(name, slow):
        return SimpleNamespace(name=name, get_closest_marker=lambda mark: object() if slow and mark == "slow" else None)

    items = [marked("a", False), marked("b", True), marked("c", False), marked("d", True)]
    assert [i.name for i in slow_first(items)] == ["b", "d", "a", "c"]



def test_a_missing_tool_skips_the_test_and_fails_it_under_ci(monkeypatch):
    import pytest

    from needs import missing, module, needs

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Chromium is not installed"):
        missing("Chromium is not installed")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true, and a tool this test needs is missing: no harbor"):
        missing("no harbor")
    with pytest.raises(pytest.fail.Exception, match="no_such_package_of_anyone"):
        module("no_such_package_of_anyone", "a test extra")
    with pytest.raises(pytest.fail.Exception, match="bubblewrap cannot start"):
        needs("bubblewrap cannot start a sandbox here")(lambda: None)()
    assert needs(None)(len) is len  # present: the test itself, unwrapped
    with pytest.raises(ImportError):  # mlab's own modules never skip: a broken import fails
        module("mlab.no_such_module", "never a skip")


# a reason that names a tool a test needs: such a skip goes through tests/needs.py, so it fails under CI=true
TOOL_WORDS = re.compile(r"bubblewrap|sandbox|chromium|harbor|\bnpm\b|textmate|pypi|pip install|extra",
                        re.IGNORECASE)


def test_every_skip_for_a_missing_tool_goes_through_needs():
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name in ("needs.py", "test_suite_settings.py"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(REPO)}:{number}"
            if "importorskip(" in line:  # mlab's modules must fail to import, others go through needs.module
                found.append(f"{where}: importorskip")
            elif re.search(r"pytest\.skip\(|skipif\(", line) and TOOL_WORDS.search(line):
                found.append(f"{where}: {line.strip()}")
    assert found == [], "skips that CI=true would not turn into failures (use tests/needs.py):\n" + "\n".join(found)


def test_ci_stops_when_it_cannot_install_a_tool(tmp_path):
    import shutil
    import subprocess

    bin_dir = tmp_path / "bin"  # a PATH with no bubblewrap, chromium or apt-get
    bin_dir.mkdir()
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    done = subprocess.run([shutil.which("bash"), str(REPO / ".ci" / "run")], capture_output=True, text=True,
                          env={"PATH": str(bin_dir), "HOME": str(tmp_path)}, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "ci: bubblewrap chromium missing and no apt-get to install them"
