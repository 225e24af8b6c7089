"""An external agent's Python environment: a virtual environment with its requirements, made once.

It lives in the cache (agents/<digest>/), keyed by the digest of the requirements and the base
interpreter's version, never in the workspace, and is made with the run's interpreter (the one
the scripts use), so the agent runs on the same Python with none of mlab's packages. A half-made
environment is never used: it is built in a temporary folder and renamed when complete.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from mlab.errors import MlabError

READY = ".mlab-ready"
INSTALL_TIMEOUT_S = 1800.0
_NOT_FOUND = re.compile(r"(?:No matching distribution found for|Could not find a version that satisfies the "
                        r"requirement) (\S+)")
_CONFLICT = re.compile(r"(?:Cannot install|conflict is caused by:)\s*(.+)")


class AgentEnvironmentError(MlabError):
    """The agent's environment could not be made (a requirement did not install); `output` is what
    the installer printed, for the run's output/ folder."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


def python_version(python: str) -> str:
    done = subprocess.run([python, "-I", "-c", "import sys, platform; print(sys.version.split()[0], "
                           "platform.machine())"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AgentEnvironmentError(f"cannot run the interpreter {python}: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def environment_key(requires: list[str], version: str, no_deps: list[str] = ()) -> str:
    """The digest that names the environment: the requirements (as declared, in order) and the Python."""
    text = json.dumps({"requires": list(requires), "python": version, **({"no_deps": list(no_deps)} if no_deps
                                                                         else {})}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def agents_cache() -> Path:
    """$MLAB_AGENT_ENVS, else agents/ in the cache."""
    from mlab.cache import cache_root

    kept = os.environ.get("MLAB_AGENT_ENVS", "").strip()
    return Path(kept) if kept else cache_root() / "agents"


def environment_python(folder: Path) -> Path:
    return folder / "bin" / "python"


def prepare_environment(agent_name: str, requires: list[str], base_python: str,
                        say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
                        cache: Path | None = None, no_deps: list[str] = ()) -> Path:
    """The folder of the agent's environment, made first when the cache has none for these requirements
    (`no_deps`: installed after them, without their own dependencies)."""
    version = python_version(base_python)
    key = environment_key(requires, version, no_deps)
    root = Path(cache) if cache is not None else agents_cache()
    folder = root / key[:20]
    if (folder / READY).is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{key[:20]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run making the same environment: wait for it
        if (folder / READY).is_file():
            return folder
        count = len(requires) + len(no_deps)
        what = f"{count} requirement{'s' if count != 1 else ''}" if count else "no requirements"
        say(f"preparing the environment of agent {agent_name} ({what}) in {folder} ...")
        temp = root / f"{key[:20]}.partial"
        shutil.rmtree(temp, ignore_errors=True)
        try:
            _make(temp, requires, base_python, list(no_deps))
            shutil.rmtree(folder, ignore_errors=True)
            # the venv's scripts name its folder in their first line: make it at its final path
            os.replace(temp, folder)
            _fix_paths(folder, temp)
            (folder / READY).write_text(json.dumps({"requires": requires, "no_deps": list(no_deps),
                                                    "python": version}) + "\n")
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
    say(f"the environment of agent {agent_name} is ready")
    return folder


def _make(folder: Path, requires: list[str], base_python: str, no_deps: list[str]) -> None:
    # With pip beside mlab, the venv is made without its own copy (ensurepip takes seconds) and
    # mlab's pip installs into it (`pip --python`); otherwise the venv brings pip and installs itself.
    outside = _pip_takes_python()
    args = [base_python, "-m", "venv"] + ([] if (requires or no_deps) and not outside else ["--without-pip"])
    done = subprocess.run(args + [str(folder)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        raise AgentEnvironmentError(f"cannot make a virtual environment with {base_python}: "
                                    f"{output.strip()[-400:]}", output)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    pip = [sys.executable, "-m", "pip", "--python", str(environment_python(folder))] if outside \
        else [str(environment_python(folder)), "-m", "pip"]
    for items, flags in ((requires, []), (no_deps, ["--no-deps"])):
        if not items:
            continue
        try:
            done = subprocess.run([*pip, "install", *flags, *items], capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired as late:
            output = _text(late.stdout) + _text(late.stderr)
            raise AgentEnvironmentError(f"installing {', '.join(items)} took longer than {INSTALL_TIMEOUT_S:g} s",
                                        output) from None
        if done.returncode != 0:
            output = done.stdout + "\n" + done.stderr
            raise AgentEnvironmentError(install_failure(items, output), output)


def _pip_takes_python() -> bool:
    """Whether the pip beside mlab can install into another environment (`--python`, pip 22.3+)."""
    if importlib.util.find_spec("pip") is None:
        return False
    from importlib import metadata

    try:
        major, minor = (int(part) for part in metadata.version("pip").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (22, 3)


def _text(data) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def install_failure(requires: list[str], output: str) -> str:
    """One message naming the requirement that did not install, from pip's output."""
    found = _NOT_FOUND.search(output)
    if found:
        name = found.group(1)
        declared = next((r for r in requires if _name(r) == _name(name)), name)
        return f"requirement {declared!r} could not be installed: pip found no matching distribution"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error")] or lines[-3:]
    named = next((r for r in requires if any(_name(r) in line.lower() for line in errors)), None)
    where = f"requirement {named!r}" if named else f"the requirements {', '.join(requires)}"
    return f"{where} could not be installed: {' | '.join(errors)[-600:]}"


def _name(requirement: str) -> str:
    """The distribution name a requirement starts with (PEP 508), lower case."""
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return found.group(1).lower() if found else requirement.strip().lower()


def _fix_paths(folder: Path, temp: Path) -> None:
    """Point the scripts and pyvenv.cfg of a venv made in `temp` at `folder`."""
    old, new = str(temp), str(folder)
    for path in [folder / "pyvenv.cfg", *sorted((folder / "bin").iterdir())]:
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if old in text:
            path.write_text(text.replace(old, new), encoding="utf-8")
