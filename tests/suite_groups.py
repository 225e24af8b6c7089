"""Which tests pytest-xdist must keep on one worker, how many workers, and the order of a worker's tests.

Every worker is a process of its own: a session- or module-scoped fixture is made once per worker
that runs a test using it. Tests that share something expensive therefore form one group, which
goes to one worker as a whole; the rest are spread one by one. The groups are decided from the
test's node id alone, since pytest-xdist's scheduler (in the controlling process) sees only those
(an `xdist_group` mark does not reach it under pytest 9: the worker's renaming of node ids, which
carries the mark, has no effect there). Imported by the root conftest.py (a conftest cannot be
imported by name: several exist).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK_NAMES = frozenset(path.stem for path in (REPO / "tasks").glob("*.mlab"))
MOST_WORKERS = 8  # each worker makes its own builds and data: past this, more copies, no more speed

# Folders whose tests share session fixtures of their conftest that take seconds to make.
WHOLE_FOLDERS = {
    "tests/reports/": "reports",  # runs_dir: every scenario's run, scored step by step
    "tests/export/": "export",  # std_runs: one run of every std agent; Harbor's export of every task
}
OWN_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope\s*=\s*[\"'](?:module|session)[\"']")


def group_of(nodeid: str) -> str | None:
    """The group of a test, by its node id, or None when it may run on any worker:
    - a test of a folder of WHOLE_FOLDERS: that folder's group;
    - a test of tests/tasks whose parameter is a task name: `task-NAME` (the task's lite data, its
      audit and its starter run are made once, on the worker that runs its demonstration too);
    - a test of a module that defines module- or session-scoped fixtures: the module's group."""
    module, _, name = nodeid.partition("::")
    for folder, group in WHOLE_FOLDERS.items():
        if module.startswith(folder):
            return group
    if module.startswith("tests/tasks/") and name.endswith("]"):
        parameter = name[name.rfind("[") + 1:-1]
        if parameter in TASK_NAMES:
            return f"task-{parameter}"
    if defines_shared_fixtures(module):
        return module
    return None


@functools.cache
def defines_shared_fixtures(module: str) -> bool:
    try:
        return bool(OWN_FIXTURE.search((REPO / module).read_text(encoding="utf-8")))
    except OSError:
        return False


def workers(args: list[str], here: Path, cpus: int) -> int:
    """Workers for `-n auto`: one per usable CPU, at least 2 (many tests wait on sandboxed child
    processes, so two share even one core well) and at most MOST_WORKERS; none (the tests run in
    pytest's own process) when the command line names tests of a single file."""
    if one_file(args, here):
        return 0
    return max(2, min(MOST_WORKERS, cpus))


def one_file(args: list[str], here: Path) -> bool:
    """Whether the command line names tests of one file only (`pytest tests/x.py`, `x.py::test`)."""
    files = {arg.split("::", 1)[0] for arg in args}
    if len(files) != 1:
        return False
    path = Path(files.pop())
    return (path if path.is_absolute() else here / path).is_file()


def slow_first(items: list) -> list:
    """The tests of the slow tier first, each list in its own order: the longest tests start early,
    so the last minutes of a parallel run are short tests that both workers share."""
    return sorted(items, key=lambda item: item.get_closest_marker("slow") is None)


def scheduler(config, log):
    """pytest-xdist's loadgroup scheduling with the groups of group_of (an explicit `@group`
    suffix that a future pytest-xdist adds to a node id still counts)."""
    from xdist.scheduler import LoadGroupScheduling

    class SuiteGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return scope if scope != nodeid else (group_of(nodeid) or nodeid)

    return SuiteGroups(config, log)
