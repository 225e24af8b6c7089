"""Accelerator busy seconds: nvidia-smi sampled while a script runs, integrated per device
(Σ utilization/100 × Δt), summed into result.json's compute. There is no GPU here: a fake
nvidia-smi first on PATH prints the samples each test chooses, and the figures are worked by hand."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mlab.run import hardware
from mlab.sandbox.accelerator import AcceleratorSampler

FAKE_SMI = """#!/bin/sh
# a stand-in for nvidia-smi: lists two GPUs, or prints $FAKE_SMI_SAMPLES as utilization samples
case "$*" in
  *name,memory.total,driver_version*)
    printf 'NVIDIA H100 80GB HBM3, 81559, 550.54\\nNVIDIA H100 80GB HBM3, 81559, 550.54\\n' ;;
  *utilization.gpu*)
    echo "$*" >> "$FAKE_SMI_CALLS"
    cat "$FAKE_SMI_SAMPLES"
    touch "$FAKE_SMI_READY"
    if [ -n "$FAKE_SMI_EXIT" ]; then echo "GPU is lost" >&2; exit "$FAKE_SMI_EXIT"; fi
    exec sleep 60 ;;
esac
"""

# device 0: 80% over 0.5 s, then 40% over 1.0 s = 0.8 s; device 1: 100% over 0.5 s = 0.5 s
# (its third line is unreadable); device 3 is not the run's and is not counted
SAMPLES = """2026/12/02 12:00:00.000, 0, 30
2026/12/02 12:00:00.000, 1, 0
2026/12/02 12:00:00.500, 0, 80
2026/12/02 12:00:00.500, 1, 100
2026/12/02 12:00:00.500, 3, 100
2026/12/02 12:00:01.500, 0, 40
2026/12/02 12:00:01.500, 1, [N/A]
"""


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """The fake nvidia-smi first on PATH; returns a function that sets its samples (and exit code)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    tool = folder / "nvidia-smi"
    tool.write_text(FAKE_SMI)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    calls, ready = tmp_path / "calls.txt", tmp_path / "ready"
    monkeypatch.setenv("FAKE_SMI_CALLS", str(calls))
    monkeypatch.setenv("FAKE_SMI_READY", str(ready))

    def samples(text: str = SAMPLES, exit_code: int | None = None) -> Path:
        (tmp_path / "samples.txt").write_text(text)
        monkeypatch.setenv("FAKE_SMI_SAMPLES", str(tmp_path / "samples.txt"))
        if exit_code is not None:
            monkeypatch.setenv("FAKE_SMI_EXIT", str(exit_code))
        return ready

    samples.calls = calls
    return samples


