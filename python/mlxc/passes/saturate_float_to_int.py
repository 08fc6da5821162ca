"""mlxc-saturate-float-to-int: float-to-integer converts saturate, as in XLA.

StableHLO leaves out-of-range float-to-integer conversion implementation-defined and
`stablehlo-legalize-to-linalg` emits `fptosi`/`fptoui`, which wrap or give poison
(-4.6 to ui8 becomes 251). XLA, and so JAX, clamps to the integer range and maps NaN to
0. We wrap each such convert in selects that do the same.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import irutil
from .._mlir import ir
from . import PythonPass

_FLOAT_MAX = {"f16": float(np.finfo(np.float16).max), "bf16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
              "f32": float(np.finfo(np.float32).max), "f64": float(np.finfo(np.float64).max)}


def _splat(tensor_type: ir.RankedTensorType, element: ir.Type, value) -> ir.Value:
    t = ir.RankedTensorType.get(tensor_type.shape, element)
    if isinstance(element, ir.IntegerType):
        width = ir.IntegerType(element).width
        if value >= 2 ** (width - 1):  # the bindings take a signed 64-bit value: pass the bits
            value -= 2 ** width
        attr = ir.IntegerAttr.get(element, value)
    else:
        attr = ir.FloatAttr.get(element, value)
    dense = ir.DenseElementsAttr.get_splat(t, attr)
    return ir.Operation.create("stablehlo.constant", results=[t], attributes={"value": dense}).result


def _compare(direction: str, a, b, bool_type) -> ir.Value:
    attrs = {"comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>"),
             "compare_type": ir.Attribute.parse("#stablehlo<comparison_type FLOAT>")}
    return ir.Operation.create("stablehlo.compare", results=[bool_type], operands=[a, b],
                               attributes=attrs).result


def _select(pred, on_true, on_false) -> ir.Value:
    return ir.Operation.create("stablehlo.select", results=[on_false.type],
                               operands=[pred, on_true, on_false]).result


def _bound(value: float, float_name: str) -> float:
    """`value` (a power of two) in the float type, or an infinity past its range."""
    limit = _FLOAT_MAX[float_name]
    return value if abs(value) <= limit else math.copysign(math.inf, value)


def _saturate(op) -> None:
    src = ir.RankedTensorType(op.operands[0].type)
    dst = ir.RankedTensorType(op.result.type)
    ftype, itype = src.element_type, dst.element_type
    bits = ir.IntegerType(itype).width
    unsigned = ir.IntegerType(itype).is_unsigned
    int_min, int_max = (0, 2 ** bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    # Every float in [lo, hi) converts exactly after truncation; outside it we clamp.
    lo, hi = (0.0, 2.0 ** bits) if unsigned else (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1))
    x = op.operands[0]
    bool_type = ir.RankedTensorType.get(src.shape, ir.IntegerType.get_signless(1))
    users = [(use.owner, use.operand_number) for use in op.result.uses]
    with ir.InsertionPoint.after(op), op.location:
        too_big = _compare("GE", x, _splat(src, ftype, _bound(hi, str(ftype))), bool_type)
        too_small = _compare("LT", x, _splat(src, ftype, _bound(lo, str(ftype))), bool_type)
        is_nan = _compare("NE", x, x, bool_type)
        r = _select(too_big, _splat(dst, itype, int_max), op.result)
        r = _select(too_small, _splat(dst, itype, int_min), r)
        r = _select(is_nan, _splat(dst, itype, 0), r)
    for owner, index in users:
        owner.operands[index] = r


def run(module) -> None:
    targets = []
    for op in irutil.walk(module):
        if op.name != "stablehlo.convert":
            continue
        src = ir.RankedTensorType(op.operands[0].type).element_type
        dst = ir.RankedTensorType(op.result.type).element_type
        if str(src) in _FLOAT_MAX and isinstance(dst, ir.IntegerType) and ir.IntegerType(dst).width > 1:
            targets.append(op)
    for op in targets:
        _saturate(op)


PASS = PythonPass(
    argument="mlxc-saturate-float-to-int",
    summary="Float-to-integer converts clamp to the integer range and map NaN to 0 (XLA semantics)",
    run=run,
)
