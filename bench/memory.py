"""Benchmark: the memory of the harness process of one run, and which heavy libraries it holds.

A tiny tabular task is run (write a script, run it, call Validate Submission, submit) by
`mlab run` in a fresh process, once to prepare its data and then measured (as every run of a
sweep after the first finds its data prepared), twice: with the offline scripted model, and
with the same replies served by an OpenAI-compatible server on 127.0.0.1 (`--model
openai/gpt-4o-mini --api-base URL`, the server in a process of its own, reporting usage as a
provider does), which takes the path of a real provider's run. Printed: each measured process's
peak resident memory (ru_maxrss; scripts and scoring run in child processes of their own and are
not counted), and whether pandas, scikit-learn, numpy and litellm were imported by it; for scale,
the peak of a process that imports litellm alone. Targets: <= 250 MB, and neither pandas nor
scikit-learn in the process.

    python bench/memory.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_MB = 250

RUN = """\
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from scenarios import write_task
from mlab.cli import main
model = ["--model", "mlab/scripted:" + sys.argv[3]] if sys.argv[5] == "-" else \
    ["--model", "openai/gpt-4o-mini", "--api-base", sys.argv[5]]
code = main(["run", sys.argv[2], "--agent", "research", *model, "--runs-dir", sys.argv[4], "--plain"])
heavy = {name: name in sys.modules for name in ("pandas", "sklearn", "numpy", "litellm")}
print(json.dumps({"code": code, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **heavy}))
"""

# the replies served as an OpenAI-compatible provider would, until stdin closes
SERVER = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from fake_openai import FakeOpenAI
with FakeOpenAI(json.loads(open(sys.argv[2]).read())) as server:
    print(server.base, flush=True)
    sys.stdin.read()
"""

LITELLM = "import resource, litellm; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"


def replies() -> list[str]:
    """The scripted model's replies: the research-0 scenario with a Validate Submission step."""
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from scenarios import SCENARIOS

    scripted = next(s for s in SCENARIOS if s.name == "research-0").replies()
    validate = scripted[1].replace("Action: Execute Script", "Action: Validate Submission") \
        .replace('Action Input: {"script_name": "blend.py"}', "Action Input: {}")
    return scripted[:2] + ([validate] if validate != scripted[1] else []) + scripted[2:]


def measure(root: Path, source: Path, script: Path, env: dict, attempt: str, api_base: str) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, str(REPO / "tests" / "reports"), str(source), str(script),
                           str(root / attempt), api_base], capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"the benchmark run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["code"]:
        sys.exit(f"the benchmark run ({attempt}) ended with exit code {figures['code']}:\n{done.stderr[-2000:]}")
    return figures


def served_run(root: Path, source: Path, script: Path, env: dict) -> dict:
    """The measured run with its replies from a local OpenAI-compatible server (another process)."""
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(REPO / "tests" / "agent"), str(script)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        base = server.stdout.readline().strip()
        return measure(root, source, script, {**env, "OPENAI_API_KEY": "none"}, "served", base)
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def line(what: str, figures: dict) -> str:
    imported = ", ".join(f"{name} {'yes' if figures[name] else 'no'}" for name in ("pandas", "sklearn", "numpy", "litellm"))
    return f"{what}: peak {figures['peak_mb']:.0f} MB (target <= {TARGET_MB} MB); imported: {imported}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the offline run only once, which also prepares the data: checks the benchmark runs")
    quick = parser.parse_args().quick
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from scenarios import write_task

    with tempfile.TemporaryDirectory(prefix="mlab-bench-memory-") as scratch:
        root = Path(scratch)
        source = write_task(root / "task")
        script = root / "replies.json"
        script.write_text(json.dumps(replies()))
        env = {**os.environ, "MLAB_CACHE": str(root / "cache"), "SCIKIT_LEARN_DATA": str(root / "sklearn"),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        first = measure(root, source, script, env, "prepare", "-")
        offline = first if quick else measure(root, source, script, env, "measured", "-")
        served = served_run(root, source, script, env)
        alone = float(subprocess.run([sys.executable, "-c", LITELLM], capture_output=True, text=True, env=env,
                                     check=True).stdout)
    print(line("harness process of one run, offline scripted model", offline))
    print(line("the same run, its replies from an OpenAI-compatible server", served))
    print(f"the run that also prepared the data: peak {first['peak_mb']:.0f} MB (pandas for the preparation)")
    print(f"for scale: a process importing litellm alone peaks at {alone:.0f} MB")
    return 0

if __name__ == "__main__":
    sys.exit(main())
