"""The self-contained HTML pages of runs (`mlab view`) and their index."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "MAX_PROMPT_CHARS": "page",
    "MAX_SHOWN_CHARS": "page",
    "write_index": "index",
    "write_run_page": "page",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
