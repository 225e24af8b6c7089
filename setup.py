"""The package list, computed: the folders compiler/ and runtime/ install as `mlabc` and `mlab`.

setuptools' automatic discovery cannot map a folder to a package of another name, and a static
list in pyproject.toml silently drops a subpackage nobody added to it. So every folder under
compiler/ or runtime/ that holds an `__init__.py` is a package here; the data folders grammars/,
spec/ and tasks/ install as mlabc.grammars, mlabc.spec and mlabc.tasks (their files are listed
as package-data in pyproject.toml, which keeps the rest of the metadata).
"""
from __future__ import annotations

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
CODE = {"compiler": "mlabc", "runtime": "mlab"}
DATA = {"grammars": "mlabc.grammars", "spec": "mlabc.spec", "tasks": "mlabc.tasks"}


def code_packages() -> dict[str, str]:
    """Package name → its folder (relative, as setuptools wants) for every code package."""
    found = {}
    for folder, top in CODE.items():
        for init in sorted((HERE / folder).rglob("__init__.py")):
            if "__pycache__" in init.parts:
                continue
            parts = init.parent.relative_to(HERE / folder).parts
            found[".".join((top, *parts))] = "/".join((folder, *parts))
    return found


packages = {**code_packages(), **{name: folder for folder, name in DATA.items()}}
setup(packages=sorted(packages), package_dir=packages)
