"""stablehlo.sort as a bottom-up merge sort in scf loops over tensors.

Each row along `dimension` is sorted on its own: the operands are transposed so the
sorted dimension is the last one and reshaped to [rows, n]. For every row a merge sort
orders a permutation of 0..n-1 (so several operands cost one sort), then each operand
is gathered through it. Merging takes from the left run unless the right element is
strictly less, so the sort is always stable (is_stable may be false; stable is a
valid answer then too). O(n log n) comparisons, each one the comparator region moved
in unchanged on rank-0 tensors, legalized later with the rest of the StableHLO.
"""

from __future__ import annotations

import math

from .._mlir import arith, ir, scf, tensor
from . import lowering
from .regions import move_body


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _min(a, b) -> ir.Value:
    return arith.MinUIOp(a, b).result


def _add(a, b) -> ir.Value:
    return arith.AddIOp(a, b).result


def _less(a, b) -> ir.Value:
    return arith.CmpIOp(arith.CmpIPredicate.ult, a, b).result


def _stablehlo(name: str, value, result_type, **attrs) -> ir.Value:
    return ir.Operation.create(f"stablehlo.{name}", results=[result_type], operands=[value],
                               attributes=attrs).result


def _to_rows(value, perm: list[int], rows: int, n: int) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    if perm != list(range(t.rank)):
        shape = [t.shape[p] for p in perm]
        value = _stablehlo("transpose", value, ir.RankedTensorType.get(shape, t.element_type),
                           permutation=ir.DenseI64ArrayAttr.get(perm))
    if ir.RankedTensorType(value.type).shape == [rows, n]:
        return value
    return _stablehlo("reshape", value, ir.RankedTensorType.get([rows, n], t.element_type))


def _from_rows(value, perm: list[int], result_type) -> ir.Value:
    t = ir.RankedTensorType(result_type)
    moved = ir.RankedTensorType.get([t.shape[p] for p in perm], t.element_type)
    if moved != value.type:
        value = _stablehlo("reshape", value, moved)
    if perm != list(range(t.rank)):
        inverse = [perm.index(i) for i in range(t.rank)]
        value = _stablehlo("transpose", value, result_type, permutation=ir.DenseI64ArrayAttr.get(inverse))
    return value


def rows_layout(op) -> tuple[list[int], int, int]:
    """How a sort's operands become [rows, n]: the permutation that puts the sorted
    dimension last, the number of rows and their length n."""
    shape = ir.RankedTensorType(op.results[0].type).shape
    rank = len(shape)
    # The attribute defaults to -1, the last dimension.
    dim = ir.IntegerAttr(op.attributes["dimension"]).value if "dimension" in op.attributes else -1
    dim = dim + rank if dim < 0 else dim
    n = shape[dim]
    rows = math.prod(shape) // n if n else 0
    return [i for i in range(rank) if i != dim] + [dim], rows, n


@lowering("stablehlo.sort")
def sort(op) -> None:
    types = [ir.RankedTensorType(r.type) for r in op.results]
    perm, rows, n = rows_layout(op)
    if n <= 1 or rows == 0:
        # Nothing to order: the comparator is never called.
        for result, operand in zip(op.results, op.operands):
            result.replace_all_uses_with(operand)
        op.erase()
        return
    with ir.InsertionPoint(op), op.location:
        inputs = [_to_rows(v, perm, rows, n) for v in op.operands]
        sorted_rows = _sort_rows(op, inputs, rows, n)
        results = [_from_rows(v, perm, t) for v, t in zip(sorted_rows, types)]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


