"""Benchmark of `mlab report`, `mlab eval` and `mlab view RUNS_DIR` at scale: N run folders sharing one build.

One real run of a tiny task is made with `mlab run` (the offline scripted model: write a
script, run it, submit) and scored step by step with `mlab eval --intermediate`; its trace is then
made --steps long (50 by default) as a research agent's run of that length is (extend_run: real
prompts of the run's system text and the last three steps, training logs, diffs and script
excerpts as observations; about 1.3 MB, 25 KB a step); its folder is then copied N times (a new
id and seed each, the same build digest; the workspace and objects are left out, as the report
and the index never read them; each copy's trace is a hard link to the one trace, the same bytes). Each command runs over each size
in a fresh process (imports and first-use costs paid on 5 runs first, untimed), which reports
its CPU time and how much its peak memory grew: first with a new user cache (the runs never seen
by a report), then again (each run's facts taken from its trace remembered: mlab.reports.runs);
each figure is the median of --repeats such processes (3 by default; one process's CPU time over
the same runs moves by a fifth from one to the next on the shared machine, and a marginal cost
is the difference of two of them).
The template has the summary.json the harness writes at a run's end (mlab.reports.summary), made
for its extended trace, so even the first report of a run reads no trace; `--no-summary` leaves
it out, as in runs made before summaries, whose first report reads each trace.

Printed per command: the CPU time and peak-memory growth at each size and the marginal cost per
run between consecutive sizes ((t_large - t_small) / (large - small)), the first time and again,
with its ratio to the target. Targets for `mlab report`
and `mlab eval`: at most 2 ms of CPU and 0.05 MB per run between every two sizes, and the last
interval's CPU per run within 1.2x of the first's (flat: the cost of a run does not grow with
the number of runs). `mlab eval --at` at three budgets (one before the run's submission, one on
it, one past the end) runs over the same runs with their budget points already scored (the
template was evaluated at them once, so budgets.json travels with every copy): target, at most
1.2x the CPU of plain `mlab eval` at the largest size, printed as that ratio.

    python bench/report.py [--sizes 100,1000,5000] [--steps 50] [--repeats 3] [--view] [--no-summary] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reports"))

from report_helpers import environment, mlab  # noqa: E402
from scenarios import SCENARIOS, write_task  # noqa: E402

QUICK_RUN = HERE.parent / "tests" / "reports" / "data" / "golden-runs" / "template"
TARGET_MS = 2.0
TARGET_MB = 0.05
TARGET_RATIO = 1.2
BUDGETS = "time=1s,3s,tokens=1M"  # before the submission, on it, past the end of the run
TARGET_BUDGET_RATIO = 1.2
_LEFT_OUT = ("workspace", "objects", "private", "output", "view.html")
TRACE = "trace.jsonl"
SUMMARY = "summary.json"
STEPS = 50   # a research agent's run of realistic size
def record_summary(run: Path) -> None:
    from mlab.reports.runs import load_run
    from mlab.reports.summary import record_summary as record

    record(load_run(run))


def make_run(folder: Path) -> Path:
    """One finished, scored run folder of the tiny task; returns its path."""
    source = write_task(folder / "task")
    scenario = next(s for s in SCENARIOS if s.name == "research-0")
    replies = folder / "replies.json"
    replies.write_text(json.dumps(scenario.replies()))
    runs = folder / "one"
    with environment(MLAB_CACHE=str(folder / "cache"), SCIKIT_LEARN_DATA=str(folder / "sklearn")):
        code, out, err = mlab("run", source, "--agent", "research", "--model", f"mlab/scripted:{replies}",
                              "--runs-dir", runs, "--plain")
        if code != 0:
            sys.exit(f"the benchmark run failed:\n{out}\n{err}")
        code, out, err = mlab("eval", "--intermediate", runs)
        if code != 0:
            sys.exit(f"scoring the benchmark run failed:\n{out}\n{err}")
    (run,) = [p for p in runs.iterdir() if (p / "run.json").is_file()]
    return run


TRAINING_LOG = ("epoch {e:2d}/40 - loss {l:.4f} - val_loss {v:.4f} - val_mae {m:.4f} - lr {r:.2e} - "
                "{s:.1f}s\n")
HISTORY = 3   # steps of history in each prompt, as the research agent's prompt has


def realistic_observation(step: int, kind: str) -> str:
    """What a research agent sees at a step of this kind, at the length real ones have: a training
    log of 40 epochs (about 4 KB), a script excerpt (about 2.5 KB), an edit's diff (about 2 KB)."""
    if kind == "Execute Script":
        lines = "".join(TRAINING_LOG.format(e=e, l=1.0 / (e + step), v=1.1 / (e + step) + 0.01 * step,
                                            m=2.0 + 1.0 / e + step / 100, r=1e-3 * 0.95 ** e, s=1.7 + e / 10)
                        for e in range(1, 41))
        return f"The script has been executed. Here is the output:\n{lines}validation MAE {2.0 + step / 100:.4f}\n"
    if kind == "Inspect Script Lines":
        body = "".join(f"{n:3d} | rows = [r for r in rows if float(r['x{n}']) > {n / 7:.3f}]  # filter {n}\n"
                       for n in range(1, 41))
        return f"Here are the lines (the file ends at line 120):\n{body}"
    body = "".join(f"-    W{n} = {n / 10:.1f}\n+    W{n} = {n / 10 + 0.05:.2f}  # tuned at step {step}\n"
                   for n in range(1, 36))
    return f"The edited file is saved to blend.py. Here is the diff, please check if the edit is correct:\n{body}"


