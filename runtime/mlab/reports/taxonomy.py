"""Failure taxonomy: why a run did not succeed, computed from its trace and result.

Every unsuccessful run gets one or more labels (a successful run gets none):

- response format error   the model's replies did not parse, retries exhausted
- submission format error a submission file exists but cannot be scored (columns, ids, values)
- no submission           no submission file at the end of the run
- small improvement       a valid submission below the task's success threshold
- limit reached           the run hit its step, time, token or cost limit (detail says which; a
                          tree search's steps are its nodes, so its detail says nodes)
- script failure          a script of the agent was killed by the memory limit or the script
                          time-out anywhere in the run, or the last script it ran crashed (in a
                          tree search crashes are what debug nodes are for: only the memory
                          limit and time-outs count)
- all nodes buggy         a tree search made nodes and every one was buggy (its script failed, no
                          validation score was read, or its submission failed the format check)
- no valid node           a tree search ended without a valid node in any other way: no node was
                          made or finished, or result.json says so (failure mode "no valid node")
                          while some node was not marked buggy
- model API failure       a model call failed for good (or an offline model ran out of replies)
- hallucinated claim      see below
- not scored / unfinished the task's metric is not scored here / the run has no result.json
- agent install failed    an external agent's environment could not be installed (a requirement
                          pip could not find or build, no network): the agent never ran, so this is
                          the run's only label
- task error              the task itself is broken (its starter gave no baseline, its answers could
                          not be read): the only label such a run gets, never the agent's failure
- other                   unsuccessful, and none of the above applies

Hallucinated claims are found the same way for every run (a successful run can make them
too; they are reported as findings, and as a label only for unsuccessful runs). A claim is a
number the agent states as confirmed in a reply section whose declared ROLE (from the agent
declaration, so any section names work) is fact-check or plan:

- fact-check sections: every number in a sentence that does not hedge;
- plan sections: numbers in a sentence that does not hedge and that says it reports a result
  (confirmed, achieved, result, measured, obtained, observed, reached, scored, improved).

A sentence hedges when it contains a word such as guess(ed), unconfirmed, "not yet", expected,
estimate(d), about, approximately, roughly, around, should, could, might, may, will, would,
target, goal, computed, calculated or derived, or the sign ~. Numbers that are bare integers
below 10, follow "step" or "line", number a list item ("12.") or are part of a name (v2,
train_3.py, 1e-3) are not claims. A claim is hallucinated when its number appeared in none of
the earlier sources: the task's problem text, the observations of earlier steps, and the
agent's own earlier action inputs. Numbers match after dropping thousands separators and sign,
when the observed number rounded or truncated to the claimed number's decimals gives the
claimed number; percentages also match fractions (87.3% matches 0.873).
"""
from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import asdict, dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext

from mlab.failure import FailureMode

RESPONSE_FORMAT_ERROR = FailureMode.RESPONSE_FORMAT_ERROR.value
SUBMISSION_FORMAT_ERROR = FailureMode.SUBMISSION_FORMAT_ERROR.value
NO_SUBMISSION = "no submission"
SMALL_IMPROVEMENT = FailureMode.SMALL_IMPROVEMENT.value
LIMIT_REACHED = FailureMode.LIMIT_REACHED.value
SCRIPT_FAILURE = "script failure"
MODEL_API_FAILURE = FailureMode.MODEL_API_FAILURE.value
HALLUCINATED_CLAIM = "hallucinated claim"
ALL_NODES_BUGGY = "all nodes buggy"
NO_VALID_NODE = FailureMode.NO_VALID_NODE.value
NOT_SCORED = FailureMode.NOT_SCORED.value
TASK_ERROR = FailureMode.TASK_ERROR.value
AGENT_INSTALL_FAILED = FailureMode.AGENT_INSTALL_FAILED.value
UNFINISHED = "unfinished"
OTHER = "other"

