"""Ops with no computation of their own."""

from __future__ import annotations

from .._mlir import ir
from . import lowering


@lowering("stablehlo.optimization_barrier")
def optimization_barrier(op) -> None:
    # The barrier orders rematerialisation in XLA; mlxc does not rematerialise, so it
    # is the identity on its operands.
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()


@lowering("stablehlo.is_finite")
def is_finite(op) -> None:
    # Upstream tests |x| != inf with inf in x's type: in a type without infinities
    # (f8E4M3FN, f6E2M3FN, ... whose names end in FN, FNUZ, FNU) that constant is NaN,
    # and every element came out not finite. In f32, which holds every value of these
    # types (NaN as NaN), the test is exact.
    t = ir.RankedTensorType(op.operands[0].type)
    if not str(t.element_type).endswith(("FN", "FNUZ", "FNU")):
        return
    with ir.InsertionPoint(op), op.location:
        wide = ir.Operation.create("stablehlo.convert",
                                   results=[ir.RankedTensorType.get(t.shape, ir.F32Type.get())],
                                   operands=[op.operands[0]]).result
        finite = ir.Operation.create("stablehlo.is_finite", results=[op.results[0].type],
                                     operands=[wide]).result
    op.results[0].replace_all_uses_with(finite)
    op.erase()
