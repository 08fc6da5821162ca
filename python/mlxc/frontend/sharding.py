"""Remove Shardy (`sdy`) sharding metadata from program text.

JAX exports annotate programs with Shardy attributes: `sdy.sharding_rule` on custom
calls (every LAPACK call on CPU has one), `sdy.sharding` on arguments and results, and
`sdy.mesh` ops naming the device mesh. On one device they say nothing about what the
program computes, and the bindings have no `sdy` dialect to parse them with, so they
are blanked out before parsing: spaces replace them, newlines stay, and every other
op keeps its line and column.
"""

from __future__ import annotations

import re

from .._mlir import ir
from .locations import _blank, skip_group

# Strings and comments (skipped whole: an `sdy` inside them is not metadata), an
# attribute entry `sdy.NAME = #sdy...`, and an `sdy.mesh` op at the start of a line.
_TOKENS = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|//[^\n]*"
    r"|(?P<attr>(?<![\w$.\-#@%^!])sdy\.[\w.$]+[ \t]*=[ \t]*#sdy[\w.$]*)"
    r"|(?P<mesh>^[ \t]*sdy\.mesh[ \t]+@)",
    re.M)

def has_sharding(text: str) -> bool:
    return "sdy." in text


def strip_sharding(text: str) -> str:
    """`text` without `sdy` attributes and `sdy.mesh` ops, lines and columns kept."""
    spans: list[tuple[int, int]] = []
    for m in _TOKENS.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue
        kind = m.lastgroup
        if kind == "attr":
            start, end = m.start(), m.end()
            if end < len(text) and text[end] == "<":
                end = skip_group(text, end)
            start, end = _with_comma(text, start, end)
            spans.append((start, end))
        elif kind == "mesh":
            # The whole line: the op, its attributes and its loc(...).
            start = m.start() + len(m.group()) - len(m.group().lstrip(" \t"))
            end = text.find("\n", start)
            spans.append((start, len(text) if end < 0 else end))
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(_blank(text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _with_comma(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen an attribute entry's span to the comma that separates it from the others
    of its dictionary: the one before it, or else the one after it."""
    before = len(text[:start].rstrip())
    if before > 0 and text[before - 1] == ",":
        return before - 1, end
    after = end + len(text[end:]) - len(text[end:].lstrip())
    if after < len(text) and text[after] == ",":
        return start, after + 1
    return start, end


# --- bytecode -------------------------------------------------------------------------
#
# A portable artifact written with Shardy loaded encodes the `sdy` attributes in Shardy's
# own binary form, which nothing but Shardy can read: the reader stops with "dialect
# 'sdy' does not implement the bytecode interface" before mlxc sees the program. We
# rewrite those attribute entries as the text `unit` (entries may be text, which the
# reader parses), so that reading succeeds and `drop_sharding_attributes` removes them.
# Only the attribute sections change; the IR section refers to attributes by index.

_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET = 0, 1, 2, 3
_DIALECT_VERSIONING = 1  # bytecode version from which dialects may carry a version
_PLACEHOLDER = b"unit\0"


class _Reader:
    def __init__(self, data: bytes, pos: int = 0, end: int | None = None):
        self.data, self.pos = data, pos
        self.end = len(data) if end is None else end

    def done(self) -> bool:
        return self.pos >= self.end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise ValueError("truncated bytecode")
        self.pos += 1
        return self.data[self.pos - 1]

    def bytes(self, n: int) -> bytes:
        if self.pos + n > self.end:
            raise ValueError("truncated bytecode")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def varint(self) -> int:
        first = self.byte()
        if first & 1:
            return first >> 1
        if first == 0:
            return int.from_bytes(self.bytes(8), "little")
        extra = (first & -first).bit_length() - 1  # trailing zeros: the extra bytes
        value = int.from_bytes(bytes([first]) + self.bytes(extra), "little")
        return value >> (extra + 1)

    def section(self) -> tuple[int, int, bytes]:
        """(id, alignment or 0, data) of the section starting here."""
        head = self.byte()
        length = self.varint()
        alignment = 0
        if head & 0x80:
            alignment = self.varint()
            while self.pos % alignment:  # padding (0xCB), relative to the buffer start
                self.byte()
        return head & 0x7F, alignment, self.bytes(length)


def _varint(value: int) -> bytes:
    for extra in range(8):
        if value < 1 << (7 * (extra + 1)):
            return ((value << (extra + 1)) | (1 << extra)).to_bytes(extra + 1, "little")
    return b"\0" + value.to_bytes(8, "little")


def _section(out: bytearray, sid: int, alignment: int, data: bytes) -> None:
    out.append(sid | (0x80 if alignment else 0))
    out += _varint(len(data))
    if alignment:
        out += _varint(alignment)
        while len(out) % alignment:
            out.append(0xCB)
    out += data


def strip_sharding_bytecode(data: bytes) -> bytes:
    """`data` (MLIR bytecode) with every custom-encoded `sdy` attribute turned into the
    text `unit`; `data` itself when it has none or cannot be read this way."""
    try:
        return _strip_bytecode(data)
    except (ValueError, IndexError, ZeroDivisionError):
        return data  # let the real reader report what is wrong


def _strip_bytecode(data: bytes) -> bytes:
    r = _Reader(data, 4)  # after the magic number
    version = r.varint()
    producer_end = data.index(b"\0", r.pos)
    r.pos = producer_end + 1
    header = data[:r.pos]
    sections = []
    while not r.done():
        sections.append(list(r.section()))
    by_id = {s[0]: s for s in sections}
    if not {_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET} <= set(by_id):
        return data

    strings = _strings(by_id[_STRING][2])
    dialects = _dialect_names(by_id[_DIALECT][2], strings, version)
    if "sdy" not in dialects:
        return data

    offsets = _Reader(by_id[_ATTR_TYPE_OFFSET][2])
    counts = [offsets.varint(), offsets.varint()]  # attributes, types
    blob = by_id[_ATTR_TYPE][2]
    new_offsets, new_blob = bytearray(_varint(counts[0]) + _varint(counts[1])), bytearray()
    position, changed = 0, False
    for kind, count in enumerate(counts):
        seen = 0
        while seen < count:
            dialect = offsets.varint()
            entries = offsets.varint()
            new_offsets += _varint(dialect) + _varint(entries)
            for _ in range(entries):
                word = offsets.varint()
                size, custom = word >> 1, word & 1
                entry = blob[position:position + size]
                position += size
                if kind == 0 and custom and dialects[dialect] == "sdy":
                    entry, custom, changed = _PLACEHOLDER, 0, True
                new_offsets += _varint(len(entry) << 1 | custom)
                new_blob += entry
            seen += entries
    if not changed or not offsets.done():
        return data
    by_id[_ATTR_TYPE][2] = bytes(new_blob)
    by_id[_ATTR_TYPE_OFFSET][2] = bytes(new_offsets)
    out = bytearray(header)
    for sid, alignment, payload in sections:
        _section(out, sid, alignment, payload)
    return bytes(out)


def _strings(section: bytes) -> list[str]:
    r = _Reader(section)
    count = r.varint()
    sizes = [r.varint() for _ in range(count)][::-1]  # stored last string first
    out, end = [], len(section)
    for size in reversed(sizes):
        out.append(section[end - size:end - 1].decode("utf-8", "replace"))
        end -= size
    return out[::-1]


def _dialect_names(section: bytes, strings: list[str], version: int) -> list[str]:
    r = _Reader(section)
    names = []
    for _ in range(r.varint()):
        word = r.varint()
        if version < _DIALECT_VERSIONING:
            names.append(strings[word])
            continue
        names.append(strings[word >> 1])
        if word & 1:
            r.section()  # the dialect's version
    return names


def drop_sharding_attributes(module) -> None:
    """Remove the `sdy.*` attributes of every op (the placeholders of the bytecode path)."""
    def visit(op):
        attrs = op.attributes
        for name in [attrs[i].name for i in range(len(attrs)) if attrs[i].name.startswith("sdy.")]:
            del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
