"""reduce_precision to a format without mantissa bits: NaN becomes infinity.

With `mantissa_bits = 0` the target format has no NaN: truncating a NaN's mantissa
leaves the all-ones exponent, an infinity of the same sign (what XLA and the
reference interpreter return). The upstream lowering keeps NaNs whatever the format,
so we send them to the signed infinity ourselves and let upstream round the rest.
"""

from __future__ import annotations

from .._mlir import ir
from . import lowering

_SIGN = {16: 1 << 15, 32: 1 << 31, 64: 1 << 63}
_INF = {16: 0x7C00, 32: 0x7F800000, 64: 0x7FF0000000000000}


def _int_splat(t: ir.RankedTensorType, value: int) -> ir.Value:
    width = ir.IntegerType(t.element_type).width
    if value >= 1 << (width - 1):  # the bindings take a signed 64-bit value: pass the bits
        value -= 1 << width
    attr = ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(t.element_type, value))
    return ir.Operation.create("stablehlo.constant", results=[t], attributes={"value": attr}).result


def _make(name: str, t: ir.Type, *operands, **attrs) -> ir.Value:
    return ir.Operation.create(name, results=[t], operands=list(operands), attributes=attrs).result


@lowering("stablehlo.reduce_precision")
def reduce_precision(op) -> None:
    if ir.IntegerAttr(op.attributes["mantissa_bits"]).value != 0:
        return
    x = op.operands[0]
    t = ir.RankedTensorType(x.type)
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(str(t.element_type))
    if width is None:
        return
    inf_bits = 0x7F80 if str(t.element_type) == "bf16" else _INF[width]
    bits_t = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(width))
    pred_t = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(1))
    with ir.InsertionPoint.after(op), op.location:
        bits = _make("stablehlo.bitcast_convert", bits_t, x)
        sign = _make("stablehlo.and", bits_t, bits, _int_splat(bits_t, _SIGN[width]))
        inf = _make("stablehlo.bitcast_convert", t, _make("stablehlo.or", bits_t, sign,
                                                          _int_splat(bits_t, inf_bits)))
        is_nan = _make("stablehlo.compare", pred_t, x, x,
                       comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction NE>"),
                       compare_type=ir.Attribute.parse("#stablehlo<comparison_type FLOAT>"))
        users = [(use.owner, use.operand_number) for use in op.result.uses]
        result = _make("stablehlo.select", t, is_nan, inf, op.result)
    for owner, index in users:
        owner.operands[index] = result
