"""Turn what a user hands `mlxc.compile` into an MLIR module in our context.

Accepted: MLIR text (pretty or generic), MLIR bytecode, a StableHLO portable
artifact (VHLO bytecode, e.g. `jax.export(...).mlir_module_serialized`), a path to
any of these, or an `ir.Module`/`ir.Operation` built with the same bindings.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Union

from .._mlir import ir, stablehlo
from ..errors import CompileError, Diagnostic
from . import locations, sharding

BYTECODE_MAGIC = b"ML\xefR"
_MLIR_SUFFIXES = (".mlir", ".mlirbc", ".bc", ".stablehlo", ".vhlo", ".pb")

Source = Union[str, bytes, bytearray, memoryview, os.PathLike, ir.Module, ir.Operation]


@dataclass
class Loaded:
    module: ir.Module
    name: str  # file name used in diagnostics
    kind: str  # "text", "bytecode", "artifact", "module"


def _bytecode_producer(data: bytes) -> str:
    """The producer string of an MLIR bytecode file (after magic and version)."""
    i = len(BYTECODE_MAGIC)
    while i < len(data) and data[i] & 0x80:  # skip the varint version
        i += 1
    i += 1
    end = data.find(b"\0", i)
    return data[i:end].decode("latin-1") if end > 0 else ""


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and len(text) < 4096 and (
        text.endswith(_MLIR_SUFFIXES) or os.sep in text or os.path.exists(text))


def _raise_parse_error(err: "ir.MLIRError", name: str, what: str) -> None:
    diags = []
    for d in err.error_diagnostics:
        where = _plain_position(d.location, name)
        notes = [Diagnostic("note", _plain_position(n.location, name), n.message) for n in d.notes]
        diags.append(Diagnostic("error", where, d.message, notes))
    if not diags:
        diags = [Diagnostic("error", name, str(err))]
    raise CompileError(f"{name}: cannot parse {what}", diags) from None


def _plain_position(loc, name: str) -> str:
    from ..errors import describe_location

    where = describe_location(loc)
    if where.startswith("-:"):
        where = name + where[1:]
    elif where == "<unknown>":
        where = name
    return where


def parse_text(text: str, name: str) -> ir.Module:
    if not text.strip():
        raise CompileError(f"{name}: the source is empty", [Diagnostic("error", name, "empty source")])
    if sharding.has_sharding(text):
        text = sharding.strip_sharding(text)
    annotated = locations.has_locations(text)
    # Parse the unannotated text first: its verifier errors then point into the text.
    plain = locations.strip_locations(text) if annotated else text
    try:
        positioned = ir.Module.parse(plain)
    except ir.MLIRError as e:
        _raise_parse_error(e, name, "MLIR text")
    if not annotated:
        locations.rename_buffer(positioned, name)
        return positioned
    try:
        module = ir.Module.parse(text)
    except ir.MLIRError as e:  # an annotation itself is malformed
        _raise_parse_error(e, name, "MLIR text")
    locations.fuse_positions(module, positioned, name)
    return module


def _parse_bytes(data: bytes, name: str) -> tuple[ir.Module, str]:
    if data.startswith(BYTECODE_MAGIC):
        producer = _bytecode_producer(data)
        if producer.startswith("StableHLO"):
            shardy = b"sdy" in data
            if shardy:
                data = sharding.strip_sharding_bytecode(data)
            try:
                module = stablehlo.deserialize_portable_artifact(ir.Context.current, data)
                if shardy:
                    sharding.drop_sharding_attributes(module)
                return module, "artifact"
            except Exception as e:  # the binding raises a bare exception type
                notes = []
                if shardy:
                    # Shardy ops (sdy.mesh, from explicit shardings) are only readable in text.
                    notes = [Diagnostic("note", name, "if the program has Shardy (sdy) ops, which "
                                        "mlxc reads only from text: compile exported.mlir_module()")]
                raise CompileError(
                    f"{name}: cannot read StableHLO portable artifact ({producer})",
                    [Diagnostic("error", name, f"invalid portable artifact: {e}", notes)]) from None
        try:
            return ir.Module.parse(data), "bytecode"
        except ir.MLIRError as e:
            _raise_parse_error(e, name, "MLIR bytecode")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(
            f"{name}: not MLIR text, MLIR bytecode or a StableHLO artifact",
            [Diagnostic("error", name, f"byte {e.start} is not UTF-8 and there is no bytecode header")]
        ) from None
    return parse_text(text, name), "text"


def load(source: Source, *, name: str | None = None) -> Loaded:
    """Parse and verify `source` in the current context."""
    if isinstance(source, (ir.Module, ir.Operation)) or hasattr(source, "operation"):
        op = source.operation if hasattr(source, "operation") else source
        if op.name != "builtin.module":
            raise TypeError(f"mlxc.compile: expected a builtin.module, got an '{op.name}' op")
        buf = io.BytesIO()
        op.write_bytecode(buf)  # moves the program into our context; the caller's stays intact
        module, _ = _parse_bytes(buf.getvalue(), name or "<module>")
        return Loaded(module, name or "<module>", "module")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise CompileError(f"{path}: no such file",
                               [Diagnostic("error", path, "no such file (and not MLIR text)")])
        with open(path, "rb") as f:
            data = f.read()
        module, kind = _parse_bytes(data, name or path)
        return Loaded(module, name or path, kind)
    if isinstance(source, str):
        nm = name or "<string>"
        return Loaded(parse_text(source, nm), nm, "text")
    if isinstance(source, (bytes, bytearray, memoryview)):
        nm = name or "<bytes>"
        module, kind = _parse_bytes(bytes(source), nm)
        return Loaded(module, nm, kind)
    raise TypeError(
        "mlxc.compile: source must be MLIR text, bytecode, a StableHLO artifact, a path "
        f"or an MLIR module, not {type(source).__name__}")
