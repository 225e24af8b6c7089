"""Report tables: one specification per table, rendered as Markdown, LaTeX and CSV.

A table is a frame of raw numbers (written as CSV unchanged) and a list of columns, each a
header and a function that formats one row; Markdown and LaTeX render the same columns, so
the three forms never disagree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

Column = tuple[str, Callable[[pd.Series], str]]


@dataclass
class Table:
    name: str              # file stem: <name>.csv, <name>.tex
    title: str
    frame: pd.DataFrame    # raw numbers
    columns: list[Column]
    note: str = ""


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def percent(value, digits: int = 1) -> str:
    return "–" if _missing(value) else f"{100 * value:.{digits}f}%"


def with_interval(row: pd.Series, name: str, as_percent: bool = True, digits: int = 1) -> str:
    """'37.5% [25.0, 50.0]' (or plain numbers) from the columns name, name_low, name_high."""
    value, low, high = row[name], row.get(f"{name}_low"), row.get(f"{name}_high")
    if _missing(value):
        return "–"
    if as_percent:
        shown = percent(value, digits)
        return shown if _missing(low) else f"{shown} [{100 * low:.{digits}f}, {100 * high:.{digits}f}]"
    shown = number(value, digits)
    return shown if _missing(low) else f"{shown} [{number(low, digits)}, {number(high, digits)}]"


def number(value, digits: int = 1) -> str:
    if _missing(value):
        return "–"
    if float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}" if abs(value) >= 0.01 or value == 0 else f"{value:.2g}"


def signed_percent(row: pd.Series, name: str) -> str:
    value, low, high = row[name], row.get(f"{name}_low"), row.get(f"{name}_high")
    if _missing(value):
        return "–"
    shown = f"{100 * value:+.1f} pp"
    return shown if _missing(low) else f"{shown} [{100 * low:+.1f}, {100 * high:+.1f}]"


def text(name: str) -> Callable[[pd.Series], str]:
    return lambda row: "–" if _missing(row[name]) else str(row[name])


def to_markdown(table: Table) -> str:
    headers = [h for h, _ in table.columns]
    if table.frame.empty:
        return "_No rows._"
    lines = [f"| {' | '.join(headers)} |", f"|{'|'.join('---' for _ in headers)}|"]
    for _, row in table.frame.iterrows():
        cells = [fmt(row).replace("|", "\\|") for _, fmt in table.columns]
        lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "−": "$-$",
                  "–": "--", "×": r"$\times$"}


def latex_escape(value: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in value)


def to_latex(table: Table) -> str:
    """A booktabs tabular (\\usepackage{booktabs}) with the table's title as a comment."""
    spec = "l" * len(table.columns)
    lines = [f"% {latex_escape(table.title)}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(latex_escape(h) for h, _ in table.columns) + r" \\", "\\midrule"]
    for _, row in table.frame.iterrows():
        lines.append(" & ".join(latex_escape(fmt(row)) for _, fmt in table.columns) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_table(table: Table, folder: Path) -> list[Path]:
    """<name>.csv (raw numbers) and <name>.tex; returns the paths written."""
    csv_path, tex_path = folder / f"{table.name}.csv", folder / f"{table.name}.tex"
    table.frame.to_csv(csv_path, index=False)
    tex_path.write_text(to_latex(table), encoding="utf-8")
    return [csv_path, tex_path]
