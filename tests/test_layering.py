"""The layer checker itself (tests/layering.py): a clean little tree passes, and each kind of
violation planted into it fails, named on the line that makes it."""
from __future__ import annotations

import pytest

from layering import Layers, Tree, imports, violations

RANKS = [("kernel",), ("a", "b"), ("top",)]

CLEAN = {
    "__init__.py": "",
    "low.py": "import os\n",
    "low2.py": "from pkg import low\n",
    "a/__init__.py": 'from pkg.low import os\n_NAMES = {"thing": "impl"}\n',
    "a/impl.py": "from pkg.low2 import low\nthing = 1\n",
    "a/other.py": "",
    "b/__init__.py": 'from .impl import stuff\n',
    "b/impl.py": "from pkg.a import thing\nstuff = 2\n",
    "b/other.py": "",
    "top/__init__.py": '_NAMES = {"widget": "impl"}\n',
    "top/impl.py": "import importlib\nfrom pkg.b import stuff\nwidget = importlib.import_module('pkg.a.other')\n",
}

# kind → (files changed in the clean tree, a line the check must report)
PLANTED = {
    "direct upward": ({"low.py": "from pkg.top.impl import widget\n"},
                      "pkg.low (kernel) imports pkg.top.impl (top), line 1"),
    "upward through a lazy re-export": ({"__init__.py": '_NAMES = {"widget": "top.impl"}\n',
                                         "low.py": "from pkg import widget\n"},
                                        "pkg.low (kernel) imports pkg.top.impl (top), line 1 (re-export)"),
    "same rank both ways": ({"a/other.py": "import pkg.b.other\n"}, "a and b import each other"),
    "string import": ({"low2.py": "import importlib\nimportlib.import_module('pkg.top.impl')\n"},
                      "pkg.low2 (kernel) imports pkg.top.impl (top), line 2 (string)"),
    "string import through a table": ({"low2.py": 'import importlib\nKINDS = {"w": "top.impl"}\n'
                                       'def load(k):\n    return importlib.import_module(f"pkg.{KINDS[k]}")\n'},
                                      "pkg.low2 (kernel) imports pkg.top.impl (top), line 4 (string)"),
    "string import nobody can read": ({"low2.py": "import importlib\ndef load(k):\n    return importlib.import_module(k)\n"},
                                      "pkg.low2:3 imports k, which names no module this check can see"),
    "cycle": ({"low.py": "from pkg.low2 import low\n"}, "pkg.low → pkg.low2 → pkg.low"),
    "cycle through re-exports": ({"a/impl.py": "from pkg.b import stuff\nthing = 1\n"},
                                 "pkg.a.impl → pkg.b.impl → pkg.a.impl"),
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or parts[1:] and parts[1] in ("a", "b", "top") else "kernel"


def tree(tmp_path, changes: dict[str, str] = {}) -> Tree:
    for name, text in {**CLEAN, **changes}.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Tree("pkg", tmp_path / "pkg")


def test_the_clean_tree_passes(tmp_path):
    assert violations(tree(tmp_path), Layers(RANKS, layer_of)) == []


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_planted_violation_fails_the_check(tmp_path, kind):
    changes, expected = PLANTED[kind]
    found = violations(tree(tmp_path, changes), Layers(RANKS, layer_of))
    assert any(expected in line for line in found), found


def test_a_re_exported_name_resolves_to_its_defining_module(tmp_path):
    planted = tree(tmp_path)
    resolved = {(i.target, i.how) for i in imports(planted, "pkg.top.impl")}
    assert ("pkg.b.impl", "re-export") in resolved and ("pkg.a.other", "string") in resolved
    assert ("pkg.a.impl", "re-export") in {(i.target, i.how) for i in imports(planted, "pkg.b.impl")}
