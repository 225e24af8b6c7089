"""The catalogues a task draws on, as tables: metrics (spec/metrics.json) and primitives
(spec/primitives.json). `mlabc schema metrics|primitives` prints them, and docs/authoring.md
holds the same tables as Markdown (a test keeps the two equal)."""
from __future__ import annotations

import json

from ..resources import spec_json

CATALOGUES = {"metrics": "metrics.json", "primitives": "primitives.json"}
METRIC_HEADERS = ("metric", "direction", "columns", "kind", "parameters (default)")
PRIMITIVE_HEADERS = ("primitive", "inputs", "parameters (default)", "model-backed")


def _value(value) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value)


def _metric_parameters(params: dict) -> str:
    parts = []
    for key, spec in params.items():
        text = f"{key} = {_value(spec['default'])}"
        if spec.get("values"):
            text += f" ({' / '.join(spec['values'])})"
        parts.append(text)
    return ", ".join(parts) or "-"


def metric_rows() -> list[tuple[str, ...]]:
    """One row per metric of the catalogue: name, direction, columns, kind, parameters."""
    return [(name, spec["direction"] or "declared by the task", spec["columns"], spec["kind"],
             _metric_parameters(spec.get("parameters", {})))
            for name, spec in spec_json("metrics.json")["metrics"].items()]


def primitive_rows() -> list[tuple[str, ...]]:
    """One row per primitive: name, the inputs an action must declare, parameters, model-backed."""
    return [(name, ", ".join(f"{key}: {kind}" for key, kind in spec["inputs"].items()) or "-",
             ", ".join(f"{key} = {_value(p['default'])}" for key, p in spec["params"].items()) or "-",
             "yes" if spec.get("model") else "no")
            for name, spec in spec_json("primitives.json")["primitives"].items()]


def _table(subject: str) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    if subject == "metrics":
        return METRIC_HEADERS, metric_rows()
    return PRIMITIVE_HEADERS, primitive_rows()


def catalogue_json(subject: str) -> dict:
    """The catalogue file itself."""
    return spec_json(CATALOGUES[subject])


def catalogue_text(subject: str) -> str:
    """The catalogue as aligned columns, for a terminal."""
    headers, rows = _table(subject)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [headers, *rows])


def catalogue_markdown(subject: str) -> str:
    """The catalogue as the Markdown table of docs/authoring.md."""
    headers, rows = _table(subject)
    cells = [headers, tuple("---" for _ in headers)] + [(f"`{r[0]}`", *r[1:]) for r in rows]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells)
