"""Benchmark: `mlab view` of a long run and of a large tree search, opened in headless Chromium.

Two run folders are made from the checked-in run of the report's golden test: a linear run of
--steps steps (default 10,000; its three recorded steps repeated, each sent a prompt of its own
as the research agent writes one: the recorded system text, the step number and the last three
steps, so that the page's table of prompt pieces is measured on distinct prompts) and a greedy
tree search of --nodes nodes (default 500; hand-written node records as tests/reports/handmade.py writes them).
For each, `mlab view` writes the page (its time, CPU) and Chromium opens it inside a frame of a
small timing page, which notes the milliseconds from the start of the frame's loading to its
load event (measured in the browser; the median of --loads loads). Printed with the page's
size per step or node, at the full size and at a tenth of it, so that the growth shows.
Targets: <= 3 s to load at full size; the page size per step or node no larger at the full size
than at a tenth (growing no faster than the run).

    python bench/viewer.py [--steps 10000] [--nodes 500] [--loads 3] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "tests" / "reports" / "data" / "golden-runs" / "template"
TARGET_S = 3.0

TIMING_PAGE = """<!doctype html><html><body>
<iframe id="f" style="width:1200px;height:900px"></iframe>
<script>
const frame = document.getElementById("f");
const started = performance.now();
frame.onload = () => { document.body.setAttribute("data-loaded-ms", String(performance.now() - started)); };
frame.src = PAGE;
</script></body></html>"""


HISTORY = 3  # the steps a prompt's history shows, as the research agent's window does


def prompt(system: str, step: int, steps: int, history: list[str]) -> str:
    """A step's prompt as the research agent writes it: the system text (tools, problem, format),
    the step count, then the latest steps; so each step's prompt is new, and most of it is not."""
    shown = "\n\n".join(history[-HISTORY:])
    return (f"{system}This is step {step} of at most {steps}. Spend your steps wisely.\n\n"
            f"Your most recent steps, oldest first:\n{shown}\n\n\n\nNow write your next reply.\n")


def linear_run(target: Path, steps: int) -> Path:
    shutil.copytree(TEMPLATE, target)
    records = [json.loads(line) for line in (TEMPLATE / "trace.jsonl").read_text().splitlines()]
    system = records[0]["model"]["prompt"].split("This is step")[0]
    history: list[str] = []
    with open(target / "trace.jsonl", "w") as out:
        for step in range(1, steps + 1):
            record = dict(records[(step - 1) % (len(records) - 1)] if step < steps else records[-1])
            record.update(step=step, elapsed_s=float(step))
            record["model"] = dict(record["model"], prompt=prompt(system, step, steps, history))
            history.append(f"Step {step}:\n{record['model']['response'].strip()}\nObservation:\n```\n"
                           f"{record['observation']}\n```")
            out.write(json.dumps(record) + "\n")
    (target / "scores.jsonl").unlink(missing_ok=True)
    return target


def tree_run(target: Path, nodes: int) -> Path:
    sys.path[:0] = [str(REPO / "tests" / "reports"), str(REPO / "tests")]   # handmade, and the trace_records it uses
    import handmade
    from mlab.snapshots import ObjectStore

    source = target.with_name(target.name + "-source")  # the template with an initial snapshot of its own
    shutil.copytree(TEMPLATE, source)
    store = ObjectStore(source / "objects", durable=False)
    meta = json.loads((source / "run.json").read_text())
    meta["initial_snapshot"] = store.put_json({"train.py": store.put_bytes(b"W = 0.3\n")})
    (source / "run.json").write_text(json.dumps(meta))
    made = []
    for node in range(1, nodes + 1):
        parent = None if node <= 2 else 1 + (node * 7919) % (node - 1)
        buggy = node % 5 == 0
        validation = None if buggy else round(1.0 / node + (node % 13) / 100, 4)
        operator = "draft" if parent is None else ("debug" if buggy else "improve")
        made.append((node, parent, operator, validation, buggy, f"W = {node / nodes:.4f}\nprint('validation mae', {validation})\n"))
    return handmade.tree_run(source, target, nodes=made, submitted=1)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def load_ms(browser: str, page: Path, scratch: Path) -> float:
    timing = scratch / f"timing-{page.stem}.html"
    timing.write_text(TIMING_PAGE.replace("PAGE", json.dumps(page.resolve().as_uri())))
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           "--allow-file-access-from-files", f"--user-data-dir={scratch / 'profile'}",
                           "--dump-dom", timing.as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'data-loaded-ms="([0-9.]+)"', done.stdout)
    if not found:
        raise SystemExit(f"Chromium did not report the load time of {page}:\n{done.stderr[-1500:]}")
    return float(found.group(1))


def view(run: Path, page: Path) -> tuple[float, float]:
    """(wall s, CPU s) of `mlab view RUN -o PAGE` in a fresh process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mlab.cli", "view", str(run), "-o", str(page)], check=True,
                   capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - started, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 steps, 20 nodes, one load: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.nodes, args.loads = 200, 20, 1
    browser = chromium()
    with tempfile.TemporaryDirectory(prefix="mlab-bench-viewer-") as scratch:
        root = Path(scratch)
        for kind, full, make in (("linear run", args.steps, linear_run), ("tree search", args.nodes, tree_run)):
            unit = "steps" if kind == "linear run" else "nodes"
            sizes = {}
            for size in (max(full // 10, 2), full):
                run = make(root / f"{kind.split()[0]}-{size}", size)
                page = root / f"{kind.split()[0]}-{size}.html"
                wall, cpu = view(run, page)
                sizes[size] = page.stat().st_size
                line = (f"{kind} of {size:,} {unit}: page {sizes[size] / 2**20:.2f} MiB "
                        f"({sizes[size] / size / 1024:.1f} KiB per {unit[:-1]}), written in {wall:.2f} s ({cpu:.2f} s CPU)")
                if browser and size == full:
                    loads = [load_ms(browser, page, root) for _ in range(args.loads)]
                    median = statistics.median(loads) / 1000
                    line += f"; loaded in Chromium in {median:.2f} s (median of {len(loads)}; target <= {TARGET_S:.0f} s)"
                print(line)
            small, large = sorted(sizes)
            growth = (sizes[large] / large) / (sizes[small] / small)
            print(f"  page size per {unit[:-1]} at {large:,} against {small:,}: {growth:.2f}x (target <= 1.0x)")
        if not browser:
            print("Chromium is not installed: the load times were not measured")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.exit(main())
