"""Benchmark of the tree-search engine: nodes per minute against the ideal, for 1 and 2 parallel evaluations.

A synthetic task (60 rows, a CSV split, MAE) and the std tree-greedy agent (2 drafts, then
improvements; `parallel` 1 or 2) whose scripted replies are node scripts that each sleep a fixed
time S, write a valid submission and print a validation score. The ideal node runs its script
bare: the Python interpreter's start with the script's imports (timed alone, I) plus S, so the
ideal rate with P evaluations at once is P * 60 / (S + I) nodes per minute; what the engine adds
(model call, copying the parent's workspace, the sandbox, reading the score, checking the
submission, the snapshot and the trace record) shows as the ratio ideal / measured. Target:
within 1.10x at P = 1 and 2, on 0-second and 1-second nodes.

The wall time is that of the search itself (SearchEngine.run_until_done), from the first
decision to the closing record; preparing the run folder and scoring the submission are not
part of it.

Each node's script runs in a fresh sandbox of its own, in a fresh folder (nodes isolated from
each other: mlab.search.evaluation). The target is judged on the steady rate: the nodes after
each thread's first, from the P-th record's end to the last's (the records' elapsed_s), so that
the start of the search (the first model call, the first launcher) is left out; the whole
search's ratio is printed beside it, with when the first P nodes ended. Default: 200 nodes of
under half a second, else 6 (an even number: two at a time, each thread runs as many).

Also printed: the CPU time per node of the harness and of its children (launchers, bubblewrap,
scripts) against the ideal node's (its interpreter's start), the figure to read on a loaded
machine, where wall times mostly measure the load. With --cold each measurement is repeated
with every launcher started on demand (MLAB_SANDBOX_COLD=1: none started ahead while the
previous script runs).

    python bench/tree.py [--nodes N] [--sleep 10] [--parallel 1 2] [--cold] [--quick]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROWS = 60
TARGET = 1.10
REALISTIC_S = 10.0   # the target holds for nodes at least this long

def make_task(folder: Path) -> Path:
    """A task whose lite data is a 60-row CSV split 80/20, scored by MAE on y."""
    (folder / "bench-tree" / "env").mkdir(parents=True)
    rows = "".join(f"{i},{i % 7},{(i % 7) * 2.5}\n" for i in range(1, ROWS + 1))
    (folder / "bench-tree" / "rows.csv").write_text("id,x,y\n" + rows)
    (folder / "bench-tree" / "env" / "train.py").write_text("print('starter')\n")
    source = folder / "bench-tree.mlab"
    source.write_text(textwrap.dedent("""\
        use std "agents"
        task bench-tree {
          title "Tree-search benchmark task"
          category canonical
          problem "Predict y from x: write submission.csv with the columns id, y."
          starter "bench-tree/env"
          data lite {
            from csv "bench-tree/rows.csv"
            split random 0.2 seed 1
            id "id"
            answers ["y"]
            public ["train.csv", "test.csv"]
            private ["answers.csv"]
          }
          submission "submission.csv" columns ["id", "y"]
          metric mae on "y" lower_is_better
          baseline 1.0 because "a benchmark task: only the engine's speed is measured"
          limits { steps 100000 time 100h script_timeout 5m }
        }

        # std tree-greedy (its prompts, its score pattern) with P evaluations at once
        agent bench-tree-1 extends tree-greedy { search greedy { drafts 2 parallel 1 } }
        agent bench-tree-2 extends tree-greedy { search greedy { drafts 2 parallel 2 } }
        """))
    return source


def node_script(index: int, sleep_s: float) -> str:
    """A node that takes sleep_s seconds, writes a valid submission and prints its validation score."""
    return textwrap.dedent(f"""\
        import csv
        import time

        time.sleep({sleep_s})
        ids = [row["id"] for row in csv.DictReader(open("test.csv"))]
        with open("submission.csv", "w") as out:
            out.write("id,y\\n" + "".join(f"{{i}},1.0\\n" for i in ids))
        print("Validation score: {100 - index}")
        """)


def measure(task, where: Path, nodes: int, sleep_s: float, parallel: int) -> dict:
    from mlab.models.client import ModelClient, TierConfig
    from mlab.models.offline import OfflineModels
    from mlab.run.folder import Run
    from mlab.search.engine import SearchEngine
    from mlab.trace import read_trace

    agent = task.build.agent(f"bench-tree-{parallel}")
    replies = where / f"replies-{parallel}.json"
    replies.write_text(json.dumps([f"Node {i}: sleep, then submit a constant.\n\n```python\n"
                                   f"{node_script(i, sleep_s)}```\n" for i in range(1, nodes + 1)]))
    model = f"mlab/scripted:{replies}"
    client = ModelClient({tier: TierConfig(model) for tier in ("main", "fast", "edit")}, offline=OfflineModels())
    run = Run.create(task, agent, where / "runs", limits={"steps": nodes})
    engine = SearchEngine(run, client, agent=agent)
    before = cpu_seconds()
    started = time.perf_counter()
    outcome = engine.run_until_done()
    wall = time.perf_counter() - started
    harness_cpu, children_cpu = (after - first for after, first in zip(cpu_seconds(), before))
    run.close()
    records = [r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r]
    if len(records) != nodes or any(r["buggy"] for r in records):
        problems = [(r["node"], r.get("observation", "")[-300:]) for r in records if r["buggy"]]
        raise SystemExit(f"parallel {parallel}: expected {nodes} valid nodes, got {len(records)} "
                         f"({outcome.end_reason}); buggy: {problems}")
    # the steady rate: after the first node of each evaluating thread, from the parallel-th record
    # to the last
    ends = sorted(r["elapsed_s"] for r in records)
    steady = (nodes - parallel, ends[-1] - ends[parallel - 1]) if nodes > parallel else None
    return {"parallel": parallel, "nodes": nodes, "wall": wall, "ideal": nodes * sleep_s / parallel,
            "harness_cpu": harness_cpu, "children_cpu": children_cpu, "steady": steady,
            "first": ends[parallel - 1] - (records[0]["elapsed_s"] - records[0]["duration_s"])}


@contextlib.contextmanager
def launchers_on_demand(cold: bool):
    """Within: every launcher started on demand (cold), or as by default (the next script's
    launcher started while one runs)."""
    from mlab.sandbox import warm

    warm.release()
    saved = os.environ.pop(warm.COLD_VARIABLE, None)
    if cold:
        os.environ[warm.COLD_VARIABLE] = "1"
    try:
        yield
    finally:
        os.environ.pop(warm.COLD_VARIABLE, None)
        if saved is not None:
            os.environ[warm.COLD_VARIABLE] = saved
        warm.release()


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds so far of this process and of its reaped children (launchers, sandboxes, scripts)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def warm_up(task, where: Path) -> None:
    """Import litellm and make one offline call before timing: a run pays that once, not per node."""
    from mlab.models.client import ModelClient, TierConfig
    from mlab.models.offline import OfflineModels

    replies = where / "warm-up.json"
    replies.write_text(json.dumps(["warm up"]))
    ModelClient({"main": TierConfig(f"mlab/scripted:{replies}")}, offline=OfflineModels()).complete("main", "hello", purpose="step")


def interpreter_start(rounds: int = 5) -> tuple[float, float]:
    """Median seconds of starting Python with the node script's imports and nothing else: wall, CPU."""
    times, cpu = [], []
    for _ in range(rounds):
        before = cpu_seconds()[1]
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import csv, time"], check=True)
        times.append(time.perf_counter() - started)
        cpu.append(cpu_seconds()[1] - before)
    return statistics.median(times), statistics.median(cpu)


