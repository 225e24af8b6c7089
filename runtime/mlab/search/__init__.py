"""Tree search: the tree of candidate solutions, the policies that grow it, and the engine that runs them."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "Decision": "policy",
    "Greedy": "policy",
    "Node": "tree",
    "POLICY_MODULES": "policies",
    "Policy": "policy",
    "Tree": "tree",
    "make_policy": "policies",
    "policy_class": "policies",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
