"""Prepare a task's data variant once into the cache, then install it into run folders.

Preparation materialises the variant from its declared source (a bundled CSV or Parquet
file, a scikit-learn bundled dataset, a folder of files, a `generate` function, or a remote
source downloaded once by mlab.data.loaders.remote), applies the declared split (or the task's
`prepare` function) and writes public files (for the workspace) and private files (answers,
for the evaluator) into a cache folder named by the hash of everything that determines
them. A second run finds the folder and only copies.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlab.build import TaskBuild
from mlab.cache import data_cache, file_sha256, recall_digest, remember_digest, remembered_entry, settled, stat_key
from mlab.errors import DataError
from mlab.tree import walk_tree
from mlab.data.answers import check_answer_ids
from mlab.data.loaders.remote import REMOTE_SOURCES, convert, fetch_source
from mlab.data.splits import write_split
from mlab.data.vocabulary import keep_vocabularies, vocabulary_digest
from mlab.data.faults import check_declarations
from mlabc.data_model.tables import add_id_column, generate_seed

from mlab.documents.task import Source, Variant
from mlab.documents.view import thaw
DATA_CODE_VERSION = 2  # bump when preparation changes what it writes
TABULAR_SOURCES = ("csv", "parquet", "sklearn")
READY = "prepared.json"


@dataclass(frozen=True)
class PreparedData:
    """A prepared variant in the cache: public/ and private/ folders and how they were made."""

    folder: Path
    key: str
    reused: bool

    @property
    def public(self) -> Path:
        return self.folder / "public"

    @property
    def private(self) -> Path:
        return self.folder / "private"


def _where(task: TaskBuild, variant: str) -> str:
    return f"data variant {variant} of task {task.name}"


def source_path(task: TaskBuild, rel: str, where: str) -> Path:
    """The task file `rel` (relative to the task's folder), which must exist."""
    path = (task.root / rel).resolve()
    if not path.exists():
        raise DataError(f"{where}: {path} does not exist (was the task moved after compiling?)")
    return path


# Byte-code and other debris of building or browsing a folder: never copied into a workspace
# (a non-editable install byte-compiles the starters' .py files), nor part of a folder's digest.
DEBRIS_NAMES = frozenset({"__pycache__", ".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"})
DEBRIS_SUFFIXES = (".pyc", ".pyo")


def is_debris(rel: Path) -> bool:
    """Is this path (relative to the folder copied) build or file-browser debris, or inside some?"""
    return any(part in DEBRIS_NAMES for part in rel.parts) or rel.name.endswith(DEBRIS_SUFFIXES)


def debris_name(rel: str) -> bool:
    """is_debris for a POSIX relative path given as text (no Path made: a folder walk asks it of
    every file)."""
    return any(part in DEBRIS_NAMES for part in rel.split("/")) or rel.endswith(DEBRIS_SUFFIXES)


def folder_digest(folder: Path, leave_out: tuple[Path, ...] = ()) -> str:
    """SHA-256 over the names and contents of a folder's files (debris left out: is_debris; so are
    the files and folders named in leave_out)."""
    digest = hashlib.sha256()
    skipped = tuple(Path(p).resolve() for p in leave_out)

    def counted(path: Path) -> bool:
        if not skipped:
            return True
        resolved = path.resolve()
        return not any(resolved == s or s in resolved.parents for s in skipped)

    listed = []   # (rel, full path, stat) of each file, a link to a file followed as rglob did
    for rel, full, info in walk_tree(folder):
        if stat.S_ISLNK(info.st_mode):
            try:
                info = os.stat(full)
            except OSError:
                continue
        if stat.S_ISREG(info.st_mode) and not debris_name(rel) and counted(Path(full)):
            listed.append((rel, full, info))
    listed.sort(key=lambda item: item[0].split("/"))   # the order of sorted Paths, as before
    # Every run's set-up hashes its task's local source for the preparation key: the folder's digest
    # is remembered under each file's name and stat (mlab.cache.stat_key), so a folder of many files
    # costs a stat each, not a read and a lookup each.
    entry = None
    if all(settled(info) for _, _, info in listed):
        entry = remembered_entry("folder\0" + "".join(f"{rel}\0{stat_key(info)}\n" for rel, _, info in listed))
        known = recall_digest(entry)
        if known is not None:
            return known
    for rel, full, _ in listed:
        digest.update(f"{rel}\0{file_sha256(Path(full))}\n".encode())
    if entry is not None:
        remember_digest(entry, digest.hexdigest())
    return digest.hexdigest()


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def demonstration_files(task: TaskBuild) -> tuple[Path, ...]:
    """The task's demonstration file and the reference-solution folder beside it, if declared."""
    if not task.view.demo:
        return ()
    demo = task.root / task.view.demo
    return demo, demo.parent / "solution"


def local_source_digest(task: TaskBuild, source: Source, where: str) -> str | None:
    """The content hash of a source kept with the task (a table, a folder, a generator's whole
    folder); None for sources named by their declaration (scikit-learn's sets, remote sources)."""
    kind = source.kind
    if kind in ("csv", "parquet"):
        return file_sha256(source_path(task, source.value, where))
    if kind == "folder":
        return folder_digest(source_path(task, source.value, where))
    if kind == "generate":
        # The whole folder of the generator: it may read word lists or helpers beside it. The
        # task's demonstration and reference solution often live there too; they make no data.
        return folder_digest(source_path(task, source.file, where).parent, demonstration_files(task))
    return None


# The code that decides what a prepared variant holds: reading sources, splitting, numbering ids,
# writing files. A module that only checks prepared data (answers, requirements) is not in it, so
# changing one voids no record; a new module that makes data belongs here.
PREPARATION_CODE = ("mlab.data.prepare", "mlab.data.splits", "mlab.data.vocabulary", "mlab.data.loaders",
                    "mlabc.data_model.tables")


@functools.lru_cache(maxsize=1)
def preparation_code_digest() -> str:
    """The hash of mlab's own preparation code (PREPARATION_CODE: a package counts with every module
    in it), so that a change to how data is made names new prepared data and voids recorded
    baselines. Comments, blank lines and docstrings are left out: rewording them changes no data."""
    files: dict[str, Path] = {}
    for name in PREPARATION_CODE:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin)
        if spec.submodule_search_locations:  # a package: all of its modules
            files.update({f"{name}/{p.relative_to(origin.parent).as_posix()}": p for p in origin.parent.rglob("*.py")})
        else:
            files[name] = origin
    return code_digest(files)


