"""mlxc-finite-without-infinity: `is_finite` on a float type with no infinities is `x == x`.

The fp8/fp6/fp4 types whose names end in FN/FNUZ/FNU have no infinity. Upstream's
`stablehlo-legalize-to-linalg` lowers is_finite as |x| != +inf, and +inf in such a
type is NaN (or the largest value), so every element came out false (or the largest
values did). Without infinities, a value is finite exactly when it is not NaN;
types with no NaN either (f6, f4) give true everywhere, as `x == x` does.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def has_no_infinity(t: ir.Type) -> bool:
    element = ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
    return isinstance(element, ir.FloatType) and "FN" in str(element)


def run(module) -> None:
    for op in irutil.ops_named(module, "stablehlo.is_finite"):
        x = op.operands[0]
        if not has_no_infinity(x.type):
            continue
        direction = ir.Attribute.parse("#stablehlo<comparison_direction EQ>")
        irutil.replace_op(op, lambda: ir.Operation.create(
            "stablehlo.compare", results=[op.result.type], operands=[x, x],
            attributes={"comparison_direction": direction}).result)


PASS = PythonPass(
    argument="mlxc-finite-without-infinity",
    summary="is_finite on float types without infinities (f8E4M3FN, ...) becomes x == x",
    run=run,
)
