"""Parse MLIR textual pass pipelines into our `Pass` list.

Our Python passes are not known to MLIR's own pipeline parser, so mlxc parses the
text itself: `builtin.module(inline, func.func(cse, canonicalize{max-iterations=2}))`
becomes three `Pass` values, the last two anchored on `func.func`.
"""

from __future__ import annotations

from .model import Pass


class PipelineSyntaxError(ValueError):
    pass


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def error(self, msg: str) -> PipelineSyntaxError:
        pointer = " " * self.i + "^"
        return PipelineSyntaxError(f"invalid pass pipeline at column {self.i + 1}: {msg}\n"
                                   f"  {self.text}\n  {pointer}")

    def skip_ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.i] if self.i < len(self.text) else ""

    def name(self) -> str:
        self.skip_ws()
        start = self.i
        while self.i < len(self.text) and (self.text[self.i].isalnum() or self.text[self.i] in "-_."):
            self.i += 1
        if start == self.i:
            raise self.error("expected a pass or op name")
        return self.text[start:self.i]

    def braced(self) -> str:
        """The raw text between matching braces, the opening brace at self.i."""
        depth = 0
        start = self.i
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in "'\"":
                end = self.text.find(c, self.i + 1)
                if end < 0:
                    raise self.error("unterminated quoted option value")
                self.i = end + 1
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return self.text[start + 1:self.i - 1]
            self.i += 1
        self.i = start
        raise self.error("unbalanced '{' in pass options")

    def elements(self, anchor: tuple[str, ...]) -> list[Pass]:
        out: list[Pass] = []
        while True:
            name = self.name()
            if self.peek() == "(":  # an op anchor: a nested pipeline
                self.i += 1
                if self.peek() == ")":
                    self.i += 1
                else:
                    out += self.elements(anchor + (name,))
                    if self.peek() != ")":
                        raise self.error("expected ')'")
                    self.i += 1
            else:
                options: tuple = ()
                if self.peek() == "{":
                    options = split_options(self.braced())
                out.append(Pass(name, options, anchor))
            if self.peek() != ",":
                return out
            self.i += 1


def split_options(raw: str) -> tuple[tuple[str, str | None], ...]:
    """`a=1 b={x y} c` -> (("a", "1"), ("b", "{x y}"), ("c", None))."""
    out: list[tuple[str, str | None]] = []
    i = 0
    n = len(raw)
    while i < n:
        while i < n and raw[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        while i < n and not raw[i].isspace() and raw[i] != "=":
            i += 1
        key = raw[start:i]
        if i < n and raw[i] == "=":
            i += 1
            vstart = i
            depth = 0
            while i < n and (depth > 0 or not raw[i].isspace()):
                c = raw[i]
                if c in "'\"":
                    end = raw.find(c, i + 1)
                    i = n if end < 0 else end + 1
                    continue
                if c in "{([":
                    depth += 1
                elif c in "})]":
                    depth -= 1
                i += 1
            out.append((key, raw[vstart:i]))
        else:
            out.append((key, None))
    return tuple(out)


def parse_pipeline(text: str) -> list[Pass]:
    """Passes of a textual pipeline. A bare list (`cse,canonicalize`) runs on the module."""
    p = _Parser(text.strip())
    if not p.text:
        return []
    start = p.i
    head = p.name()
    if head == "builtin.module" and p.peek() == "(":
        p.i += 1
        passes = [] if p.peek() == ")" else p.elements(())
        if p.peek() != ")":
            raise p.error("expected ')'")
        p.i += 1
    else:
        p.i = start
        passes = p.elements(())
    if p.peek():
        raise p.error("unexpected text after the pipeline")
    return passes
