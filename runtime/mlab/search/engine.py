"""The tree-search engine: grow a tree of candidate solutions with a policy, then submit the best.

Each round the policy decides (an operator and its parents) with its own random generator,
`random.Random(f"{seed}:{node}")`; the operator's prompt goes to the main model, whose plan and code
make a node; the node is evaluated in its own copy of its parent's workspace (up to `parallel` at
once, in threads, while model calls stay in this thread); once evaluated it is one trace record
(node, parent, operator, validation, buggy, holdout, search, and a snapshot that is the delta from
the parent's workspace). Steps count nodes; the time limit is wall time; tokens and cost as usual.

At the end the best valid node (by its validation score, or by the harness's holdout among the
best few) becomes the run's workspace, and a closing record says which node it is: its snapshot
takes the trace read linearly (initial snapshot and every delta in order) to that node's
workspace, so every tool that reads a trace step by step finds the final workspace at its end.
A run killed at any moment resumes from its trace: the tree is rebuilt from the node records,
the policy observes them again in order, and each later decision draws the same random state.
"""
from __future__ import annotations

import random
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable

from mlab.agent.prompting import Templates
from mlab.agent.replies import ReplyError
from mlab.errors import MlabError, RunError
from mlab.failure import FailureMode
from mlab.models.client import ModelClient
from mlab.models.errors import ModelError
from mlab.models.usage import Usage
from mlab.models.errors import BudgetSpent, DemonstrationDone
from mlab.models.usage import Budget, limit_spent
from mlab.text import utf8_safe
from mlab.search import context as C
from mlab.search.evaluation import Evaluation, NodeEvaluator, score_by_pattern
from mlab.search.operators import OPERATOR_FORMAT, Asker, ask_review, parse_operator_reply
from mlab.search.policies import make_policy
from mlab.search.policy import Decision, Policy
from mlab.search.tree import Node, Tree, choose_submitted
from mlab.run.checkout import node_manifests
from mlab.snapshots import Delta, apply_delta
from mlab.trace import TRACE, TRACE_VERSION, TraceWriter, full_text, store_long_texts, timestamp

SCORE_NAME = "validation"


@dataclass
class SearchOutcome:
    """How the search ended (read by write_result as a loop outcome is) and its summary for result.json."""
    end_reason: str
    failure_mode: str | None = None
    detail: str | None = None
    search: dict = field(default_factory=dict)


@dataclass
class Pending:
    """A node made by the model whose evaluation is running."""
    node: Node
    exchange: dict
    started: float
    clock: float
    future: Future | None = None
    problem: str | None = None  # the model gave no usable code: nothing to run




def selection_problem(task, agent, variant: str) -> str | None:
    """Why the agent's final selection cannot work on this data variant (None when it can): a
    holdout needs the variant to hold out a validation split. `mlab run` asks before it makes
    the run folder, the engine again on resume."""
    search = agent.view.search
    if search is None or search.select != "holdout" or task.variant(variant).validation is not None:
        return None
    return (f"agent {agent.name} chooses its final node on a holdout, but data variant {variant!r} of task "
            f"{task.name} holds out no validation split; declare one (`validation 0.1` in the variant) or "
            "use `select validation`")


