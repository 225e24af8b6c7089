"""The rules a compiled document is read by: those of the version it records.

Every compiled document (task.yaml, agent.json, actions.json, experiments/NAME.yaml) records the
version of its schema it was written under (`schema_version`), and is checked against that
version's rules, never only today's: the current version against spec/<kind>.schema.json, an
older version this mlab still reads against the copy of its schema kept in
spec/older/<kind>.v<N>.schema.json, after which the upgrades of UPGRADES bring it to the current
form, one version at a time, before its view is made. A version this mlab cannot read (a newer
mlabc's) is a problem that says so. The build loader (mlab.build) and the readers of a run
folder's build copy (mlab.reports.runs) both check through `current_form`.

Changing a document's format: copy spec/<kind>.schema.json to spec/older/<kind>.v<N>.schema.json,
raise the schema's `version` and the `schema_version` it allows to N+1, and add here the upgrade
from N. (Version 1 of every kind has grown by optional properties only, so far: every document
an mlabc has written matches today's schemas.)
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

KINDS = ("task", "agent", "actions", "experiment")

# (kind, N) -> a version-N document of that kind made a version-N+1 one (none yet)
UPGRADES: dict[tuple[str, int], Callable[[dict], dict]] = {}


def current_version(kind: str) -> int:
    """The version of spec/<kind>.schema.json: what this mlabc writes."""
    from mlabc.schemas import schema

    return int(schema(kind)["version"])


def readable_versions(kind: str) -> list[int]:
    """The versions of a kind this mlab reads: the current one, and each older one whose every
    upgrade up to it is known."""
    now = current_version(kind)
    found = [now]
    while (kind, found[0] - 1) in UPGRADES:
        found.insert(0, found[0] - 1)
    return found


def older_schema(kind: str, version: int) -> Path:
    """Where the schema of an older version is kept."""
    from mlabc.resources import data_dir

    return data_dir("spec") / "older" / f"{kind}.v{version}.schema.json"


def current_form(kind: str, document: dict) -> tuple[dict, list[str]]:
    """`document` in the current version's form, and its problems by the rules of the version it
    records (none: its view can be made)."""
    from mlabc.schemas import problems

    version, readable = document.get("schema_version"), readable_versions(kind)
    if type(version) is not int or version not in readable:
        return document, [f"at schema_version: {version!r} is not a version this mlab reads "
                          f"({', '.join(map(str, readable))}; a newer mlabc's build?)"]
    if version == readable[-1]:
        return document, problems(kind, document)
    found = _older_problems(kind, version, document)
    if found:
        return document, found
    for step in range(version, readable[-1]):
        document = UPGRADES[(kind, step)](document)
    return document, problems(kind, document)   # an upgrade that makes no current document is named too


def _older_problems(kind: str, version: int, document: dict) -> list[str]:
    import json

    from mlabc.schemas import problems_against

    return problems_against(json.loads(older_schema(kind, version).read_text(encoding="utf-8")), document)
