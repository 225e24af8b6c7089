"""A task's `requires`: each requirement must hold in the interpreter that runs the scripts.

The scripts' interpreter (`--python`) may not be the harness's, and may lack `packaging`, so it
is asked only for the installed versions (`importlib.metadata`, standard library); the
specifiers are parsed and evaluated here with `packaging`. Checked before a run is created, so
a missing package stops with the install command instead of ending as the agent's failure.
"""
from __future__ import annotations

import json
import subprocess
import sys

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from mlab.errors import MlabError

# Runs in the scripts' interpreter: {name: version or None} for the names given as arguments.
_VERSIONS = """
import importlib.metadata as m, json, sys
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = m.version(name)
    except m.PackageNotFoundError:
        out[name] = None
print(json.dumps(out))
"""


class RequirementError(MlabError):
    """A task's requirement is not satisfied in the scripts' interpreter."""


def parse_requirements(requires) -> list[Requirement]:
    parsed = []
    for text in requires or ():
        try:
            parsed.append(Requirement(text))
        except InvalidRequirement as error:
            raise RequirementError(f"requirement {text!r} of the task is not a requirement specifier: {error}") from None
    return parsed


def installed_versions(names: list[str], python: str) -> dict[str, str | None]:
    """The installed version of each distribution in `python`, None where it is not installed."""
    try:
        done = subprocess.run([python, "-c", _VERSIONS, *names], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RequirementError(f"cannot ask the scripts' interpreter {python} for its packages: {error}") from None
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RequirementError(f"cannot ask the scripts' interpreter {python} for its packages: {reason}") from None


def unmet_requirements(requires, python: str | None = None) -> list[tuple[Requirement, str | None]]:
    """(requirement, installed version or None) for each requirement that `python` does not satisfy."""
    parsed = [r for r in parse_requirements(requires) if r.marker is None or r.marker.evaluate()]
    if not parsed:
        return []
    versions = installed_versions([r.name for r in parsed], python or sys.executable)
    unmet = []
    for requirement in parsed:
        installed = versions.get(requirement.name)
        if installed is None:
            unmet.append((requirement, None))
            continue
        try:
            ok = requirement.specifier.contains(Version(installed), prereleases=True)
        except InvalidVersion:
            ok = not requirement.specifier  # an unparsable version satisfies only a bare name
        if not ok:
            unmet.append((requirement, installed))
    return unmet


def check_requirements(task_name: str, requires, python: str | None = None) -> None:
    """Stop with one line naming the first unmet requirement and what to do about it.

    The message names the scripts' interpreter only when the user chose it (`--python`), never
    this machine's own path. A package that is missing gets its install command (by name: a
    version the task asks for may not exist, and pip would then refuse the whole command); an
    installed version that does not satisfy the task is not answered with an install of a
    version nobody checked exists, but with how to list the released ones."""
    unmet = unmet_requirements(requires, python)
    if not unmet:
        return
    where, pip = (f"the scripts' interpreter {python}", f"{python} -m pip") if python else \
        ("the environment mlab runs in", "pip")
    missing = [r for r, installed in unmet if installed is None]
    requirement, installed = unmet[0]
    if installed is None:
        names = " ".join(f"'{r.name}'" for r in missing)
        wanted = f" (the task asks for {requirement.specifier})" if requirement.specifier else ""
        raise RequirementError(f"task {task_name} requires {requirement} and {requirement.name} is not installed "
                               f"in {where}; install it{wanted} with: {pip} install {names}")
    raise RequirementError(f"task {task_name} requires {requirement} and {requirement.name} is {installed} in "
                           f"{where}; if a release satisfies {requirement.specifier} ({pip} index versions "
                           f"{requirement.name} lists them), upgrade to it, otherwise the task's `requires` is wrong")
