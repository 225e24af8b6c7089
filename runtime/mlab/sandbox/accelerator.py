"""Accelerator busy seconds of one script, sampled from the vendor's tool while the script runs.

For NVIDIA GPUs the sampler is one long-lived `nvidia-smi` child started with the script and
killed when it ends, printing `timestamp, index, utilization.gpu` of the run's devices every
SAMPLE_MS milliseconds. Per device, busy seconds are

    busy = Σ utilization_k / 100 × (t_k − t_(k−1))

over the device's samples in the script, t_k being the tool's own timestamp of sample k (the
time its line was read when the timestamp is not in the documented form): the
first sample starts the clock, each later one counts its utilization over the time since the one
before, at most MAX_GAP_PERIODS sampling periods (a stalled tool or a clock jump cannot inflate it).
The run's figure is the sum over devices and scripts (runtime/mlab/run/hardware.py).

Nothing here raises or hangs: no device to sample starts no process at all; a tool that is
missing, cannot start, prints what cannot be read or stops early gives what was measured and a
note saying so; lines are read with a bounded length, and the child's whole process group is
killed at the end.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from datetime import datetime

TOOL = "nvidia-smi"
SAMPLE_MS = 200
MAX_LINE_BYTES = 512
STOP_WAIT_S = 2.0
MAX_GAP_PERIODS = 10
TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S.%f"  # nvidia-smi's `timestamp` field


def sampler_argv(devices: tuple[int, ...], interval_ms: int = SAMPLE_MS) -> list[str]:
    """The vendor tool's command line: the devices' utilization every interval_ms, until killed."""
    return [TOOL, "--query-gpu=timestamp,index,utilization.gpu", "--format=csv,noheader,nounits",
            f"--id={','.join(str(d) for d in devices)}", f"--loop-ms={int(interval_ms)}"]


class BusyIntegral:
    """Σ utilization/100 × Δt per device, fed one sample at a time (memory: one entry per device)."""

    def __init__(self, devices: tuple[int, ...]) -> None:
        self.devices = tuple(devices)
        self.busy = {d: 0.0 for d in self.devices}
        self.last: dict[int, float] = {}
        self.samples = 0
        self.unreadable = 0

    def add(self, line: str, max_dt: float = float("inf"), arrived: float | None = None) -> None:
        """One line of the tool's output: `timestamp, index, utilization`. A timestamp in another
        format than nvidia-smi's documented one is replaced by `arrived` (when the line was read)."""
        parts = [p.strip() for p in line.split(",")]
        try:
            device, utilization = int(parts[1]), float(parts[2])
        except (ValueError, IndexError):  # "[N/A]", "[Not Supported]", a cut line
            self.unreadable += 1
            return
        try:
            at = datetime.strptime(parts[0], TIMESTAMP_FORMAT).timestamp()
        except ValueError:
            if arrived is None:
                self.unreadable += 1
                return
            at = arrived
        if len(parts) != 3 or device not in self.busy:
            self.unreadable += 1
            return
        self.samples += 1
        before, self.last[device] = self.last.get(device), at
        if before is not None and at > before:
            share = min(max(utilization, 0.0), 100.0) / 100.0
            self.busy[device] += share * min(at - before, max_dt)

    def record(self) -> dict:
        return {"busy_s": round(sum(self.busy.values()), 4),
                "devices": {str(d): round(s, 4) for d, s in self.busy.items()}, "samples": self.samples}


class AcceleratorSampler:
    """The vendor tool sampling `devices` from start() to stop(); stop() gives the script's record."""

    def __init__(self, devices: tuple[int, ...], interval_ms: int = SAMPLE_MS) -> None:
        self.integral = BusyIntegral(devices)
        self.interval_ms = int(interval_ms)
        self.process: subprocess.Popen | None = None
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._errors = None
        self._started = time.monotonic()

    @classmethod
    def start(cls, devices: tuple[int, ...], interval_ms: int = SAMPLE_MS) -> "AcceleratorSampler | None":
        """A running sampler, or None (and no process) when there is no device to sample."""
        if not devices:
            return None
        sampler = cls(tuple(devices), interval_ms)
        sampler._launch()
        return sampler

    def _launch(self) -> None:
        if shutil.which(TOOL) is None:
            self.problem = f"{TOOL} is not on PATH"
            return
        self._errors = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(sampler_argv(self.integral.devices, self.interval_ms),
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=self._errors, start_new_session=True)
        except OSError as problem:
            self.problem = f"{TOOL} could not be started ({problem.strerror or problem})"
            return
        self._started = time.monotonic()
        self._reader = threading.Thread(target=self._read, name="accelerator-sampler", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            raw = stream.readline(MAX_LINE_BYTES)
            if not raw:
                return
            with self._lock:
                self.integral.add(raw.decode("utf-8", "replace"), max_dt=MAX_GAP_PERIODS * self.interval_ms / 1000,
                                  arrived=time.time())

    def stop(self) -> dict:
        """Kill the tool and say what it measured: {"busy_s", "devices", "samples", "interval_ms",
        "note"}; busy_s is None when the tool gave no sample at all because it failed."""
        ran_s = time.monotonic() - self._started
        exit_code = None
        if self.process is not None:
            exit_code = self.process.poll()  # not None: it ended before the script did
            if exit_code is None:  # (once reaped, its number may be another's: never signalled then)
                self._kill()
            if self._reader is not None:
                self._reader.join(STOP_WAIT_S)
        with self._lock:
            record = self.integral.record()
            unreadable = self.integral.unreadable
        notes = [self.problem] if self.problem else []
        if exit_code is not None:
            notes.append(f"{TOOL} stopped after {ran_s:.1f} s of the script, exit code {exit_code}"
                         f"{self._error_text()}; busy seconds cover what it sampled before")
        if self._reader is not None and self._reader.is_alive():
            notes.append(f"{TOOL}'s output was still open {STOP_WAIT_S:g} s after the script; the rest is not counted")
        if unreadable:
            notes.append(f"{unreadable} line(s) of {TOOL} were not a utilization sample (for example [N/A])")
        if self.process is None or (exit_code is not None and record["samples"] == 0):
            record["busy_s"] = None
        record.update(interval_ms=self.interval_ms, note="; ".join(notes) or None)
        if self._errors is not None:
            self._errors.close()
        if self.process is not None and not (self._reader and self._reader.is_alive()):
            self.process.stdout.close()
        return record

    def _kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            pass

    def _error_text(self) -> str:
        try:
            self._errors.seek(0)
            text = self._errors.read(400).decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f" ({text[0][:200]})" if text else ""
