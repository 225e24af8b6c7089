"""What the operator and review templates of a search agent receive: the parent node, a journal of
the best nodes so far, and a preview of the workspace's data files.

The builders return exactly the variables contract section 4 lists for these templates
(spec/template-context.json: draft, improve, debug, crossover, review), so a template
rendered with StrictUndefined never meets a missing name.
"""
from __future__ import annotations

import csv
import io

from mlab.agent.context import task_view
from mlab.search.tree import Node, Tree

JOURNAL_NODES = 5  # the best valid nodes the journal shows, best first
JOURNAL_PLAN_CHARS = 800
OUTPUT_CHARS = 8000  # the tail of a node's output that its children see
PREVIEW_CHARS = 6000  # the whole data preview
PREVIEW_BYTES = 16384  # read from the head of each table
PREVIEW_ROWS = 3
PREVIEW_FILES = 12


def node_view(node: Node | None) -> dict | None:
    """A node as an operator's template sees it (`parent`); None for a draft."""
    if node is None:
        return None
    output = node.output if len(node.output) <= OUTPUT_CHARS else \
        "[... the start of the output is left out ...]\n" + node.output[-OUTPUT_CHARS:]
    return {"plan": node.plan, "code": node.code, "output": output, "validation": node.validation,
            "buggy": node.buggy}


def journal_text(tree: Tree, metric: str = "validation") -> str:
    """The best valid nodes so far, best first: plan, summary and validation score of each
    (empty before the first valid node)."""
    best = tree.best(JOURNAL_NODES)
    if not best:
        return ""
    parts = []
    for node in best:
        plan = node.plan.strip() or "(no plan given)"
        if len(plan) > JOURNAL_PLAN_CHARS:
            plan = plan[:JOURNAL_PLAN_CHARS] + " [...]"
        summary = str(node.facts.get("summary") or "").strip()
        lines = [f"Node {node.id} ({node.operator}): {metric} {node.validation:.6g}", f"Plan: {plan}"]
        if summary:
            lines.append(f"Summary: {summary}")
        parts.append("\n".join(lines))
    return "\n-------------------------------\n".join(parts)


def data_preview(files: dict[str, bytes | int]) -> str:
    """A short look at the workspace: every file with its size, and the header and first rows of
    each table. `files`: path → the file's first bytes (a table) or its size (anything else)."""
    lines = []
    for rel in sorted(files)[:200]:
        head = files[rel]
        size = head if isinstance(head, int) else None
        lines.append(f"- {rel}" + (f" ({_size(size)})" if size is not None else ""))
    tables = [rel for rel in sorted(files) if not isinstance(files[rel], int)][:PREVIEW_FILES]
    for rel in tables:
        rows = _rows(files[rel])
        if not rows:
            continue
        lines.append(f"\n{rel}: {len(rows[0])} columns: {', '.join(rows[0][:60])}"
                     + (" ..." if len(rows[0]) > 60 else ""))
        for row in rows[1:PREVIEW_ROWS + 1]:
            lines.append("  " + ", ".join(cell[:40] for cell in row[:20]) + (" ..." if len(row) > 20 else ""))
    text = "\n".join(lines)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "\n[... preview cut ...]"


def _rows(head: bytes) -> list[list[str]]:
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    complete = text.splitlines()[:PREVIEW_ROWS + 1] if "\n" in text else [text]
    try:
        return [row for row in csv.reader(io.StringIO("\n".join(complete)))]
    except csv.Error:
        return []


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def operator_context(*, task, parent: Node | None, parents: list[Node] | None, journal: str,
                     data_preview: str, code_file: str, node: int, max_nodes: int) -> dict:
    """The variables of the draft, improve, debug and crossover templates."""
    return {"task": task_view(task), "parent": node_view(parent),
            "parents": [node_view(p) for p in parents or ()], "journal": journal,
            "data_preview": data_preview, "code_file": code_file, "node": int(node), "max_nodes": int(max_nodes)}


def review_context(*, task, code: str, output: str, code_file: str) -> dict:
    """The variables of the review template."""
    return {"task": task_view(task), "code": code, "output": output, "code_file": code_file}
