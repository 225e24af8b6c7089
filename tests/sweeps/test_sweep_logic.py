"""The sweep's decisions with a stand-in executor: retries, lost workers, statuses; GPU handout;
expansion of experiments; moving run folders home in pieces."""
from __future__ import annotations

import io
import json
import textwrap

import pytest
from sweep_helpers import compile_build, write_tiny_task

from mlab.sweeps.executors import Attempt, Ended, Executor
from mlab.sweeps.local import DevicePool, LocalExecutor
from mlab.sweeps.runner import Sweep
from mlab.sweeps.plan import RunSpec, expand
from mlab.sweeps.progress import Progress
from mlab.sweeps.state import SweepFolder, Work, reconcile
from mlab.sweeps.transfer import FolderSender, apply_piece, pack_folder, unpack


def spec(task="t", seed=0, gpus=0, required=False) -> RunSpec:
    return RunSpec(task=task, agent="a", data="lite", seed=seed, models=(("main", "mlab/demo"),), steps_limit=10,
                   hardware={"cpus": 1, "gpus": gpus, "gpus_required": required, "memory": 2**30})


class ScriptedExecutor(Executor):
    """Ends each attempt as told per run key: 'done', 'fail' (exit 1) or 'lost' (worker gone)."""

    def __init__(self, folder: SweepFolder, endings: dict[str, list[str]]):
        self.folder, self.endings, self.active, self.started = folder, endings, [], []
        self.count = 0

    def try_start(self, work: Work) -> Attempt | None:
        self.count += 1
        name = work.resume or f"run-{self.count}"
        (self.folder.run_dir(name)).mkdir(parents=True, exist_ok=True)
        attempt = Attempt(work, self.folder.log_path(work.spec), run_name=name)
        self.active.append(attempt)
        self.started.append((work.spec.key, work.kind, name))
        return attempt

    def poll(self, timeout_s):
        ended, self.active = self.active, []
        out = []
        for attempt in ended:
            how = self.endings[attempt.key].pop(0)
            if how == "done":
                (self.folder.run_dir(attempt.run_name) / "result.json").write_text("{}")
                out.append(Ended(attempt, 0))
            elif how == "fail":
                out.append(Ended(attempt, 1, message="mlab: something broke"))
            else:
                out.append(Ended(attempt, None, lost=True, message="Ray: WorkerCrashedError"))
        return out

    def running(self):
        return list(self.active)

    def stop(self, hard):
        pass


def _sweep(tmp_path, specs, endings, retries):
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    executor = ScriptedExecutor(folder, endings)
    out = io.StringIO()
    sweep = Sweep("exp", specs, folder, executor, retries, Progress("exp", stream=out, live=False))
    return sweep, executor, folder, out


def test_a_failed_run_is_set_aside_and_retried_while_retries_last(tmp_path):
    runs = [spec(seed=0), spec(seed=1)]
    sweep, executor, folder, out = _sweep(tmp_path, runs, {runs[0].key: ["fail", "done"],
                                                           runs[1].key: ["fail", "fail"]}, retries=1)
    outcome = sweep.run()
    assert (outcome.done, outcome.failed, outcome.exit_code) == (1, 1, 1)
    entries = json.loads(folder.state_path.read_text())["runs"]
    assert entries[runs[0].key]["status"] == "done" and entries[runs[0].key]["retired"] == ["run-1"]
    assert entries[runs[1].key]["status"] == "failed" and entries[runs[1].key]["error"] == "mlab: something broke"
    assert sorted(p.name for p in (folder.runs / ".retired").iterdir()) == ["run-1", "run-2", "run-4"]
    assert "retry  t/a/lite/main=mlab/demo/seed=1: mlab: something broke (failure 1, 1 attempt(s) left" in out.getvalue()
    assert "FAILED t/a/lite/main=mlab/demo/seed=1" in out.getvalue()

    # Run again: the done run is skipped, the failed one has used its attempts.
    again, executor, _, _ = _sweep(tmp_path, runs, {}, retries=1)
    assert again.run().exit_code == 1 and executor.started == []
    # --retry-failed gives it another round.
    once_more, executor, _, _ = _sweep(tmp_path, runs, {runs[1].key: ["done"]}, retries=1)
    assert once_more.run(retry_failed=True).exit_code == 0
    assert executor.started == [(runs[1].key, "retry", "run-1")]


def test_a_run_whose_worker_is_lost_is_resumed_in_its_own_folder(tmp_path):
    runs = [spec()]
    sweep, executor, folder, out = _sweep(tmp_path, runs, {runs[0].key: ["lost", "lost", "done"]}, retries=0)
    assert sweep.run().exit_code == 0
    assert executor.started == [(runs[0].key, "new", "run-1"), (runs[0].key, "resume", "run-1"),
                                (runs[0].key, "resume", "run-1")]
    assert "resume t/a/lite/main=mlab/demo/seed=0: its worker was lost; continuing from its last step" in out.getvalue()
    assert not (folder.runs / ".retired").exists()


