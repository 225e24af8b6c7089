"""Task data: prepare a variant once into the cache (local files, generators, remote sources), split it, install it into runs."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "check_requirements": "requirements",
    "checksum_lines": "prepare",
    "copy_tree": "prepare",
    "folder_digest": "prepare",
    "generate_seed": "prepare",
    "install_data": "prepare",
    "install_run_data": "install",
    "install_starter": "prepare",
    "local_source_digest": "prepare",
    "preparation_key": "prepare",
    "prepare_data": "prepare",
    "source_path": "prepare",
    "write_split": "splits",
    "write_table": "splits",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
