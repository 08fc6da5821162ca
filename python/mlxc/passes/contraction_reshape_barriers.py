"""mlxc-contraction-reshape-barriers: reshapes at a contraction's edges kept out of fusion.

mlxc-canonical-dot-general gives every product one dimension of each kind, reading
and writing the program's tensors through reshapes (`[2,128,256]` as `[256,256]`).
`linalg-fuse-elementwise-ops` folds every single-use reshape into the linalg op on its
other side by expanding that op's iteration space, a named matmul included: the
matmul came back as a rank-3 `linalg.generic` contraction, which no kernel or matmul
schedule takes and into whose operands the same pass then fuses elementwise
producers, recomputed once per output column. The pass has no option to spare
contractions, so, around it, a reshape whose source is a contraction's result or whose
result is a contraction's input is written as a `tensor.reshape` (which it does not
fold); `remove=1`, after fusion, restores the original reshape. The operands and
results of a contraction thus keep their shape: only elementwise ops change rank.
"""

from __future__ import annotations

import numpy as np

from .. import irutil
from .._mlir import ir, linalg
from . import PythonPass

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")
_SAVED = "mlxc.reshape"  # the original op's name and attributes, on the barrier


def _is_contraction(op) -> bool:
    if op is None or not op.name.startswith("linalg."):
        return False
    try:
        return bool(linalg.isa_contraction_op(op))
    except (TypeError, ValueError):
        return False


def _at_contraction(reshape) -> bool:
    if _is_contraction(irutil.defining_op(reshape.operands[0])):
        return True
    for use in reshape.result.uses:
        user = irutil.as_operation(use.owner)
        if _is_contraction(user) and use.operand_number < irutil.dps_segments(user)[0]:
            return True
    return False


def _insert(op) -> None:
    t = ir.RankedTensorType(op.result.type)
    if not t.has_static_shape or len(op.operands) != 1:
        return
    saved = ir.DictAttr.get({"name": ir.StringAttr.get(op.name),
                             **{name: op.attributes[name] for name in op.attributes}})
    i64 = ir.IntegerType.get_signless(64)

    def build():
        shape_type = ir.RankedTensorType.get([t.rank], i64)
        shape = ir.Operation.create(
            "arith.constant", results=[shape_type],
            attributes={"value": ir.DenseElementsAttr.get(
                np.array(t.shape, "int64"), type=shape_type)}).result
        barrier = ir.Operation.create("tensor.reshape", results=[t],
                                      operands=[op.operands[0], shape])
        barrier.attributes[_SAVED] = saved
        return barrier.result

    irutil.replace_op(op, build)


def _remove(op) -> None:
    saved = ir.DictAttr(op.attributes[_SAVED])
    name = ir.StringAttr(saved["name"]).value
    attrs = {saved[i].name: saved[i].attr for i in range(len(saved)) if saved[i].name != "name"}
    shape = irutil.defining_op(op.operands[1])

    def build():
        return ir.Operation.create(name, results=[op.result.type], operands=[op.operands[0]],
                                   attributes=attrs).result

    irutil.replace_op(op, build)
    if shape is not None and not list(shape.result.uses):
        shape.erase()


def run(module, remove: str = "0") -> None:
    if remove not in ("0", "false", ""):
        for op in irutil.ops_named(module, "tensor.reshape"):
            if _SAVED in op.attributes:
                _remove(op)
        return
    for op in irutil.ops_named(module, *_RESHAPES):
        if _at_contraction(op):
            _insert(op)


PASS = PythonPass(
    argument="mlxc-contraction-reshape-barriers",
    summary="reshapes feeding or reading a contraction written as tensor.reshape, which "
            "linalg-fuse-elementwise-ops does not fold into it (remove=1 restores them)",
    run=run,
    options={"remove": "1: turn the barriers back into the reshapes they replaced"},
)