LABELS = (RESPONSE_FORMAT_ERROR, SUBMISSION_FORMAT_ERROR, NO_SUBMISSION, SMALL_IMPROVEMENT, LIMIT_REACHED,
          SCRIPT_FAILURE, ALL_NODES_BUGGY, NO_VALID_NODE, MODEL_API_FAILURE, HALLUCINATED_CLAIM, NOT_SCORED,
          AGENT_INSTALL_FAILED, TASK_ERROR, UNFINISHED, OTHER)

CLAIM_ROLES = ("fact-check", "plan")
MAX_DECIMALS = 6
MAX_NUMBERS_PER_SOURCE = 20000  # keeps a huge observation (a printed table) from dominating time

NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![\w])")
_HEDGES = re.compile(
    r"\b(guess\w*|unconfirmed|not confirmed|not yet|unverified|expect\w*|hope\w*|estimat\w*|about|"
    r"approx\w*|roughly|around|should|could|might|may|will|would|target\w*|goal|aim\w*|"
    r"comput\w*|calculat\w*|derived?)\b|~|≈", re.I)
_RESULT_WORDS = re.compile(r"\b(confirm\w*|achiev\w*|results?|measured|obtain\w*|observed|reached|scored|"
                           r"improved)\b", re.I)
_POSITION_WORD = re.compile(r"\b(steps?|lines?)\s*$", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")


@dataclass(frozen=True)
class Label:
    name: str
    detail: str = ""

    def text(self) -> str:
        shown = self.detail and self.name in (LIMIT_REACHED, ALL_NODES_BUGGY, NO_VALID_NODE)
        return f"{self.name} ({self.detail})" if shown else self.name


@dataclass(frozen=True)
class Claim:
    """A number stated as confirmed that no earlier source showed."""

    step: int
    section: str
    number: str
    sentence: str


# -- numbers ---------------------------------------------------------------------------

def parse_number(match: re.Match) -> tuple[str, str, bool]:
    """(integer part, fraction digits, is a percentage) of a matched number."""
    return match.group(1).replace(",", ""), (match.group(2) or "")[1:], bool(match.group(3))


def _unit(decimals: int) -> Decimal:
    return Decimal(1).scaleb(-decimals)


def _claim_keys(integer: str, fraction: str, percent: bool) -> list[tuple[Decimal, int]]:
    """How a claimed number is looked up: itself rounded to its decimals (at most MAX_DECIMALS),
    and as a fraction when it is a percentage; each with its decimals."""
    decimals = min(len(fraction), MAX_DECIMALS)
    value = Decimal(f"{integer}.{fraction or 0}")
    with localcontext() as exact:
        exact.prec = len(integer) + MAX_DECIMALS + 4  # quantize never runs out of digits
        keys = [(value.quantize(_unit(decimals), rounding=ROUND_HALF_UP), decimals)]
        if percent:
            scaled = min(decimals + 2, MAX_DECIMALS)
            keys.append((value.scaleb(-2).quantize(_unit(scaled), rounding=ROUND_HALF_UP), scaled))
    return keys


class NumberIndex:
    """The numbers seen so far (a percentage also as its fraction), sorted, to answer whether one
    of them is quoted by a claimed number.

    A seen value v is quoted as K with d decimals when v rounded half up, or truncated, to d
    decimals is K: that is when K - unit/2 <= v < K + unit (unit = 10^-d; every value is >= 0),
    so one binary search answers it, instead of writing out every seen number in the 14 to 28
    forms it may be quoted in (which cost three quarters of a report)."""

    def __init__(self):
        self._sorted: list[Decimal] = []
        self._new: list[Decimal] = []  # seen since the last question, sorted in when one comes
        self._seen: set[str] = set()

    def add_text(self, text: str) -> None:
        for index, match in enumerate(NUMBER.finditer(text or "")):
            if index >= MAX_NUMBERS_PER_SOURCE:
                break
            raw = match.group(0)
            if raw not in self._seen:
                self._seen.add(raw)
                integer, fraction, percent = parse_number(match)
                value = Decimal(f"{integer}.{fraction or 0}")
                self._new.append(value)
                if percent:
                    self._new.append(value.scaleb(-2))

    def knows(self, integer: str, fraction: str, percent: bool) -> bool:
        if self._new:
            self._sorted = sorted(self._sorted + self._new)  # a sorted run and a short one: merged
            self._new = []
        values = self._sorted
        for key, decimals in _claim_keys(integer, fraction, percent):
            unit = _unit(decimals)
            with localcontext() as exact:
                exact.prec = len(key.as_tuple().digits) + 4  # the bounds are exact
                low, high = key - unit / 2, key + unit
            at = bisect_left(values, low)
            if at < len(values) and values[at] < high:
                return True
        return False


def _is_claim_number(sentence: str, match: re.Match) -> bool:
    integer, fraction, percent = parse_number(match)
    if not fraction and not percent and int(integer) < 10:
        return False
    before, after = sentence[:match.start()], sentence[match.end():match.end() + 1]
    if after in (".", ")") and not before.strip(" \t-*#("):
        return False  # a list marker: "12." or "(3)"
    return not _POSITION_WORD.search(before)


def claimed_numbers(text: str, role: str) -> list[tuple[str, re.Match, str]]:
    """(sentence, number match, matched text) of each number `text` states as confirmed."""
    found = []
    for sentence in _SENTENCE_END.split(text or ""):
        if not sentence.strip() or _HEDGES.search(sentence):
            continue
        if role == "plan" and not _RESULT_WORDS.search(sentence):
            continue
        for match in NUMBER.finditer(sentence):
            if _is_claim_number(sentence, match):
                found.append((sentence.strip(), match, match.group(0)))
    return found


def hallucinated_claims(run) -> list[Claim]:
    """Claims in fact-check and plan sections whose numbers no earlier source showed."""
    roles = {s.name: s.role for s in run.sections if s.role in CLAIM_ROLES}
    if not roles:
        return []
    sources = NumberIndex()
    sources.add_text(run.problem)
    claims: list[Claim] = []
    for record in run.records:
        reply = (record.get("model") or {}).get("reply") or {}
        for name, role in roles.items():
            for sentence, match, text in claimed_numbers(reply.get(name) or "", role):
                if not sources.knows(*parse_number(match)):
                    claims.append(Claim(record["step"], name, text, sentence[:300]))
        sources.add_text(record.get("observation") or "")
        action_input = record.get("action_input")
        sources.add_text(action_input if isinstance(action_input, str) else json.dumps(action_input))
    return claims


# -- labels ----------------------------------------------------------------------------

def script_failure(records: list[dict], tree: bool = False) -> str | None:
    """Why the scripts count as a failure (see the module docstring), or None."""
    runs = [r["compute"] for r in records if r.get("compute")]
    if not runs:
        return None
    ooms = sum(1 for c in runs if c.get("out_of_memory"))
    timeouts = sum(1 for c in runs if c.get("timed_out"))
    crashes = sum(1 for c in runs if not c.get("out_of_memory") and not c.get("timed_out")
                  and c.get("exit_code") not in (0, None))
    last = runs[-1]
    last_failed = not tree and (last.get("out_of_memory") or last.get("timed_out")
                                or last.get("exit_code") not in (0, None))
    if not (ooms or timeouts or last_failed):
        return None
    parts = [f"{n} {what}" for n, what in ((crashes, "crash"), (ooms, "out of memory"), (timeouts, "time-out")) if n]
    return ", ".join(parts) + f" in {len(runs)} script run(s)"


def node_records(records: list[dict]) -> list[dict]:
    """The records of a tree search's nodes (empty for a linear run)."""
    return [r for r in records if isinstance(r.get("node"), int) and not isinstance(r.get("node"), bool)]


def is_valid_node(record: dict) -> bool:
    validation = record.get("validation")
    return not record.get("buggy", True) and isinstance(validation, (int, float)) and validation == validation


def _tree_label(result: dict, nodes: list[dict]) -> Label | None:
    """all nodes buggy / no valid node for a tree search that ended without a valid node."""
    search = result.get("search") if isinstance(result.get("search"), dict) else None
    if search is None and not nodes:
        return None
    valid = sum(1 for r in nodes if is_valid_node(r))
    if valid and result.get("failure_mode") != NO_VALID_NODE:
        return None
    if nodes and all(r.get("buggy") for r in nodes):
        return Label(ALL_NODES_BUGGY, f"{len(nodes)} node(s), every one buggy")
    if not nodes:
        return Label(NO_VALID_NODE, "the search made no node")
    return Label(NO_VALID_NODE, f"{len(nodes)} node(s), {valid} with a validation score and not buggy")


def failure_labels(run, claims: list[Claim] | None = None) -> list[Label]:
    """The failure labels of a run (empty when it succeeded)."""
    result = run.result
    if result is None:
        return [Label(UNFINISHED, "the run has no result.json")]
    if result.get("success"):
        return []
    labels: list[Label] = []
    mode = result.get("failure_mode")
    if mode in (TASK_ERROR, AGENT_INSTALL_FAILED):  # nothing the agent did: the one label says why
        return [Label(mode, result.get("detail") or "")]
    records = run.records
    last = records[-1] if records else {}
    if mode == RESPONSE_FORMAT_ERROR or last.get("end_reason") == RESPONSE_FORMAT_ERROR:
        labels.append(Label(RESPONSE_FORMAT_ERROR, result.get("detail") or ""))
    if mode in (FailureMode.MODEL_API_FAILURE, FailureMode.MODEL_REPLIES_EXHAUSTED):
        labels.append(Label(MODEL_API_FAILURE, result.get("detail") or mode))
    end_reason = result.get("end_reason") or ""
    nodes = node_records(records)
    tree = bool(nodes) or isinstance(result.get("search"), dict)
    if mode == LIMIT_REACHED or end_reason.endswith("_limit"):
        which = end_reason.replace("_limit", "") or "limit"
        labels.append(Label(LIMIT_REACHED, "nodes" if tree and which == "steps" else which))
    script = script_failure(records, tree)
    if script:
        labels.append(Label(SCRIPT_FAILURE, script))
    tree_label = _tree_label(result, nodes) if tree else None
    if tree_label:
        labels.append(tree_label)
    if mode == NOT_SCORED:
        labels.append(Label(NOT_SCORED, result.get("detail") or ""))
    elif not result.get("submitted"):
        labels.append(Label(NO_SUBMISSION, result.get("submission_problem") or ""))
    elif result.get("score") is None:
        labels.append(Label(SUBMISSION_FORMAT_ERROR, result.get("submission_problem") or result.get("detail") or ""))
    elif result.get("improvement") is not None:
        labels.append(Label(SMALL_IMPROVEMENT, f"improvement {result['improvement']:.1%} below "
                                               f"{result.get('threshold', 0):.0%}"))
    claims = hallucinated_claims(run) if claims is None else claims
    if claims:
        labels.append(Label(HALLUCINATED_CLAIM, f"{len(claims)} claim(s), first at step {claims[0].step}: "
                                                f"{claims[0].number}"))
    if not labels:
        labels.append(Label(OTHER, result.get("detail") or mode or ""))
    return labels


def findings(run) -> tuple[list[Claim], list[Label]]:
    """The run's hallucinated claims and failure labels, computed once per loaded run (an
    index page and the run's own page both show them)."""
    if getattr(run, "_findings", None) is None:
        facts = getattr(run, "facts", None)
        try:
            run._findings = ([Claim(**claim) for claim in facts["claims"]],
                             [Label(**label) for label in facts["labels"]])
            return run._findings
        except (TypeError, KeyError):
            pass   # none remembered (or not in this form): the trace is read
        claims = hallucinated_claims(run)
        run._findings = (claims, failure_labels(run, claims))
        if hasattr(run, "remember_facts"):
            run.remember_facts({"records": len(run.records), "nodes": run.nodes,
                                "claims": [asdict(claim) for claim in claims],
                                "labels": [asdict(label) for label in run._findings[1]]})
    return run._findings
