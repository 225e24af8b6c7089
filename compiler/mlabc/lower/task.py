"""task declaration → task IR (plain data), with its diagnostics."""
from __future__ import annotations

import ast as pyast
import fnmatch
import json
from pathlib import Path

from .. import ast as A
from ..diagnostics import display_path
from ..values import Reporter, did_you_mean, duplicate_entries
from .data_files import (check_baseline_script, check_data_files, check_sklearn_name, check_starter_sizes,
                         normalise_pattern)
from .columns import check_column_rules, lower_column_rules
from .demo import lower_demo
from .metric import check_baseline_range, check_metric_columns, lower_metric
from .problem import check_problem_text
from .versions import VERSION_ENTRIES, check_versions, lower_version_entry
from .references import check_references, lower_reference, lower_thresholds
from .leaderboard import check_leaderboard, lower_leaderboard
from .gym import check_gym, lower_gym

CATEGORIES = ("canonical", "classic-kaggle", "recent-kaggle", "research", "code-improvement")
VARIANTS = ("full", "lite")
LOCAL_SOURCES = ("csv", "parquet", "folder")
REMOTE_SOURCES = ("kaggle", "huggingface", "torchvision", "ogb")
SOURCE_KINDS = LOCAL_SOURCES + REMOTE_SOURCES + ("sklearn", "generate")
PREPARED_SOURCES = REMOTE_SOURCES + ("folder",)  # sources a `prepare` function may convert
SPLITS = ("random", "group", "stratified", "time", "ordered", "none")
UNSPLIT_SOURCES = ("folder", "torchvision", "ogb")  # kept as they come: a `split` would change nothing
VALIDATION_SOURCES = ("csv", "parquet", "sklearn", "generate")  # tables the harness splits itself
VALIDATION_FILE = "validation.csv"  # public: the held-out rows' features; private: their id and answers
DEFAULT_LIMITS = {"steps": 50, "time": 5 * 3600.0, "script_timeout": 1800.0,
                  "memory": None, "disk": 20 * 2**30, "tokens": None, "cost": None}
LIMIT_KINDS = {"steps": "int", "time": "duration", "script_timeout": "duration",
               "memory": "size", "disk": "size", "tokens": "int", "cost": "number", "calls": "int"}
REQUIRED = ("title", "category", "problem", "starter", "metric", "baseline", "data")


def lower_limits(limits: A.Limits, report: Reporter, where: str) -> dict:
    """A limits block → {name: value} with durations in seconds and sizes in bytes."""
    out: dict = {}
    for item in limits.items:
        key = item.key.value
        kind = LIMIT_KINDS.get(key)
        if kind is None:
            report.error("E403", f"unknown limit `{key}` in {where}", item.key.span,
                         did_you_mean(key, LIMIT_KINDS, "limits"))
            continue
        if key in out:
            report.error("E302", f"limit `{key}` is given twice in {where}", item.key.span)
            continue
        reader = {"int": lambda v, w: report.integer(v, w, minimum=1), "duration": report.duration,
                  "size": report.size, "number": report.number}[kind]
        value = reader(item.value, f"limit `{key}`")
        if value is not None:
            out[key] = value
    return out


