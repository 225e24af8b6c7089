"""Exact pins for an exported environment: the versions installed here, with their dependencies.

An exported task must install what mlab ran it with, not whatever an index serves on the day the
image is built. So each requirement is pinned to the version installed in this interpreter, and so
is every distribution it depends on (markers evaluated here, extras not followed), walked through
`importlib.metadata`. A local version label (`2.13.0+cpu`) is dropped: indexes serve the release.
"""
from __future__ import annotations

import importlib.metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from mlab.errors import MlabError


class PinError(MlabError):
    """A requirement that cannot be pinned to an installed version."""


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> str:
    try:
        return Version(version).public
    except InvalidVersion:
        return version


def _dependencies(name: str) -> list[Requirement]:
    found = []
    for text in importlib.metadata.requires(name) or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        # Markers are evaluated with no extra selected: optional dependencies stay out.
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


def pinned(requirements: list[str], *, what: str, follow: bool = True) -> list[str]:
    """`name==version` for each requirement and (with follow) everything it needs, sorted by name.

    A requirement must be installed here at a version its specifier accepts; `what` names
    whose requirement it is in the error.
    """
    pins: dict[str, str] = {}
    queue: list[Requirement] = []
    for text in requirements:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise PinError(f"{what}: {text!r} is not a requirement specifier: {error}") from None
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = _installed(requirement.name)
        if version is None:
            raise PinError(f"{what}: {requirement} is not installed here, so it cannot be pinned to the version "
                           f"mlab runs with; install it (pip install '{requirement}') and export again")
        try:
            accepted = requirement.specifier.contains(Version(version), prereleases=True)
        except InvalidVersion:
            accepted = not requirement.specifier
        if not accepted:
            raise PinError(f"{what}: {requirement} is required, but {requirement.name} {version} is installed here")
        queue.append(requirement)
    while queue:
        requirement = queue.pop()
        key = canonicalize_name(requirement.name)
        if key in pins:
            continue
        version = _installed(requirement.name)
        if version is None:  # a dependency this interpreter lacks is one its packages run without
            continue
        pins[key] = f"{key}=={_release(version)}"
        if follow:
            queue.extend(_dependencies(requirement.name))
    return [pins[key] for key in sorted(pins)]


def distribution_requirements(distribution: str) -> list[str]:
    """The declared dependencies of an installed distribution (extras left out)."""
    if _installed(distribution) is None:
        raise PinError(f"the distribution {distribution} is not installed here")
    return [str(r) for r in _dependencies(distribution)]
