"""Benchmark of the sweep executors: 8 short runs on 2 workers, against the ideal 8/2 × one run.

A small task (the offline demo model lists the files, runs a starter that sleeps --sleep seconds
and writes a submission, then submits) is run once alone with `mlab run` to time one run; then
the same experiment of 8 runs goes through `mlab sweep --workers 2` with each executor. Printed:
wall time of each sweep, the ideal (8 / 2 × one run) and their ratio; targets: <= 1.15 for the
local executor, <= 1.3 for Ray on a local instance and on two nodes. Runs share the machine's CPUs, so the time
of 2 runs started together by hand is measured too, and each sweep is also set against 8 / 2 ×
that: the part of the ratio that is the executor's, not the machine's; so is the time from a
run's end (as the sweep prints it) to the next run's start. The Ray instance is started before
the clock starts (its start-up, printed separately, is a one-off cost of a session).

`ray-nodes` runs the same sweep on a Ray cluster of two nodes with no shared folder, as across two
machines: a head and a worker started as separate `ray start` processes (1 CPU each, each with
its own temporary folder, so each run works in a scratch folder of its node and its folder is sent
home to the sweep's), as tests/sweeps/test_sweep_ray.py starts them; their start-up is not
counted. Its line also says its wall time against the local sweep's (the overhead of scaling out).

The ratio counts everything a sweep adds to its runs: starting processes, finding run folders,
state writes and, for Ray, scheduling, shipping the build and bringing run folders home. Two
concurrent runs also share the machine's CPUs (a demo run spends most of its time importing
litellm), so on a small or busy machine the ratio to the ideal rises whatever the executor does.

    python bench/sweep.py [--runs 8] [--workers 2] [--sleep 4] [--executors local,ray,ray-nodes]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TARGETS = {"local": 1.15, "ray": 1.3, "ray-nodes": 1.3}
# the `ray` command of this interpreter (the `ray` script's first line may name another Python)
RAY = [sys.executable, "-c", "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"]
RAY_PORT = 26391


class TwoNodes:
    """A Ray cluster of two nodes on this machine, as across two machines with no shared folder: a
    head and a worker, each a `ray start --block` process of its own (1 CPU each) with its own
    temporary folder, so a run's scratch folder is on its node and its folder is sent home."""

    def __init__(self, folder: Path):
        self.folder, self.address, self.nodes = folder, f"127.0.0.1:{RAY_PORT}", []

    def start(self, *arguments: str, name: str) -> None:
        where = self.folder / name
        (where / "tmp").mkdir(parents=True)
        env = {**os.environ, "TMPDIR": str(where / "tmp"), "RAY_USAGE_STATS_ENABLED": "0"}
        with open(where / "ray-start.log", "wb") as log:
            self.nodes.append(subprocess.Popen(
                [*RAY, "start", "--block", "--temp-dir", str(where / "ray"), "--num-cpus", "1",
                 "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *arguments],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def wait_for(self, count: int, deadline: float) -> None:
        import re

        while True:
            done = subprocess.run([*RAY, "status", "--address", self.address], capture_output=True, text=True,
                                  timeout=60)
            if len(re.findall(r"^\s*1 node_", done.stdout, re.M)) >= count:
                return
            if time.monotonic() > deadline or any(node.poll() is not None for node in self.nodes):
                logs = [(self.folder / n / "ray-start.log").read_text(errors="replace")[-2000:] for n in ("h", "w")
                        if (self.folder / n / "ray-start.log").is_file()]
                sys.exit("the two Ray nodes did not come up:\n" + "\n".join(logs))
            time.sleep(1)

    def __enter__(self) -> "TwoNodes":
        os.environ["RAY_AUTH_MODE"] = "disabled"   # the nodes and the sweep's driver share no token here
        deadline = time.monotonic() + 300
        try:
            self.start("--head", "--port", str(RAY_PORT), "--include-dashboard", "false", name="h")
            self.wait_for(1, deadline)
            self.start("--address", self.address, name="w")
            self.wait_for(2, deadline)
        except BaseException:   # a node that came up is stopped, whatever stopped the other
            self.__exit__()
            raise
        return self

    def __exit__(self, *_) -> None:
        import signal

        for node in reversed(self.nodes):   # SIGKILL to each node's process group: a SIGTERM'd head drains for 30 s
            if node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()


def make_project(folder: Path, runs: int, sleep: float) -> Path:
    """The task and an experiment of `runs` runs; returns the compiled experiment's .yaml."""
    from mlabc.api import compile_paths

    (folder / "quick" / "env").mkdir(parents=True)
    (folder / "quick" / "env" / "train.py").write_text(textwrap.dedent(f"""\
        import csv, time
        time.sleep({sleep})
        rows = list(csv.DictReader(open("train.csv")))
        mean = sum(float(r["y"]) for r in rows) / len(rows)
        with open("submission.csv", "w") as out:
            out.write("Id,y\\n")
            for r in csv.DictReader(open("test.csv")):
                out.write(f"{{r['Id']}},{{mean}}\\n")
        """))
    draw = random.Random(0)
    rows = ["Id,x,y"] + [f"{i},{i % 5},{(i % 5) * 3 + draw.random():.3f}" for i in range(80)]
    (folder / "quick" / "rows.csv").write_text("\n".join(rows) + "\n")
    (folder / "quick.mlab").write_text(textwrap.dedent(f"""\
        use std "agents"
        task quick {{
          title "A short task for the sweep benchmark"
          category canonical
          problem "Predict y; write submission.csv with Id and y."
          starter "quick/env"
          data lite {{ from csv "quick/rows.csv" split random 0.25 seed 1 id "Id" answers ["y"]
                      public ["train.csv", "test.csv"] private ["answers.csv"] }}
          submission "submission.csv" columns ["Id", "y"]
          metric mae on "y" lower_is_better
          baseline run "train.py"
          hardware {{ cpus 1 gpus 0 memory 1GiB }}
        }}
        experiment bench {{
          tasks [quick]
          agents [research]
          models ["mlab/demo"]
          runs {runs}
          data lite
          limits {{ steps 4 }}
        }}
        """))
    compiled, manifest = compile_paths([str(folder / "quick.mlab")], folder / "build")
    if manifest is None:
        sys.exit("the benchmark task does not compile:\n" + "\n".join(d.message for d in compiled.diagnostics))
    return folder / "build" / "experiments" / "bench.yaml"


def mlab(*args: str, cwd: Path) -> float:
    """Run an mlab command; its wall time in seconds (exit on failure)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mlab.cli", *args], cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"mlab {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return took


def timed_sweep(arguments: list[str], cwd: Path) -> tuple[float, float]:
    """Run `mlab sweep --plain`; its wall time and the mean time from a run's end being noticed
    to the next run's start (read from its event lines as they come)."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "mlab.cli", *arguments], cwd=cwd, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ended, gaps, lines = [], [], []
    for line in process.stdout:
        now = time.perf_counter()
        lines.append(line)
        if line.startswith("done "):
            ended.append(now)
        elif line.startswith("start ") and ended:
            gaps.append(now - ended.pop(0))
    if process.wait() != 0:
        sys.exit(f"mlab {' '.join(arguments)} failed ({process.returncode}):\n{''.join(lines[-40:])}")
    return time.perf_counter() - start, (sum(gaps) / len(gaps) if gaps else 0.0)


def run_arguments(folder: Path, build: Path) -> list[str]:
    return ["run", "quick", "--build", str(build), "--model", "mlab/demo", "--steps", "4",
            "--runs-dir", str(folder / "single"), "--plain"]


def one_run(folder: Path, build: Path) -> float:
    return mlab(*run_arguments(folder, build), cwd=folder)


def runs_at_once(folder: Path, build: Path, count: int) -> float:
    """Wall time of `count` runs started together with no sweep: what the machine itself allows."""
    start = time.perf_counter()
    processes = [subprocess.Popen([sys.executable, "-m", "mlab.cli", *run_arguments(folder, build)], cwd=folder,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(count)]
    if any(p.wait() != 0 for p in processes):
        sys.exit("a run of the benchmark task failed")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sleep", type=float, default=4.0, help="seconds the starter script sleeps")
    parser.add_argument("--executors", default="local,ray,ray-nodes",
                        help="local, ray (a local instance), ray-nodes (two `ray start` nodes, no shared folder)")
    parser.add_argument("--quick", action="store_true", help="2 short runs on the local executor after one alone, which stands for every other measure: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.sleep, args.executors = 2, 0.2, "local"
    executors = [e for e in args.executors.split(",") if e]
    with tempfile.TemporaryDirectory(prefix="mlab-bench-sweep-") as temp:
        folder = Path(temp)
        os.environ["MLAB_CACHE"] = str(folder / "cache")
        os.environ["SCIKIT_LEARN_DATA"] = str(folder / "sklearn")
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        experiment = make_project(folder, args.runs, args.sleep)
        build = experiment.parent.parent
        first = one_run(folder, build)  # prepares the data and measures the baseline, once
        if args.quick:   # the run that prepared the data stands for one run alone and for runs together
            single = together = first
        else:
            repeats = 2  # the best of `repeats` measures a machine's noise out
            single = min(one_run(folder, build) for _ in range(repeats))
            together = min(runs_at_once(folder, build, args.workers) for _ in range(repeats))
        ideal = args.runs / args.workers * single
        shared = args.runs / args.workers * together
        print(f"one run alone: {single:.2f} s; ideal for {args.runs} runs on {args.workers} workers: {ideal:.2f} s")
        print(f"{args.workers} runs started together without a sweep: {together:.2f} s (the machine's own "
              f"slowdown {together / single:.3f}); {args.runs} runs that way: {shared:.2f} s")
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
        walls: dict[str, float] = {}
        for executor in executors:
            extra: list[str] = []
            nodes = None
            if executor.startswith("ray"):
                try:
                    import ray  # noqa: F401
                except ImportError:
                    print(f"{executor}: skipped (Ray is not installed: pip install 'mlab-harness[ray]')")
                    continue
            if executor == "ray-nodes":
                started = time.perf_counter()
                nodes = TwoNodes(Path(tempfile.mkdtemp(prefix="mrb", dir="/tmp"))).__enter__()  # a short path: Ray's sockets
                print(f"ray-nodes: a head and a worker node (`ray start`, 1 CPU each, their own temporary folders) "
                      f"up in {time.perf_counter() - started:.1f} s (not counted)")
                extra = ["--address", nodes.address]
            elif executor == "ray":
                import ray

                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                started = time.perf_counter()
                ray.init(include_dashboard=False, log_to_driver=False)
                print(f"ray: local instance started in {time.perf_counter() - started:.1f} s (not counted)")
                extra = ["--address", ray.get_runtime_context().gcs_address]
            try:
                wall, gap = timed_sweep(["sweep", str(experiment), "--executor", executor.split("-")[0], "--workers",
                                         str(args.workers), "--runs-dir", str(folder / f"sweep-{executor}"), "--plain",
                                         "--no-report", *extra], cwd=folder)
            finally:
                if nodes is not None:
                    nodes.__exit__()
                    shutil.rmtree(nodes.folder, ignore_errors=True)
            walls[executor] = wall
            ratio = wall / ideal
            verdict = "ok" if ratio <= TARGETS[executor] else "over target"
            against_local = f"; {wall / walls['local']:.3f}x the local sweep" if "local" in walls and executor != "local" else ""
            print(f"{executor}: {wall:.2f} s for {args.runs} runs; ratio to ideal {ratio:.3f} "
                  f"(target <= {TARGETS[executor]}) {verdict}; against runs started together "
                  f"{wall / shared:.3f}{against_local}; a run's end to the next start {gap * 1000:.0f} ms")
            if executor == "ray":
                ray.shutdown()
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
