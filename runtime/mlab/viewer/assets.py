"""The CSS and JavaScript inlined into every page `mlab view` writes (no file or network is fetched)."""
from __future__ import annotations

CSS = """
:root { --ink: #1d2330; --muted: #5d6778; --line: #d9dee7; --paper: #ffffff; --back: #f4f6f9;
        --ok: #1c7c3c; --bad: #b3261e; --warn: #9a6700; --add: #e6ffec; --del: #ffebe9; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       background: var(--back); }
header.run, main { max-width: 1100px; margin: 0 auto; padding: 12px 20px; }
.index { max-width: 1500px; margin: 0 auto; padding: 12px 20px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 16px; margin: 0 0 8px; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 10px 0 4px; }
pre, code { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; padding: 8px 10px; background: #f7f8fa;
      border: 1px solid var(--line); border-radius: 4px; max-height: 640px; overflow: auto; }
.demo-banner { background: #fff4ce; border: 2px solid #e0b400; color: #5c4400; padding: 8px 12px;
               border-radius: 6px; font-weight: 600; margin: 8px 0; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 4px 16px; margin: 8px 0; }
.facts div { background: var(--paper); border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; }
.facts dt { font-size: 11px; color: var(--muted); text-transform: uppercase; }
.facts dd { margin: 0; font-weight: 600; word-break: break-word; }
.verdict.ok { color: var(--ok); } .verdict.bad { color: var(--bad); }
.chart { background: var(--paper); border: 1px solid var(--line); border-radius: 4px; padding: 6px; margin: 8px 0; }
.chart svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
.toolbar { margin: 8px 0; display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
.toolbar button { font: inherit; padding: 3px 10px; border: 1px solid var(--line); background: var(--paper);
                  border-radius: 4px; cursor: pointer; }
nav.steps { display: flex; flex-wrap: wrap; gap: 3px; margin: 6px 0; }
nav.steps a { font-size: 11px; padding: 1px 5px; border-radius: 3px; background: #e8ecf2; color: var(--ink);
              text-decoration: none; }
nav.steps a.error, nav.steps a.ended, nav.steps a.shutdown, nav.steps a.script-failed { background: #fde2e0; }
nav.steps a.final { background: #d7f2df; }
article.step { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px;
               margin: 12px 0; content-visibility: auto; contain-intrinsic-size: auto 320px; }
.status { font-size: 11px; padding: 1px 7px; border-radius: 10px; background: #e8ecf2; font-weight: 600; }
.status.ok { background: #d7f2df; color: var(--ok); } .status.final { background: #cfe8ff; color: #0b4f8a; }
.status.error, .status.ended, .status.shutdown, .status.script-failed { background: #fde2e0; color: var(--bad); }
.compute.failed { color: var(--bad); font-weight: 600; }
.meta { color: var(--muted); font-size: 12px; font-weight: normal; }
.section { border-left: 4px solid #b7c0cf; padding: 2px 10px; margin: 6px 0; }
.section .text { white-space: pre-wrap; word-break: break-word; }
.role-reflection { border-color: #8aa4d6; } .role-plan { border-color: #3f8f5a; }
.role-fact-check { border-color: #d08a1e; background: #fffaf0; } .role-thought { border-color: #8a63c7; }
.role-criticism { border-color: #c7636e; }
mark.claim { background: #ffd7d2; color: #8a1010; padding: 0 2px; border-radius: 2px; }
.claims { background: #fff1f0; border: 1px solid #f3b8b3; border-radius: 4px; padding: 6px 10px; margin: 8px 0; }
.format-errors { background: #fff8e6; border: 1px solid #f0d48a; border-radius: 4px; padding: 6px 10px; }
.action code.name { font-weight: 700; font-size: 13.5px; }
.compute { font-size: 12px; color: var(--muted); }
pre.diff .add { background: var(--add); display: block; } pre.diff .del { background: var(--del); display: block; }
pre.diff .hunk { color: #0b4f8a; display: block; }
details > summary { cursor: pointer; color: #0b4f8a; margin: 4px 0; }
table.runs { border-collapse: collapse; width: 100%; background: var(--paper); font-size: 13px; }
table.runs th, table.runs td { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: left; }
table.runs th { cursor: pointer; background: #eef1f6; position: sticky; top: 0; user-select: none; }
table.runs th[data-dir="asc"]::after { content: " ▲"; } table.runs th[data-dir="desc"]::after { content: " ▼"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.format-badge { font-size: 11px; padding: 1px 7px; border-radius: 10px; background: #eef1f6; font-weight: 600; }
.format-badge.fallback { background: #fff4ce; color: #5c4400; }
.tool-call, .tool-result { border-left: 4px solid #5b7fbf; padding: 2px 10px; margin: 6px 0; }
.tool-call h4 { font-size: 11px; color: var(--muted); margin: 6px 0 2px; font-weight: normal; }
.tool-result.error { border-color: var(--bad); background: #fff6f5; }
.chart.tree svg.search-tree { display: block; max-width: 100%; height: auto; }
svg.search-tree .edge { stroke: #9aa5b8; stroke-width: 1.5; }
svg.search-tree .edge.second { stroke-dasharray: 4 3; }
svg.search-tree .tree-node rect { fill: #e8f3ec; stroke: #3f8f5a; stroke-width: 1.2; }
svg.search-tree .tree-node.buggy rect { fill: #fde2e0; stroke: var(--bad); }
svg.search-tree .tree-node.best rect { fill: #c9ecd4; }
svg.search-tree .tree-node.submitted rect { stroke: var(--ok); stroke-width: 4; }
svg.search-tree .tree-node .cross { stroke: var(--bad); stroke-width: 1; opacity: .5; }
svg.search-tree .tree-node text { font: 11px system-ui, sans-serif; fill: var(--ink); }
svg.search-tree .tree-node text.val { font-weight: 700; }
svg.search-tree .submitted-label { fill: var(--ok) !important; font-weight: 700; }
svg.search-tree .node-link:hover rect { stroke-width: 3; }
svg.search-tree text.legend { font: 11px system-ui, sans-serif; fill: var(--muted); }
article.node:target, article.node.opened { box-shadow: 0 0 0 3px #1f6feb55; }
.node-facts .operator { font-weight: 700; }
.badge { font-size: 10.5px; background: #fff4ce; border: 1px solid #e0b400; border-radius: 3px; padding: 0 4px; }
"""

