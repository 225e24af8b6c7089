"""Scoring in a child interpreter, so that the process driving an agent never holds pandas or
scikit-learn.

The harness process of a run already holds the model client (litellm); the tabular scorers and
the Validate Submission check read tables with pandas (and some metrics with scikit-learn),
which would add their tens of megabytes to every run for as long as it lasts. `call` runs one
scoring function in a fresh `python -m mlab.scoring.child` (the harness's own interpreter, not
the scripts' one) and returns what it returned, or raises the MlabError it raised; the
arguments and the answer travel pickled between the two processes, which run the same code.

A call made for an agent (Validate Submission from an outside agent) is charged to the run's
limits: `memory_bytes` bounds the child's address space (set by the child itself before it reads
anything) and `timeout_s` its time, past which it is killed and the call fails with a message.
"""
from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from mlab.errors import MlabError


# what a child out of address space says: Python's error, a library that could not be mapped, the C library's
_OUT_OF_MEMORY = ("MemoryError", "failed to map segment", "Cannot allocate memory", "std::bad_alloc")


def call(function: str, *args, memory_bytes: int | None = None, timeout_s: float | None = None):
    """`module:function`(*args) in a child interpreter (of at most memory_bytes of address space,
    for at most timeout_s seconds, when given)."""
    with tempfile.TemporaryDirectory(prefix="mlab-score-") as scratch:
        answer = Path(scratch) / "answer.pickle"
        command = [sys.executable, "-m", "mlab.scoring.child", str(answer)]
        if memory_bytes:
            command.append(str(int(memory_bytes)))
        try:
            done = subprocess.run(command, input=pickle.dumps((function, args)), capture_output=True,
                                  timeout=None if timeout_s is None else min(max(timeout_s, 0.0), 10 ** 9))
        except subprocess.TimeoutExpired:
            raise MlabError(f"the check ran past the run's time left ({timeout_s:.0f} s) and was stopped") from None
        try:
            kind, value = pickle.loads(answer.read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            why = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            if memory_bytes and any(mark in why for mark in _OUT_OF_MEMORY):
                why = f"it needed more memory than the run's limit ({memory_bytes / 2**20:.0f} MiB): {why}"
            elif memory_bytes:
                why = f"{why} (it ran within the run's limit of {memory_bytes / 2**20:.0f} MiB of memory)"
            raise MlabError(f"scoring failed in its child process: {why}") from None
    if kind == "raised":
        raise value
    return value


def _main(answer: str, memory_bytes: str | None = None) -> int:
    if memory_bytes is not None:   # before anything is read or imported: the whole child is bounded
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(memory_bytes), int(memory_bytes)))
    function, args = pickle.loads(sys.stdin.buffer.read())
    module, name = function.split(":")
    try:
        outcome = ("returned", getattr(importlib.import_module(module), name)(*args))
    except MlabError as raised:
        outcome = ("raised", raised)
    try:
        data = pickle.dumps(outcome)
    except (pickle.PicklingError, TypeError, AttributeError) as unpicklable:
        data = pickle.dumps(("raised", MlabError(f"scoring gave an answer that cannot be sent back: {unpicklable}")))
    from mlab.confined import write_into

    write_into(os.path.dirname(answer), os.path.basename(answer), data)
    return 0


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:3]))
