"""stablehlo.select_and_scatter as a loop nest over the source elements.

The result starts as init_value everywhere. For each element of `source`, a loop over
its window of the (padded) operand picks one position with the select computation —
the first in-bounds element, replaced by each later one that select does not prefer
to it — and the scatter computation then combines the source element into the result
there. Padding is never selected (XLA's semantics); a window made only of padding
scatters nothing.
"""

from __future__ import annotations

from .._mlir import arith, ir, tensor
from ..errors import CompileError
from . import lowering
from ._loops import (all_of, apply_region, boolean, if_else, in_range, index, loop_nest,
                     scalar_plan, signless, static_shape, with_type)


def _i64_list(op, name: str, default: list[int]) -> list[int]:
    if name not in op.attributes:
        return default
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


@lowering("stablehlo.select_and_scatter")
def select_and_scatter(op) -> None:
    operand, source, init = op.operands[0], op.operands[1], op.operands[2]
    shape, source_shape = static_shape(operand), static_shape(source)
    if shape is None or source_shape is None:
        raise CompileError.at(op, "mlxc lowers stablehlo.select_and_scatter only with "
                                  "static shapes")
    rank = len(shape)
    window = _i64_list(op, "window_dimensions", [1] * rank)
    strides = _i64_list(op, "window_strides", [1] * rank)
    pad_low = [0] * rank
    if "padding" in op.attributes:
        padding = ir.DenseIntElementsAttr(op.attributes["padding"])
        pad_low = [int(padding[2 * d]) for d in range(rank)]
    element = operand.type.element_type
    select_region, scatter_region = op.regions[0], op.regions[1]
    for region, what in ((select_region, "select"), (scatter_region, "scatter")):
        for i, arg in enumerate(region.blocks[0].arguments):
            if arg.type != ir.RankedTensorType.get([], element):
                raise CompileError.at(op, f"stablehlo.select_and_scatter: {what} argument "
                                          f"{i} is {arg.type}; mlxc expects tensor<{element}>")
    select_plan, scatter_plan = scalar_plan(select_region), scalar_plan(scatter_region)
    # Both regions as arith ops, on signless views of unsigned elements; or both as
    # moved StableHLO ops on the elements as they are (the scalars flow between them).
    as_arith = select_plan is not None and scatter_plan is not None
    if not as_arith and isinstance(element, ir.IntegerType) and element.is_unsigned:
        select_plan = scatter_plan = None
    # Only dimensions with padding can put a window element outside the operand.
    may_leave = [pad_low[d] > 0 or (source_shape[d] - 1) * strides[d] + window[d] > shape[d]
                 for d in range(rank)]
    result_type = op.results[0].type

    with op.location, ir.InsertionPoint(op):
        if as_arith:
            operand, source, init = signless(operand), signless(source), signless(init)
        filled_type = ir.RankedTensorType.get(shape, init.type.element_type)
        filled = ir.Operation.create(
            "stablehlo.broadcast_in_dim", results=[filled_type], operands=[init],
            attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])}).result
        # Any value of the element type, to start the selection before it has one.
        placeholder = tensor.ExtractOp(init, []).result

        def per_source(source_ivs: list, carried: list) -> list:
            (result,) = carried

            def per_window_element(window_ivs: list, state: list) -> list:
                best, found, best_at = state[0], state[1], state[2:]
                at = []
                for d in range(rank):
                    base = source_ivs[d]
                    if strides[d] != 1:
                        base = arith.MulIOp(base, index(strides[d])).result
                    offset = window_ivs[d]
                    if pad_low[d] != 0:
                        offset = arith.SubIOp(offset, index(pad_low[d])).result
                    at.append(arith.AddIOp(base, offset).result)
                inside = all_of([in_range(i, 0, shape[d] - 1) for d, i in enumerate(at)
                                 if may_leave[d]])

                def consider() -> list:
                    value = tensor.ExtractOp(operand, at).result
                    (keep,) = apply_region(select_region, [best, value], select_plan)
                    take = arith.OrIOp(arith.XOrIOp(found, boolean(True)).result,
                                       arith.XOrIOp(keep, boolean(True)).result).result
                    return ([arith.SelectOp(take, value, best).result, boolean(True)]
                            + [arith.SelectOp(take, i, j).result for i, j in zip(at, best_at)])

                return if_else(inside, state, consider)

            state = loop_nest(window, [placeholder, boolean(False)] + [index(0)] * rank,
                              per_window_element)
            found, best_at = state[1], state[2:]

            def scatter_one() -> list:
                current = tensor.ExtractOp(result, best_at).result
                value = tensor.ExtractOp(source, source_ivs).result
                (combined,) = apply_region(scatter_region, [current, value], scatter_plan)
                return [tensor.InsertOp(combined, result, best_at).result]

            return if_else(found, [result], scatter_one)

        (out,) = loop_nest(source_shape, [filled], per_source)
        out = with_type(out, result_type)
    op.results[0].replace_all_uses_with(out)
    op.erase()
