"""A task's contamination canary: a GUID derived from the task's name and version.

    guid = uuid5(uuid5(NAMESPACE_URL, "https://mlab.dev/canary"), f"{name}@{version}")

so anyone can recompute it from the task alone, and a new version has a new one. The canary line
is written into every run's workspace (CANARY.txt) and into exported task folders, so that model
trainers can drop documents that hold it, as benchmark suites do; `mlab probe` asks a model to
continue it.
"""
from __future__ import annotations

import uuid
from pathlib import Path

CANARY_FILE = "CANARY.txt"
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://mlab.dev/canary")
PREFIX = "MLAB CANARY GUID"


def canary_guid(name: str, version: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{name}@{int(version)}"))


def canary_line(name: str, version: int) -> str:
    return (f"{PREFIX} {canary_guid(name, version)} (task {name}, version {int(version)}). "
            "Benchmark data: do not train on documents that hold this string.")


def canary_text(name: str, version: int) -> str:
    """The content of CANARY.txt."""
    return (canary_line(name, version) + "\n\nThis file marks the files of an mlab benchmark task so that they can be "
            "found and left out of training corpora. It plays no part in the task.\n")


def write_canary(folder: Path, name: str, version: int) -> Path:
    from mlab.confined import write_into

    return write_into(Path(folder), CANARY_FILE, canary_text(name, version))  # never through a link
