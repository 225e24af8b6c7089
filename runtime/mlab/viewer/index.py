"""`mlab view RUNS_DIR`: an index page of every run under a folder, with key figures, sortable.

Each run's own page is written to RUN_DIR/view.html and linked by a path relative to the
index, so the folder can be moved or opened from disk as a whole.
"""
from __future__ import annotations

import os
from html import escape
from pathlib import Path

from mlab.reports.eval import run_row
from mlab.reports.runs import load_runs
from mlab.viewer.page import render_run, write_page
from mlab.viewer.assets import CSS, INDEX_JS

RUN_PAGE = "view.html"

_COLUMNS = [("run", "run_id", "text"), ("task", "task", "text"), ("data", "data_variant", "text"),
            ("agent", "agent", "text"), ("model", "model", "text"), ("seed", "seed", "num"),
            ("score", "final_score", "num"), ("best", "best_score", "num"), ("baseline", "baseline", "num"),
            ("improvement", "improvement", "pct"), ("success", "success", "yes"), ("steps", "steps", "num"),
            ("wall time (s)", "wall_time_s", "sec"), ("tokens", "total_tokens", "num"), ("cost", "cost", "usd"),
            ("failure labels", "failure_labels", "text")]


def _cell(kind: str, value, link: str | None = None) -> str:
    if kind == "text":
        shown = escape(str(value or "–"))
        if link:
            shown = f"<a href='{escape(link)}'>{shown}</a>"
        return f"<td>{shown}</td>"
    if value is None or value == "":
        return "<td class='num' data-sort=''>–</td>"
    if kind == "yes":
        return f"<td data-sort='{int(bool(value))}'>{'yes' if value else 'no'}</td>"
    shown = {"pct": f"{value:+.1%}", "usd": f"${value:.4f}", "sec": f"{value:.1f}"}.get(kind) or \
        (f"{value:,}" if isinstance(value, int) else f"{value:.6g}")
    return f"<td class='num' data-sort='{value!r}'>{escape(shown)}</td>"


def render_index(rows: list[tuple[dict, str]], folder: Path) -> str:
    """The index page: rows are (evaluation row, link to the run page)."""
    demos = sum(1 for row, _ in rows if row["demo"])
    head = "".join(f"<th>{escape(title)}</th>" for title, _, _ in _COLUMNS)
    body = []
    for row, link in rows:
        cells = []
        for title, column, kind in _COLUMNS:
            cell = _cell(kind, row[column], link if column == "run_id" else None)
            if column == "model" and row["demo"]:
                cell = cell.replace("</td>", " <span class='badge'>demonstration</span></td>")
            if column == "run_id" and row.get("sandboxed") is False:
                cell = cell.replace("</td>", " <span class='badge'>not sandboxed</span></td>")
            cells.append(cell)
        body.append(f"<tr>{''.join(cells)}</tr>")
    successes = sum(1 for row, _ in rows if row["success"])
    note = (f"<div class='demo-banner'>{demos} run(s) were played by the keyless demo model: demonstrations, "
            "not agent results.</div>") if demos else ""
    bare = sum(1 for row, _ in rows if row.get("sandboxed") is False)
    if bare:
        note += (f"<div class='demo-banner unsandboxed'>NOT SANDBOXED: {bare} run(s) ran scripts without the "
                 "sandbox; their scripts could read every file this user can, the answers included, and use "
                 "the network.</div>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>mlab runs in {escape(str(folder))}"
            f"</title><style>{CSS}</style></head><body><div class='index'><h1>Runs in {escape(str(folder))}</h1>"
            f"{note}<p class='meta'>{len(rows)} run(s), {successes} successful. Click a column header to sort; "
            f"click a run to open its trace.</p><table class='runs'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div><script>{INDEX_JS}</script></body></html>\n")


def write_index(folder: Path, output: Path) -> tuple[Path, int]:
    """Write every run's page and the index linking them; returns the index path and the page count."""
    runs = load_runs([folder])
    output = Path(output)
    rows = []
    for run in runs:
        page = write_page(run.dir / RUN_PAGE, render_run(run))
        rows.append((run_row(run), os.path.relpath(page, output.resolve().parent)))
    rows.sort(key=lambda item: (item[0]["task"], item[0]["agent"], item[0]["model"], item[0]["seed"],
                                item[0]["run_id"]))
    write_page(output, render_index(rows, Path(folder)))
    return output, len(rows)
