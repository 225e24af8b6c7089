"""A run folder driven step by step: create and resume runs, check out a step's workspace, drive a run with scripted actions."""
