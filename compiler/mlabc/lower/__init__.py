"""Lowering: checked declarations → the plain data of the build (tasks, agents, actions, experiments).

Each module lowers one kind of declaration and reports what is wrong with it; templates.py
checks the Jinja templates an agent's prompt is made of.
"""
