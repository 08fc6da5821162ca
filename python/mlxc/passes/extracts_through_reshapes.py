"""mlxc-extracts-through-reshapes: a tensor.extract from a tensor.expand_shape that
only adds unit dimensions reads the expand's source instead.

A gather's indices arrive as `tensor<Nx1xi32>` (StableHLO's index vector dimension),
an expand_shape of the N ids. Extracting `ids[j, 0]` inside a fused gather, the
vectorizer sees the unit dimension, not the contiguous run along j, and reads the ids
with a masked vector gather of its own before the gather of the data (`jnp.take` along
the last axis: 2.7x XLA's time). From the 1-D source, `ids[j]` is a contiguous read.
Each reassociation group must have at most one dimension that is not 1: its index is
the source's; a group of unit dimensions indexes 0.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..targets.cpu import kernel_calls
from . import PythonPass


def _source_indices(expand, indices: list):
    """The indices into the expand's source for `indices` into its result, or None."""
    out_shape = ir.RankedTensorType(expand.results[0].type).shape
    groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(expand.attributes["reassociation"])]
    picked = []
    for group in groups:
        dims = [ir.IntegerAttr(d).value for d in group]
        wide = [d for d in dims if out_shape[d] != 1]
        if len(wide) > 1:
            return None
        picked.append(indices[wide[0]] if wide else None)
    return picked


def run(module) -> None:
    for extract in irutil.ops_named(module, "tensor.extract"):
        source = extract.operands[0]
        expand = irutil.defining_op(source)
        if expand is None or expand.name != "tensor.expand_shape":
            continue
        if not ir.RankedTensorType(expand.operands[0].type).has_static_shape:
            continue
        picked = _source_indices(expand, list(extract.operands[1:]))
        if picked is None:
            continue

        def build():  # called at once, before the loop moves on
            zero = None  # one constant 0 for every group of unit dimensions
            indices = []
            for p in picked:
                if p is None:
                    if zero is None:
                        zero = kernel_calls.index_const(0)
                    p = zero
                indices.append(p)
            return ir.Operation.create("tensor.extract", results=[extract.result.type],
                                       operands=[expand.operands[0]] + indices).result
        irutil.replace_op(extract, build)


PASS = PythonPass(
    argument="mlxc-extracts-through-reshapes",
    summary="Extracts from an expand_shape that adds unit dims read its source",
    run=run,
)
