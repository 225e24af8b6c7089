"""`mlab view RUN_DIR`: one self-contained HTML page of a run (inline CSS, JS and SVG; opens from disk).

At the top: the task, the result (with a banner for demonstrations) and, when intermediate
scores exist, the score over steps. Then each step: the reply sections under the agent's own
names, styled by their declared role; the action and its input; the observation (long ones
folded); diffs of the files the step changed; tokens and time; numbers flagged as hallucinated
claims. The page grows linearly with the run, and every long text is cut to a bounded size.
"""
from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from mlab.errors import RunError, StorageError
from mlab.limits import WIND_DOWN_LABEL, is_wind_down, step_limit
from mlab.text import utf8_safe
from mlab.reports.runs import LoadedRun, load_run, task_document
from mlab.reports.taxonomy import findings
from mlab.scoring.result import unsandboxed_note
from mlab.trace import full_record
from mlab.viewer.assets import CSS, RUN_JS
from mlab.viewer.chart import score_chart
from mlab.viewer.diff import DATA_PREVIEW_LINES, FileChange, step_changes
from mlab.viewer.folds import FoldTable
from mlab.viewer.searchtree import node_heading, node_plan, tree_nodes, tree_svg
from mlab.viewer.tools import assistant_text, format_badge, is_tool_step, tool_call, tool_result

FOLD_CHARS, FOLD_LINES = 1500, 25      # observations longer than this start folded
MAX_SHOWN_CHARS = 20000                # longer texts show their first and last halves of this
MAX_PROMPT_CHARS = 12000


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n\n[… {len(text) - 2 * half:,} characters not shown …]\n\n{text[-half:]}"


def _role_class(role: str | None) -> str:
    return "role-" + re.sub(r"[^a-z0-9]+", "-", (role or "other").lower()).strip("-")


def _fact(name: str, value: str, css: str = "") -> str:
    return f"<div><dt>{escape(name)}</dt><dd class='{css}'>{value}</dd></div>"


def _number(value, digits: int = 6) -> str:
    return "–" if value is None else escape(f"{value:.{digits}g}")


def _header(run: LoadedRun, labels: list, claims: list) -> str:
    result = run.result or {}
    parts = ["<header class='run'>"]
    if run.demo:
        parts.append("<div class='demo-banner'>DEMONSTRATION — played by the keyless demo model "
                     "(mlab/demo); not an agent result.</div>")
    bare = unsandboxed_note(run.result)
    if bare:
        parts.append(f"<div class='demo-banner unsandboxed'>{escape(bare)}.</div>")
    parts.append(f"<h1>{escape(run.task)} · {escape(run.agent)} · {escape(run.model)}</h1>")
    parts.append(f"<dl class='facts'>{''.join(_facts(run, labels, claims))}</dl>")
    parts += _charts(run, result)
    if run.problem:
        parts.append(f"<details><summary>Research problem</summary><pre>{escape(clip(run.problem))}</pre></details>")
    parts.append("<div class='toolbar'><button id='open-all' type='button'>open all folds</button>"
                 "<button id='close-all' type='button'>close all folds</button><span class='meta'>jump to step:"
                 "</span></div><nav class='steps'></nav></header>")
    return "".join(parts)


def _facts(run: LoadedRun, labels: list, claims: list) -> list[str]:
    """The run's facts: what ran, the task's known issues, the models and the result."""
    facts = [_fact("run", escape(run.id)), _fact("task version", str(run.task_version)),
             _fact("data variant", escape(run.variant)),
             _fact("seed", str(run.seed)), _fact("created", escape(run.meta.get("created", "")))]
    task = task_document(run)
    for issue in task.issues if task is not None else ():  # the task's declared known issues
        if issue.since <= run.task_version:
            fixed = issue.fixed
            state = f"fixed in version {fixed}" if fixed and fixed <= run.task_version else "open"
            facts.append(_fact("known issue", escape(f"{issue.text} (since version {issue.since}, {state})"),
                               "verdict bad" if state == "open" else ""))
    for tier, config in run.tiers.items():
        facts.append(_fact(f"{tier} model", escape(config.get("model", ""))))
    if run.result is None:
        facts.append(_fact("result", "unfinished: no result.json", "verdict bad"))
    else:
        facts += _result_facts(run.result, labels)
    facts.append(_fact("hallucinated claims", str(len(claims)), "verdict bad" if claims else ""))
    return facts


