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


# The schemas of documents checked by the thousand: a report checks each run's result.json and
# run.json. These are compiled into Python by fastjsonschema, which passes a valid one in some 20 us
# where jsonschema takes some 400; compiling costs some 14 ms a schema, once a process, which is why
# the others (checked once or a few times a command; the task's costs 70 ms) are not compiled.
_COMPILED = frozenset({"result", "run"})
# Keywords of JSON Schema 2020-12 that fastjsonschema (drafts 4 to 7) does not know: a schema with
# one is checked by jsonschema alone (tests/compiler/test_schemas_compiled.py).
_NEWER_KEYWORDS = ("prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
                   "dependentSchemas", "$dynamicRef", "$anchor", "minContains", "maxContains")


@functools.cache
def _compiled(name: str):
    """spec/<name>.schema.json's compiled check, or None where jsonschema alone checks it."""
    import json

    import fastjsonschema

    if name not in _COMPILED:
        return None
    doc = schema(name)
    text = json.dumps(doc)
    if any(f'"{keyword}"' in text for keyword in _NEWER_KEYWORDS):
        return None
    return fastjsonschema.compile({key: value for key, value in doc.items() if key != "$schema"})


def problems(name: str, document: dict) -> list[str]:
    """Schema violations of `document` against spec/<name>.schema.json, each as 'at PATH: message'."""
    check = _compiled(name)
    if check is not None:
        import fastjsonschema

        try:
            check(document)
            return []
        except fastjsonschema.JsonSchemaException:
            pass   # worded by jsonschema below
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
