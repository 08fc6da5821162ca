"""mlxc-static-chlo-broadcasts: make the broadcast of a `chlo.broadcast_*` op explicit.

`chlo.broadcast_subtract %x, %zp {broadcast_dimensions = array<i64: 0>}` maps the
lower-rank operand onto chosen result dimensions. `chlo-legalize-to-stablehlo`
handles numpy-style (trailing) broadcasts but fails on others ("failed to legalize
operation 'chlo.broadcast_subtract'"), and `stablehlo-legalize-quant-to-math` emits
exactly those for per-axis quantization along any axis but the last. With static
shapes the broadcast is a `stablehlo.broadcast_in_dim` of that operand to the
result's shape; the op then has equal operand shapes, which legalizes trivially.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _static(t) -> bool:
    return isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape


def run(module) -> None:
    # Only the chlo ops are held: each is erased once replaced.
    for op in [o for o in irutil.walk(module) if o.name.startswith("chlo.broadcast_")]:
        if "broadcast_dimensions" not in op.attributes:
            continue
        result = op.results[0].type
        operands = list(op.operands)
        if len(operands) != 2 or not all(_static(v.type) for v in operands) or not _static(result):
            continue
        shape = ir.RankedTensorType(result).shape
        dims = ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])
        with ir.InsertionPoint(op), op.location:
            new_operands = []
            for v in operands:
                t = ir.RankedTensorType(v.type)
                if t.shape == shape:
                    new_operands.append(v)
                    continue
                # broadcast_dimensions maps the lower-rank operand; an equal-rank one
                # (size-1 dimensions) maps identically.
                mapping = list(dims) if t.rank < len(shape) else list(range(t.rank))
                new_operands.append(ir.Operation.create(
                    "stablehlo.broadcast_in_dim",
                    results=[ir.RankedTensorType.get(shape, t.element_type)], operands=[v],
                    attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get(mapping)}).result)
            attrs = {n: op.attributes[n] for n in op.attributes if n != "broadcast_dimensions"}
            new = ir.Operation.create(op.name, results=[result], operands=new_operands,
                                      attributes=attrs)
        op.results[0].replace_all_uses_with(new.results[0])
        op.erase()


PASS = PythonPass(
    argument="mlxc-static-chlo-broadcasts",
    summary="chlo.broadcast_* with broadcast_dimensions on static shapes: explicit broadcast_in_dim",
    run=run,
)
