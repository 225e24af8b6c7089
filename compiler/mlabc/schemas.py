"""The JSON Schemas of spec/: loading, stamping artifacts, validating them."""
from __future__ import annotations

import functools

import jsonschema

from .resources import data_dir, spec_json

SCHEMA_VERSION = 1


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in data_dir("spec").glob("*.schema.json"))


def schema(name: str) -> dict:
    return spec_json(f"{name}.schema.json")


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    doc = schema(name)
    cls = jsonschema.validators.validator_for(doc)
    return cls(doc)


def stamp(name: str, body: dict) -> dict:
    """The artifact with its schema id and version first."""
    return {"schema": schema(name)["$id"], "schema_version": SCHEMA_VERSION, **body}


def problems(name: str, document: dict) -> list[str]:
    """Schema violations of `document` against spec/<name>.schema.json, each as 'at PATH: message'."""
    return _listed(validator(name), document)


def problems_against(rules: dict, document: dict) -> list[str]:
    """Schema violations of `document` against the schema `rules` (an older version's, kept
    beside spec/), each as 'at PATH: message'."""
    return _listed(jsonschema.validators.validator_for(rules)(rules), document)


def _listed(checker: jsonschema.protocols.Validator, document: dict) -> list[str]:
    out = []
    for error in sorted(checker.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        out.append(f"at {where}: {error.message}")
    return out
