"""AST (+ placed comments) → .mlab text in the one canonical layout.

The layout: two spaces per level; within a run of entries not broken by a blank line, the
values start in one column; one blank line between declarations and at most one where the
source had blank lines; strings in double quotes, text over several lines triple-quoted and
indented one level deeper than its entry; a list or a `{ key value }` block on one line when
it fits in WIDTH columns and holds no comment, else one item per line, except a model's settings,
always one per line, their values in one column, the block outside its neighbours' alignment.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import ast as A
from ..comments import CommentMap, Note, children
from ..literals import quote
from ..transform import decode_string, decode_text

WIDTH = 100
INDENT = "  "
BLOCKS = (A.Data, A.Action, A.Respond, A.Prompts, A.ExpOverride, A.Search, A.Changes)  # always printed with a body


def triple_quote(value: str, indent: str) -> list[str] | None:
    """The lines of a triple-quoted literal for `value` at `indent`, or None when none decodes to it."""
    body = value.replace('"""', '\\"""').split("\n")
    lines = ['"""'] + [indent + line if line.strip() else "" for line in body] + [indent + '"""']
    if decode_text("\n".join(lines)) != value or (len(lines) == 3 and not value.strip()):
        return None
    return lines


def string_lines(value: A.Str, indent: str) -> list[str]:
    if "\n" in value.value:
        lines = triple_quote(value.value, indent + INDENT)
        if lines is not None:
            return lines
    text = quote(value.value)
    assert decode_string(text) == value.value
    return [text]


def _scalar(value: A.Value) -> str:
    if isinstance(value, (A.Duration, A.Size, A.Percent)):
        return value.text
    if isinstance(value, A.Int):
        return str(value.value)
    if isinstance(value, A.Float):
        return repr(value.value)
    if isinstance(value, A.Name):
        return value.value
    if isinstance(value, A.Npm):
        return "npm " + quote(value.value)
    if isinstance(value, A.PythonVersion):
        return "python " + quote(value.value)
    raise TypeError(type(value).__name__)


class Unprintable(Exception):
    """The AST holds a node the printer does not know (a bug to report, never a user's mistake)."""


@dataclass(frozen=True)
class Glue:
    """Text printed right after the previous part, without a space (e.g. `(` or `, `)."""

    text: str


class MlabPrinter:
    """Prints one module; `cmap` says where its comments go."""

    def __init__(self, cmap: CommentMap):
        self.cmap = cmap

    # -- module ---------------------------------------------------------
    def module(self, module: A.Module) -> str:
        lines: list[str] = []
        previous = None
        for unit in children(module):
            separate = previous is not None and (isinstance(unit, A.Decl) or isinstance(previous, A.Decl))
            if separate and lines and lines[-1] != "":
                lines.append("")
            self._leading(unit, lines, "")
            lines += self.unit(unit, "", 0)
            previous = unit
        self._notes(self.cmap.of(module).closing, lines, "")
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines) + "\n" if lines else ""

    # -- sequences ------------------------------------------------------
    @staticmethod
    def _notes(notes: list[Note], lines: list[str], indent: str) -> None:
        for note in notes:
            if note.blank_before and lines and lines[-1] != "":
                lines.append("")
            lines.append(indent + note.text)

    def _leading(self, unit, lines: list[str], indent: str) -> None:
        self._notes(self.cmap.of(unit).leading, lines, indent)
        if self.cmap.blank_before(unit) and lines and lines[-1] != "":
            lines.append("")

    def body(self, units: list, indent: str, closing: list[Note]) -> list[str]:
        """The lines of a block's units, aligned in runs, with their comments."""
        lines: list[str] = []
        runs = self._runs(units)
        self.sections_below = any(isinstance(u, A.Section) and self._too_long(u, indent) for u in units)
        codes = [self.code(unit, indent, runs[i][1]) for i, unit in enumerate(units)]
        # one line of code (a comment from inside the unit may stand above it, as it will stand
        # before the unit once formatted): its trailing comment joins its run's comment column
        one_line = [all(line.lstrip().startswith("#") for line in code[:-1]) for code in codes]
        comment_column: dict[int, int] = {}
        for i, unit in enumerate(units):
            if self.cmap.of(unit).trailing and one_line[i]:
                run = runs[i][0]
                comment_column[run] = max(comment_column.get(run, 0), len(codes[i][-1]) + 2)
        for i, unit in enumerate(units):
            self._leading(unit, lines, indent)
            column = comment_column.get(runs[i][0], 0) if one_line[i] else 0
            lines += self.with_trailing(unit, codes[i], indent, column)
        self._notes(closing, lines, indent)
        return lines

    def _too_long(self, section: A.Section, indent: str) -> bool:
        _, parts, _, _ = self.layout(section)
        lines = [indent + section.word]
        for part in parts:
            self._append(lines, part.value if isinstance(part, Wrap) else part, indent)
        return len(lines) == 1 and len(lines[0]) > WIDTH

    def _runs(self, units: list) -> list[tuple[int, int]]:
        """For each unit: the run of aligned units it belongs to, and the width of its keyword column."""
        out, run, number = [(-1, 0)] * len(units), [], 0

        def close_run():
            nonlocal number
            width = max((len(self.keyword(units[i])) for i in run), default=0)
            for i in run:
                out[i] = (number, width)
            number += 1
            run.clear()

        for i, unit in enumerate(units):
            leading = self.cmap.of(unit).leading
            broken = self.cmap.blank_before(unit) or any(note.blank_before for note in leading)
            if i and self.layout(units[i - 1])[2] is None:  # comments printed after the unit before
                broken = broken or any(note.blank_before for note in self.cmap.of(units[i - 1]).closing)
            if isinstance(unit, BLOCKS) or self.layout(unit)[3] or not self.keyword(unit):  # a block stands alone
                close_run()
                out[i] = (number, 0)
                number += 1
                continue
            if broken:
                close_run()
            run.append(i)
        close_run()
        return out

    @staticmethod
    def keyword(unit) -> str:
        if isinstance(unit, (A.Limit, A.HardwareEntry, A.RespondSetting)):
            return unit.key.value
        if isinstance(unit, A.NamedPrompt):
            return unit.name.value
        if isinstance(unit, A.Hook):
            return unit.time.value
        if isinstance(unit, A.Entry):
            return unit.keyword.split()[0]
        return ""

    # -- one unit -------------------------------------------------------
    def unit(self, node, indent: str, pad: int) -> list[str]:
        """The unit's lines (without its leading comments), trailing comments attached."""
        return self.with_trailing(node, self.code(node, indent, pad), indent, 0)

    def with_trailing(self, node, lines: list[str], indent: str, column: int) -> list[str]:
        placed = self.cmap.of(node)
        if placed.trailing:
            lines = lines[:-1] + [lines[-1].ljust(column - 2) + "  " + placed.trailing[0]]
            lines += [indent + text for text in placed.trailing[1:]]
        if placed.closing and self.layout(node)[2] is None:
            self._notes(placed.closing, lines, indent)
        return lines

    def code(self, node, indent: str, pad: int) -> list[str]:
        """The unit's lines, with the comments inside it but not its trailing ones."""
        placed = self.cmap.of(node)
        head, parts, kids, always_block = self.layout(node)
        lines = [indent + (head.ljust(pad) if pad and (parts or kids is not None) else head)]
        for part in parts:
            self._append(lines, part, indent)
        header_done = False
        if kids is not None:
            inside = self.cmap.has_inside(node)
            inline = None if always_block or inside else self._inline_block(kids)
            if inline is not None and len(lines[-1]) + 1 + len(inline) <= WIDTH:
                lines[-1] += " " + inline
            elif kids or always_block or inside:
                lines[-1] += " {"
                if placed.header:
                    lines[-1] += "  " + placed.header[0]
                    lines += [indent + INDENT + text for text in placed.header[1:]]
                    header_done = True
                lines += self.body(kids, indent + INDENT, placed.closing)
                lines.append(indent + "}")
            else:
                lines[-1] += " {}"
        if placed.header and not header_done:  # a comment inside a one-line unit goes above it
            lines[:0] = [indent + text for text in placed.header]
        return lines

    def _append(self, lines: list[str], part, indent: str) -> None:
        if isinstance(part, Wrap):
            chunk = self.value(part.value, indent, len(lines[-1]) + 1)
            if len(chunk) > 1 or not getattr(self, "sections_below", False):
                part = part.value
            else:
                deeper = indent + INDENT
                chunk = self.value(part.value, deeper, len(deeper))
                lines.append(deeper + chunk[0])
                lines.extend(chunk[1:])
                return
        if isinstance(part, Glue):
            lines[-1] += part.text
            return
        if isinstance(part, str):
            lines[-1] += " " + part
            return
        chunk = self.value(part, indent, len(lines[-1]) + 1)
        lines[-1] += " " + chunk[0]
        lines += chunk[1:]

    def _inline_block(self, kids: list) -> str | None:
        if not kids:
            return "{}"
        texts = []
        for kid in kids:
            kid_lines = self.unit(kid, "", 0)
            if len(kid_lines) != 1:
                return None
            texts.append(kid_lines[0])
        return "{ " + "  ".join(texts) + " }"

    # -- values ---------------------------------------------------------
    def value(self, value: A.Value, indent: str, column: int) -> list[str]:
        """Lines of a value: the first continues the current line, the rest are whole lines."""
        if isinstance(value, A.Str):
            return string_lines(value, indent)
        if isinstance(value, A.List):
            return self.list_lines(value, indent, column)
        return [_scalar(value)]

    def list_lines(self, value: A.List, indent: str, column: int) -> list[str]:
        placed = self.cmap.of(value)
        # comments between an entry's keyword and its list (possible in YAML) go after the `[`
        header = [note.text for note in placed.leading] + placed.header
        if not self.cmap.has_inside(value) and not header:
            flat = []
            for item in value.items:
                chunk = self.value(item, indent + INDENT, 0)
                if len(chunk) != 1:
                    break
                flat.append(chunk[0])
            else:
                text = "[" + ", ".join(flat) + "]"
                if column + len(text) <= WIDTH:
                    return [text]
        inner = indent + INDENT
        if not self.cmap.has_inside(value) and not header:
            filled = self._fill(value, inner)
            if filled is not None:
                return ["["] + filled + [indent + "]"]
        head = "["
        if header:
            head += "  " + header[0]
        lines = [inner + text for text in header[1:]]
        for item in value.items:
            self._leading(item, lines, inner)
            chunk = self.value(item, inner, len(inner))
            item_lines = [inner + chunk[0]] + chunk[1:]
            item_lines[-1] += ","
            item_placed = self.cmap.of(item)
            if item_placed.header:
                item_lines[:0] = [inner + text for text in item_placed.header]
            if item_placed.trailing:
                item_lines[-1] += "  " + item_placed.trailing[0]
                item_lines += [inner + text for text in item_placed.trailing[1:]]
            lines += item_lines
            self._notes(item_placed.closing, lines, inner)
        self._notes(placed.closing, lines, inner)
        return [head] + lines + [indent + "]"]

    def _fill(self, value: A.List, inner: str) -> list[str] | None:
        """Items packed into lines of at most WIDTH columns, or None when an item spans lines."""
        lines: list[str] = []
        for item in value.items:
            chunk = self.value(item, inner, len(inner))
            if len(chunk) != 1:
                return None
            if lines and len(lines[-1]) + 2 + len(chunk[0]) <= WIDTH:
                lines[-1] += " " + chunk[0] + ","
            else:
                lines.append(inner + chunk[0] + ",")
        if lines:
            lines[-1] = lines[-1][:-1]
        return lines

    # -- what each node looks like -----------------------------------------
    def layout(self, node) -> tuple[str, list, list | None, bool]:
        """(first word, further parts, block units or None, whether the block is always expanded)."""
        if isinstance(node, A.Use):
            pin = ["version", node.version] if node.version is not None else []
            return "use", (["std"] if node.std else []) + [node.target] + pin, None, False
        if isinstance(node, A.Decl):
            parts = [node.name.value] + (["external"] if isinstance(node, A.ExternalAgent) else [])
            if isinstance(node, (A.Agent, A.Actions)) and node.parent is not None:
                parts += ["extends", node.parent.value]
            return node.kind, parts, list(node.entries), True
        if isinstance(node, (A.Limit, A.HardwareEntry, A.RespondSetting)):
            parts = [node.value] + ([node.need.value] if getattr(node, "need", None) else [])
            return node.key.value, parts, None, False
        if isinstance(node, A.NamedPrompt):
            return node.name.value, [node.value], None, False
        if isinstance(node, A.Section):
            return self._section(node)
        if isinstance(node, A.Change):  # `2 "what" because "why"` inside `changes { ... }`
            return self.value(node.version, "", 0)[0], [node.what, "because", node.why], None, False
        layout = ENTRY_LAYOUT.get(type(node))
        if layout is None:  # an entry added to the language but not yet to the printer
            raise Unprintable(f"mlabc cannot print `{getattr(node, 'keyword', type(node).__name__)}` entries yet")
        return layout(node)

    @staticmethod
    def _section(node: A.Section) -> tuple[str, list, None, bool]:
        parts: list = [node.name]
        if node.role is not None:
            parts += ["role", node.role.value]
        if node.kind is not None:
            parts.append(node.kind.value)
        return node.word, parts + [Wrap(node.instruction)], None, False


