"""mlxc-static-real-dynamic-slice: `x[i:i+n]` with a data-dependent `i` as a dynamic_slice.

Under shape polymorphism JAX exports `x[i:i+n]` as
`stablehlo.real_dynamic_slice %x, %start, %start + [n, ...], %ones`: the result size is
`limit - start`, which shape refinement cannot see to be `n` when `start` comes from
the data, so the program keeps a `?` dimension and cannot be compiled. When the limit
is the start plus a constant and every stride is 1, the op is a `dynamic_slice` of
constant sizes, which is what we rewrite it to. (real_dynamic_slice requires its
bounds to be in range, where the clamping of dynamic_slice changes nothing.)

The pass does nothing unless such an op is present; when one is, it first folds and
deduplicates the program (canonicalize, cse) so that the two computations of `start`
become one value and the limit's offset a constant.
"""

from __future__ import annotations

import numpy as np

from .. import irutil
from .._mlir import ir, passmanager
from . import PythonPass

_OP = "stablehlo.real_dynamic_slice"


def _constant(value) -> np.ndarray | None:
    op = value.owner
    if getattr(op, "name", None) != "stablehlo.constant":
        return None
    attr = ir.DenseElementsAttr(op.attributes["value"])
    try:
        return np.array(attr)
    except Exception:
        return None


def _offset_from(limit, start) -> np.ndarray | None:
    """`c` when `limit` is `start + c` (either order) with `c` constant."""
    op = limit.owner
    if getattr(op, "name", None) != "stablehlo.add":
        return None
    a, b = op.operands
    if a == start:
        return _constant(b)
    if b == start:
        return _constant(a)
    return None


def _rewrite(op) -> bool:
    operand, start, limit, strides = op.operands
    ones = _constant(strides)
    sizes = _offset_from(limit, start)
    if ones is None or sizes is None or not np.all(ones == 1):
        return False
    sizes = np.broadcast_to(sizes, ones.shape).astype(np.int64)
    start_type = ir.RankedTensorType(start.type)
    scalar = ir.RankedTensorType.get([], start_type.element_type)
    one = ir.RankedTensorType.get([1], start_type.element_type)
    result = ir.RankedTensorType.get(list(sizes), ir.RankedTensorType(operand.type).element_type)
    with ir.InsertionPoint(op), op.location:
        indices = []
        for d in range(len(sizes)):
            piece = ir.Operation.create("stablehlo.slice", results=[one], operands=[start], attributes={
                "start_indices": ir.DenseI64ArrayAttr.get([d]),
                "limit_indices": ir.DenseI64ArrayAttr.get([d + 1]),
                "strides": ir.DenseI64ArrayAttr.get([1])}).result
            indices.append(ir.Operation.create("stablehlo.reshape", results=[scalar],
                                               operands=[piece]).result)
        sliced = ir.Operation.create("stablehlo.dynamic_slice", results=[result],
                                     operands=[operand] + indices,
                                     attributes={"slice_sizes": ir.DenseI64ArrayAttr.get(
                                         [int(s) for s in sizes])}).result
        if sliced.type != op.result.type:
            # Keep the op's declared (partly dynamic) type for its users; shape
            # refinement makes them static afterwards.
            sliced = ir.Operation.create("stablehlo.convert", results=[op.result.type],
                                         operands=[sliced]).result
    op.result.replace_all_uses_with(sliced)
    op.erase()
    return True


def run(module) -> None:
    def pending():
        return [o for o in irutil.walk(module) if o.name == _OP
                and not ir.RankedTensorType(o.result.type).has_static_shape]

    if not pending():
        return
    passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(module)
    changed = [_rewrite(o) for o in pending()]
    if any(changed):
        passmanager.PassManager.parse(
            "builtin.module(stablehlo-refine-shapes,func.func(stablehlo-canonicalize-dynamism))"
        ).run(module)


PASS = PythonPass(
    argument="mlxc-static-real-dynamic-slice",
    summary="Rewrite real_dynamic_slice(x, s, s + c, 1) into a dynamic_slice of constant sizes",
    run=run,
)