def _result_facts(result: dict, labels: list) -> list[str]:
    """The facts of a finished run's result.json."""
    baseline = (result.get("baseline") or {}).get("value")
    gain = result.get("improvement")
    facts = [
        _fact(f"score ({result.get('metric_display') or result.get('metric')}, {str(result.get('direction', '')).replace('_', ' ')})",
              f"<span class='final-score'>{_number(result.get('score'))}</span>"),
        _fact("baseline", _number(baseline)),
        _fact("improvement", "–" if gain is None else f"{gain:+.1%} (threshold {result.get('threshold', 0):.0%})"),
        _fact("verdict", "success" if result.get("success") else "no success",
              "verdict ok" if result.get("success") else "verdict bad"),
        _fact("end", escape(str(result.get("end_reason")))),
        _fact("steps", str(result.get("steps"))),
        _fact("wall time", f"{result.get('wall_time_s', 0):.1f} s"),
        _fact("tokens", f"{result.get('total_tokens', 0):,}"),
        _fact("cost", "unknown" if result.get("cost") is None else f"${result['cost']:.4f}"),
        _fact("scripts", escape(_compute_total(result.get("compute") or {}))),
    ]
    facts += _search_facts(result)
    if labels:
        facts.append(_fact("failure labels", escape("; ".join(label.text() for label in labels)), "verdict bad"))
    if result.get("detail"):
        facts.append(_fact("detail", escape(str(result["detail"]))))
    return facts


def _charts(run: LoadedRun, result: dict) -> list[str]:
    """The search tree of a tree search, and the score over steps (or how to get it)."""
    parts = []
    nodes = tree_nodes(run.records)
    if nodes:
        submitted = (result.get("search") or {}).get("submitted_node")
        lower = None if not result.get("direction") else result.get("direction") == "lower_is_better"
        parts.append(f"<div class='chart tree' id='search-tree'><h3>Search tree</h3><p class='meta'>click a node "
                     f"for its plan, its code against its parent and its output</p>"
                     f"{tree_svg(nodes, submitted, lower)}</div>")
    if run.scores:
        parts.append(f"<div class='chart' id='score-chart'>{score_chart(run.scores, str(result.get('metric_display') or result.get('metric')), result.get('direction'), (result.get('baseline') or {}).get('value'))}</div>")
    elif run.records:
        parts.append("<div class='chart' id='score-chart'><p class='meta'>No score over steps yet: run "
                     f"<code>mlab eval --intermediate {escape(str(run.dir))}</code> to score every step's "
                     "snapshot, then <code>mlab view</code> again for the chart.</p></div>")
    return parts


def _search_facts(result: dict) -> list[str]:
    """The facts of a tree search (its policy, tree size and chosen node), and the reply format that
    ran where a tool agent fell back to its text format."""
    facts = []
    search = result.get("search")
    if isinstance(search, dict):
        chosen = search.get("submitted_node")
        facts += [_fact("search", escape(f"{search.get('policy')}: {search.get('nodes')} nodes, "
                                         f"{search.get('valid_nodes')} valid, {search.get('buggy_nodes', '–')} buggy")),
                  _fact("submitted node", "none" if chosen is None else
                        f"<a href='#node-{int(chosen)}'>node {int(chosen)}</a> (validation "
                        f"{_number(search.get('submitted_validation'))}, chosen by "
                        f"{escape(str(search.get('selected_by') or 'validation'))})",
                        "" if chosen is not None else "verdict bad")]
    reply_format = result.get("reply_format")
    if isinstance(reply_format, dict) and reply_format.get("ran") != reply_format.get("declared"):
        why = f": {reply_format['reason']}" if reply_format.get("reason") else ""
        facts.append(_fact("reply format", escape(f"{reply_format.get('ran')} (declared {reply_format.get('declared')}"
                                                  f"{why})"), "verdict bad"))
    return facts


def _compute_total(compute: dict) -> str:
    if not compute.get("scripts"):
        return "none run"
    memory = compute.get("peak_memory_bytes") or 0
    return (f"{compute['scripts']} run(s), {compute.get('wall_s', 0):.1f} s wall, {compute.get('cpu_s', 0):.1f} s CPU, "
            f"peak {memory / 2**20:,.0f} MiB")


