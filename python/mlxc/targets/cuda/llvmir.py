"""Kernels as LLVM IR text: the gpu.modules translated by MLIR, made readable by llvmlite.

MLIR's translation comes from the LLVM inside the torch-mlir wheel (a development
snapshot), llvmlite parses with its own, older LLVM. Textual IR is not stable across
versions, so `for_llvmlite` rewrites the constructs the newer printer emits that the
older parser rejects (today: float constant spellings). test_cuda.py translates every corpus program and parses it
with llvmlite, so a new construct shows up there, not in a user's compile.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np

from ... import irutil
from ..._mlir import ir, translate_module_to_llvmir
from ...errors import CompileError, Diagnostic

TRIPLE = "nvptx64-nvidia-cuda"


def kernel_module(module) -> ir.Module:
    """One builtin.module holding every gpu.module's functions; kernels renamed to
    their gpu.module's name (each outlined kernel keeps its parent function's name)."""
    out = ir.Module.create()
    for op in irutil.top_level_ops(module):
        if op.name != "gpu.module":
            continue
        name = irutil.sym_name(op)
        renamed: dict[str, str] = {}
        for inner in op.regions[0].blocks[0].operations:
            inner = inner.operation
            if inner.name == "llvm.func" and "gpu.kernel" not in inner.attributes and \
                    _declared(out, irutil.sym_name(inner)):
                continue  # a libdevice declaration another kernel already made
            clone = inner.clone(ir.InsertionPoint(out.body))
            if clone.name == "llvm.func" and "gpu.kernel" in clone.attributes:
                clone.attributes["sym_name"] = ir.StringAttr.get(name)
            elif clone.name == "llvm.mlir.global":  # shared memory: one per kernel, same names
                old = irutil.sym_name(clone)
                renamed[old] = f"{name}_{old}"
                clone.attributes["sym_name"] = ir.StringAttr.get(renamed[old])
        for o in irutil.walk(out):
            if o.name == "llvm.mlir.addressof" and renamed:
                ref = ir.FlatSymbolRefAttr(o.attributes["global_name"]).value
                if ref in renamed and _inside_kernel(o, name):
                    o.attributes["global_name"] = ir.FlatSymbolRefAttr.get(renamed[ref])
    out.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLE)
    return out


def _inside_kernel(op, kernel: str) -> bool:
    while op is not None and op.name != "llvm.func":
        op = op.parent
    return op is not None and irutil.sym_name(op) == kernel


def _declared(module, name: str) -> bool:
    return any(irutil.sym_name(o) == name for o in irutil.functions(module))


def translate(module) -> str:
    """LLVM IR text (as MLIR's LLVM prints it) of every kernel in `module`."""
    kernels = kernel_module(module)
    try:
        return translate_module_to_llvmir(kernels.operation)
    except Exception as e:
        raise CompileError("translating the kernels to LLVM IR failed",
                           [Diagnostic("error", "<llvm>", str(e))]) from None


# The newer printer spells float constants by their bits (`f0x3F800000`), by name
# (`+inf`, `-qnan`, `+nan(0x1)`) or as the shortest decimal that round-trips in the
# constant's own type (`4.471500e-02` for a float, inexact as a double); LLVM 22 reads `0x` + 16 hex digits (the value as a
# double, for float and double), `0xH`/`0xR` + 4 digits (half, bfloat).
_FLOAT_TYPES = re.compile(r"\b(half|bfloat|float|double)\b")
_NEW_FLOAT = re.compile(r"(?<![\w.%@\"])(f0x[0-9A-Fa-f]+|[+-](?:inf|qnan|snan|nan)(?:\(0x[0-9A-Fa-f]+\))?"
                        r"|[-+]?\d+\.\d+(?:e[-+]?\d+)?(?![\w.]))")
_WIDTH = {"half": 16, "bfloat": 16, "float": 32, "double": 64}
_EXPONENT_BITS = {"half": 5, "bfloat": 8, "float": 8, "double": 11}


def _bits(token: str, kind: str) -> int:
    width = _WIDTH[kind]
    if token.startswith("f0x"):
        return int(token[3:], 16)
    if token[0].isdigit() or token[1:2].isdigit():  # shortest decimal that round-trips
        dtype = {"half": np.float16, "float": np.float32, "double": np.float64,
                 "bfloat": ml_dtypes.bfloat16}[kind]
        return int(np.array(float(token)).astype(dtype).view(f"u{width // 8}"))
    sign = 1 << (width - 1) if token[0] == "-" else 0
    ebits = _EXPONENT_BITS[kind]
    mbits = width - 1 - ebits
    exponent = ((1 << ebits) - 1) << mbits
    name, _, payload = token[1:].partition("(")
    payload_bits = int(payload.rstrip(")"), 16) if payload else 0
    if name == "inf":
        return sign | exponent
    if name == "qnan":
        return sign | exponent | (1 << (mbits - 1))
    if name == "snan":
        return sign | exponent | (payload_bits or 1)
    return sign | exponent | (1 << (mbits - 1)) | payload_bits  # nan(payload): quiet


def _old_spelling(bits: int, kind: str) -> str:
    if kind == "half":
        return f"0xH{bits:04X}"
    if kind == "bfloat":
        return f"0xR{bits:04X}"
    if kind == "float":  # widen the float's bits to the double of the same value
        sign, exponent, mantissa = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
        if exponent == 0xFF:
            exponent = 0x7FF
        elif exponent == 0 and mantissa:  # subnormal: normalise for the double
            shift = 0
            while not mantissa & 0x800000:
                mantissa <<= 1
                shift += 1
            mantissa &= 0x7FFFFF
            exponent = 1 - shift - 127 + 1023
        elif exponent:
            exponent = exponent - 127 + 1023
        bits = (sign << 63) | (exponent << 52) | (mantissa << 29)
    return f"0x{bits:016X}"


def _fix_floats(line: str) -> str:
    def replace(match: re.Match) -> str:
        kinds = _FLOAT_TYPES.findall(line, 0, match.start())
        if not kinds:
            raise ValueError(f"no float type before constant {match.group(0)!r} in: {line.strip()}")
        token, kind = match.group(0), kinds[-1]
        if kind == "double" and token[-1].isdigit():
            return token  # a decimal double reads back exactly
        return _old_spelling(_bits(token, kind), kind)

    return _NEW_FLOAT.sub(replace, line) if _FLOAT_TYPES.search(line) else line


def for_llvmlite(text: str) -> str:
    """`text` rewritten for llvmlite's LLVM 22 parser (float constant spellings)."""
    return "\n".join(_fix_floats(line) for line in text.split("\n"))
