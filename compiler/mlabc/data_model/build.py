"""A variant made in memory at check time, from a source the compiler can reach offline.

Bundled tables (`from csv`, `from parquet`), scikit-learn's bundled sets and folders are read and
split here by the runtime's own logic (tables.py); a generator (`from generate`) runs as at
preparation, into a temporary folder, and is asked for a sample when it takes one: a generator
function with a `sample` parameter gets `sample=SAMPLE_ROWS` and writes the same files, columns,
types and classes with about that many rows a table (what the checks read), instead of the whole
variant. Preparation checks every generator variant's real data again, all checks (mlab.data.faults),
so what only all the rows can show (an id repeated past the sample) is still the task's error
before any script runs. A generator variant named `full` is left to preparation
(by convention it downloads), as are remote sources: the runtime applies the same checks to them
once prepared, before any script runs.

The model of a variant is kept in the user cache ($MLAB_CACHE/mlabc/data-models) under the
SHA-256 of its source's bytes (the generator's whole folder), its declaration and this package's
code, so a second check of unchanged data reads a small JSON document.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from ..resources import cache_root, store_in_cache
from .model import DataModel, profile_tables, read_prepared
from .tables import PrepareError, add_id_column, generate_seed, split_frames

LOCAL_KINDS = ("csv", "parquet", "sklearn", "folder", "generate")
SAMPLE_ROWS = 100  # rows a table the check asks of a generator that takes `sample`
DEBRIS = ("__pycache__", ".pyc", ".DS_Store")


class ModelError(Exception):
    """The variant could not be made: the message says why (the task's fault)."""


@functools.cache
def code_digest() -> bytes:
    """The SHA-256 of this package's code (the model, the checks, the split logic)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.digest()


def modelled(name: str, variant: dict) -> bool:
    """Is this variant made at check time (an offline source, not a `prepare` hook, not `full`)?"""
    kind = variant["source"]["kind"]
    return kind in LOCAL_KINDS and not variant.get("prepare") and not (kind == "generate" and name == "full")


def _file_digest(path: Path) -> str:
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file() and not any(d in p.as_posix() for d in DEBRIS)):
        digest.update(item.relative_to(path).as_posix().encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


def _source_digest(root: Path, source: dict) -> str:
    kind = source["kind"]
    if kind == "generate":
        return _file_digest((root / source["file"]).parent)
    if kind == "sklearn":
        from importlib.metadata import version

        return "scikit-learn " + version("scikit-learn")
    return _file_digest(root / source["value"])


def model_variant(root: Path, name: str, variant: dict) -> DataModel:
    """The model of a variant made from its offline source (`root`: the task's folder); ModelError
    when the source cannot be read or made as declared."""
    try:
        key = hashlib.sha256(code_digest() + _source_digest(root, variant["source"]).encode()
                             + json.dumps(variant, sort_keys=True, default=str).encode()).hexdigest()
    except OSError as error:
        raise ModelError(f"cannot read the source: {error}") from None
    try:
        entry: Path | None = cache_root() / "mlabc" / "data-models" / key[:2] / f"{key}.json"
    except (OSError, RuntimeError):
        entry = None
    if entry is not None:
        try:
            return DataModel.from_json(json.loads(entry.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    model = _make(root, name, variant)
    if entry is not None:
        store_in_cache(entry, json.dumps(model.to_json()).encode())
    return model


def _make(root: Path, name: str, variant: dict) -> DataModel:
    where = f"data `{name}`"
    source = variant["source"]
    kind = source["kind"]
    try:
        if kind in ("csv", "parquet"):
            import pandas as pd

            reader = pd.read_csv if kind == "csv" else pd.read_parquet
            try:
                frame = reader(root / source["value"])
            except (ValueError, OSError, ImportError) as error:
                raise ModelError(f"cannot read {source['value']}: {error}") from None
            return _split_model(add_id_column(frame, variant), variant, where)
        if kind == "sklearn":
            return _split_model(_sklearn_frame(source["value"], variant), variant, where)
        if kind == "folder":
            return _folder_model(root / source["value"], variant)
        return _generated_model(root, variant, where)
    except PrepareError as problem:
        raise ModelError(str(problem).removeprefix(where + ": ")) from None


def _split_model(frame, variant: dict, where: str) -> DataModel:
    public, private = split_frames(frame, variant, where)
    return profile_tables(public, private, variant, [f"public/{n}" for n in public] + [f"private/{n}" for n in private])


def _sklearn_frame(loader_name: str, variant: dict):
    import sklearn.datasets

    frame = getattr(sklearn.datasets, loader_name)(as_frame=True).frame.copy()
    answers = list(variant.get("answers") or [])
    if len(answers) == 1 and answers[0] not in frame.columns and "target" in frame.columns:
        frame = frame.rename(columns={"target": answers[0]})
    return add_id_column(frame, variant)


def _folder_model(folder: Path, variant: dict) -> DataModel:
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="mlabc-data-"))
    try:
        hidden = set(variant.get("private") or [])
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                target = scratch / ("private" if rel in hidden else "public") / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
        (scratch / "public").mkdir(exist_ok=True)
        (scratch / "private").mkdir(exist_ok=True)
        return read_prepared(scratch / "public", scratch / "private", variant)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def takes_sample(function) -> bool:
    """Does a generator declare the `sample` knob (a parameter of that name)?"""
    import inspect

    try:
        return "sample" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _generated_model(root: Path, variant: dict, where: str) -> DataModel:
    import importlib.util
    import shutil
    import tempfile

    source = variant["source"]
    scratch = Path(tempfile.mkdtemp(prefix="mlabc-data-"))
    try:
        public, private = scratch / "public", scratch / "private"
        public.mkdir()
        private.mkdir()
        spec = importlib.util.spec_from_file_location("_mlabc_generator", root / source["file"])
        try:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            function = getattr(module, source["function"])
            sample = {"sample": SAMPLE_ROWS} if takes_sample(function) else {}
            result = function(public, private, generate_seed(variant), **sample)
        except Exception as error:  # the task's own code: any failure is the author's to see
            raise ModelError(f"{source['file']}:{source['function']} failed: {type(error).__name__}: {error}") from None
        if result is not None and not hasattr(result, "columns"):
            raise ModelError(f"{source['function']} must return a pandas DataFrame or None, "
                             f"not {type(result).__name__}")
        if result is not None:
            return _split_model(add_id_column(result, variant).reset_index(drop=True), variant, where)
        return read_prepared(public, private, variant)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