class SearchEngine:
    """Runs one tree-search Run with one ModelClient until the search ends."""

    def __init__(self, run, client: ModelClient, *, agent=None, on_node: Callable | None = None,
                 should_stop: Callable[[], bool] | None = None):
        agent = agent if agent is not None else run.agent
        spec = agent.view.search
        if spec is None:
            raise MlabError(f"agent {agent.name} declares no search; it runs in the agent loop")
        self.run, self.client, self.agent, self.spec = run, client, agent, spec
        self.on_node = on_node
        self.should_stop = should_stop or (lambda: False)
        self.policy: Policy = make_policy(spec.policy, spec.params)
        self.parallel = max(spec.parallel, 1)
        self.code_file = spec.code_file or "train.py"
        self.score = spec.score
        self.select = spec.select or "validation"
        self.templates = Templates(agent.templates)
        self.asker = Asker(client, self.templates, agent.templates, agent.view.format_retries, self.code_file)
        for needed in [*(spec.operators or ("draft", "improve", "debug")),
                       *(["review"] if self.score.from_ == "review" else [])]:
            if needed not in agent.templates:
                raise MlabError(f"agent {agent.name} has no {needed} template, which its search needs; "
                                "recompile it with this mlabc")
        problem = selection_problem(run.task, agent, run.meta["data"]["variant"])
        if problem:
            raise MlabError(problem)
        self.evaluator = NodeEvaluator(run, self.code_file, holdout=self.select == "holdout")
        self.tree = Tree(lower_is_better=run.task.view.metric.direction == "lower_is_better")
        self.seed = run.meta.get("seed", 0)
        self.usage = Usage.from_records(run.records)
        # operators and reviews are checked against the run's token and cost limits before each call
        client.budget = Budget(run.limits.tokens, run.limits.cost, Usage.from_records(run.records), run.limits.calls)
        self.initial = dict(run.store.get_json(run.meta["initial_snapshot"]))
        self.manifests: dict[int, dict[str, str]] = {}
        self._trace = TraceWriter(run.dir / TRACE)
        self._preview: str | None = None
        self._rebuild()

    # -- the tree from the trace (resume) -----------------------------------------------
    def _rebuild(self) -> None:
        objects = self.run.store.folder
        for record in self.run.records:
            if "node" not in record:
                continue
            facts = dict(record.get("search") or {})
            response = full_text(record, ["model", "response"], objects) if (record.get("model") or {}).get(
                "response") else ""
            try:
                plan, code = parse_operator_reply(response) if response else ("", "")
            except ReplyError:  # the model never gave usable code: a buggy node without any
                plan, code = "", ""
            node = Node(record["node"], record.get("parent"), record["operator"], plan=plan, code=code,
                        output=full_text(record, ["observation"], objects), validation=record.get("validation"),
                        buggy=bool(record.get("buggy", True)), holdout=record.get("holdout"),
                        second_parent=facts.get("second_parent"), facts=facts)
            try:
                self.tree.add(node)
            except ValueError as problem:
                raise RunError(f"the trace of run {self.run.id} does not hold a tree ({problem}); "
                               "it cannot be continued as a search") from None
            self.policy.observe(self.tree, node)
        self.manifests = node_manifests(self.initial, self.run.records)

    # -- limits --------------------------------------------------------------------------
    @property
    def max_nodes(self) -> int | None:
        return self.run.limits.steps

    def limit_reached(self) -> str | None:
        limits = self.run.limits
        if limits.steps is not None and len(self.tree) >= limits.steps:
            return "steps"
        if self.run.remaining_time() <= 0:
            return "time"
        spent = limit_spent(self.usage, limits.tokens, limits.cost, limits.calls)
        if spent:
            return spent
        budget = getattr(self.client, "budget", None)  # every call the client made, a lost one's too
        return budget.reached() if budget is not None else None

    # -- the search ----------------------------------------------------------------------
    def run_until_done(self) -> SearchOutcome:
        """Grow the tree until the policy is done, a limit is reached, the model fails or a stop is
        asked; then (unless stopped) submit the chosen node. The engine's trace writer is closed after."""
        try:
            if self.run.ended:  # killed after the closing record, before result.json
                return self._outcome_of_ended()
            return self._search()
        finally:
            self.close()

    def _search(self) -> SearchOutcome:
        running: dict[Future, Pending] = {}
        failure: tuple[str, str] | None = None
        reason = None
        pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="mlab-node")
        stopped = False
        try:
            while True:
                if reason is None and failure is None:
                    reason = self._stop_reason()
                if reason is None and failure is None:
                    reason, failure = self._start_nodes(pool, running)
                if not running:
                    if reason is not None or failure is not None:
                        break
                    continue
                reason, failure = self._record_finished(running, reason, failure)
        except BaseException:  # a second Ctrl-C: stop waiting (running scripts end by their timeout)
            stopped = True
            raise
        finally:
            if not stopped:
                self.evaluator.close()   # the threads' slots (after a stop, close() removes them)
            pool.shutdown(wait=not stopped, cancel_futures=True)
        if reason == "interrupted":
            return SearchOutcome("interrupted")
        if failure is not None:
            return self._finish(failure[0], failure[0], failure[1])
        return self._finish(reason or "search_done")

    def _stop_reason(self) -> str | None:
        """Why the search stops growing before its next node (a stop asked, a limit reached), or None."""
        if self.should_stop():
            return "interrupted"
        limit = self.limit_reached()
        return f"{limit}_limit" if limit else None

    def _start_nodes(self, pool: ThreadPoolExecutor, running: dict) -> tuple[str | None, tuple[str, str] | None]:
        """Ask for new nodes and start evaluating them until every slot is busy; the (reason, failure)
        that ends the search, if one came up meanwhile."""
        while len(running) < self.parallel:
            number = self.tree.next_id()
            decision = self.policy.decide(self.tree, random.Random(f"{self.seed}:{number}"))
            if decision is None:
                return (None if running else "search_done"), None
            try:
                pending = self._make(number, decision)
            except BudgetSpent as spent:  # the limit was spent inside the step
                return spent.end_reason, None
            except DemonstrationDone:  # the demo model has nothing new to offer: the search is done
                return "demonstration_done", None
            except ModelError as problem:
                return None, (problem.failure_mode, str(problem))
            if pending.problem is not None:
                self._record(pending, None)
                return None, None
            pending.future = pool.submit(self._evaluate, pending)
            running[pending.future] = pending
            limit = self.limit_reached()
            if limit:
                return f"{limit}_limit", None
        return None, None

    def _record_finished(self, running: dict, reason: str | None,
                         failure: tuple[str, str] | None) -> tuple[str | None, tuple[str, str] | None]:
        """Wait for at least one evaluation to end and record every ended one, in node order; the
        first reason or failure to end the search stands."""
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for future in sorted(done, key=lambda f: running[f].node.id):
            pending = running.pop(future)
            try:
                evaluation = future.result()
            except (MlabError, OSError) as problem:  # e.g. the interpreter is missing, the disk full
                pending.problem = f"the node could not be evaluated: {problem}"
                evaluation = None
            try:
                self._record(pending, evaluation)
            except BudgetSpent as spent:
                reason = reason or spent.end_reason
            except ModelError as problem:
                failure = failure or (problem.failure_mode, str(problem))
        return reason, failure

    def _make(self, number: int, decision: Decision) -> Pending:
        """Ask the model for the node's plan and code (this thread); raises ModelError."""
        started, clock = time.time(), time.perf_counter()
        unknown = [p for p in decision.parents if p not in self.tree.nodes or self.tree.nodes[p].pending]
        if unknown:
            raise MlabError(f"policy {self.policy.name} chose node {unknown[0]} as a parent, which is not in the "
                            "tree or not evaluated yet")
        parents = [self.tree.nodes[p] for p in decision.parents]
        for parent in parents:
            if not parent.valid and decision.operator in ("improve", "crossover"):
                raise MlabError(f"policy {self.policy.name} asked to {decision.operator} node {parent.id}, "
                                "which is not valid")
        parent = parents[0] if parents else None
        variables = C.operator_context(
            task=self.run.task, parent=parent, parents=parents if decision.operator == "crossover" else [],
            journal=C.journal_text(self.tree, SCORE_NAME), data_preview=self.data_preview(),
            code_file=self.code_file, node=number, max_nodes=self.max_nodes or 0)
        if decision.operator not in self.agent.templates:
            raise MlabError(f"agent {self.agent.name} has no {decision.operator} template")
        prompt = self.templates.render(decision.operator, **variables)
        parsed, exchange = self.asker.ask("main", decision.operator, prompt, parse_operator_reply, OPERATOR_FORMAT)
        for call in exchange.calls:
            self.usage.add(call)
        facts = {**decision.facts, "random": f"{self.seed}:{number}"}
        if len(decision.parents) > 1:
            facts["second_parent"] = decision.parents[1]
        node = Node(number, parent.id if parent else None, decision.operator,
                    second_parent=facts.get("second_parent"), facts=facts, pending=True)
        problem = None
        if parsed is None:
            problem = (f"the model gave no usable plan and code after {len(exchange.format_errors)} attempt(s); "
                       f"last problem: {exchange.format_errors[-1]}")
        else:
            node.plan, node.code = parsed
            exchange.reply = {"plan": node.plan, "code": node.code}
        self.tree.add(node)
        return Pending(node, exchange.to_json(), started, clock, problem=problem)

    def _evaluate(self, pending: Pending) -> Evaluation:
        node = pending.node
        base = self.manifests[node.parent] if node.parent is not None else self.initial
        timeout = float(self.run.scripts.timeout_s)
        timeout = min(timeout, max(self.run.remaining_time(), 1.0))
        return self.evaluator.evaluate(node.id, node.code, base, timeout)

    # -- a node's verdict and record -----------------------------------------------------------
    def _record(self, pending: Pending, evaluation: Evaluation | None) -> None:
        node, exchange = pending.node, pending.exchange
        problems: list[str] = []
        review = None
        if evaluation is None:
            problems.append(pending.problem or "the node was not evaluated")
            output, compute, delta = pending.problem or "", None, Delta()
            self.manifests[node.id] = dict(self.manifests[node.parent] if node.parent is not None else self.initial)
            validation = None
        else:
            output, compute, delta = evaluation.output, evaluation.compute, evaluation.delta
            self.manifests[node.id] = evaluation.manifest
            if self.score.from_ == "pattern":
                validation = score_by_pattern(output, self.score.pattern, self.score.group or 1)
            else:
                review, validation = self._review(node, output, exchange)
            if not evaluation.ran:
                problems.append("the script did not run to the end")
            if validation is None:
                problems.append("no validation score was read"
                                + (f" (pattern {self.score.pattern!r})" if self.score.from_ == "pattern" else ""))
            if review is not None and review["is_bug"]:
                problems.append("the review found a bug")
            if evaluation.submission_problem:
                problems.append(f"submission: {evaluation.submission_problem}")
            node.holdout = evaluation.holdout
            if evaluation.holdout_problem:
                node.facts["holdout_problem"] = evaluation.holdout_problem
            for note in evaluation.notes:
                output += f"\n\nNote: {note}."
        node.validation = validation
        node.buggy = bool(problems)
        node.pending = False
        if review is not None:
            node.facts["summary"] = review["summary"]
            node.facts["review"] = review
        if problems:
            node.facts["problems"] = problems
        verdict = (f"Node {node.id} ({node.operator}"
                   + (f" of node {node.parent}" if node.parent is not None else "") + "): "
                   + ("valid, " + SCORE_NAME + f" {validation:.6g}" if not node.buggy else
                      "buggy: " + "; ".join(problems)))
        # the children's prompts show the output with its verdict, as a resumed run reads it back
        node.output = utf8_safe(f"{output}\n\n{verdict}")
        record = {
            "step": len(self.run.records) + 1, "schema_version": TRACE_VERSION, "started": timestamp(pending.started),
            "ended": timestamp(), "duration_s": round(time.perf_counter() - pending.clock, 6),
            "elapsed_s": round(self.run.elapsed_s(), 6), "action": node.operator,
            "action_input": {"code_file": self.code_file, "parents": [p for p in (node.parent, node.second_parent)
                                                                      if p is not None]},
            "resolved": None, "observation": node.output,
            "status": "error" if node.buggy else "ok", "end_reason": None, "compute": compute,
            "snapshot": delta.to_json(), "edits": [], "research_log": "", "model": exchange, "hooks": None,
            "node": node.id, "parent": node.parent, "operator": node.operator, "validation": validation,
            "buggy": node.buggy, "holdout": node.holdout, "search": dict(node.facts),
        }
        self._append(record)
        self.policy.observe(self.tree, node)
        if self.on_node:
            self.on_node(self.run.records[-1], verdict, self.usage)

    def _review(self, node: Node, output: str, exchange: dict) -> tuple[dict | None, float | None]:
        """The fast model's verdict on a node's output: (review, validation score)."""
        prompt = self.templates.render("review", **C.review_context(task=self.run.task, code=node.code,
                                                                     output=output, code_file=self.code_file))
        parsed, asked = ask_review(self.asker, prompt)
        exchange["calls"] = exchange["calls"] + asked.calls
        for call in asked.calls:
            self.usage.add(call)
        exchange["review"] = {"prompt": prompt, "response": asked.response, "format_errors": asked.format_errors}
        if parsed is None:
            return {"is_bug": True, "metric": None,
                    "summary": f"the review could not be read: {asked.format_errors[-1]}"}, None
        return parsed, parsed["metric"]

    def _append(self, record: dict) -> None:
        record = store_long_texts(record, self.run.store.put_bytes)
        try:
            self._trace.append(record)
        except OSError as problem:
            raise RunError(f"cannot write the trace of run {self.run.id}: {problem.strerror or problem}") from None
        self.run.records.append(record)
        self.run.end_reason = record.get("end_reason")

    # -- the end -------------------------------------------------------------------------
    def choose(self) -> tuple[Node | None, str]:
        """The node to submit and what chose it ("validation" or "holdout")."""
        return choose_submitted(self.tree, self.select)

    def summary(self, submitted: Node | None, selected_by: str) -> dict:
        evaluated = [n for n in self.tree if not n.pending]
        return {"policy": self.spec.policy, "nodes": len(evaluated), "valid_nodes": len(self.tree.valid()),
                "buggy_nodes": len(self.tree.buggy()), "submitted_node": submitted.id if submitted else None,
                "submitted_validation": submitted.validation if submitted else None, "selected_by": selected_by}

    def _finish(self, reason: str, failure: str | None = None, detail: str | None = None) -> SearchOutcome:
        submitted, selected_by = self.choose()
        target = self.manifests[submitted.id] if submitted else self.initial
        linear = dict(self.initial)
        for record in self.run.records:
            apply_delta(linear, record.get("snapshot") or {})
        closing = Delta({rel: d for rel, d in target.items() if linear.get(rel) != d},
                        [rel for rel in linear if rel not in target])
        self.run.snapshotter.restore(target)
        summary = self.summary(submitted, selected_by)
        if submitted is None and failure is None:
            failure = FailureMode.NO_VALID_NODE
            detail = f"none of the {summary['nodes']} node(s) was valid (each failed to run, gave no " \
                     f"validation score or wrote no valid submission)"
        text = (f"The search ended ({reason.replace('_', ' ')}): {summary['nodes']} node(s), "
                f"{summary['valid_nodes']} valid, {summary['buggy_nodes']} buggy. ")
        text += (f"Submitted node {submitted.id} ({SCORE_NAME} {submitted.validation:.6g}, chosen by {selected_by})."
                 if submitted else "No node is valid: nothing is submitted.")
        now = time.time()
        record = {
            "step": len(self.run.records) + 1, "schema_version": TRACE_VERSION, "started": timestamp(now),
            "ended": timestamp(), "duration_s": 0.0, "elapsed_s": round(self.run.elapsed_s(), 6),
            "action": None, "action_input": None, "resolved": None, "observation": text, "status": "ended",
            "end_reason": str(reason), "compute": None, "snapshot": closing.to_json(), "edits": [],
            "research_log": "", "model": None, "hooks": None,
            "search": {"submitted_node": summary["submitted_node"], "selected_by": selected_by,
                       **({"failure_mode": str(failure), "detail": detail} if failure else {})},
        }
        self._append(record)
        return SearchOutcome(str(reason), failure, detail, summary)

    def _outcome_of_ended(self) -> SearchOutcome:
        closing = self.run.records[-1]
        facts = closing.get("search") or {}
        chosen = facts.get("submitted_node")
        submitted = self.tree.nodes.get(chosen) if chosen is not None else None
        self.run.snapshotter.restore(self.manifests[submitted.id] if submitted else self.initial)
        return SearchOutcome(closing.get("end_reason") or "ended", facts.get("failure_mode"), facts.get("detail"),
                             self.summary(submitted, facts.get("selected_by") or "validation"))

    # -- context ---------------------------------------------------------------------------
    def data_preview(self) -> str:
        """The preview of the workspace as prepared (made once per run)."""
        if self._preview is None:
            files: dict[str, bytes | int] = {}
            store = self.run.store
            for rel, digest in self.initial.items():
                if digest.startswith("symlink:"):
                    continue
                if rel.lower().endswith((".csv", ".tsv")):
                    with store.open_object(digest) as handle:
                        files[rel] = handle.read(C.PREVIEW_BYTES)
                else:
                    files[rel] = store.path(digest).stat().st_size
            self._preview = C.data_preview(files)
        return self._preview

    def close(self) -> None:
        self._trace.close()
        self.evaluator.close()


def write_search_result(run, outcome: SearchOutcome, tiers: dict, config: dict, demo: bool) -> dict:
    """result.json as for any run (the final workspace, the submitted node's, scored by the task's
    evaluator), with the search's summary added under `search`."""
    from mlab.scoring.result import write_result

    return write_result(run, outcome, tiers, config, demo, extra={"search": outcome.search or None})
