"""What every source's loader shares: the cache folder of its library, a downloaded table read,
a source's own train/test split written by the tabular convention, the files a conversion writes.

remote.py imports each loader by name; the loaders import this module, never remote.py.
"""
from __future__ import annotations

from pathlib import Path

from mlab.cache import cache_root
from mlab.errors import DataError

TABLE_SUFFIXES = (".csv", ".parquet")


def downloads_cache() -> Path:
    """Where downloads are kept: inside the mlab cache, which scripts never see."""
    return cache_root() / "downloads"


def library_cache(kind: str) -> Path:
    """A folder where a source's own library keeps its downloads (archives, its cache)."""
    folder = downloads_cache() / kind / ".library-cache"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def find_table(folder: Path, where: str, preferred: str = "train"):
    """The download's table: its only CSV/Parquet file, else the one named `preferred`."""
    tables = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TABLE_SUFFIXES)
    if not tables:
        raise DataError(f"{where}: the download holds no CSV or Parquet table; declare "
                        f"`prepare \"<task>/make_data.py:function\"` to convert its files")
    if len(tables) > 1:
        named = [p for p in tables if p.stem.lower() == preferred]
        if len(named) != 1:
            shown = ", ".join(p.relative_to(folder).as_posix() for p in tables[:10])
            raise DataError(f"{where}: the download holds several tables ({shown}) and no single "
                            f"{preferred}.csv; declare `prepare \"<task>/make_data.py:function\"` to choose")
        tables = named
    return read_table(tables[0], where)


def read_table(path: Path, where: str):
    """A downloaded CSV, Parquet or JSON Lines file as a DataFrame."""
    import pandas as pd

    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    except ImportError as error:
        raise DataError(f"{where}: reading {path.name} needs a package that is missing ({error})") from None
    except (ValueError, OSError) as error:
        raise DataError(f"{where}: cannot read the downloaded {path.name}: {error}") from None


def write_given_split(train, test, variant, public: Path, private: Path, where: str) -> None:
    """Write a source's own train/test split by the tabular convention (ids added where missing)."""
    from mlab.data.splits import write_table

    answers = list(variant.answers)
    id_column = variant.id
    names, hidden = list(variant.public), list(variant.private)
    if len(names) != 2 or len(hidden) != 1 or not id_column:
        raise DataError(f"{where}: a source's own train/test split is written as two public files (train, "
                        f"test) and one private file (answers), with an `id` column; found public {names}, "
                        f"private {hidden}, id {id_column!r}")
    missing = [c for c in answers if c not in test.columns or c not in train.columns]
    if missing:
        raise DataError(f"{where}: answer column(s) {', '.join(missing)} are not in the data; columns: "
                        + ", ".join(map(str, test.columns[:30])))
    train, test = train.reset_index(drop=True), test.reset_index(drop=True)
    if id_column not in train.columns or id_column not in test.columns:
        train = train.drop(columns=[id_column], errors="ignore")
        test = test.drop(columns=[id_column], errors="ignore")
        train.insert(0, id_column, range(len(train)))
        test.insert(0, id_column, range(len(train), len(train) + len(test)))
    write_table(train, public / names[0])
    write_table(test.drop(columns=answers), public / names[1])
    write_table(test[[id_column, *answers]], private / hidden[0])


def require_files(variant, suffixes: tuple[str, ...], count: int, convention: str, where: str) -> list[str]:
    """The variant's public files, checked against what a source's conversion writes."""
    names = list(variant.public)
    if len(names) != count or not all(n.lower().endswith(s) for n, s in zip(names, suffixes)):
        raise DataError(f"{where}: this source is converted to {convention}; the variant declares public "
                        f"{names}. Declare `prepare \"<task>/make_data.py:function\"` for another layout")
    if len(variant.private) != 1 or not variant.id or len(variant.answers) != 1:
        raise DataError(f"{where}: this source's conversion writes one private answers file and needs an "
                        "`id` column and one answer column")
    return names
