"""Preparing data variants: sources, splits, answers kept out of the workspace, the cache."""
from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from mlab.data import prepare as data_module
from mlab.build import resolve_task
from mlab.cli import main
from mlab.data.prepare import install_data, prepare_data
from mlab.errors import DataError, MlabError

from runtime_helpers import REPO

HOUSES = REPO / "tasks" / "house-price" / "lite" / "houses.csv"


def test_house_price_lite_split_is_the_one_demo_json_was_made_with(house_task):
    prepared = prepare_data(house_task, "lite")
    train = pd.read_csv(prepared.public / "train.csv")
    test = pd.read_csv(prepared.public / "test.csv")
    answers = pd.read_csv(prepared.private / "answers.csv")
    assert (len(train), len(test), len(answers)) == (2344, 586, 586)
    houses = pd.read_csv(HOUSES)
    expected_test = houses.sample(frac=0.2, random_state=42)
    assert list(test["Id"]) == list(expected_test["Id"])
    assert list(train["Id"]) == list(houses.drop(expected_test.index)["Id"])
    assert "SalePrice" not in test.columns and "SalePrice" in train.columns
    assert list(answers.columns) == ["Id", "SalePrice"]
    assert list(answers["SalePrice"]) == list(expected_test["SalePrice"])


def test_answers_never_enter_the_workspace(new_run):
    run = new_run()
    workspace = sorted(p.name for p in run.workspace.root.iterdir())
    assert workspace == ["CANARY.txt", "data_description.txt", "test.csv", "train.csv", "train.py"]
    assert "SalePrice" not in pd.read_csv(run.workspace.root / "test.csv").columns
    assert (run.dir / "private" / "answers.csv").is_file()


def test_a_second_preparation_reuses_the_cache(house_task, monkeypatch, tmp_path):
    first = prepare_data(house_task, "lite", cache_dir=tmp_path)
    assert not first.reused

    def must_not_run(*args, **kwargs):
        raise AssertionError("the data was prepared again")

    monkeypatch.setattr(data_module, "_materialise", must_not_run)
    second = prepare_data(house_task, "lite", cache_dir=tmp_path)
    assert second.reused and second.folder == first.folder


def test_remote_sources_say_what_to_do_offline(house_task):
    with pytest.raises(DataError, match=r"data variant full of task house-price needs kaggle "
                                        r"'home-data-for-ml-course' \(not available offline\); use --data lite"):
        prepare_data(house_task, "full")


def test_mlab_prepare_prints_where_the_data_is(house_build, mlab_env, capsys):
    assert main(["prepare", "house-price", "--build", str(house_build)]) == 0
    out = capsys.readouterr().out
    assert "house-price (lite)" in out and str(mlab_env) in out
    assert "public: test.csv, train.csv" in out and "private: answers.csv" in out


# -- other sources and splits, on small tasks written here ------------------------------

def make_task(folder: Path, data_block: str, extra_files: dict[str, str] | None = None,
              read_only: str = "[]", metric: str = 'mae on "y" lower_is_better') -> Path:
    """A minimal task source with the given data block, scored by `metric` (its column is the
    submission's second); returns the .mlab path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "env").mkdir(exist_ok=True)
    (folder / "env" / "train.py").write_text("print('hello')\n")
    for name, text in (extra_files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    source = folder / "mini.mlab"
    source.write_text(textwrap.dedent("""\
        use std "agents"
        task mini {
          title "A small task"
          category canonical
          problem "Predict TARGET; write submission.csv with the columns Id and TARGET."
          starter "env"
          read_only READ_ONLY
          DATA
          submission "submission.csv" columns ["Id", "TARGET"]
          metric METRIC
          baseline run "train.py"
        }
        """).replace("READ_ONLY", read_only).replace("DATA", data_block).replace("METRIC", metric)
        .replace("TARGET", metric.split('"')[1]))
    return source


def prepared_frames(source: Path, variant: str = "lite"):
    prepared = prepare_data(resolve_task(str(source)), variant)
    read = {p.relative_to(prepared.folder).as_posix(): p for p in prepared.folder.rglob("*.csv")}
    return prepared, {name: pd.read_csv(path) for name, path in read.items()}


def test_sklearn_source_adds_an_id_and_renames_the_target(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from sklearn "load_iris" split random 0.2 seed 1
        id "Id" answers ["species"] public ["train.csv", "test.csv"] private ["answers.csv"] }""",
                       metric='accuracy on "species"')
    _, frames = prepared_frames(source)
    assert len(frames["public/train.csv"]) == 120 and len(frames["public/test.csv"]) == 30
    assert list(frames["private/answers.csv"].columns) == ["Id", "species"]
    assert "species" not in frames["public/test.csv"].columns
    ids = sorted(frames["public/train.csv"]["Id"]) + sorted(frames["public/test.csv"]["Id"])
    assert sorted(ids) == list(range(150))


