"""The GPU check: cifar10 and llama-inference on their lite data with a GPU visible in the sandbox,
result.json's accelerator figures set against nvidia-smi's own.

For each task, `mlab run TASK --model mlab/demo --device 0` runs the task's demonstration (its
scripts train or run the model, with CUDA_VISIBLE_DEVICES=0 in the sandbox), while this script
keeps an nvidia-smi of its own running (`--query-gpu=index,utilization.gpu,memory.used` every
100 ms, each line stamped with the time it was read). Printed per task: the run's
`compute.accelerator_s` (the harness's sampler, mlab/sandbox/accelerator.py), the busy seconds
the independent log gives over the same scripts' steps (utilization / 100 × time between samples),
their ratio, the peak GPU memory in use, and whether a script saw CUDA at all. A ratio within
0.8 to 1.25 is agreement (the two sample the same counter at different moments); a run whose
accelerator_s is null says why in `accelerator_note`.

Needs: a machine with an NVIDIA GPU and nvidia-smi, bubblewrap, this repository installed
(`pip install -e .` into a Python with torch built for CUDA: the scripts' interpreter is
--python, default the one running this). One command:

    python bench/gpu_check.py [--python PY] [--device 0] [--out DIR] [--tasks cifar10,llama-inference]

`--quick` runs without a GPU: it checks the busy-seconds arithmetic on a made-up log and that
the tasks compile (their data model left out), and prints the commands the real check runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
QUERY = ["nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used", "--format=csv,noheader,nounits",
         "-lms", "100"]
AGREEMENT = (0.8, 1.25)


class SmiLog:
    """nvidia-smi's own samples, each (time read, index, utilization %, memory MiB)."""

    def __init__(self):
        self.samples: list[tuple[float, int, float, float]] = []
        self.process = subprocess.Popen(QUERY, stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.time(), int(parts[0]), float(parts[1]), float(parts[2])))
            except (ValueError, IndexError):
                continue   # "[N/A]" or a partial line

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.thread.join(timeout=5)


def busy_seconds(samples, device: int, windows: list[tuple[float, float]]) -> float:
    """Σ utilization/100 × (t_k − t_(k−1)) over the device's samples inside the windows (the
    sampler's rule, on the independent log)."""
    total = 0.0
    for start, end in windows:
        inside = [(t, u) for t, d, u, _ in samples if d == device and start <= t <= end]
        for (before, _), (moment, utilization) in zip(inside, inside[1:]):
            total += utilization / 100.0 * (moment - before)
    return total


def script_windows(run_dir: Path) -> list[tuple[float, float]]:
    """(start, end) in epoch seconds of each step that ran a script (its compute record set)."""
    windows = []
    for line in (run_dir / "trace.jsonl").read_text().splitlines():
        record = json.loads(line)
        if isinstance(record.get("compute"), dict):
            windows.append(tuple(datetime.fromisoformat(record[k].replace("Z", "+00:00")).timestamp()
                                 for k in ("started", "ended")))
    return windows


def mlab_command() -> str:
    """The `mlab` beside this interpreter (its environment's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mlab"
    return str(beside) if beside.is_file() else (shutil.which("mlab") or "mlab")


def check_task(task: str, python: str, device: str, out: Path) -> dict:
    runs = out / "runs" / task
    command = [mlab_command(), "run", str(REPO / "tasks" / f"{task}.mlab"), "--model", "mlab/demo",
               "--device", device, "--python", python, "--runs-dir", str(runs), "--plain"]
    print("$", " ".join(command), flush=True)
    log = SmiLog()
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    finally:
        log.stop()
    (out / f"{task}.log").write_text(done.stdout + done.stderr)
    folders = [p for p in runs.iterdir() if (p / "run.json").is_file()] if runs.is_dir() else []
    if not folders:
        return {"task": task, "error": f"no run folder (exit {done.returncode}): {(done.stdout + done.stderr)[-800:]}"}
    run_dir = folders[0]
    result = json.loads((run_dir / "result.json").read_text()) if (run_dir / "result.json").is_file() else {}
    compute = result.get("compute") or {}
    windows = script_windows(run_dir)
    index = int(device.split(",")[0])
    smi = busy_seconds(log.samples, index, windows)
    observations = [json.loads(line).get("observation") or "" for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    return {"task": task, "exit": done.returncode, "run": str(run_dir), "score": result.get("score"),
            "accelerator_s": compute.get("accelerator_s"), "accelerator_note": compute.get("accelerator_note"),
            "smi_busy_s": round(smi, 3), "scripts": len(windows),
            "peak_memory_mib": max((m for _, d, _, m in log.samples if d == index), default=None),
            "cuda_seen": any("cuda" in text.lower() for text in observations)}


def report(rows: list[dict]) -> None:
    print("\n| task | exit | scripts | result.json accelerator_s | nvidia-smi busy s | ratio | peak GPU memory | note |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        if "error" in row:
            print(f"| {row['task']} | error | | | | | | {row['error'][-300:]} |")
            continue
        mine, theirs = row["accelerator_s"], row["smi_busy_s"]
        ratio = f"{mine / theirs:.2f}" if mine is not None and theirs else "n/a"
        agree = ("agree" if ratio != "n/a" and AGREEMENT[0] <= float(ratio) <= AGREEMENT[1] else "DISAGREE")
        print(f"| {row['task']} | {row['exit']} | {row['scripts']} | {mine} | {theirs} | {ratio} ({agree}) | "
              f"{row['peak_memory_mib']} MiB | {row['accelerator_note']} |")


def quick() -> None:
    """No GPU: the arithmetic on a made-up log (50% busy for 2 s inside the window, idle outside)."""
    samples = [(100.0 + k * 0.1, 0, 50.0 if k <= 20 else 0.0, 900.0) for k in range(41)]
    busy = busy_seconds(samples, 0, [(100.0, 102.0)])
    assert abs(busy - 1.0) < 1e-6, busy
    for task in ("cifar10", "llama-inference"):
        done = subprocess.run([sys.executable, "-m", "mlabc", "check", "--no-data", str(REPO / "tasks" / f"{task}.mlab")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        print(f"would run: mlab run tasks/{task}.mlab --model mlab/demo --device 0")
    print(f"GPU check arithmetic: {busy:.3f} busy seconds of a 2 s window at 50% (quick mode: no GPU used)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter of the scripts (with CUDA torch)")
    parser.add_argument("--device", default="0", help="CUDA_VISIBLE_DEVICES of the runs (default 0)")
    parser.add_argument("--tasks", default="cifar10,llama-inference")
    parser.add_argument("--out", default=None, help="where the runs and logs are kept (default: a new temp folder)")
    parser.add_argument("--quick", action="store_true", help="no GPU: checks the script's arithmetic and the tasks")
    args = parser.parse_args()
    if args.quick:
        quick()
        return 0
    if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode:
        print("no GPU here (nvidia-smi is missing or lists no device): the GPU check needs one", file=sys.stderr)
        return 1
    out = Path(args.out or tempfile.mkdtemp(prefix="mlab-gpu-check-"))
    out.mkdir(parents=True, exist_ok=True)
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout)
    rows = [check_task(task, args.python, args.device, out) for task in args.tasks.split(",")]
    (out / "gpu_check.json").write_text(json.dumps(rows, indent=1))
    report(rows)
    print(f"\nruns, logs and gpu_check.json in {out}")
    return 0 if all("error" not in row and row["exit"] == 0 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
