"""Running an agent's script under its limits, in a bubblewrap sandbox where available."""
