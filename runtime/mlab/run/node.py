"""The host's Node.js, found for an external agent with npm packages: $MLAB_NODE, else `node` on
PATH, with the npm beside it. run.json records it (its path and version) and the agent's environment
is keyed by its major version; a run whose agent needs node on a machine without it is refused
before anything is made, with what to install."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess

from mlab.errors import MlabError

MIN_NODE = (18, 0)              # the oldest node the standard agents' packages install and run on


class NodeMissing(MlabError):
    """The agent has npm packages and no usable node/npm is on this machine."""


@dataclasses.dataclass(frozen=True)
class Node:
    """The host's node and npm, as an agent with npm packages uses them."""

    path: str
    version: str          # as `node --version` prints it: v20.20.2
    npm: str              # npm's path
    npm_version: str

    @property
    def major(self) -> int:
        return int(self.version.lstrip("v").split(".")[0])

    def to_json(self) -> dict:
        return {"path": self.path, "version": self.version, "npm_version": self.npm_version}


def _install_hint(packages: list[str]) -> str:
    return (f"install Node.js {MIN_NODE[0]} or newer with npm (e.g. `apt-get install nodejs npm`, or from "
            f"nodejs.org), or set MLAB_NODE to the node binary; it installs {', '.join(packages)}")


def find_node(packages: list[str], agent: str = "") -> Node:
    """The node (and the npm beside it) that installs and runs `packages`; NodeMissing with what to
    install when there is none, or it is too old, or npm is not beside it."""
    who = f"agent {agent}" if agent else "this agent"
    named = os.environ.get("MLAB_NODE", "").strip()
    path = named or shutil.which("node")
    if not path or not os.access(path, os.X_OK):
        where = f"MLAB_NODE ({named}) is not an executable" if named else "no `node` on PATH"
        raise NodeMissing(f"{who} needs Node.js for its npm packages, and {where}: {_install_hint(packages)}")
    path = os.path.realpath(path)
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        version = done.stdout.strip()
        major, minor = (int(part) for part in version.lstrip("v").split(".")[:2])
    except (OSError, subprocess.SubprocessError, ValueError):
        raise NodeMissing(f"{who} needs Node.js for its npm packages, and {path} does not run as node: "
                          f"{_install_hint(packages)}") from None
    if (major, minor) < MIN_NODE:
        raise NodeMissing(f"{who} needs Node.js {MIN_NODE[0]} or newer for its npm packages; {path} is {version}: "
                          f"{_install_hint(packages)}")
    npm = os.path.join(os.path.dirname(path), "npm")
    if not os.access(npm, os.X_OK):
        npm = shutil.which("npm") or ""
    if not npm:
        raise NodeMissing(f"{who} needs npm beside node ({path}) to install its npm packages: "
                          f"{_install_hint(packages)}")
    try:
        done = subprocess.run([npm, "--version"], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PATH=os.path.dirname(path) + os.pathsep + os.environ.get("PATH", "")))
        npm_version = done.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        raise NodeMissing(f"{who} needs npm to install its npm packages, and {npm} does not run: "
                          f"{_install_hint(packages)}") from None
    return Node(path, version, npm, npm_version)


def agent_node(agent) -> Node | None:
    """The node an external agent (an AgentBuild) with npm packages runs on, else None; NodeMissing
    for an agent that needs node on a machine without it, so its run is refused before anything is made."""
    npm = agent.view.external.npm if agent.view.external else ()
    return find_node(list(npm), agent.name) if npm else None
