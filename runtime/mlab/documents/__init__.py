"""Typed, frozen views of the compiled documents: a task (`task`: task.yaml), an agent and its
action table (`agent`: agent.json, actions.json), an experiment (`experiment`: experiments/NAME.yaml),
on the machinery of `view`.

The YAML and JSON files stay the contract on disk (spec/*.schema.json). The runtime validates a
document against its schema once, when a build is loaded (mlab.build), builds its view, and from
then on reads attributes only: each view class is one object of a schema, each field one of its
properties, named as the schema names it (`from_` for the keyword `from`). A field the schema
lacks cannot be read (the classes have slots), and tests/runtime/test_documents.py fails when a
field of a view is missing from the matching schema. A property an older build leaves out takes
the field's default, so older builds still load, and a document is checked by the rules of the
schema version it records (`versions`), an older version upgraded to today's form first.
"""