class TaskLowerer:
    def __init__(self, decl: A.Task, root: Path, report: Reporter):
        self.decl, self.root, self.report = decl, root, report
        self._metric_entry: A.Metric | None = None
        self._gym_span = None
        self._submission_entry: A.Submission | None = None

    def lower(self) -> dict:
        decl, report = self.decl, self.report
        name = decl.name.value
        duplicate_entries(decl.entries, report, f"task `{name}`")
        ir: dict = {"name": name, "title": None, "category": None, "problem": None, "starter": None,
                    "read_only": [], "requires": [], "data": {}, "submission": None, "metric": None,
                    "baseline": None, "success": {"improvement": 0.10}, "agent": "research",
                    "limits": dict(DEFAULT_LIMITS), "hardware": {"cpus": 1, "gpus": 0, "gpus_required": False,
                                                                 "memory": None},
                    "demo": None, "evaluator": None}
        present = set()
        for entry in decl.entries:
            present.add(entry.keyword)
            if isinstance(entry, VERSION_ENTRIES):
                lower_version_entry(entry, ir, report)
                continue
            handler = getattr(self, "_" + type(entry).__name__.lower(), None)
            assert handler is not None, type(entry).__name__
            handler(entry, ir)
        missing = [f"`{keyword}`" for keyword in REQUIRED if keyword not in present]
        if missing:
            listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " or " + missing[-1]
            report.error("E308", f"task `{name}` has no {listed}", decl.name.span,
                         hint="a task needs " + ", ".join(f"`{k}`" for k in REQUIRED))
        check_versions(decl, ir, report)
        self._check_read_only(ir)
        check_baseline_script(decl, ir, self.root, report)
        check_data_files(decl, ir, self.root, report)
        check_starter_sizes(decl, ir, self.root, report)
        if self._submission_entry is not None:
            check_column_rules(self._submission_entry, ir, self.root, report)
        if self._metric_entry is not None:
            check_metric_columns(ir, self._metric_entry, report)
        check_baseline_range(decl, ir, report)
        check_references(ir, report)
        check_leaderboard(ir, report)
        check_gym(ir, self._gym_span, report)
        check_problem_text(decl, ir, self.root, report)
        metric = ir["metric"]
        if metric and metric["kind"] != "evaluator" and ir["evaluator"] is not None:
            entry = next(e for e in decl.entries if isinstance(e, A.Evaluator))
            report.error("E310", f"the evaluator is ignored: metric `{metric['name']}` is the catalogue's "
                         f"({metric['kind']}), scored by mlab itself", entry.span,
                         hint=f"remove the `evaluator` line, or score with it: `{_custom_metric(metric)}`")
        if metric and metric["kind"] == "evaluator" and ir["evaluator"] is None:
            report.error("E308", f"metric `{metric['name']}` is computed by the task's own evaluator, "
                         f"but task `{name}` declares none", decl.name.span,
                         hint='add `evaluator "file.py:function" because "..."`')
        return ir

    def relative_hint(self) -> str:
        """Where relative paths start, shown as the user sees the task's folder."""
        return f"the path is relative to {display_path(self.root)}/, the folder of the task's file"

    # -- simple entries ---------------------------------------------------
    def _title(self, e: A.Title, ir):
        ir["title"] = self.report.string(e.value, "`title`")

    def _problem(self, e: A.Problem, ir):
        ir["problem"] = self.report.string(e.value, "`problem`")

    def _category(self, e: A.Category, ir):
        value = self.report.name_or_string(e.value, "`category`")
        if value is not None and value not in CATEGORIES:
            self.report.error("E405", f"unknown category `{value}`", e.value.span,
                              did_you_mean(value, CATEGORIES, "categories"))
        ir["category"] = value

    def _starter(self, e: A.Starter, ir):
        value = self.report.string(e.value, "`starter`")
        if value is None:
            return
        if not (self.root / value).is_dir():
            self.report.error("E501", f"starter folder {value!r} does not exist", e.value.span,
                              hint=self.relative_hint())
        ir["starter"] = value

    def _readonly(self, e: A.ReadOnly, ir):
        patterns = self.report.string_list(e.value, "read-only patterns") or []
        ir["read_only"] = [normalise_pattern(p) for p in patterns]
        self._read_only_entry = e

    def _requires(self, e: A.Requires, ir):
        ir["requires"] = self.report.string_list(e.value, "required packages") or []

    def _submission(self, e: A.Submission, ir):
        file = self.report.string(e.file, "`submission`")
        columns = self.report.string_list(e.columns, "submission columns") if e.columns else []
        ir["submission"] = {"file": file, "columns": columns or []}
        if e.rules:  # absent when none, so a task without constraints keeps its submission digest
            ir["submission"]["constraints"] = lower_column_rules(e, columns or [], self.report)
            self._submission_entry = e

    def _metric(self, e: A.Metric, ir):
        lower_metric(e, ir, self.report)
        if ir["metric"] is not None:
            self._metric_entry = e

    def _reference(self, e: A.Reference, ir):
        lower_reference(e, ir, self.report)

    def _thresholds(self, e: A.Thresholds, ir):
        lower_thresholds(e, ir, self.report)

    def _leaderboard(self, e: A.Leaderboard, ir):
        lower_leaderboard(e, ir, self.root, self.report)

    def _gym(self, e: A.Gym, ir):
        self._gym_span = lower_gym(e, ir, self.report)

    def _baselinerun(self, e: A.BaselineRun, ir):
        script = self.report.string(e.script, "`baseline run`")
        ir["baseline"] = {"kind": "run", "script": script}

    def _baselinevalue(self, e: A.BaselineValue, ir):
        value = self.report.number(e.value, "`baseline`")
        reason = self.report.string(e.reason, "`because`")
        ir["baseline"] = {"kind": "value", "value": value, "reason": reason}

    def _success(self, e: A.Success, ir):
        threshold = self.report.percent(e.threshold, "`success improvement >=`")
        if threshold is not None and threshold <= 0:
            self.report.error("E405", f"the success threshold must be above 0%, not {e.threshold.text}",
                              e.threshold.span, hint="the default is `success improvement >= 10%`")
        elif threshold is not None:
            ir["success"] = {"improvement": threshold}

    def _defaultagent(self, e: A.DefaultAgent, ir):
        ir["agent"] = e.name.value
        self.agent_ref = e.name

    def _limits(self, e: A.Limits, ir):
        ir["limits"].update(lower_limits(e, self.report, "task limits"))

    def _hardware(self, e: A.Hardware, ir):
        hardware = ir["hardware"]
        for item in e.items:
            key = item.key.value
            if key == "cpus":
                hardware["cpus"] = self.report.integer(item.value, "`cpus`", minimum=1)
            elif key == "gpus":
                hardware["gpus"] = self.report.integer(item.value, "`gpus`", minimum=0)
                need = item.need.value if item.need else "required"
                hardware["gpus_required"] = bool(hardware["gpus"]) and need == "required"
            elif key == "memory":
                hardware["memory"] = self.report.size(item.value, "hardware `memory`")
            else:
                self.report.error("E403", f"unknown hardware entry `{key}`", item.key.span,
                                  did_you_mean(key, ("cpus", "gpus", "memory"), "hardware entries"))
            if item.need and key != "gpus":
                self.report.error("E405", f"`{item.need.value}` applies to `gpus` only", item.need.span)

    def _demo(self, e: A.Demo, ir):
        lower_demo(e, ir, self.root, self.report)

    def _evaluator(self, e: A.Evaluator, ir):
        target = self.report.string(e.target, "`evaluator`")
        reason = self.report.string(e.reason, "`because`")
        if target is not None:
            file, function = self.python_target(target, e.target)
            ir["evaluator"] = {"file": file, "function": function, "reason": reason}

    def python_target(self, target: str, value: A.Value) -> tuple[str, str]:
        """Check an escape hatch "file.py:function" with `ast`, never importing it."""
        file, _, function = target.partition(":")
        if not function or not file.endswith(".py"):
            self.report.error("E405", f"{target!r} is not of the form \"file.py:function\"", value.span)
            return file, function
        path = self.root / file
        try:
            tree = pyast.parse(path.read_bytes(), filename=str(path))
        except FileNotFoundError:
            self.report.error("E504", f"Python file {file!r} does not exist", value.span,
                              hint=self.relative_hint())
            return file, function
        except (SyntaxError, ValueError) as error:
            self.report.error("E506", f"{file!r} does not parse: {error}", value.span)
            return file, function
        functions = {n.name for n in tree.body if isinstance(n, (pyast.FunctionDef, pyast.AsyncFunctionDef))}
        if function not in functions:
            self.report.error("E505", f"{file!r} defines no top-level function `{function}`", value.span,
                              hint=did_you_mean(function, functions, "functions") if functions else None)
        return file, function

    # -- data variants ------------------------------------------------------
    def _data(self, e: A.Data, ir):
        name = e.name.value
        if name not in VARIANTS:
            self.report.error("E405", f"data variant `{name}` is not allowed", e.name.span,
                              did_you_mean(name, VARIANTS, "variants"))
            return
        if name in ir["data"]:
            self.report.error("E302", f"data variant `{name}` is declared twice", e.name.span)
            return
        duplicate_entries(e.entries, self.report, f"data `{name}`")
        variant: dict = {"source": None, "split": {"method": "none"}, "id": None, "answers": [],
                         "public": [], "private": [], "checksums": {}, "limits": {}}
        prepare_entry = validation_entry = None
        for entry in e.entries:
            if isinstance(entry, A.Source):
                variant["source"] = self._source(entry)
            elif isinstance(entry, A.Split):
                variant["split"] = self._split(entry)
            elif isinstance(entry, A.Validation):
                validation_entry = entry
            elif isinstance(entry, A.IdColumn):
                variant["id"] = self.report.string(entry.value, "`id`")
            elif isinstance(entry, (A.Answers, A.Public, A.Private)):
                variant[entry.keyword] = self.report.string_list(entry.value, f"{entry.keyword} files"
                                                                 if entry.keyword != "answers"
                                                                 else "answer columns") or []
                if isinstance(entry, A.Answers) and entry.unlabelled is not None:
                    variant["unlabelled"] = True  # training rows may leave the answers blank
            elif isinstance(entry, A.Checksum):
                file = self.report.string(entry.file, "`checksum` file")
                digest = self.report.string(entry.digest, "`checksum` digest")
                if digest is not None and not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
                    self.report.error("E405", "a checksum is a SHA-256 digest: 64 lowercase hex digits",
                                      entry.digest.span)
                elif file is not None:
                    variant["checksums"][file] = digest
            elif isinstance(entry, A.Prepare):
                prepare_entry = entry
            elif isinstance(entry, A.Limits):
                variant["limits"] = lower_limits(entry, self.report, f"data `{name}` limits")
        if prepare_entry is not None:
            self._prepare(prepare_entry, variant)
        self._check_split_applies(e, variant)
        if validation_entry is not None:
            self._validation(validation_entry, variant)
        if variant["source"] is None:
            self.report.error("E308", f"data `{name}` has no source", e.name.span,
                              hint='add e.g. `from csv "task/lite/data.csv"`')
        if not variant["public"]:
            self.report.error("E308", f"data `{name}` declares no public files", e.name.span,
                              hint='add e.g. `public ["train.csv", "test.csv"]`')
        ir["data"][name] = variant

    def _source(self, e: A.Source) -> dict | None:
        kind = e.kind_.value
        if kind not in SOURCE_KINDS:
            self.report.error("E405", f"unknown data source `{kind}`", e.kind_.span,
                              did_you_mean(kind, SOURCE_KINDS, "sources"))
            return None
        value = self.report.name_or_string(e.value, f"`from {kind}`")
        if value is None:
            return None
        source = {"kind": kind, "value": value}
        if kind in LOCAL_SOURCES:
            path = self.root / value
            exists = path.is_dir() if kind == "folder" else path.is_file()
            if not exists:
                self.report.error("E502", f"{'folder' if kind == 'folder' else 'data file'} {value!r} does not exist",
                                  e.value.span, hint=self.relative_hint())
        elif kind == "sklearn":
            check_sklearn_name(value, e.value.span, self.report)
        elif kind == "generate":
            file, function = self.python_target(value, e.value)
            source.update(file=file, function=function)
        return source

    def _check_split_applies(self, e: A.Data, variant: dict) -> None:
        """E310 for a `split` the runtime would ignore: a folder is copied as it is, and torchvision and
        ogb keep their datasets' own splits, so the declared one would silently change nothing."""
        entry = next((x for x in e.entries if isinstance(x, A.Split)), None)
        kind = (variant["source"] or {}).get("kind")
        if entry is None or variant["split"].get("method", "none") == "none" or variant.get("prepare") \
                or kind not in UNSPLIT_SOURCES:
            return
        what = ("a `from folder` source is copied as it is" if kind == "folder"
                else f"`from {kind}` keeps the dataset's own train/test split")
        self.report.error("E310", f"`split {entry.method.value}` is ignored: {what}", entry.span,
                          hint="write `split none`, or split the files in a `prepare \"file.py:function\"` of your own"
                               if kind == "folder" else "write `split none`")

    def _prepare(self, e: A.Prepare, variant: dict) -> None:
        """`prepare "file.py:function"`: the task's own conversion of a downloaded (or folder) source."""
        target = self.report.string(e.value, "`prepare`")
        if target is None:
            return
        kind = (variant["source"] or {}).get("kind")
        if kind is not None and kind not in PREPARED_SOURCES:
            self.report.error("E405", f"`prepare` applies to a downloaded or folder source, not `from {kind}`",
                              e.span, hint="a generator writes its files itself; a table is split by `split`")
            return
        file, function = self.python_target(target, e.value)
        variant["prepare"] = {"file": file, "function": function}

    def _validation(self, e: A.Validation, variant: dict) -> None:
        """`validation 0.1`: the share of the training rows held out as public validation.csv
        (features) and private/validation.csv (id and answers). Only a table split by `split`
        has training rows to hold out; the key is absent when not declared, so a variant
        without it lowers (and is prepared) as before."""
        share = self.report.fraction(e.value, "the validation fraction (a share of the training rows)")
        if share is None:
            return
        kind = (variant["source"] or {}).get("kind")
        if variant["split"].get("method", "none") == "none":
            self.report.error("E405", "`validation` holds out training rows, so it needs a train/test split",
                              e.span, hint="add e.g. `split random 0.2 seed 42` before `validation 0.1`")
            return
        if variant.get("prepare") or (kind is not None and kind not in VALIDATION_SOURCES):
            self.report.error("E405", f"`validation` applies to a table split by `split`, not `from {kind}`"
                              + (" with `prepare`" if variant.get("prepare") else ""), e.span,
                              hint="its sources: " + ", ".join(VALIDATION_SOURCES))
            return
        if not variant["id"]:
            self.report.error("E405", "`validation` needs an `id` column to name the held-out rows", e.span,
                              hint='add e.g. `id "id"`')
            return
        clash = sorted({VALIDATION_FILE} & set(variant["public"] + variant["private"]))
        if clash:
            self.report.error("E405", f"`validation` writes {VALIDATION_FILE}, which the variant already "
                              "declares as a file of its own", e.span)
            return
        variant["validation"] = share

    def _split(self, e: A.Split) -> dict:
        method = e.method.value
        if method not in SPLITS:
            self.report.error("E405", f"unknown split `{method}`", e.method.span,
                              did_you_mean(method, SPLITS, "splits"))
            return {"method": "none"}
        split: dict = {"method": method}
        args = list(e.args)
        if method == "time" and len(args) >= 2 and isinstance(args[1], A.Name) and args[1].value == "last":
            return self._time_horizon(e, split, args)
        expected = {"random": 1, "group": 2, "stratified": 2, "time": 2, "ordered": 1, "none": 0}[method]
        if len(args) != expected:
            usage = {"random": "split random 0.2 seed 42", "group": 'split group "patient_id" 0.2 seed 42',
                     "stratified": 'split stratified "label" 0.2 seed 42',
                     "time": 'split time "year" 0.2', "ordered": "split ordered 0.2",
                     "none": "split none"}[method]
            self.report.error("E405", f"`split {method}` takes {expected} value(s), found {len(args)}", e.span,
                              hint=f"write `{usage}`")
            return split
        if method in ("group", "stratified", "time"):
            split["column"] = self.report.string(args.pop(0), f"`split {method}` column")
        if args:
            split["fraction"] = self.report.fraction(args[0], "the test fraction")
        if e.seed is not None:
            if method in ("time", "ordered", "none"):
                self.report.error("E405", f"`split {method}` is deterministic and takes no seed", e.seed.span)
            else:
                split["seed"] = self.report.integer(e.seed, "`seed`")
        elif method in ("random", "group", "stratified"):
            split["seed"] = 0
        return split

    def _time_horizon(self, e: A.Split, split: dict, args: list) -> dict:
        """`split time "date" last 30 days` (or `last 30d`): the rows of the last 30 days before the
        column's latest date are the test rows, whatever share of the table they are."""
        split["column"] = self.report.string(args[0], "`split time` column")
        horizon = time_horizon(args[2:])
        if horizon is None:
            self.report.error("E405", "`split time COLUMN last` takes a span of time", e.span,
                              hint='write e.g. `split time "date" last 30 days` (or `last 12 weeks`, `last 48 hours`, '
                                   '`last 30d`)')
            return {"method": "none"}
        if e.seed is not None:
            self.report.error("E405", "`split time` is deterministic and takes no seed", e.seed.span)
        split["horizon"] = horizon
        return split

    # -- cross-entry checks -------------------------------------------------
    def _check_read_only(self, ir) -> None:
        entry = getattr(self, "_read_only_entry", None)
        if entry is None or not isinstance(entry.value, A.List):
            return
        candidates = set()
        if ir["starter"] and (self.root / ir["starter"]).is_dir():
            base = self.root / ir["starter"]
            candidates |= {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}
        for variant in ir["data"].values():
            candidates |= set(variant["public"])
        for item in entry.value.items:
            if isinstance(item, A.Str) and not any(fnmatch.fnmatchcase(c, normalise_pattern(item.value))
                                                   for c in candidates):
                self.report.error("E503", f"read-only pattern {item.value!r} matches no starter or public file",
                                  item.span, hint="files it could match: " + ", ".join(sorted(candidates)[:8])
                                  if candidates else None)


