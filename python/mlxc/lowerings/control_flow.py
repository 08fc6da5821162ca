"""stablehlo.while, stablehlo.if and stablehlo.case as scf.while, scf.if and
scf.index_switch.

The predicates and the case index are rank-0 tensors; they become scalars through
`tensor.extract`. The region bodies move over unchanged.
"""

from __future__ import annotations

from .._mlir import arith, ir, scf, tensor
from . import lowering
from .regions import move_body


def _scalar(value) -> ir.Value:
    return tensor.ExtractOp(value, []).result


def _replace(op, new_op) -> None:
    for old, new in zip(op.results, new_op.results):
        old.replace_all_uses_with(new)
    op.erase()


# Ops whose result may share its buffer with an operand once legalized (views, updates
# in place) or that hold regions: their value may already live in a carried buffer.
_MAY_ALIAS = {"stablehlo.reshape", "stablehlo.slice", "stablehlo.dynamic_slice",
              "stablehlo.dynamic_update_slice", "stablehlo.scatter", "stablehlo.bitcast_convert",
              "stablehlo.get_tuple_element", "stablehlo.custom_call"}


def _fresh(value, block) -> bool:
    """Whether `value` is a new tensor computed by a plain StableHLO op in `block`."""
    if not isinstance(value.owner, ir.Operation) and not hasattr(value.owner, "operation"):
        return False  # a block argument
    owner = value.owner.operation if hasattr(value.owner, "operation") else value.owner
    return (owner.name.startswith("stablehlo.") and owner.name not in _MAY_ALIAS
            and len(owner.regions) == 0 and owner.block == block)


def _loop_yield(values: list, carried: list, block) -> list:
    """The values a loop body yields, a new scalar bound for its carried buffer."""
    # One-shot bufferization keeps a carried tensor in place only when the yielded
    # value is in the buffer of its iteration argument; otherwise it allocates and
    # copies the tensor every iteration. A materialize_in_destination into the argument
    # lets eliminate-empty-tensors make the producing op write there directly, but it
    # must bufferize in place, or the compile fails. We use it only where nothing can
    # stand in the way: a fresh rank-0 value (a loop counter; never tiled into a loop
    # that reads the old value while writing the new), yielded once, into an argument
    # not yielded elsewhere. Larger tensors are yielded as they are: an elementwise
    # update tiled into scf.for, reading the carried tensor while writing its buffer, is
    # a conflict one-shot-bufferize cannot resolve once the empty tensor is gone. Updates
    # through dynamic_update_slice (lax.scan's outputs) stay in place regardless.
    out = []
    for value, arg in zip(values, carried):
        if (ir.RankedTensorType(value.type).rank == 0 and _fresh(value, block)
                and values.count(value) == 1 and arg not in values):
            value = _materialize(value, arg)
        out.append(value)
    return out


def _materialize(value, destination) -> ir.Value:
    return ir.Operation.create("bufferization.materialize_in_destination", results=[value.type],
                               operands=[value, destination]).result


@lowering("stablehlo.while")
def while_(op) -> None:
    types = [r.type for r in op.results]
    # One more carried value, a rank-0 i1 the condition is computed into, so that
    # evaluating it allocates nothing per iteration; the body passes it on untouched.
    predicate = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    with ir.InsertionPoint(op), op.location:
        scratch = tensor.EmptyOp([], predicate.element_type).result
        loop = scf.WhileOp(types + [predicate], list(op.operands) + [scratch])
        before = loop.before.blocks.append(*types, predicate)
        after = loop.after.blocks.append(*types, predicate)
    carried_before, carried_after = list(before.arguments)[:-1], list(after.arguments)[:-1]

    def condition(vals):
        verdict = _materialize(vals[0], before.arguments[len(types)])
        # scf.condition forwards the values the condition saw to the body, which is
        # exactly stablehlo.while's contract: both regions see the same carried values.
        scf.ConditionOp(_scalar(verdict), carried_before + [verdict])

    move_body(op.regions[0], before, carried_before, condition)
    move_body(op.regions[1], after, carried_after,
              lambda vals: scf.YieldOp(_loop_yield(vals, carried_after, after)
                                       + [after.arguments[len(types)]]))
    for old, new in zip(op.results, loop.results):
        old.replace_all_uses_with(new)
    op.erase()


@lowering("stablehlo.if")
def if_(op) -> None:
    types = [r.type for r in op.results]
    with ir.InsertionPoint(op), op.location:
        branch = scf.IfOp(_scalar(op.operands[0]), types, has_else=True)
    for region, block in ((op.regions[0], branch.then_block), (op.regions[1], branch.else_block)):
        move_body(region, block, [], lambda vals: scf.YieldOp(vals))
    _replace(op, branch)


@lowering("stablehlo.case")
def case(op) -> None:
    types = [r.type for r in op.results]
    count = len(op.regions)
    with ir.InsertionPoint(op), op.location:
        index = arith.IndexCastOp(ir.IndexType.get(), _scalar(op.operands[0])).result
        # An index outside [0, count) runs the last branch (the spec): that branch is
        # the switch's default, the others its cases.
        switch = scf.IndexSwitchOp(types, index, list(range(count - 1)))
    branches = [switch.regions[i + 1] for i in range(count - 1)] + [switch.regions[0]]
    for region, target in zip(op.regions, branches):
        move_body(region, target.blocks[0], [], lambda vals: scf.YieldOp(vals))
    _replace(op, switch)
