"""Errors and diagnostics: how mlxc tells a user what is wrong and where.

Every compile failure surfaces as `CompileError`, whose message lists diagnostics in
the `file:line:col: error: ...` form that compilers and editors understand. The
location of a diagnostic is the best source position we can find in an MLIR
location (a file position inside a fused, named or call-site location).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from ._mlir import ir


def downcast(loc):
    """The concrete location class (diagnostics hand out plain `ir.Location`s)."""
    if type(loc) is ir.Location:
        try:
            return ir.Location.from_attr(loc.attr)
        except Exception:
            return loc
    return loc


def _file_positions(loc) -> list[str]:
    """Every `file:line:col` inside `loc`, outermost first."""
    loc = downcast(loc)
    if isinstance(loc, ir.FileLineColLoc):
        return [f"{loc.filename}:{loc.start_line}:{loc.start_col}"]
    if isinstance(loc, ir.NameLoc):
        return _file_positions(loc.child_loc)
    if isinstance(loc, ir.CallSiteLoc):
        return _file_positions(loc.callee) + _file_positions(loc.caller)
    if isinstance(loc, ir.FusedLoc):
        out: list[str] = []
        for child in loc.locations:
            out += _file_positions(child)
        return out
    return []


def _names(loc) -> list[str]:
    loc = downcast(loc)
    if isinstance(loc, ir.NameLoc):
        return [loc.name_str] + _names(loc.child_loc)
    if isinstance(loc, ir.FusedLoc):
        return [n for child in loc.locations for n in _names(child)]
    if isinstance(loc, ir.CallSiteLoc):
        return _names(loc.callee)
    return []


def describe_location(loc) -> str:
    """A location as `file:line:col`, or the best we have (`<unknown>` when nothing)."""
    positions = _file_positions(loc)
    if positions:
        return positions[0]
    names = _names(loc)
    return names[0] if names else "<unknown>"


def _origin_parts(loc, top: bool = True) -> tuple[list[str], list[str]]:
    """(names, file positions) of what an exporter recorded, outermost caller first.

    A fused location whose first part is a file position is one mlxc made: the text
    position, then the exporter's location. Only the latter counts as the origin.
    """
    loc = downcast(loc)
    if isinstance(loc, ir.FusedLoc):
        children = [downcast(c) for c in loc.locations]
        if children and isinstance(children[0], ir.FileLineColLoc) and len(children) > 1:
            children = children[1:]
        names: list[str] = []
        positions: list[str] = []
        for c in children:
            n, p = _origin_parts(c, False)
            names += n
            positions += p
        return names, positions
    if isinstance(loc, ir.CallSiteLoc):
        cn, cp = _origin_parts(loc.caller, False)
        n, p = _origin_parts(loc.callee, False)
        return cn + n, p + cp
    if isinstance(loc, ir.NameLoc):
        # The child of an exporter's name is its own call stack (JAX: the Python
        # frames); only its file positions are of interest, innermost first.
        return [loc.name_str], _file_positions(loc.child_loc)
    if isinstance(loc, ir.FileLineColLoc) and not top:
        return [], [f"{loc.filename}:{loc.start_line}:{loc.start_col}"]
    return [], []


def source_origin(loc) -> Optional[str]:
    """Where the program's author wrote the op (e.g. the JAX Python line), if recorded.

    mlxc fuses the text position of an op with the location the exporter wrote
    (`loc("jit(f)/dot_general"(...))`); this returns the latter as `name at file:line`.
    """
    names, positions = _origin_parts(loc)
    parts = []
    if names:
        parts.append(" / ".join(dict.fromkeys(names)))
    if positions:
        parts.append(positions[0])
    return " at ".join(parts) if parts else None


@dataclass
class Diagnostic:
    severity: str  # "error", "warning", "note", "remark"
    location: str
    message: str
    notes: list["Diagnostic"] = field(default_factory=list)

    def format(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        for note in self.notes:
            lines.append(note.format())
        return "\n".join(lines)


_SEVERITY = {
    "DiagnosticSeverity.ERROR": "error",
    "DiagnosticSeverity.WARNING": "warning",
    "DiagnosticSeverity.NOTE": "note",
    "DiagnosticSeverity.REMARK": "remark",
}


def diagnostic_from_mlir(diag, severity: Optional[str] = None) -> Diagnostic:
    """Convert an MLIR diagnostic (from MLIRError or a handler) to ours."""
    sev = severity or _SEVERITY.get(str(diag.severity), "error")
    notes = [diagnostic_from_mlir(n, "note") for n in diag.notes]
    message = diag.message
    origin = source_origin(diag.location)
    if origin and sev == "error":
        notes.insert(0, Diagnostic("note", describe_location(diag.location),
                                   f"the op comes from {origin}"))
    return Diagnostic(sev, describe_location(diag.location), message, notes)


class CompileError(Exception):
    """mlxc could not compile a program: malformed IR, an unsupported op, a failing pass.

    `diagnostics` holds the structured `Diagnostic`s; `str(error)` prints them as
    `file:line:col: error: ...` lines. `reproducer` is the `mlxc-opt` command that
    replays the failure, when a pass failed.
    """

    def __init__(self, summary: str, diagnostics: Sequence[Diagnostic] = (),
                 reproducer: Optional[str] = None):
        self.summary = summary
        self.diagnostics = list(diagnostics)
        self.reproducer = reproducer
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [d.format() for d in self.diagnostics]
        if not parts or self.summary not in parts[0]:
            parts.insert(0, self.summary)
        if self.reproducer:
            parts.append(f"reproduce with: {self.reproducer}")
        return "\n".join(parts)

    @classmethod
    def from_mlir(cls, summary: str, error: "ir.MLIRError",
                  reproducer: Optional[str] = None) -> "CompileError":
        diags = [diagnostic_from_mlir(d) for d in error.error_diagnostics]
        if not diags:
            diags = [Diagnostic("error", "<unknown>", str(error))]
        return cls(summary, diags, reproducer)

    @classmethod
    def at(cls, op_or_loc, message: str, note: Optional[str] = None) -> "CompileError":
        """An error about one op (or location), quoting the op when given one."""
        loc = op_or_loc.location if hasattr(op_or_loc, "location") else op_or_loc
        where = describe_location(loc)
        notes = []
        origin = source_origin(loc)
        if origin:
            notes.append(Diagnostic("note", where, f"the op comes from {origin}"))
        if hasattr(op_or_loc, "location"):
            notes.append(Diagnostic("note", where, "offending op: " + op_summary(op_or_loc)))
        if note:
            notes.append(Diagnostic("note", where, note))
        return cls(message, [Diagnostic("error", where, message, notes)])


def op_summary(op, limit: int = 300) -> str:
    """One line of an op's generic form, regions elided: enough to recognise it."""
    op = op.operation if hasattr(op, "operation") else op
    try:
        text = op.get_asm(large_elements_limit=4, skip_regions=True)
    except Exception:  # an op that fails to print still deserves a name
        return op.name
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class DynamicShapeError(CompileError):
    """A shape stayed dynamic after refinement (mlxc compiles static shapes only)."""
