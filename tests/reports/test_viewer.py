"""`mlab view`: the run page and the index, read as HTML and opened in headless Chromium."""
from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from needs import needs
from report_helpers import environment, mlab
from mlab.viewer.page import MAX_PROMPT_CHARS, MAX_SHOWN_CHARS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = needs("Chromium is not installed (apt-get install -y chromium); the browser checks are skipped"
                       if CHROMIUM is None else None)


def chromium(page: Path, profile: Path, *options: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               *options, page.resolve().as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def research_page(run_of, tmp_path_factory) -> Path:
    page = tmp_path_factory.mktemp("view") / "research-0.html"
    code, out, err = mlab("view", run_of("research-0"), "-o", page)
    assert code == 0 and f"wrote {page}" in out, err
    return page


def test_the_page_shows_task_result_steps_sections_and_diffs(research_page, run_of):
    html = research_page.read_text()
    result = json.loads((run_of("research-0") / "result.json").read_text())
    trace = (run_of("research-0") / "trace.jsonl").read_text().splitlines()
    assert html.count("<article class='step'") == len(trace) == 3
    assert "<h1>tiny · research · mlab/scripted</h1>" in html
    assert f"<span class='final-score'>{result['score']:.6g}</span>" in html
    for name, role in [("Reflection", "reflection"), ("Research Plan and Status", "plan"),
                       ("Fact Check", "fact-check"), ("Thought", "thought")]:
        assert f"<div class='section role-{role}' data-role='{role}'><h3>{name}</h3>" in html
    assert "<span class='add'>+W = 0.6</span>" in html  # the diff of blend.py
    assert "blend.py (added, +" in html and "submission.csv (added" in html
    assert "id='score-chart'" in html and "<svg" in html and "best at step 2" in html
    assert "DEMONSTRATION" not in html
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", html)  # nothing fetched from a network


def test_agents_with_other_sections_show_their_own_names(run_of, tmp_path):
    mlab("view", run_of("react-0"), "-o", tmp_path / "react.html")
    html = (tmp_path / "react.html").read_text()
    assert "<h3>Thought</h3>" in html and "<h3>Fact Check</h3>" not in html
    mlab("view", run_of("autogpt-claim"), "-o", tmp_path / "autogpt.html")
    html = (tmp_path / "autogpt.html").read_text()
    assert "data-role='plan'><h3>thoughts.plan</h3>" in html
    assert "<mark class='claim'" in html and ">0.0377</mark>" in html


def test_demonstrations_failures_and_claims_are_marked(run_of, tmp_path):
    mlab("view", run_of("demo"), "-o", tmp_path / "demo.html")
    demo = (tmp_path / "demo.html").read_text()
    assert "<div class='demo-banner'>DEMONSTRATION" in demo and "— DEMONSTRATION</title>" in demo
    mlab("view", run_of("claim"), "-o", tmp_path / "claim.html")
    claim = (tmp_path / "claim.html").read_text()
    assert "small improvement; hallucinated claim" in claim
    assert "<div class='claims'><h3>hallucinated claims</h3><ul><li><b>0.0815</b> in Research Plan and Status" in claim
    mlab("view", run_of("timeout"), "-o", tmp_path / "timeout.html")
    assert "TIMED OUT" in (tmp_path / "timeout.html").read_text()


@needs_chromium
def test_the_page_in_chromium_shows_steps_score_and_diff(research_page, tmp_path):
    done = chromium(research_page, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert 'data-ready="yes"' in dom  # the page's script ran
    assert len(re.findall(r'<nav class="steps">(.*?)</nav>', dom, re.S)[0].split("</a>")) - 1 == 3
    assert re.search(r'<nav class="steps"><a href="#step-1" class="ok" title="[^"<]+">1</a>', dom)
    assert dom.count('<article class="step"') == 3
    assert re.search(r'<span class="final-score">[\d.]+</span>', dom)
    assert '<span class="add">+W = 0.6</span>' in dom
    assert "<polyline" in dom


def test_each_prompt_piece_is_written_once(research_page, run_of):
    """The three steps' prompts share their system text and tool list: the page holds it once, in
    the prompt table, and no step's details hold a prompt before they are opened."""
    html = research_page.read_text()
    prompts = [json.loads(line)["model"]["prompt"] for line in
               (run_of("research-0") / "trace.jsonl").read_text().splitlines()]
    assert all(p.count("Tools you can use:") == 1 for p in prompts) and len(prompts) == 3
    assert html.count("Tools you can use:") == 1
    assert html.count("<details class='calls' data-calls=") == 3 and "data-prompt='0'><summary>" in html
    table = json.loads(html.split("<script type='application/json' id='folds'>")[1].split("</script>")[0])
    trace = [json.loads(line) for line in (run_of("research-0") / "trace.jsonl").read_text().splitlines()]
    calls = [table["calls"][int(n)] for n in re.findall(r"<details class='calls' data-calls='(\d+)'", html)]
    assert [[row[:3] for row in rows] for rows in calls] == [
        [[c["tier"], c["model"], c["purpose"]] for c in record["model"]["calls"]] for record in trace]
    assert [_rebuilt(table, n) for n in range(3)] == prompts


def _rebuilt(table: dict, number: int) -> str:
    """A prompt from the page's table: its pieces, joined by a blank line (by one line break
    before a piece whose number is written negated, ~n)."""
    text = ""
    for index, piece in enumerate(table["prompts"][number]):
        text += ("\n" if piece < 0 else table["separator"]) if index else ""
        text += table["pieces"][~piece if piece < 0 else piece]
    return text


def test_the_prompt_table_stores_shared_paragraphs_once():
    from mlab.viewer.folds import FoldTable

    system = "You are a researcher.\n" + "Tool: does one thing.\n" * 300
    history = [f"Step {n}:\nAction: Execute Script\nObservation:\n```\nscore {n / 7:.4f}\n```" for n in range(1, 2001)]
    prompts = [f"{system}\n\nThis is step {n} of at most 2000.\n\nYour most recent steps, oldest first:\n"
               + "\n\n".join(history[max(0, n - 4):n - 1]) + "\n\n\nNow write your next reply.\n"
               for n in range(1, 2001)]
    table = FoldTable()
    numbers = [table.add(p) for p in prompts]
    assert numbers == list(range(2000)) and table.add(prompts[7]) == 7  # an identical prompt is one entry
    assert [table.text(n) for n in numbers] == prompts
    written = len(table.script())
    assert written < sum(map(len, prompts)) / 40  # 13.8 MB of prompts, most of them the same system text
    assert written < len(system) + 2000 * 150  # the system text once, then one new step per prompt
    document = json.loads(table.script().split(">", 1)[1][:-len("</script>")])
    assert [_rebuilt(document, n) for n in range(2000)] == prompts
    closing = table.add("Observation:\n</script><script>alert(1)</script>")  # cannot end the data block
    data = table.script()[len("<script type='application/json' id='folds'>"):-len("</script>")]
    assert "<" not in data and _rebuilt(json.loads(data), closing) == "Observation:\n</script><script>alert(1)</script>"


@needs_chromium
def test_a_steps_prompt_is_shown_in_full_when_opened(run_of, tmp_path):
    """Before a click the prompts are not in the page; after `open all folds`, each step's
    model-call details show its calls' table and its prompt exactly as the trace holds it. The last step's prompt is
    made the one before it with a line put in front of its history (as a window of steps puts
    its heading in front of what becomes its oldest step): stored as that line and a known piece."""
    from html import escape

    run = tmp_path / "run"
    shutil.copytree(run_of("research-0"), run, symlinks=True)
    records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    before = records[-2]["model"]["prompt"]
    assert before.count("\n\nYour most recent steps") == 1
    records[-1]["model"]["prompt"] = before.replace("\n\nYour most recent steps", "\n\nOne step left.\nYour most "
                                                    "recent steps")
    records[0]["action"] = 'Odd "<b>name</b>"'  # written into the step navigation as text
    (run / "trace.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    prompts = [record["model"]["prompt"] for record in records]
    assert all(6000 < len(p) < MAX_PROMPT_CHARS for p in prompts)
    research_page = tmp_path / "page.html"
    code, _, err = mlab("view", run, "-o", research_page)
    assert code == 0, err
    table = json.loads(research_page.read_text().split("id='folds'>")[1].split("</script>")[0])
    assert min(table["prompts"][2]) < 0  # a piece after one line break
    assert escape(prompts[0], quote=False) not in research_page.read_text()  # only its pieces, in the table
    clicked = tmp_path / "clicked.html"
    clicked.write_text(research_page.read_text().replace(
        "</body>", "<script>document.getElementById('open-all').click();</script></body>"))
    opened = chromium(clicked, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom")
    assert opened.returncode == 0, opened.stderr[-2000:]
    (nav,) = re.findall(r'<nav class="steps">(.*?)</nav>', opened.stdout, re.S)
    assert nav.count("</a>") == 3 and "<b>" not in nav and ">1</a>" in nav
    shown = re.findall(r'<pre class="prompt">(.*?)</pre>', opened.stdout, re.S)
    assert shown == [escape(p, quote=False) for p in prompts]
    tables = re.findall(r'<details class="calls"[^>]*><summary>model calls \(1\) and prompt</summary>'
                        r'<table class="runs">(.*?)</table>',
                        opened.stdout, re.S)
    first = records[0]["model"]["calls"][0]
    assert len(tables) == 3 and "<th>prompt tokens</th>" in tables[0]
    assert f'<td>{first["tier"]}</td><td>{escape(first["model"])}</td><td>{first["purpose"]}</td>' \
           f'<td class="num">{first["prompt_tokens"]:,}</td>' in tables[0]


@needs_chromium
def test_a_screenshot_of_the_page(research_page, tmp_path):
    shot = tmp_path / "page.png"
    done = chromium(research_page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,2000")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1200, 2000)
    assert len(data) > 20000  # a rendered page, not a blank one


def test_the_index_links_every_run_with_key_figures(runs_dir, tmp_path):
    index = tmp_path / "index.html"
    code, out, err = mlab("view", runs_dir, "-o", index)
    assert code == 0 and "an index of 16 run page(s)" in out, err
    html = index.read_text()
    links = re.findall(r"<a href='([^']+)'>", html)
    assert len(links) == 16 and all((tmp_path / link).resolve().is_file() for link in links)
    assert "<span class='badge'>demonstration</span>" in html and "1 run(s) were played by the keyless demo" in html
    assert "limit reached (steps)" in html and "model API failure" in html


@needs_chromium
def test_the_index_in_chromium(runs_dir, tmp_path):
    index = tmp_path / "index.html"
    mlab("view", runs_dir, "-o", index)
    done = chromium(index, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'data-ready="yes"' in done.stdout and done.stdout.count("<tr>") == 17


def test_long_runs_stay_bounded(task_source, tmp_path):
    """200 steps, each showing a 60,000-character observation: every step is shown, each text is cut."""
    long_text = "".join(f"line {i}: " + "x" * 50 + "\n" for i in range(1000))
    actions = [{"action": "Write File", "input": {"file_name": "notes.txt", "content": long_text}}]
    actions += [{"action": "Read File", "input": {"file_name": "notes.txt"}}] * 199
    (tmp_path / "actions.json").write_text(json.dumps(actions))
    with environment(MLAB_CACHE=str(tmp_path / "cache")):
        code, out, err = mlab("drive", task_source, "--actions", tmp_path / "actions.json", "--steps", "250",
                              "--runs-dir", tmp_path / "runs", "--quiet")
    assert code == 0, err
    (run,) = (tmp_path / "runs").iterdir()
    code, out, err = mlab("view", run, "-o", tmp_path / "long.html")
    assert code == 0, err
    html = (tmp_path / "long.html").read_text()
    assert html.count("<article class='step'") == 200
    assert html.count("<details class='long'>") == 199  # every long observation is folded
    assert "characters not shown" in html
    bound = 200 * (MAX_SHOWN_CHARS * 1.3 + MAX_PROMPT_CHARS + 20000)
    assert len(html) < bound


@pytest.mark.parametrize("verb", ["view", "eval"])
def test_paths_that_are_not_runs_are_explained(verb, tmp_path):
    code, _, stderr = mlab(verb, tmp_path / "nowhere")
    assert code == 2 and "is not a folder" in stderr and "Traceback" not in stderr
    (tmp_path / "empty").mkdir()
    code, _, stderr = mlab(verb, tmp_path / "empty")
    assert code == 2 and "no run folders" in stderr


def test_a_script_that_exited_non_zero_is_not_shown_as_ok(run_of, tmp_path):
    page = tmp_path / "crash.html"
    code, out, err = mlab("view", run_of("crash"), "-o", page)
    assert code == 0, err
    html = page.read_text()
    step = html.split("<article class='step' id='step-2'")[1].split("</article>")[0]
    assert "data-status='script-failed'" in step
    assert "<span class='status script-failed'>script exited 3</span>" in step
    assert "<span class='status ok'>" not in step and "<p class='compute failed'>script: exit code 3" in step


def test_a_data_file_diff_is_folded_and_summarised(run_of, research_page, tmp_path):
    from mlab.snapshots import ObjectStore
    from mlab.viewer.diff import file_change
    from mlab.viewer.page import file_diff_html

    html = research_page.read_text()
    assert "<details class='file-change data'><summary>submission.csv (added, 5 row(s), columns Id, y; +6 −0)" in html
    assert "<details class='file-change' open><summary>blend.py (added, +" in html  # code stays open
    store = ObjectStore(tmp_path / "objects", durable=False)
    before = store.put_bytes(b"Id,y\n" + b"".join(b"%d,1.0\n" % i for i in range(400)))
    after = store.put_bytes(b"Id,y,extra\n1,2.0,x\n")
    shown = file_diff_html(file_change(store, "out/predictions.csv", before, after))
    assert shown.startswith("<details class='file-change data'><summary>out/predictions.csv (changed, "
                            "400 row(s), columns Id, y → 1 row(s), columns Id, y, extra; +2 −401)")
    assert shown.count("<span class='del'>") < 12 and "more diff line(s) of this data file not shown" in shown


def test_the_chart_says_how_to_get_scores_when_there_are_none(run_of, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_of("research-0"), run, symlinks=True)
    (run / "scores.jsonl").unlink()
    mlab("view", run, "-o", tmp_path / "page.html")
    html = (tmp_path / "page.html").read_text()
    assert "id='score-chart'><p class='meta'>No score over steps yet: run <code>mlab eval --intermediate " in html
    assert "<svg" not in html.split("id='score-chart'")[1].split("</div>")[0]


def test_a_custom_metrics_display_name_heads_the_score(run_of, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_of("research-0"), run, symlinks=True)
    result = json.loads((run / "result.json").read_text())
    result["metric_display"] = "Dice over masks"
    (run / "result.json").write_text(json.dumps(result))
    mlab("view", run, "-o", tmp_path / "page.html")
    assert "score (Dice over masks," in (tmp_path / "page.html").read_text()