# The run page: a step navigation built from the steps, and buttons that open or close every fold.
RUN_JS = """
(function () {
  // The step navigation, written as one piece of markup: for 10,000 steps, creating each link
  // on its own took a sixth of the page's opening.
  function escaped(text) {
    return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  }
  var links = [];
  document.querySelectorAll('article.step').forEach(function (step) {
    links.push('<a href="#' + escaped(step.id) + '" class="' + escaped(step.dataset.status) + '" title="' +
               escaped(step.dataset.action) + '">' + escaped(step.dataset.label || step.dataset.step) + '</a>');
  });
  document.querySelector('nav.steps').innerHTML = links.join('');
  // The model-call details are built the first time they are opened, from the page's table of
  // them (a JSON data block): the calls' table, then the prompt, whose pieces are written once.
  var folds = null;
  function table() {
    if (folds === null) { folds = JSON.parse(document.getElementById('folds').textContent); }
    return folds;
  }
  function prompt(number) {
    var data = table(), numbers = data.prompts[number], text = '';
    for (var i = 0; i < numbers.length; i++) {  // ~n: piece n after one line break, not a blank line
      var piece = numbers[i];
      if (i > 0) { text += piece < 0 ? '\\n' : data.separator; }
      text += data.pieces[piece < 0 ? ~piece : piece];
    }
    return text;
  }
  function cells(row, tag, numericFrom) {
    var line = document.createElement('tr');
    row.forEach(function (value, column) {
      var cell = document.createElement(tag);
      cell.textContent = value;
      if (tag === 'td' && column >= numericFrom) { cell.className = 'num'; }
      line.appendChild(cell);
    });
    return line;
  }
  function build(details) {
    var data = table(), calls = document.createElement('table'), head = document.createElement('thead'),
        body = document.createElement('tbody');
    calls.className = 'runs';
    head.appendChild(cells(data.columns, 'th', data.numeric_from));
    data.calls[Number(details.dataset.calls)].forEach(function (row) {
      body.appendChild(cells(row, 'td', data.numeric_from));
    });
    calls.appendChild(head);
    calls.appendChild(body);
    details.appendChild(calls);
    if (details.dataset.prompt !== undefined) {
      var title = document.createElement('h3'), text = document.createElement('pre');
      title.textContent = 'Prompt';
      text.className = 'prompt';
      text.textContent = prompt(Number(details.dataset.prompt));
      details.appendChild(title);
      details.appendChild(text);
    }
    details.dataset.shown = 'yes';
  }
  document.addEventListener('toggle', function (event) {
    var details = event.target;
    if (details.open && details.dataset && details.dataset.calls !== undefined && !details.dataset.shown) {
      build(details);
    }
  }, true);
  function fold(open) { document.querySelectorAll('main details').forEach(function (d) { d.open = open; }); }
  document.getElementById('open-all').addEventListener('click', function () { fold(true); });
  document.getElementById('close-all').addEventListener('click', function () { fold(false); });
  // A node of the search tree, clicked (or named in the address): open its plan, diff and output.
  function reveal() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (!target || !target.classList.contains('node')) { return; }
    document.querySelectorAll('article.node.opened').forEach(function (a) { a.classList.remove('opened'); });
    target.querySelectorAll('details').forEach(function (d) { d.open = true; });
    target.classList.add('opened');
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  document.body.dataset.ready = 'yes';
})();
"""

# The index page: click a column header to sort by it (numbers as numbers, missing values last).
INDEX_JS = """
(function () {
  function key(row, column) {
    var cell = row.cells[column];
    var value = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    var number = parseFloat(value);
    return isNaN(number) ? value : number;
  }
  document.querySelectorAll('table.runs th').forEach(function (header, column) {
    header.addEventListener('click', function () {
      var table = header.closest('table'), body = table.tBodies[0];
      var ascending = header.dataset.dir !== 'asc';
      table.querySelectorAll('th').forEach(function (h) { delete h.dataset.dir; });
      header.dataset.dir = ascending ? 'asc' : 'desc';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, column), y = key(b, column), order;
        if (typeof x === 'number' && typeof y === 'number') { order = x - y; }
        else if (typeof x === 'number') { return -1; }
        else if (typeof y === 'number') { return 1; }
        else { order = String(x).localeCompare(String(y)); }
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  document.body.dataset.ready = 'yes';
})();
"""
