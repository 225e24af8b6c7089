"""The data model of a task: its variants' tables made in memory, profiled, and every declaration
checked against them (docs/authoring.md, "The data model").

The runtime may use this package too (beside `mlabc.api` and a few kernel modules): the preparation logic
of `tables` is the runtime's own (mlab.data writes what it makes), and `checks` is how the
runtime tells, at preparation and at scoring, a failure the task explains from the agent's.

- `split_frames`, `split_table`, `hold_out_validation`, `add_id_column`, `generate_seed`,
  `PrepareError`, `DEFAULT_TEST_FRACTION`, `VALIDATION_FILE`: a variant's tables in memory;
- `DataModel`, `profile_tables`, `read_prepared`: what each table holds;
- `Finding`, `task_findings`: the declarations checked against a model;
- `model_variant`: a variant made in memory from its offline source (the compiler's check);
  `modelled`: whether the compiler makes a variant (else preparation checks it);
- `missing_script`: the first script a demonstration executes that nothing provides (E570).
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "DEFAULT_TEST_FRACTION": "tables", "VALIDATION_FILE": "tables", "PrepareError": "tables",
    "add_id_column": "tables", "generate_seed": "tables", "hold_out_validation": "tables",
    "split_frames": "tables", "split_table": "tables",
    "DataModel": "model", "profile_tables": "model", "read_prepared": "model",
    "Finding": "checks", "task_findings": "checks",
    "model_variant": "build", "modelled": "build", "missing_script": "scripts",
}
__all__ = sorted(_EXPORTS)
__getattr__, _ = lazy_exports(__package__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