HORIZON_UNITS = {"days": 86400.0, "day": 86400.0, "weeks": 604800.0, "week": 604800.0, "hours": 3600.0,
                 "hour": 3600.0}


def time_horizon(values: list) -> float | None:
    """Seconds of a horizon written `30 days` (a number and a unit) or `30d` (a duration), else None."""
    if len(values) == 1 and isinstance(values[0], A.Duration) and values[0].seconds > 0:
        return values[0].seconds
    if len(values) == 2 and isinstance(values[0], (A.Int, A.Float)) and isinstance(values[1], A.Name) \
            and values[1].value in HORIZON_UNITS and values[0].value > 0:
        return float(values[0].value) * HORIZON_UNITS[values[1].value]
    return None


def lower_task(decl: A.Task, root: Path, report: Reporter) -> tuple[dict, A.Ident | None]:
    """The task's IR and the reference to its default agent (to resolve later)."""
    lowerer = TaskLowerer(decl, root, report)
    ir = lowerer.lower()
    return ir, getattr(lowerer, "agent_ref", None)


def _custom_metric(metric: dict) -> str:
    """The `metric custom` line that scores a catalogue metric's columns with the task's evaluator."""
    columns = metric["columns"]
    on = "" if not columns else " on " + json.dumps(columns[0] if len(columns) == 1 else columns)
    return f'metric custom(name = "{metric["name"]}"){on} {metric["direction"]}'
