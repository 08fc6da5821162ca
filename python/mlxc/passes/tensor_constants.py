"""mlxc-tensor-constants: `arith.constant` of a tensor becomes `stablehlo.constant`.

torch-mlir's StableHLO output keeps scalars it materialised itself (layer norm's eps,
an addmm's alpha) as `arith.constant dense<...> : tensor<...>`: the same value in
another dialect. As `stablehlo.constant` they fold and fuse like every other
constant, and the import contract (StableHLO ops only) holds for such programs.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def run(module) -> None:
    for op in irutil.ops_named(module, "arith.constant"):
        if not isinstance(op.result.type, ir.RankedTensorType):
            continue  # scalars and vectors are not StableHLO values
        value = op.attributes["value"]
        irutil.replace_op(op, lambda: ir.Operation.create(
            "stablehlo.constant", results=[op.result.type],
            attributes={"value": value}).result)


PASS = PythonPass(
    argument="mlxc-tensor-constants",
    summary="arith.constant of a tensor (torch-mlir emits them for scalars) becomes "
            "stablehlo.constant",
    run=run,
)
