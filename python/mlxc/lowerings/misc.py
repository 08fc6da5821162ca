"""Ops with no computation of their own."""

from __future__ import annotations

from . import lowering


@lowering("stablehlo.optimization_barrier")
def optimization_barrier(op) -> None:
    # The barrier orders rematerialisation in XLA; mlxc does not rematerialise, so it
    # is the identity on its operands.
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()
