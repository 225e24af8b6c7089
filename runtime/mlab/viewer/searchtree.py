"""The tree of a tree-search run on its page, as inline SVG, and the facts each node shows.

Each node record (trace fields node, parent, operator, validation, buggy) is a box placed under
its parent: leaves take the next free column in depth-first order and a parent sits over the
middle of its children, so lines never cross; the roots' subtrees are packed into bands that fit
the page's width, one under the other, and a drawing wider than the page is scaled to fit it
(never a scroll box that hides nodes). A box names the node and its operator and shows
its validation score; buggy nodes are drawn red and crossed, the submitted node (result.json
search.submitted_node) has a thick green border and says so, and a crossover's second parent is
joined by a dashed line. Every box links to the node's article (#node-N), which the page's
script opens: its plan, its code diff against its parent and its output. No script is needed
to draw it and nothing is fetched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

BOX_W, BOX_H = 92, 38
GAP_X, GAP_Y = 14, 34
MARGIN = 12
# A band of subtrees is at most this many columns wide: 9 boxes fit the 1,060 pixels of the page's
# main column, so a tree is drawn at full size on any screen; wider subtrees are scaled down.
BAND_COLUMNS = 9
BAND_GAP = 0.4  # extra levels between two bands


@dataclass
class TreeNode:
    id: int
    parent: int | None
    operator: str
    validation: float | None
    buggy: bool
    second_parent: int | None
    step: int


def tree_nodes(records: list[dict]) -> list[TreeNode]:
    """The nodes of a run's trace, in creation order (records without a node are not nodes)."""
    nodes = []
    for record in records:
        number = record.get("node")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        facts = record.get("search") if isinstance(record.get("search"), dict) else {}
        second = facts.get("second_parent")
        validation = record.get("validation")
        nodes.append(TreeNode(
            number, record.get("parent") if isinstance(record.get("parent"), int) else None,
            str(record.get("operator") or record.get("action") or "?"),
            float(validation) if isinstance(validation, (int, float)) and math.isfinite(validation) else None,
            bool(record.get("buggy", validation is None)), second if isinstance(second, int) else None,
            int(record.get("step", 0))))
    return nodes


def node_plan(record: dict) -> str:
    """The plan the operator's reply gave for the node ('' when the record holds none)."""
    model = record.get("model") if isinstance(record.get("model"), dict) else {}
    reply = model.get("reply") if isinstance(model.get("reply"), dict) else {}
    for key in ("plan", "Plan"):
        if isinstance(reply.get(key), str):
            return reply[key]
    given = record.get("action_input")
    if isinstance(given, dict) and isinstance(given.get("plan"), str):
        return given["plan"]
    facts = record.get("search") if isinstance(record.get("search"), dict) else {}
    return facts["plan"] if isinstance(facts.get("plan"), str) else ""


def _layout(nodes: list[TreeNode]) -> tuple[dict[int, tuple[float, float]], int, float]:
    """(column, level) of every node, and the number of columns and levels the drawing spans.

    Each root's subtree is laid out on its own (leaves in depth-first order, a parent over the
    middle of its children), then the subtrees are packed left to right into bands of at most
    BAND_COLUMNS columns, one band under the other, so a search with many drafts grows down the
    page instead of sideways out of it; a subtree wider than a band gets a band of its own (the
    page then scales the drawing to its width)."""
    known = {node.id for node in nodes}
    children: dict[int | None, list[int]] = {}
    for node in nodes:
        parent = node.parent if node.parent in known else None
        children.setdefault(parent, []).append(node.id)
    place: dict[int, tuple[float, float]] = {}
    band_column, band_level, band_depth, widest = 0, 0.0, 0, 1
    for root in children.get(None, []):
        local, columns, depth = _subtree(root, children)
        if band_column and band_column + columns > BAND_COLUMNS:  # start the next band under this one
            band_level += band_depth + 1 + BAND_GAP
            band_column, band_depth = 0, 0
        for number, (column, level) in local.items():
            place[number] = (band_column + column, band_level + level)
        band_column += columns
        band_depth = max(band_depth, depth)
        widest = max(widest, band_column)
    return place, widest, band_level + band_depth + 1


def _subtree(root: int, children: dict[int | None, list[int]]) -> tuple[dict[int, tuple[float, int]], int, int]:
    """(column, depth) of every node under root, with the columns and the deepest depth it uses."""
    place: dict[int, tuple[float, int]] = {}
    column = 0
    # iterative post-order walk: a node is placed once all its children are
    stack: list[tuple[int, int, bool]] = [(root, 0, False)]
    while stack:
        number, depth, expanded = stack.pop()
        below = children.get(number, [])
        if not below:
            place[number] = (float(column), depth)
            column += 1
        elif not expanded:
            stack.append((number, depth, True))
            stack += [(child, depth + 1, False) for child in reversed(below)]
        else:
            place[number] = ((place[below[0]][0] + place[below[-1]][0]) / 2, depth)
    return place, max(column, 1), max(depth for _, depth in place.values())


