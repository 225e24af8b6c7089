"""The agent loop: templates rendered with their context, replies parsed by format, model-backed primitives registered."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "AgentLoop": "loop",
    "ReplyError": "replies",
    "Templates": "prompting",
    "parse_json_lenient": "replies",
    "parse_reply": "replies",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
