"""A finished run's summary.json: what reports take from its trace (the number of records, a tree
search's nodes, the findings of mlab.reports.taxonomy), written at the run's end beside result.json
by the verbs that score it (spec/summary.schema.json). A report of a run reads this small file instead of
its trace, which for a 50-step research run is about a megabyte; runs made before summaries, and
runs whose summary no longer describes them, are read from their traces as before."""
from __future__ import annotations

import json
import os
from pathlib import Path

from mlab.errors import MlabError, RunError
from mlab.text import note_once
from mlab.trace import TRACE

SUMMARY = "summary.json"
SUMMARY_VERSION = 1
SUMMARY_MAX_BYTES = 16 << 20
_SUMMARY_ID = "https://mlab.dev/spec/summary.schema.json"
NODE_FIELDS = ("node", "parent", "operator", "validation", "buggy")
# What the findings mean (mlab.reports.taxonomy's claims and labels): bump it when they change, so
# that runs' summaries (and remembered facts, mlab.reports.runs) of the earlier meaning are read
# from their traces again.
FACTS_VERSION = 1
_FIELDS = {"claims": ("step", "section", "number", "sentence"), "labels": ("name", "detail")}


def result_digest(result: dict) -> str:
    """SHA-256 of a result.json document as compact JSON with sorted keys (what a summary's labels
    were made from)."""
    import hashlib

    text = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _summary_shape(document: dict) -> bool:
    """Whether a summary's findings have the shapes reports use (spec/summary.schema.json, checked
    by hand: a report reads thousands of them). Not a shared check, as both let through what this
    refuses: the schema's integer admits a step or node 1.0, shape_problem a key no reader knows."""
    if not isinstance(document.get("records"), int) or not isinstance(document.get("nodes"), list):
        return False
    for node in document["nodes"]:
        if not (isinstance(node, dict) and type(node.get("node")) is int and set(node) <= set(NODE_FIELDS)):
            return False
    for name, fields in _FIELDS.items():
        items = document.get(name)
        if not isinstance(items, list):
            return False
        for item in items:
            if not (isinstance(item, dict) and tuple(item) == fields
                    and all(isinstance(item[f], int if f == "step" else str) for f in fields)):
                return False
    return True


def read_summary(run) -> dict | None:
    """RUN's (a mlab.reports.runs.LoadedRun) summary.json where it still describes the run: the
    trace has the size it names, result.json the content, and its findings are of this code's
    FACTS_VERSION; else None (the trace is read). A run made before summaries has none; a damaged or forged one is no summary."""
    if run.result is None:
        return None
    from mlab.bounded_json import loads, read_bytes

    try:
        document = loads(read_bytes(run.dir / SUMMARY, SUMMARY_MAX_BYTES), what=SUMMARY)
        size = os.stat(run.dir / TRACE).st_size
    except (OSError, ValueError, MlabError):
        return None
    if not (isinstance(document, dict) and document.get("schema_version") == SUMMARY_VERSION
            and document.get("findings_version") == FACTS_VERSION and document.get("trace_bytes") == size
            and document.get("result_digest") == result_digest(run.result) and _summary_shape(document)):
        return None
    if isinstance(document.get("trace_note"), str):
        note_once(document["trace_note"])   # said by every command that uses it, as by one reading the trace
    return document


def record_summary(run) -> dict:
    """Write summary.json into RUN's folder (a finished mlab.reports.runs.LoadedRun) from its trace
    and result.json: what a report takes from the trace (spec/summary.schema.json), so that reports
    of the run read this small file instead. Called by the verbs once result.json is written
    (mlab.cli.run.write_summary)."""
    from dataclasses import asdict

    from mlabc.schemas import problems

    from mlab.reports.taxonomy import findings
    from mlab.standard_json import write_json

    if run.result is None:
        raise RunError(f"{run.dir} has no result.json: a summary is made at a run's end")
    run.__dict__["facts"] = None   # made from the trace itself, whatever was remembered
    size = os.stat(run.dir / TRACE).st_size
    claims, labels = findings(run)
    document = {"schema": _SUMMARY_ID, "schema_version": SUMMARY_VERSION, "findings_version": FACTS_VERSION,
                "trace_bytes": size, "result_digest": result_digest(run.result), "records": len(run.records),
                "nodes": run.nodes, "claims": [asdict(c) for c in claims], "labels": [asdict(label) for label in labels],
                "trace_note": run._trace_note}
    found = problems("summary", document)
    if found:
        raise MlabError("internal error: the summary does not match spec/summary.schema.json: " + "; ".join(found))
    write_json(run.dir / SUMMARY, document)
    return document

