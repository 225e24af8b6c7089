"""Model calls through litellm (real providers and the offline `mlab/` ones), usage and cost, and how calls fail."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "MissingKey": "errors",
    "ModelCall": "client",
    "ModelClient": "client",
    "ModelError": "errors",
    "RepliesExhausted": "errors",
    "TierConfig": "client",
    "Usage": "client",
    "check_keys": "client",
    "import_litellm": "client",
    "is_offline": "client",
    "split_prefix": "client",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
