"""Remote data sources: download once into the cache, verify, and convert into a variant's files.

A `full` variant names a remote source (`kaggle`, `huggingface`, `torchvision`, `ogb`). The
first preparation downloads it through that source's package (an optional extra, imported
only here, on first use) into $MLAB_CACHE/downloads/<kind>/<name>/files, records the SHA-256
of every downloaded file in download.json, checks the checksums the task declares, and only
then publishes the folder. Later preparations reuse it.

The downloaded files become the variant's public and private files by the same path as the
lite data (mlab.data): the task's own `prepare "file.py:function"` when it declares one,
else the source's conversion here:

- kaggle: the competition's table (its only CSV or Parquet file, else `train.csv`) is split
  by the declared split, exactly as a bundled table (public[0] train, public[1] test without
  answers, private[0] id + answers);
- huggingface: with `split none` and a dataset that has `train` and `test` splits, the
  dataset's own split is kept (ids added where missing: train first, then test); otherwise
  the `train` split (or the only one) is split like a table;
- torchvision: an image classification set: public[0] an .npz of `images` and `labels`,
  public[1] an .npz of `images` and `ids`, private[0] the ids and the answer column;
- ogb: a node property prediction graph: nodes (id, year, f0...), edges (source, target),
  train (id, label: OGB's train and validation nodes), test (id), answers (id, label).
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlab.cache import file_sha256
from mlab.errors import DataError

from .files import downloads_cache

REMOTE_SOURCES = ("kaggle", "huggingface", "torchvision", "ogb")
LOADER_MODULES = {"kaggle": "kaggle", "huggingface": "hf",
                  "torchvision": "vision", "ogb": "ogb"}
DOWNLOADED = "download.json"


@dataclass(frozen=True)
class Download:
    """A downloaded source in the cache: its files and the SHA-256 of each."""

    folder: Path
    files: dict[str, str]

    @property
    def digest(self) -> str:
        """One hash of the whole download (names and contents), for the preparation key."""
        text = "".join(f"{name}\0{digest}\n" for name, digest in sorted(self.files.items()))
        return hashlib.sha256(text.encode()).hexdigest()


def _folder_name(value: str) -> str:
    """A file name for a source's name (Hugging Face names hold a slash)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "--", value).strip("-") or "source"


def loader_module(kind: str):
    """The module that downloads and converts a source kind (imported on first use)."""
    if kind not in LOADER_MODULES:
        raise DataError(f"unknown remote source kind {kind!r}; known: {', '.join(REMOTE_SOURCES)}")
    return importlib.import_module(f"mlab.data.loaders.{LOADER_MODULES[kind]}")


def fetch_source(kind: str, value: str, checksums: dict[str, str], where: str) -> Download:
    """The downloaded files of a remote source: from the cache, else downloaded now and verified."""
    folder = downloads_cache() / kind / _folder_name(value)
    if (folder / DOWNLOADED).is_file():
        download = _read_download(folder, where)
        _check_download(download, checksums, where)
        return download
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{_folder_name(value)}-", dir=folder.parent))
    except OSError as error:
        raise DataError(f"cannot create the download cache in {folder.parent}: {error.strerror or error}") from None
    try:
        files = staging / "files"
        files.mkdir()
        try:
            loader_module(kind).download(value, files, where)
        except DataError as problem:
            raise DataError(f"{where} needs {kind} {value!r} (not available offline); use --data lite, "
                            f"or to download it: {problem}") from None
        listed = {p.relative_to(files).as_posix(): file_sha256(p) for p in sorted(files.rglob("*")) if p.is_file()}
        if not listed:
            raise DataError(f"{where}: downloading {kind} {value!r} gave no files")
        download = Download(folder / "files", listed)
        _check_download(Download(files, listed), checksums, where)
        (staging / DOWNLOADED).write_text(json.dumps({"kind": kind, "value": value, "files": listed},
                                                     indent=2) + "\n", encoding="utf-8")
        try:
            os.rename(staging, folder)
        except OSError:
            if not (folder / DOWNLOADED).is_file():  # not a concurrent download that finished first
                raise
        return download
    except OSError as error:
        raise DataError(f"{where}: cannot store the download of {kind} {value!r}: {error}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _read_download(folder: Path, where: str) -> Download:
    try:
        record = json.loads((folder / DOWNLOADED).read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in record["files"].items()}
    except (OSError, ValueError, KeyError, AttributeError) as error:
        raise DataError(f"{where}: the download record {folder / DOWNLOADED} is damaged ({error}); "
                        f"delete {folder} and prepare again") from None
    missing = [name for name in files if not (folder / "files" / name).is_file()]
    if missing:
        raise DataError(f"{where}: the cached download in {folder} lacks {', '.join(missing[:5])}; "
                        f"delete {folder} and prepare again")
    return Download(folder / "files", files)


def _check_download(download: Download, checksums: dict[str, str], where: str) -> None:
    """Declared checksums of downloaded files must match (names not downloaded are checked later)."""
    for name, expected in checksums.items():
        actual = download.files.get(name)
        if actual is not None and actual != expected:
            raise DataError(f"{where}: the downloaded {name} has SHA-256 {actual}, but the task declares "
                            f"{expected}; the data changed upstream or the download was corrupted")


# -- conversion: the same writers as the lite data ------------------------------------------

def convert(kind: str, download: Download, variant, public: Path, private: Path,
            seed: int, where: str) -> None:
    """Write a variant's public and private files from a download by its source's convention."""
    loader_module(kind).convert(download.folder, variant, public, private, seed, where)
