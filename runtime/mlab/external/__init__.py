"""Agents from outside mlab: a command run in the sandbox, its model calls through a metered gateway.

`runner` (the run of an external agent: problem file, environment, gateway, command), `gateway`
(the OpenAI-compatible chat-completions endpoint on a Unix socket, with the run's limits), `relay`
and `validate_client` (run inside the sandbox, standard library only), `environment` (the agent's
cached virtual environment, keyed by the digest of its requirements).
"""
