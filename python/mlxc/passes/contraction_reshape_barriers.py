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

The same pass fuses an input's elementwise producer into a contraction or convolution,
where it is recomputed once per output column or filter tap (attention's `p / sum(p)`
once per head dimension: its p @ v became a 5-loop generic on no kernel or schedule,
2.9x XLA's time for the whole attention). XLA's rule is ours: a contraction's operand
takes only free ops. So a contraction's or convolution's input computed by a linalg op
gets a barrier too, an identity `tensor.reshape`, and is computed once into its own
tensor, which the product reads (the runtime's kernel reads any strides). Left to
fuse: pure data movement (a transpose or broadcast of a function argument), which
costs nothing per read and which the kernel and schedules take as an indexing map.
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


def _data_movement(op) -> bool:
    """A generic that only yields its inputs' elements (a transpose, a broadcast) of
    values no op computes: fused into a product it is an indexing map, not work."""
    if op.name != "linalg.generic":
        return False
    n_in, n_out = irutil.dps_segments(op)
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if n_out != 1 or len(body) != 1 or body[0].operands[0] not in list(block.arguments):
        return False
    return all(irutil.defining_op(v) is None for v in op.operands[:n_in])


_PRODUCTS = ("linalg.generic", "linalg.matmul", "linalg.batch_matmul")
_CONVOLUTIONS = ("linalg.conv", "linalg.depthwise_conv")


def _reshapes_and_products(module) -> tuple[list, list]:
    """The collapse/expand reshapes and the contractions and convolutions, in one walk
    that keeps no handle to any other op (the reshapes are erased afterwards)."""
    reshapes, products = [], []
    advance = ir.WalkResult.ADVANCE

    def visit(o):
        name = o.name
        if name in _RESHAPES:
            reshapes.append(o)
        elif name.startswith(_CONVOLUTIONS) or (name in _PRODUCTS and _is_contraction(o)):
            products.append(o)
        return advance

    irutil.as_operation(module).walk(visit, ir.WalkOrder.PRE_ORDER)
    return reshapes, products


def _inputs_to_guard(op) -> list[int]:
    """The inputs of a product that a linalg op computes, other than by data movement."""
    out = []
    for i in range(irutil.dps_segments(op)[0]):
        producer = irutil.defining_op(op.operands[i])
        if producer is not None and producer.name.startswith("linalg.") \
                and not _data_movement(producer):
            out.append(i)
    return out


def _guard(op, index: int) -> None:
    """An identity barrier between input `index` of `op` and its producer."""
    value = op.operands[index]
    t = ir.RankedTensorType(value.type)
    if not t.has_static_shape:
        return
    with ir.InsertionPoint(op), op.location:
        op.operands[index] = _barrier(value, t)


def _barrier(value, t):
    i64 = ir.IntegerType.get_signless(64)
    shape_type = ir.RankedTensorType.get([t.rank], i64)
    shape = ir.Operation.create(
        "arith.constant", results=[shape_type],
        attributes={"value": ir.DenseElementsAttr.get(np.array(t.shape, "int64"),
                                                      type=shape_type)}).result
    barrier = ir.Operation.create("tensor.reshape", results=[t], operands=[value, shape])
    barrier.attributes[_MARK] = ir.UnitAttr.get()
    return barrier.result


def _insert(op) -> None:
    t = ir.RankedTensorType(op.result.type)
    if not t.has_static_shape or len(op.operands) != 1:
        return
    irutil.replace_op(op, lambda: _barrier(op.operands[0], t))


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
    reshapes, products = _reshapes_and_products(module)
    for op in reshapes:
        if _at_contraction(op):
            _insert(op)
    # After the reshape barriers: an input read through one has no linalg producer.
    for op in products:
        for index in _inputs_to_guard(op):
            _guard(op, index)


PASS = PythonPass(
    argument="mlxc-contraction-reshape-barriers",
    summary="reshapes feeding or reading a contraction written as tensor.reshape, which "
            "linalg-fuse-elementwise-ops does not fold into it (remove=1 restores them)",
    run=run,
    options={"remove": "1: turn the barriers back into the reshapes they replaced"},
)
