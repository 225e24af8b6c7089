"""A task's `requires` is checked in the scripts' interpreter before a run (or baseline, or audit) starts."""
from __future__ import annotations

import sys

import pytest

from mlab.build import TaskBuild
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
    assert message.endswith(f"install it with: {sys.executable} -m pip install 'definitely-not-installed-pkg'")


def test_a_too_old_package_names_the_installed_version():
    from importlib.metadata import version

    with pytest.raises(RequirementError, match=rf"requires pip>=999 and pip is {version('pip')} in the environment "
                                               r"mlab runs in; if a release satisfies >=999 \(pip index versions pip "
                                               r"lists them\), upgrade to it, otherwise the task's `requires` is wrong$"):
        check_requirements("t", ["pip>=999"])


def test_a_version_that_may_not_exist_is_never_suggested_nor_this_interpreters_path():
    """`requires ["scikit-learn==99.0"]`: no install command for 99.0, and (without --python) no path."""
    for requires in (["pip==99.0"], ["definitely-not-installed-pkg>=99"]):
        with pytest.raises(RequirementError) as raised:
            check_requirements("t", requires)
        message = str(raised.value)
        assert "install 'pip==99.0'" not in message and "install 'definitely-not-installed-pkg>=99'" not in message
        assert sys.executable not in message
    assert message.endswith("is not installed in the environment mlab runs in; install it (the task asks for >=99) "
                            "with: pip install 'definitely-not-installed-pkg'")


def test_a_requirement_that_does_not_parse_is_named():
    with pytest.raises(RequirementError, match="'torch=>2' of the task is not a requirement specifier"):
        check_requirements("t", ["torch=>2"])


def test_runs_are_not_created_when_a_requirement_is_missing(house_task, tmp_path):
    task = TaskBuild.of(house_task.name, {**house_task.document, "requires": ["definitely-not-installed-pkg"]},
                        house_task.build)
    with pytest.raises(RequirementError, match="definitely-not-installed-pkg is not installed"):
        Run.create(task, task.build.agent("research"), tmp_path / "runs")
    assert not (tmp_path / "runs").exists()
