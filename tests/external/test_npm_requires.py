"""npm packages in an external agent's `requires`: installed once with the host's node into the agent
cache (keyed by the exact versions, npm's integrity hashes recorded), bound read-only into the
sandbox, node's version in run.json, and a clear refusal naming what to install when node is
missing. The package is `is-number@7.0.0` (one file, no dependencies) from the npm registry.
Under CI=true a missing node, npm or registry fails these tests instead of skipping them."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, result, scripted, trace
from mlab.sandbox.runner import sandbox_available
from needs import needs

PACKAGE = "is-number@7.0.0"
AGENT = '''
agent npm-user external {
  dialect  chat
  requires [npm "is-number@7.0.0"]
  command  """
    node -e "console.log('is-number says', require('is-number')(5))" --  2>&1
    node -e "console.log('node', process.version, 'base', process.argv[1])" -- "{{ base_url }}"
    touch "$(dirname "$(node -p "require.resolve('is-number')")")/planted" 2>/dev/null && echo "planted" || echo "read-only"
    """
}
'''


def need(condition: bool, reason: str) -> None:
    """Skip without the tool, or fail under CI=true, where it must be there (.ci/run installs it)."""
    if not condition:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: .ci/run must provide it)")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def npm_env(agent_envs):
    """The environment with the package, made once for the module (the registry must answer)."""
    import sys

    from mlab.external.environment import AgentEnvironmentError, prepare_environment
    from mlab.run.node import find_node

    need(shutil.which("node") is not None and shutil.which("npm") is not None, "node and npm are not installed")
    try:
        return prepare_environment("npm-user", [], sys.executable, say=lambda line: None, npm=[PACKAGE],
                                   node=find_node([PACKAGE]), cache=agent_envs)
    except AgentEnvironmentError as problem:
        need(False, f"the npm registry cannot be reached: {problem}")


def test_the_install_records_versions_and_integrity_hashes(npm_env):
    from mlab.external.environment import environment_manifest, node_bin

    manifest = environment_manifest(npm_env)
    assert manifest["npm"] == [PACKAGE]
    assert manifest["node"]["version"].startswith("v") and manifest["node"]["npm_version"]
    entry = manifest["npm_packages"]["is-number"]
    assert entry["version"] == "7.0.0" and entry["integrity"].startswith("sha512-")
    assert (npm_env / "node" / "node_modules" / "is-number" / "index.js").is_file()
    assert node_bin(npm_env).parent == npm_env / "node" / "node_modules"


def test_the_cache_is_keyed_by_the_exact_versions(npm_env, agent_envs):
    """A second prepare finds the made environment without npm (here: an npm that cannot run); another
    version, or another node major, is another environment."""
    import sys

    from mlab.external.environment import environment_key, prepare_environment, python_version
    from mlab.run.node import Node, find_node

    node = find_node([PACKAGE])
    broken = Node(node.path, node.version, "/nonexistent/npm", node.npm_version)
    again = prepare_environment("npm-user", [], sys.executable, say=lambda line: None, npm=[PACKAGE], node=broken,
                                cache=agent_envs)
    assert again == npm_env
    version = python_version(sys.executable)
    keys = {environment_key([], version, (), [PACKAGE], node.major),
            environment_key([], version, (), ["is-number@7.0.1"], node.major),
            environment_key([], version, (), [PACKAGE], node.major + 1),
            environment_key([], version)}
    assert len(keys) == 4


def test_a_failed_npm_install_names_the_package(agent_envs, tmp_path):
    import sys

    from mlab.external.environment import AgentEnvironmentError, prepare_environment
    from mlab.run.node import find_node

    need(shutil.which("node") is not None and shutil.which("npm") is not None, "node and npm are not installed")
    with pytest.raises(AgentEnvironmentError) as raised:
        prepare_environment("absent", [], sys.executable, say=lambda line: None,
                            npm=["mlab-never-published-package@1.0.0"], node=find_node(["x@1.0.0"]),
                            cache=tmp_path / "envs")
    assert "'mlab-never-published-package@1.0.0' could not be installed" in str(raised.value)
    assert not any((tmp_path / "envs").glob("*/.mlab-ready")), "nothing half made is kept"


def test_a_missing_node_names_what_to_install(tmp_path, tiny_task, monkeypatch):
    from test_external_runs import build_with

    build = build_with(tmp_path, tiny_task, AGENT)
    monkeypatch.setenv("MLAB_NODE", str(tmp_path / "no-node-here"))
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "npm-user", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    assert code != 0 and "Traceback" not in err
    assert "agent npm-user needs Node.js" in err and "install Node.js 18 or newer" in err and PACKAGE in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "no run was made"


@needs(None if sandbox_available()[0] else "bubblewrap cannot start a sandbox here")
def test_an_agent_runs_its_npm_package_in_the_sandbox(tmp_path, tiny_task, npm_env):
    from test_external_runs import build_with

    build = build_with(tmp_path, tiny_task, AGENT)
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "npm-user", "--model",
                          scripted(tmp_path, ["done"]), "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    meta = json.loads((run / "run.json").read_text())
    assert meta["schema_version"] == 7 and meta["node"]["version"].startswith("v")
    log = (run / "output" / "agent.log").read_text()
    assert "is-number says true" in log, log
    assert f"node {meta['node']['version']} base http://127.0.0.1:4141/v1" in log
    assert "read-only" in log and "planted" not in log.replace("read-only", ""), "the install is read-only inside"
    recorded = json.loads((run / "output" / "agent-environment.json").read_text())
    assert recorded["npm_packages"]["is-number"]["integrity"].startswith("sha512-")
    assert "preparing the environment" not in err, "the environment was made once, before this run"
    assert result(run)["end_reason"] == "agent_exited" and trace(run)[-1]["end_reason"] == "agent_exited"
