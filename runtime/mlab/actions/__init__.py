"""What an agent can do: the compiled action table, the primitive registry and the primitives on files and scripts, the workspace they act on, undo history and research log."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "ActionRejected": "table",
    "ActionTable": "table",
    "EditHistory": "history",
    "PrimitiveContext": "primitives",
    "PrimitiveRegistry": "primitives",
    "ResearchLog": "history",
    "RunServices": "primitives",
    "ScriptSettings": "scripts",
    "Workspace": "workspace",
    "read_text": "files",
    "script_runner": "scripts",
    "use_script_runner": "scripts",
    "write_text": "files",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
