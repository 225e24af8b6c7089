"""What an agent can do: the compiled action table, the primitive registry and the primitives on files and scripts, the workspace they act on, undo history and research log."""
