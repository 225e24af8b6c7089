"""The `from sklearn` sources: each accepted name loads the table that the compiler's list says
(feature columns, then the target, renamed to the one answers column), and docs/language.md
shows the list as sklearn_sources_table() writes it."""
from pathlib import Path

import pytest

from mlabc.lower.data_files import SKLEARN_DATASETS, sklearn_sources_table
from needs import module

DOCS = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def test_the_docs_show_the_table_of_sklearn_sources():
    assert sklearn_sources_table() in DOCS.read_text(encoding="utf-8"), \
        "docs/language.md: paste sklearn_sources_table() under 'Sources from scikit-learn'"


@pytest.mark.parametrize("loader", sorted(SKLEARN_DATASETS))
def test_each_sklearn_source_gives_the_columns_the_compiler_lists(loader, tmp_path, monkeypatch):
    module("sklearn", "scikit-learn, a dependency of mlab")
    from mlab.data.prepare import sklearn_frame
    from mlab.documents.task import Variant

    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path))  # the bundled sets read nothing from here
    source = SKLEARN_DATASETS[loader]
    assert loader.startswith("load_")
    answers = ["label"] if source.targets == ("target",) else list(source.targets)
    variant = Variant.of({"source": {"kind": "sklearn", "value": loader}, "answers": answers,
                          "split": {"method": "random"}})
    frame = sklearn_frame(loader, variant, "data lite")
    assert list(frame.columns) == [*source.features, *answers]
    assert len(frame) == source.rows
