"""mlxc-signed-quantized-storage: unsigned quantized types as signed ones.

`stablehlo-legalize-quant-to-math` turns `!quant.uniform<u8:...>` into the signless
`i8` and then treats it as signed, so a stored 255 would dequantize as -1. Unsigned
storage is an exact shift of signed storage of the same width: with s = 2^(N-1),

    uN, zero point z, range [lo, hi]  ==  iN, zero point z - s, range [lo - s, hi - s]

(every stored value q becomes q - s; dequantize, quantize and requantize only ever
see q - z and the clamps, which the shift leaves alone). So this pass rewrites every
unsigned quantized type into its signed twin, and where raw storage bits cross in or
out of a quantized type it flips the top bit (q XOR s is q - s in two's complement):
the entry's quantized arguments and results, which the caller passes as unsigned
integers, and `stablehlo.bitcast_convert` between an integer and such a type.
Runs after mlxc-quantized-entry (which keeps the entry's unsigned types for the
signature) and before the legalization.
"""

from __future__ import annotations

import re

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass
from .select_entry import ENTRY_ATTR

# `!quant.uniform<u8:f32, 0.5:10>`, `<u8<1:255>:f32:0, {0.5:10,2.0}>` (zero point 0
# when absent, storage range the type's full range when absent).
_UNSIGNED = re.compile(r"!quant\.uniform<u(\d+)(?:<(-?\d+):(-?\d+)>)?:([^,]+), ([^>]*)>")
_PARAM = re.compile(r"([-+0-9.eE]+|0x[0-9A-Fa-f]+)(?::(-?\d+))?")


def _signed_text(match: re.Match) -> str:
    bits = int(match.group(1))
    shift = 1 << (bits - 1)
    lo = int(match.group(2)) if match.group(2) is not None else 0
    hi = int(match.group(3)) if match.group(3) is not None else (1 << bits) - 1

    def param(p: re.Match) -> str:
        return f"{p.group(1)}:{int(p.group(2) or 0) - shift}"

    params = _PARAM.sub(param, match.group(5))
    return f"!quant.uniform<i{bits}<{lo - shift}:{hi - shift}>:{match.group(4)}, {params}>"


def _signed(t: ir.Type):
    """The signed twin of `t` (a quantized element type or a tensor of one), else None."""
    text = str(t)
    if not _UNSIGNED.search(text):
        return None
    return ir.Type.parse(_UNSIGNED.sub(_signed_text, text))


def _flip(value, bits: int, loc):
    """value XOR 2^(bits-1), on an integer tensor of `bits`-wide elements."""
    t = ir.RankedTensorType(value.type)
    top = ir.IntegerAttr.get(t.element_type, (1 << (bits - 1)) if t.element_type.is_unsigned
                             else -(1 << (bits - 1)))
    mask = ir.Operation.create("stablehlo.constant", results=[t], attributes={
        "value": ir.DenseElementsAttr.get_splat(t, top)}, loc=loc).result
    return ir.Operation.create("stablehlo.xor", results=[t], operands=[value, mask], loc=loc).result


def _reinterpret(value, t: ir.Type, loc):
    return ir.Operation.create("stablehlo.bitcast_convert", results=[t], operands=[value],
                               loc=loc).result


def _storage_type(quantized: ir.Type, bits: int) -> ir.Type:
    shape = ir.RankedTensorType(quantized).shape
    return ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(bits))


def _may_hold_unsigned(module, entry) -> bool:
    """Quantized values come from the entry's arguments, uniform_quantize and
    bitcast_convert (a constant cannot have a quantized type): a cheap look first."""
    if entry is not None and "!quant.uniform<u" in str(irutil.function_type(entry)):
        return True
    return any("!quant.uniform<u" in str(op.result.type) for op in irutil.ops_named(
        module, "stablehlo.uniform_quantize", "stablehlo.bitcast_convert"))


def run(module) -> None:
    entry = irutil.find_function(module, irutil.string_attr(module, ENTRY_ATTR) or "main")
    if not _may_hold_unsigned(module, entry):
        return
    twins: dict = {}  # types are uniqued: parse each one's twin once

    def twin(t: ir.Type):
        if t not in twins:
            twins[t] = _signed(t)
        return twins[t]

    values = []
    for op in irutil.walk(module):
        values += [r for r in op.results if twin(r.type) is not None]
        for region in op.regions:
            for block in region.blocks:
                values += [a for a in block.arguments if twin(a.type) is not None]
    flipped_args = flipped_results = []
    if entry is not None:
        ftype = irutil.function_type(entry)
        flipped_args = [i for i, t in enumerate(ftype.inputs) if twin(t) is not None]
        flipped_results = [i for i, t in enumerate(ftype.results) if twin(t) is not None]
    _flip_bitcasts(module, twin)
    for value in values:
        value.set_type(twin(value.type))
    for func in irutil.functions(module):
        ftype = irutil.function_type(func)
        inputs = [twin(t) or t for t in ftype.inputs]
        results = [twin(t) or t for t in ftype.results]
        if inputs != list(ftype.inputs) or results != list(ftype.results):
            func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    if entry is not None:
        _flip_entry(entry, flipped_args, flipped_results)


def _flip_bitcasts(module, twin) -> None:
    """Raw storage crossing into or out of an unsigned quantized type: flip the top bit
    on the integer side, whose type does not change."""
    for op in irutil.ops_named(module, "stablehlo.bitcast_convert"):
        into, out_of = twin(op.result.type), twin(op.operands[0].type)
        if (into is None) == (out_of is None):
            continue
        raw = op.operands[0] if into is not None else op.result
        if not isinstance(ir.RankedTensorType(raw.type).element_type, ir.IntegerType):
            raise CompileError.at(op, "mlxc cannot bitcast between an unsigned and a signed "
                                      "quantized type")
        if into is not None:
            with ir.InsertionPoint(op):
                op.operands[0] = _flip(op.operands[0], _bits_of(into), op.location)
        else:
            with ir.InsertionPoint.after(op):
                after = _flip(op.result, _bits_of(out_of), op.location)
            op.result.replace_all_uses_except(after, irutil.as_operation(after.owner))


def _flip_entry(func, args: list[int], results: list[int]) -> None:
    """The caller passes and receives unsigned storage bits: flip them at the entry's
    arguments and before its return (their types are the signed twins by now)."""
    block = func.regions[0].blocks[0]
    loc = func.location
    for i in args:
        arg = block.arguments[i]
        t, bits = arg.type, _bits_of(arg.type)
        with ir.InsertionPoint.at_block_begin(block):
            raw = _reinterpret(arg, _storage_type(t, bits), loc)
            quantized = _reinterpret(_flip(raw, bits, loc), t, loc)
        arg.replace_all_uses_except(quantized, irutil.as_operation(raw.owner))
    ret = block.operations[len(block.operations) - 1]
    for i in results:
        value = ret.operands[i]
        t, bits = value.type, _bits_of(value.type)
        with ir.InsertionPoint(ret):
            raw = _reinterpret(value, _storage_type(t, bits), ret.location)
            ret.operands[i] = _reinterpret(_flip(raw, bits, ret.location), t, ret.location)


def _bits_of(t: ir.Type) -> int:
    """The storage width of a (signed or unsigned) quantized type or tensor of one."""
    return int(re.search(r"!quant\.uniform<[iu](\d+)", str(t)).group(1))


PASS = PythonPass(
    argument="mlxc-signed-quantized-storage",
    summary="Rewrite unsigned quantized storage as signed storage shifted by half its range",
    run=run,
)
