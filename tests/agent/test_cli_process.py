"""`mlab` as a user starts it, in a process of its own: Ctrl-C and --resume, a missing API key,
and a `--help` that stays light."""
import os
import signal
import subprocess
import sys
import time

from agent_helpers import actions_taken, mlab, only_run, research_reply, result, scripted, trace

REPLIES = [research_reply("List Files", {"dir_path": "."})] + \
    [research_reply("Execute Script", {"script_name": "slow.py"})] * 3 + \
    [research_reply("Execute Script", {"script_name": "fit.py"}),
     research_reply("Final Answer", {"final_answer": "fitted y = 2x + 1"})]


def start_mlab(*args, output_dir):
    """`python -m mlab.cli ARGS` with its output in files (a pipe left unread could block it)."""
    out, err = open(output_dir / "stdout.txt", "w"), open(output_dir / "stderr.txt", "w")
    process = subprocess.Popen([sys.executable, "-m", "mlab.cli", *map(str, args)], stdout=out, stderr=err,
                               stdin=subprocess.DEVNULL, env=dict(os.environ), start_new_session=True)
    return process, output_dir / "stdout.txt", output_dir / "stderr.txt"


def wait_for_first_step(runs_dir, process, limit_s=180):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "mlab ended before its first step"
        runs = list(runs_dir.glob("*/trace.jsonl")) if runs_dir.exists() else []
        if runs and runs[0].read_bytes().count(b"\n") >= 1:
            return runs[0].parent
        time.sleep(0.05)
    process.kill()
    raise AssertionError("no step was recorded in time")


def test_ctrl_c_stops_cleanly_and_resume_finishes_like_an_uninterrupted_run(tiny_task, tmp_path):
    model = scripted(tmp_path, REPLIES)
    process, stdout, stderr = start_mlab("run", tiny_task, "--model", model, "--runs-dir", tmp_path / "runs",
                                         output_dir=tmp_path)
    run_dir = wait_for_first_step(tmp_path / "runs", process)
    os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C does, to the whole process group; slow steps leave time
    assert process.wait(timeout=120) == 130
    message = stderr.read_text()
    assert "stopping after this step" in message
    assert f"stopped: the run is resumable with `mlab run --resume {run_dir}`" in message
    assert "Traceback" not in message + stdout.read_text()
    stopped_after = len(trace(run_dir))
    assert 1 <= stopped_after < len(REPLIES) and not (run_dir / "result.json").exists()

    code, out, err = mlab("run", "--resume", run_dir)
    assert code == 0, err
    code, _, err = mlab("run", tiny_task, "--model", scripted(tmp_path, REPLIES, "again.json"),
                        "--runs-dir", tmp_path / "uninterrupted")
    assert code == 0, err
    uninterrupted = only_run(tmp_path / "uninterrupted")
    assert actions_taken(run_dir) == actions_taken(uninterrupted)
    resumed, whole = result(run_dir), result(uninterrupted)
    assert (resumed["steps"], resumed["score"], resumed["model_calls"]) == (whole["steps"], whole["score"], 6)
    assert resumed["end_reason"] == "final_answer" and resumed["success"] is True


def test_a_missing_key_is_one_line_naming_the_variable(tmp_path):
    process, stdout, stderr = start_mlab("run", "house-price", "--model", "anthropic/claude-3-opus-20240229",
                                         "--runs-dir", tmp_path / "runs", output_dir=tmp_path)
    assert process.wait(timeout=300) == 2
    assert stdout.read_text() == ""
    assert stderr.read_text().splitlines() == [
        "mlab: the main, fast and edit tiers' model anthropic/claude-3-opus-20240229 needs ANTHROPIC_API_KEY "
        "in the environment; set it or choose another model with --model, --fast-model or --edit-model; "
        "for a keyless run use --model mlab/demo"]
    assert not (tmp_path / "runs").exists()


def test_without_a_model_the_agents_declared_default_is_used_and_checked(tiny_task, tmp_path):
    code, out, err = mlab("run", tiny_task, "--runs-dir", tmp_path / "runs")
    assert code == 2 and out == ""
    assert "the main and edit tiers' model anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY" in err
    assert "--model or --edit-model" in err
    assert not (tmp_path / "runs").exists()


def test_another_main_model_needs_only_its_own_key(tiny_task, tmp_path, monkeypatch):
    """--model openai/... with the agent's Anthropic defaults: the fast and edit tiers follow it."""
    code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4o", "--runs-dir", tmp_path / "runs")
    assert code == 2 and out == ""
    assert err.splitlines() == ["mlab: the main, fast and edit tiers' model openai/gpt-4o needs OPENAI_API_KEY in "
                                "the environment; set it or choose another model with --model, --fast-model or "
                                "--edit-model; for a keyless run use --model mlab/demo"]
    code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4o", "--fast-model", "anthropic/claude-haiku-4-5",
                          "--runs-dir", tmp_path / "runs")
    assert code == 2
    assert err.startswith("mlab: the main and edit tiers' model openai/gpt-4o needs OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4o", "--fast-model", "anthropic/claude-haiku-4-5",
                          "--runs-dir", tmp_path / "runs")
    assert code == 2 and not (tmp_path / "runs").exists()
    assert err.splitlines() == ["mlab: the fast tier's model anthropic/claude-haiku-4-5 needs ANTHROPIC_API_KEY in "
                                "the environment; set it or choose another model with --fast-model; "
                                "for a keyless run use --model mlab/demo"]


def test_help_imports_no_heavy_library():
    code = ("import sys\nfrom mlab.cli import main\nmain(['--help'])\nmain(['run', '--help'])\n"
            "print('HEAVY', sorted(m for m in ('litellm', 'pandas', 'sklearn', 'numpy', 'rich') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in done.stdout, done.stdout[-500:] + done.stderr
    assert "MLAB_MODEL_TIMEOUT" in done.stdout and "--resume RUN_DIR" in done.stdout


def test_usage_errors_come_before_any_heavy_library_is_imported(tiny_task, tmp_path):
    """A missing key, an unknown agent or task, a bad limit: each answered (exit 2) before litellm,
    pandas or the agent loop is imported, so the answer takes no import time."""
    runs = str(tmp_path / "runs")
    calls = [["run", str(tiny_task), "--model", "openai/gpt-4o", "--runs-dir", runs],
             ["run", str(tiny_task), "--runs-dir", runs],
             ["run", str(tiny_task), "--agent", "reserch", "--model", "mlab/demo", "--runs-dir", runs],
             ["run", "house-prise", "--model", "mlab/demo", "--runs-dir", runs],
             ["run", str(tiny_task), "--model", "mlab/demo", "--memory", "lots", "--runs-dir", runs]]
    code = (f"import sys\nfrom mlab.cli import main\ncodes = [main(c) for c in {calls!r}]\n"
            "print('CODES', codes)\nprint('HEAVY', sorted(m for m in ('litellm', 'pandas', 'sklearn', "
            "'mlab.agent.loop', 'mlab.scoring.result') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "CODES [2, 2, 2, 2, 2]" in done.stdout, done.stdout[-500:] + done.stderr
    assert "HEAVY []" in done.stdout, done.stdout[-500:] + done.stderr
    err = done.stderr.splitlines()
    assert "OPENAI_API_KEY" in err[0] and "ANTHROPIC_API_KEY" in err[1]
    assert "no agent 'reserch' (did you mean `research`?)" in err[2]
    assert "no task named 'house-prise' (did you mean `house-price`?)" in err[3]
    assert "'lots' is not a size" in err[4]
    assert not (tmp_path / "runs").exists()
