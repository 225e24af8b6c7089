"""run.json, the record of what a run is (spec/run.schema.json): its name in a run folder, its
schema, and the one reader of it, which every command that opens a run folder goes through."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import RunError

RUN_JSON = "run.json"
RUN_SCHEMA_ID = "https://mlab.dev/spec/run.schema.json"
RUN_VERSION = 7   # 7: adopted data objects may be objects/<64 hex> (mlab.snapshots.ObjectStore.adopt)
LOOP_CONFIG = "models.json"  # what `mlab run` resolved (models per tier, seed), so --resume uses the same


def read_run_meta(folder: Path) -> dict:
    """run.json of a run folder, checked against spec/run.schema.json."""
    from mlab.bounded_json import UntrustedFile, read_json
    from mlabc.schemas import problems

    path = Path(folder) / RUN_JSON
    try:
        meta = read_json(path)   # a run folder may come from elsewhere: bounded, never a link or a pipe
    except FileNotFoundError:
        raise RunError(f"{folder} is not a run folder (no {RUN_JSON})") from None
    except (OSError, UntrustedFile) as problem:   # UntrustedFile: a link, a pipe, too deep or large, not JSON
        raise RunError(f"cannot read {path}: {problem}") from None
    found = problems("run", meta)
    if found:
        raise RunError(f"{path} is not a valid run record:\n  " + "\n  ".join(found[:5]))
    return meta