def realistic_reply(step: int, observation: str) -> str:
    plan = "".join(f"{n}. {'Done' if n < step // 5 else 'Next'}: experiment {n} on the blend weights "
                   f"(val MAE {2.0 + n / 100:.4f}).\n" for n in range(1, min(step // 5, 12) + 2))
    return (f"Reflection: the observation shows {observation.splitlines()[-1][:120]}\n"
            f"Research Plan and Status: {plan}"
            f"Fact Check: validation MAE {2.0 + step / 100:.4f} was printed by the last run (confirmed).\n"
            f"Thought: try the next weight, keeping what improved the validation MAE.\n")


def extend_run(run: Path, steps: int) -> None:
    """Make a real run's trace `steps` long as a research agent's run of that length is: its
    first two records (writing and running the script) begin it and its final answer ends it;
    between them Execute Script, Edit Script (AI) and Inspect Script Lines steps in turn, each
    with an observation and a reply of real length, and each prompt the run's own system text
    followed by the last HISTORY steps (reply and observation), as the research agent's prompt
    is. scores.jsonl gets a row per step and result.json its step count and wall time."""
    records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    first, executed, final = records[0], records[1], records[-1]
    system = first["model"]["prompt"]
    kinds = ["Execute Script", "Edit Script (AI)", "Inspect Script Lines"]
    made = [first, executed]
    for step in range(3, steps):
        kind = kinds[step % 3]
        record = json.loads(json.dumps(executed if kind == "Execute Script" else first))
        observation = realistic_observation(step, kind)
        reply = realistic_reply(step, observation)
        record.update(step=step, action=kind, observation=observation)
        if kind != "Execute Script":
            record.update(compute=None, action_input={"script_name": "blend.py", "start_line_number": 1,
                                                      "end_line_number": 40},
                          snapshot={"changed": {}, "removed": []}, edits=[])
            record["resolved"] = {"action": kind, "primitive": "inspect", "input": record["action_input"]}
        record["model"]["response"] = reply
        record["model"]["calls"][0]["response"] = reply
        made.append(record)
    final = json.loads(json.dumps(final))
    final["step"] = steps
    made.append(final)
    elapsed = 0.0
    for index, record in enumerate(made):
        history = "".join(f"\nStep {r['step']}:\n{r['model']['response']}\nObservation:\n{r['observation']}\n"
                          for r in made[max(0, index - HISTORY):index])
        record["model"]["prompt"] = system + history
        record["model"]["calls"][0]["prompt_tokens"] = len(record["model"]["prompt"]) // 4
        record["model"]["calls"][0]["completion_tokens"] = len(record["model"]["response"]) // 4
        elapsed += 40.0 if record.get("compute") else 6.0
        record["elapsed_s"] = round(elapsed, 3)
    (run / "trace.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in made))
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    scored = rows[-1]
    tokens = 0
    lines = [rows[0], rows[1]]
    for record in made[1:]:
        tokens += sum(c["prompt_tokens"] + c["completion_tokens"] for c in record["model"]["calls"])
        lines.append({**scored, "step": record["step"], "elapsed_s": record["elapsed_s"], "tokens": tokens})
    (run / "scores.jsonl").write_text("".join(json.dumps(row) + "\n" for row in lines))
    result = json.loads((run / "result.json").read_text())
    result.update(steps=steps, wall_time_s=elapsed)
    (run / "result.json").write_text(json.dumps(result, indent=2))


def scored_at_budgets(template: Path, into: Path) -> Path:
    """A copy of `template` evaluated once at BUDGETS: its budgets.json holds the points."""
    from mlab.reports.budgets import parse_budgets
    from mlab.reports.eval import evaluate_runs
    from mlab.reports.runs import load_runs

    copy = into / template.name
    shutil.copytree(template, copy)
    evaluate_runs(load_runs([copy]), at=parse_budgets([BUDGETS]))
    return copy


def copy_runs(template: Path, count: int, into: Path) -> Path:
    """`count` copies of `template` under `into`, each with its own id and seed."""
    meta = json.loads((template / "run.json").read_text())
    for number in range(count):
        run_id = f"{meta['id'][:-6]}{number:06x}"
        target = into / run_id
        shutil.copytree(template, target, ignore=lambda _, names: [n for n in names if n in _LEFT_OUT + (TRACE,)])
        os.link(template / TRACE, target / TRACE)   # the same bytes: a link keeps 5,000 runs' traces off the disk
        (target / "run.json").write_text(json.dumps({**meta, "id": run_id, "seed": number}))
    return into


CHILD = """\
import resource, sys, time
from pathlib import Path
from mlab.reports.eval import evaluate_runs
from mlab.reports.render import write_report
from mlab.reports.runs import load_runs
from mlab.reports.budgets import parse_budgets
from mlab.viewer.index import write_index
command, warm, runs, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
commands = {"mlab report": lambda folder, to: write_report(folder, to),
            "mlab eval": lambda folder, to: evaluate_runs(load_runs([folder])),
            "mlab eval --at": lambda folder, to: evaluate_runs(load_runs([folder]), at=parse_budgets([sys.argv[5]])),
            "mlab view RUNS_DIR": lambda folder, to: write_index(folder, to / "index.html")}
commands[command](warm, out / "warm")  # imports and first-use costs, untimed
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
commands[command](runs, out / "timed")
print(time.process_time() - start, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def measured(command: str, warm: Path, runs: Path, out: Path, cache: Path) -> tuple[float, float]:
    """(CPU seconds, peak memory growth in MB) of one command over `runs`, in a fresh process
    whose user cache is `cache` (a new one: what the runs are first seen with; used again: seen
    before, each run's facts remembered, see mlab.reports.runs)."""
    import subprocess

    from mlab.cache import cache_root
    from mlab.reports.budgets import BUDGETS_KEY

    out.mkdir(parents=True, exist_ok=True)
    if not cache.is_dir():   # the key budgets.json was sealed with, so that its points are read, not scored
        cache.mkdir(parents=True)
        shutil.copy(cache_root() / BUDGETS_KEY, cache / BUDGETS_KEY)
    done = subprocess.run([sys.executable, "-c", CHILD, command, str(warm), str(runs), str(out), BUDGETS],
                          capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg", "MLAB_CACHE": str(cache)})
    if done.returncode:
        sys.exit(f"{command} failed:\n{done.stderr[-2000:]}")
    seconds, megabytes = done.stdout.split()[-2:]
    return float(seconds), float(megabytes)


def budget_verdict(measures: dict, sizes: list[int]) -> int:
    """Print the CPU of `mlab eval --at` over plain `mlab eval` at each size; 1 when the largest
    size's ratio misses the target."""
    ratios = {n: measures["mlab eval --at"][n][0] / measures["mlab eval"][n][0] if measures["mlab eval"][n][0] > 0
              else float("inf") for n in sizes}
    print("  eval at 3 budgets (already scored) / eval: " + ", ".join(f"{n} runs {r:.2f}x" for n, r in ratios.items()))
    good = ratios[sizes[-1]] <= TARGET_BUDGET_RATIO
    print(f"  target: <= {TARGET_BUDGET_RATIO}x at {sizes[-1]} runs ({ratios[sizes[-1]]:.2f}x): "
          f"{'met' if good else 'MISSED'}")
    return 0 if good else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="run counts, smallest first (default 100,1000,5000)")
    parser.add_argument("--steps", type=int, default=STEPS,
                        help=f"steps of each run, its trace made realistic (default {STEPS}; 3: the real run as it is)")
    parser.add_argument("--view", action="store_true", help="time the index of `mlab view RUNS_DIR` too")
    parser.add_argument("--no-summary", action="store_true",
                        help="runs without summary.json, as runs made before it are: the first report reads each trace")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh processes per size and pass; each figure is their median (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="mlab eval alone over 5 and 10 copies of the checked-in run: checks the benchmark runs")
    options = parser.parse_args()
    sizes = [5, 10] if options.quick else [int(s) for s in options.sizes.split(",")]
    if options.quick:
        options.repeats = 1
    commands = ["mlab report", "mlab eval", "mlab eval --at"] + (["mlab view RUNS_DIR"] if options.view else [])
    if options.quick:   # each command is two fresh processes a size: the quick run keeps to one command
        commands = ["mlab eval"]
    with tempfile.TemporaryDirectory(prefix="mlab-bench-report-") as scratch:
        root = Path(scratch)
        os.environ["MLAB_CACHE"] = str(root / "cache")
        # quick: the checked-in run of the report's golden test stands in for a fresh real run
        made = root / "extended" / "run"
        shutil.copytree(QUICK_RUN if options.quick else make_run(root), made)
        if options.steps > 3:
            extend_run(made, options.steps)
        if options.no_summary:
            (made / SUMMARY).unlink(missing_ok=True)
        else:   # what the harness writes at a run's end, here for the run as extended
            record_summary(made)
        template = scored_at_budgets(made, root / "template")
        size = (template / TRACE).stat().st_size
        print(f"each run: {options.steps} steps, a trace of {size / 1e6:.2f} MB ({size / options.steps / 1e3:.1f} KB a step)")
        warm = copy_runs(template, 5, root / "warm")
        folders = {n: copy_runs(template, n, root / f"runs-{n}") for n in sizes}
        verdict = 0
        measures = {}
        for name in commands:
            label = f"{name.split()[1]}-{len(name)}"
            passes = {"first": {n: [] for n in sizes}, "again": {n: [] for n in sizes}}
            for repeat in range(options.repeats):
                for kind in passes:   # a new user cache each pass, then the same one again
                    # the sizes in turn, starting from another each repeat, so that a spell of load
                    # or a size's place in the order does not fall on one size in every pass
                    for n in sizes[repeat % len(sizes):] + sizes[:repeat % len(sizes)]:
                        passes[kind][n].append(measured(name, warm, folders[n], root / "out" / f"{label}-{n}-{kind}",
                                                        root / f"cache-{label}-{n}-{repeat}"))
            first, figures = ({n: (statistics.median(t for t, _ in runs), statistics.median(mb for _, mb in runs))
                               for n, runs in passes[kind].items()} for kind in ("first", "again"))
            measures[name] = figures
            def spread(kind: str, n: int) -> str:   # the processes' range, beside their median
                times = [t for t, _ in passes[kind][n]]
                return f" [{min(times):.2f} to {max(times):.2f}]" if len(times) > 1 else ""

            print(f"{name}, runs seen before: " + ", ".join(f"{n} runs {t:.2f} s CPU{spread('again', n)}, +{mb:.1f} MB"
                                                           for n, (t, mb) in figures.items()))
            print(f"  the first time: " + ", ".join(f"{n} runs {t:.2f} s CPU{spread('first', n)} ({t / n * 1000:.1f} ms "
                                                   f"a run), +{mb:.1f} MB" for n, (t, mb) in first.items()))
            for small, large in zip(sizes, sizes[1:]):
                cpu = (first[large][0] - first[small][0]) / (large - small) * 1000
                memory = (first[large][1] - first[small][1]) / (large - small)
                print(f"  the first time, marginal cost {small} -> {large} runs: {cpu:.2f} ms CPU "
                      f"({cpu / TARGET_MS:.2f}x the {TARGET_MS} ms target) and {memory:.3f} MB "
                      f"({memory / TARGET_MB:.2f}x the {TARGET_MB} MB target) per run")
            if name == "mlab eval --at":
                verdict = budget_verdict(measures, sizes) or verdict
                continue
            per_run = []
            for small, large in zip(sizes, sizes[1:]):
                cpu = (figures[large][0] - figures[small][0]) / (large - small) * 1000
                memory = (figures[large][1] - figures[small][1]) / (large - small)
                per_run.append((cpu, memory))
                print(f"  marginal cost {small} -> {large} runs: {cpu:.2f} ms CPU ({cpu / TARGET_MS:.2f}x the target) "
                      f"and {memory:.3f} MB ({memory / TARGET_MB:.2f}x the target) per run")
            if name != "mlab view RUNS_DIR" and per_run:
                ratio = per_run[-1][0] / per_run[0][0] if per_run[0][0] > 0 else float("inf")
                good = all(c <= TARGET_MS and m <= TARGET_MB for c, m in per_run) and ratio <= TARGET_RATIO
                print(f"  target: <= {TARGET_MS} ms and <= {TARGET_MB} MB per run, last interval <= "
                      f"{TARGET_RATIO}x the first ({ratio:.2f}x): {'met' if good else 'MISSED'}")
                verdict = verdict or (0 if good else 1)
    return 0 if options.quick else verdict


if __name__ == "__main__":
    sys.exit(main())
