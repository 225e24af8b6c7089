"""`mlab list`: the experiments there are (the standard library's too) and which tasks have a demonstration."""
from __future__ import annotations

from mlab.cli import main as mlab_main


def test_list_shows_every_experiment_and_marks_demonstrations(capsys):
    assert mlab_main(["list"]) == 0
    out = capsys.readouterr().out
    experiments = out.split("experiments:\n")[1].split()
    assert "paper-table" in experiments and "smoke" in experiments
    tasks = {line.split()[0]: line for line in out.split("tasks:\n")[1].split("agents:")[0].splitlines()}
    # every bundled task ships a winning demonstration
    assert len(tasks) == 13 and all(line.endswith("; demonstration (mlab/demo)") for line in tasks.values())


def test_each_task_line_separates_its_data_variants_from_its_hardware(capsys):
    assert mlab_main(["list"]) == 0
    lines = capsys.readouterr().out.split("tasks:\n")[1].split("agents:")[0].splitlines()
    house = next(line for line in lines if line.split()[0] == "house-price")
    assert "data: full, lite; 2 cpu, 0 gpus" in " ".join(house.split())
