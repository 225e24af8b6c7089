"""Live progress of a sweep: runs done / running / failed, elapsed time, tokens and cost so far.

Finished runs are counted from their result.json, running ones from their trace as it grows
(read from where the last look stopped). On a terminal one line is rewritten in place; in a log
or a pipe each event is a plain line carrying the same counts.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mlab.text import printable


class RunUsage:
    """Tokens and cost of one run folder so far."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.offset = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.final = False

    def read(self) -> tuple[int, float | None]:
        if self.final:
            return self.tokens, self.cost
        try:
            result = json.loads((self.folder / "result.json").read_text(encoding="utf-8"))
            self.tokens, self.cost, self.final = int(result.get("total_tokens") or 0), result.get("cost"), True
            return self.tokens, self.cost
        except (OSError, ValueError):
            pass
        self._read_trace()
        return self.tokens, self.cost

    def _read_trace(self) -> None:
        path = self.folder / "trace.jsonl"
        try:
            size = path.stat().st_size
            if size < self.offset:  # a resume cut a torn record off: count again from the start
                self.offset, self.tokens, self.cost = 0, 0, 0.0
            if size == self.offset:
                return
            with open(path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read(size - self.offset)
        except OSError:
            return
        complete = data[:data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for call in (record.get("model") or {}).get("calls", []):
                self.tokens += int(call.get("prompt_tokens") or 0) + int(call.get("completion_tokens") or 0)
                self.cost = None if self.cost is None or call.get("cost") is None else self.cost + call["cost"]


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """The sweep's status line (rewritten on a terminal) and its event lines."""

    def __init__(self, experiment: str, stream=None, live: bool | None = None, interval_s: float = 0.5):
        self.experiment = experiment
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.start = time.monotonic()
        self.interval_s = interval_s
        self.usage: dict[str, RunUsage] = {}
        self.counts: dict[str, int] = {}
        self.tokens, self.cost, self.cost_unknown = 0, 0.0, False
        self.cost_limit: float | None = None  # the sweep's --cost, shown beside what is spent
        self._drawn = 0.0

    def measure(self, folders: list[Path]) -> None:
        """Sum tokens and cost over these run folders."""
        tokens, cost, unknown = 0, 0.0, False
        for folder in folders:
            reader = self.usage.setdefault(str(folder), RunUsage(folder))
            run_tokens, run_cost = reader.read()
            tokens += run_tokens
            if run_cost is None:
                unknown = True
            else:
                cost += run_cost
        self.tokens, self.cost, self.cost_unknown = tokens, cost, unknown

    def line(self) -> str:
        c = self.counts
        cost = f"${self.cost:.4f}" + (" + unknown" if self.cost_unknown else "") + (
            f" of ${self.cost_limit:g}" if self.cost_limit is not None else "")
        return (f"sweep {self.experiment}: {c.get('done', 0)}/{c.get('total', 0)} done, {c.get('running', 0)} "
                f"running, {c.get('failed', 0)} failed, {c.get('waiting', 0)} waiting | "
                f"{_clock(time.monotonic() - self.start)} | {self.tokens:,} tokens | cost {cost}")

    def update(self, counts: dict[str, int], force: bool = False) -> None:
        self.counts = counts
        if self.live and (force or time.monotonic() - self._drawn >= self.interval_s):
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
            self._drawn = time.monotonic()

    def event(self, text: str) -> None:
        text = printable(text)   # a failure's message may quote the run's log, which scripts wrote
        if self.live:
            self.stream.write("\r\x1b[K" + text + "\n" + self.line() + "\x1b[K")
        else:
            self.stream.write(f"{text}  [{self.line()}]\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
            self.stream.flush()
