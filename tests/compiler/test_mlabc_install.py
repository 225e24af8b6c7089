"""A non-editable install works from any directory, with the tasks, grammar and spec it bundles.

A wheel is built from a copy of the source tree (so the checkout gets no build/ or egg-info) and
installed into a fresh venv that sees the system's site-packages for the dependencies only.
`mlabc check` and `mlabc compile` then run from an unrelated directory and must read the
bundled tasks from inside the venv, never from the source tree.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mlabc_cases import REPO_ROOT

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


def _package_folders() -> list[str]:
    """Every code package of the checkout, as its folder in an installed wheel (mlabc/..., mlab/...)."""
    names = {"compiler": "mlabc", "runtime": "mlab"}
    found = []
    for folder, top in names.items():
        for init in (REPO_ROOT / folder).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.append("/".join((top, *init.parent.relative_to(REPO_ROOT / folder).parts)))
    return sorted(found)


def _missing_packages(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name.rsplit("/", 1)[0] for name in archive.namelist() if name.endswith("/__init__.py")}
    return [folder for folder in _package_folders() if folder not in packaged]


@pytest.mark.skipif(not _can_build_wheels_offline(),
                    reason="building a wheel offline needs the `wheel` package or setuptools >= 70.1")
def test_installed_wheel_uses_its_bundled_files(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT, source, ignore=NOT_PACKAGED, symlinks=True)
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q",
         "-w", wheels, source], cwd=tmp_path)
    [wheel] = wheels.glob("mlab_harness-*.whl")
    assert _missing_packages(wheel) == [], "package folders missing from the wheel (see setup.py)"

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
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