def test_a_run_lost_again_and_again_counts_as_a_failure(tmp_path):
    runs = [spec()]
    sweep, executor, folder, out = _sweep(tmp_path, runs, {runs[0].key: ["lost"] * 4}, retries=0)
    assert sweep.run().exit_code == 1
    assert "interrupted 4 times in one sweep" in out.getvalue()


def test_an_unfinished_folder_left_by_a_killed_sweep_is_resumed_not_restarted(tmp_path):
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    run = folder.run_dir("20260101T000000-abcdef")
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"task": "t", "agent": "a", "data": {"variant": "lite"}, "seed": 1}))
    (run / "models.json").write_text(json.dumps({"tiers": {"main": {"model": "mlab/demo"}}}))
    state = folder.load("exp")
    work = reconcile(folder, state, [spec(seed=0), spec(seed=1)], retries=0)
    assert [(w.spec.seed, w.kind, w.resume) for w in work] == [(0, "new", None), (1, "resume", run.name)]


def test_gpus_go_to_one_run_at_a_time_and_cpu_runs_see_none(tmp_path, monkeypatch):
    started = []

    class FakeProcess:
        pid = 0

        def __init__(self, command, **options):
            started.append(command)

        def poll(self):
            return None

    monkeypatch.setattr("mlab.sweeps.local.subprocess.Popen", FakeProcess)
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    executor = LocalExecutor(folder, tmp_path / "build", workers=4, devices=["0", "1"])
    gpu_runs = [spec("g", seed=s, gpus=1, required=True) for s in range(3)]
    assert [executor.try_start(Work(s)) is not None for s in gpu_runs] == [True, True, False]
    assert executor.try_start(Work(spec("c"))) is not None
    assert [c[-1] for c in started] == ["--device=0", "--device=1", "--device="]
    pool = DevicePool(["0", "1", "2"])
    assert pool.take(2) == ["0", "1"] and pool.take(["1"]) is None and pool.take(["2"]) == ["2"]


