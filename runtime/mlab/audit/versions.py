"""The audit's version check without a previous build: a task whose scored parts differ from an
earlier build of the same version that this machine's audits have seen is warned about.

Each audit records, per task and version, the scored-part digests of the build it audited
(the manifest's `tasks.<name>.scored`) in MLAB_CACHE/task-versions.json, the first time it sees
that version; a later audit of the same version with other digests gets the warning. (`mlabc
check --since BUILD` makes the same comparison an error, against a build you name.)
"""
from __future__ import annotations

import json

from mlab.errors import MlabError
from mlab.standard_json import write_json

HISTORY = "task-versions.json"


def version_warning(task) -> str | None:
    """The warning for `task` (a TaskBuild), or None; records its digests when first seen."""
    from mlab.cache import cache_root

    entry = task.build.manifest["tasks"].get(task.name) or {}
    scored = entry.get("scored")
    if not isinstance(scored, dict):
        return None  # a build made before task versions
    version = str(entry.get("version", 1))
    path = cache_root() / HISTORY
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(history, dict):
            history = {}
    except (OSError, ValueError):
        history = {}
    seen = (history.get(task.name) or {}).get(version)
    if isinstance(seen, dict):
        changed = [part for part in scored if part in seen and seen[part] != scored[part]]
        if changed:
            return (f"task {task.name} version {version}: its scored parts ({', '.join(changed)}) differ from an "
                    f"earlier build of version {version}; results of both would be pooled as one version — bump "
                    f"`version` and add a `changes` entry (check with `mlabc check --since BUILD`)")
        return None
    history.setdefault(task.name, {})[version] = scored
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, history, sort_keys=True)
    except (OSError, MlabError):
        pass  # the record is a convenience; an unwritable cache only loses the next warning
    return None
