"""A program: the `.mlab` files and everything they `use`, loaded, checked and built.

loader.py reads the files (the YAML form through yaml/), check.py resolves and checks the
declarations through lower/, emit.py writes the build. Import each name from its module.
"""
