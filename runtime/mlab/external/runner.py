"""An external agent's run: its environment, the gateway, and its command inside the sandbox.

The runner writes the problem statement into the workspace (problem.md), prepares the agent's
environment once (external/environment.py), serves the gateway on a Unix socket in a folder of
its own, and runs the relay and the command in the sandbox scripts run in (no network but the
gateway, the task's memory, process and disk budgets, private/ and mlab unreachable) under the
run's time limit. The agent's stdout and stderr go to output/agent.log. When the command ends (by
itself, past a limit, at the time limit or on Ctrl-C) the run records a last step with the
workspace as the agent left it, and the submission is scored as for any agent.

A resumed external run restarts the command from the workspace of the last recorded step, with
the calls, tokens and cost used so far counted against the limits: the agent starts afresh (its
own memory of the earlier session is gone), the workspace does not.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

import jinja2

from mlab.agent.outcome import LoopOutcome
from mlab.external.environment import MANIFEST, AgentEnvironmentError, environment_python, node_bin, prepare_environment
from mlab.run.agent_python import AgentPython, PythonMissing, find_python
from mlab.run.node import Node, NodeMissing, find_node
from mlab.external.gateway import STALL_S, Gateway, GatewayEnd
from mlab.failure import FailureMode
from mlab.models.usage import Usage

PORT = 4141                      # the relay's loopback port inside the sandbox
INSIDE = "/mlab-gateway"         # where the gateway's folder is bound inside the sandbox
GRACE_S = 5.0                    # after a limit's error response, the agent's time to end by itself
AGENT_LOG = "agent.log"          # under output/
INSTALL_LOG = "agent-install.log"  # under output/: the installer's output when the environment failed
ENVIRONMENT = "agent-environment.json"  # under output/: what the agent's environment held (versions, npm hashes)
_RELAY = Path(__file__).with_name("relay.py")
_VALIDATE = Path(__file__).with_name("validate_client.py")


def effective_limits(run) -> dict:
    """The run's limits, tightened by the agent's own (`limits { ... }` in the declaration)."""
    own = run.agent.view.external.limits
    limits = {"steps": run.limits.steps, "time": run.limits.time, "tokens": run.limits.tokens,
              "cost": run.limits.cost, "calls": run.limits.calls}
    for key in ("steps", "time", "tokens", "cost"):
        value = getattr(own, key)
        if value is not None:
            limits[key] = value if limits[key] is None else min(limits[key], value)
    return limits


def render(template: str, context: dict, what: str) -> str:
    try:
        return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False).from_string(template) \
            .render(**context)
    except jinja2.TemplateError as problem:
        from mlab.errors import MlabError

        raise MlabError(f"the {what} of this external agent cannot be rendered: {problem}") from None


def asked_for(response: str, message: dict | None) -> str:
    """What a model reply asks the agent to do, in one line: its tool calls (`bash: {"command": ...}`),
    else the first line of its first fenced code block (`$ python train.py`), else its first line."""
    calls = (message or {}).get("tool_calls") or []
    if calls:
        return "; ".join(f"{(c.get('function') or {}).get('name')}: {(c.get('function') or {}).get('arguments')}"
                         for c in calls)
    fenced = re.search(r"```[^\n]*\n\s*([^\n]*\S)", response)
    if fenced:
        return f"$ {fenced.group(1).strip()}"
    return next((line.strip() for line in response.splitlines() if line.strip()), "(an empty reply)")


def stall_time() -> float:
    """How long a streamed reply may go without an event before the gateway ends it: STALL_S, or
    $MLAB_STALL_S (seconds, above 0) where a slow upstream needs longer or a test shorter."""
    from mlab.errors import MlabError

    given = os.environ.get("MLAB_STALL_S", "").strip()
    if not given:
        return STALL_S
    try:
        value = float(given)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise MlabError(f"MLAB_STALL_S must be a number of seconds above 0, not {given!r}")
    return value


def _node_binds(node: Node | None) -> tuple:
    """The host's node, bound read-only where the sandbox does not show it already (/usr is shown)."""
    if node is None:
        return ()
    folder = str(Path(node.path).parent.parent)  # the installation: bin/node and lib/node_modules/npm
    if folder in ("/usr", "/usr/local", "/") or folder.startswith(("/usr/", "/bin", "/lib")):
        return ()
    return ((folder, folder, False),)