def _marked(text: str, numbers: set[str]) -> str:
    """Escaped text with the flagged numbers highlighted."""
    shown = escape(clip(text))
    for number in sorted(numbers, key=len, reverse=True):
        shown = re.sub(rf"(?<![\w.,]){re.escape(escape(number))}(?![\w])",
                       f"<mark class='claim' title='stated as confirmed; no earlier observation showed it'>"
                       f"{escape(number)}</mark>", shown)
    return shown


def _sections(run: LoadedRun, model: dict, step_claims: list) -> str:
    reply = model.get("reply") or {}
    parts = []
    for section in run.sections_for(model.get("format")):
        if section.kind in ("action", "json") or not reply.get(section.name):
            continue
        flagged = {c.number for c in step_claims if c.section == section.name}
        parts.append(f"<div class='section {_role_class(section.role)}' data-role='{escape(section.role or '')}'>"
                     f"<h3>{escape(section.name)}</h3><div class='text'>{_marked(reply[section.name], flagged)}"
                     f"</div></div>")
    if not reply and model.get("response") and not model.get("message"):
        parts.append(f"<details><summary>raw reply (not parsed)</summary><pre>{escape(clip(model['response']))}"
                     "</pre></details>")
    errors = model.get("format_errors") or []
    if errors:
        items = "".join(f"<li>{escape(clip(e, 2000))}</li>" for e in errors)
        parts.append(f"<div class='format-errors'><h3>format errors ({len(errors)})</h3><ol>{items}</ol></div>")
    return "".join(parts)


def _observation(text: str, title: str = "Observation") -> str:
    lines = text.count("\n") + 1
    body = f"<pre class='observation-text'>{escape(clip(text))}</pre>"
    if len(text) <= FOLD_CHARS and lines <= FOLD_LINES:
        return f"<h3>{title}</h3>{body}"
    first = escape(text.strip().splitlines()[0][:120]) if text.strip() else ""
    return (f"<h3>{title}</h3><details class='long'><summary>{first} … ({lines:,} lines, "
            f"{len(text):,} characters)</summary>{body}</details>")


def file_diff_html(change: FileChange) -> str:
    title = f"{escape(change.path)} ({change.kind}"
    shape = f", {escape(change.data)}" if change.data else ""
    title += f"{shape}; +{change.added} −{change.removed})" if change.diff is not None and shape else \
        f", +{change.added} −{change.removed})" if change.diff is not None else f"; {escape(change.note)})"
    if change.diff is None:
        return f"<div class='file-change'><code>{title}</code></div>"
    shown, folded = change.diff, ""
    if change.is_data:
        # A data file's rows are not worth reading: a summary, and the diff's first lines, folded.
        shown = change.diff[:DATA_PREVIEW_LINES]
        if len(change.diff) > len(shown):
            folded = (f"<p class='meta'>… {len(change.diff) - len(shown):,} more diff line(s) of this data "
                      "file not shown</p>")
    lines = []
    for line in shown:
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++") \
            else "del" if line.startswith("-") and not line.startswith("---") else ""
        text = escape(line.rstrip("\n"))
        lines.append(f"<span class='{css}'>{text}</span>" if css else text + "\n")
    note = f"<p class='meta'>{escape(change.note)}</p>" if change.note else ""
    kind = "file-change data'" if change.is_data else "file-change' open"
    return (f"<details class='{kind}><summary>{title}</summary><pre class='diff'>{''.join(lines)}"
            f"</pre>{folded}{note}</details>")


def _usage(record: dict, previous_elapsed: float) -> str:
    calls = (record.get("model") or {}).get("calls", [])
    tokens = sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)
    costs = [c.get("cost") for c in calls]
    cost = "" if not calls else " · cost unknown" if None in costs else f" · ${sum(costs):.4f}"
    took = float(record.get("elapsed_s", 0.0)) - previous_elapsed
    return (f"<span class='meta'>{tokens:,} tokens in {len(calls)} call(s){cost} · {took:.1f} s "
            f"(at {float(record.get('elapsed_s', 0.0)):.1f} s)</span>")


def _calls(record: dict, folds: FoldTable) -> str:
    """The step's model calls and its prompt, folded: the details name their entries of the page's
    table (folds.py), from which the page's script builds the calls' table and writes the prompt
    the first time they are opened."""
    model = record.get("model") or {}
    calls = model.get("calls") or []
    if not calls:
        return ""
    rows = [[str(c.get("tier")), str(c.get("model")), str(c.get("purpose")), f"{c.get('prompt_tokens', 0):,}",
             f"{c.get('completion_tokens', 0):,}", str(c.get("latency_s", 0))] for c in calls]
    prompt = model.get("prompt")
    shown = f" data-prompt='{folds.add(clip(prompt, MAX_PROMPT_CHARS))}'" if prompt else ""
    return (f"<details class='calls' data-calls='{folds.add_calls(rows)}'{shown}><summary>model calls ({len(calls)}) "
            "and prompt</summary></details>")


