"""Object code for the CPU: from the JIT for this machine, from LLVM IR for another.

For this machine the JIT's own code generation writes the object (ExecutionEngine
with PIC, so it links into a shared library), so an artifact runs exactly the code
the JIT runs. The bundled MLIR registers only the host's LLVM target, so code for
another CPU goes through llvmlite (an optional dependency: `pip install llvmlite`),
which has every target: the module is translated to LLVM IR text, handed to
llvmlite's older LLVM, optimised and emitted as an object for the target triple.
"""

from __future__ import annotations

import os
import re
import struct
import tempfile

from ...errors import CompileError, Diagnostic

# Architectures mlxc can cross-compile for: 64-bit ones, since the LLVM dialect was
# lowered with 64-bit indices and pointers. -> ELF machine type, for the tests.
CROSS_ARCHES = {"x86_64": 62, "aarch64": 183, "riscv64": 243, "powerpc64le": 21}


def _arch_of(triple: str) -> str:
    arch = triple.split("-", 1)[0].lower()
    return {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "powerpc64le"}.get(arch, arch)


def check_triple(triple: str) -> str:
    """The architecture of `triple`, or a CompileError naming what is supported."""
    parts = triple.split("-")
    arch = _arch_of(triple)
    if len(parts) < 2 or arch not in CROSS_ARCHES:
        raise CompileError(f"target triple '{triple}': not supported", [Diagnostic(
            "error", "<target>", f"expected ARCH-VENDOR-OS[-ENV] with ARCH one of "
            f"{', '.join(CROSS_ARCHES)}, e.g. aarch64-linux-gnu")])
    return arch


def engine_object(engine) -> bytes:
    """The object file of an ExecutionEngine made with enable_object_dump and enable_pic."""
    fd, path = tempfile.mkstemp(suffix=".o", prefix="mlxc-")
    os.close(fd)
    try:
        engine.dump_to_object_file(path)
        with open(path, "rb") as f:
            data = f.read()
    finally:
        os.unlink(path)
    if not data:
        raise CompileError("LLVM code generation failed",
                           [Diagnostic("error", "<llvm>", "the JIT wrote an empty object file")])
    return data


# LLVM 20+ prints special floats as words (`float -inf`, `double +qnan`, `f0x7FC00001`)
# where older readers want hexadecimal; LLVM's text format writes every float and
# double constant as the hex of the equivalent double, half as 0xH, bfloat as 0xR.
_SPECIAL = re.compile(
    r"\b(half|bfloat|float|double)\s+([+-]?)(inf|qnan|nan|snan)(?:\((0x[0-9a-fA-F]+)\))?(?![\w.])")
_DOUBLE_BITS = {"inf": 0x7FF0000000000000, "qnan": 0x7FF8000000000000,
                "nan": 0x7FF8000000000000, "snan": 0x7FF4000000000000}
_NARROW_BITS = {"half": (0x7C00, 0x7E00, 0x7D00, 10, "H"), "bfloat": (0x7F80, 0x7FC0, 0x7FA0, 7, "R")}


def _special_float(m: re.Match) -> str:
    ty, sign, kind, payload = m.group(1), m.group(2), m.group(3), m.group(4)
    negative = sign == "-"
    if ty in _NARROW_BITS:
        inf, qnan, snan, mantissa_bits, prefix = _NARROW_BITS[ty]
        bits = {"inf": inf, "qnan": qnan, "nan": qnan, "snan": snan}[kind]
        if payload:
            bits = (bits & ~((1 << mantissa_bits) - 1)) | int(payload, 16)
        bits |= 0x8000 if negative else 0
        return f"{ty} 0x{prefix}{bits:04X}"
    bits = _DOUBLE_BITS[kind]
    if payload:
        bits = (bits & ~((1 << 52) - 1)) | (int(payload, 16) << (29 if ty == "float" else 0))
    bits |= (1 << 63) if negative else 0
    return f"{ty} 0x{bits:016X}"


# `f0x` + the constant's own bits: 4 hex digits for half or bfloat, 8 for float,
# 16 for double.
_BITS_FLOAT = re.compile(r"\bf0x([0-9a-fA-F]+)\b")


def _bits_float(m: re.Match, line: str) -> str:
    digits = m.group(1)
    raw = int(digits, 16)
    if len(digits) == 8:  # the text format wants a float as the bits of the same double
        (value,) = struct.unpack("<f", struct.pack("<I", raw))
        (raw,) = struct.unpack("<Q", struct.pack("<d", value))
        return f"0x{raw:016X}"
    if len(digits) <= 4:
        return f"0x{'R' if 'bfloat' in line else 'H'}{raw:04X}"
    return f"0x{raw:016X}"


# Newer LLVM also prints a float constant as its shortest decimal (4.471500e-02),
# which older readers reject unless the decimal is exact in binary: write the bits.
# The type is written before the constant (`float 4.4e-02`), or once for the whole
# instruction (`fmul float %x, 4.4e-02`, `fcmp olt float`, `phi float`).
_TYPED_DECIMAL = re.compile(r"\bfloat\s+([+-]?\d+\.\d+(?:e[+-]?\d+)?)\b")
_FLOAT_INSTRUCTION = re.compile(
    r"=\s*(?:fadd|fsub|fmul|fdiv|frem|fcmp\s+\w+|phi)"
    r"(?:\s+(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc))*\s+float\b")
_DECIMAL = re.compile(r"(?<![\w.%@])([+-]?\d+\.\d+(?:e[+-]?\d+)?)(?![\w.])")


def _float_bits(literal: str) -> str:
    (single,) = struct.unpack("<f", struct.pack("<f", float(literal)))
    (raw,) = struct.unpack("<Q", struct.pack("<d", single))
    return f"0x{raw:016X}"


def _float_decimals(text: str) -> str:
    text = _TYPED_DECIMAL.sub(lambda m: "float " + _float_bits(m.group(1)), text)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _FLOAT_INSTRUCTION.search(line):
            lines[i] = _DECIMAL.sub(lambda m: _float_bits(m.group(1)), line)
    return "\n".join(lines)


def downgrade_llvm_ir(text: str) -> str:
    """LLVM IR text from the bundled (newer) LLVM, in words llvmlite's LLVM reads."""
    text = _SPECIAL.sub(_special_float, text)
    text = _float_decimals(text)
    return "\n".join(_BITS_FLOAT.sub(lambda m: _bits_float(m, line), line) if "f0x" in line else line
                     for line in text.split("\n"))


def cross_object(llvm_ir: str, triple: str, opt_level: int) -> bytes:
    """An object file for `triple` from LLVM IR text, through llvmlite."""
    check_triple(triple)
    try:
        import llvmlite.binding as llvm
    except ImportError:
        raise CompileError(f"cross-compiling for {triple} needs llvmlite", [Diagnostic(
            "error", "<target>", "the bundled MLIR has only this machine's LLVM target; "
            "`pip install llvmlite` adds every target")]) from None
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        module = llvm.parse_assembly(downgrade_llvm_ir(llvm_ir))
        target = llvm.Target.from_triple(triple)
        machine = target.create_target_machine(opt=opt_level, reloc="pic", codemodel="default")
        module.triple = triple
        module.data_layout = str(machine.target_data)
        module.verify()
        if opt_level > 0:
            tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
            builder = llvm.create_pass_builder(machine, tuning)
            builder.getModulePassManager().run(module, builder)
        return machine.emit_object(module)
    except RuntimeError as e:
        raise CompileError(f"LLVM code generation for {triple} failed",
                           [Diagnostic("error", "<llvm>", str(e).strip())]) from None
