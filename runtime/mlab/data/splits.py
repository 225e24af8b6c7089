"""Write a variant's split tables: the tables themselves are made by mlabc.data_model (the one
preparation logic the compiler's data model shares), as the tabular convention there says.

Convention for tabular sources: public[0] gets the train rows (all columns), public[1] the
test rows without the answer columns, private[0] the id column and the answer columns of
the test rows. With `split none` the whole table is public[0]. A declared validation share
(`validation 0.1`) is held out of the train rows into VALIDATION_FILE, on both sides.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError

VALIDATION_FILE = "validation.csv"  # mlabc.data_model.VALIDATION_FILE (a constant here: imported where nothing else of mlabc is)

__all__ = ["VALIDATION_FILE", "split_table", "write_split", "write_table"]


def split_table(frame, split: dict, where: str):
    """(train, test) row sets of `frame` per the declared split (mlabc.data_model.split_table);
    DataError when the split cannot be made."""
    from mlabc.data_model.tables import PrepareError, split_table as shared

    try:
        return shared(frame, split, where)
    except PrepareError as problem:
        raise DataError(str(problem)) from None


def write_table(frame, path: Path) -> None:
    """Write a table as CSV, or Parquet when the file name says so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        try:
            frame.to_parquet(path, index=False)
        except ImportError as error:
            raise DataError(f"writing {path.name} needs a Parquet engine ({error}); "
                            "install pyarrow") from None
    else:
        frame.to_csv(path, index=False)


def write_split(frame, variant, public_dir: Path, private_dir: Path, where: str) -> None:
    """Split `frame` (by its variant's view, mlab.documents.task.Variant) and write public and private
    files by the tabular convention."""
    from mlabc.data_model.tables import PrepareError, split_frames

    from mlab.documents.view import thaw
    try:
        public, private = split_frames(frame, thaw(variant), where)  # the compiler's data model reads the IR form
    except PrepareError as problem:
        raise DataError(str(problem)) from None
    for folder, tables in ((public_dir, public), (private_dir, private)):
        for name, table in tables.items():
            write_table(table, folder / name)
