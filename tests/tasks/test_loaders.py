"""Full variants with the download faked at the boundary (the function that calls each library).

What runs for real: the download cache and its record, checksum checks, unzipping, the
conversion of each source into the task's files and the preparation path the lite data uses.
"""
from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from task_helpers import REPO

from mlab.documents.view import thaw
from mlab.cli import main as mlab_main
from mlab.data.prepare import prepare_data
from mlab.errors import DataError
from mlab.installation import install_hint


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache of this test's own, so each test downloads afresh."""
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


class FakeKaggle:
    """Stands in for kaggle's KaggleApi: serves one competition as a zip of files."""

    def __init__(self, files: dict[str, bytes], status: int | None = None):
        self.files, self.status, self.calls = files, status, []

    def competition_download_files(self, competition, path, quiet=True):
        self.calls.append(competition)
        if self.status is not None:
            error = RuntimeError(f"({self.status}) Reason: Forbidden")
            error.status = self.status
            raise error
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as bundle:
            for name, data in self.files.items():
                bundle.writestr(name, data)
        (Path(path) / f"{competition}.zip").write_bytes(buffer.getvalue())


def serve_kaggle(monkeypatch, files, status=None) -> FakeKaggle:
    fake = FakeKaggle(files, status)
    monkeypatch.setattr("mlab.data.loaders.kaggle.kaggle_api", lambda: fake)
    return fake


def houses_download() -> dict[str, bytes]:
    houses = (REPO / "tasks" / "house-price" / "lite" / "houses.csv").read_bytes()
    return {"train.csv": houses, "test.csv": b"Id,LotArea\n1,100\n", "sample_submission.csv": b"Id,SalePrice\n",
            "data_description.txt": b"columns\n"}


def files_of(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_kaggle_table_is_downloaded_once_and_split_like_the_lite_data(task_of, own_cache, monkeypatch, capsys,
                                                                      suite_build):
    fake = serve_kaggle(monkeypatch, houses_download())
    assert mlab_main(["prepare", "house-price", "--data", "full", "--build", str(suite_build.dir)]) == 0
    out = capsys.readouterr().out
    assert "public: test.csv, train.csv" in out and "private: answers.csv" in out
    assert mlab_main(["prepare", "house-price", "--data", "full", "--build", str(suite_build.dir)]) == 0
    assert "already prepared" in capsys.readouterr().out
    assert fake.calls == ["home-data-for-ml-course"]
    full = prepare_data(task_of("house-price"), "full")
    lite = prepare_data(task_of("house-price"), "lite")  # same table, same declared split
    assert files_of(full.public) == files_of(lite.public)
    assert files_of(full.private) == files_of(lite.private)
    assert (own_cache / "downloads" / "kaggle" / "home-data-for-ml-course" / "download.json").is_file()


def test_rules_not_accepted_say_where_to_accept_them(own_cache, monkeypatch, capsys, suite_build):
    fake = serve_kaggle(monkeypatch, {}, status=403)
    assert mlab_main(["prepare", "spaceship-titanic", "--data", "full", "--build", str(suite_build.dir)]) == 1
    err = capsys.readouterr().err
    assert "has not accepted the competition's rules" in err
    assert "https://www.kaggle.com/competitions/spaceship-titanic/rules" in err
    assert "Traceback" not in err
    assert mlab_main(["prepare", "spaceship-titanic", "--data", "full", "--build", str(suite_build.dir)]) == 1
    assert fake.calls == ["spaceship-titanic", "spaceship-titanic"]  # a failure is not cached


def test_missing_kaggle_credentials_are_explained(tmp_path, monkeypatch):
    from mlab.data.loaders.kaggle import credentials_problem

    monkeypatch.delenv("KAGGLE_USERNAME", raising=False)
    monkeypatch.delenv("KAGGLE_KEY", raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "kaggle"))
    assert f"save it as {tmp_path / 'kaggle' / 'kaggle.json'}" in credentials_problem()
    monkeypatch.setenv("KAGGLE_USERNAME", "someone")
    monkeypatch.setenv("KAGGLE_KEY", "secret")
    assert credentials_problem() is None


@pytest.mark.parametrize("task, extra, package", [("house-price", "kaggle", "kaggle"), ("imdb", "hf", "datasets"),
                                                   ("cifar10", "vision", "torchvision"), ("ogbn-arxiv", "ogb", "ogb")])
def test_a_missing_loader_package_names_its_extra(task, extra, package, own_cache, capsys, suite_build):
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    assert mlab_main(["prepare", task, "--data", "full", "--build", str(suite_build.dir)]) == 1
    err = capsys.readouterr().err
    assert "(not available offline); use --data lite" in err and install_hint(extra) in err


