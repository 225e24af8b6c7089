"""`mlab audit`: checks that a task can be trusted as a benchmark task (leaks, a sandbox probe, the baseline, cheap exploits)."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "audit_task": "checks",
    "exploit_check": "exploits",
    "leak_findings": "leaks",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
