"""What the end of every test run names about the code's size (tests/conftest.py): a prompt, never a failure."""
from __future__ import annotations

import ast
from pathlib import Path


def long_functions(root: Path) -> list[str]:
    """The functions of the two packages longer than 60 lines, from `def` to their last line: a
    function that long does several jobs, which read better as named steps."""
    return [f"{path.relative_to(root)}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
            for folder in ("runtime/mlab", "compiler/mlabc") for path in sorted((root / folder).rglob("*.py"))
            if "__pycache__" not in path.parts
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60]
