"""An external agent's environment: a virtual environment with its requirements, made once.

It lives in the cache (agents/<digest>/), keyed by the digest of the requirements and the base
interpreter's version, never in the workspace, and is made with the run's interpreter (the one
the scripts use), so the agent runs on the same Python with none of mlab's packages, or with the
Python its requires names (`python "3.12"`, found by mlab.run.agent_python). A half-made
environment is never used: it is built in a temporary folder and renamed when complete.

pip installs through a wheelhouse beside the environments (agents/wheels/): `pip wheel` puts every
wheel an install needs there, and the install takes them from it, so an environment made again (the
cache cleared, another agent sharing packages) installs without the index, in seconds.

npm packages (`requires [npm "@openai/codex@0.171.0"]`) go into node/ of the same folder, installed
with the host's node and npm (found by mlab.run.node.find_node: $MLAB_NODE, else `node` on PATH), the digest then
also covering the packages and node's major version. What the registry sent is recorded in the
ready marker and in environment.json beside it: each package's version, resolved address and
integrity hash (npm's lock), and node's version.
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
from mlab.run.node import Node, find_node

READY = ".mlab-ready"
MANIFEST = "environment.json"   # what the environment holds: python, pip's packages, npm's with their hashes
NODE_DIR = "node"               # the npm prefix under the environment (node_modules/, its .bin/)
WHEELS = "wheels"               # beside the environments: every wheel their installs took (a wheelhouse)
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


def environment_key(requires: list[str], version: str, no_deps: list[str] = (), npm: list[str] = (),
                    node_major: int | None = None) -> str:
    """The digest that names the environment: the requirements (as declared, in order), the Python, and
    the npm packages with node's major version (a native module is built for one)."""
    text = json.dumps({"requires": list(requires), "python": version, **({"no_deps": list(no_deps)} if no_deps
                                                                         else {}),
                       **({"npm": list(npm), "node": node_major} if npm else {})}, sort_keys=True)
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
                        cache: Path | None = None, no_deps: list[str] = (), npm: list[str] = (),
                        node: Node | None = None) -> Path:
    """The folder of the agent's environment, made first when the cache has none for these requirements
    (`no_deps`: installed after them, without their own dependencies; `npm`: packages installed with
    `node`, found here when not given)."""
    version = python_version(base_python)
    if npm and node is None:
        node = find_node(list(npm), agent_name)
    key = environment_key(requires, version, no_deps, npm, node.major if node else None)
    root = Path(cache) if cache is not None else agents_cache()
    folder = root / key[:20]
    if (folder / READY).is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{key[:20]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run making the same environment: wait for it
        if (folder / READY).is_file():
            return folder
        count = len(requires) + len(no_deps) + len(npm)
        what = f"{count} requirement{'s' if count != 1 else ''}" if count else "no requirements"
        say(f"preparing the environment of agent {agent_name} ({what}) in {folder} ...")
        temp = root / f"{key[:20]}.partial"
        shutil.rmtree(temp, ignore_errors=True)
        try:
            _make(temp, requires, base_python, list(no_deps), root / WHEELS)
            packages = _install_npm(temp / NODE_DIR, list(npm), node) if npm else {}
            shutil.rmtree(folder, ignore_errors=True)
            # the venv's scripts name its folder in their first line: make it at its final path
            os.replace(temp, folder)
            _fix_paths(folder, temp)
            manifest = {"requires": requires, "no_deps": list(no_deps), "python": version,
                        **({"npm": list(npm), "node": node.to_json(), "npm_packages": packages} if npm else {})}
            (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            (folder / READY).write_text(json.dumps(manifest, sort_keys=True) + "\n")
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
    say(f"the environment of agent {agent_name} is ready")
    return folder


def _make(folder: Path, requires: list[str], base_python: str, no_deps: list[str], wheels: Path) -> None:
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
        if items:
            _install(pip, items, flags, env, wheels)
    if requires or no_deps:
        _compile(folder, env)


def _compile(folder: Path, env: dict) -> None:
    """Byte-compile what pip installed (with --no-compile), on every core at once: pip compiles file by
    file, which took most of OpenHands' install (56 s to unpack its 773 MB, 127 s to compile them here
    on two cores, against 347 s for pip doing both). The environment is read-only in the sandbox, so a
    module left uncompiled would be compiled again at every start. A file that does not compile (a
    test written for another Python) is left as pip leaves it."""
    for packages in sorted((folder / "lib").glob("python*/site-packages")):
        try:
            subprocess.run([str(environment_python(folder)), "-m", "compileall", "-q", "-j", "0", str(packages)],
                           capture_output=True, timeout=INSTALL_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            pass


def _pip(args: list[str], items: list[str], env: dict) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired as late:
        output = _text(late.stdout) + _text(late.stderr)
        raise AgentEnvironmentError(f"installing {', '.join(items)} took longer than {INSTALL_TIMEOUT_S:g} s",
                                    output) from None


def _install(pip: list[str], items: list[str], flags: list[str], env: dict, wheels: Path) -> None:
    """pip install of `items` through the wheelhouse: first from it alone (no index: an environment made
    again, for another agent or after the cache lost it, installs offline in seconds), else pip wheel
    fetches (and builds) every wheel they need into it and they are installed from there."""
    offline = [*pip, "install", "--no-compile", "--no-index", "--find-links", str(wheels), *flags, *items]
    wheels.mkdir(parents=True, exist_ok=True)
    with open(wheels.parent / f"{wheels.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)   # no wheel half written by another install is read
        if any(wheels.iterdir()) and _pip(offline, items, env).returncode == 0:
            return
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = _pip([*pip, "wheel", "--wheel-dir", str(wheels), *flags, *items], items, env)
        if done.returncode != 0:
            output = done.stdout + "\n" + done.stderr
            raise AgentEnvironmentError(install_failure(items, output), output)
        fcntl.flock(lock, fcntl.LOCK_SH)
        done = _pip(offline, items, env)
    if done.returncode != 0:
        output = done.stdout + "\n" + done.stderr
        raise AgentEnvironmentError(install_failure(items, output), output)


def node_bin(folder: Path) -> Path:
    """The folder of the npm packages' commands in an environment (on the agent's PATH)."""
    return folder / NODE_DIR / "node_modules" / ".bin"


def environment_manifest(folder: Path) -> dict:
    """What a made environment holds (environment.json; {} for one made before it was written)."""
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _install_npm(prefix: Path, packages: list[str], node: Node) -> dict:
    """npm install of the exact packages into `prefix`; their versions, addresses and integrity hashes."""
    prefix.mkdir(parents=True)
    # a package.json of its own, so npm installs here and never climbs to a parent folder's
    (prefix / "package.json").write_text(json.dumps({"name": "mlab-agent", "private": True}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
    env.update({"PATH": os.path.dirname(node.path) + os.pathsep + env.get("PATH", ""),
                "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"})
    args = [node.npm, "install", "--prefix", str(prefix), "--save-exact", "--no-audit", "--no-fund",
            "--omit=dev", "--loglevel=error", *packages]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=env,
                              cwd=str(prefix))
    except subprocess.TimeoutExpired as late:
        output = _text(late.stdout) + _text(late.stderr)
        raise AgentEnvironmentError(f"installing {', '.join(packages)} with npm took longer than "
                                    f"{INSTALL_TIMEOUT_S:g} s", output) from None
    except OSError as problem:
        raise AgentEnvironmentError(f"cannot run npm ({node.npm}): {problem}") from None
    if done.returncode != 0:
        output = done.stdout + "\n" + done.stderr
        raise AgentEnvironmentError(npm_failure(packages, output), output)
    try:
        lock = json.loads((prefix / "package-lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        lock = {}
    recorded = {}
    for where, entry in sorted((lock.get("packages") or {}).items()):
        if not where or not isinstance(entry, dict) or not entry.get("version"):
            continue
        name = entry.get("name") or where.rsplit("node_modules/", 1)[-1]
        recorded[where.removeprefix("node_modules/")] = {
            "name": name, "version": entry["version"], "resolved": entry.get("resolved"),
            "integrity": entry.get("integrity")}
    for package in packages:
        name = package.rsplit("@", 1)[0]
        if name not in recorded:
            raise AgentEnvironmentError(f"npm package {package!r} is not in what npm installed "
                                        "(package-lock.json)", done.stdout + done.stderr)
    return recorded


def npm_failure(packages: list[str], output: str) -> str:
    """One message naming the npm package that did not install, from npm's output."""
    if re.search(r"\bE404\b|\bETARGET\b|notarget|No matching version", output):
        named = next((p for p in packages if p in output or p.rsplit("@", 1)[0] in output), None)
        if named:
            return f"npm package {named!r} could not be installed: the registry has no such package or version"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("npm error") or line.startswith("npm ERR!")] or lines[-3:]
    return f"the npm packages {', '.join(packages)} could not be installed: {' | '.join(errors)[-600:]}"


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
    errors = [line for line in lines if line.lower().startswith("error") or re.match(r"\w+(Error|Exception): ", line)] \
        or lines[-3:]  # pip's own errors, and the exception that ends a traceback of pip's
    named = next((r for r in requires if any(_name(r) in line.lower() for line in errors)), None)
    if named is None:  # pip's error lines name none (a traceback ends its output): the last line that names one
        named = next((r for line in reversed(lines) for r in requires if _name(r) in line.lower()), None)
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