def _sort_rows(op, inputs: list, rows: int, n: int) -> list:
    """Sort each row of the [rows, n] tensors `inputs` with `op`'s comparator."""
    index = ir.IndexType.get()
    elements = [ir.RankedTensorType(v.type).element_type for v in inputs]
    zero, one, size, last = _index(0), _index(1), _index(n), _index(n - 1)
    # The permutation being merged and its destination share one tensor of 2n: the
    # halves swap roles each pass. It and the comparator's rank-0 verdict are carried
    # through every loop, so both stay one buffer each, updated in place, rather than
    # an allocation per row or per comparison.
    work_type = ir.RankedTensorType.get([2 * n], index)
    verdict_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    carried = [tensor.EmptyOp([2 * n], index).result, tensor.EmptyOp([], verdict_type.element_type).result]
    outs = [tensor.EmptyOp([rows, n], e).result for e in elements]
    row_loop = scf.ForOp(zero, _index(rows), one, carried + outs)
    with ir.InsertionPoint(row_loop.body):
        row = row_loop.induction_variable
        work, verdict = row_loop.inner_iter_args[0], row_loop.inner_iter_args[1]
        outs = list(row_loop.inner_iter_args[2:])

        iota = scf.ForOp(zero, size, one, [work])
        with ir.InsertionPoint(iota.body):
            k = iota.induction_variable
            scf.YieldOp([tensor.InsertOp(k, iota.inner_iter_args[0], [k]).result])

        # while width < n: merge runs of `width` from half `src` into the other half.
        state = [index, index, work_type, verdict_type]
        passes = scf.WhileOp(state, [one, zero, iota.result, verdict])
        before = passes.before.blocks.append(*state)
        with ir.InsertionPoint(before):
            scf.ConditionOp(_less(before.arguments[0], size), list(before.arguments))
        after = passes.after.blocks.append(*state)
        with ir.InsertionPoint(after):
            width, src, work, verdict = after.arguments
            dst = arith.SubIOp(size, src).result
            step = _add(width, width)
            runs = scf.ForOp(zero, size, step, [work, verdict])
            with ir.InsertionPoint(runs.body):
                lo = runs.induction_variable
                mid, hi = _min(_add(lo, width), size), _min(_add(lo, step), size)
                merge = scf.ForOp(lo, hi, one, [lo, mid] + list(runs.inner_iter_args))
                with ir.InsertionPoint(merge.body):
                    _merge_step(op, merge, inputs, row, src, dst, mid, hi, last, one)
                scf.YieldOp(list(merge.results[2:]))
            scf.YieldOp([step, dst] + list(runs.results))
        src, work, verdict = passes.results[1], passes.results[2], passes.results[3]

        gather = scf.ForOp(zero, size, one, outs)
        with ir.InsertionPoint(gather.body):
            k = gather.induction_variable
            p = tensor.ExtractOp(work, [_add(src, k)]).result
            scf.YieldOp([tensor.InsertOp(tensor.ExtractOp(x, [row, p]).result, out, [row, k]).result
                         for x, out in zip(inputs, gather.inner_iter_args)])
        scf.YieldOp([work, verdict] + list(gather.results))
    return list(row_loop.results[2:])


def _element(x, row, column) -> ir.Value:
    """x[row, column] as a rank-0 tensor: a view, so no copy and no allocation."""
    element = ir.RankedTensorType(x.type).element_type
    if isinstance(element, ir.ComplexType):
        # Complex values do not reach LLVM through a strided rank-0 view: copy them.
        scalar = tensor.ExtractOp(x, [row, column]).result
        return tensor.FromElementsOp(ir.RankedTensorType.get([], element), [scalar]).result
    dynamic = ir.ShapedType.get_dynamic_size()
    return tensor.ExtractSliceOp(ir.RankedTensorType.get([], element), x, [row, column], [], [],
                                 [dynamic, dynamic], [1, 1], [1, 1]).result


def _merge_step(op, merge, inputs, row, src, dst, mid, hi, last, one) -> None:
    """One output element of a merge: the next of the left run at i or the right at j."""
    k = merge.induction_variable
    i, j, work, verdict = merge.inner_iter_args
    # An exhausted run's index may reach n; read in bounds and ignore the comparison.
    left = tensor.ExtractOp(work, [_add(src, _min(i, last))]).result
    right = tensor.ExtractOp(work, [_add(src, _min(j, last))]).result
    # The comparator's arguments are (lhs, rhs) per operand: is right < left?
    args = [_element(x, row, p) for x in inputs for p in (right, left)]
    got = []

    def terminate(values):
        written = ir.Operation.create("bufferization.materialize_in_destination", results=[verdict.type],
                                      operands=[values[0], verdict]).result
        got.extend([written, tensor.ExtractOp(written, []).result])

    move_body(op.regions[0], merge.body, args, terminate)
    verdict, right_less = got
    with ir.InsertionPoint(merge.body):
        right_first = arith.AndIOp(_less(j, hi),
                                   arith.OrIOp(arith.CmpIOp(arith.CmpIPredicate.uge, i, mid).result,
                                               right_less).result).result
        taken = arith.SelectOp(right_first, right, left).result
        scf.YieldOp([arith.SelectOp(right_first, i, _add(i, one)).result,
                     arith.SelectOp(right_first, _add(j, one), j).result,
                     tensor.InsertOp(taken, work, [_add(dst, k)]).result,
                     verdict])
