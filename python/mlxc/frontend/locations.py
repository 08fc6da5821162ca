"""Give every op of a text program its position in that text.

Exporters such as JAX annotate each op with `loc(...)` naming the Python line that
made it. MLIR then reports errors at that Python line, and the `.mlir` text a user
holds has no say. mlxc wants both: the text position (`model.mlir:12:5`, so a user
can open the file at the op) and the exporter's origin (`jit(f)/dot_general at
train.py:44`). We parse the text once with every `loc(...)` removed, which gives
text positions, once as written, and fuse the two per op.
"""

from __future__ import annotations

import re

from .._mlir import ir

# Tokens that matter when removing locations: string literals and comments (skipped
# whole, so a `loc(` inside them is left alone; a large hex constant is one string, so
# the scan runs at regex speed), `loc(` not preceded by an identifier character, and
# location alias definitions (`#loc3 = loc(...)`) at the start of a line.
_TOKENS = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|//[^\n]*"
    r"|(?P<alias>^[ \t]*#[\w.$-]*[ \t]*=[ \t]*loc\()"
    r"|(?P<loc>(?<![\w$.\-#@%^!])loc\()",
    re.M)


def _skip_string(text: str, i: int) -> int:
    """Index just past the string literal that starts at text[i] == '"'."""
    i += 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return n


_BRACKETS = {"<": ">", "(": ")", "[": "]", "{": "}"}


def skip_group(text: str, i: int, brackets: dict = _BRACKETS) -> int:
    """Index just past the bracketed group that starts at text[i] (an opener in
    `brackets`), strings skipped whole; `->` inside it is an arrow, not a closing `>`."""
    stack: list[str] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c in brackets:
            stack.append(brackets[c])
        elif c == ">" and i > 0 and text[i - 1] == "-":
            pass
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return n


def _blank(chunk: str) -> str:
    """Spaces for `chunk`, keeping its newlines so line numbers do not move."""
    return "".join("\n" if c == "\n" else " " for c in chunk)


def strip_locations(text: str) -> str:
    """`text` without `loc(...)` annotations or location aliases, lines kept in place."""
    out: list[str] = []
    pos = 0
    for m in _TOKENS.finditer(text):
        if m.start() < pos:  # inside a location already removed
            continue
        kind = m.lastgroup
        if kind is None:  # a string or a comment: keep as is
            continue
        start = m.start("alias") if kind == "alias" else m.start()
        start += len(m.group(kind)) - len(m.group(kind).lstrip(" \t"))
        end = skip_group(text, m.end() - 1, {"(": ")"})
        out.append(text[pos:start])
        out.append(_blank(text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def has_locations(text: str) -> bool:
    return "loc(" in text


def fuse_positions(module: ir.Module, positioned: ir.Module, source_name: str) -> None:
    """Give each op of `module` a fused location: its text position (from `positioned`,
    the same program parsed without annotations) first, then the location it had."""
    ops_a: list = []
    ops_b: list = []

    def collect(into):
        def visit(op):
            into.append(op)
            return ir.WalkResult.ADVANCE
        return visit

    module.operation.walk(collect(ops_a))
    positioned.operation.walk(collect(ops_b))
    if len(ops_a) != len(ops_b):  # cannot happen for well-formed text; keep what we have
        return
    for a, b in zip(ops_a, ops_b):
        pos = b.location
        if isinstance(pos, ir.FileLineColLoc):
            pos = ir.Location.file(source_name, pos.start_line, pos.start_col)
        else:
            continue
        original = a.location
        # An op written without loc(...) got the parser's own position ("-"): no origin.
        if isinstance(original, ir.UnknownLoc) or (
                isinstance(original, ir.FileLineColLoc) and original.filename == "-"):
            a.location = pos
        else:
            a.location = ir.Location.fused([pos, original])


def rename_buffer(module: ir.Module, source_name: str) -> None:
    """Replace the parser's buffer name `-` by `source_name` in plain file locations."""
    def visit(op):
        loc = op.location
        if isinstance(loc, ir.FileLineColLoc) and loc.filename == "-":
            op.location = ir.Location.file(source_name, loc.start_line, loc.start_col)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
