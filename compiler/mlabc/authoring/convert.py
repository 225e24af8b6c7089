"""`mlabc convert`: a .mlab file ↔ its YAML form (`x.mlab` ↔ `x.mlab.yaml`), comments kept.

Both directions print from the AST and then read their own output back: the result
must give the same AST (positions and quoting aside) and hold the same comments, or
nothing is written.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from .. import ast as A
from ..comments import CommentMap, source_comments
from ..diagnostics import DiagnosticError
from .fmt import ast_shape
from ..program.loader import SUFFIX, YAML_SUFFIX
from .printer import Unprintable, print_module
from ..parser import parse_text
from ..yaml.build import YamlBuilder, tiered_models, yaml_order
from ..yaml.form import parse_yaml_text
from ..yaml.write import ConvertError, emit_document


def form_of(path: Path) -> str | None:
    if path.name.endswith(YAML_SUFFIX):
        return "yaml"
    if path.name.endswith(SUFFIX):
        return "mlab"
    return None


def default_output(path: Path, to: str) -> Path:
    """x.mlab → x.mlab.yaml and back, next to the source."""
    if to == "yaml":
        return path.with_name(path.name + ".yaml")
    name = path.name[: -len(".yaml")] if path.name.endswith(YAML_SUFFIX) else path.name
    return path.with_name(name if name.endswith(SUFFIX) else name + SUFFIX)


def _drops_first(entries) -> list:
    """An action set's entries as its YAML form holds them: `drop` before the actions."""
    return sorted(entries, key=lambda e: not isinstance(e, A.DropAction))


def _sorted_like_yaml(module: A.Module) -> A.Module:
    """The module with its entries in the order the YAML form writes them (for comparison)."""
    def block(node):
        if isinstance(node, (A.Decl, A.Data, A.Action, A.ExpOverride)):
            entries = tuple(block(e) for e in (yaml_order(tiered_models(list(node.entries)))
                                               if not isinstance(node, A.Actions) else _drops_first(node.entries)))
            return replace(node, entries=entries)
        return node
    decls = tuple(block(d) for d in yaml_order(list(module.decls)))
    return replace(module, decls=decls)


def mlab_to_yaml(text: str, path: str) -> str:
    """The YAML form of a .mlab text; DiagnosticError if it does not parse, ConvertError if it cannot be said."""
    comments: list = []
    module = parse_text(text, path, comments)
    cmap = CommentMap(module, source_comments(comments, text), text)
    builder = YamlBuilder(cmap)
    items, header = builder.document(module)
    out = emit_document(items, header, builder.blank_after_header)
    again: list = []
    try:
        back = parse_yaml_text(out, path + ".yaml", again)
    except DiagnosticError as error:
        raise ConvertError(f"the YAML written for {path} does not read back ({error}); this is a bug in mlabc") from None
    if ast_shape(back) != ast_shape(_sorted_like_yaml(module)):
        raise ConvertError(f"{path} holds something the YAML form cannot say exactly; "
                           "run `mlabc check` on it and fix what it reports first")
    _same_comments(comments, again, path)
    return out


def yaml_to_mlab(text: str, path: str) -> str:
    """The .mlab text of a YAML-form document."""
    comments: list = []
    module = parse_yaml_text(text, path, comments)
    cmap = CommentMap(module, source_comments(comments, text), text, _group_keys_after_blank(text))
    try:
        out = print_module(module, cmap)
    except Unprintable as error:
        raise ConvertError(str(error)) from None
    again: list = []
    try:
        back = parse_text(out, path)
        parse_text(out, path, again)
    except DiagnosticError as error:
        raise ConvertError(f"the .mlab text written for {path} does not parse ({error}); this is a bug in mlabc") \
            from None
    if ast_shape(back) != ast_shape(module):
        raise ConvertError(f"{path} holds something the .mlab form cannot say exactly")
    _same_comments(comments, again, path)
    return out


def _group_keys_after_blank(text: str) -> set[int]:
    """Lines holding only `key:` below a blank line. The first entry under such a key (a data
    variant, a model tier, ...) had the blank line above it in the .mlab form."""
    lines = text.splitlines()
    return {number for number, line in enumerate(lines, start=1)
            if number > 1 and not lines[number - 2].strip() and re.fullmatch(r"\s*[\w-]+:\s*(#.*)?", line)}


def _same_comments(before: list, after: list, path: str) -> None:
    if sorted(c.text for c in before) != sorted(c.text for c in after):
        raise ConvertError(f"converting {path} would lose a comment; this is a bug in mlabc")


def convert_text(text: str, path: str, to: str) -> str:
    return mlab_to_yaml(text, path) if to == "yaml" else yaml_to_mlab(text, path)


def convert_file(source: Path, to: str | None, output: Path | None, force: bool) -> tuple[Path, str]:
    """Convert one file and write the result; returns (output path, target form).

    Raises DiagnosticError (the source has errors), ConvertError (it cannot be said in the
    other form, or a usage problem) and OSError."""
    form = form_of(source)
    if form is None:
        raise ConvertError(f"{source} is neither a .mlab nor a .mlab.yaml file")
    target = to or ("mlab" if form == "yaml" else "yaml")
    if target == form:
        raise ConvertError(f"{source} is already in the {form} form")
    output = output or default_output(source, target)
    if output.exists() and not force:
        raise ConvertError(f"{output} exists; pass --force to overwrite it, or -o to write elsewhere")
    data = source.read_bytes()
    try:
        text = data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        from ..parser import parse_bytes
        parse_bytes(data, str(source))  # raises the located E106 diagnostic
        raise
    converted = convert_text(text, str(source), target)
    output.write_text(converted, encoding="utf-8")
    return output, target