def _score(value: float | None) -> str:
    if value is None:
        return "no score"
    if 1000 <= abs(value) < 1e7:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def tree_svg(nodes: list[TreeNode], submitted: int | None, lower_is_better: bool | None) -> str:
    """The tree as one SVG element (empty string when there are no nodes)."""
    if not nodes:
        return ""
    place, columns, levels = _layout(nodes)
    width = 2 * MARGIN + columns * BOX_W + (columns - 1) * GAP_X
    height = round(2 * MARGIN + levels * BOX_H + (levels - 1) * GAP_Y + 18)

    def centre(number: int) -> tuple[float, float]:
        col, depth = place[number]
        return (MARGIN + col * (BOX_W + GAP_X) + BOX_W / 2, MARGIN + 18 + depth * (BOX_H + GAP_Y) + BOX_H / 2)

    valid = [n for n in nodes if not n.buggy and n.validation is not None]
    best = None
    if valid and lower_is_better is not None:
        best = min(valid, key=lambda n: ((n.validation if lower_is_better else -n.validation), n.id)).id
    direction = "" if lower_is_better is None else " (lower is better)" if lower_is_better else " (higher is better)"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="search-tree" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" style="max-width: 100%; height: auto" role="img" '
             f'aria-label="search tree of {len(nodes)} nodes">',
             f'<text class="legend" x="{MARGIN}" y="{MARGIN + 4}">{len(nodes)} nodes, {len(valid)} valid; '
             f'validation score{direction}; red: buggy; green border: submitted</text>']
    for node in nodes:
        if node.parent in place:
            (x1, y1), (x2, y2) = centre(node.parent), centre(node.id)
            parts.append(f'<line class="edge" x1="{x1:.1f}" y1="{y1 + BOX_H / 2:.1f}" x2="{x2:.1f}" '
                         f'y2="{y2 - BOX_H / 2:.1f}"/>')
        if node.second_parent in place:
            (x1, y1), (x2, y2) = centre(node.second_parent), centre(node.id)
            parts.append(f'<line class="edge second" x1="{x1:.1f}" y1="{y1 + BOX_H / 2:.1f}" x2="{x2:.1f}" '
                         f'y2="{y2 - BOX_H / 2:.1f}"/>')
    for node in nodes:
        x, y = centre(node.id)
        classes = ["tree-node", "buggy" if node.buggy else "valid"]
        if node.id == submitted:
            classes.append("submitted")
        if node.id == best:
            classes.append("best")
        parent = "root" if node.parent is None else f"child of node {node.parent}"
        title = (f"node {node.id}: {node.operator}, {parent}; validation {_score(node.validation)}"
                 f"{'; buggy' if node.buggy else ''}{'; submitted' if node.id == submitted else ''}")
        label = "buggy" if node.buggy else _score(node.validation)
        parts.append(
            f'<a href="#node-{node.id}" class="node-link" data-node="{node.id}">'
            f'<g class="{" ".join(classes)}" data-node="{node.id}" data-operator="{escape(node.operator)}">'
            f'<title>{escape(title)}</title>'
            f'<rect x="{x - BOX_W / 2:.1f}" y="{y - BOX_H / 2:.1f}" width="{BOX_W}" height="{BOX_H}" rx="5"/>'
            f'<text x="{x:.1f}" y="{y - 4:.1f}" text-anchor="middle" class="op">#{node.id} {escape(node.operator)}</text>'
            f'<text x="{x:.1f}" y="{y + 11:.1f}" text-anchor="middle" class="val">{escape(label)}</text>')
        if node.buggy:
            parts.append(f'<line class="cross" x1="{x - BOX_W / 2 + 3:.1f}" y1="{y + BOX_H / 2 - 3:.1f}" '
                         f'x2="{x + BOX_W / 2 - 3:.1f}" y2="{y - BOX_H / 2 + 3:.1f}"/>')
        if node.id == submitted:
            parts.append(f'<text x="{x:.1f}" y="{y - BOX_H / 2 - 4:.1f}" text-anchor="middle" '
                         f'class="submitted-label">submitted</text>')
        parts.append("</g></a>")
    parts.append("</svg>")
    return "".join(parts)


def node_heading(record: dict, submitted: int | None) -> str:
    """The facts line of a node's article: operator, parent, validation, buggy, submitted."""
    number = record["node"]
    parent = record.get("parent")
    facts = [f"<span class='operator'>{escape(str(record.get('operator') or record.get('action')))}</span>",
             "root (from the initial workspace)" if parent is None else f"from <a href='#node-{parent}'>node {parent}</a>"]
    validation = record.get("validation")
    facts.append(f"validation {_score(validation if isinstance(validation, (int, float)) else None)}")
    if record.get("holdout") is not None:
        facts.append(f"holdout {_score(record['holdout'])}")
    if record.get("buggy"):
        facts.append("<span class='status error'>buggy</span>")
    if number == submitted:
        facts.append("<span class='status final'>submitted</span>")
    search = record.get("search") if isinstance(record.get("search"), dict) else {}
    shown = {k: v for k, v in search.items() if k not in ("plan", "summary", "random_state", "rng") and
             isinstance(v, (int, float, str, bool)) and len(str(v)) < 80}
    extra = f"<p class='meta'>policy facts: {escape(', '.join(f'{k} {v}' for k, v in shown.items()))}</p>" if shown else ""
    if isinstance(search.get("summary"), str) and search["summary"].strip():
        extra += f"<p class='meta'>review: {escape(search['summary'][:2000])}</p>"
    problems = search.get("problems")
    if isinstance(problems, list) and problems:
        extra += f"<p class='meta'>why buggy: {escape('; '.join(str(p) for p in problems)[:2000])}</p>"
    return f"<p class='node-facts'>{' · '.join(facts)}</p>{extra}"
