"""`mlab audit` reads the prompt as each agent kind sends it: a tool agent's problem arrives in
its first user message, not in the system prompt, and a correct task passes for it; `--agent`
chooses the agent, and an agent whose first messages omit the submission is a finding."""
from __future__ import annotations

import pytest

from mlab.audit.checks import first_messages, prompt_findings
from mlab.build import resolve_task

MUTE = '''use std "agents"

agent mute-tools extends research-tools {
  prompts {
    problem """
      Improve the model in the workspace.
      """
  }
}
'''


@pytest.fixture(scope="module")
def house(task_of):
    return task_of("house-price")


def test_a_tool_agent_is_audited_on_its_system_prompt_and_first_user_message(house):
    agent = house.build.agent("research-tools")
    text = first_messages(house, agent)
    system = text.split(house.view.problem)[0]
    assert "SalePrice" not in system, "the problem reaches a tool agent in another message than the system prompt"
    assert house.view.problem in text
    assert prompt_findings(house, "research-tools") == []
    assert prompt_findings(house, "research") == []


def test_an_agent_whose_first_messages_omit_the_submission_is_a_finding(tmp_path, suite_cache):
    import shutil

    from mlabc.resources import tasks_dir

    folder = tmp_path / "tasks"
    shutil.copytree(tasks_dir() / "house-price", folder / "house-price")
    shutil.copy(tasks_dir() / "house-price.mlab", folder / "house-price.mlab")
    (folder / "mute.mlab").write_text(MUTE)
    text = (folder / "house-price.mlab").read_text()
    (folder / "house-price.mlab").write_text(text.replace('use std "agents"', 'use "mute.mlab"', 1))
    task = resolve_task(str(folder / "house-price.mlab"))
    assert prompt_findings(task, "mute-tools") == [
        "the first messages of agent mute-tools do not mention 'Id', 'SalePrice'"]


def test_mlab_audit_refuses_an_unknown_agent_in_one_line(capsys, suite_cache):
    from mlab.cli import main

    assert main(["audit", "house-price", "--agent", "reserch-tools"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'reserch-tools' for --agent; agents:" in err and "research-tools" in err
    assert "Traceback" not in err
