"""Benchmark of the agent's prompt and of the harness's memory.

Over a recorded run (RUN_DIR, or a fresh `mlab run house-price --model mlab/demo`), for every
step: the prompt's tokens split by part — instructions (the template's own text), tools, reply
format, problem, history (recent steps, and what a research-log retrieval added) — and the
share of the prompt in its stable prefix, the start that is byte-identical at every step and
that providers can cache. Each part is rendered from the run's own build copy and located in
the recorded prompt; instructions are what remains.

Tool agents beside text agents (--compare AGENT AGENT...): a demo run of each agent on the same
task and seed, so that every agent is played the same demonstration (the same actions and
observations: the same information), and for each its prompt tokens per step and the share of
them served from a provider's prefix cache, as the model client accounted them (a tool agent's
prompt counts its messages and its tools array; offline models simulate the cache: a call's
leading messages, or its stable prefix, that the tier's previous call sent too). A RUN_DIR of a
tool agent prints the same figures for that run (its prompt is a conversation, not split by part).

Memory: the fresh demo run is made in a child process, which reports its own peak resident
memory (resource.RUSAGE_SELF: the harness, without the agent's scripts, which run in sandboxed
processes of their own); the bench also reads RUSAGE_CHILDREN, whose figure is that of the
largest process of the run, scripts included. Target for the harness: < 300 MB.

    python bench/prompt.py [RUN_DIR] [--task house-price] [--keep] [--quick]
    python bench/prompt.py --compare research research-tools [--task house-price]
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


def demo_run(task: str, runs_dir: Path, agent: str | None = None) -> tuple[Path, dict]:
    """A demo run made in a child process; its folder and the memory figures."""
    chosen = ["--agent", agent] if agent else []
    runs_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", CHILD, "run", task, *chosen, "--model", "mlab/demo", "--seed", "0",
                           "--runs-dir", str(runs_dir), "--plain"], capture_output=True, text=True, cwd=REPO)
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


def tiny_task(folder: Path) -> Path:
    """The reports tests' tiny task (20 rows, a one-line model), whose demo run takes seconds."""
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from scenarios import write_task

    return write_task(folder)


class PromptParts:
    """The rendered parts of a run's prompts, from the run folder's copy of its build."""

    def __init__(self, run_dir: Path):
        from mlab.agent import context as C
        from mlab.build import load_build
        from mlab.agent.prompting import Templates
        from mlab.run.meta import read_run_meta
        from mlab.trace import read_trace

        meta = read_run_meta(run_dir)
        build = load_build(run_dir / "build", check_fresh=False)
        self.task, self.agent = build.task(meta["task"]), build.agent(meta["agent"])
        self.templates = Templates(self.agent.templates)
        self.context = C
        shown = [a for a in self.agent.actions.actions if a.shown]
        self.tools = self.templates.render("tools", **C.tools_context(actions=shown))
        self.reply_format = self.templates.render("reply_format", **C.reply_format_context(format=self.agent.view.reply.format, sections=self.agent.view.reply.sections))
        self.problem = self.task.view.problem
        self.records = read_trace(run_dir / "trace.jsonl").records
        self.summaries: dict[int, str] = {}
        for record in self.records:
            for number, text in ((record.get("model") or {}).get("summaries") or {}).items():
                self.summaries[int(number)] = text

    def history(self, index: int) -> str:
        """The history the prompt of record `index` (0-based) showed, as the agent loop renders it."""
        window = self.agent.view.history_steps
        shown = self.records[max(index - window, 0):index] if window else []
        views = []
        for record in shown:
            view = self.context.history_step_view(record)
            if len(record["observation"]) > self.agent.view.summarize_over_chars:
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


def step_usage(records: list[dict]) -> list[dict]:
    """Per record that asked the main model for a step: its prompt, cached and completion tokens as
    the client recorded them (format-error retries included). The later records of a tool agent's
    message whose calls ran in order asked nothing and are left out."""
    rows = []
    for record in records:
        exchange = record.get("model") or {}
        calls = [c for c in exchange.get("calls") or [] if c.get("tier") == "main" and c.get("purpose") == "step"]
        if not calls:
            continue
        rows.append({"step": record["step"], "format": exchange.get("format") or "sections",
                     "prompt": sum(int(c.get("prompt_tokens", 0)) for c in calls),
                     "cached": sum(int(c.get("cached_tokens", 0)) for c in calls),
                     "completion": sum(int(c.get("completion_tokens", 0)) for c in calls)})
    return rows


def usage_summary(rows: list[dict]) -> dict:
    prompt = sum(r["prompt"] for r in rows)
    count = len(rows) or 1
    return {"steps": len(rows), "prompt_per_step": prompt / count,
            "cached_per_step": sum(r["cached"] for r in rows) / count,
            "cached_share": sum(r["cached"] for r in rows) / prompt if prompt else 0.0,
            "completion_per_step": sum(r["completion"] for r in rows) / count,
            "formats": sorted({r["format"] for r in rows})}


