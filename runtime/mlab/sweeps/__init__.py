"""Sweeps: plan an experiment's runs, run each exactly once through an executor (local or Ray), keep its state, report it."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "Attempt": "executors",
    "DevicePool": "local",
    "Ended": "executors",
    "Executor": "executors",
    "Experiment": "plan",
    "FolderSender": "transfer",
    "LocalExecutor": "local",
    "Progress": "progress",
    "RayExecutor": "ray",
    "RunSpec": "plan",
    "Sweep": "runner",
    "SweepFolder": "state",
    "Work": "state",
    "apply_piece": "transfer",
    "expand": "plan",
    "limits_not_passed": "plan",
    "load_experiment": "plan",
    "pack_folder": "transfer",
    "reconcile": "state",
    "report_sweep": "report",
    "steps_taken": "state",
    "stop_on_signals": "runner",
    "unpack": "transfer",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
