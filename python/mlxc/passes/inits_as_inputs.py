"""mlxc-inits-as-inputs: an elementwise op that reads its destination reads it as an input.

StableHLO's outer product (a dot_general with no contracting dimension: jnp.outer, or
the cotangent of `L @ v` in a Cholesky gradient) lowers to a linalg.generic with only
parallel loops whose body adds to its zero-filled destination (`%out + a * b`).
Upstream's elementwise fusion, fusing such a producer into a consumer that has more
loops (a reduction: the product that reads the outer product), keeps the destination
as an extra output of the fused op, indexed without the consumer's extra loops: every
pass of those loops then adds `a * b` once more to what the previous one wrote (the
gradient was off by 3.0 on a 4x4 matrix). Read as an input, the destination is a value
like any other: the fused body computes `0 + a * b` per element, and upstream folds the
fill into that input as the scalar it is. The op writes a fresh tensor instead, which
mlxc-elementwise-in-place gives back the input's buffer when it dies there.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _read_inits(op) -> list[int]:
    """The destinations (by output index) that an all-parallel generic reads."""
    if any("parallel" not in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])):
        return []
    n_in, n_out = irutil.dps_segments(op)
    args = op.regions[0].blocks[0].arguments
    return [k for k in range(n_out) if list(args[n_in + k].uses)
            and isinstance(op.operands[n_in + k].type, ir.RankedTensorType)
            and ir.RankedTensorType(op.operands[n_in + k].type).has_static_shape]


def _rewrite(op, read: list[int]) -> None:
    n_in, n_out = irutil.dps_segments(op)
    inputs, inits = list(op.operands[:n_in]), list(op.operands[n_in:n_in + n_out])
    maps = irutil.indexing_maps(op)
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in
                                               maps[:n_in] + [maps[n_in + k] for k in read]
                                               + maps[n_in:]])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_in + len(read), n_out])
    with ir.InsertionPoint(op), op.location:
        fresh = list(inits)
        for k in read:
            t = ir.RankedTensorType(inits[k].type)
            fresh[k] = ir.Operation.create("tensor.empty", results=[t], attributes={}).result
        new = ir.Operation.create("linalg.generic", results=[r.type for r in op.results],
                                  operands=inputs + [inits[k] for k in read] + fresh,
                                  attributes=attrs, regions=1)
    old = op.regions[0].blocks[0]
    args = old.arguments
    block = new.regions[0].blocks.append(*([a.type for a in list(args)[:n_in]]
                                           + [args[n_in + k].type for k in read]
                                           + [a.type for a in list(args)[n_in:]]))
    for i in range(n_in):
        args[i].replace_all_uses_with(block.arguments[i])
    for k in range(n_out):
        target = n_in + read.index(k) if k in read else n_in + len(read) + k
        args[n_in + k].replace_all_uses_with(block.arguments[target])
    for inner in list(old.operations):
        block.append(inner.operation)
    for old_result, value in zip(op.results, new.results):
        old_result.replace_all_uses_with(value)
    op.erase()


def run(module) -> None:
    # Outermost generics only (none nested in another), so erasing one leaves the
    # handles to the rest valid.
    for op in irutil.outermost(module, lambda op: op.name == "linalg.generic"):
        read = _read_inits(op)
        if read:
            _rewrite(op, read)


PASS = PythonPass(
    argument="mlxc-inits-as-inputs",
    summary="An elementwise linalg.generic that reads its destination takes it as an input "
            "and writes a fresh tensor, so fusing it into a consumer with more loops stays exact",
    run=run,
)