def print_usage(named: dict[str, list[dict]]) -> None:
    """The agents' figures side by side: a summary line each, then prompt and cached tokens per step."""
    print("prompt tokens per step and the cached share (the model client's accounting):")
    print(f"{'agent':<22} {'format':<10} {'steps':>5} {'prompt/step':>12} {'cached/step':>12} {'cached share':>13} "
          f"{'completion/step':>16}")
    for agent, rows in named.items():
        summary = usage_summary(rows)
        print(f"{agent:<22} {'+'.join(summary['formats']):<10} {summary['steps']:>5} {summary['prompt_per_step']:>12,.0f} "
              f"{summary['cached_per_step']:>12,.0f} {summary['cached_share']:>13.1%} "
              f"{summary['completion_per_step']:>16,.0f}")
    if len(named) > 1:
        base = usage_summary(next(iter(named.values())))
        for agent, rows in list(named.items())[1:]:
            other = usage_summary(rows)
            if base["prompt_per_step"]:
                print(f"{agent} against {next(iter(named))}: prompt tokens per step x"
                      f"{other['prompt_per_step'] / base['prompt_per_step']:.2f}, uncached prompt tokens per step x"
                      f"{(other['prompt_per_step'] - other['cached_per_step']) / max(base['prompt_per_step'] - base['cached_per_step'], 1):.2f}")
    steps = max(len(rows) for rows in named.values())
    print("per step (prompt / cached):")
    print(f"{'step':>4} " + " ".join(f"{agent[:24]:>26}" for agent in named))
    for index in range(steps):
        cells = []
        for rows in named.values():
            cells.append(f"{rows[index]['prompt']:>14,} / {rows[index]['cached']:>9,}" if index < len(rows) else " " * 26)
        print(f"{index + 1:>4} " + " ".join(cells))


def declared_format(run_dir: Path) -> str:
    from mlab.run.meta import read_run_meta

    agent = read_run_meta(run_dir)["agent"]
    try:
        doc = json.loads((run_dir / "build" / "agents" / agent / "agent.json").read_text())
    except (OSError, ValueError):
        return "sections"
    return (doc.get("reply") or {}).get("format") or "sections"


def read_run_meta_agent(run_dir: Path) -> str:
    from mlab.run.meta import read_run_meta

    return read_run_meta(run_dir)["agent"]


def compare(agents: list[str], task: str, keep: bool) -> int:
    from mlab.trace import read_trace

    folder = Path(tempfile.mkdtemp(prefix="mlab-bench-prompt-"))
    named: dict[str, list[dict]] = {}
    actions: dict[str, list] = {}
    try:
        for agent in agents:
            run_dir, _ = demo_run(task, folder / agent, agent)
            records = read_trace(run_dir / "trace.jsonl").records
            named[agent] = step_usage(records)
            actions[agent] = [r.get("action") for r in records if r.get("action") is not None]
            print(f"demo run of {agent} ({declared_format(run_dir)}): {run_dir}")
        print(f"task {task}, model mlab/demo (the same demonstration played by every agent), seed 0")
        if len({json.dumps(a) for a in actions.values()}) > 1:
            # then the prompts do not carry the same information, and the figures do not compare
            print("WARNING: the runs did not take the same actions, so their prompts do not carry the same "
                  "information:\n" + "\n".join(f"  {agent}: {', '.join(map(str, done))}" for agent, done in actions.items()))
        print_usage(named)
    finally:
        if keep:
            print(f"runs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="a recorded run (default: make a demo run)")
    parser.add_argument("--task", help="task of the demo run (default house-price; --quick: a tiny task)")
    parser.add_argument("--keep", action="store_true", help="keep the demo run's folder")
    parser.add_argument("--quick", action="store_true", help="the default measurement over one demo run of a tiny "
                        "task (its files listed, its starter run, submitted), unless --task names one: checks the "
                        "benchmark runs")
    parser.add_argument("--compare", nargs="+", metavar="AGENT",
                        help="demo runs of these agents on the task, their prompt and cached tokens side by side")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.compare:
        return compare(args.compare, args.task or "house-price", args.keep)
    folder = None
    memory = None
    run_dir = args.run_dir
    if run_dir is None:
        folder = Path(tempfile.mkdtemp(prefix="mlab-bench-prompt-"))
        task = args.task or (str(tiny_task(folder / "task")) if args.quick else "house-price")
        run_dir, memory = demo_run(task, folder / "runs")
        print(f"demo run: {run_dir}")
    try:
        import litellm
        from mlab.trace import read_trace

        if declared_format(run_dir) == "tools":  # a conversation and a tools array: no parts to locate
            print_usage({read_run_meta_agent(run_dir): step_usage(read_trace(run_dir / "trace.jsonl").records)})
            return 0
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