def report(figures: dict, sleep_s: float, start_s: float, start_cpu: float, cold: bool = False) -> float:
    measured = 60 * figures["nodes"] / figures["wall"]
    # the ideal node runs its script bare: the interpreter's start and the script's own time
    ideal = 60 * figures["parallel"] / (sleep_s + start_s)
    ratio = ideal / measured
    overhead = (figures["wall"] - figures["ideal"]) / figures["nodes"] * figures["parallel"]
    print(f"parallel {figures['parallel']}: {figures['nodes']} nodes in {figures['wall']:.2f} s -> "
          f"{measured:.2f} nodes/min vs ideal {ideal:.2f} -> {ratio:.3f}x ideal for the whole search; "
          f"overhead per evaluation {overhead * 1e3:.0f} ms, {(overhead - start_s) * 1e3:.0f} ms without "
          "the interpreter's start")
    if figures["steady"]:
        count, seconds = figures["steady"]
        steady = 60 * count / seconds
        ratio = ideal / steady
        verdict = ("ok" if ratio <= TARGET else "OVER TARGET") if sleep_s >= REALISTIC_S else \
            f"none on nodes under {REALISTIC_S:g} s"
        print(f"    steady: {count} nodes after each thread's first in {seconds:.2f} s -> {steady:.2f} nodes/min "
              f"-> {ratio:.3f}x ideal (target <= {TARGET}x on nodes of {REALISTIC_S:g} s and more: {verdict}); the first {figures['parallel']} "
              f"node(s) ended "
              f"{figures['first'] * 1e3:.0f} ms after the first was made")
    per_node = (figures["harness_cpu"] + figures["children_cpu"]) / figures["nodes"]
    print(f"    CPU per node: {per_node * 1e3:.0f} ms ({figures['harness_cpu'] / figures['nodes'] * 1e3:.0f} ms "
          f"in the harness, {figures['children_cpu'] / figures['nodes'] * 1e3:.0f} ms in launchers, sandboxes "
          f"and scripts) against {start_cpu * 1e3:.0f} ms for the ideal node: {per_node / start_cpu:.2f}x")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, help="nodes per measurement (default: 200 for nodes under 0.5 s, else 8)")
    parser.add_argument("--sleep", type=float, default=10.0, help="seconds each node's script takes")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--cold", action="store_true",
                        help="also measure each with every launcher started on demand (MLAB_SANDBOX_COLD=1)")
    parser.add_argument("--quick", action="store_true", help="3 nodes of 0 s at 1 and 2 at once: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.sleep = 3, 0.0
    if args.nodes is None:
        args.nodes = 200 if args.sleep < 0.5 else 6
    sys.path.insert(0, str(REPO))
    where = Path(tempfile.mkdtemp(prefix="mlab-bench-tree-"))
    try:
        os.environ["MLAB_CACHE"] = str(where / "cache")
        from mlab.build import resolve_task

        task = resolve_task(str(make_task(where / "src")))
        warm_up(task, where)
        start_s, start_cpu = interpreter_start()
        print(f"node script: {args.sleep:g} s of sleep; {args.nodes} nodes per measurement; starting the "
              f"interpreter alone takes {start_s * 1e3:.0f} ms; load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} CPUs")
        for parallel in args.parallel:
            for cold in (False, True) if args.cold else (False,):
                with launchers_on_demand(cold):
                    figures = measure(task, where, args.nodes, args.sleep, parallel)
                if args.cold:
                    print("every launcher started on demand (MLAB_SANDBOX_COLD=1):" if cold else
                          "launchers started ahead (the default):")
                report(figures, args.sleep, start_s, start_cpu, cold)
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