def _python_binds(python: AgentPython | None) -> tuple:
    """The installation of the Python an agent names (its environment's interpreter links to it),
    bound read-only where the sandbox does not show it already."""
    if python is None:
        return ()
    from mlab.sandbox.bwrap import interpreter_layout

    return tuple((root, root, False) for root in interpreter_layout(python.path).roots
                 if root not in ("/usr", "/usr/local", "/") and not root.startswith(("/usr/", "/bin", "/lib")))


class ExternalRunner:
    """Runs one session of an external agent on a Run; `run_until_done()` → a LoopOutcome."""

    def __init__(self, run, client, *, should_stop=lambda: False, say=None, grace_s: float | None = None,
                 on_exchange=None):
        self.run, self.client, self.should_stop = run, client, should_stop
        self.on_exchange = on_exchange  # on_exchange(step, what the reply asks for) after each model call
        self.say = say or (lambda line: print(line, flush=True, file=__import__("sys").stderr))
        self.spec = run.agent.view.external
        self.limits = effective_limits(run)
        self.grace_s = GRACE_S if grace_s is None else grace_s  # read when made: a test may shorten it
        self.stop = threading.Event()
        self.ended: GatewayEnd | None = None

    # -- the pieces -----------------------------------------------------------------------
    def write_problem(self) -> str:
        rel = self.spec.problem_file or "problem.md"
        task = self.run.task.view
        submission = self.submission_file()
        text = (f"# {task.title or task.name}\n\n{task.problem.strip()}\n\n"
                f"Write your submission to `{submission}` in this folder (the working directory).\n")
        from mlab.confined import Refused, check, write_into

        try:  # kept when the workspace holds it as a plain file (a resumed run); never written through a link
            check(self.run.dir, f"workspace/{rel}")
        except (Refused, FileNotFoundError, NotADirectoryError):
            write_into(self.run.dir, f"workspace/{rel}", text)
        return rel

    def submission_file(self) -> str:
        declared = self.spec.submits
        view = self.run.task.view.submission
        return declared or (view.file if view and view.file else "submission.csv")

    def context(self, gateway: Gateway, python: str, inside: str, problem_file: str) -> dict:
        task = self.run.task.view
        root = f"http://127.0.0.1:{PORT}"
        dialect = self.dialect()
        return {"problem_file": problem_file, "workspace": str(self.run.workspace.root),
                "submission": self.submission_file(), "api_base": f"{root}/v1", "api_root": root,
                "base_url": root if dialect in ("anthropic", "gemini") else f"{root}/v1", "dialect": dialect,
                "api_key": gateway.key, "model": "main", "models": {t: t for t in ("main", "fast", "edit")},
                "limits": {"steps": self.limits["steps"], "time_s": self.limits["time"],
                           "tokens": self.limits["tokens"], "cost": self.limits["cost"]},
                "python": python, "task": {"name": task.name, "title": task.title,
                                           "metric": task.metric.name, "direction": task.metric.direction},
                "validate": f"{python} {inside}/validate.py"}

    def dialect(self) -> str:
        return self.spec.dialect or "chat"

    def _record(self, exchange: dict, call, started: float) -> None:
        """One exchange as a trace step: the conversation and tools in OpenAI form (whatever the
        dialect), the reply, its calls' tokens and cost, the dialect and the model name asked for."""
        messages = exchange.get("messages") or []
        last = messages[-1].get("content") if messages else ""
        prompt = last if isinstance(last, str) else str(last)
        model = {"prompt": prompt, "response": call.response, "calls": [call.to_json()], "message": call.message,
                 "request": {"messages": messages, "tools": exchange.get("tools")}, "external": True}
        for key, field in (("dialect", "dialect"), ("model", "asked_model"), ("stream", "stream"),
                           ("stalled", "stalled"), ("compaction", "compaction"), ("notes", "notes")):
            if exchange.get(key) is not None:
                model[field] = exchange[key]
        text = call.response or ""
        if call.message and call.message.get("tool_calls"):
            text += "".join(f"\n[tool call {c['function'].get('name')}] {c['function'].get('arguments')}"
                            for c in call.message["tool_calls"])
        if exchange.get("stalled"):
            text += "\n[the reply stalled and was cut off]"
        record = self.run.record_exchange(text or "(an empty reply)", model, started)
        if self.on_exchange is not None:
            self.on_exchange(record["step"], asked_for(call.response or "", call.message))

    def _output(self, log, text: str) -> None:
        log.write(text)
        log.flush()
        if self.run.scripts.on_output is not None:  # the live display's last line of the agent's output
            self.run.scripts.on_output(text)

    def _on_end(self, end: GatewayEnd) -> None:
        self.ended = end
        threading.Timer(self.grace_s, self.stop.set).start()

    def _watch_interrupt(self, done: threading.Event) -> None:
        while not done.wait(0.2):
            if self.should_stop():
                self.stop.set()
                return

    # -- the session ----------------------------------------------------------------------
    def run_until_done(self) -> LoopOutcome:
        from mlab.sandbox.runner import run_script, sandbox_available

        run = self.run
        npm = list(self.spec.npm)
        wanted = self.spec.python
        try:
            node = find_node(npm, run.agent.name) if npm else None
            agent_python = find_python(str(wanted), run.agent.name) if wanted else None
            folder = prepare_environment(run.agent.name, list(self.spec.requires),
                                         agent_python.path if agent_python else run.scripts.python,
                                         say=self.say, no_deps=list(self.spec.no_deps), npm=npm,
                                         node=node)
        except (NodeMissing, PythonMissing) as problem:
            return self._not_installed(AgentEnvironmentError(str(problem)))
        except AgentEnvironmentError as problem:
            return self._not_installed(problem)
        self._keep_manifest(folder)
        python = str(environment_python(folder))
        problem_file = self.write_problem()
        gateway_dir = Path(tempfile.mkdtemp(prefix="mlab-gw-"))
        gateway_dir.chmod(0o755)
        sandboxed = sandbox_available()[0]
        inside = INSIDE if sandboxed else str(gateway_dir)
        usage = Usage.from_records(run.records)
        calls = sum(1 for r in run.records if (r.get("model") or {}).get("external"))
        gateway = Gateway(str(gateway_dir / "gateway.sock"), self.client, self.limits, self._record, usage, calls,
                          self._on_end, validate=self._validate, after_reply=run.sync_trace, stall_s=stall_time())
        for source, name in ((_RELAY, "relay.py"), (_VALIDATE, "validate.py")):
            shutil.copyfile(source, gateway_dir / name)
            (gateway_dir / name).chmod(0o644)
        done = threading.Event()
        try:
            gateway.start()
            context = self.context(gateway, python, inside, problem_file)
            command = render(run.agent.templates["command"], context, "command").strip()
            env = self._environment(context, gateway.key, problem_file, folder, node)
            remaining = run.remaining_time()
            policy = run.scripts.policy(run.workspace.root, timeout_s=max(min(remaining, 10 ** 9), 0.0))
            binds = ((str(folder), str(folder), False), (str(gateway_dir), INSIDE, True),
                     *_node_binds(node), *_python_binds(agent_python))
            policy = dataclasses.replace(policy, env=env, stop=self.stop, max_output_chars=20000,
                                         binds=binds if sandboxed else ())
            threading.Thread(target=self._watch_interrupt, args=(done,), daemon=True).start()
            from mlab.confined import open_for_append

            with os.fdopen(open_for_append(run.dir, f"output/{AGENT_LOG}"), "w", encoding="utf-8",
                           errors="replace") as log:
                result = run_script([python, "-I", f"{inside}/relay.py", f"{inside}/gateway.sock", str(PORT), command],
                                    policy, on_output=lambda text: self._output(log, text))
        finally:
            done.set()
            gateway.stop()
            shutil.rmtree(gateway_dir, ignore_errors=True)
        return self._finish(result)

    def _environment(self, context: dict, key: str, problem_file: str, folder: Path, node) -> dict[str, str]:
        """The agent command's environment: the scripts', the gateway's address and key under the
        names agents read, the agent's declared variables, and PATH (with node's settings)."""
        run = self.run
        env = dict(run.scripts.env)
        env.update({"OPENAI_API_KEY": key, "OPENAI_BASE_URL": context["api_base"],
                    "OPENAI_API_BASE": context["api_base"], "MLAB_API_BASE": context["api_base"],
                    "MLAB_API_KEY": key, "MLAB_PROBLEM_FILE": problem_file,
                    "MLAB_SUBMISSION": context["submission"]})
        for name, template in self.spec.env.items():
            env[name] = render(template, context, f"environment variable {name}")
        # The sandbox is the scripts' one (the task's interpreter, its packages, mlab's masked); the
        # agent's environment is bound read-only beside it, its bin/ after the task's on PATH, so the
        # agent's own commands find the task's `python` and the agent's entry points alike.
        env["PATH"] = ":".join([str(Path(run.scripts.python).parent), str(folder / "bin"),
                                *([str(node_bin(folder)), str(Path(node.path).parent)] if node else []),
                                "/usr/local/bin", "/usr/bin", "/bin"])
        if node is not None:  # `require` finds the agent's packages from anywhere (node -e, its plugins)
            env["NODE_PATH"] = str(node_bin(folder).parent)
            # V8 reserves about 10 GiB of address space per WebAssembly memory for its trap handler,
            # which the sandbox's address-space limit (the task's memory) refuses: node's own fetch
            # (undici's llhttp is WebAssembly) then dies with "Cannot allocate Wasm memory"
            env["NODE_OPTIONS"] = (env.get("NODE_OPTIONS", "") + " --disable-wasm-trap-handler").strip()
        return env

    def _keep_manifest(self, folder: Path) -> None:
        """output/agent-environment.json: what the agent ran on (its packages, npm's integrity hashes)."""
        from mlab.confined import write_into

        source = folder / MANIFEST
        if source.is_file():
            write_into(self.run.dir, f"output/{ENVIRONMENT}", source.read_text(encoding="utf-8"))

    def _not_installed(self, problem: AgentEnvironmentError) -> LoopOutcome:
        """The run ends before the command starts: the installer's output under output/, one step
        that says why, and the failure mode `agent install failed` (the run is scored as any other)."""
        from mlab.confined import write_into

        run = self.run
        write_into(run.dir, f"output/{INSTALL_LOG}", problem.output or str(problem))
        detail = f"{problem}; the installer's output: output/{INSTALL_LOG}"
        self.say(f"mlab: agent {run.agent.name} not installed: {problem} (the installer's output: "
                 f"{run.dir / 'output' / INSTALL_LOG})")
        run.finish("agent_install_failed", detail=detail)
        return LoopOutcome("agent_install_failed", FailureMode.AGENT_INSTALL_FAILED, detail)

    def _finish(self, result) -> LoopOutcome:
        run = self.run
        how = f"exit code {result.exit_code}" if result.exit_code is not None else result.killed_reason
        if self.ended is not None:
            run.finish(self.ended.end_reason, detail=f"{self.ended.detail}; the agent's command ended ({how})")
            return LoopOutcome(self.ended.end_reason, self.ended.failure_mode, self.ended.detail)
        if result.timed_out or run.remaining_time() <= 0:
            run.finish("time_limit", detail="the run's time limit was reached; the agent's command was stopped")
            return LoopOutcome("time_limit", FailureMode.LIMIT_REACHED, "time limit")
        if self.should_stop():
            return LoopOutcome("interrupted")
        run.finish("agent_exited", detail=f"the agent's command ended ({how}); output: output/{AGENT_LOG}")
        return LoopOutcome("agent_exited")

    def _validate(self) -> str:
        from types import SimpleNamespace

        from mlab.scoring.validation import SubmissionValidator

        # charged to the run: its memory limit and time left bound the child (the gateway runs one at a time)
        observation = SubmissionValidator(self.run, charged=True)(SimpleNamespace(workspace=self.run.workspace), {}, {})
        return observation.text
