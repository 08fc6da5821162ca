"""Building blocks for lowerings that rewrite a StableHLO op into explicit loops.

Loops carry tensors as `scf.for` iter_args and update them with `tensor.insert`, so
one-shot bufferization writes a single result buffer in place. A StableHLO region
(a scatter's update computation, a select) is applied per element either as one
`arith` op, when it is a single simple op, or by moving its ops into the loop on
rank-0 tensors, which `stablehlo-legalize-to-linalg` then lowers where they stand.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from .._mlir import arith, ir, scf, stablehlo, tensor


def index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def boolean(value: bool) -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), int(value)).result


def static_shape(value: ir.Value) -> Optional[list[int]]:
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    return list(t.shape)


def loop_nest(sizes: Sequence[int], carried: Sequence[ir.Value],
              body: Callable[[list, list], list]) -> list:
    """`body(ivs, carried) -> new carried` inside one `scf.for` per size, outermost
    first; returns the carried values after the nest. A size-1 dimension gets the
    constant 0 instead of a loop."""
    def build(level: int, ivs: list, values: list) -> list:
        if level == len(sizes):
            return list(body(ivs, values))
        if sizes[level] == 1:
            return build(level + 1, ivs + [index(0)], values)
        loop = scf.ForOp(index(0), index(sizes[level]), index(1), list(values))
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(build(level + 1, ivs + [loop.induction_variable],
                              list(loop.inner_iter_args)))
        return list(loop.results)

    return build(0, [], list(carried))


def if_else(cond: ir.Value, values: Sequence[ir.Value],
            then: Callable[[], list]) -> list:
    """`then()` when `cond` holds, else `values` unchanged (same types)."""
    op = scf.IfOp(cond, [v.type for v in values], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(list(then()))
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(list(values))
    return list(op.results)


def all_of(conds: Sequence[ir.Value]) -> ir.Value:
    if not conds:
        return boolean(True)
    out = conds[0]
    for c in conds[1:]:
        out = arith.AndIOp(out, c).result
    return out


def in_range(i: ir.Value, low: int, high: int) -> ir.Value:
    """low <= i <= high, as a signed comparison of indices."""
    ge = arith.CmpIOp(arith.CmpIPredicate.sge, i, index(low)).result
    le = arith.CmpIOp(arith.CmpIPredicate.sle, i, index(high)).result
    return arith.AndIOp(ge, le).result


# ---------------------------------------------------------------- scalar regions

def _is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType)


def _is_signless_int(t: ir.Type, min_width: int = 1) -> bool:
    return isinstance(t, ir.IntegerType) and t.is_signless and t.width >= min_width


# The binary StableHLO ops whose per-element meaning is one arith op, per element kind.
# Complex elements are left to the general path. arith takes only signless integers:
# lowerings apply these to unsigned elements through `signless` views of their tensors.
_FLOAT_OPS = {"stablehlo.add": "arith.addf", "stablehlo.multiply": "arith.mulf",
              "stablehlo.maximum": "arith.maximumf", "stablehlo.minimum": "arith.minimumf"}
_BITWISE_OPS = {"stablehlo.and": "arith.andi", "stablehlo.or": "arith.ori",
                "stablehlo.xor": "arith.xori"}
_INT_OPS = {"stablehlo.add": "arith.addi", "stablehlo.multiply": "arith.muli",
            "stablehlo.maximum": "arith.maxsi", "stablehlo.minimum": "arith.minsi",
            **_BITWISE_OPS}
_UINT_OPS = {**_INT_OPS, "stablehlo.maximum": "arith.maxui", "stablehlo.minimum": "arith.minui"}
# i1 (pred) orders false below true; add on pred is rewritten to or before this runs.
_BOOL_OPS = {"stablehlo.maximum": "arith.ori", "stablehlo.minimum": "arith.andi",
             "stablehlo.multiply": "arith.andi", **_BITWISE_OPS}


def _is_unsigned(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.is_unsigned


def _scalar_op_table(t: ir.Type) -> dict:
    if _is_float(t):
        return _FLOAT_OPS
    if _is_signless_int(t, 2):
        return _INT_OPS
    if _is_unsigned(t):
        return _UINT_OPS
    if _is_signless_int(t):
        return _BOOL_OPS
    return {}


def _element_type(v: ir.Value) -> Optional[ir.Type]:
    t = v.type
    if isinstance(t, ir.RankedTensorType) and t.rank == 0:
        return t.element_type
    return None


def _compare_predicate(op, t: ir.Type):
    """The arith predicate of a `stablehlo.compare` on scalars of type `t`, if simple."""
    direction = stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value
    ctype = (stablehlo.ComparisonTypeAttr(op.attributes["compare_type"]).value
             if "compare_type" in op.attributes else None)
    if _is_float(t) and ctype in (None, "FLOAT"):
        preds = {"EQ": "OEQ", "NE": "UNE", "GE": "OGE", "GT": "OGT", "LE": "OLE", "LT": "OLT"}
        return "arith.cmpf", getattr(arith.CmpFPredicate, preds[direction])
    if _is_signless_int(t, 2) and ctype in (None, "SIGNED"):
        preds = {"EQ": "eq", "NE": "ne", "GE": "sge", "GT": "sgt", "LE": "sle", "LT": "slt"}
        return "arith.cmpi", getattr(arith.CmpIPredicate, preds[direction])
    if (_is_unsigned(t) or _is_signless_int(t) and t.width == 1) and ctype in (None, "UNSIGNED"):
        preds = {"EQ": "eq", "NE": "ne", "GE": "uge", "GT": "ugt", "LE": "ule", "LT": "ult"}
        return "arith.cmpi", getattr(arith.CmpIPredicate, preds[direction])
    return None


def signless(value: ir.Value) -> ir.Value:
    """`value` with unsigned integer elements reinterpreted as signless, for arith.

    The bitcasts (and the one back, `with_type`) vanish once legalization has made
    every type signless, so the loops still update the original buffer in place.
    """
    t = value.type
    if not _is_unsigned(t.element_type):
        return value
    view = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(t.element_type.width))
    return ir.Operation.create("stablehlo.bitcast_convert", results=[view],
                               operands=[value]).result


def with_type(value: ir.Value, t: ir.Type) -> ir.Value:
    """The inverse of `signless`: `value` reinterpreted as type `t`."""
    if value.type == t:
        return value
    return ir.Operation.create("stablehlo.bitcast_convert", results=[t], operands=[value]).result


def scalar_plan(region) -> Optional[list]:
    """How to compute each result of `region` with plain scalar ops, or None when the
    region is not that simple. Each entry is ("arg", i) — the result is argument i —
    or (op name, predicate or None, i, j) — one op on arguments i and j."""
    block = region.blocks[0]
    ops = list(block.operations)
    args = list(block.arguments)
    if not ops or ops[-1].name != "stablehlo.return":
        return None

    def arg_index(v) -> Optional[int]:
        for i, a in enumerate(args):
            if a == v:
                return i
        return None

    computed = {}
    for o in ops[:-1]:
        o = o.operation
        if len(o.operands) != 2 or len(o.results) != 1 or len(o.regions) != 0:
            return None
        i, j = arg_index(o.operands[0]), arg_index(o.operands[1])
        t = _element_type(o.operands[0])
        if i is None or j is None or t is None:
            return None
        if o.name == "stablehlo.compare":
            pred = _compare_predicate(o, t)
            if pred is None:
                return None
            computed[o.results[0]] = (pred[0], pred[1], i, j)
        elif o.name in _scalar_op_table(t):
            computed[o.results[0]] = (_scalar_op_table(t)[o.name], None, i, j)
        else:
            return None
    plan = []
    for v in ops[-1].operands:
        if arg_index(v) is not None:
            plan.append(("arg", arg_index(v)))
        elif v in computed:
            plan.append(computed[v])
        else:
            return None
    return plan


def apply_region(region, scalars: Sequence[ir.Value], plan: Optional[list]) -> list:
    """The results of `region` applied to scalar arguments, at the insertion point.

    With a plan (from `scalar_plan`) this emits arith ops; otherwise it moves the
    region's ops here, feeding them rank-0 tensors, so the region is consumed: call it
    once per region.
    """
    if plan is not None:
        out = []
        for step in plan:
            if step[0] == "arg":
                out.append(scalars[step[1]])
                continue
            name, pred, i, j = step
            a, b = scalars[i], scalars[j]
            if name == "arith.cmpf":
                out.append(arith.CmpFOp(pred, a, b).result)
            elif name == "arith.cmpi":
                out.append(arith.CmpIOp(pred, a, b).result)
            else:
                out.append(ir.Operation.create(name, results=[a.type], operands=[a, b]).result)
        return out
    block = region.blocks[0]
    for arg, scalar in zip(block.arguments, scalars):
        arg.replace_all_uses_with(tensor.FromElementsOp(arg.type, [scalar]).result)
    ops = list(block.operations)
    ip = ir.InsertionPoint.current
    for o in ops[:-1]:
        o.operation.detach_from_parent()
        ip.insert(o.operation)
    return [tensor.ExtractOp(v, []).result for v in ops[-1].operands]
