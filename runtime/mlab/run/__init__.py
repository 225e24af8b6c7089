"""A run folder driven step by step: create and resume runs, check out a step's workspace, drive a run with scripted actions."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "RUN_JSON": "folder",
    "Run": "folder",
    "RunEnded": "folder",
    "bundled_datasets": "folder",
    "canary_guid": "canary",
    "canary_line": "canary",
    "hardware_class": "hardware",
    "measure_hardware": "hardware",
    "open_reproduction": "reproduce",
    "read_lock": "lock",
    "write_lock": "lock",
    "hidden_paths": "folder",
    "load_actions": "drive",
    "manifest_at": "recovery",
    "read_run_meta": "folder",
    "thread_env": "folder",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
