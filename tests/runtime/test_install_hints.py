"""Install hints name this project's distribution (PyPI's `mlab` is another project) and work
from a source checkout as well as from an installed package."""
from __future__ import annotations

import re
import tomllib

from mlab import errors
from mlab.errors import DISTRIBUTION, install_hint

from runtime_helpers import REPO

HINT = re.compile(r"pip install (?:-e )?'([^'\[]+)\[")


def test_the_distribution_is_the_one_pyproject_names():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION != "mlab"
    assert {"kaggle", "hf", "vision", "ogb", "ray"} <= set(project["optional-dependencies"])


def test_no_hint_in_the_runtime_or_the_docs_installs_pypis_mlab():
    files = [*(REPO / "runtime").rglob("*.py"), *(REPO / "docs").glob("*.md"), REPO / "README.md"]
    named = {(path.name, name) for path in files for name in HINT.findall(path.read_text(encoding="utf-8"))}
    assert not [hint for hint in named if hint[1] == "mlab"], named
    # Ray's own extra, a checkout (".") and install_hint's own templates are the others.
    assert all(name in {DISTRIBUTION, ".", "ray", "{DISTRIBUTION}", "{where}"} for _, name in named), named


def test_in_a_checkout_the_hint_reinstalls_the_checkout_with_the_extra(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert install_hint("ogb") == "pip install -e '.[ogb]'"
    monkeypatch.chdir(tmp_path)
    assert install_hint("ogb") == f"pip install -e '{REPO.resolve()}[ogb]'"


def test_an_installed_package_names_the_distribution(monkeypatch, tmp_path):
    installed = tmp_path / "site-packages" / "mlab"
    installed.mkdir(parents=True)
    monkeypatch.setattr(errors, "__file__", str(installed / "errors.py"))
    assert install_hint("kaggle") == f"pip install '{DISTRIBUTION}[kaggle]'"


def test_a_missing_loader_names_its_extra():
    from mlab.data.loaders import hf, kaggle, ogb, vision

    for module, extra in ((hf, "hf"), (kaggle, "kaggle"), (ogb, "ogb"), (vision, "vision")):
        assert module.INSTALL_HINT == install_hint(extra)
