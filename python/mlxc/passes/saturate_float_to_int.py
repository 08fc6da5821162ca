"""mlxc-saturate-float-to-int: float-to-integer converts saturate, as in XLA.

StableHLO leaves out-of-range float-to-integer conversion implementation-defined and
`stablehlo-legalize-to-linalg` emits `fptosi`/`fptoui`, which wrap or give poison
(-4.6 to ui8 becomes 251). XLA, and so JAX, clamps to the integer range and maps NaN to
0. We wrap each such convert in selects that do the same, from every float type: the
fp8/fp6/fp4 ones too (f8E5M2 -1.75 to ui8 was 254, fuzz case lowp/16804).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import irutil
from .._mlir import ir
from ..runtime import dtypes
from . import PythonPass


def _float_range(float_name: str) -> tuple[float, bool, bool]:
    """The largest finite value of a float type, whether it has infinities, and
    whether it has negative values (f8E8M0FNU, a scale, has none)."""
    dt = dtypes.to_numpy(float_name)
    info = ml_dtypes.finfo(dt)  # numpy's own float types too
    with np.errstate(over="ignore", invalid="ignore"):
        has_inf = bool(np.isinf(np.array(np.inf).astype(dt)))
        negative = bool(np.array(-1.0).astype(dt).astype(np.float64) < 0)
    return float(info.max), has_inf, negative


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


def _bound(value: float, float_range: tuple[float, bool, bool]):
    """`value` (a power of two) in the float type of `float_range` (_float_range); past
    its range an infinity, or None where no value of the type reaches the bound (nothing
    to clamp): a type without infinities, or a negative bound of a type without negative
    values."""
    limit, has_inf, negative = float_range
    if value < 0 and not negative:
        return None
    if abs(value) <= limit:
        return value
    return math.copysign(math.inf, value) if has_inf else None


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
    float_range = _float_range(str(ftype))
    high, low = _bound(hi, float_range), _bound(lo, float_range)
    with ir.InsertionPoint.after(op), op.location:
        too_big = too_small = None
        if high is not None:
            too_big = _compare("GE", x, _splat(src, ftype, high), bool_type)
        if low is not None:
            # Past the type's range the bound is -inf, which only -inf reaches: <=.
            too_small = _compare("LE" if math.isinf(low) else "LT", x,
                                 _splat(src, ftype, low), bool_type)
        is_nan = _compare("NE", x, x, bool_type)
        r = op.result
        if too_big is not None:
            r = _select(too_big, _splat(dst, itype, int_max), r)
        if too_small is not None:
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
        if isinstance(src, ir.FloatType) and dtypes.is_supported(str(src)) and \
                isinstance(dst, ir.IntegerType) and ir.IntegerType(dst).width > 1:
            targets.append(op)
    for op in targets:
        _saturate(op)


PASS = PythonPass(
    argument="mlxc-saturate-float-to-int",
    summary="Float-to-integer converts clamp to the integer range and map NaN to 0 (XLA semantics)",
    run=run,
)
