"""Tools for authors of .mlab files: the verbs fmt, convert, new and explain.

fmt.py formats (comments.py places comments, printer.py prints an AST as .mlab text),
convert.py converts between .mlab and .mlab.yaml, scaffold.py writes a new task, explain/
explains diagnostic codes, cli.py adds the verbs to `mlabc`. Import each name from its module.
"""
