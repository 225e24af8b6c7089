"""A generator's data checked twice: `mlabc check` asks a generator that takes `sample` for about
SAMPLE_ROWS rows a table (mlabc.data_model.build), and preparation checks all of its rows with every
data-model check (mlab.data.faults.preparation_codes) before any script runs. A mistake the sample
shows is reported by the check at its declaration; one that only all the rows show is refused at
preparation, as the task's error, under the same code.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mlab.build import compile_into_cache
from mlab.data.prepare import prepare_data
from mlab.errors import DataError
from mlabc.api import check_paths
from mlabc.data_model.build import SAMPLE_ROWS

ERRORS = Path(__file__).resolve().parents[1] / "compiler" / "errors"
ROWS = 3 * SAMPLE_ROWS  # the whole variant; a mistake "late" lies past any sample

GENERATORS = f'''
import pandas as pd

ROWS = {ROWS}


def _write(public, private, count, repeat_at=None, leak_from=None):
    """train.csv, test.csv (id, x, hint) and answers.csv (id, y) of `count` test rows; the id of row
    `repeat_at` repeats the first one, and from `leak_from` rows on, the test's `hint` recodes y."""
    ids = list(range(count))
    answers = [(i * 7) % 5 for i in range(count)]
    hint = [(i * 3) % 4 for i in range(count)]
    if repeat_at is not None and count > repeat_at:
        ids[repeat_at] = ids[0]
    if leak_from is not None and count > leak_from:
        hint = [f"c{{value}}" for value in answers]
    pd.DataFrame({{"id": range(10_000, 10_060), "x": range(60), "y": [i % 5 for i in range(60)]}}).to_csv(
        public / "train.csv", index=False)
    pd.DataFrame({{"id": ids, "x": [i * 0.5 for i in range(count)], "hint": hint}}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({{"id": ids, "y": answers}}).to_csv(private / "answers.csv", index=False)


def _count(sample):
    return ROWS if sample is None else min(sample, ROWS)


def sound(public, private, seed, sample=None):
    _write(public, private, _count(sample))


def repeats_an_id_early(public, private, seed, sample=None):
    _write(public, private, _count(sample), repeat_at=5)


def repeats_an_id_late(public, private, seed, sample=None):
    _write(public, private, _count(sample), repeat_at=ROWS - 10)


def repeats_an_id_late_and_takes_no_sample(public, private, seed):
    _write(public, private, ROWS, repeat_at=ROWS - 10)


def leaks_the_answer_late(public, private, seed, sample=None):
    _write(public, private, _count(sample), leak_from=ROWS // 2)


def crashes_late(public, private, seed, sample=None):
    if sample is None:
        raise MemoryError("the whole variant does not fit")
    _write(public, private, _count(sample))
'''


def _task(tmp_path: Path, generator: str) -> Path:
    folder = tmp_path / "case"
    if not folder.exists():
        folder.mkdir()
        shutil.copytree(ERRORS / "files" / "env", folder / "env")
        (folder / "gen.py").write_text(GENERATORS, encoding="utf-8")
    (folder / "t.mlab").write_text(f'''task t {{
  title "Generated" category canonical starter "env"
  problem "Predict y, then write submission.csv with the columns id and y."
  data lite {{
    from generate "gen.py:{generator}"
    split none
    id "id"
    answers ["y"]
    public ["train.csv", "test.csv"] private ["answers.csv"]
  }}
  submission "submission.csv" columns ["id", "y"]
  metric accuracy on "y" baseline run "train.py"
}}
''', encoding="utf-8")
    return folder / "t.mlab"


def _checked(path: Path) -> list[tuple[str, int]]:
    """(code, line) of every diagnostic `mlabc check` reports on the file."""
    return [(d.code, d.span.line) for d in check_paths([str(path)], data=True).diagnostics]


# generator → (what `mlabc check` reports: code and line, what preparation refuses it for)
CASES = {
    "sound": ([], None),
    "repeats_an_id_early": ([("E560", 7)], r"the answers are not usable: private answers.csv repeats the id\(s\) '0' \(E560\)"),
    "repeats_an_id_late": ([], r"the answers are not usable: private answers.csv repeats the id\(s\) '0' \(E560\)"),
    "repeats_an_id_late_and_takes_no_sample": ([("E560", 7)], r"repeats the id\(s\) '0' \(E560\)"),
    "leaks_the_answer_late": ([], r"the prepared data breaks the task's declarations: the public test table's "
                                  r"`hint` maps one to one onto the answers of `y` \(data `lite`\): a submission "
                                  r"can copy it \(E565: drop `hint` from the public test table\)"),
    "crashes_late": ([], r"gen.py:crashes_late failed: MemoryError: the whole variant does not fit \(E566\)"),
}


@pytest.mark.parametrize("generator", sorted(CASES))
def test_a_generator_mistake_is_caught_at_check_or_else_at_preparation_under_its_code(generator, tmp_path,
                                                                                      mlab_env):
    reported, refused = CASES[generator]
    path = _task(tmp_path, generator)
    assert _checked(path) == reported
    task = compile_into_cache([path]).task("t")
    if refused is None:
        prepared = prepare_data(task, "lite", tmp_path / "data")
        assert (prepared.private / "answers.csv").read_text().count("\n") == ROWS + 1  # all rows, not the sample
        return
    with pytest.raises(DataError, match=r"^data variant lite of task t: .*" + refused):
        prepare_data(task, "lite", tmp_path / "data")
    assert not list((tmp_path / "data").glob("t-lite-*"))  # nothing kept prepared

