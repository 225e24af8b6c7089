"""Benchmark of the agent's prompt and of the harness's memory.

Over a recorded run (RUN_DIR, or a fresh `mlab run house-price --model mlab/demo`), for every
step: the prompt's tokens split by part — instructions (the template's own text), tools, reply
format, problem, history (recent steps, and what a research-log retrieval added) — and the
share of the prompt in its stable prefix, the start that is byte-identical at every step and
that providers can cache. Each part is rendered from the run's own build copy and located in
the recorded prompt; instructions are what remains.

Memory: the fresh demo run is made in a child process, which reports its own peak resident
memory (resource.RUSAGE_SELF: the harness, without the agent's scripts, which run in sandboxed
processes of their own); the bench also reads RUSAGE_CHILDREN, whose figure is that of the
largest process of the run, scripts included. Target for the harness: < 300 MB.

    python bench/prompt.py [RUN_DIR] [--task house-price] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMORY_TARGET_MB = 300
PARTS = ("instructions", "tools", "reply format", "problem", "history")

# Runs `mlab run` in this child process and prints its own peak memory as the last line.
CHILD = """\
import json, resource, sys
from mlab.cli import main
code = main(sys.argv[1:])
print(json.dumps({"exit": code, "self_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def demo_run(task: str, runs_dir: Path) -> tuple[Path, dict]:
    """A demo run made in a child process; its folder and the memory figures."""
    done = subprocess.run([sys.executable, "-c", CHILD, "run", task, "--model", "mlab/demo", "--runs-dir",
                           str(runs_dir), "--plain"], capture_output=True, text=True, cwd=REPO)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        sys.exit(f"the demo run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    if report["exit"] != 0:
        sys.exit(f"the demo run ended with exit code {report['exit']}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    runs = sorted(p for p in runs_dir.iterdir() if p.is_dir())
    return runs[-1], {"harness_mb": report["self_maxrss_kib"] / 1024, "largest_process_mb": children / 1024}


class PromptParts:
    """The rendered parts of a run's prompts, from the run folder's copy of its build."""

    def __init__(self, run_dir: Path):
        from mlab.agent import context as C
        from mlab.build import load_build
        from mlab.agent.prompting import Templates
        from mlab.run.folder import read_run_meta
        from mlab.trace import read_trace

        meta = read_run_meta(run_dir)
        build = load_build(run_dir / "build", check_fresh=False)
        self.task, self.agent = build.task(meta["task"]), build.agent(meta["agent"])
        self.templates = Templates(self.agent.templates)
        self.context = C
        shown = [a for a in self.agent.actions["actions"] if a["shown"]]
        self.tools = self.templates.render("tools", **C.tools_context(actions=shown))
        self.reply_format = self.templates.render("reply_format", **C.reply_format_context(**self.agent.doc["reply"]))
        self.problem = self.task.doc["problem"]
        self.records = read_trace(run_dir / "trace.jsonl").records
        self.summaries: dict[int, str] = {}
        for record in self.records:
            for number, text in ((record.get("model") or {}).get("summaries") or {}).items():
                self.summaries[int(number)] = text

    def history(self, index: int) -> str:
        """The history the prompt of record `index` (0-based) showed, as the agent loop renders it."""
        window = self.agent.doc["history_steps"]
        shown = self.records[max(index - window, 0):index] if window else []
        views = []
        for record in shown:
            view = self.context.history_step_view(record)
            if len(record["observation"]) > self.agent.doc["summarize_over_chars"]:
                view["observation"] = self.summaries.get(record["step"], record["observation"])
            views.append(view)
        return self.templates.render("history", **self.context.history_context(steps=views)) if views else ""


def count_tokens(litellm, model: str, text: str) -> int:
    return litellm.token_counter(model=model, text=text) if text else 0


def step_figures(parts: PromptParts, litellm, model: str) -> list[dict]:
    rows = []
    for index, record in enumerate(parts.records):
        exchange = record.get("model") or {}
        prompt = exchange.get("prompt")
        if not prompt:
            continue
        retrieved = (record.get("hooks") or {}).get("retrieved", "")
        located = {"tools": parts.tools, "reply format": parts.reply_format, "problem": parts.problem,
                   "history": parts.history(index)}
        row = {"step": record["step"], "total": count_tokens(litellm, model, prompt), "missing": []}
        for name, text in located.items():
            found = bool(text) and text in prompt
            if text and not found:
                row["missing"].append(name)
            row[name] = count_tokens(litellm, model, text) if found else 0
        if retrieved and retrieved in prompt:
            row["history"] += count_tokens(litellm, model, retrieved)
        row["instructions"] = row["total"] - sum(row[name] for name in located)
        prefix_chars = exchange.get("stable_prefix_chars")
        row["prefix"] = count_tokens(litellm, model, prompt[:prefix_chars]) if prefix_chars else 0
        rows.append(row)
    return rows


def print_table(rows: list[dict], tokenizer: str) -> None:
    print(f"prompt tokens per step, by part (tokenizer of {tokenizer}):")
    header = f"{'step':>4} {'total':>7} " + " ".join(f"{p:>12}" for p in PARTS) + f" {'stable prefix':>14} {'share':>6}"
    print(header)
    for row in rows:
        share = row["prefix"] / row["total"] if row["total"] else 0.0
        print(f"{row['step']:>4} {row['total']:>7} " + " ".join(f"{row[p]:>12}" for p in PARTS)
              + f" {row['prefix']:>14} {share:>6.1%}" + (f"  (not found: {', '.join(row['missing'])})"
                                                         if row["missing"] else ""))
    total = sum(r["total"] for r in rows)
    if not total:
        return
    print(f"{'all':>4} {total:>7} " + " ".join(f"{sum(r[p] for r in rows):>12}" for p in PARTS)
          + f" {sum(r['prefix'] for r in rows):>14} {sum(r['prefix'] for r in rows) / total:>6.1%}")
    print("share of all prompt tokens: " + ", ".join(f"{p} {sum(r[p] for r in rows) / total:.1%}" for p in PARTS))
    fixed = sum(r["instructions"] + r["tools"] + r["reply format"] + r["problem"] for r in rows)
    print(f"fixed parts (instructions, tools, reply format, problem): {fixed / total:.1%} of prompt tokens; "
          f"in the stable prefix: {sum(r['prefix'] for r in rows) / total:.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="a recorded run (default: make a demo run)")
    parser.add_argument("--task", default="house-price", help="task of the demo run (default house-price)")
    parser.add_argument("--keep", action="store_true", help="keep the demo run's folder")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    folder = None
    memory = None
    run_dir = args.run_dir
    if run_dir is None:
        folder = Path(tempfile.mkdtemp(prefix="mlab-bench-prompt-"))
        run_dir, memory = demo_run(args.task, folder)
        print(f"demo run: {run_dir}")
    try:
        import litellm

        parts = PromptParts(run_dir)
        model = json.loads((run_dir / "models.json").read_text())["tiers"]["main"]["model"] \
            if (run_dir / "models.json").is_file() else "gpt-4"
        tokenizer = "gpt-4 (cl100k)" if model.startswith("mlab/") else model
        rows = step_figures(parts, litellm, "gpt-4" if model.startswith("mlab/") else model)
        print(f"task {parts.task.name}, agent {parts.agent.name}, {len(rows)} prompted steps")
        print_table(rows, tokenizer)
        if memory:
            verdict = "meets" if memory["harness_mb"] < MEMORY_TARGET_MB else "MISSES"
            print(f"harness peak memory (RUSAGE_SELF of the mlab process, scripts excluded): "
                  f"{memory['harness_mb']:.0f} MB; target < {MEMORY_TARGET_MB} MB: {verdict}")
            print(f"largest process of the run, the agent's scripts included (RUSAGE_CHILDREN): "
                  f"{memory['largest_process_mb']:.0f} MB")
    finally:
        if folder is not None and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
