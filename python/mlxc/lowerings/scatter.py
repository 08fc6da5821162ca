"""stablehlo.scatter as a loop nest over the update windows.

For each scatter position of `updates` (its dimensions outside update_window_dims) the
lowering reads the start index from scatter_indices, checks that the whole update
window fits in the operand and, if it does, applies the update computation to every
element of the window, in order. The loops are the scatter positions outermost, then
the window: the order XLA applies updates in, which decides the result when indices
repeat. A window that does not fit is skipped entirely, as XLA does (JAX's
mode="drop"; "clip" clamps the indices before the scatter).
"""

from __future__ import annotations

from .._mlir import arith, ir, stablehlo, tensor
from ..errors import CompileError
from . import lowering
from ._loops import (all_of, apply_region, if_else, in_range, index, loop_nest, scalar_plan,
                     signless, static_shape, with_type)


def _signless_indices(op, indices: ir.Value) -> ir.Value:
    """scatter_indices with signless elements: arith casts only take those, and
    unsigned types are only made signless after legalization."""
    t = indices.type
    if t.element_type.is_signless:
        return indices
    # Zero-extend to i64 so that every unsigned index keeps its value (a huge ui64
    # turns negative, which is out of bounds either way).
    wide = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(64))
    return ir.Operation.create("stablehlo.convert", results=[wide], operands=[indices]).result


@lowering("stablehlo.scatter")
def scatter(op) -> None:
    n = len(op.results)
    inputs = list(op.operands[:n])
    updates = list(op.operands[n + 1:])
    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    operand_shape = static_shape(inputs[0])
    update_shape = static_shape(updates[0])
    index_shape = static_shape(op.operands[n])
    if operand_shape is None or update_shape is None or index_shape is None:
        raise CompileError.at(op, "mlxc lowers stablehlo.scatter only with static shapes")
    block = op.regions[0].blocks[0]
    for i, arg in enumerate(block.arguments):
        expected = ir.RankedTensorType.get([], inputs[i % n].type.element_type)
        if arg.type != expected:
            raise CompileError.at(op, f"stablehlo.scatter: update computation argument {i} "
                                      f"is {arg.type}; mlxc expects {expected}")

    update_window_dims = list(dims.update_window_dims)
    inserted = list(dims.inserted_window_dims)
    input_batching = list(dims.input_batching_dims)
    index_batching = list(dims.scatter_indices_batching_dims)
    to_operand = list(dims.scattered_dims_to_operand_dims)
    index_vector_dim = dims.index_vector_dim
    rank = len(operand_shape)

    scatter_dims = [d for d in range(len(update_shape)) if d not in update_window_dims]
    # Operand dimensions the window spans, in order: the j-th is update_window_dims[j].
    window_dims = [d for d in range(rank) if d not in inserted and d not in input_batching]
    window_size = [1] * rank
    for j, d in enumerate(window_dims):
        window_size[d] = update_shape[update_window_dims[j]]

    plan = scalar_plan(op.regions[0])

    with op.location, ir.InsertionPoint(op):
        indices = _signless_indices(op, op.operands[n])
        if plan is not None:  # arith ops: unsigned elements seen as signless
            inputs = [signless(v) for v in inputs]
            updates = [signless(v) for v in updates]

        def index_position(scatter_ivs: list, component: int) -> list:
            """Where component `component` of a start index lies in scatter_indices."""
            pos, it = [], iter(scatter_ivs)
            for d in range(len(index_shape)):
                pos.append(index(component) if d == index_vector_dim else next(it))
            return pos

        def per_position(scatter_ivs: list, results: list) -> list:
            start = [None] * rank  # None: 0, no arithmetic needed
            fits = []
            for k, d in enumerate(to_operand):
                raw = tensor.ExtractOp(indices, index_position(scatter_ivs, k)).result
                start[d] = arith.IndexCastOp(ir.IndexType.get(), raw).result
                fits.append(in_range(start[d], 0, operand_shape[d] - window_size[d]))
            for operand_dim, index_dim in zip(input_batching, index_batching):
                # scatter_ivs skips index_vector_dim, the scatter_indices dimensions do not.
                start[operand_dim] = scatter_ivs[index_dim - (index_dim > index_vector_dim)]

            def apply_window() -> list:
                def per_element(window_ivs: list, values: list) -> list:
                    at = [s if s is not None else index(0) for s in start]
                    for j, d in enumerate(window_dims):
                        at[d] = (window_ivs[j] if start[d] is None
                                 else arith.AddIOp(start[d], window_ivs[j]).result)
                    update_at = [None] * len(update_shape)
                    for d, iv in zip(scatter_dims, scatter_ivs):
                        update_at[d] = iv
                    for d, iv in zip(update_window_dims, window_ivs):
                        update_at[d] = iv
                    current = [tensor.ExtractOp(v, at).result for v in values]
                    new = [tensor.ExtractOp(u, update_at).result for u in updates]
                    combined = apply_region(op.regions[0], current + new, plan)
                    return [tensor.InsertOp(c, v, at).result for c, v in zip(combined, values)]

                return loop_nest([window_size[d] for d in window_dims], results, per_element)

            return if_else(all_of(fits), results, apply_window)

        out = loop_nest([update_shape[d] for d in scatter_dims], inputs, per_position)
        out = [with_type(v, r.type) for v, r in zip(out, op.results)]
    for old, new in zip(op.results, out):
        old.replace_all_uses_with(new)
    op.erase()
