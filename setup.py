"""The packages: compiler/mlabc and runtime/mlab are the code (each folder bears its package's name),
and the data folders grammars/, spec/ and tasks/, which stay at the top of the checkout, ship inside
the wheel as mlabc.grammars, mlabc.spec and mlabc.tasks (their files are listed as package-data in
pyproject.toml, which keeps the rest of the metadata; mlabc.resources finds them in either place).

pyproject.toml alone cannot say this: its package finder cannot add the data packages beside the
found ones, and a static list there silently drops a subpackage nobody added to it.
"""
from setuptools import find_packages, setup

ROOTS = {"mlabc": "compiler/mlabc", "mlab": "runtime/mlab"}
DATA = {"mlabc.grammars": "grammars", "mlabc.spec": "spec", "mlabc.tasks": "tasks"}

code = [name for folder in ("compiler", "runtime") for name in find_packages(folder, include=["mlab", "mlab.*", "mlabc", "mlabc.*"])]
setup(packages=sorted([*code, *DATA]), package_dir={**ROOTS, **DATA})