def checksummed_house_price(digest: str):
    def edit(root):
        path = root / "house-price.mlab"
        text = path.read_text().replace('from    kaggle "home-data-for-ml-course"',
                                        f'from    kaggle "home-data-for-ml-course"\n    checksum "train.csv" "{digest}"')
        path.write_text(text)
    return edit


def test_declared_checksums_are_verified_before_the_download_is_kept(task_copy, own_cache, monkeypatch):
    import hashlib

    files = houses_download()
    good = hashlib.sha256(files["train.csv"]).hexdigest()
    fake = serve_kaggle(monkeypatch, files)
    bad_task = task_copy("house-price", checksummed_house_price("0" * 64))
    with pytest.raises(DataError, match=r"the downloaded train.csv has SHA-256 [0-9a-f]{64}, but the task declares 0{64}"):
        prepare_data(bad_task, "full")
    assert not (own_cache / "downloads" / "kaggle" / "home-data-for-ml-course").exists()
    good_task = task_copy("house-price", checksummed_house_price(good))
    assert (prepare_data(good_task, "full").private / "answers.csv").is_file()
    assert len(fake.calls) == 2


def test_a_multi_table_competition_goes_through_the_tasks_prepare_function(task_of, own_cache, monkeypatch):
    spec = importlib.util.spec_from_file_location("parkinsons_make", REPO / "tasks" / "parkinsons-disease" / "make_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tables = module.generate_tables(3)
    serve_kaggle(monkeypatch, {f"train_{name}.csv": tables[key].to_csv(index=False).encode()
                               for name, key in (("clinical_data", "clinical"), ("proteins", "proteins"),
                                                 ("peptides", "peptides"))})
    task = task_of("parkinsons-disease")
    done = prepare_data(task, "full")
    assert sorted(p.name for p in done.public.iterdir()) == sorted(task.variant("full").public)
    train = pd.read_csv(done.public / "train_clinical_data.csv")
    test = pd.read_csv(done.public / "test_clinical_data.csv")
    assert not set(train.patient_id) & set(test.patient_id)  # split by patient
    answers = pd.read_csv(done.private / "answers.csv")
    assert list(answers.columns) == ["prediction_id", "rating"] and len(answers) > 0


class FakeSplit:
    """Stands in for a `datasets.Dataset`: what the loader calls on it."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def to_json(self, path):
        self.frame.to_json(path, orient="records", lines=True)


def test_a_hugging_face_dataset_keeps_its_own_train_and_test_split(task_of, own_cache, monkeypatch):
    def reviews(count, offset):
        return pd.DataFrame({"text": [f"review number {offset + i}, with a comma" for i in range(count)],
                             "label": [(offset + i) % 2 for i in range(count)]})

    splits = {"train": FakeSplit(reviews(30, 0)), "test": FakeSplit(reviews(10, 100)),
              "unsupervised": FakeSplit(reviews(5, 500))}
    monkeypatch.setattr("mlab.data.loaders.hf.load_dataset", lambda name, cache_dir: splits)
    done = prepare_data(task_of("imdb"), "full")
    train, test = pd.read_csv(done.public / "train.csv"), pd.read_csv(done.public / "test.csv")
    answers = pd.read_csv(done.private / "answers.csv")
    assert list(train.columns) == ["id", "text", "label"] and list(test.columns) == ["id", "text"]
    assert (len(train), len(test)) == (30, 10)
    assert not set(train.id) & set(test.id)
    assert answers.merge(test, on="id").text.str.endswith("with a comma").all()
    assert list(answers.label) == [(100 + i) % 2 for i in range(10)]


class FakeImages:
    """Stands in for a torchvision dataset: `data` (N, 32, 32, 3) uint8 and `targets` (a list)."""

    def __init__(self, count: int, seed: int):
        rng = np.random.default_rng(seed)
        self.data = rng.integers(0, 256, size=(count, 32, 32, 3), dtype=np.uint8)
        self.targets = rng.integers(0, 10, size=count).tolist()


def test_torchvision_images_are_written_in_the_lite_layout(task_of, prepared, own_cache, monkeypatch):
    parts = {True: FakeImages(20, 1), False: FakeImages(8, 2)}
    monkeypatch.setattr("mlab.data.loaders.vision.load_torchvision", lambda name, root, train: parts[train])
    lite = prepared("cifar10")
    done = prepare_data(task_of("cifar10"), "full")
    for name in ("train.npz", "test.npz"):
        with np.load(done.public / name) as full_arrays, np.load(lite.public / name) as lite_arrays:
            assert sorted(full_arrays.files) == sorted(lite_arrays.files)
    with np.load(done.public / "test.npz") as test:
        assert np.array_equal(test["images"], parts[False].data)
        ids = test["ids"]
    answers = pd.read_csv(done.private / "answers.csv")
    assert list(answers.id) == list(ids) and list(answers.label) == parts[False].targets


class FakeGraph:
    """Stands in for OGB's NodePropPredDataset of a citation graph with years."""

    def __init__(self, nodes: int = 12):
        rng = np.random.default_rng(0)
        self.graph = {"node_feat": rng.normal(size=(nodes, 4)).astype(np.float32),
                      "edge_index": np.array([[1, 2, 3, 5, 8], [0, 0, 1, 2, 3]]),
                      "node_year": np.arange(nodes).reshape(-1, 1) + 2010}
        self.labels = (np.arange(nodes) % 3).reshape(-1, 1)

    def __getitem__(self, index):
        return self.graph, self.labels

    def get_idx_split(self):
        return {"train": np.arange(0, 6), "valid": np.arange(6, 9), "test": np.arange(9, 12)}


def test_an_ogb_graph_becomes_node_edge_and_label_tables(task_of, own_cache, monkeypatch):
    monkeypatch.setattr("mlab.data.loaders.ogb.load_ogb", lambda name, root: FakeGraph())
    done = prepare_data(task_of("ogbn-arxiv"), "full")
    nodes = pd.read_csv(done.public / "nodes.csv")
    train, test = pd.read_csv(done.public / "train.csv"), pd.read_csv(done.public / "test.csv")
    answers = pd.read_csv(done.private / "answers.csv")
    assert list(nodes.columns) == ["id", "year", "f0", "f1", "f2", "f3"] and len(nodes) == 12
    assert (len(train), len(test)) == (9, 3) and list(test.columns) == ["id"]
    years = nodes.set_index("id").year
    assert years[answers.id].min() > years[train.id].max()  # the newest papers are to classify
    edges = pd.read_csv(done.public / "edges.csv")
    assert list(edges.columns) == ["source", "target"] and len(edges) == 5
    assert (years[edges.source].to_numpy() > years[edges.target].to_numpy()).all()  # ids moved together


def test_checksums_printed_by_prepare_are_the_ones_a_task_can_record(task_copy, own_cache, monkeypatch, capsys):
    serve_kaggle(monkeypatch, houses_download())
    plain = task_copy("house-price", lambda root: None)
    assert mlab_main(["prepare", str(plain.root / "house-price.mlab"), "--data", "full"]) == 0
    assert ("checksums: none declared; `mlab prepare house-price --data full --checksums` prints them"
            in capsys.readouterr().out)
    assert mlab_main(["prepare", str(plain.root / "house-price.mlab"), "--data", "full", "--checksums"]) == 0
    out = capsys.readouterr().out
    assert "# SHA-256 of the download of kaggle 'home-data-for-ml-course' (4 files)" in out
    lines = [line for line in out.splitlines() if line.startswith("checksum ")]
    assert [line.split('"')[1] for line in lines] == sorted(houses_download())

    def record(root):
        path = root / "house-price.mlab"
        text = path.read_text().replace('from    kaggle "home-data-for-ml-course"',
                                        'from    kaggle "home-data-for-ml-course"\n    ' + "\n    ".join(lines))
        path.write_text(text)

    recorded = task_copy("house-price", record)
    assert dict(recorded.variant("full").checksums) == {line.split('"')[1]: line.split('"')[3] for line in lines}
    assert mlab_main(["prepare", str(recorded.root / "house-price.mlab"), "--data", "full"]) == 0
    assert "checksums: 4 declared, all verified" in capsys.readouterr().out


def _houses(edit) -> dict[str, bytes]:
    files = houses_download()
    frame = pd.read_csv(io.BytesIO(files["train.csv"]))
    edit(frame)
    files["train.csv"] = frame.to_csv(index=False).encode()
    return files


def _blank_prices(frame):
    frame.loc[frame.index % 50 == 0, "SalePrice"] = None


def _price_in_dollars_and_cents(frame):
    frame["PriceCents"] = frame["SalePrice"] * 100  # a public column that recodes the answer


@pytest.mark.parametrize("edit, said", [
    (_blank_prices, "answers of `SalePrice` (data `full`) are blank (E561: a blank answer can never be matched"),
    (_price_in_dollars_and_cents, "(E565: "),
], ids=["blank answers", "a public column recodes the answer"])
def test_a_remote_full_variant_with_a_data_mistake_is_refused_at_preparation(edit, said, own_cache, monkeypatch,
                                                                             capsys, suite_build):
    """mlabc check cannot make a remote variant; preparation makes it and applies the data model's
    checks (every one, leaks included) before any script runs: `mlab prepare` (as every run's
    preparation) fails with the task's error naming the variant, the column and the fix, and
    nothing is left prepared for a run to use."""
    serve_kaggle(monkeypatch, _houses(edit))
    assert mlab_main(["prepare", "house-price", "--data", "full", "--build", str(suite_build.dir)]) != 0
    err = capsys.readouterr().err
    assert "data variant full of task house-price: the prepared data breaks the task's declarations: " in err
    assert said in err
    assert not [p for p in (own_cache / "data").glob("house-price-full-*")]
