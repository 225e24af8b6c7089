"""Every lite variant prepares offline, deterministically, with answers on the private side only."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from task_helpers import TASKS

from mlab.scoring.metrics.values import label_key

BUNDLED_LIMIT = 20 * 1024 * 1024


def content_digest(path: Path) -> str:
    """The hash of a file's content: .npz archives by their arrays (zip entries carry write times)."""
    digest = hashlib.sha256()
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            for key in sorted(archive.files):
                array = archive[key]
                digest.update(f"{key}{array.dtype}{array.shape}".encode())
                digest.update(np.ascontiguousarray(array).tobytes())
    else:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def folder_digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): content_digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", TASKS)
def test_lite_variant_prepares_the_same_files_twice(name, task_of, prepared, tmp_path):
    from mlab.data.prepare import prepare_data

    first = prepared(name)
    second = prepare_data(task_of(name), "lite", cache_dir=tmp_path / "another-cache")
    assert not second.reused
    assert first.key == second.key
    for side in ("public", "private"):
        assert folder_digests(getattr(first, side)) == folder_digests(getattr(second, side)), side
    from mlab.data.vocabulary import VOCABULARY_DIR, vocabulary_files

    variant = task_of(name).variant("lite")
    assert sorted(folder_digests(first.public)) == sorted(variant.public)
    kept = [f"{VOCABULARY_DIR}/{rel}" for rel in vocabulary_files(task_of(name))]  # the task's copies (fathomnet)
    assert sorted(folder_digests(first.private)) == sorted([*variant.private, *kept])


@pytest.mark.parametrize("name", TASKS)
def test_no_answer_column_reaches_a_public_test_file(name, task_of, prepared):
    import pandas as pd

    variant = task_of(name).variant("lite")
    for path in prepared(name).public.iterdir():
        if path.suffix == ".csv" and "test" in path.name:
            header = list(pd.read_csv(path, nrows=0).columns)
            assert not set(header) & set(variant.answers), f"{path.name} holds an answer column"


def test_bundled_task_data_stays_under_the_size_limit():
    from task_helpers import REPO

    total = sum(p.stat().st_size for p in (REPO / "tasks").rglob("*")
                if p.is_file() and "__pycache__" not in p.parts)
    assert total < BUNDLED_LIMIT


def test_a_file_beside_the_generator_changes_the_preparation_key(task_copy):
    from mlab.data.prepare import preparation_key

    task = task_copy("vectorization")
    before = preparation_key(task, "lite")
    cache = task.root / "vectorization" / "__pycache__"
    cache.mkdir()
    (cache / "make_data.cpython-311.pyc").write_bytes(b"compiled")
    assert preparation_key(task, "lite") == before  # compiled caches do not count
    (task.root / "vectorization" / "shapes.txt").write_text("10 64 64 3\n")
    assert preparation_key(task, "lite") != before


def test_nineteen_digit_ids_stay_distinct():
    first, second = "1000000000000000001", "1000000000000000002"
    assert label_key(first) != label_key(second)
    assert label_key(first) == label_key(" 1000000000000000001 ") == label_key(1000000000000000001)
    assert label_key("7") == label_key(7.0) == label_key("7.0")