def test_an_experiment_expands_over_tasks_agents_model_tiers_and_seeds_with_overrides(tmp_path):
    write_tiny_task(tmp_path)
    (tmp_path / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        experiment grid {
          tasks all
          agents [research, react]
          models ["mlab/demo", "mlab/scripted:replies.json"]
          models fast ["mlab/demo"]
          runs 2
          data lite
          limits { steps 7  time 5m  memory 1GiB }
          override tiny { runs 3  agents [research] limits { steps 4 } }
        }
        """))
    from mlab.sweeps.plan import limits_not_passed, load_experiment

    build = compile_build(tmp_path / "exp.mlab", tmp_path / "build")
    specs = expand(load_experiment(str(build / "experiments" / "grid.yaml")))
    assert len(specs) == 1 * 1 * 2 * 3
    assert {s.agent for s in specs} == {"research"} and {s.seed for s in specs} == {0, 1, 2}
    assert specs[0].key == "tiny/research/lite/main=mlab/demo,fast=mlab/demo/seed=0"
    assert specs[0].steps_limit == 4 and specs[0].time_limit == 300
    arguments = specs[0].run_arguments(tmp_path / "b", tmp_path / "r")
    assert arguments[arguments.index("--fast-model") + 1] == "mlab/demo"
    assert arguments[arguments.index("--steps") + 1] == "4" and arguments[arguments.index("--time") + 1] == "300"
    assert arguments[arguments.index("--memory") + 1] == str(int(dict(specs[0].limits)["memory"]))
    assert limits_not_passed(specs) == []  # `mlab run` takes every limit an experiment can set


def test_a_run_folder_comes_home_in_pieces_that_are_each_resumable(tmp_path):
    worker = tmp_path / "worker" / "run"
    home = tmp_path / "home" / "run"
    (worker / "objects").mkdir(parents=True)
    (worker / "workspace").mkdir()
    (worker / "run.json").write_text("{}")
    (worker / "objects" / "aa").write_text("object a")
    (worker / "workspace" / "notes.txt").write_text("scratch")
    (worker / "trace.jsonl").write_bytes(b'{"step": 1}\n{"step": 2, "torn')
    sender = FolderSender(worker)
    apply_piece(home, sender.collect(final=False))
    assert (home / "trace.jsonl").read_bytes() == b'{"step": 1}\n'  # whole records only
    assert (home / "objects" / "aa").read_text() == "object a"
    assert not (home / "workspace" / "notes.txt").exists()  # the workspace comes with the last piece
    assert sender.collect(final=False) is None  # nothing new
    (worker / "trace.jsonl").write_bytes(b'{"step": 1}\n{"step": 2}\n')
    (worker / "workspace" / "notes.txt").unlink()
    (worker / "workspace" / "submission.csv").write_text("Id,y\n")
    (home / "workspace" / "stale.txt").write_text("from an earlier session")
    apply_piece(home, sender.collect(final=True))
    assert (home / "trace.jsonl").read_bytes() == b'{"step": 1}\n{"step": 2}\n'
    assert sorted(p.name for p in (home / "workspace").iterdir()) == ["submission.csv"]

    # A resume ships the folder out (without workspace); a trace cut on the worker is sent whole.
    second = tmp_path / "worker2" / "run"
    unpack(pack_folder(home, late=False), second)
    assert not (second / "workspace").exists() and (second / "objects" / "aa").is_file()
    resent = FolderSender(second, already_there=True)
    (second / "trace.jsonl").write_bytes(b'{"step": 1}\n{"step": 2, "other": 1}\n')
    piece = resent.collect(final=False)
    assert piece["trace"][0] == 0
    apply_piece(home, piece)
    assert (home / "trace.jsonl").read_bytes() == b'{"step": 1}\n{"step": 2, "other": 1}\n'


@pytest.mark.parametrize("text", ["0,,1", "0,0", ""])
def test_bad_device_lists_are_refused(text):
    from mlab.errors import UsageError
    from mlab.cli.sweep import parse_devices

    with pytest.raises(UsageError, match="--devices takes distinct device numbers"):
        parse_devices(text)


def test_progress_counts_tokens_of_running_and_finished_runs_on_one_rewritten_line(tmp_path):
    finished, running = tmp_path / "a", tmp_path / "b"
    finished.mkdir()
    running.mkdir()
    (finished / "result.json").write_text(json.dumps({"total_tokens": 1000, "cost": 0.25}))
    call = {"prompt_tokens": 100, "completion_tokens": 20, "cost": 0.01}
    (running / "trace.jsonl").write_text(json.dumps({"model": {"calls": [call, call]}}) + "\n" + '{"model": ')
    screen = io.StringIO()
    progress = Progress("grid", stream=screen, live=True)
    progress.measure([finished, running])
    progress.update({"total": 5, "done": 1, "running": 1, "failed": 1, "waiting": 2}, force=True)
    progress.event("done   t/a/lite/main=mlab/demo/seed=0: finished")
    progress.close()
    text = screen.getvalue()
    assert text.startswith("\rsweep grid: 1/5 done, 1 running, 1 failed, 2 waiting | 0:00:00 | 1,240 tokens | "
                           "cost $0.2700\x1b[K")
    assert "\r\x1b[Kdone   t/a/lite/main=mlab/demo/seed=0: finished\n" in text and text.endswith("\n")
    plain = io.StringIO()
    Progress("grid", stream=plain, live=False).event("start  x")
    assert plain.getvalue().startswith("start  x  [sweep grid: 0/0 done")


def test_a_folder_whose_run_was_never_set_up_is_set_aside(tmp_path):
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    half = folder.run_dir("20260101T000000-000000")
    (half / "workspace").mkdir(parents=True)  # killed while `mlab run` prepared it
    work = reconcile(folder, folder.load("exp"), [spec()], retries=0)
    assert [w.kind for w in work] == ["new"]
    assert folder.run_folders() == [] and (folder.runs / ".retired" / half.name).is_dir()


def hostile_tar(kind: str) -> bytes:
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        if kind == "through-a-link":   # a link out of the folder, then a file written through it
            link = tarfile.TarInfo("link")
            link.type, link.linkname = tarfile.SYMTYPE, ".."
            tar.addfile(link)
        member = tarfile.TarInfo("../escaped.txt" if kind == "climbs" else "link/escaped.txt")
        member.size = 1
        tar.addfile(member, io.BytesIO(b"x"))
    return buffer.getvalue()


@pytest.mark.parametrize("filters", [True, False], ids=["with-extraction-filters", "python-before-3.11.4"])
@pytest.mark.parametrize("kind", ["climbs", "through-a-link"])
def test_a_piece_that_would_land_outside_the_run_folder_is_refused(tmp_path, monkeypatch, filters, kind):
    import tarfile

    if not filters:
        monkeypatch.delattr(tarfile, "tar_filter", raising=False)
    target = tmp_path / "home" / "run"
    with pytest.raises(tarfile.TarError):
        unpack(hostile_tar(kind), target)
    assert not (tmp_path / "home" / "escaped.txt").exists()


def test_a_piece_unpacks_where_python_has_no_extraction_filters(tmp_path, monkeypatch):
    import tarfile

    monkeypatch.delattr(tarfile, "tar_filter", raising=False)
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    (home / "sub" / "a.txt").write_text("kept")
    unpack(pack_folder(home), tmp_path / "copy")
    assert (tmp_path / "copy" / "sub" / "a.txt").read_text() == "kept"
