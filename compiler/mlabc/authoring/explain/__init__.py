"""`mlabc explain`: the long explanation of each diagnostic code, with a wrong and a right example."""
from __future__ import annotations

from .example import EXAMPLE_NAME, SUPPORT_FILES, Explanation, check_example, example_task
from .lookup import explanations, listing, normalise_code, render

__all__ = ["EXAMPLE_NAME", "SUPPORT_FILES", "Explanation", "check_example", "example_task", "explanations",
           "listing", "normalise_code", "render"]
