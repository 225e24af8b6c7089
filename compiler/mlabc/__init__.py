"""mlabc: the compiler of the .mlab language (parse → check → lower → emit)."""
from __future__ import annotations

__version__ = "0.1.0"
