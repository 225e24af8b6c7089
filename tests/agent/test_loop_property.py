"""Property: whatever a model replies, a run ends cleanly with an end reason and a valid result.json."""
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agent_helpers import mlab, only_run, result, scripted, trace, trace_problems

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


# -- whole runs: reply → parse → act → trace → resume → score → view --------------------------

ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=60)  # surrogates included
DEEP = st.integers(50, 6000).map(lambda depth: '{"a": ' * depth + "1" + "}" * depth)
HUGE = st.integers(100_000, 2_000_000).map(lambda size: "x" * size)
NAMES = (st.sampled_from(["notes.py", "train.py", ".", "sub/x.py", "d/" * 40 + "f.py"])
         | st.sampled_from(["\udcff.py", "a\udcfe/b.txt", "\ud800"]) | ANY_TEXT)
CONTENT = st.text(max_size=60) | ANY_TEXT | HUGE | st.just("open(b'\\xff.txt', 'w').write('odd')\n")
RUN_INPUT = st.one_of(
    st.fixed_dictionaries({"file_name": NAMES, "content": CONTENT}).map(json.dumps),
    st.fixed_dictionaries({"script_name": NAMES}).map(json.dumps),
    st.fixed_dictionaries({"dir_path": NAMES}).map(json.dumps),
    st.fixed_dictionaries({"file_name": NAMES, "things_to_look_for": ANY_TEXT}).map(json.dumps))
RUN_ACTIONS = st.sampled_from(["Write File", "Append File", "List Files", "Read File", "Execute Script"])
SHAPED_RUN_REPLY = st.builds("Thought: {}\nAction: {}\nAction Input: {}".format, ANY_TEXT, RUN_ACTIONS, RUN_INPUT)
BAD_RUN_REPLY = st.one_of(
    st.builds("Thought: {}\nAction: {}\nAction Input: {}".format, ANY_TEXT, RUN_ACTIONS | ANY_TEXT,
              DEEP | ANY_TEXT | ACTION_INPUT),
    ANY_TEXT, DEEP, HUGE)
# A step: up to two replies that may not parse (format retries), then one that does.
RUN_STEP = st.tuples(st.lists(BAD_RUN_REPLY, max_size=2), SHAPED_RUN_REPLY).map(lambda step: [*step[0], step[1]])
SUBMIT = 'Action: Final Answer\nAction Input: {"final_answer": "done"}'


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.large_base_example])
@given(st.lists(RUN_STEP, min_size=1, max_size=3).map(lambda steps: [reply for step in steps for reply in step]))
def test_arbitrary_replies_through_a_whole_run_with_resume_always_leave_a_result(tiny_task, replies):
    from mlab.cli import run as run_command

    folder = Path(tempfile.mkdtemp(prefix="mlab-property-"))
    shown = run_command.Display.step

    def stop_after_the_first_step(self, record, observation, usage):
        shown(self, record, observation, usage)
        if record["step"] == 1:
            raise KeyboardInterrupt

    try:
        model = scripted(folder, replies + [SUBMIT])
        run_command.Display.step = stop_after_the_first_step
        try:
            code, out, err = mlab("run", tiny_task, "--model", model, "--steps", "4", "--runs-dir", folder / "runs")
        finally:
            run_command.Display.step = shown
        assert code in (0, 1, 130), err
        run_dir = only_run(folder / "runs")
        event(f"resumed: {code == 130}")
        if code == 130:  # stopped after its first step: resume it
            code, out2, err2 = mlab("run", "--resume", run_dir)
            out, err = out + out2, err + err2
            assert code in (0, 1), err
        assert "Traceback" not in out + err
        document = result(run_dir)
        assert document["end_reason"] in END_REASONS
        assert trace_problems(run_dir) == []
        event(f"end: {document['end_reason']}")
        event(f"actions done: {sum(r['status'] in ('ok', 'final') for r in trace(run_dir))}")
        code, _, err = mlab("view", run_dir, "--output", folder / "page.html")
        assert code == 0 and "Traceback" not in err, err
    finally:
        shutil.rmtree(folder, ignore_errors=True)
