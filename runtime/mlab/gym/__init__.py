"""mlab tasks as Gymnasium environments (the optional extra `gym`;
mlab.installation.install_hint says how to install it).

`MlabEnv(task, agent=...)` (in `env`; `mlab.MlabEnv` too): reset() gives the problem and the workspace as text; step(action) runs one
action of the agent's action table; the reward at the end is the scored improvement over the
baseline. Episodes are runs (trace, snapshots, result.json).

`import mlab.gym` registers `mlab/Task-v0` with Gymnasium when it is installed, so that
`gymnasium.make("mlab/Task-v0", task=...)` works; the environment's module is imported by that make.
"""
ENV_ID = "mlab/Task-v0"


def _register() -> None:
    try:
        import gymnasium
    except ImportError:
        return  # MlabEnv says how to install it
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point=f"{__name__}.env:MlabEnv", disable_env_checker=True)


_register()
