"""Lazy re-exports: a subpackage names its public API in `__init__` without importing it.

A name is imported from its module on first use, so `import mlab.scoring` (or a module under it)
costs nothing more than the module asked for; heavy libraries stay with the commands that need them.
The function is the compiler's (`mlabc.api.lazy_exports`), so both packages load names one way.
"""
from __future__ import annotations

from mlabc.api import lazy_exports as exports

__all__ = ["exports"]
