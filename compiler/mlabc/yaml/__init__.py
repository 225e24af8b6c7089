"""The YAML form of .mlab (`x.mlab.yaml`): reading it into the AST, writing it, and its schema.

reader.py composes a document and reads its nodes, decls.py/agents.py/fields.py build the
declarations, form.py is the entry (text → Module); build.py and write.py turn a Module back
into YAML text; schema.py writes spec/yaml-form.schema.json.
"""
from __future__ import annotations

from .build import YamlBuilder, tiered_models, yaml_order
from .form import parse_yaml_bytes, parse_yaml_text, yaml_comments
from .reader import YAML_SUFFIX
from .schema import schema_text, yaml_form_schema
from .write import ConvertError, emit_document

__all__ = [
    "YAML_SUFFIX", "ConvertError", "YamlBuilder", "emit_document", "parse_yaml_bytes", "parse_yaml_text",
    "schema_text", "tiered_models", "yaml_comments", "yaml_form_schema", "yaml_order",
]
