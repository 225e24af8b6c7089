"""The YAML form of .mlab (`x.mlab.yaml`): reading it into the AST, writing it, and its schema.

reader.py composes a document and reads its nodes, decls.py/agents.py/fields.py build the
declarations, form.py is the entry (text → Module); build.py and write.py turn a Module back
into YAML text; schema.py writes spec/yaml-form.schema.json.
"""
