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
fold); `remove=1`, after fusion, makes it a collapse or expansion again, of its
source as it is then. The operands and
results of a contraction thus keep their shape: only elementwise ops change rank.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .. import irutil
from .._mlir import ir, linalg
from . import PythonPass

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")
_MARK = "mlxc.reshape_barrier"


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
    i64 = ir.IntegerType.get_signless(64)

    def build():
        shape_type = ir.RankedTensorType.get([t.rank], i64)
        shape = ir.Operation.create(
            "arith.constant", results=[shape_type],
            attributes={"value": ir.DenseElementsAttr.get(np.array(t.shape, "int64"),
                                                          type=shape_type)}).result
        barrier = ir.Operation.create("tensor.reshape", results=[t],
                                      operands=[op.operands[0], shape])
        barrier.attributes[_MARK] = ir.UnitAttr.get()
        return barrier.result

    irutil.replace_op(op, build)


def _groups(long: list[int], short: list[int]) -> Optional[list[list[int]]]:
    """The dimensions of `long` that make each dimension of `short` (a reassociation),
    or None when the reshape is no single collapse or expansion."""
    groups, i = [], 0
    for d in short:
        if i == len(long):
            return None
        group, size = [i], long[i]
        i += 1
        while size < d and i < len(long):
            group.append(i)
            size *= long[i]
            i += 1
        if size != d:
            return None
        groups.append(group)
    rest = list(range(i, len(long)))
    if any(long[j] != 1 for j in rest) or (rest and not groups):
        return None
    if rest:
        groups[-1].extend(rest)
    return groups


def _reshape(kind: str, value, result_type, groups):
    attrs = {"reassociation": ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in g])
         for g in groups])}
    if kind == "tensor.expand_shape":
        attrs["static_output_shape"] = ir.DenseI64ArrayAttr.get(
            list(ir.RankedTensorType(result_type).shape))
    return ir.Operation.create(kind, results=[result_type], operands=[value],
                               attributes=attrs).result


def _remove(op) -> None:
    """The barrier as a collapse_shape or expand_shape of its source as it is now (the
    fusion may have changed the source's rank), or both through one dimension."""
    src, dst = (ir.RankedTensorType(v.type) for v in (op.operands[0], op.result))
    shape = irutil.defining_op(op.operands[1])

    def build():
        if list(src.shape) == list(dst.shape):
            return op.operands[0]
        if src.rank == 0 or dst.rank == 0:  # to or from a rank-0 tensor: no groups
            kind = "tensor.collapse_shape" if dst.rank == 0 else "tensor.expand_shape"
            return _reshape(kind, op.operands[0], dst, [])
        collapse = _groups(list(src.shape), list(dst.shape)) if src.rank > dst.rank else None
        if collapse is not None:
            return _reshape("tensor.collapse_shape", op.operands[0], dst, collapse)
        expand = _groups(list(dst.shape), list(src.shape)) if dst.rank > src.rank else None
        if expand is not None:
            return _reshape("tensor.expand_shape", op.operands[0], dst, expand)
        flat = ir.RankedTensorType.get([math.prod(src.shape)], src.element_type)
        value = _reshape("tensor.collapse_shape", op.operands[0], flat, [list(range(src.rank))])
        return _reshape("tensor.expand_shape", value, dst, [list(range(dst.rank))])

    irutil.replace_op(op, build)
    if shape is not None and not list(shape.result.uses):
        shape.erase()


def run(module, remove: str = "0") -> None:
    if remove not in ("0", "false", ""):
        for op in irutil.ops_named(module, "tensor.reshape"):
            if _MARK in op.attributes:
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
