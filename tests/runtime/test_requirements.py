"""A task's `requires` is checked in the scripts' interpreter before a run (or baseline, or audit) starts."""
from __future__ import annotations

import dataclasses
import sys

import pytest

from mlab.data.requirements import RequirementError, check_requirements, unmet_requirements
from mlab.run.folder import Run


def test_satisfied_requirements_pass():
    assert unmet_requirements(["pandas", "pip>=1"]) == []
    check_requirements("t", ["pandas>=1.0", "scikit-learn"], sys.executable)


def test_a_missing_package_names_it_and_the_install_command():
    with pytest.raises(RequirementError) as raised:
        check_requirements("t", ["pandas", "definitely-not-installed-pkg"], sys.executable)
    message = str(raised.value)
    assert "\n" not in message
    assert "requires definitely-not-installed-pkg and definitely-not-installed-pkg is not installed" in message
    assert message.endswith(f"install with: {sys.executable} -m pip install 'definitely-not-installed-pkg'")


def test_a_too_old_package_names_the_installed_version():
    from importlib.metadata import version

    with pytest.raises(RequirementError, match=rf"requires pip>=999 and pip is {version('pip')} in .*"
                                               rf"pip install 'pip>=999'$"):
        check_requirements("t", ["pip>=999"])


def test_a_requirement_that_does_not_parse_is_named():
    with pytest.raises(RequirementError, match="'torch=>2' of the task is not a requirement specifier"):
        check_requirements("t", ["torch=>2"])


def test_runs_are_not_created_when_a_requirement_is_missing(house_task, tmp_path):
    task = dataclasses.replace(house_task, doc={**house_task.doc, "requires": ["definitely-not-installed-pkg"]})
    with pytest.raises(RequirementError, match="definitely-not-installed-pkg is not installed"):
        Run.create(task, task.build.agent("research"), tmp_path / "runs")
    assert not (tmp_path / "runs").exists()
