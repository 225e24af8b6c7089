"""The Ray executor: each run a Ray task sized by its task's hardware, its folder streamed home.

A run asks Ray for the CPUs, GPUs and memory its task declares, so a cluster puts GPU tasks on
GPU nodes. On the worker the run is an `mlab run` process in a scratch folder; the task yields
the run folder back in pieces (mlab.sweeps.transfer) as the trace grows, so the sweep's
copy is always a resumable run: a worker or node lost mid-run leaves a run that the sweep
resumes on another worker. Workers need mlab and the task sources at the same paths as the
sweep's machine (the usual single image for a cluster); the build travels with each task.
"""
from __future__ import annotations

import functools
import logging
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from mlab.errors import MlabError, UsageError
from mlab.installation import install_hint
from mlab.sweeps.executors import (Attempt, Ended, Executor, die_with_parent, last_message, mlab_command,
                                   resume_arguments)
from mlab.sweeps.plan import RunSpec
from mlab.sweeps.state import SweepFolder, Work
from mlab.sweeps.transfer import FolderSender, apply_piece, pack_folder, unpack

BUILD_MARK, RUNS_MARK = "{build}", "{runs}"
SYNC_S = 0.5
PASSED_PREFIXES = ("MLAB_", "LITELLM_")
PASSED_SUFFIXES = ("_API_KEY", "_API_BASE", "_API_VERSION", "_TOKEN")
PASSED_NAMES = ("SCIKIT_LEARN_DATA", "HF_HOME", "KAGGLE_USERNAME", "KAGGLE_KEY")


def passed_environment() -> dict[str, str]:
    """The variables a run needs wherever it runs: model keys, mlab's and litellm's settings."""
    return {name: value for name, value in os.environ.items()
            if name.startswith(PASSED_PREFIXES) or name.endswith(PASSED_SUFFIXES) or name in PASSED_NAMES}


def run_on_worker(arguments: list[str], build_blob: bytes | None, resume_blob: bytes | None,
                  run_name: str | None, environment: dict, sync_s: float = SYNC_S):
    """The Ray task (a generator): run `mlab run` in a scratch folder and yield its pieces.

    Yields {"node", "node_id", "pid", "scratch"} first, then {"run", "piece", "log", "exit_code"} messages; the last one
    has the exit code and the last piece (workspace and output included).
    """
    scratch = Path(tempfile.mkdtemp(prefix="mlab-sweep-"))
    try:
        runs = scratch / "runs"
        runs.mkdir()
        sender = None
        if resume_blob is not None:
            run_dir = runs / run_name
            unpack(resume_blob, run_dir)
            sender = FolderSender(run_dir, already_there=True)
            arguments = resume_arguments(run_dir)
        else:
            unpack(build_blob, scratch / "build")
            arguments = [str(scratch / "build") if a == BUILD_MARK else str(runs) if a == RUNS_MARK else a
                         for a in arguments]
        log_path = scratch / "run.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(mlab_command(arguments), stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, cwd=scratch, env={**os.environ, **environment},
                                       preexec_fn=functools.partial(die_with_parent, os.getpid()))
        yield {"node": socket.gethostname(), "node_id": _node_id(), "pid": process.pid, "scratch": str(scratch)}
        log_sent = 0
        while True:
            code = process.poll()
            if sender is None:
                made = [p for p in runs.iterdir() if not p.name.startswith(".")   # not one being made
                        and (p / "run.json").is_file() and (p / "models.json").is_file()]
                if made:
                    sender = FolderSender(made[0])
            piece = sender.collect(final=code is not None) if sender else None
            with open(log_path, "rb") as log:
                log.seek(log_sent)
                text = log.read()
                log_sent += len(text)
            if piece or text or code is not None:
                yield {"run": sender.folder.name if sender else None, "piece": piece, "log": text, "exit_code": code}
            if code is not None:
                return
            time.sleep(sync_s)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _node_id() -> str | None:
    """The Ray node this task runs on (several can share a host)."""
    try:
        import ray

        return ray.get_runtime_context().get_node_id()
    except Exception:  # not in a Ray worker (a test calls the generator directly): no node to name
        return None


def _gib(value: float) -> str:
    return f"{value / 2**30:.1f} GiB"