def code_digest(files: dict[str, Path] | Path) -> str:
    """The hash of the Python code of the files (name -> path; a folder: every module under it), as
    `_code_tokens` reads it."""
    if isinstance(files, Path):
        files = {path.relative_to(files).as_posix(): path for path in files.rglob("*.py")}
    digest = hashlib.sha256()
    for name, path in sorted(files.items()):
        digest.update(name.encode() + b"\0")
        digest.update(_code_tokens(path.read_text(encoding="utf-8")).encode() + b"\0")
    return digest.hexdigest()


def _code_tokens(text: str) -> str:
    """The code of a Python module as its tokens, without comments, line breaks between statements,
    or statements that are a bare string (docstrings)."""
    import io
    import tokenize

    kept: list[str] = []
    statement: list[tokenize.TokenInfo] = []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in skip:
            continue
        if token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            if not (len(statement) == 1 and statement[0].type == tokenize.STRING):
                kept.extend(t.string for t in statement)
            statement = []
            kept.append({tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}[token.type])
            continue
        statement.append(token)
    kept.extend(t.string for t in statement)
    return " ".join(kept)


def preparation_key(task: TaskBuild, variant_name: str) -> str:
    """The content hash naming a prepared variant: source bytes, split, files, code versions."""
    variant = task.variant(variant_name)
    where = _where(task, variant_name)
    source = variant.source
    kind = source.kind
    content = local_source_digest(task, source, where)
    if content is None and kind in REMOTE_SOURCES:
        content = fetch_source(kind, source.value, dict(variant.checksums), where).digest
    elif content is None and kind == "sklearn":
        content = "scikit-learn " + _package_version("scikit-learn")
    elif content is None:
        raise DataError(f"{where}: unknown source kind {kind!r}")
    hook = variant.prepare
    if hook:
        content += " prepare " + folder_digest(source_path(task, hook.file, where).parent, demonstration_files(task))
    seeded = kind == "generate" or kind in REMOTE_SOURCES or bool(hook)
    # the declarations as compiled (mlab.documents.thaw: the document's own keys, so that a
    # prepared variant keeps its key across this change of form)
    fields = {"code": DATA_CODE_VERSION, "mlab_code": preparation_code_digest(), "source": thaw(source),
              "content": content, "split": thaw(variant.split), "id": variant.id, "answers": list(variant.answers),
              "public": list(variant.public), "private": list(variant.private), "checksums": dict(variant.checksums),
              "seed": generate_seed(thaw(variant)) if seeded else None, "prepare": thaw(hook),
              "pandas": _package_version("pandas") if kind in TABULAR_SOURCES + ("generate",) else None}
    if variant.validation is not None:  # only when declared: other variants keep their keys
        fields["validation"] = variant.validation
    vocabularies = vocabulary_digest(task, variant)
    if vocabularies is not None:  # likewise: only a task with vocabulary files adds them
        fields["vocabularies"] = vocabularies
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def prepare_data(task: TaskBuild, variant_name: str, cache_dir: Path | None = None) -> PreparedData:
    """The prepared variant, from the cache when it is there, else made now and cached."""
    key = preparation_key(task, variant_name)
    root = Path(cache_dir) if cache_dir is not None else data_cache()
    folder = root / f"{task.name}-{variant_name}-{key[:16]}"
    if (folder / READY).is_file():
        # the data is the key's; the declarations the checks read are not all in it (a metric, a
        # constraint), so a verdict on other declarations is asked again (mlab.data.faults)
        check_declarations(task, variant_name, folder, _where(task, variant_name))
        return PreparedData(folder, key, reused=True)
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{task.name}-{variant_name}-", dir=root))
    except OSError as error:
        raise DataError(f"cannot create the data cache in {root}: {error.strerror or error}") from None
    try:
        (staging / "public").mkdir()
        (staging / "private").mkdir()
        _materialise(task, variant_name, staging / "public", staging / "private")
        _verify_checksums(task, variant_name, staging)
        # the compiler's data-model checks, on what was made: a variant `mlabc check` did not make
        # whole (a remote one, a generator it asked for a sample) gets all of them before any
        # script runs; any other the ones that would fail its scoring (E560-E564), so a task built
        # without `mlabc check` is refused as the task's error, never run and charged to an agent
        check_declarations(task, variant_name, staging, _where(task, variant_name))
        (staging / READY).write_text(json.dumps({"task": task.name, "variant": variant_name, "key": key},
                                                indent=2) + "\n", encoding="utf-8")
        try:
            os.rename(staging, folder)
        except OSError:
            if not (folder / READY).is_file():  # not a concurrent preparation that won the race
                raise
    except DataError:
        raise
    except OSError as error:
        raise DataError(f"cannot prepare {_where(task, variant_name)}: {error}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return PreparedData(folder, key, reused=False)


def _materialise(task: TaskBuild, variant_name: str, public: Path, private: Path) -> None:
    variant = task.variant(variant_name)
    where = _where(task, variant_name)
    source = variant.source
    kind = source.kind
    if kind == "csv":
        import pandas as pd

        write_split(_read(pd.read_csv, source_path(task, source.value, where), where),
                    variant, public, private, where)
    elif kind == "parquet":
        import pandas as pd

        write_split(_read(pd.read_parquet, source_path(task, source.value, where), where),
                    variant, public, private, where)
    elif kind == "sklearn":
        write_split(sklearn_frame(source.value, variant, where), variant, public, private, where)
    elif kind == "folder" and variant.prepare:
        _call_prepare(task, variant, source_path(task, source.value, where), public, private, where)
    elif kind == "folder":
        _copy_folder(source_path(task, source.value, where), variant, public, private)
    elif kind in REMOTE_SOURCES:
        download = fetch_source(kind, source.value, dict(variant.checksums), where)
        if variant.prepare:
            _call_prepare(task, variant, download.folder, public, private, where)
        else:
            convert(kind, download, variant, public, private, generate_seed(thaw(variant)), where)
    elif kind == "generate":
        frame = _call_generator(task, variant, public, private, where)
        if frame is not None:
            write_split(frame.reset_index(drop=True), variant, public, private, where)
        elif variant.validation is not None:
            raise DataError(f"{where}: `validation` holds out rows of a table, but "
                            f"{source.function} wrote its files itself (return a DataFrame instead)")
    _check_declared_files(variant, public, private, where)
    check_answer_ids(variant, public, private, where)
    keep_vocabularies(task, variant, public, private, where)


def _read(reader, path: Path, where: str):
    try:
        return reader(path)
    except ImportError as error:
        raise DataError(f"{where}: reading {path.name} needs a package that is missing ({error})") from None
    except (ValueError, OSError) as error:
        raise DataError(f"{where}: cannot read {path}: {error}") from None


def sklearn_frame(loader_name: str, variant: Variant, where: str):
    import sklearn.datasets

    loader = getattr(sklearn.datasets, loader_name, None)
    if loader is None or not loader_name.startswith("load_"):
        raise DataError(f"{where}: scikit-learn has no bundled dataset loader {loader_name!r}")
    try:
        frame = loader(as_frame=True).frame
    except (TypeError, OSError, ValueError) as error:
        raise DataError(f"{where}: {loader_name}(as_frame=True) failed: {error}") from None
    if frame is None:
        raise DataError(f"{where}: {loader_name} gives no table (as_frame=True returned no frame)")
    frame = frame.copy()
    answers = list(variant.answers)
    if len(answers) == 1 and answers[0] not in frame.columns and "target" in frame.columns:
        frame = frame.rename(columns={"target": answers[0]})
    return add_id_column(frame, thaw(variant))


def _copy_folder(folder: Path, variant: Variant, public: Path, private: Path) -> None:
    hidden = set(variant.private)
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        target = (private if rel in hidden else public) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _task_function(task: TaskBuild, target: dict, where: str):
    """The function a task names as "file.py:function", loaded from the task's folder."""
    path = source_path(task, target.file, where)
    spec = importlib.util.spec_from_file_location(f"_mlab_task_{task.name.replace('-', '_')}", path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, target.function)
    except Exception as error:  # the task's own code: any failure is the task author's to see
        raise DataError(f"{where}: cannot load {target.file}:{target.function}: "
                        f"{type(error).__name__}: {error}") from None


def _call_prepare(task: TaskBuild, variant: Variant, raw: Path, public: Path, private: Path, where: str) -> None:
    """The task's `prepare` function: raw (downloaded) files in, the variant's files out."""
    hook = variant.prepare
    function = _task_function(task, hook, where)
    try:
        function(raw, public, private, generate_seed(thaw(variant)))
    except DataError:
        raise
    except Exception as error:
        raise DataError(f"{where}: {hook.file}:{hook.function} failed: "
                        f"{type(error).__name__}: {error}") from None


def _call_generator(task: TaskBuild, variant: Variant, public: Path, private: Path, where: str):
    source = variant.source
    function = _task_function(task, source, where)
    try:
        result = function(public, private, generate_seed(thaw(variant)))
    except Exception as error:
        raise DataError(f"{where}: {source.file}:{source.function} failed: "
                        f"{type(error).__name__}: {error} (E566)") from None
    if result is None:
        return None
    if not hasattr(result, "columns"):
        raise DataError(f"{where}: {source.function} must return a pandas DataFrame or None, "
                        f"not {type(result).__name__} (E566)")
    return add_id_column(result, thaw(variant))


def _check_declared_files(variant: Variant, public: Path, private: Path, where: str) -> None:
    missing = [f"public {name}" for name in variant.public if not (public / name).exists()]
    missing += [f"private {name}" for name in variant.private if not (private / name).exists()]
    if missing:
        raise DataError(f"{where}: preparation did not produce the declared file(s): {', '.join(missing)} (E566)")


def _verify_checksums(task: TaskBuild, variant_name: str, staging: Path) -> None:
    where = _where(task, variant_name)
    variant = task.variant(variant_name)
    source = variant.source
    downloaded = {}
    if source.kind in REMOTE_SOURCES:  # checked against the download when it was fetched
        downloaded = fetch_source(source.kind, source.value, dict(variant.checksums), where).files
    for name, expected in variant.checksums.items():
        if name in downloaded:
            continue
        candidates = [task.root / name, staging / "public" / name, staging / "private" / name]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            raise DataError(f"{where}: a checksum is declared for {name!r}, but no such file exists "
                            "(relative to the task folder or among the prepared files)")
        actual = file_sha256(path)
        if actual != expected:
            raise DataError(f"{where}: {name} has SHA-256 {actual}, but the task declares {expected}; "
                            "the data changed or was corrupted")


def checksum_lines(task: TaskBuild, variant_name: str, prepared: PreparedData) -> tuple[list[str], str]:
    """`checksum "file" "sha256"` declarations of a variant's data, and what they cover in words.

    A remote source's declarations cover every downloaded file (as the download record holds
    them, checked when the download is fetched); any other source's cover the prepared public
    and private files. Either way they are the entries `_verify_checksums` checks.
    """
    from mlabc.literals import quote

    variant = task.variant(variant_name)
    source = variant.source
    if source.kind in REMOTE_SOURCES:
        files = fetch_source(source.kind, source.value, dict(variant.checksums), _where(task, variant_name)).files
        what = f"the download of {source.kind} {source.value!r} ({len(files)} files)"
    else:
        files = {p.relative_to(prepared.folder / side).as_posix(): file_sha256(p)
                 for side in ("public", "private") for p in sorted((prepared.folder / side).rglob("*")) if p.is_file()}
        what = f"the {len(files)} prepared files"
    return [f"checksum {quote(name)} {quote(digest)}" for name, digest in sorted(files.items())], what


def copy_tree(source: Path, target: Path) -> None:
    """Copy a folder's contents into another (merging, replacing files of the same name), debris
    (is_debris) left out."""
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if is_debris(rel):
            continue
        if path.is_dir():
            (target / rel).mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)


def install_starter(task: TaskBuild, workspace: Path) -> None:
    """Copy the task's starter folder into a workspace."""
    starter = task.view.starter
    if starter:
        folder = source_path(task, starter, f"task {task.name}")
        copy_tree(folder, workspace)


def install_data(prepared: PreparedData, workspace: Path, private: Path) -> None:
    """Copy a prepared variant: public files into the workspace, private files into private/."""
    copy_tree(prepared.public, workspace)
    copy_tree(prepared.private, private)