def _action(record: dict) -> str:
    action = record.get("action")
    if action is None:
        return ""
    name = action if isinstance(action, str) else json.dumps(action)
    text = input_text(record.get("action_input"))
    body = f"<pre>{escape(clip(text))}</pre>"
    if len(text) > FOLD_CHARS:
        body = f"<details><summary>input ({len(text):,} characters)</summary>{body}</details>"
    return f"<div class='action'><h3>Action</h3><code class='name'>{escape(name)}</code>{body}</div>"


def input_text(given) -> str:
    """An action input as a reader wants it: one field per line, multi-line text as a block."""
    if not isinstance(given, dict):
        return given if isinstance(given, str) else json.dumps(given, indent=2, ensure_ascii=False)
    lines = []
    for name, value in given.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{name}:\n" + "".join(f"    {line}\n" for line in value.splitlines()))
        else:
            lines.append(f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}\n")
    return "".join(lines).rstrip("\n")


def script_failure(compute: dict | None) -> str | None:
    """How the step's script failed (non-zero exit, time-out, out of memory), or None."""
    compute = compute or {}
    if compute.get("timed_out"):
        return "script timed out"
    if compute.get("out_of_memory"):
        return "script out of memory"
    if compute.get("exit_code") not in (0, None):
        return f"script exited {compute['exit_code']}"
    return None


def _status(record: dict) -> tuple[str, str]:
    """(the step's status as shown, its CSS class): an action whose script failed is not "ok"."""
    status = str(record.get("status", ""))
    failed = script_failure(record.get("compute"))
    if failed and status in ("ok", ""):
        return failed, "script-failed"
    return status, status


def _compute(compute: dict | None) -> str:
    if not compute:
        return ""
    what = [f"exit code {compute.get('exit_code')}", f"{compute.get('wall_s', 0):.1f} s wall",
            f"{compute.get('cpu_s', 0):.1f} s CPU"]
    if compute.get("peak_memory_bytes"):
        what.append(f"peak {compute['peak_memory_bytes'] / 2**20:,.0f} MiB")
    if compute.get("timed_out"):
        what.append("TIMED OUT")
    if compute.get("out_of_memory"):
        what.append("OUT OF MEMORY")
    css = "compute failed" if script_failure(compute) else "compute"
    return f"<p class='{css}'>script: {escape(', '.join(what))}</p>"


def _files_changed(record: dict, changes: tuple[list[FileChange], int]) -> str:
    shown, more = changes
    if not shown:
        return ""
    extra = f"<p class='meta'>… and {more} more file(s)</p>" if more else ""
    title = "Files changed"
    if isinstance(record.get("node"), int):
        shown = sorted(shown, key=lambda change: change.is_data)  # the node's code before its outputs
        parent = record.get("parent")
        title = "Code and files against the initial workspace" if parent is None else \
            f"Code and files against node {parent}"
    return f"<div class='diffs'><h3>{escape(title)}</h3>{''.join(file_diff_html(c) for c in shown)}{extra}</div>"


