"""Property: whatever a model replies, a run ends cleanly with an end reason and a valid result.json."""
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_helpers import mlab, only_run, result, scripted, trace_problems

ACTIONS = ["List Files", "Read File", "Write File", "Append File", "Copy File", "Inspect Script Lines",
           "Undo Edit Script", "Execute Script", "Final Answer", "Understand File", "Edit Script (AI)",
           "Edit Script Segment (AI)", "Reflection", "Retrieval from Research Log",
           "Append Summary to Research Log"]
INPUT_NAMES = ["dir_path", "file_name", "content", "script_name", "source", "destination", "start_line_number",
               "end_line_number", "final_answer", "things_to_look_for", "edit_instruction", "save_name",
               "things_to_reflect_on", "current_plan"]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 300) | st.text(max_size=20)
                           | st.sampled_from([".", "train.py", "submission.csv", "../outside", "/etc/passwd"]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                     max_size=3),
                           max_leaves=6)
ACTION_INPUT = st.one_of(
    st.dictionaries(st.sampled_from(INPUT_NAMES), JSON_VALUES, max_size=4).map(json.dumps),
    JSON_VALUES.map(json.dumps),
    st.text(max_size=60))
SHAPED_REPLY = st.builds("Thought: {}\nAction: {}\nAction Input: {}".format,
                         st.text(max_size=40), st.sampled_from(ACTIONS) | st.text(max_size=20), ACTION_INPUT)
REPLY = st.one_of(st.text(max_size=300), SHAPED_REPLY)
END_REASONS = {"final_answer", "steps_limit", "response format error", "model replies exhausted"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(REPLY, min_size=0, max_size=8))
def test_arbitrary_replies_never_crash_the_loop(tiny_task, replies):
    folder = Path(tempfile.mkdtemp(prefix="mlab-property-"))
    try:
        code, out, err = mlab("run", tiny_task, "--model", scripted(folder, replies), "--steps", "3",
                              "--runs-dir", folder / "runs")
        assert code in (0, 1), err
        assert "Traceback" not in out + err
        run_dir = only_run(folder / "runs")
        document = result(run_dir)
        assert document["end_reason"] in END_REASONS
        if document["score"] is None:  # a run without a score always says why
            assert document["failure_mode"] is not None and document["detail"]
        else:
            assert document["submitted"] and document["failure_mode"] in (None, "small improvement")
        assert trace_problems(run_dir) == []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
