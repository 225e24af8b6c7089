"""The checks of a task's files that need their contents: the baseline script in the starter
folder, a bundled CSV's text and header, scikit-learn's dataset names.

Whatever a run would find broken in the task's own files is reported here, located, before
any script runs; what only running can show is the runtime's `task error`.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .. import ast as A
from ..names import closest
from ..values import Reporter, did_you_mean
from .table_facts import TableFacts, table_facts


class SklearnSource(NamedTuple):
    """The table a bundled scikit-learn loader gives with `as_frame=True`."""

    rows: int
    features: tuple[str, ...]
    targets: tuple[str, ...]  # a lone `target` is renamed to the variant's one `answers` column


_CANCER = ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points",
           "symmetry", "fractal dimension")

# scikit-learn's bundled datasets that load offline as one table, by loader (the `from sklearn`
# names); tests/compiler/test_sklearn_sources.py keeps them equal to scikit-learn's tables and
# docs/language.md equal to sklearn_sources_table()
SKLEARN_DATASETS: dict[str, SklearnSource] = {
    "load_breast_cancer": SklearnSource(569, tuple(
        [f"mean {n}" for n in _CANCER] + [f"{n} error" for n in _CANCER] + [f"worst {n}" for n in _CANCER]),
        ("target",)),
    "load_diabetes": SklearnSource(442, ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"), ("target",)),
    "load_digits": SklearnSource(1797, tuple(f"pixel_{row}_{col}" for row in range(8) for col in range(8)),
                                 ("target",)),
    "load_iris": SklearnSource(150, ("sepal length (cm)", "sepal width (cm)", "petal length (cm)",
                                     "petal width (cm)"), ("target",)),
    "load_linnerud": SklearnSource(20, ("Chins", "Situps", "Jumps"), ("Weight", "Waist", "Pulse")),
    "load_wine": SklearnSource(178, ("alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
                                     "total_phenols", "flavanoids", "nonflavanoid_phenols", "proanthocyanins",
                                     "color_intensity", "hue", "od280/od315_of_diluted_wines", "proline"),
                               ("target",)),
}


def sklearn_sources_table() -> str:
    """The Markdown table of the `from sklearn NAME` sources and their columns (in docs/language.md)."""
    def names(columns) -> str:
        return ", ".join(f"`{c}`" for c in columns)

    rows = ["| `from sklearn` | rows | feature columns | target column(s) |", "|---|---|---|---|"]
    for loader, source in SKLEARN_DATASETS.items():
        features = source.features
        shown = names(features) if len(features) <= 30 else f"{names(features[:2])}, ..., {names(features[-1:])}"
        target = ("`target`, renamed to the one `answers` column" if source.targets == ("target",)
                  else names(source.targets))
        rows.append(f"| `{loader}` | {source.rows} | {shown} ({len(features)}) | {target} |")
    return "\n".join(rows) + "\n"


def normalise_pattern(pattern: str) -> str:
    """A workspace path or pattern without a leading './' or a trailing '/', as the runtime spells it."""
    text = pattern.replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


def check_sklearn_name(value: str, span, report: Reporter) -> None:
    if value not in SKLEARN_DATASETS:
        report.error("E405", f"`{value}` is not a bundled scikit-learn dataset", span,
                     hint=did_you_mean(value, SKLEARN_DATASETS, "the bundled datasets"))


def check_baseline_script(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """`baseline run "script"` must name a file of the starter folder (the run starts it there)."""
    baseline, starter = ir.get("baseline"), ir.get("starter")
    if not baseline or baseline.get("kind") != "run" or not baseline.get("script") or not starter:
        return
    folder = root / starter
    if not folder.is_dir():
        return  # E501 already says so
    script = normalise_pattern(baseline["script"])
    if (folder / script).is_file():
        return
    entry = next(e for e in decl.entries if isinstance(e, A.BaselineRun))
    scripts = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py") if p.is_file())
    hint = did_you_mean(script, scripts, "its scripts") if scripts else "the starter folder holds no Python script"
    report.error("E508", f"baseline script {baseline['script']!r} is not in the starter folder {starter!r}",
                 entry.script.span, hint=hint)


STARTER_FILE_LIMIT = 20 * 10**6  # bytes: a starter file past this that is not declared data is a mistake


def check_starter_sizes(decl: A.Task, ir: dict, root: Path, report: Reporter,
                        limit: int = STARTER_FILE_LIMIT) -> None:
    """E515 for a starter file past `limit` that no data variant declares as a public file: the
    starter folder is copied into every run's workspace (and every snapshot's first state), so a
    stray dataset or checkpoint left there costs each run its size."""
    starter = ir.get("starter")
    folder = root / starter if starter else None
    if folder is None or not folder.is_dir():
        return
    declared = {normalise_pattern(name) for variant in ir["data"].values() for name in variant["public"]}
    entry = next(e for e in decl.entries if isinstance(e, A.Starter))
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        size, rel = path.stat().st_size, path.relative_to(folder).as_posix()
        if size > limit and rel not in declared:
            report.error("E515", f"starter file {rel!r} is {_megabytes(size)}, past the {_megabytes(limit)} a "
                         "starter file may be", entry.value.span,
                         hint="the starter folder is copied into every run's workspace: remove the file, or "
                              "make it data (a variant's `public` file)")


def _megabytes(size: int) -> str:
    return f"{size / 10**6:.1f} MB" if size % 10**6 else f"{size // 10**6} MB"


def check_data_files(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """Each data variant bundled as a CSV: UTF-8 text, a header naming the declared columns, rows."""
    for data in (e for e in decl.entries if isinstance(e, A.Data)):
        variant = ir["data"].get(data.name.value)
        source = (variant or {}).get("source") or {}
        if source.get("kind") != "csv":
            continue
        entry = next(e for e in data.entries if isinstance(e, A.Source))
        _check_csv(root / source["value"], source["value"], data, entry, variant, report)


def _check_csv(path: Path, rel: str, data: A.Data, source: A.Source, variant: dict, report: Reporter) -> None:
    facts = table_facts(path)
    if facts is None:
        return  # a missing file is E502
    if facts.utf8_error:
        line, column, byte = facts.utf8_error
        report.error("E511", f"data file {rel!r} is not valid UTF-8: line {line}, column {column} "
                     f"(byte 0x{byte:02x})", source.value.span,
                     hint="save the file as UTF-8, or convert it to Parquet")
        return
    columns = facts.header
    if not columns:
        report.error("E510", f"data file {rel!r} is empty", source.value.span,
                     hint="a CSV source needs a header line and at least one row")
        return
    if not facts.has_rows:
        report.error("E510", f"data file {rel!r} has a header and no rows", source.value.span,
                     hint="a CSV source needs at least one row under its header")
    _check_ids(facts, columns, rel, data, variant, report)
    for what, value in _declared_columns(data):
        if value.value not in columns:
            if len(columns) <= 12:
                hint = did_you_mean(value.value, columns, "its header has")
            else:
                guess = closest(value.value, columns)
                hint = (f"did you mean `{guess}`? " if guess else "") + f"its header has {len(columns)} columns"
            report.error("E509", f"{what} {value.value!r} is not a column of {rel!r}", value.span, hint=hint)


def _declared_columns(data: A.Data):
    """(what, string node) for each column a data variant names: answers, id, split column."""
    for entry in data.entries:
        if isinstance(entry, A.Answers) and isinstance(entry.value, A.List):
            yield from (("answer column", item) for item in entry.value.items if isinstance(item, A.Str))
        elif isinstance(entry, A.IdColumn) and isinstance(entry.value, A.Str):
            yield "id column", entry.value
        elif isinstance(entry, A.Split) and entry.method.value in ("group", "stratified", "time") and entry.args \
                and isinstance(entry.args[0], A.Str):
            yield f"`split {entry.method.value}` column", entry.args[0]


def _check_ids(facts: TableFacts, columns: list[str], rel: str, data: A.Data, variant: dict,
               report: Reporter) -> None:
    """E512 for a bundled table whose id column has an empty or repeated value: the split's answers
    would name no row, or two, and scoring could not align a submission on them."""
    entry = next((e for e in data.entries if isinstance(e, A.IdColumn) and isinstance(e.value, A.Str)), None)
    if entry is None or variant.get("id") not in columns:
        return
    problem = facts.id_problem(variant["id"])
    if problem is None:
        return
    hint = "the answers name each test row by its id: give every row an id of its own"
    if problem[0] == "empty":
        report.error("E512", f"id column {variant['id']!r} of {rel!r} is empty on line {problem[1]}", entry.value.span,
                     hint=hint)
    else:
        _, value, first, line = problem
        report.error("E512", f"id column {variant['id']!r} of {rel!r} repeats {value!r} on lines {first} and {line}",
                     entry.value.span, hint=hint)