class RayExecutor(Executor):
    """Runs as Ray tasks on a cluster (`address`) or on a Ray instance started here."""

    name = "ray"

    def __init__(self, folder: SweepFolder, build_dir: Path, workers: int | None, address: str | None):
        try:
            import ray
        except ImportError:
            raise UsageError(f"the ray executor needs Ray: {install_hint('ray')} "
                             "(or pip install 'ray[default]')") from None
        self.ray = ray
        self.folder = folder
        self.workers = workers
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            else:
                ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as problem:  # Ray raises several kinds here; each is one message to the user
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise MlabError(f"cannot start or reach {where}: {problem}") from None
        self.nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
        self.has_gpus = any(n.get("GPU", 0) > 0 for n in self.nodes)
        self.build_ref = ray.put(pack_folder(Path(build_dir)))
        self.task = ray.remote(run_on_worker)
        self.environment = passed_environment()
        self.active: dict[str, tuple[Attempt, object]] = {}
        self.exit_codes: dict[str, int] = {}
        self.messages: queue.Queue = queue.Queue()

    # -- resources -----------------------------------------------------------------------
    def resources(self, spec: RunSpec) -> dict:
        """What Ray reserves for the run: the task's CPUs and memory, and its GPUs when the
        task requires them or the cluster has some."""
        hardware = spec.hardware
        gpus = spec.gpus if spec.gpus and (spec.gpus_required or self.has_gpus) else 0
        wanted = {"num_cpus": max(int(hardware.get("cpus") or 1), 1), "num_gpus": gpus}
        if hardware.get("memory"):
            wanted["memory"] = int(hardware["memory"])
        return wanted

    def check_fits(self, specs: list[RunSpec]) -> None:
        """Refuse a sweep with a run no node of the cluster can ever hold (it would wait forever);
        without --workers, keep as many runs in flight as the cluster's CPUs hold."""
        if self.workers is None:
            cpus = sum(node.get("CPU", 0) for node in self.nodes)
            widest = max((self.resources(spec)["num_cpus"] for spec in specs), default=1)
            self.workers = max(1, int(cpus // widest))
        for spec in specs:
            wanted = self.resources(spec)
            if any(node.get("CPU", 0) >= wanted["num_cpus"] and node.get("GPU", 0) >= wanted["num_gpus"]
                   and node.get("memory", 0) >= wanted.get("memory", 0) for node in self.nodes):
                continue
            largest = max(self.nodes, key=lambda n: (n.get("GPU", 0), n.get("CPU", 0), n.get("memory", 0)),
                          default={})
            raise UsageError(
                f"task {spec.task} declares {wanted['num_cpus']} CPUs, {wanted['num_gpus']} GPUs and "
                f"{_gib(wanted.get('memory', 0))} of memory; no node of the Ray cluster has that (the largest "
                f"offers {largest.get('CPU', 0):g} CPUs, {largest.get('GPU', 0):g} GPUs, "
                f"{_gib(largest.get('memory', 0))}); change the task's hardware or add a node")

    # -- the executor --------------------------------------------------------------------
    def has_room(self) -> bool:
        return self.workers is None or len(self.active) < self.workers

    def try_start(self, work: Work) -> Attempt | None:
        if not self.has_room():
            return None
        attempt = Attempt(work, self.folder.log_path(work.spec), run_name=work.resume)
        if work.resume:
            blob = pack_folder(self.folder.run_dir(work.resume), late=False)
            arguments, build = [], None
        else:
            blob, build = None, self.build_ref
            arguments = work.spec.run_arguments(Path(BUILD_MARK), Path(RUNS_MARK))
        with open(attempt.log, "ab") as log:
            log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {work.kind} on Ray: mlab "
                      f"{' '.join(arguments) or 'run --resume ' + str(work.resume)}\n".encode())
        options = {**self.resources(work.spec), "max_retries": 0, "name": f"mlab {work.spec.key}"}
        generator = self.task.options(**options).remote(arguments, build, blob, work.resume, self.environment)
        self.active[attempt.key] = (attempt, generator)
        threading.Thread(target=self._follow, args=(attempt.key, generator), daemon=True).start()
        return attempt

    def _follow(self, key: str, generator) -> None:
        """Hand each message of a run's task to the sweep's thread, then how the task ended."""
        ray = self.ray
        try:
            for reference in generator:
                self.messages.put((key, "message", ray.get(reference)))
            self.messages.put((key, "end", None))
        except ray.exceptions.RayTaskError as problem:  # the task itself raised: a failure
            self.messages.put((key, "error", str(problem).strip().splitlines()[-1]))
        except ray.exceptions.RayError as problem:  # worker or node lost, or cancelled: resumable
            self.messages.put((key, "lost", type(problem).__name__))

    def poll(self, timeout_s: float) -> list[Ended]:
        ended: list[Ended] = []
        wait = timeout_s
        while True:
            try:
                key, kind, payload = self.messages.get(timeout=wait)
            except queue.Empty:
                return ended
            wait = 0.0  # drain what is there, without waiting again
            attempt, _ = self.active[key]
            if kind == "message":
                self._take(attempt, payload)
                continue
            del self.active[key]
            code = self.exit_codes.pop(key, None)
            if kind == "end" and code is not None:
                ended.append(Ended(attempt, code, message=None if code == 0 else last_message(attempt.log)))
            elif kind == "error":
                ended.append(Ended(attempt, 1, message=f"the Ray task failed: {payload}"))
            else:
                ended.append(Ended(attempt, None, lost=True, message=f"Ray: {payload}"))

    def _take(self, attempt: Attempt, message: dict) -> None:
        if message.get("pid") is not None:   # the first message: where the run is
            with open(attempt.log, "ab") as log:
                log.write(f"on Ray node {message.get('node_id')} ({message.get('node')}), pid "
                          f"{message['pid']}, in {message.get('scratch')}\n".encode())
        if message.get("log"):
            with open(attempt.log, "ab") as log:
                log.write(message["log"])
        if message.get("run"):
            attempt.run_name = message["run"]
            if message.get("piece"):
                apply_piece(self.folder.run_dir(attempt.run_name), message["piece"])
        if message.get("exit_code") is not None:
            self.exit_codes[attempt.key] = message["exit_code"]

    def running(self) -> list[Attempt]:
        return [attempt for attempt, _ in self.active.values()]

    def stop(self, hard: bool) -> None:
        # A Ray task cannot be asked to finish its step; cancelling it loses at most the step
        # under way, since every finished step has already reached the sweep.
        for _, generator in self.active.values():
            try:
                self.ray.cancel(generator, force=True)
            except (ValueError, TypeError, self.ray.exceptions.RayError):  # finished, or the cluster is gone
                pass  # nothing left to stop

    def close(self) -> None:
        self.stop(hard=True)
        deadline = time.monotonic() + 10
        while self.active and time.monotonic() < deadline:
            self.poll(0.2)
        self.ray.shutdown()

