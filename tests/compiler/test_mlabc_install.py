"""A non-editable install works from any directory, with the tasks, grammar and spec it bundles.

A wheel is built from a copy of the source tree (so the checkout gets no build/ or egg-info) and
installed into a fresh venv that finds the dependencies in the test's own environment (a .pth
file names its site-packages, which works from inside a venv too, where --system-site-packages
would see the system's instead). `mlabc check` and `mlabc compile` then run from an unrelated
directory and must read the bundled tasks from inside the venv, never from the source tree; and
inside the copy of the checkout, `mlab list` and `mlabc check tasks` compile its tasks/ without
clashing with the installed copy.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mlabc_cases import REPO_ROOT
from needs import needs

NOT_PACKAGED = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "dist", ".hypothesis",
                                      ".pytest_cache", ".venv", "runs", "tests", ".notes")


def _can_build_wheels_offline() -> bool:
    """bdist_wheel comes from the `wheel` package, or from setuptools itself since 70.1."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)


def run(argv: list, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done


def _see_these_site_packages(python: Path) -> None:
    """Let a venv import the packages of the interpreter running the tests (pip, the
    dependencies), after its own: a .pth line adds a folder to sys.path without processing the
    .pth files in it, so an editable install of this checkout there stays invisible."""
    own = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=python.parent).stdout
    # sys.path's site folders, not site.getsitepackages(): a venv made with --system-site-packages
    # finds its packages in the system's folders too.
    folders = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (Path(own.strip()) / "outer-environment.pth").write_text("\n".join(folders) + "\n", encoding="utf-8")


def _package_folders() -> list[str]:
    """Every code package of the checkout, as its folder in an installed wheel (mlabc/..., mlab/...)."""
    found = []
    for root in (REPO_ROOT / "compiler", REPO_ROOT / "runtime"):
        for init in root.rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.append("/".join(init.parent.relative_to(root).parts))
    return sorted(found)


def _missing_packages(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name.rsplit("/", 1)[0] for name in archive.namelist() if name.endswith("/__init__.py")}
    return [folder for folder in _package_folders() if folder not in packaged]


@needs(None if _can_build_wheels_offline() else
       "building a wheel offline needs the `wheel` package (a test extra) or setuptools >= 70.1")
def test_installed_wheel_uses_its_bundled_files(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT, source, ignore=NOT_PACKAGED, symlinks=True)
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q",
         "-w", wheels, source], cwd=tmp_path)
    [wheel] = wheels.glob("mlab_harness-*.whl")
    assert _missing_packages(wheel) == [], "package folders missing from the wheel (see setup.py)"

    with zipfile.ZipFile(wheel) as archive:
        debris = [n for n in archive.namelist() if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    assert debris == [], "byte-code packaged in the wheel"

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    _see_these_site_packages(python)
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = run([python, "-c", "import mlabc; print(mlabc.__file__)"], cwd=elsewhere).stdout.strip()
    assert Path(where).is_relative_to(venv), f"mlabc was imported from {where}, not from the install"

    mlabc = venv / "bin" / "mlabc"
    bundled = sorted(p.relative_to(REPO_ROOT / "tasks") for p in (REPO_ROOT / "tasks").rglob("*.mlab"))
    checked = run([mlabc, "check"], cwd=elsewhere).stdout
    assert checked.startswith(f"ok: {len(bundled)} files, ")

    run([mlabc, "compile", "-o", "out"], cwd=elsewhere)
    manifest = json.loads((elsewhere / "out" / "manifest.json").read_text(encoding="utf-8"))
    installed_tasks = Path(where).parent / "tasks"
    sources = sorted(Path(p) for p in manifest["sources"])
    assert [p.relative_to(installed_tasks) for p in sources] == bundled
    for path in [Path(p) for p in manifest["inputs"]]:
        assert path.is_relative_to(installed_tasks), f"{path} is outside the installed package"
    assert "house-price" in manifest["tasks"] and "research" in manifest["agents"]

    # Inside a checkout (the copy): ./tasks and its std/ are a copy of the installed tasks.
    env = {**os.environ, "MLAB_CACHE": str(tmp_path / "cache")}
    listed = subprocess.run([venv / "bin" / "mlab", "list"], cwd=source, capture_output=True, text=True,
                            timeout=300, env=env)
    assert listed.returncode == 0 and "declared twice" not in listed.stdout + listed.stderr, listed.stderr
    assert listed.stdout.count("\n  house-price ") == 1
    checked = run([mlabc, "check", "tasks"], cwd=source).stdout
    assert checked.startswith(f"ok: {len(bundled)} files, ")

    # The installed copy knows where it came from: an install hint names the wheel with the
    # extra (runnable as printed), and its wheel for `mlab export-task` is packed from its
    # installed files into the same files the original wheel holds.
    code = ("import sys; from pathlib import Path; from mlab.installation import install_hint; "
            "from mlab.export.harbor import build_wheel; "
            "print(install_hint('inspect')); print(build_wheel(Path(sys.argv[1])))")
    hint, repacked = run([python, "-c", code, tmp_path / "repacked"], cwd=elsewhere).stdout.splitlines()
    assert hint == f"pip install '{wheel.resolve()}[inspect]'"
    assert Path(repacked).name == wheel.name
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(repacked) as again:
        assert sorted(again.namelist()) == sorted(original.namelist())
        differ = [n for n in original.namelist() if not n.endswith("/RECORD") and original.read(n) != again.read(n)]
        assert differ == []
