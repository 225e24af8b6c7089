"""The local executor: up to K `mlab run` processes on this machine, GPUs handed out per run.

Each run is a child process (`python -m mlab.cli run ...`) writing its run folder straight into
the sweep's runs/; a child killed at any moment leaves a run that `--resume` continues. A task
that declares GPUs gets that many devices from --devices for the length of its run, so each
device serves one run at a time; CPU-only runs see no GPU when devices are handed out.
"""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from mlab.sweeps.executors import (Attempt, Ended, Executor, die_with_parent, last_message, mlab_command,
                                   resume_arguments)
from mlab.sweeps.state import SweepFolder, Work, matching_spec, read_identity


class DevicePool:
    """Devices (CUDA indices or UUIDs) lent to runs, each to one run at a time."""

    def __init__(self, devices: list[str]):
        self.devices = list(devices)
        self.free = list(devices)

    def wanted(self, work: Work, folder: SweepFolder) -> list[str] | int:
        """Devices a resumed run was started with (it keeps them), else how many a new run takes."""
        if work.resume:
            try:
                meta = json.loads((folder.run_dir(work.resume) / "run.json").read_text(encoding="utf-8"))
                recorded = meta.get("device")
            except (OSError, ValueError):
                recorded = None
            return [d for d in (recorded or "").split(",") if d in self.devices]
        return min(work.spec.gpus, len(self.devices)) if self.devices else 0

    def take(self, wanted: list[str] | int) -> list[str] | None:
        if isinstance(wanted, int):
            if wanted > len(self.free):
                return None
            taken, self.free = self.free[:wanted], self.free[wanted:]
            return taken
        if not all(d in self.free for d in wanted):
            return None
        self.free = [d for d in self.free if d not in wanted]
        return list(wanted)

    def give_back(self, devices: list[str]) -> None:
        self.free += [d for d in devices if d not in self.free]
        self.free.sort(key=self.devices.index)


class LocalExecutor(Executor):
    """A pool of `workers` run processes on this machine."""

    name = "local"

    def __init__(self, folder: SweepFolder, build_dir: Path, workers: int, devices: list[str] | None = None):
        self.folder = folder
        self.build_dir = Path(build_dir)
        self.workers = workers
        self.pool = DevicePool(devices or [])
        self.processes: dict[str, tuple[Attempt, subprocess.Popen]] = {}
        self.seen = set(folder.run_folders())  # run folders whose run is known

    def has_room(self) -> bool:
        return len(self.processes) < self.workers

    def try_start(self, work: Work) -> Attempt | None:
        if not self.has_room():
            return None
        devices = self.pool.take(self.pool.wanted(work, self.folder))
        if devices is None:
            return None
        attempt = Attempt(work, self.folder.log_path(work.spec), run_name=work.resume, devices=devices)
        if work.resume:
            arguments = resume_arguments(self.folder.run_dir(work.resume))
        else:
            arguments = work.spec.run_arguments(self.build_dir, self.folder.runs)
            if self.pool.devices:
                arguments.append(f"--device={','.join(devices)}")  # "" hides every GPU from a CPU run
        try:
            with open(attempt.log, "ab") as log:
                log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {work.kind}: mlab "
                          f"{' '.join(arguments)}\n".encode())
                process = subprocess.Popen(mlab_command(arguments), stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT,
                                           preexec_fn=functools.partial(die_with_parent, os.getpid()))
        except BaseException:
            self.pool.give_back(devices)
            raise
        self.processes[attempt.key] = (attempt, process)
        return attempt

    def running(self) -> list[Attempt]:
        return [attempt for attempt, _ in self.processes.values()]

    def poll(self, timeout_s: float) -> list[Ended]:
        if not self.processes:
            time.sleep(timeout_s)  # runs wait on something else (a lock): do not spin
            return []
        deadline = time.monotonic() + timeout_s
        while True:
            self._name_new_runs()
            ended = [self._end(key) for key, (_, process) in list(self.processes.items())
                     if process.poll() is not None]
            if ended or time.monotonic() >= deadline or not self.processes:
                return ended
            time.sleep(min(0.1, max(deadline - time.monotonic(), 0)))

    def _end(self, key: str) -> Ended:
        attempt, process = self.processes.pop(key)
        self._name_new_runs()
        self.pool.give_back(attempt.devices)
        code = process.returncode
        return Ended(attempt, code, message=None if code == 0 else last_message(attempt.log))

    def _name_new_runs(self) -> None:
        """Find the folders of new runs: `mlab run` picks the id, so match run.json to the run."""
        unnamed = [a for a, _ in self.processes.values() if a.run_name is None]
        if not unnamed:
            return
        for name in self.folder.run_folders():
            if name in self.seen:
                continue
            identity = read_identity(self.folder.run_dir(name))
            spec = matching_spec(identity, [a.work.spec for a in unnamed]) if identity else None
            if spec is None:
                continue
            for attempt in unnamed:
                if attempt.work.spec == spec:
                    attempt.run_name = name
                    self.seen.add(name)
                    unnamed.remove(attempt)
                    break

    def stop(self, hard: bool) -> None:
        for attempt, process in self.processes.values():
            if process.poll() is None:
                try:
                    # A run stops after its step on SIGINT; SIGKILL to its group ends it at once.
                    if hard:
                        os.killpg(process.pid, signal.SIGKILL)
                    else:
                        process.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        self.stop(hard=True)
        for _, process in self.processes.values():
            process.wait()
