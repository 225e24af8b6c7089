"""Install hints are runnable as printed for the way mlab was installed: a source checkout, a copy
installed from a checkout folder or from a wheel, or (with no origin left) the extra's own
packages; never a distribution that is on no index (`mlab-harness` is not on PyPI, and PyPI's
`mlab` is another project)."""
from __future__ import annotations

import re
import tomllib

from mlab import installation
from mlab.installation import DISTRIBUTION, install_hint

from runtime_helpers import REPO

HINT = re.compile(r"pip install (?:-e )?'([^'\[]+)\[")


def test_the_distribution_is_the_one_pyproject_names():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION != "mlab"
    assert {"kaggle", "hf", "vision", "ogb", "ray"} <= set(project["optional-dependencies"])


def test_no_hint_in_the_runtime_or_the_docs_installs_a_distribution_from_an_index():
    files = [*(REPO / "runtime" / "mlab").rglob("*.py"), *(REPO / "docs").glob("*.md"), REPO / "README.md"]
    named = {(path.name, name) for path in files for name in HINT.findall(path.read_text(encoding="utf-8"))}
    assert not [hint for hint in named if hint[1] in ("mlab", DISTRIBUTION)], named
    # Ray's own extra, a checkout (".") or a path to one, a wheel, and install_hint's own templates.
    allowed = {".", "ray", "{where}", "/path/to/checkout", "mlab_harness-0.1.0-py3-none-any.whl"}
    assert all(name in allowed for _, name in named), named


def test_in_a_checkout_the_hint_reinstalls_the_checkout_with_the_extra(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert install_hint("ogb") == "pip install -e '.[ogb]'"
    monkeypatch.chdir(tmp_path)
    assert install_hint("ogb") == f"pip install -e '{REPO.resolve()}[ogb]'"


def installed_copy(tmp_path, monkeypatch, origin: dict | None):
    """A fake installed mlab: site-packages/mlab/installation.py (where mlab.installation says it lives) and
    the distribution's metadata, with pip's record of where it was installed from."""
    from importlib import metadata

    site = tmp_path / "site-packages"
    (site / "mlab").mkdir(parents=True)
    (site / "mlab" / "installation.py").write_text("")
    info = site / f"{DISTRIBUTION.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: 0.1.0\n"
                                   'Requires-Dist: kaggle>=1.6; extra == "kaggle"\n'
                                   'Requires-Dist: torch==2.13.0; extra == "ogb"\n'
                                   'Requires-Dist: ogb>=1.3.6; extra == "ogb"\n')
    if origin is not None:
        (info / "direct_url.json").write_text(__import__("json").dumps(origin))
    monkeypatch.setattr(installation, "__file__", str(site / "mlab" / "installation.py"))
    monkeypatch.setattr(metadata, "distribution", lambda name: metadata.PathDistribution(info))
    monkeypatch.chdir(tmp_path)


def test_a_copy_installed_from_a_checkout_folder_names_that_folder(monkeypatch, tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text("")
    installed_copy(tmp_path, monkeypatch, {"url": checkout.as_uri(), "dir_info": {}})
    assert install_hint("kaggle") == f"pip install '{checkout}[kaggle]'"
    monkeypatch.chdir(checkout)
    assert install_hint("kaggle") == "pip install '.[kaggle]'"


def test_a_copy_installed_from_a_wheel_names_the_wheel(monkeypatch, tmp_path):
    wheel = tmp_path / "mlab_harness-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    installed_copy(tmp_path, monkeypatch, {"url": wheel.as_uri(), "archive_info": {}})
    assert install_hint("kaggle") == f"pip install '{wheel}[kaggle]'"


def test_without_an_origin_the_extras_packages_are_named(monkeypatch, tmp_path):
    gone = tmp_path / "gone"  # the checkout it was installed from was deleted since
    installed_copy(tmp_path, monkeypatch, {"url": gone.as_uri(), "dir_info": {}})
    assert install_hint("ogb") == "pip install 'torch==2.13.0' 'ogb>=1.3.6'"
    assert DISTRIBUTION not in install_hint("kaggle") and install_hint("kaggle") == "pip install 'kaggle>=1.6'"


def test_a_missing_loader_names_its_extra():
    from mlab.data.loaders import hf, kaggle, ogb, vision

    for module, extra in ((hf, "hf"), (kaggle, "kaggle"), (ogb, "ogb"), (vision, "vision")):
        assert module.INSTALL_HINT == install_hint(extra)
