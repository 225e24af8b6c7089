"""The stable start of the prompt: the same bytes at every step, and marked for prompt caching
where the provider needs a mark (Anthropic)."""
import pytest

from agent_helpers import mlab, only_run, research_reply, scripted, trace
from mlab.models.client import split_prefix

STEPS = [research_reply("List Files", {"dir_path": "."}),
         research_reply("Execute Script", {"script_name": "train.py"}),
         research_reply("Final Answer", {"final_answer": "done"})]


def prompts_of(tiny_task, folder, agent):
    code, _, err = mlab("run", tiny_task, "--agent", agent, "--model", scripted(folder, STEPS),
                        "--runs-dir", folder / "runs")
    assert code == 0, err
    return [(r["model"]["prompt"], r["model"]["stable_prefix_chars"]) for r in trace(only_run(folder / "runs"))]


def assert_stable_start_holds_instructions_tools_and_problem(prompts):
    (first, size), (second, size_2), (third, _) = prompts
    assert size == size_2 and size > 0
    prefix = first[:size]
    assert second.startswith(prefix) and third.startswith(prefix) and first != second
    assert prefix.endswith("\n")
    assert "- List Files: Show what a folder of the workspace contains." in prefix  # tools
    assert "Predict y from x. Write submission.csv with the columns Id and y." in prefix  # problem
    assert "Action Input: " in prefix  # the reply format


def test_the_stable_start_is_the_same_at_every_step(tiny_task, tmp_path):
    prompts = prompts_of(tiny_task, tmp_path, "tiny-steady")
    assert_stable_start_holds_instructions_tools_and_problem(prompts)
    assert "This is step" not in prompts[0][0][:prompts[0][1]]


def test_the_research_agents_stable_start_holds_its_tools_and_problem(tiny_task, tmp_path):
    assert_stable_start_holds_instructions_tools_and_problem(prompts_of(tiny_task, tmp_path, "research"))


PREFIX = "Instructions and tools.\nThe problem.\n"
PROMPT = PREFIX + "Step 3: the history.\n"


def test_anthropic_messages_mark_the_stable_start_for_caching():
    [message] = split_prefix([{"role": "user", "content": PROMPT}], PREFIX, "anthropic/claude-3-opus-20240229")
    assert message["role"] == "user"
    assert message["content"] == [
        {"type": "text", "text": PREFIX, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Step 3: the history.\n"}]


@pytest.mark.parametrize("model, prefix, prompt", [
    ("openai/gpt-4-turbo", PREFIX, PROMPT),            # OpenAI caches a repeated start without marks
    ("mlab/demo", PREFIX, PROMPT),                     # offline models take plain text
    ("anthropic/claude-3-opus-20240229", "", PROMPT),  # no stable start
    ("anthropic/claude-3-opus-20240229", "Another start.\n", PROMPT),  # a prefix the prompt does not begin with
])
def test_other_messages_are_sent_as_plain_text(model, prefix, prompt):
    messages = [{"role": "user", "content": prompt}]
    assert split_prefix(messages, prefix, model) == messages
