"""Horizontal reductions as trees of lane-wise ops, for the CPU schedules.

A row reduction ends in `vector.multi_reduction` over the last dimension of a
vector<1x...xN>. `lower-vector-multi-reduction` turns that into N dependent scalar
ops (the "inner-parallel" strategy transposes a vector whose other dims are 1), and
for min/max LLVM has no fast horizontal reduction either: both cost a chain of N
steps. Halving the vector instead (the upper half combined lane-wise into the lower
half, an odd last lane into lane 0) takes log2(N) vector steps down to one lane.
Every combining kind is associative and commutative on its lanes (sums only up to
rounding, which the reduction order never promised), so the result is the same
reduction.
"""

from __future__ import annotations

from ... import irutil
from ..._mlir import ir

_FLOAT_OPS = {"add": "arith.addf", "mul": "arith.mulf", "maximumf": "arith.maximumf",
              "minimumf": "arith.minimumf", "maxnumf": "arith.maxnumf",
              "minnumf": "arith.minnumf"}
_INT_OPS = {"add": "arith.addi", "mul": "arith.muli", "maxsi": "arith.maxsi",
            "minsi": "arith.minsi", "maxui": "arith.maxui", "minui": "arith.minui",
            "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}


def _kind(op) -> str:
    # "#vector.kind<maximumf>" -> "maximumf"
    return str(op.attributes["kind"]).split("<")[-1].rstrip(">")


def _i64_array(values) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.IntegerAttr.get(i64, v) for v in values])


def _combiner(op) -> str | None:
    element = ir.VectorType(op.operands[0].type).element_type
    if isinstance(element, ir.IntegerType):
        return _INT_OPS.get(_kind(op))
    if isinstance(element, ir.FloatType):
        return _FLOAT_OPS.get(_kind(op))
    return None


def _slice(vector, start: int, size: int, element):
    return ir.Operation.create(
        "vector.extract_strided_slice", results=[ir.VectorType.get([size], element)],
        operands=[vector], attributes={"offsets": _i64_array([start]), "sizes": _i64_array([size]),
                                       "strides": _i64_array([1])}).result


def _rewrite(op) -> None:
    source = op.operands[0]
    vtype = ir.VectorType(source.type)
    shape, element = list(vtype.shape), vtype.element_type
    combine = _combiner(op)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["reduction_dims"]))
    rank = len(shape)
    # Only a reduction over the last dim whose other dims are all 1: a row.
    if combine is None or rank == 0 or rank - 1 not in dims or any(d != 1 for d in shape[:-1]):
        return
    n = shape[-1]
    if n < 2:
        return
    with op.location, ir.InsertionPoint(op):
        flat = ir.Operation.create("vector.shape_cast", results=[ir.VectorType.get([n], element)],
                                   operands=[source]).result
        while n > 1:
            half = n // 2
            lo, hi = _slice(flat, 0, half, element), _slice(flat, half, half, element)
            folded = ir.Operation.create(combine, results=[lo.type], operands=[lo, hi]).result
            if n % 2:
                # The odd last lane joins lane 0.
                head = ir.Operation.create(
                    combine, results=[ir.VectorType.get([1], element)],
                    operands=[_slice(folded, 0, 1, element), _slice(flat, n - 1, 1, element)]).result
                folded = ir.Operation.create(
                    "vector.insert_strided_slice", results=[lo.type], operands=[head, folded],
                    attributes={"offsets": _i64_array([0]), "strides": _i64_array([1])}).result
            flat, n = folded, half
        shaped = ir.Operation.create("vector.shape_cast",
                                     results=[ir.VectorType.get(shape[:-1] + [n], element)],
                                     operands=[flat]).result
    op.operands[0] = shaped


def rewrite_row_reduction(op) -> None:
    """Give `op`, a `vector.multi_reduction`, a halving tree if it reduces a row."""
    _rewrite(op)


def rewrite_row_reductions(module) -> None:
    """Give every row-wise `vector.multi_reduction` in `module` a halving tree."""
    for op in irutil.ops_named(module, "vector.multi_reduction"):
        _rewrite(op)
