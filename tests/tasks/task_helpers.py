"""The task lists of the task-suite tests, imported by name (a conftest cannot be: several exist)."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASKS = ("babylm", "cifar10", "clrs", "fathomnet", "feedback", "house-price", "identify-contrails", "imdb",
         "llama-inference", "ogbn-arxiv", "parkinsons-disease", "spaceship-titanic", "vectorization")
TIMED = ("llama-inference", "vectorization")
EVALUATED = ("babylm",)
TABULAR = tuple(t for t in TASKS if t not in TIMED + EVALUATED)


def confinement_checkable() -> bool:
    """Whether the "sandbox confines scripts" findings can hold here: True with a working
    bubblewrap; False without one on a developer's machine; a failure without one in CI (where
    `CI` is set, and .ci/run installs bubblewrap), so a confinement regression cannot pass there."""
    import os

    import pytest

    from mlab.sandbox.runner import sandbox_available

    usable, reason = sandbox_available()
    if not usable and os.environ.get("CI"):
        pytest.fail(f"CI is set but the sandbox is unavailable ({reason}): confinement goes unchecked")
    return usable
