"""A sweep's cost limit (`mlab sweep --cost USD`): the total it may spend on model calls.

What is spent is the sum over every run folder of the sweep (finished runs from their
result.json, running ones from their trace so far, and the attempts set aside in runs/.retired,
which were paid for too). Before each run is started the sweep compares it with the limit: once
the spent total reaches it, no run is started; otherwise the run gets the budget left as its
own cost limit (`mlab run --cost`, or its experiment's cost limit when that is lower). Runs
already running keep the limit they started with, so with several workers the total can pass
the sweep's limit by at most what they each still had. A resumed run keeps the limit it was
started with (`--resume` takes no limits).

A limit can only be enforced on priced models: a sweep whose runs call a model without a price
in litellm's map is refused before any run starts (`refuse_unpriced`).
"""
from __future__ import annotations

import dataclasses

from mlab.errors import UsageError
from mlab.sweeps.plan import RunSpec
from mlab.sweeps.progress import RunUsage
from mlab.sweeps.state import RETIRED, SweepFolder, Work


def refuse_unpriced(limit: float, models_by_run: dict[str, set[str]]) -> None:
    """UsageError naming the models without a price (and a run that calls each), if any."""
    from mlab.models.prices import unpriced

    missing = unpriced(set().union(*models_by_run.values()))
    if missing:
        first_run = {model: next(key for key, models in models_by_run.items() if model in models) for model in missing}
        shown = "; ".join(f"{model} (run {key})" for model, key in sorted(first_run.items()))
        raise UsageError(f"--cost ${limit:g} cannot be enforced: these models have no price in litellm's price map, "
                         f"so what their runs spend is unknown: {shown}; drop --cost, or bound the runs with a "
                         "token limit (`limits {{ tokens N }}` in the experiment, or `mlab run --tokens` for one run)")


class SweepBudget:
    """The sweep's cost limit and what its run folders have spent so far."""

    def __init__(self, limit: float, folder: SweepFolder):
        if not limit > 0:
            raise UsageError("--cost must be more than 0")
        self.limit = float(limit)
        self.folder = folder
        self.readers: dict[str, RunUsage] = {}
        self.stopped = False  # set once a run was held back because the limit was reached

    def _folders(self, state: dict) -> list:
        folders = []
        for entry in state.get("runs", {}).values():
            if entry.get("run"):
                folders.append(self.folder.run_dir(entry["run"]))
            folders += [self.folder.runs / RETIRED / name for name in entry.get("retired") or []]
        return folders

    def spent(self, state: dict) -> float:
        """Dollars spent by every run folder of the sweep (an unpriced call counts nothing: the
        sweep refused unpriced models before it started)."""
        total = 0.0
        for path in self._folders(state):
            reader = self.readers.setdefault(str(path), RunUsage(path))
            cost = reader.read()[1]
            total += cost or 0.0
        return total

    def remaining(self, state: dict) -> float:
        return self.limit - self.spent(state)

    def limited(self, work: Work, remaining: float) -> Work:
        """The work with the budget left as its run's cost limit (a resume keeps its own)."""
        if work.resume:
            return work
        limits = dict(work.spec.limits)
        own = limits.get("cost")
        limits["cost"] = remaining if own is None else min(float(own), remaining)
        spec: RunSpec = dataclasses.replace(work.spec, limits=tuple(sorted(limits.items())))
        return dataclasses.replace(work, spec=spec)

    def summary(self, state: dict) -> str:
        return (f"stopped for cost: the sweep's cost limit ${self.limit:g} was reached "
                f"(${self.spent(state):.4f} spent); the runs not started are left for a later sweep "
                "with a higher --cost")
