"""The host's Python that an external agent's environment is made with, when its `requires` names one
(`python "3.12"`): found on PATH (`python3.12`, then `python3` and `python` of that version) and among
the versions of pyenv and uv; run.json records it beside node. A run whose agent names a Python the
machine lacks is refused before anything is made, with what to install. An agent that names none is
made with the run's interpreter, as before."""
from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shutil
import subprocess

from mlab.errors import MlabError

WANTED = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")   # X.Y (any patch release) or X.Y.Z (that one)
_PROBE = ("import json, sys, venv; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], "
          "'executable': sys.executable, 'implementation': sys.implementation.name}))")


class PythonMissing(MlabError):
    """The agent names a Python this machine does not have."""


@dataclasses.dataclass(frozen=True)
class AgentPython:
    """An interpreter of the version an agent asks for."""

    path: str             # the interpreter itself (a real path: never a pyenv shim)
    version: str          # 3.12.1
    wanted: str           # as the agent's requires names it: 3.12

    def to_json(self) -> dict:
        return {"path": self.path, "version": self.version, "wanted": self.wanted}


def matches(version: str, wanted: str) -> bool:
    """Whether a Python of `version` (X.Y.Z) is one `wanted` (X.Y or X.Y.Z) names."""
    if wanted.count(".") == 1:
        return version.startswith(wanted + ".")
    return version == wanted


def _probe(candidate: str) -> tuple[str, str] | None:
    """(version, real executable) of a CPython that has venv, or None for anything else (a shim that
    names no active version, a broken link, another implementation)."""
    try:
        done = subprocess.run([candidate, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        facts = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(facts, dict) or facts.get("implementation") != "cpython" or not facts.get("executable"):
        return None
    return facts["version"], os.path.realpath(facts["executable"])


def _pyenv_root() -> str | None:
    root = os.environ.get("PYENV_ROOT", "").strip()
    if not root and shutil.which("pyenv"):
        try:
            root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            root = ""
    root = root or os.path.expanduser("~/.pyenv")
    return root if os.path.isdir(root) else None


def _uv_root() -> str | None:
    root = os.environ.get("UV_PYTHON_INSTALL_DIR", "").strip() or os.path.join(
        os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share"), "uv", "python")
    return root if os.path.isdir(root) else None


def _newest_first(paths: list[str]) -> list[str]:
    def key(path: str):
        found = re.search(r"(\d+)\.(\d+)\.(\d+)", path)
        return tuple(int(n) for n in found.groups()) if found else (0, 0, 0)

    return sorted(paths, key=key, reverse=True)


def candidates(wanted: str) -> list[str]:
    """Where an interpreter of `wanted` may be, in the order they are tried."""
    major, minor = WANTED.match(wanted).groups()[:2]
    short = f"python{major}.{minor}"
    found: list[str] = []
    folders = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    for name in (short, f"python{major}", "python"):
        found += [os.path.join(d, name) for d in folders]
    pyenv = _pyenv_root()
    if pyenv:  # pyenv's versions, whether or not its shims select them
        found += _newest_first(glob.glob(os.path.join(pyenv, "versions", f"{major}.{minor}.*", "bin", short)))
    uv = _uv_root()
    if uv:
        found += _newest_first(glob.glob(os.path.join(uv, f"cpython-{major}.{minor}.*", "bin", short)))
    seen, out = set(), []
    for path in found:  # each file once (/bin/python3 is /usr/bin/python3 where /bin links to /usr/bin)
        real = os.path.realpath(path)
        if real not in seen and os.path.isfile(path) and os.access(path, os.X_OK):
            seen.add(real)
            out.append(path)
    return out


def find_python(wanted: str, agent: str = "") -> AgentPython:
    """The interpreter an agent's environment is made with; PythonMissing naming what to install."""
    who = f"agent {agent}" if agent else "this agent"
    if not WANTED.match(wanted or ""):
        raise PythonMissing(f"{who} names the Python {wanted!r}, which is no version (X.Y or X.Y.Z)")
    tried = 0
    for candidate in candidates(wanted):
        tried += 1
        probed = _probe(candidate)
        if probed and matches(probed[0], wanted):
            return AgentPython(probed[1], probed[0], wanted)
    major_minor = ".".join(wanted.split(".")[:2])
    pyenv = _pyenv_root()
    where = f"python{major_minor} on PATH" + (f", pyenv's versions in {pyenv}/versions" if pyenv else "") \
        + (f", uv's in {_uv_root()}" if _uv_root() else "")
    raise PythonMissing(
        f"{who} installs into Python {wanted}, and this machine has none (searched {where}; {tried} "
        f"interpreter{'s' if tried != 1 else ''} tried): install Python {wanted} with its venv module "
        f"(e.g. `apt-get install python{major_minor} python{major_minor}-venv`, `pyenv install {wanted}` or "
        f"`uv python install {wanted}`) and put python{major_minor} on PATH")


def agent_python(agent) -> AgentPython | None:
    """The Python an external agent (an AgentBuild) names in its requires, else None (it is made with the
    run's interpreter); PythonMissing when the machine lacks it, so its run is refused before anything is made."""
    wanted = agent.view.external.python if agent.view.external else None
    return find_python(str(wanted), agent.name) if wanted else None
