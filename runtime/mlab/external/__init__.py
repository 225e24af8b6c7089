"""Agents from outside mlab: a command run in the sandbox, its model calls through a metered gateway.

`runner` (the run of an external agent: problem file, environment, gateway, command), `gateway`
(the OpenAI-compatible chat-completions endpoint on a Unix socket, with the run's limits), `relay`
and `validate_client` (run inside the sandbox, standard library only), `environment` (the agent's
cached virtual environment, keyed by the digest of its requirements).
"""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "ExternalRunner": "runner",
    "Gateway": "gateway",
    "prepare_environment": "environment",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
