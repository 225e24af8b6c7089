"""Running an agent's script under its limits, in a bubblewrap sandbox where available."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "SandboxPolicy": "runner",
    "ScriptResult": "runner",
    "describe_result": "runner",
    "run_script": "runner",
    "sandbox_available": "runner",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
