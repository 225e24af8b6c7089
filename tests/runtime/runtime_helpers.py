"""Helpers shared by the runtime-core tests (imported by name: pytest puts this folder on sys.path)."""
from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_task_sources(target: Path) -> Path:
    """A private copy of house-price.mlab and its folder (to change sources without touching the repo)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tasks" / "house-price.mlab", target / "house-price.mlab")
    shutil.copytree(REPO / "tasks" / "house-price", target / "house-price")
    return target / "house-price.mlab"
