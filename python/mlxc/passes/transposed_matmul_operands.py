"""mlxc-transposed-matmul-operands: a matmul reads a transposed left operand in place.

`dot_general` contracting the left operand's first dimension (the weight gradient
x^T @ dy of a dense layer) arrives as a matmul of an explicit transpose: a full copy
of x (128 KiB for grad_mlp's 128x256 input) that XLA never makes. The register tile
of the matmul schedule broadcasts one left-operand element per row of the tile at a
time, so it reads the left operand as well along either dimension: this pass writes

    %t = linalg.generic {transpose} ins(%x : KxM) outs(...)     (or linalg.transpose)
    %r = linalg.matmul ins(%t, %b : MxK, KxN) outs(%c)
as
    %r = linalg.generic {contraction, A indexed (m, n, k) -> (k, m)} ins(%x, %b) outs(%c)

which the contraction schedule tiles and vectorizes like the matmul (the transposed
reads are of one element per row). Only a 2-D transpose used by that matmul alone,
with the matmul's operands all of one float type; the right operand is left alone
(its tile rows are vector loads, which a transpose would turn into gathers).
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _transposed_source(value):
    """`x` when `value` is a 2-D transpose of `x` used once, else None."""
    op = irutil.defining_op(value)
    if op is None or len(list(value.uses)) != 1:
        return None
    if op.name == "linalg.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        return op.operands[0] if perm == [1, 0] else None
    if op.name != "linalg.generic" or irutil.dps_segments(op) != (1, 1):
        return None
    maps = irutil.indexing_maps(op)
    if len(maps) != 2 or maps[0] != ir.AffineMap.get_permutation([1, 0]) or \
            maps[1] != ir.AffineMap.get_identity(2):
        return None
    body = op.regions[0].blocks[0]
    ops = irutil.walk(op)[1:]   # plain Operations: no dialect classes imported
    if len(ops) != 1 or ops[0].operands[0] != body.arguments[0]:
        return None
    return op.operands[0]


def _float_matmul(op) -> bool:
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).rank == 2
               for t in types):
        return False
    element = ir.RankedTensorType(types[0]).element_type
    return isinstance(element, (ir.F32Type, ir.F64Type)) and \
        all(ir.RankedTensorType(t).element_type == element for t in types)


def _contraction(x, b, c, result_type, location):
    d = [ir.AffineExpr.get_dim(i) for i in range(3)]
    maps = [ir.AffineMap.get(3, 0, [d[2], d[0]]), ir.AffineMap.get(3, 0, [d[2], d[1]]),
            ir.AffineMap.get(3, 0, [d[0], d[1]])]
    iterators = ir.Attribute.parse("[#linalg.iterator_type<parallel>, "
                                   "#linalg.iterator_type<parallel>, "
                                   "#linalg.iterator_type<reduction>]")
    element = ir.RankedTensorType(result_type).element_type
    with location:
        op = ir.Operation.create(
            "linalg.generic", results=[result_type], operands=[x, b, c],
            attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                        "iterator_types": iterators,
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([2, 1])},
            regions=1)
        body = op.regions[0].blocks.append(element, element, element)
        with ir.InsertionPoint(body):
            a, w, acc = body.arguments
            product = ir.Operation.create("arith.mulf", results=[element], operands=[a, w]).result
            total = ir.Operation.create("arith.addf", results=[element],
                                        operands=[acc, product]).result
            ir.Operation.create("linalg.yield", operands=[total])
    return op


def run(module) -> None:
    for op in irutil.ops_named(module, "linalg.matmul"):
        if "indexing_maps" in op.attributes and \
                ir.ArrayAttr(op.attributes["indexing_maps"]) != ir.ArrayAttr.get([
                    ir.AffineMapAttr.get(m) for m in _default_maps()]):
            continue   # already a matmul with maps of its own
        if irutil.dps_segments(op) != (2, 1) or not _float_matmul(op):
            continue
        x = _transposed_source(op.operands[0])
        if x is None:
            continue
        transpose = irutil.defining_op(op.operands[0])
        with ir.InsertionPoint(op):
            new = _contraction(x, op.operands[1], op.operands[2], op.results[0].type, op.location)
        op.results[0].replace_all_uses_with(new.results[0])
        # The matmul goes first: it is the transpose's only user.
        op.erase()
        transpose.erase()


def _default_maps():
    d = [ir.AffineExpr.get_dim(i) for i in range(3)]
    return [ir.AffineMap.get(3, 0, [d[0], d[2]]), ir.AffineMap.get(3, 0, [d[2], d[1]]),
            ir.AffineMap.get(3, 0, [d[0], d[1]])]


PASS = PythonPass(
    argument="mlxc-transposed-matmul-operands",
    summary="A matmul of a transposed left operand reads it in place (no transposed copy)",
    run=run,
)