def _step(run: LoadedRun, record: dict, changes: tuple[list[FileChange], int], claims: list,
          previous_elapsed: float, folds: FoldTable, submitted: int | None = None, tree: bool = False) -> str:
    number, (status, css) = record["step"], _status(record)
    action = record.get("action")
    name = action if isinstance(action, str) else "(no action)" if action is None else json.dumps(action)
    model = record.get("model") or {}
    node = record.get("node") if isinstance(record.get("node"), int) else None
    label = number
    if node is not None:
        anchor, heading, kind = f"node-{node}", f"Node {node} · {escape(name)}", "step node"
    elif is_wind_down(record, step_limit(run.meta)):  # after a limit: no step number past it
        status, label = ("not run: limit reached" if status == "shutdown" else status), WIND_DOWN_LABEL
        anchor, heading, kind = f"step-{number}", f"At limit · {escape(name)}", "step"
    else:
        anchor, heading, kind = f"step-{number}", f"Step {number} · {escape(name)}", "step"
    parts = [f"<article class='{kind}' id='{anchor}' data-step='{number}' data-label='{label}' "
             f"data-status='{escape(css)}' data-action='{escape(name)}'><h2>{heading} "
             f"<span class='status {escape(css)}'>{escape(status)}</span>"
             f"{format_badge(model, run.declared_format)}{_usage(record, previous_elapsed)}</h2>"]
    if node is not None:
        parts.append(node_heading(record, submitted))
        plan = node_plan(record)
        if plan:
            parts.append(f"<div class='section role-plan' data-role='plan'><h3>Plan</h3><div class='text'>"
                         f"{escape(clip(plan))}</div></div>")
    sections = _sections(run, model, claims)
    parts.append(sections)
    if claims:
        items = "".join(f"<li><b>{escape(c.number)}</b> in {escape(c.section)}: “{escape(c.sentence)}”</li>"
                        for c in claims)
        parts.append(f"<div class='claims'><h3>hallucinated claims</h3><ul>{items}</ul></div>")
    observation = str(record.get("observation", ""))
    if is_tool_step(model):
        parts.append(assistant_text(model, "class='section" in sections))
        resolved = record.get("resolved") if isinstance(record.get("resolved"), dict) else {}
        parts.append(tool_call(model, resolved.get("action") or (action if isinstance(action, str) else None)))
        parts.append(tool_result(model, observation))
    elif node is None:
        parts.append(_action(record))
    closing = node is None and tree
    if closing:
        chosen = (record.get("search") or {}).get("submitted_node") if isinstance(record.get("search"), dict) \
            else None
        chosen = chosen if isinstance(chosen, int) else submitted
        parts.append("<p class='node-facts'>" + (
            f"The workspace of <a href='#node-{chosen}'>node {chosen}</a> became the final workspace, which was "
            "scored." if chosen is not None else "No node was valid: the final workspace is the initial one.")
            + "</p>")
        changes = ([], 0)  # the closing delta is against every delta in order, not worth reading
    parts.append(_observation(observation, "Output" if node is not None else "Observation"))
    parts.append(_compute(record.get("compute")))
    parts.append(_files_changed(record, changes))
    if record.get("end_reason"):
        parts.append(f"<p class='meta'>the run ended here: {escape(str(record['end_reason']))}</p>")
    parts.append(_calls(record, folds))
    parts.append("</article>")
    return "".join(parts)


def _in_full(run: LoadedRun, record: dict) -> dict:
    """The record with its long texts read back from objects/ (they are clipped when shown); the
    previews the trace holds where an object cannot be read."""
    try:
        return full_record(record, run.dir / "objects")
    except RunError:
        return record


def render_run(run: LoadedRun) -> str:
    """The whole page as a string."""
    claims, labels = findings(run)
    records = run.records
    changes = step_changes(run.dir, run.meta, records)
    by_step: dict[int, list] = {}
    for claim in claims:
        by_step.setdefault(claim.step, []).append(claim)
    steps, previous = [], 0.0
    submitted = ((run.result or {}).get("search") or {}).get("submitted_node")
    tree = any(isinstance(record.get("node"), int) for record in records)
    folds = FoldTable()
    for record, change in zip(records, changes):
        steps.append(_step(run, _in_full(run, record), change, by_step.get(record["step"], []), previous,
                           folds, submitted, tree))
        previous = float(record.get("elapsed_s", previous))
    title = f"mlab run {run.id} — {run.task} / {run.agent}" + (" — DEMONSTRATION" if run.demo else "")
    body = "".join(steps) or "<p>This run has no steps yet.</p>"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{escape(title)}</title><style>{CSS}</style></head>"
            f"<body>{_header(run, labels, claims)}<main>{body}</main>{folds.script()}<script>{RUN_JS}</script>"
            "</body></html>\n")


def write_page(path: Path, page: str) -> Path:
    """The page into `path` (RUN_DIR/view.html by default: never through a link planted there)."""
    from mlab.confined import write_into
    from mlab.errors import MlabError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_into(path.parent, path.name, utf8_safe(page))  # a trace may hold lone surrogates
    except (OSError, MlabError) as problem:
        raise StorageError(f"cannot write {path}: {problem.strerror or problem}") from None
    return path


def write_run_page(run_dir: Path, output: Path) -> Path:
    return write_page(Path(output), render_run(load_run(Path(run_dir))))