def _wait_for(path: Path, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_busy_seconds_are_utilization_integrated_over_the_tools_timestamps(fake_smi):
    ready = fake_smi()
    sampler = AcceleratorSampler.start((0, 1))
    _wait_for(ready)
    measured = sampler.stop()
    assert measured["busy_s"] == pytest.approx(1.3) and measured["devices"] == {"0": pytest.approx(0.8),
                                                                               "1": pytest.approx(0.5)}
    assert measured["samples"] == 5 and measured["interval_ms"] == 200
    assert measured["note"] == "2 line(s) of nvidia-smi were not a utilization sample (for example [N/A])"
    assert "--id=0,1" in fake_smi.calls.read_text() and "--loop-ms=200" in fake_smi.calls.read_text()
    assert sampler.process.poll() is not None  # killed at the end, not left sampling


def test_a_timestamp_in_another_format_is_replaced_by_the_time_the_line_was_read():
    from mlab.sandbox.accelerator import BusyIntegral

    integral = BusyIntegral((0,))
    integral.add("Wed Dec  2 12:00:00 2026, 0, 50", arrived=100.0)
    integral.add("Wed Dec  2 12:00:01 2026, 0, 50", arrived=100.4)
    integral.add("2026/12/02 12:00:01.000, 0, junk", arrived=100.6)
    assert integral.record() == {"busy_s": 0.2, "devices": {"0": 0.2}, "samples": 2} and integral.unreadable == 1


def test_a_gap_counts_at_most_ten_periods(fake_smi):
    ready = fake_smi("2026/12/02 12:00:00.000, 0, 50\n2026/12/02 13:00:00.000, 0, 50\n")
    sampler = AcceleratorSampler.start((0,), interval_ms=100)
    _wait_for(ready)
    assert sampler.stop()["busy_s"] == pytest.approx(0.5)  # 50% of 10 × 0.1 s, not of an hour


def test_a_tool_that_stops_mid_run_gives_what_it_measured_and_says_so(fake_smi):
    ready = fake_smi(SAMPLES, exit_code=3)
    sampler = AcceleratorSampler.start((0, 1))
    _wait_for(ready)
    time.sleep(0.1)  # the fake has exited
    measured = sampler.stop()
    assert measured["busy_s"] == pytest.approx(1.3)
    assert "nvidia-smi stopped after" in measured["note"] and "exit code 3 (GPU is lost)" in measured["note"]


def test_a_tool_that_fails_before_any_sample_is_null_with_its_reason(fake_smi):
    ready = fake_smi("", exit_code=9)
    sampler = AcceleratorSampler.start((0,))
    _wait_for(ready)
    time.sleep(0.1)
    measured = sampler.stop()
    assert measured["busy_s"] is None and measured["samples"] == 0 and "exit code 9" in measured["note"]


def test_a_silent_tool_is_stopped_without_waiting(fake_smi):
    fake_smi("")  # prints nothing and sleeps: the script's end must not wait for it
    sampler = AcceleratorSampler.start((0,))
    started = time.monotonic()
    measured = sampler.stop()
    assert time.monotonic() - started < 1.5
    assert measured == {"busy_s": 0.0, "devices": {"0": 0.0}, "samples": 0, "interval_ms": 200, "note": None}


def test_no_device_starts_no_process_and_a_missing_tool_is_said(fake_smi, monkeypatch):
    fake_smi()
    assert AcceleratorSampler.start(()) is None
    assert not fake_smi.calls.exists()
    monkeypatch.setenv("PATH", "/nonexistent")
    measured = AcceleratorSampler.start((0,)).stop()
    assert measured["busy_s"] is None and measured["note"] == "nvidia-smi is not on PATH"


def test_a_runs_script_is_sampled_and_the_result_records_it(fake_smi, new_run, stand_in_sandbox):
    from mlabc.schemas import problems

    from mlab.scoring.result import compute_used

    ready = fake_smi()
    run = new_run()
    record = run.meta["hardware"]
    assert [d["index"] for d in record["accelerators"]] == [0, 1] and run.scripts.accelerators == (0, 1)
    waits = f"import os, time\nwhile not os.path.exists({str(ready)!r}): time.sleep(0.01)\n"
    run.step("Write File", {"file_name": "gpu.py", "content": waits})
    run.step("Execute Script", {"script_name": "gpu.py"})
    assert run.records[-1]["compute"]["accelerator"]["busy_s"] == pytest.approx(1.3)
    assert problems("trace", run.records[-1]) == [] and problems("run", run.meta) == []
    compute = compute_used(run)
    assert compute["accelerator_s"] == pytest.approx(1.3)
    assert compute["accelerator_devices"] == {"0": pytest.approx(0.8), "1": pytest.approx(0.5)}
    assert compute["accelerator_note"].startswith("measured: nvidia-smi utilization sampled every 200 ms "
                                                  "during 1 of 1 script(s); 1 script(s) with a note")


def test_a_run_without_accelerator_samples_nothing_and_says_why(new_run, stand_in_sandbox, monkeypatch):
    from mlab.scoring.result import compute_used

    monkeypatch.setattr(hardware, "accelerators", lambda: {"vendor_tool": None, "devices": []})
    run = new_run()
    assert run.scripts.accelerators == ()
    run.step("Write File", {"file_name": "cpu.py", "content": "print(1)\n"})
    run.step("Execute Script", {"script_name": "cpu.py"})
    assert "accelerator" not in run.records[-1]["compute"]
    compute = compute_used(run)
    assert compute["accelerator_s"] is None and compute["accelerator_note"] == "not measured: no accelerator"


def test_result_figures_from_trace_records_worked_by_hand():
    record = {"accelerators": [{"model": "A10", "index": 2}], "accelerator_tool": "nvidia-smi"}
    assert hardware.sampled_devices(record) == (2,)
    failed = {"busy_s": None, "devices": {"2": 0.0}, "samples": 0, "interval_ms": 200, "note": "nvidia-smi is not on PATH"}
    assert hardware.accelerator_use([{"accelerator": failed}], record) == {
        "accelerator_s": None, "accelerator_devices": None, "accelerator_note": "not measured: nvidia-smi is not on PATH"}
    ok = {"busy_s": 4.25, "devices": {"2": 4.25}, "samples": 30, "interval_ms": 200, "note": None}
    use = hardware.accelerator_use([{"accelerator": ok}, {"accelerator": failed}, {}], record)
    assert use["accelerator_s"] == 4.25 and use["accelerator_devices"] == {"2": 4.25}
    assert use["accelerator_note"] == ("measured: nvidia-smi utilization sampled every 200 ms during 1 of 3 "
                                       "script(s); 1 script(s) with a note, the first: nvidia-smi is not on PATH")
    assert hardware.accelerator_use([], record)["accelerator_note"] == "not measured: no script ran"


def test_the_reports_accelerator_hours_are_the_mean_busy_seconds_per_run():
    import pandas as pd

    from mlab.reports.comparability import compute_table

    frame = pd.DataFrame([{"data_variant": "lite", "task": "t", "agent": "a", "model": "m", "success_value": 1.0,
                           "compute_cpu_s": 36.0, "compute_accelerator_s": busy, "hardware_class": "1x A10, 4 CPU"}
                          for busy in (1800.0, 5400.0, None)])
    table = compute_table(frame)
    row = table.frame.iloc[0]
    shown = dict((header, cell(row)) for header, cell in table.columns)
    assert shown["accelerator-hours per run"] == "1.0000"  # (0.5 h + 1.5 h) / 2 runs measured
