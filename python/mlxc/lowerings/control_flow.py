"""stablehlo.while, stablehlo.if and stablehlo.case as scf.while (scf.for when the
loop counts), scf.if and a chain of scf.if.

The predicates and the case index are rank-0 tensors; they become scalars through
`tensor.extract`. The region bodies move over unchanged.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import arith, ir, scf, stablehlo, tensor
from . import lowering
from .regions import move_body


def _scalar(value) -> ir.Value:
    return tensor.ExtractOp(value, []).result


def _replace(op, new_op) -> None:
    _replace_by_values(op, list(new_op.results))


def _replace_by_values(op, values: list) -> None:
    for old, new in zip(op.results, values):
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


def _block_argument(value, block) -> bool:
    return isinstance(value.owner, ir.Block) and value.owner == block


def _integer(value) -> int | None:
    """The value of a splat integer `stablehlo.constant`, else None."""
    const = irutil.defining_op(value)
    if const is None or const.name != "stablehlo.constant":
        return None
    attr = ir.DenseElementsAttr(const.attributes["value"])
    if not attr.is_splat or not isinstance(attr.get_splat_value(), ir.IntegerAttr):
        return None
    return ir.IntegerAttr(attr.get_splat_value()).value


def _is_one(value) -> bool:
    return _integer(value) == 1


def _counter(op) -> tuple[int, ir.Value, int, int] | None:
    """(k, bound, start, stop) when `op` is `for i in range(start, bound)` over its k-th carried value
    (lax.scan, lax.fori_loop with constant bounds): the condition is only `i < bound`, a
    signed comparison, the body's new `i` is `i + 1`, and start and bound are constants
    with start < bound.

    The loop must run at least once, and visibly so: otherwise its results may be its
    initial buffers, and freeing those after the loop takes a run-time alias check that
    the bare-pointer LLVM lowering cannot compile (scf.while, which copies the carried
    values each iteration, never hands back its initial buffers)."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ops = [o.operation for o in cond.operations]
    if any(o.name != "stablehlo.constant" for o in ops[:-2]) or len(ops) < 2:
        return None
    compare, ret = ops[-2], ops[-1]
    if compare.name != "stablehlo.compare" or list(ret.operands) != [compare.result]:
        return None
    direction = stablehlo.ComparisonDirectionAttr(compare.attributes["comparison_direction"]).value
    ctype = (stablehlo.ComparisonTypeAttr(compare.attributes["compare_type"]).value
             if "compare_type" in compare.attributes else "SIGNED")
    i, bound = compare.operands
    element = ir.RankedTensorType(i.type).element_type
    if (direction != "LT" or ctype != "SIGNED" or not _block_argument(i, cond)
            or not isinstance(element, ir.IntegerType) or not element.is_signless
            or element.width < 8 or _block_argument(bound, cond)):
        return None
    k = i.arg_number
    start, stop = _integer(op.operands[k]), _integer(bound)
    if start is None or stop is None or start >= stop:
        return None
    step = irutil.defining_op(list(body.operations)[-1].operands[k])
    if step is None or step.name != "stablehlo.add" or step.block != body:
        return None
    lhs, rhs = step.operands
    if not ((_block_argument(lhs, body) and lhs.arg_number == k and _is_one(rhs))
            or (_block_argument(rhs, body) and rhs.arg_number == k and _is_one(lhs))):
        return None
    return k, bound, start, stop


def _for_loop(op, k: int, bound, start: int, stop: int) -> None:
    """`op` as scf.for over its counter. With no counter to carry, compare and yield,
    and no before region to forward the carried values through, a value the body
    computes afresh becomes the next iteration's buffer with no copy (scf.while copies
    such a value in its before region every iteration)."""
    constant = irutil.defining_op(bound)
    if constant is not None and constant.block == op.regions[0].blocks[0]:
        constant.detach_from_parent()  # the condition holds only constants: move it out
        ir.InsertionPoint(op).insert(constant)
    carried = [v for j, v in enumerate(op.operands) if j != k]
    counter_type = bound.type
    element = ir.RankedTensorType(counter_type).element_type
    index = ir.IndexType.get()
    with ir.InsertionPoint(op), op.location:
        bounds = [arith.ConstantOp(index, n).result for n in (start, stop, 1)]
        loop = scf.ForOp(*bounds, carried)
    body = loop.body
    with ir.InsertionPoint(body), op.location:
        i = arith.IndexCastOp(element, body.arguments[0]).result
        counter = tensor.FromElementsOp(counter_type, [i]).result
    inner = list(body.arguments)[1:]
    arguments = inner[:k] + [counter] + inner[k:]
    move_body(op.regions[1], body, arguments,
              lambda vals: scf.YieldOp(_loop_yield(vals[:k] + vals[k + 1:], inner, body)))
    results = list(loop.results)
    results.insert(k, bound)  # the loop ran, so it ended with i == bound
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


@lowering("stablehlo.while")
def while_(op) -> None:
    counted = _counter(op)
    if counted is not None:
        _for_loop(op, *counted)
        return
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


def _if_chain(index, types: list, count: int) -> list:
    """scf.if index == 0, else if index == 1, ... for `count` > 1 branches (the last one
    the innermost else), built at the current insertion point; the ifs, outermost first."""
    ifs, point = [], ir.InsertionPoint.current
    for k in range(count - 1):
        with point:
            k_ = arith.ConstantOp(ir.IndexType.get(), k).result
            branch = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, index, k_).result, types,
                              has_else=True)
            if ifs:
                scf.YieldOp(list(branch.results))
        ifs.append(branch)
        point = ir.InsertionPoint(branch.else_block)
    return ifs


@lowering("stablehlo.case")
def case(op) -> None:
    # A chain of scf.if, not scf.index_switch: one-shot bufferization misses the
    # conflicts of a switch's tensor results (a branch wrote its result into a buffer
    # that a later op then overwrote in place while the result was still to be read:
    # `c = case(...); return c, c * 3` returned c * 3 twice), and gets those of scf.if
    # right. LLVM turns the compares of one value back into a switch.
    count = len(op.regions)
    if count == 1:  # the one branch runs whatever the index
        body = [o.operation for o in op.regions[0].blocks[0].operations]
        for o in body[:-1]:
            o.move_before(op)
        _replace_by_values(op, list(body[-1].operands))
        return
    with ir.InsertionPoint(op), op.location:
        index = arith.IndexCastOp(ir.IndexType.get(), _scalar(op.operands[0])).result
        # An index outside [0, count) runs the last branch (the spec): the last else.
        ifs = _if_chain(index, [r.type for r in op.results], count)
    blocks = [b.then_block for b in ifs] + [ifs[-1].else_block]
    for region, block in zip(op.regions, blocks):
        move_body(region, block, [], lambda vals: scf.YieldOp(vals))
    _replace(op, ifs[0])
