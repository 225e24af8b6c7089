"""Property: whatever message a model sends a tool agent — any text, any tool names, arguments
of any shape, ids missing or repeated — the run ends cleanly with a valid trace and result."""
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_helpers import mlab, only_run, result, trace_problems
from tool_helpers import use_tools_agent, write_replies

NAMES = st.sampled_from(["list_files", "execute_script", "final_answer", "read_file", "copy_file"]) | st.text(max_size=12)
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 300) | st.text(max_size=12)
                      | st.sampled_from([".", "train.py", "fit.py", "../outside"]),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                      max_leaves=5)
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["dir_path", "script_name", "final_answer", "file_name", "source"]), VALUES,
                    max_size=3),
    VALUES, st.text(max_size=40))
CALL = st.fixed_dictionaries({"name": NAMES, "arguments": ARGUMENTS},
                             optional={"id": st.none() | st.sampled_from(["", "same", "call_1"])})
MESSAGE = st.fixed_dictionaries({}, optional={"content": st.none() | st.text(max_size=80),
                                              "tool_calls": st.lists(CALL, max_size=3)})
REPLY = MESSAGE | st.text(max_size=40)


@pytest.fixture(scope="module")
def tools_everywhere():
    with pytest.MonkeyPatch.context() as patch:
        use_tools_agent(patch, {"format_retries": 1}, parallel="ordered")
        yield


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(REPLY, max_size=6))
def test_arbitrary_tool_messages_never_crash_the_loop(tools_everywhere, tiny_task, replies):
    folder = Path(tempfile.mkdtemp(prefix="mlab-tool-property-"))
    try:
        code, out, err = mlab("run", tiny_task, "--model", write_replies(folder, replies), "--steps", "3",
                              "--runs-dir", folder / "runs")
        assert code in (0, 1), err
        assert "Traceback" not in out + err
        run_dir = only_run(folder / "runs")
        document = result(run_dir)
        assert document["end_reason"] in {"final_answer", "steps_limit", "response format error",
                                          "model replies exhausted"}
        assert trace_problems(run_dir) == []
        json.dumps(document)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
