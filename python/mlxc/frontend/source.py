"""Turn what a user hands `mlxc.compile` into an MLIR module in our context.

Accepted: MLIR text (pretty or generic), MLIR bytecode, a StableHLO portable
artifact (VHLO bytecode, e.g. `jax.export(...).mlir_module_serialized`), a path to
any of these or to an ONNX model (`.onnx`, onnx_import.py), or an
`ir.Module`/`ir.Operation` built with the same bindings.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from typing import Union

from .._mlir import ir, stablehlo
from ..errors import CompileError, Diagnostic
from ..runtime import files
from . import isolated_parse, locations, sharding, utf8

BYTECODE_MAGIC = b"ML\xefR"
_MLIR_SUFFIXES = (".mlir", ".mlirbc", ".bc", ".stablehlo", ".vhlo", ".pb", ".onnx")

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


_SURROGATE = re.compile("[\ud800-\udfff]")


def _parse_str(text: str, name: str) -> ir.Module:
    try:
        return ir.Module.parse(text)
    except ir.MLIRError as e:
        _raise_parse_error(e, name, "MLIR text")
    except RuntimeError as e:  # an error message that is not UTF-8
        _raise_unreadable(name, "MLIR text", e)
    except TypeError:  # the bindings cannot encode the str as UTF-8
        m = _SURROGATE.search(text)
        if m is None:
            raise
        line = text.count("\n", 0, m.start()) + 1
        where = f"{name}:{line}:{m.start() - text.rfind(chr(10), 0, m.start())}"
        raise CompileError(f"{where}: the text holds a lone surrogate ({m.group()!a}), which "
                           "UTF-8 cannot encode", [Diagnostic(
                               "error", where, f"character {m.group()!a} is a lone surrogate: "
                               "not text that UTF-8 can encode")]) from None


def display_name(name: str) -> str:
    """`name` as MLIR can hold it: a file name's undecodable bytes, which Python keeps as
    lone surrogates, become `\\xNN` (a location naming them aborted the process)."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no file name's byte makes
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def parse_text(text: str, name: str) -> ir.Module:
    name = display_name(name)
    if not text.strip():
        raise CompileError(f"{name}: the source is empty", [Diagnostic("error", name, "empty source")])
    utf8.check_text(text, name)
    if sharding.has_sharding(text):
        text = sharding.strip_sharding(text)
    annotated = locations.has_locations(text)
    # Parse the unannotated text first: its verifier errors then point into the text.
    plain = locations.strip_locations(text) if annotated else text
    positioned = _parse_str(plain, name)
    if not annotated:
        locations.rename_buffer(positioned, name)
        return positioned
    module = _parse_str(text, name)  # fails only when an annotation itself is malformed
    locations.fuse_positions(module, positioned, name)
    return module


def parse_bytecode(data: bytes, name: str, *, check_strings: bool = True) -> tuple[ir.Module, str]:
    """Parse MLIR bytecode or a StableHLO portable artifact in this process: only bytes
    that a trusted writer produced, or that `isolated_parse.check` accepted (the reader
    can crash or hang on damaged bytes). Returns (module, "bytecode" or "artifact")."""
    producer = _bytecode_producer(data)
    if not producer.startswith("StableHLO"):
        try:
            module = ir.Module.parse(data)
        except ir.MLIRError as e:
            _raise_parse_error(e, name, "MLIR bytecode")
        except RuntimeError as e:  # the reader's message was not UTF-8 (damaged strings)
            _raise_unreadable(name, "MLIR bytecode", e)
        if check_strings:
            utf8.check_module(module, name)
        return module, "bytecode"
    shardy = b"sdy" in data
    if shardy:
        data = sharding.strip_sharding_bytecode(data)
    try:
        module = stablehlo.deserialize_portable_artifact(ir.Context.current, data)
    except Exception as e:  # the binding raises a bare exception type
        notes = []
        if shardy:
            # Shardy ops (sdy.mesh, from explicit shardings) are only readable in text.
            notes = [Diagnostic("note", name, "if the program has Shardy (sdy) ops, which "
                                "mlxc reads only from text: compile exported.mlir_module()")]
        raise CompileError(
            f"{name}: cannot read StableHLO portable artifact ({producer})",
            [Diagnostic("error", name, f"invalid portable artifact: {e}", notes)]) from None
    if check_strings:
        utf8.check_module(module, name)
    if shardy:
        sharding.drop_sharding_attributes(module)
    return module, "artifact"


def _raise_unreadable(name: str, what: str, err: Exception) -> None:
    raise CompileError(f"{name}: cannot parse {what}", [Diagnostic(
        "error", name, f"damaged {what}: the reader failed with an error message that is not "
        f"valid UTF-8 ({err})")]) from None


def _parse_bytes(data: bytes, name: str, trusted: bool = False) -> tuple[ir.Module, str]:
    if data.startswith(BYTECODE_MAGIC):
        if trusted:
            return parse_bytecode(data, name)
        what = "StableHLO portable artifact" if _bytecode_producer(data).startswith(
            "StableHLO") else "MLIR bytecode"
        isolated_parse.check(data, name, what)  # parses it in a child process first
        return parse_bytecode(data, name, check_strings=False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(
            f"{name}: not MLIR text, MLIR bytecode or a StableHLO artifact",
            [Diagnostic("error", name, f"byte {e.start} is not UTF-8 and there is no bytecode header")]
        ) from None
    return parse_text(text, name), "text"


def _read_file(path: str) -> bytes:
    try:
        return files.read_regular_file(path)  # never blocks on a pipe or a device
    except FileNotFoundError:
        problem = "no such file (and not MLIR text)"
    except IsADirectoryError:
        problem = "a directory, not a program file"
    except files.NotARegularFile as e:
        problem = ("a directory, not a program file" if e.strerror == "a directory" else
                   "not a regular file (a device, a pipe or a socket)")
    except OSError as e:
        problem = f"cannot read it ({e.strerror or e})"
    raise CompileError(f"{path}: {problem.split(' (')[0]}", [Diagnostic("error", path, problem)])


def load(source: Source, *, name: str | None = None) -> Loaded:
    """Parse and verify `source` in the current context."""
    name = None if name is None else display_name(name)
    if isinstance(source, (ir.Module, ir.Operation)) or hasattr(source, "operation"):
        op = source.operation if hasattr(source, "operation") else source
        if op.name != "builtin.module":
            raise TypeError(f"mlxc.compile: expected a builtin.module, got an '{op.name}' op")
        buf = io.BytesIO()
        op.write_bytecode(buf)  # moves the program into our context; the caller's stays intact
        module, _ = _parse_bytes(buf.getvalue(), name or "<module>", trusted=True)
        return Loaded(module, name or "<module>", "module")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = os.fspath(source)
        nm = name or display_name(path)
        if path.endswith(".onnx"):
            from . import onnx_import
            _read_file(path)  # a missing or unreadable file: the same error as for MLIR
            return Loaded(parse_text(onnx_import.to_stablehlo(path, nm), nm), nm, "onnx")
        data = _read_file(path)
        module, kind = _parse_bytes(data, nm)
        return Loaded(module, nm, kind)
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
