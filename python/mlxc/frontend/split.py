"""Split a file into its `// -----` parts, as mlir-opt's --split-input-file does."""

from __future__ import annotations

import re

# Like mlir-opt, any line holding the marker is one: "// // -----" splits too.
MARKER = re.compile(r"^[^\n]*// -----[^\n]*$", re.M)


def split_input(text: str) -> list[str]:
    """The parts of `text`, each padded with newlines so that its lines keep the line
    numbers they have in the whole file (diagnostics and expected-* comments agree)."""
    parts, start = [], 0
    for m in MARKER.finditer(text):
        parts.append("\n" * text.count("\n", 0, start) + text[start:m.start()])
        start = m.end()
    parts.append("\n" * text.count("\n", 0, start) + text[start:])
    return parts