def test_ids_that_mlab_assigns_carry_no_information(tmp_path, mlab_env):
    """load_wine is sorted by class: ids in its row order would give the class away."""
    from sklearn.neighbors import KNeighborsClassifier

    source = make_task(tmp_path / "t", """data lite { from sklearn "load_wine" split random 0.3 seed 1
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""")
    _, frames = prepared_frames(source)
    train, answers = frames["public/train.csv"], frames["private/answers.csv"]
    by_id = train.sort_values("Id")["y"]
    assert not by_id.is_monotonic_increasing
    model = KNeighborsClassifier(n_neighbors=1).fit(train[["Id"]], train["y"])
    accuracy = (model.predict(answers[["Id"]]) == answers["y"]).mean()
    assert accuracy < 0.6
    _, again = prepared_frames(source)
    assert again["public/train.csv"].equals(train), "the shuffle is deterministic"


def test_missing_answer_column_is_named(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from csv "rows.csv" split random 0.5 seed 1
        id "Id" answers ["price"] public ["train.csv", "test.csv"] private ["answers.csv"] }""",
                       {"rows.csv": "Id,x,y\n1,2,3\n2,3,4\n"}, metric='mae on "price" lower_is_better')
    # the compiler sees the bundled CSV's header, so the task is refused before any preparation
    with pytest.raises(MlabError, match=r"E509\]: answer column 'price' is not a column of 'rows.csv'"):
        prepare_data(resolve_task(str(source)), "lite")


def test_group_split_keeps_whole_groups_on_one_side(tmp_path, mlab_env):
    rows = "Id,patient,x,y\n" + "".join(f"{i},{i % 10},{i},{i * 2}\n" for i in range(100))
    source = make_task(tmp_path / "t", """data lite { from csv "rows.csv" split group "patient" 0.3 seed 7
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""", {"rows.csv": rows})
    _, frames = prepared_frames(source)
    train, test = set(frames["public/train.csv"]["patient"]), set(frames["public/test.csv"]["patient"])
    assert len(test) == 3 and not train & test and len(train | test) == 10


def test_time_split_puts_the_latest_rows_in_test(tmp_path, mlab_env):
    rows = "Id,year,y\n" + "".join(f"{i},{2000 + (i * 7) % 20},{i}\n" for i in range(20))
    source = make_task(tmp_path / "t", """data lite { from csv "rows.csv" split time "year" 0.25
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""", {"rows.csv": rows})
    _, frames = prepared_frames(source)
    assert sorted(frames["public/test.csv"]["year"]) == [2015, 2016, 2017, 2018, 2019]
    assert frames["public/train.csv"]["year"].max() == 2014


def test_ordered_split_puts_the_last_rows_in_test_in_source_order(tmp_path, mlab_env):
    rows = "Id,x,y\n" + "".join(f"{i},{(i * 7) % 20},{i}\n" for i in range(20))
    source = make_task(tmp_path / "t", """data lite { from csv "rows.csv" split ordered 0.25
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""", {"rows.csv": rows})
    _, frames = prepared_frames(source)
    assert list(frames["public/train.csv"]["Id"]) == list(range(15))
    assert list(frames["public/test.csv"]["Id"]) == list(range(15, 20))
    assert list(frames["private/answers.csv"]["y"]) == list(range(15, 20))


def test_ordered_split_keeps_source_order_when_mlab_assigns_the_ids(tmp_path, mlab_env):
    """load_wine is sorted by class: the last rows are the test rows, and the ids still hide the order."""
    import sklearn.datasets

    target = list(sklearn.datasets.load_wine().target)
    source = make_task(tmp_path / "t", """data lite { from sklearn "load_wine" split ordered 0.2
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""")
    _, frames = prepared_frames(source)
    train, test, answers = frames["public/train.csv"], frames["public/test.csv"], frames["private/answers.csv"]
    cut = len(target) - round(len(target) * 0.2)
    assert list(train["y"]) == target[:cut] and list(answers["y"]) == target[cut:]
    assert sorted(list(train["Id"]) + list(test["Id"])) == list(range(len(target)))
    assert not train["Id"].is_monotonic_increasing, "ids in row order would give the order away"
    _, again = prepared_frames(source)
    assert again["public/train.csv"].equals(train), "the numbering is deterministic"


def test_folder_source_puts_private_files_aside(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from folder "files" split none
        public ["inputs.txt", "more/notes.txt"] private ["labels.txt"] }""",
                       {"files/inputs.txt": "a\n", "files/more/notes.txt": "b\n", "files/labels.txt": "secret\n"})
    prepared = prepare_data(resolve_task(str(source)), "lite")
    assert (prepared.public / "more" / "notes.txt").read_text() == "b\n"
    assert not (prepared.public / "labels.txt").exists()
    assert (prepared.private / "labels.txt").read_text() == "secret\n"


GENERATOR = '''
import pandas as pd

def frame(public_dir, private_dir, seed):
    return pd.DataFrame({"x": range(10), "y": [seed] * 10})

def files(public_dir, private_dir, seed):
    (public_dir / "inputs.txt").write_text(f"seed {seed}")
    (private_dir / "expected.txt").write_text("42")
'''


def test_generate_returning_a_table_is_split_and_given_ids(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from generate "gen.py:frame" split random 0.2 seed 5
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""", {"gen.py": GENERATOR})
    _, frames = prepared_frames(source)
    assert len(frames["public/train.csv"]) == 8 and set(frames["private/answers.csv"]["y"]) == {5}
    assert list(frames["public/train.csv"].columns) == ["Id", "x", "y"]


def test_generate_writing_files_keeps_them(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from generate "gen.py:files" split none
        public ["inputs.txt"] private ["expected.txt"] }""", {"gen.py": GENERATOR})
    prepared = prepare_data(resolve_task(str(source)), "lite")
    assert (prepared.public / "inputs.txt").read_text() == "seed 0"
    assert (prepared.private / "expected.txt").read_text() == "42"


def test_declared_checksums_are_verified(tmp_path, mlab_env):
    rows = "Id,y\n1,2\n2,3\n3,4\n4,5\n5,6\n"
    good = hashlib.sha256(rows.encode()).hexdigest()
    block = """data lite { from csv "rows.csv" split random 0.2 seed 1 id "Id" answers ["y"]
        public ["train.csv", "test.csv"] private ["answers.csv"] checksum "rows.csv" "HASH" }"""
    ok = make_task(tmp_path / "ok", block.replace("HASH", good), {"rows.csv": rows})
    prepare_data(resolve_task(str(ok)), "lite")
    bad = make_task(tmp_path / "bad", block.replace("HASH", "0" * 64), {"rows.csv": rows})
    with pytest.raises(DataError, match=f"rows.csv has SHA-256 {good}, but the task declares 0000"):
        prepare_data(resolve_task(str(bad)), "lite")


def test_install_copies_without_linking_the_cache(house_task, tmp_path):
    prepared = prepare_data(house_task, "lite")
    workspace, private = tmp_path / "ws", tmp_path / "private"
    workspace.mkdir(), private.mkdir()
    install_data(prepared, workspace, private)
    (workspace / "train.csv").write_text("changed")
    assert (prepared.public / "train.csv").read_text() != "changed"


def test_an_unreadable_parquet_file_is_a_clear_error(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from parquet "rows.parquet" split random 0.2 seed 1
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""",
                       {"rows.parquet": "not a parquet file"})
    with pytest.raises(DataError, match="data variant lite of task mini: (reading rows.parquet needs a package "
                                        "that is missing|cannot read .*rows.parquet)"):
        prepare_data(resolve_task(str(source)), "lite")


def test_a_failing_generator_is_reported_with_its_error(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from generate "gen.py:broken" split none
        public ["inputs.txt"] }""", {"gen.py": "def broken(public_dir, private_dir, seed):\n    raise ValueError('no')\n"})
    with pytest.raises(DataError, match=r"gen.py:broken failed: ValueError: no"):
        prepare_data(resolve_task(str(source)), "lite")


def test_byte_code_and_other_debris_never_reach_the_workspace(tmp_path, mlab_env):
    """A non-editable install byte-compiles the starters: what the agent sees must not change."""
    import shutil

    from mlab.data.prepare import folder_digest
    from mlab.run.folder import Run

    (tmp_path / "tasks").mkdir()
    source = tmp_path / "tasks" / "house-price.mlab"
    shutil.copy(REPO / "tasks" / "house-price.mlab", source)
    shutil.copytree(REPO / "tasks" / "house-price", tmp_path / "tasks" / "house-price",
                    ignore=shutil.ignore_patterns("__pycache__"))
    starter = tmp_path / "tasks" / "house-price" / "env"
    clean = folder_digest(starter)
    for rel in ("__pycache__/train.cpython-311.pyc", "notes/__pycache__/x.pyc", "old.pyc", "old.pyo", ".DS_Store"):
        (starter / rel).parent.mkdir(parents=True, exist_ok=True)
        (starter / rel).write_bytes(b"debris")
    assert folder_digest(starter) == clean  # the baseline's code hash ignores the debris too
    task = resolve_task(str(source))
    run = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    try:
        names = {p.relative_to(run.workspace.root).as_posix() for p in run.workspace.root.rglob("*")}
    finally:
        run.close()
    assert "train.py" in names and "notes" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo", ".DS_Store"))], names


def test_a_generators_demonstration_and_reference_solution_change_no_data_key(tmp_path, mlab_env):
    """The generator's whole folder is hashed; the demo and solution beside it make no data."""
    from mlab.data.prepare import preparation_key

    demo = {"format": "mlab-demonstration", "version": 2, "solution": "train.py",
            "steps": [{"sections": {}, "action": "Final Answer", "input": {"final_answer": "done"}}]}
    source = make_task(tmp_path / "t", """data lite { from generate "gen.py:frame" split random 0.2 seed 5
        id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""",
                       {"gen.py": GENERATOR, "demo.json": json.dumps(demo), "solution/train.py": "print(1)\n"})
    source.write_text(source.read_text().replace('  baseline run', '  demo "demo.json"\n  baseline run'))
    key = preparation_key(resolve_task(str(source)), "lite")
    (tmp_path / "t" / "solution" / "train.py").write_text("print(2)\n")
    (tmp_path / "t" / "demo.json").write_text(json.dumps({**demo, "variants": []}))
    assert preparation_key(resolve_task(str(source)), "lite") == key
    (tmp_path / "t" / "gen.py").write_text(GENERATOR + "\n# changed\n")
    assert preparation_key(resolve_task(str(source)), "lite") != key


DATED = "day,x,y\n" + "".join(f"2024-01-{d:02d},{d},{2 * d}\n" for d in range(1, 31))


@pytest.mark.parametrize("horizon", ["last 7 days", "last 1 week", "last 7d"])
def test_a_time_split_by_horizon_tests_on_the_last_days(tmp_path, mlab_env, horizon):
    """`split time "day" last 7 days`: the rows dated after the latest date minus 7 days are the test rows."""
    source = make_task(tmp_path / "t", f"""data lite {{ from csv "rows.csv" split time "day" {horizon}
        id "day" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }}""",
                       {"rows.csv": DATED}, metric='mae on "y"')
    _, frames = prepared_frames(source)
    assert list(frames["public/test.csv"]["day"]) == [f"2024-01-{d:02d}" for d in range(24, 31)]
    assert list(frames["public/train.csv"]["day"]) == [f"2024-01-{d:02d}" for d in range(1, 24)]
    assert list(frames["private/answers.csv"]["y"]) == [2 * d for d in range(24, 31)]


def test_a_horizon_that_takes_every_row_is_a_data_error(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", """data lite { from csv "rows.csv" split time "day" last 90 days
        id "day" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }""",
                       {"rows.csv": DATED}, metric='mae on "y"')
    with pytest.raises(DataError, match=r"the last 90 days of 'day' \(2024-01-01 to 2024-01-30\) hold 30 of 30 rows"):
        prepare_data(resolve_task(str(source)), "lite")
