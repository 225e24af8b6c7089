"""Tools for authors of .mlab files: the verbs fmt, convert, new and explain.

fmt.py formats (comments.py places comments, printer.py prints an AST as .mlab text),
convert.py converts between .mlab and .mlab.yaml, scaffold.py writes a new task, explain/
explains diagnostic codes, cli.py adds the verbs to `mlabc`. The names below are imported on
first use, so that `mlabc check` does not pay for the authoring tools at start-up.
"""
from __future__ import annotations

from mlabc.lazy import lazy_exports

__all__ = ["ScaffoldError", "Unprintable", "convert_file", "format_files", "format_text", "mlab_to_yaml",
           "new_task", "print_module", "quote", "yaml_to_mlab"]

_EXPORTS = {
    "ScaffoldError": ".scaffold", "new_task": ".scaffold",
    "Unprintable": ".printer", "print_module": ".printer", "quote": ".printer",
    "convert_file": ".convert", "mlab_to_yaml": ".convert", "yaml_to_mlab": ".convert",
    "format_files": ".fmt", "format_text": ".fmt",
}


__getattr__, __dir__ = lazy_exports(__name__, {name: module.lstrip(".") for name, module in _EXPORTS.items()})
