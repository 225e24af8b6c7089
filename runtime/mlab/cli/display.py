"""The live display of `mlab run`: one line per step, a rich panel on a terminal."""
from __future__ import annotations

import sys
import time

from mlab.errors import printable
from mlab.limits import WIND_DOWN_LABEL, is_wind_down


class Display:
    """One line per step: a live rich panel on a terminal, plain lines otherwise."""

    def __init__(self, run, plain: bool, demo: bool):
        self.run = run
        self.start = time.monotonic()
        self.live = None
        self.demo = demo
        self.warned = False
        if not plain and sys.stdout.isatty():
            from rich.console import Console
            from rich.live import Live

            self.console = Console()
            self.live = Live(self._panel(None, None), console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
        else:
            print(self._title(), flush=True)

    def _line(self, record, usage) -> str:
        action = record.get("action") if isinstance(record.get("action"), str) else "(none)"
        action = printable(action)   # the agent's own text: an unknown action is shown as it wrote it
        cost = "unknown" if usage is None or usage.cost is None else f"${usage.cost:.4f}"
        tokens = 0 if usage is None else usage.total_tokens
        step, status = f"step {record['step']:>3}", record["status"]
        if is_wind_down(record, self.run.limits.steps):
            # Wind-down after a limit (the last chance to submit): no step number past the limit,
            # and an action refused there reads as not carried out.
            step = WIND_DOWN_LABEL
            status = "not run: limit reached" if status == "shutdown" else status
        return (f"{step}  {action:<28} {time.monotonic() - self.start:7.1f}s  "
                f"tokens {tokens:>9,}  cost {cost}  [{status}]")

    def _panel(self, record, usage):
        from rich.panel import Panel

        from rich.text import Text

        body = self._line(record, usage) if record else "starting..."
        return Panel(Text(body), title=Text(self._title()))   # Text: `[bold]` in an action name does not style

    def _title(self) -> str:
        title = f"mlab run {self.run.id} — {self.run.task.name} / {self.run.agent.name}"
        if self.demo:
            title += " — DEMONSTRATION by the keyless demo model (not an agent result)"
        return title

    def step(self, record, observation, usage) -> None:
        if self.live is not None:
            from rich.text import Text

            self.live.update(self._panel(record, usage))
            self.live.console.print(Text(self._line(record, usage)))
        else:
            print(self._line(record, usage), flush=True)
        if usage.cost is None and self.run.limits.cost is not None and not self.warned:
            self.warned = True  # said once: the limit cannot be enforced from here on
            print(f"mlab: warning: the cost limit (${self.run.limits.cost:g}) cannot be applied: a model of this run "
                  "has no price in litellm's price map; use --tokens to bound the run", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
