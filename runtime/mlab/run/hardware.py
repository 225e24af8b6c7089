"""The machine a run used, measured when it starts (run.json's `hardware`), and its class.

CPU model and the cores the scripts may use (the task's declared CPUs, at most those this process
may run on), the memory limit of each script and the machine's memory, accelerators (model,
count, memory, driver, index) from `nvidia-smi` when it is on PATH, else none, the OS, the Python
of the harness and of the scripts, and the installed versions of the task's declared requirements.
Nothing here raises: a fact that cannot be read is recorded as null.

The devices of the record are those whose busy seconds the scripts' sampler measures
(mlab/sandbox/accelerator.py); `accelerator_use` sums what it measured into result.json's compute.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

NVIDIA_QUERY = ("nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits")


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def machine_memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def accelerators(run=subprocess.run) -> dict:
    """{"vendor_tool": name or None, "devices": [{"model", "memory_bytes", "driver"}]}."""
    if shutil.which(NVIDIA_QUERY[0]) is None:
        return {"vendor_tool": None, "devices": []}
    try:
        done = run(list(NVIDIA_QUERY), capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return {"vendor_tool": "nvidia-smi", "devices": []}
    devices = []
    for line in (done.stdout or "").splitlines() if done.returncode == 0 else []:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0]:
            continue
        try:
            memory = int(float(parts[1]) * 2**20)  # nvidia-smi reports MiB
        except ValueError:
            memory = None
        devices.append({"model": parts[0], "memory_bytes": memory, "driver": parts[2] or None,
                        "index": len(devices)})  # nvidia-smi lists the devices in index order
    return {"vendor_tool": "nvidia-smi", "devices": devices}


def requirement_versions(requires, python: str | None) -> dict[str, str | None]:
    if not requires:
        return {}
    from mlab.data.requirements import RequirementError, installed_versions, parse_requirements

    try:
        names = [r.name for r in parse_requirements(requires)]
        return installed_versions(names, python or sys.executable)
    except RequirementError:
        return {}


def measure_hardware(declared_cpus: int, memory_limit: int | None, requires=(), python: str | None = None,
                     device: str | None = None) -> dict:
    """The hardware record of spec/run.schema.json (`hardware`)."""
    found = accelerators()
    devices = found["devices"]
    if device is not None and devices:  # CUDA_VISIBLE_DEVICES: the indices the scripts see
        chosen = [int(i) for i in device.split(",") if i.strip().isdigit() and int(i) < len(devices)]
        devices = [devices[i] for i in chosen]
    available = available_cpus()
    return {
        "cpu_model": cpu_model(),
        "cpus_allowed": min(max(int(declared_cpus or 1), 1), available),
        "cpus_available": available,
        "memory_limit_bytes": memory_limit,
        "machine_memory_bytes": machine_memory_bytes(),
        "accelerators": devices,
        "accelerator_tool": found["vendor_tool"],
        "os": platform.platform(),
        "python": platform.python_version(),
        "scripts_python": python or sys.executable,
        "requirements": requirement_versions(requires, python),
    }


def hardware_class(record: dict | None) -> str:
    """What two runs must share to be compared as equals: the accelerators (model and count) and
    the CPU cores allowed; "unknown" for a run recorded before the hardware record."""
    if not record:
        return "unknown"
    devices = record.get("accelerators") or []
    if devices:
        models = sorted({d.get("model") or "?" for d in devices})
        gpu = " + ".join(f"{sum(d.get('model') == m for d in devices)}x {m}" for m in models)
    else:
        gpu = "no accelerator"
    return f"{gpu}, {record.get('cpus_allowed', '?')} CPU"


def sampled_devices(record: dict | None) -> tuple[int, ...]:
    """The device indices whose busy seconds a run's scripts sample: the accelerators of its
    hardware record that nvidia-smi listed (none: no sampler is started)."""
    if not record or record.get("accelerator_tool") != "nvidia-smi":
        return ()
    devices = record.get("accelerators") or []
    return tuple(int(d["index"]) if isinstance(d.get("index"), int) else i for i, d in enumerate(devices))


def accelerator_note(record: dict | None) -> str:
    """Why a run's accelerator busy time is null when no script sampled it (result.json's compute)."""
    if not record or not record.get("accelerators"):
        return "not measured: no accelerator"
    if not sampled_devices(record):
        return "not measured: the accelerators were not listed by nvidia-smi"
    return "not measured: no script ran"


def accelerator_use(computes: list[dict], record: dict | None) -> dict:
    """result.json's accelerator figures from the steps' compute records: `accelerator_s` (the
    busy seconds summed over scripts and devices; null when none was measured), per device
    `accelerator_devices`, and `accelerator_note` (how it was measured, and what went wrong)."""
    sampled = [c["accelerator"] for c in computes if isinstance(c.get("accelerator"), dict)]
    measured = [s for s in sampled if s.get("busy_s") is not None]
    if not measured:
        notes = sorted({s["note"] for s in sampled if s.get("note")})
        return {"accelerator_s": None, "accelerator_devices": None,
                "accelerator_note": "not measured: " + "; ".join(notes) if notes else accelerator_note(record)}
    devices: dict[str, float] = {}
    for script in measured:
        for index, busy in (script.get("devices") or {}).items():
            devices[index] = round(devices.get(index, 0.0) + float(busy), 4)
    intervals = sorted({s.get("interval_ms") for s in measured if s.get("interval_ms")})
    note = (f"measured: nvidia-smi utilization sampled every {'/'.join(str(i) for i in intervals)} ms "
            f"during {len(measured)} of {len(computes)} script(s)")
    problems = [s["note"] for s in sampled if s.get("note")]
    if problems:
        note += f"; {len(problems)} script(s) with a note, the first: {problems[0]}"
    return {"accelerator_s": round(sum(float(s["busy_s"]) for s in measured), 4),
            "accelerator_devices": devices, "accelerator_note": note}
