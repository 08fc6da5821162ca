"""mlxc-bool-add-to-or: `stablehlo.add` on booleans becomes `stablehlo.or`.

StableHLO defines add on i1 as logical OR. Both the StableHLO constant folder and
`stablehlo-legalize-to-linalg` (arith.addi) compute it as i1 integer addition, which
is XOR: true + true gives false. Rewriting before simplification keeps both right.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _is_bool(t: ir.Type) -> bool:
    element = ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
    return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == 1


def run(module) -> None:
    for op in irutil.ops_named(module, "stablehlo.add"):
        if not _is_bool(op.result.type):
            continue
        irutil.replace_op(op, lambda: ir.Operation.create(
            "stablehlo.or", results=[op.result.type], operands=list(op.operands)).result)


PASS = PythonPass(
    argument="mlxc-bool-add-to-or",
    summary="stablehlo.add on i1 becomes stablehlo.or (the spec's meaning; folders compute XOR)",
    run=run,
)
