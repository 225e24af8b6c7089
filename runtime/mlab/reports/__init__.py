"""Reports over runs: loading runs, evaluation tables, comparisons, statistics, plots and the failure taxonomy."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "LoadedRun": "runs",
    "NumberIndex": "taxonomy",
    "claimed_numbers": "taxonomy",
    "evaluate_runs": "eval",
    "failure_labels": "taxonomy",
    "hallucinated_claims": "taxonomy",
    "load_run": "runs",
    "load_runs": "runs",
    "parse_compare": "compare",
    "run_row": "eval",
    "score_steps": "eval",
    "write_report": "render",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