@dataclass(frozen=True)
class Wrap:
    """A value that moves to the next line, one level deeper, when it does not fit on this one."""

    value: A.Value


def _params(does: A.Does | A.Metric) -> list:
    name = does.name.value if isinstance(does, A.Metric) else does.primitive.value
    if not does.params:
        return [name]
    parts: list = [name, Glue("(")]
    for i, param in enumerate(does.params):
        parts += [Glue(("" if i == 0 else ", ") + param.name.value + " ="), param.value]
    return parts + [Glue(")")]


def _one(keyword: str):
    return lambda e: (keyword, [e.value], None, False)


ENTRY_LAYOUT = {
    A.Title: _one("title"), A.Category: _one("category"), A.Problem: _one("problem"),
    A.Starter: _one("starter"), A.ReadOnly: _one("read_only"), A.Requires: _one("requires"),
    A.Submission: lambda e: ("submission", [e.file] + (["columns", e.columns] if e.columns else []),
                             list(e.rules) or None, bool(e.rules)),
    A.ColumnRule: lambda e: ("column", [e.column, e.kind_.value]
                             + ([e.count.value, e.count_value] if e.count is not None else [])
                             + (["from", e.low] if e.low is not None else [])
                             + (["to", e.high] if e.high is not None else []), None, False),
    A.Metric: lambda e: ("metric", _params(e) + (["on", e.on] if e.on is not None else [])
                         + ([e.direction.value] if e.direction else []), None, False),
    A.BaselineRun: lambda e: ("baseline", ["run", e.script], None, False),
    A.BaselineValue: lambda e: ("baseline", [e.value, "because", e.reason], None, False),
    A.Success: lambda e: ("success", ["improvement", ">=", e.threshold], None, False),
    A.DefaultAgent: lambda e: ("agent", [e.name.value], None, False),
    A.Demo: _one("demo"),
    A.Evaluator: lambda e: ("evaluator", [e.target, "because", e.reason], None, False),
    A.Version: _one("version"),
    A.Changes: lambda e: ("changes", [], list(e.items), True),
    A.KnownIssue: lambda e: ("issue", [e.text, "since", e.since] + (["fixed", e.fixed] if e.fixed is not None else []),
                             None, False),
    A.Reference: lambda e: ("reference", [e.label, e.value] + (["source", e.source] if e.source else []), None, False),
    A.Thresholds: lambda e: ("thresholds", [], list(e.items), False),
    A.Leaderboard: lambda e: ("leaderboard", [e.file] + (["column", e.column] if e.column else [])
                              + (["source", e.source] if e.source else []), None, False),
    A.Gym: lambda e: ("gym", [], list(e.items), False),
    A.Limits: lambda e: ("limits", [], list(e.items), False),
    A.Hardware: lambda e: ("hardware", [], list(e.items), False),
    A.Source: lambda e: ("from", [e.kind_.value, e.value], None, False),
    A.Split: lambda e: ("split", [e.method.value, *e.args] + (["seed", e.seed] if e.seed is not None else []),
                        None, False),
    A.IdColumn: _one("id"), A.Answers: lambda e: ("answers", [e.value] + (["unlabelled"] if e.unlabelled else []), None, False), A.Public: _one("public"), A.Private: _one("private"),
    A.Checksum: lambda e: ("checksum", [e.file, e.digest], None, False),
    A.Prepare: _one("prepare"),
    A.Validation: _one("validation"),
    A.Data: lambda e: ("data", [e.name.value], list(e.entries), True),
    A.Describe: _one("describe"), A.Returns: _one("returns"),
    A.Input: lambda e: ("input", [e.name.value, Glue(":"), e.type.value]
                        + (["=", e.default] if e.default is not None else []) + [e.description], None, False),
    A.Does: lambda e: ("does", _params(e), None, False),
    A.Tier: lambda e: ("model", [e.name.value], None, False),
    A.Action: lambda e: ("action", [e.name], list(e.entries), True),
    A.UsesActions: lambda e: ("actions", [e.name.value], None, False),
    A.Show: _one("show"), A.Hide: _one("hide"),
    # a model's settings: always a block, one setting a line (they read as a table of settings)
    A.Model: lambda e: ("model", [e.tier.value, "default", e.default], list(e.params) or None, bool(e.params)),
    A.History: lambda e: ("history", [e.value, "steps"], None, False),
    A.Summarize: lambda e: ("summarize", ["observations", "over", e.value, "chars"], None, False),
    A.Retries: lambda e: ("retries", [e.value, "on", "format", "error"], None, False),
    A.Prompt: _one("prompt"), A.FormatError: _one("format_error"),
    A.Respond: lambda e: ("respond", [e.format.value], respond_units(e), True),
    A.Tool: _one("tool"),
    A.Search: lambda e: ("search", [e.policy.value], list(e.items), True),
    A.DropSection: lambda e: ("drop", ["section", e.name], None, False),
    A.DropAction: lambda e: ("drop", ["action", e.name], None, False),
    A.Prompts: lambda e: ("prompts", [], list(e.items), True),
    A.Hook: lambda e: (e.time.value, [e.name.value], None, False),
    A.Command: _one("command"), A.Submits: _one("submits"), A.NoDeps: _one("no_deps"), A.Dialect: _one("dialect"),
    A.Env: lambda e: ("env", [], list(e.items), False),
    A.ExpTasks: _one("tasks"),
    A.ExpTasksCategory: lambda e: ("tasks", ["category", e.name.value], None, False),
    A.ExpAgents: _one("agents"),
    A.ExpModels: lambda e: ("models", ([e.tier.value] if e.tier else []) + [e.value], None, False),
    A.ExpRuns: _one("runs"), A.ExpData: _one("data"), A.ExpRetries: _one("retries"),
    A.ExpOverride: lambda e: ("override", (["agent"] if e.agent else []) + [e.name.value], list(e.entries), True),
}


def respond_units(e: A.Respond) -> list:
    """A reply block's sections and settings, in source order."""
    return sorted([*e.sections, *e.settings], key=lambda u: (u.span.line, u.span.column))


def print_module(module: A.Module, cmap: CommentMap) -> str:
    """The canonical .mlab text of `module` with the comments `cmap` placed."""
    return MlabPrinter(cmap).module(module)
