"""`mlab view` of a tree-search run (the tree as SVG, each node's plan, diff and output) and of a
tool agent's steps (assistant text, the call as sent, the result with its error flag)."""
from __future__ import annotations

import re
import subprocess

import pytest

from handmade import tool_run, tree_run
from report_helpers import mlab
from test_viewer import CHROMIUM, needs_chromium


@pytest.fixture(scope="session")
def tree_page(run_of, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tree-view")
    run = tree_run(run_of("research-0"), folder / "run")
    code, out, err = mlab("view", run, "-o", folder / "tree.html")
    assert code == 0, err
    return folder / "tree.html"


def _node(html: str, number: int) -> str:
    return html.split(f"<article class='step node' id='node-{number}'")[1].split("</article>")[0]


def test_the_tree_is_drawn_with_operators_scores_buggy_and_submitted_nodes(tree_page):
    html = tree_page.read_text()
    svg = html.split("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"search-tree\"")[1].split("</svg>")[0]
    boxes = re.findall(r'<g class="tree-node ([a-z ]+)" data-node="(\d)" data-operator="(\w+)">', svg)
    assert [(int(n), op) for _, n, op in boxes] == [(1, "draft"), (2, "draft"), (3, "debug"), (4, "improve"),
                                                     (5, "improve")]
    classes = {int(n): set(c.split()) for c, n, _ in boxes}
    assert "buggy" in classes[2] and all("valid" in classes[n] for n in (1, 3, 4, 5))
    assert {"submitted", "best"} <= classes[5] and not any("submitted" in classes[n] for n in (1, 2, 3, 4))
    assert ">#3 debug</text>" in svg and ">0.4</text>" in svg and ">buggy</text>" in svg
    assert svg.count("<line class=\"edge\"") == 3  # 3 -> 2, 4 -> 1, 5 -> 3: drafts are roots
    assert 'class="submitted-label">submitted</text>' in svg
    assert all(f'<a href="#node-{n}" class="node-link"' in svg for n in range(1, 6))
    assert "<script" not in svg and not re.search(r"""(src|href)=['"]?(https?:)?//""", html)
    assert "greedy: 5 nodes, 4 valid, 1 buggy" in html and "<a href='#node-5'>node 5</a> (validation 0.4" in html


def test_a_node_shows_its_plan_its_code_against_its_parent_and_its_output(tree_page):
    html = tree_page.read_text()
    four = _node(html, 4)  # improve of node 1, made right after node 3: the diff is against node 1
    assert "from <a href='#node-1'>node 1</a>" in four and "validation 0.7" in four
    assert "<h3>Plan</h3><div class='text'>Plan of node 4: improve" in four
    assert "<h3>Code and files against node 1</h3>" in four
    assert "<span class='del'>-W = 0.3</span>" in four and "<span class='add'>+W = 0.4</span>" in four
    assert "W = 0.5" not in four
    assert "<h3>Output</h3>" in four and "validation mae 0.7" in four
    two = _node(html, 2)
    assert "<span class='status error'>buggy</span>" in two and "NameError" in two
    assert "root (from the initial workspace)" in two and "against the initial workspace" in two
    assert "<span class='status final'>submitted</span>" in _node(html, 5)
    closing = html.split("id='step-6'")[1].split("</article>")[0]
    assert "The workspace of <a href='#node-5'>node 5</a> became the final workspace" in closing
    assert "Files changed" not in closing


def test_a_nodes_workspace_is_its_parents_and_the_closing_record_leaves_the_submitted_one():
    from mlab.reports.runs import record_workspaces

    def delta(**changed):
        return {"changed": {name.replace("_", "."): digest for name, digest in changed.items()}, "removed": []}

    records = [{"node": 1, "parent": None, "snapshot": delta(a_py="A")},
               {"node": 2, "parent": 1, "snapshot": delta(train_py="T2")},
               {"node": 3, "parent": None, "snapshot": delta(train_py="T3")},
               # the closing record submits node 2: against the deltas in order, only train.py differs
               {"snapshot": delta(train_py="T2")}]
    afters = [after for _, after in record_workspaces({"train.py": "S"}, records)]
    assert afters[1] == {"train.py": "T2", "a.py": "A"}  # node 2 keeps what node 1 made
    assert afters[2] == {"train.py": "T3"}  # node 3, a draft, starts from the initial workspace
    assert afters[3] == afters[1]  # the final workspace is node 2's, a.py included


@needs_chromium
def test_clicking_a_node_opens_it_in_chromium(tree_page, tmp_path):
    """Following a node's link (here, opening the page at #node-3) opens that node's folds."""
    url = tree_page.resolve().as_uri() + "#node-3"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    dom = done.stdout
    assert done.returncode == 0 and 'data-ready="yes"' in dom, done.stderr[-2000:]
    assert dom.count('<g class="tree-node') == 5  # the SVG as the browser parsed it
    before, three = dom.split('id="node-3"', 1)
    three = three.split("</article>")[0]
    assert 'class="step node opened"' in before[-80:]
    folds = re.findall(r"<details[^>]*>", three)
    assert folds and all(" open" in tag for tag in folds)
    assert 'class="step node opened"' not in dom.split('id="node-3"')[0][:-80]  # no other node opened


def test_a_tool_step_shows_the_message_the_call_as_sent_and_the_result(run_of, tmp_path):
    run = tool_run(run_of("research-0"), tmp_path / "run")
    code, out, err = mlab("view", run, "-o", tmp_path / "tools.html")
    assert code == 0, err
    html = (tmp_path / "tools.html").read_text()
    first = html.split("id='step-1'")[1].split("</article>")[0]
    assert "<h3>Reflection</h3><div class='text'>nothing yet.</div>" in first
    assert "<span class='format-badge' title='the declared reply format'>tools</span>" in first
    assert "<code class='name'>list_files</code> <span class='meta'>→ action List Files</span>" in first
    assert "<code class='call-id'>call_a1</code>" in first and "call 1 of 2 in the message" in first
    assert "<pre class='tool-arguments'>{&quot;dir_path&quot;:  &quot;.&quot;}</pre>" in first  # spacing kept
    assert "<code>read_file</code> <span class='meta'>id call_b2</span>" in first  # the message's other call
    third = html.split("id='step-3'")[1].split("</article>")[0]
    assert "<code>list_files</code> <span class='meta'>id call_d4; not run, answered: “One action per step" in third
    assert "<span class='status ok'>sent as a result</span>" in first and "content is the observation below" in first
    second = html.split("id='step-2'")[1].split("</article>")[0]
    assert "call 2 of the message of an earlier step" in second
    third = html.split("id='step-3'")[1].split("</article>")[0]
    assert "data-error='yes'" in third and "<span class='status error tool-error'>sent as an error</span>" in third
    assert "{&quot;script&quot;: 5}" in third and "Traceback" not in html
    fourth = html.split("id='step-4'")[1].split("</article>")[0]  # the fallback's own sections and action
    assert "tools; this step ran the fallback format'>sections (fallback)</span>" in fourth
    assert "<h3>Fact Check</h3><div class='text'>nothing is claimed" in fourth
    assert "<div class='action'><h3>Action</h3><code class='name'>List Files</code>" in fourth
    assert "Tool call" not in fourth


def test_a_real_tool_run_is_shown_call_by_call(task_source, tmp_path):
    """research-tools on the tiny task, played by the scripted model with tool calls: the page
    shows what the agent loop recorded (the sections, each call as sent, the format error)."""
    import json

    from report_helpers import environment

    text = ("Reflection: a first look.\nResearch Plan and Status: 1. run train.py. Status: started.\n"
            "Fact Check: nothing is confirmed yet.\nThought: {}")
    replies = [
        {"content": text.format("list the files"), "tool_calls": [{"name": "list_files", "arguments": {"dir_path": "."}}]},
        {"content": text.format("run it"), "tool_calls": [{"name": "execute_script", "arguments": {"script": 5}}]},
        {"content": text.format("run it, spelled right"),
         "tool_calls": [{"name": "execute_script", "arguments": {"script_name": "train.py"}}]},
        {"content": text.format("submit"), "tool_calls": [{"name": "final_answer", "arguments": {"final_answer": "mean"}}]},
    ]
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    with environment(MLAB_CACHE=str(tmp_path / "cache"), SCIKIT_LEARN_DATA=str(tmp_path / "sklearn")):
        code, out, err = mlab("run", task_source, "--agent", "research-tools", "--model",
                              f"mlab/scripted:{tmp_path / 'replies.json'}", "--runs-dir", tmp_path / "runs", "--plain")
    assert code in (0, 1), out + err
    (run,) = (tmp_path / "runs").iterdir()
    code, out, err = mlab("view", run, "-o", tmp_path / "page.html")
    assert code == 0, err
    html = (tmp_path / "page.html").read_text()
    steps = [html.split(f"id='step-{n}'")[1].split("</article>")[0] for n in (1, 2, 3)]
    assert all("<span class='format-badge' title='the declared reply format'>tools</span>" in s for s in steps)
    assert "<h3>Fact Check</h3><div class='text'>nothing is confirmed yet.</div>" in steps[0]
    assert "<code class='name'>list_files</code> <span class='meta'>→ action List Files</span>" in steps[0]
    assert "<pre class='tool-arguments'>{&quot;dir_path&quot;: &quot;.&quot;}</pre>" in steps[0]
    assert "format errors (1)" in steps[1] and "script_name" in steps[1]  # the bad call, answered and retried
    assert "<code class='name'>execute_script</code>" in steps[1] and "train.py" in steps[1]
    assert "<code class='name'>final_answer</code>" in steps[2]


def test_a_real_tree_search_is_drawn_and_reported(task_source, tmp_path):
    """tree-greedy on the tiny task, three drafts played by the scripted model (one crashes): the
    page draws what the engine recorded, and the report's tree figures come from it."""
    import json

    from report_helpers import environment
    from scenarios import blend_script
    from mlab.reports.runs import load_run
    from mlab.reports.search import curve_rows, search_summary

    def draft(weight, crash=False):
        code = blend_script(weight) + ("raise SystemExit('broken')\n" if crash else "") + \
            f"print('Validation score:', {round(1 - weight, 3)})\n"
        return f"Blend the mean with 2x at weight {weight}.\n\n```python\n{code}```\n"

    (tmp_path / "replies.json").write_text(json.dumps([draft(0.3), draft(0.9, crash=True), draft(0.6)]))
    with environment(MLAB_CACHE=str(tmp_path / "cache"), SCIKIT_LEARN_DATA=str(tmp_path / "sklearn")):
        code, out, err = mlab("run", task_source, "--agent", "tree-greedy", "--model",
                              f"mlab/scripted:{tmp_path / 'replies.json'}", "--steps", "3",
                              "--runs-dir", tmp_path / "runs", "--plain")
    assert code in (0, 1), out + err
    (folder,) = (tmp_path / "runs").iterdir()
    result = json.loads((folder / "result.json").read_text())
    assert result["search"]["submitted_node"] == 3, result["search"]
    mlab("view", folder, "-o", tmp_path / "page.html")
    html = (tmp_path / "page.html").read_text()
    boxes = re.findall(r'<g class="tree-node ([a-z ]+)" data-node="(\d)" data-operator="(\w+)">', html)
    assert [(n, op, "buggy" in c, "submitted" in c) for c, n, op in boxes] == [
        ("1", "draft", False, False), ("2", "draft", True, False), ("3", "draft", False, True)]
    three = _node(html, 3)
    assert "<h3>Plan</h3><div class='text'>Blend the mean with 2x at weight 0.6." in three
    assert "<span class='add'>+W = 0.6</span>" in three and "validation 0.4" in three
    run = load_run(folder)
    assert curve_rows([run]).best_validation.tolist() == [0.7, 0.7, 0.4]
    assert search_summary([run]).iloc[0][["nodes_per_run", "valid_share"]].tolist() == [3, 2 / 3]


def _big_tree() -> list[tuple]:
    """24 drafts (every third one buggy) each improved once, then a chain of 6 improves from the
    last draft's child; the last node is submitted: a tree far wider than a page."""
    nodes, number = [], 0
    for draft in range(24):
        number += 1
        buggy = draft % 3 == 1
        nodes.append((number, None, "draft", None if buggy else 0.9 - draft / 100, buggy, f"W = {draft}\n"))
        nodes.append((number + 1, number, "debug" if buggy else "improve", 0.8 - draft / 100, False, f"W = {draft}.5\n"))
        number += 1
    for _ in range(6):
        number += 1
        nodes.append((number, number - 1, "improve", 0.5 - number / 1000, False, f"W = {number}\n"))
    return nodes


def _magenta(image):
    """The pixels of exactly #ff00ff, as a boolean array, and the number of separate regions of them."""
    import numpy as np
    from scipy import ndimage

    mask = np.all(np.asarray(image.convert("RGB")) == (255, 0, 255), axis=-1)
    return mask, ndimage.label(mask)[1]  # 4-connected regions


@needs_chromium
@pytest.mark.parametrize("window", [1400, 2600])
def test_a_wide_tree_fits_the_page_in_a_screenshot(run_of, tmp_path, window):
    """Every node of a 54-node tree is on the screenshot, at a readable size, at 1,400 and 2,600
    pixels: the tree is laid out in bands that fit the page, not in a scroll box hiding nodes."""
    from PIL import Image

    nodes = _big_tree()
    run = tree_run(run_of("research-0"), tmp_path / "run", nodes=nodes, submitted=len(nodes))
    page = tmp_path / "tree.html"
    assert mlab("view", run, "-o", page)[0] == 0
    html = page.read_text()
    # Paint each box's rectangle one flat colour (text, crosses and the rest of the page hidden),
    # so that each node visible on the screenshot is one magenta region.
    paint = ("<style>body * { visibility: hidden !important; } svg.search-tree, svg.search-tree rect "
             "{ visibility: visible !important; } svg.search-tree rect { fill: #ff00ff !important; "
             "stroke: none !important; } svg.search-tree .cross, svg.search-tree text, svg.search-tree line "
             "{ display: none !important; }</style>")
    page.write_text(html.replace("</head>", paint + "</head>", 1))
    shot = tmp_path / "tree.png"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                           f"--window-size={window},1800", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    image = Image.open(shot)
    assert image.size == (window, 1800)
    mask, regions = _magenta(image)
    assert regions == len(nodes) == 54
    # drawn at full size: the magenta area is 54 whole boxes (92 x 38 pixels, rounded corners)
    assert mask.sum() > 0.9 * 54 * 92 * 38
