"""`--verify-diagnostics`: check emitted diagnostics against `expected-*` comments.

Same conventions as mlir-opt:

    // expected-error @below {{cannot lower}}
    // expected-warning @+2 {{...}}     (relative line)
    %0 = "foo.op"() : () -> i32  // expected-error {{on this line}}

A diagnostic matches when severity and line agree and the expected text is a
substring of its message. Every expectation must be met and every error, warning
and remark must be expected. Notes are checked only in files that expect some note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ..errors import Diagnostic

_EXPECT = re.compile(
    r"expected-(error|warning|note|remark)\s*(@(?:[+-]\d+|below|above|\d+))?\s*(?:\*\s*)?\{\{(.*?)\}\}")


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    written_at: int
    matched: bool = False


def parse_expectations(text: str, first_line: int = 1) -> list[Expectation]:
    out: list[Expectation] = []
    lines = text.split("\n")
    for idx, line in enumerate(lines):
        lineno = first_line + idx
        for m in _EXPECT.finditer(line):
            severity, where, message = m.group(1), m.group(2), m.group(3)
            target = lineno
            if where:
                spec = where[1:]
                if spec == "below":
                    target = _next_code_line(lines, idx, +1) + first_line
                elif spec == "above":
                    target = _next_code_line(lines, idx, -1) + first_line
                elif spec[0] in "+-":
                    target = lineno + int(spec)
                else:
                    target = int(spec)
            out.append(Expectation(severity, target, message, lineno))
    return out


def _next_code_line(lines: list[str], idx: int, step: int) -> int:
    """The nearest line in direction `step` that is not only an expected-* comment."""
    j = idx + step
    while 0 <= j < len(lines):
        stripped = lines[j].strip()
        if stripped and not (stripped.startswith("//") and "expected-" in stripped):
            return j
        j += step
    return idx + step


def _line_of(location: str, filename: str) -> Optional[int]:
    parts = location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        if parts[0] in (filename, "-", "<stdin>") or filename in ("-", "<stdin>"):
            return int(parts[1])
    return None


def flatten(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for d in diags:
        out.append(d)
        out += flatten(d.notes)
    return out


def verify(diags: Iterable[Diagnostic], expectations: list[Expectation],
           filename: str) -> list[str]:
    """Problems found, as `file:line: error: ...` strings; empty when all is as expected."""
    check_notes = any(e.severity == "note" for e in expectations)
    problems: list[str] = []
    for d in flatten(diags):
        if d.severity == "note" and not check_notes:
            continue
        line = _line_of(d.location, filename)
        match = next((e for e in expectations if not e.matched and e.severity == d.severity
                      and e.line == line and e.text in d.message), None)
        if match is None:
            match = next((e for e in expectations if e.severity == d.severity
                          and e.line == line and e.text in d.message), None)
        if match is not None:
            match.matched = True
        else:
            problems.append(f"{d.location}: error: unexpected {d.severity}: {d.message}")
    for e in expectations:
        if not e.matched:
            problems.append(f"{filename}:{e.written_at}: error: expected {e.severity} "
                            f"\"{e.text}\" was not produced")
    return problems
