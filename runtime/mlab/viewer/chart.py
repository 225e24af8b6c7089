"""The score-over-steps chart of a run page, as inline SVG (no script, no external file)."""
from __future__ import annotations

import math
from html import escape

WIDTH, HEIGHT = 760, 230
LEFT, RIGHT, TOP, BOTTOM = 70, 16, 18, 34


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    if high == low:
        return [low]
    return [low + (high - low) * i / count for i in range(count + 1)]


def _label(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def score_chart(scores: list[dict], metric: str, direction: str | None, baseline: float | None) -> str:
    """An SVG line chart of the score after each step, with the baseline and the best step marked."""
    points = [(row["step"], row["score"]) for row in scores
              if row.get("score") is not None and math.isfinite(row["score"])]
    if not points:
        return "<p class='meta'>No step has a scorable submission.</p>"
    last_step = max(row["step"] for row in scores) or 1
    values = [v for _, v in points] + ([baseline] if baseline is not None and math.isfinite(baseline) else [])
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or abs(high) * 0.05 or 1.0
    low, high = low - pad, high + pad

    def x(step: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * step / last_step

    def y(value: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (high - value) / (high - low)

    lower = direction == "lower_is_better"
    best = min(points, key=lambda p: (p[1] if lower else -p[1], p[0]))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="score-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="100%" role="img" aria-label="{escape(metric)} by step">']
    for tick in _ticks(low, high):
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                     f'stroke="#e3e7ee"/><text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                     f'{_label(tick)}</text>')
    step_ticks = sorted({round(t) for t in _ticks(0, last_step, min(last_step, 10))})
    for tick in step_ticks:
        parts.append(f'<text x="{x(tick):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{tick}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 4}" text-anchor="middle">step</text>')
    if baseline is not None and math.isfinite(baseline):
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(baseline):.1f}" y2="{y(baseline):.1f}" '
                     f'stroke="#9a6700" stroke-dasharray="5 4"/><text x="{WIDTH - RIGHT - 4}" '
                     f'y="{y(baseline) - 5:.1f}" text-anchor="end">baseline {_label(baseline)}</text>')
    path = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="#1f6feb" stroke-width="2"/>')
    for step, value in points:
        colour = "#1c7c3c" if (step, value) == best else "#1f6feb"
        parts.append(f'<circle cx="{x(step):.1f}" cy="{y(value):.1f}" r="{5 if (step, value) == best else 3}" '
                     f'fill="{colour}"><title>step {step}: {escape(metric)} {value:.6g}</title></circle>')
    parts.append(f'<text x="{LEFT + 4}" y="{TOP - 5}">{escape(metric)} '
                 f'({"lower" if lower else "higher"} is better); best at step {best[0]}: {best[1]:.6g}</text>')
    parts.append("</svg>")
    return "".join(parts)
