"""The typed views of the compiled documents (mlab.documents): every field is a property of its
schema in spec/, every bundled task, agent, action table and experiment (and the golden and older
builds of the tests) makes a view that gives its document back whole, a field the schema lacks
cannot be read, and the runtime reads no loaded document by key."""
from __future__ import annotations

import ast
import json
import pickle
import typing
from collections.abc import Mapping
from pathlib import Path
from types import UnionType

import pytest
from ruamel.yaml import YAML

from mlab.documents.agent import Actions, Agent
from mlab.documents.experiment import Experiment
from mlab.documents.task import Task
from mlab.documents.view import View, thaw

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime" / "mlab"
VIEWS = {"task": Task, "agent": Agent, "actions": Actions, "experiment": Experiment}
OLD_RUN_BUILD = REPO / "tests" / "agent" / "data" / "runs-v1" / "20261201T182227-d6c232" / "build"


def _schema(kind: str) -> dict:
    return json.loads((REPO / "spec" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def _objects(node: dict, defs: dict) -> list[dict]:
    """The object schemas a value may be (a $ref followed, each branch of oneOf/anyOf/allOf)."""
    if "$ref" in node:
        return _objects(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    found = [node] if "properties" in node else []
    for word in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(word, []):
            found += _objects(branch, defs)
    return found


def _inner(hint):
    """The view class a field's annotation holds (through `| None`, tuple[...] and Mapping[str, ...]), if any."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, UnionType):
        return next((found for arg in args if (found := _inner(arg)) is not None), None)
    if origin is tuple:
        return _inner(args[0])
    if origin is Mapping:
        return _inner(args[1])
    return hint if isinstance(hint, type) and issubclass(hint, View) else None


def _walk(cls, nodes: list[dict], defs: dict, where: str, missing: list[str], unread: list[str]) -> None:
    """Each field of `cls` against the properties of the object schemas `nodes` (its alternatives)."""
    properties: dict = {}
    for node in nodes:
        properties.update(node.get("properties", {}))
    hints = typing.get_type_hints(cls)
    keys = set()
    for name in cls.FIELDS:
        key = cls.KEYS.get(name, name)
        keys.add(key)
        if key not in properties:
            missing.append(f"{where}.{key}")
            continue
        inner = _inner(hints[name])
        if inner is not None:
            value = properties[key]
            below = _objects(value, defs)
            for entry in ("items", "additionalProperties"):  # an array's items, an open object's values
                if not below and isinstance(value.get(entry), dict):
                    below = _objects(value[entry], defs)
            _walk(inner, below, defs, f"{where}.{key}", missing, unread)
    unread += [f"{where}.{key}" for key in properties if key not in keys]


@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_every_field_of_a_view_is_a_property_of_its_schema_and_back(kind):
    schema = _schema(kind)
    missing: list[str] = []
    unread: list[str] = []
    _walk(VIEWS[kind], [schema], schema.get("$defs", {}), kind, missing, unread)
    assert missing == [], "view fields the schema lacks"
    assert unread == [], "schema properties no view field holds"


def test_the_schema_check_fails_for_a_field_the_schema_lacks():
    class Wrong(View):
        name: str
        title_text: str = ""   # task.yaml has `title`, not this

    missing: list[str] = []
    schema = _schema("task")
    _walk(Wrong, [schema], schema["$defs"], "task", missing, [])
    assert missing == ["task.title_text"]


def _documents(folder: Path):
    """(kind, path, document) of every compiled document under `folder`."""
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".json", ".yaml") or "build" not in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        document = json.loads(text) if path.suffix == ".json" else YAML(typ="safe").load(text)
        kind = str(document.get("schema", "")).rsplit("/", 1)[-1].removesuffix(".schema.json") \
            if isinstance(document, dict) else ""
        if kind in VIEWS:
            yield kind, path, document


def _round_trip(kind: str, document: dict) -> View:
    made = VIEWS[kind].of(document)
    assert thaw(made) == document
    assert json.dumps(thaw(made), sort_keys=True) == json.dumps(document, sort_keys=True)
    return made


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Path:
    """A build of every bundled task, the experiments and the standard library's agents."""
    from mlabc.api import compile_paths

    out = tmp_path_factory.mktemp("bundled") / "build"
    sources = sorted(str(p) for p in (REPO / "tasks").glob("*.mlab")) + \
        sorted(str(p) for p in (REPO / "tasks" / "std").glob("*.mlab"))
    compiled, manifest = compile_paths(sources, out)
    assert manifest is not None, compiled.diagnostics
    return out


def test_every_bundled_task_agent_action_table_and_experiment_makes_a_view_and_gives_it_back(bundled):
    seen = {kind: 0 for kind in VIEWS}
    for kind, _, document in _documents(bundled):
        _round_trip(kind, document)
        seen[kind] += 1
    tasks = len([p for p in (REPO / "tasks").glob("*.mlab") if p.name != "experiments.mlab"])
    assert seen["task"] == tasks and seen["agent"] == seen["actions"] > 5 and seen["experiment"] > 0


def test_the_loader_gives_views_not_documents(bundled):
    from mlab.build import load_build

    build = load_build(bundled)
    for name in build.task_names:
        task = build.task(name)
        assert isinstance(task.view, Task) and not hasattr(task, "doc")
        assert all(type(task.variant(v)).__name__ == "Variant" for v in task.variants)
    for name in build.agent_names:
        agent = build.agent(name)
        assert isinstance(agent.view, Agent) and isinstance(agent.actions, Actions) and not hasattr(agent, "doc")


def test_the_golden_and_older_builds_of_the_tests_make_views():
    found = list(_documents(REPO / "tests"))
    assert any(OLD_RUN_BUILD in path.parents for _, path, _ in found)   # a run folder's build of an older mlab
    for kind, _, document in found:
        _round_trip(kind, document)


def test_an_older_task_without_the_optional_properties_loads_with_their_defaults():
    from mlabc.schemas import problems

    document = YAML(typ="safe").load((OLD_RUN_BUILD / "tasks" / "tiny" / "task.yaml").read_text(encoding="utf-8"))
    for later in ("version", "changes", "issues", "gym", "references"):
        document.pop(later, None)
    document["metric"].pop("params", None)
    document["submission"].pop("constraints", None)
    assert problems("task", document) == []
    task = _round_trip("task", document)
    assert (task.version, task.changes, task.issues, task.gym, task.references) == (1, (), (), None, None)
    assert dict(task.metric.params) == {} and task.submission.constraints == ()
    assert task.data["lite"].validation is None and task.data["lite"].prepare is None


def test_a_field_the_schema_lacks_cannot_be_read_and_a_view_cannot_be_changed():
    document = YAML(typ="safe").load((OLD_RUN_BUILD / "tasks" / "tiny" / "task.yaml").read_text(encoding="utf-8"))
    task = Task.of(document)
    assert task.metric.direction == "lower_is_better" and task.data["lite"].public == ("train.csv", "test.csv")
    with pytest.raises(AttributeError):
        task.metric_direction  # noqa: B018 - not a property of task.yaml
    with pytest.raises(AttributeError, match="read-only"):
        task.metric.extra = 1
    with pytest.raises(AttributeError, match="read-only"):
        task.title = "changed"
    with pytest.raises(TypeError):
        task.data["full"] = task.data["lite"]
    with pytest.raises(TypeError):
        task["metric"]


def test_a_view_pickles_whole_for_a_scoring_child():
    document = YAML(typ="safe").load((OLD_RUN_BUILD / "tasks" / "tiny" / "task.yaml").read_text(encoding="utf-8"))
    task = Task.of(document)
    again = pickle.loads(pickle.dumps(task))
    assert again == task and thaw(again) == document


# -- the runtime reads no loaded document by key ----------------------------------------------

def _run_copy(node: ast.AST) -> bool:
    """Whether an expression is a run's build-copy view: `task_document(...)` or `X.agent_doc`,
    or either behind `or {}` (the raw-dict idiom the views replaced)."""
    if isinstance(node, ast.BoolOp):
        return any(_run_copy(value) for value in node.values)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "task_document") \
        or (isinstance(node, ast.Attribute) and node.attr == "agent_doc")


def _key_reads(tree: ast.AST) -> list[int]:
    """Lines where a document is read by key: `X.doc` at all, `X.document[...]`, `X.document.get(...)`,
    and a run's build copy (`task_document(run)`, `run.agent_doc`) subscripted or read with `.get`."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _run_copy(node.value):
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in ("get", "items", "keys", "values") \
                and _run_copy(node.value):
            lines.append(node.lineno)
        if isinstance(node, ast.Attribute) and node.attr == "doc":
            lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "document":
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "document" and node.attr in ("get", "items", "keys", "values"):
            lines.append(node.lineno)
    return lines


def test_the_runtime_reads_no_loaded_document_by_key():
    found = [f"{path.relative_to(REPO)}:{line}" for path in sorted(RUNTIME.rglob("*.py"))
             for line in _key_reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_scan_finds_each_kind_of_key_read():
    code = ("a = task.doc\nb = task.document['metric']\nc = run.task.document.get('title')\n"
            "d = task.view.metric.name\ne = write(task.document)\n"
            "f = (task_document(run) or {}).get('issues')\ng = run.agent_doc['reply']\n"
            "h = (run.agent_doc or {}).items()\ni = task_document(run).metric.direction\nj = run.agent_doc.search\n")
    assert sorted(_key_reads(ast.parse(code))) == [1, 2, 3, 6, 7, 8]
