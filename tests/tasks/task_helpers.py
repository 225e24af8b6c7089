"""The task lists of the task-suite tests, imported by name (a conftest cannot be: several exist)."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASKS = ("babylm", "cifar10", "clrs", "fathomnet", "feedback", "house-price", "identify-contrails", "imdb",
         "llama-inference", "ogbn-arxiv", "parkinsons-disease", "spaceship-titanic", "vectorization")
TIMED = ("llama-inference", "vectorization")
EVALUATED = ("babylm",)
TABULAR = tuple(t for t in TASKS if t not in TIMED + EVALUATED)
