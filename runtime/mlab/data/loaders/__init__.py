"""Remote data sources (Kaggle, Hugging Face, torchvision, OGB): download once, verify, convert into a variant's files."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "REMOTE_SOURCES": "remote",
    "convert": "remote",
    "credentials_problem": "kaggle",
    "fetch_source": "remote",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
