"""mlab tasks as Gymnasium environments (the optional extra `gym`; mlab.errors.install_hint says how to install it).

`MlabEnv(task, agent=...)`: reset() gives the problem and the workspace as text; step(action) runs one
action of the agent's action table; the reward at the end is the scored improvement over the
baseline. Episodes are runs (trace, snapshots, result.json). gymnasium is imported on first use.
"""
from mlabc.shared import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "MlabEnv": "env",
    "make": "env",
    "validation_shaping": "env",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
