"""The live display of `mlab run`: one line per step, a rich panel on a terminal.

While a step runs, the panel says so and ticks its elapsed time, with the last line of a script's
output as it comes (bounded, through mlab.text.printable); an external agent's model exchanges
are lines of their own as they happen, the command a reply asks for included.
"""
from __future__ import annotations

import sys
import time

from mlab.text import printable
from mlab.limits import WIND_DOWN_LABEL, is_wind_down

TAIL_CHARS = 4096   # what is kept of a script's output to find its last line
LINE_CHARS = 160    # the most of that line the panel shows


class _Live:
    """The panel's renderable: built again at every refresh, so the elapsed time ticks."""

    def __init__(self, display: "Display"):
        self.display = display

    def __rich__(self):
        return self.display._panel()


class Display:
    """One line per step: a live rich panel on a terminal, plain lines otherwise."""

    def __init__(self, run, plain: bool, demo: bool, console=None):
        self.run = run
        self.start = time.monotonic()
        self.step_started = self.start
        self.live = None
        self.demo = demo
        self.warned = False
        self.last = None      # the last finished step's line
        self.tail = ""        # the end of the running script's output
        self.closed = False
        if not plain and (console is not None or sys.stdout.isatty()):
            from rich.console import Console
            from rich.live import Live

            self.console = console or Console()
            self.live = Live(_Live(self), console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
            if getattr(run, "scripts", None) is not None:
                run.scripts.on_output = self.output
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

    def running(self) -> str:
        """The step under way: its number, its elapsed time and the last line of its script's output
        ('' once the run has ended)."""
        if self.closed or getattr(self.run, "ended", False):
            return ""
        elapsed = time.monotonic() - self.step_started
        line = f"step {self.run.steps_taken + 1:>3}  running {elapsed:.0f}s"
        shown = self.output_line()
        return f"{line}  | {shown}" if shown else line

    def output_line(self) -> str:
        """The last non-blank line of the running script's output ('\\r' ends a line too, as progress bars use
        it), control characters stripped, at most LINE_CHARS long."""
        lines = [part for part in self.tail.replace("\r", "\n").split("\n") if part.strip()]
        if not lines:
            return ""
        last = printable(lines[-1]).strip()
        return last if len(last) <= LINE_CHARS else last[:LINE_CHARS - 1] + "…"

    def output(self, chunk: str) -> None:
        """A script's output as it streams (called from the sandbox's reader thread)."""
        try:
            self.tail = (self.tail + chunk)[-TAIL_CHARS:]
        except TypeError:  # never let a display fault reach the script's run
            pass

    def _panel(self):
        from rich.panel import Panel
        from rich.text import Text

        body = "\n".join(part for part in (self.last, self.running()) if part)
        return Panel(Text(body), title=Text(self._title()))   # Text: `[bold]` in an action name does not style

    def _title(self) -> str:
        title = f"mlab run {self.run.id} — {self.run.task.name} / {self.run.agent.name}"
        if self.demo:
            title += " — DEMONSTRATION by the keyless demo model (not an agent result)"
        return title

    def _show(self, line: str) -> None:
        """A finished step's line: above the panel on a terminal, printed otherwise; the next step starts."""
        self.last, self.tail, self.step_started = line, "", time.monotonic()
        if self.live is not None:
            from rich.text import Text

            self.live.console.print(Text(line))
            self.live.refresh()
        else:
            print(line, flush=True)

    def step(self, record, observation, usage) -> None:
        self._show(self._line(record, usage))
        if usage.cost is None and self.run.limits.cost is not None and not self.warned:
            self.warned = True  # said once: the limit cannot be enforced from here on
            print(f"mlab: warning: the cost limit (${self.run.limits.cost:g}) cannot be applied: a model of this run "
                  "has no price in litellm's price map; use --tokens to bound the run", file=sys.stderr, flush=True)

    def exchange(self, step: int, reply: str) -> None:
        """An external agent's model exchange, as it happens: its step and the reply's first line (a
        tool call's command included), bounded and printable."""
        first = next((part for part in reply.splitlines() if part.strip()), "(an empty reply)")
        first = printable(first).strip()
        first = first if len(first) <= LINE_CHARS else first[:LINE_CHARS - 1] + "…"
        self._show(f"step {step:>3}  model: {first}  {time.monotonic() - self.start:7.1f}s")

    def close(self) -> None:
        self.closed = True
        if self.live is not None:
            self.live.stop()
