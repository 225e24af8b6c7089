"""`mlab report` and `mlab eval` over a checked-in set of runs give the same output as the code
they were recorded with (the golden files were written before the report was made faster), and
the hallucinated-claim check's number matching equals the rule written out in full."""
from __future__ import annotations

import json
import shutil
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mlab.reports.taxonomy import NUMBER, MAX_DECIMALS, NumberIndex, parse_number

DATA = Path(__file__).resolve().parent / "data"
TEMPLATE = DATA / "golden-runs" / "template"
GOLDEN = DATA / "golden-report"

# (fact check of the last step, success, improvement, score or None, scores.jsonl kept)
VARIANTS = [
    ("blend.py ran with W 0.6 on 15 training rows: confirmed by the script output.", True, 0.6032, 2.06924, True),
    ("The validation MAE is 0.8731, confirmed.", False, 0.05, 4.95, True),
    ("Weight 60% on 15 rows, confirmed.", False, 0.02, 5.11, False),
    ("Scored 1,234 rows and 12.5% better: confirmed.", False, None, None, True),
    ("It ran on 15.0 rows; the MAE would be 3.2 after tuning.", True, 0.31, 3.6, False),
    ("Nothing is claimed yet.", False, None, None, False),
]


def make_runs(into: Path, copies: int = 2) -> Path:
    """len(VARIANTS) × copies run folders of the tiny task, each a variant of the template."""
    meta = json.loads((TEMPLATE / "run.json").read_text())
    result = json.loads((TEMPLATE / "result.json").read_text())
    records = [json.loads(line) for line in (TEMPLATE / "trace.jsonl").read_text().splitlines()]
    number = 0
    for copy in range(copies):
        for check, success, gain, score, keep_scores in VARIANTS:
            run_id = f"{meta['id'][:-6]}{number:06x}"
            target = into / run_id
            shutil.copytree(TEMPLATE, target)
            (target / "run.json").write_text(json.dumps({**meta, "id": run_id, "seed": number}))
            failed = {"failure_mode": None} if success else \
                {"failure_mode": "small improvement" if score is not None else "submission format error"}
            (target / "result.json").write_text(json.dumps({
                **result, "run_id": run_id, "seed": number, "success": success, "improvement": gain,
                "score": score, "submitted": score is not None, "wall_time_s": 3.0 + number,
                "agent": "research", **failed}))
            changed = [dict(r) for r in records]
            last = dict(changed[-1]["model"])
            last["reply"] = {**last["reply"], "Fact Check": check}
            changed[-1] = {**changed[-1], "model": last}
            (target / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in changed))
            if not keep_scores:
                (target / "scores.jsonl").unlink()
            if copy:  # a second agent name, so groups and comparisons have two sides
                for name in ("run.json", "result.json"):
                    doc = json.loads((target / name).read_text())
                    doc["agent"] = "research-b"
                    (target / name).write_text(json.dumps(doc))
                shutil.copytree(target / "build" / "agents" / "research", target / "build" / "agents" / "research-b")
            number += 1
    return into


def _texts(folder: Path, runs: Path) -> dict[str, str]:
    return {p.name: p.read_text().replace(str(runs.resolve()), "RUNS") for p in sorted(folder.iterdir())
            if p.suffix in (".md", ".csv", ".tex")}


def test_the_report_of_the_golden_runs_is_unchanged(tmp_path, request):
    from mlab.reports.render import write_report

    runs = make_runs(tmp_path / "runs")
    report = write_report(runs, tmp_path / "report")
    texts = _texts(report.folder, runs)
    if request.config.getoption("--update-golden"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        GOLDEN.mkdir(parents=True)
        for name, text in texts.items():
            (GOLDEN / name).write_text(text)
    expected = {p.name: p.read_text() for p in sorted(GOLDEN.iterdir())}
    assert sorted(texts) == sorted(expected)
    for name in expected:
        assert texts[name] == expected[name], name
    assert {p.name for p in report.folder.glob("*.png")} >= {"success_heatmap.png", "anytime.png"}


def test_eval_rows_of_the_golden_runs_are_unchanged(tmp_path):
    from mlab.reports.eval import evaluate_runs
    from mlab.reports.runs import load_runs

    runs = make_runs(tmp_path / "runs")
    rows = evaluate_runs(load_runs([runs]))
    expected = (GOLDEN / "runs.csv").read_text().splitlines()
    header = expected[0].split(",")
    assert [r["run_id"] for r in rows] == [line.split(",")[header.index("run_id")] for line in expected[1:]]
    claims = [line.split(",")[header.index("hallucinated_claims")] for line in expected[1:]]
    assert [str(r["hallucinated_claims"]) for r in rows] == claims


# -- the number rule, written out: every form a seen number may be quoted in ------------------

def _forms(integer: str, fraction: str, percent: bool) -> set[str]:
    value = Decimal(f"{integer}.{fraction or 0}")
    found = set()
    for number in ([value, value.scaleb(-2)] if percent else [value]):
        for decimals in range(MAX_DECIMALS + 1):
            unit = Decimal(1).scaleb(-decimals)
            found.add(format(number.quantize(unit, rounding=ROUND_HALF_UP), "f"))
            found.add(format(number.quantize(unit, rounding=ROUND_DOWN), "f"))
    return found


def _keys(integer: str, fraction: str, percent: bool) -> list[str]:
    decimals = min(len(fraction), MAX_DECIMALS)
    value = Decimal(f"{integer}.{fraction or 0}")
    keys = [format(value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")]
    if percent:
        scaled = min(decimals + 2, MAX_DECIMALS)
        keys.append(format(value.scaleb(-2).quantize(Decimal(1).scaleb(-scaled), rounding=ROUND_HALF_UP), "f"))
    return keys


NUMBERS = st.builds(lambda i, f, p: f"{i}{'.' + f if f else ''}{'%' if p else ''}",
                    st.integers(0, 10 ** 7), st.text("0123456789", max_size=9), st.booleans())


@settings(max_examples=300, deadline=None)
@given(seen=st.lists(NUMBERS, max_size=6), claimed=NUMBERS)
def test_number_matching_equals_the_rule_of_every_quoted_form(seen, claimed):
    index, forms = NumberIndex(), set()
    index.add_text(" ".join(seen))
    for match in NUMBER.finditer(" ".join(seen)):
        forms |= _forms(*parse_number(match))
    (match,) = list(NUMBER.finditer(claimed))
    expected = any(key in forms for key in _keys(*parse_number(match)))
    assert index.knows(*parse_number(match)) == expected


@pytest.mark.parametrize("seen, claimed", [("0.87349", "0.8735"), ("0.87349", "0.873"), ("0.6", "60%"),
                                           ("12.449", "12.45"), ("99.95", "100.0"), ("1234", "1,234")])
def test_numbers_seen_in_another_form_are_known(seen, claimed):
    index = NumberIndex()
    index.add_text(seen)
    (match,) = list(NUMBER.finditer(claimed))
    assert index.knows(*parse_number(match))
