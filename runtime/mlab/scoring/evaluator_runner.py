"""Runs a task's evaluator on a submission and prints the outcome as one marked JSON line.

Not imported by mlab: mlab.scoring.evaluator copies this file into the scoring folder and the
sandbox runs it there as a script (`python evaluator/_mlab_run_evaluator.py MARK MODULE FUNCTION
SUBMISSION PRIVATE`). So it uses the standard library only.
"""
import importlib.util
import json
import math
import sys
import traceback
from pathlib import Path

INVALID_CLASS = "SubmissionInvalid"


def report(mark: str, outcome: dict) -> None:
    print(f"\n{mark} " + json.dumps(outcome), flush=True)


def printable_repr(value, limit: int = 200) -> str:
    """The evaluator's returned object as a short text, whatever its __repr__ does."""
    try:
        text = repr(value)
    except Exception as error:  # the author's __repr__ failed: name the type and the failure instead
        text = f"<{type(value).__name__} whose repr raised {type(error).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def main(argv: list[str]) -> None:
    mark, module_path, function_name, submission, private = argv[:5]
    sys.path.insert(0, str(Path(module_path).parent))
    try:
        spec = importlib.util.spec_from_file_location("task_evaluator", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        value = getattr(module, function_name)(Path(submission), Path(private))
    except BaseException as error:
        invalid = any(k.__name__ == INVALID_CLASS for k in type(error).__mro__)
        report(mark, {"status": "invalid" if invalid else "error", "type": type(error).__name__,
                      "message": str(error), "traceback": "" if invalid else traceback.format_exc()[-2000:]})
        return
    number, why = finite_number(value), ""
    if not number and hasattr(value, "item"):
        try:  # a one-element array or a numpy scalar
            value = value.item()
            number = finite_number(value)
        except Exception as error:  # the author's object: whatever .item() raised is reported with it
            why = f" (its .item() raised {type(error).__name__}: {error})"
    report(mark, {"status": "ok", "value": float(value)} if number else
           {"status": "error", "type": "ValueError",
            "message": f"returned {printable_repr(value)}, not a finite number{why}", "traceback": ""})


if __name__ == "__main__":
    main(sys.argv[1:6])
