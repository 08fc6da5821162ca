"""Refuse programs whose strings are not valid UTF-8, before Python reads one of them.

MLIR strings are bytes: `loc("x\\F8s")`, `"\\F8"` attributes and names, or any string
of a damaged bytecode file, may hold a byte sequence that is not UTF-8. The bindings
turn every string they hand to Python into a `str`, and one that is not UTF-8 raises
a bare `RuntimeError`, or, inside a walk callback, terminates the process. mlxc reads
locations, names and attributes everywhere, so such a program is refused once, as it
is read: from the text (only string literals with `\\XX` escapes of bytes from 0x80
up can spell one) or from the module's printed form, where the printer writes every
such byte as such an escape.
"""

from __future__ import annotations

import re
from typing import Optional

from ..errors import CompileError, Diagnostic

# String literals, and comments (skipped: a quote in a comment starts no string).
_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|//[^\n]*')
# An escape of a non-ASCII byte (\80 to \FF).
_HIGH_ESCAPE = re.compile(r"\\[89a-fA-F][0-9a-fA-F]")
_SIMPLE_ESCAPES = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}


def _literal_bytes(body: str) -> bytes:
    """The bytes an MLIR string literal's body (without its quotes) stands for."""
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            nxt = body[i + 1]
            if nxt in _SIMPLE_ESCAPES:
                out += _SIMPLE_ESCAPES[nxt]
                i += 2
                continue
            pair = body[i + 1:i + 3]
            if len(pair) == 2 and all(ch in "0123456789abcdefABCDEF" for ch in pair):
                out.append(int(pair, 16))
                i += 3
                continue
        out += c.encode("utf-8", "surrogatepass")
        i += 1
    return bytes(out)


def first_invalid(text: str) -> Optional[tuple[int, str]]:
    """(offset, literal) of the first string literal in MLIR text whose bytes are not UTF-8."""
    if not _HIGH_ESCAPE.search(text):  # the common case: one scan at regex speed
        return None
    for m in _LITERAL.finditer(text):
        literal = m.group()
        if literal[0] == '"' and _HIGH_ESCAPE.search(literal):
            try:
                _literal_bytes(literal[1:-1]).decode("utf-8")
            except UnicodeDecodeError:
                return m.start(), literal
    return None


def _shown(literal: str, limit: int = 60) -> str:
    return literal if len(literal) <= limit else literal[:limit - 4] + '..."'


def check_text(text: str, name: str) -> None:
    """Raise CompileError at the first string literal of `text` that is not UTF-8."""
    found = first_invalid(text)
    if found is None:
        return
    offset, literal = found
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    where = f"{name}:{line}:{col}"
    raise CompileError(f"{where}: string {_shown(literal)} is not valid UTF-8", [Diagnostic(
        "error", where, f"string {_shown(literal)} is not valid UTF-8 (mlxc reads names, "
        "attributes and locations as UTF-8 text)")])


def check_module(module, name: str) -> None:
    """Raise CompileError when a string anywhere in `module` (an attribute, a name, a
    location) is not UTF-8. Costs one printing of the module, large constants elided."""
    text = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True,
                                    large_elements_limit=16, assume_verified=True)
    found = first_invalid(text)
    if found is not None:
        literal = found[1]
        raise CompileError(f"{name}: string {_shown(literal)} is not valid UTF-8", [Diagnostic(
            "error", name, f"the program holds the string {_shown(literal)}, which is not valid "
            "UTF-8 (mlxc reads names, attributes and locations as UTF-8 text)")])
