"""mlxc-pads-as-fills: a padded tensor is built where its source is computed.

Bufferized as it is, `tensor.pad %t` allocates the padded buffer, fills it and copies
`%t` into its interior, so `%t` and the padded copy are both alive: a convolution of a
transposed NCHW input keeps the NHWC copy (512 KiB) and its padded copy (578 KiB).
This pass writes the pad as

    %f = linalg.fill ins(%value) outs(tensor.empty)      (before %t's producer)
    %p = tensor.insert_slice %t into %f[low...][sizes of %t][1...]

so that eliminate-empty-tensors lets the producer of `%t` write straight into the
interior of the padded buffer: no separate `%t`, no copy. Only pads with static
paddings (no interior padding) whose padding value is defined outside the pad, and
only when `%t`'s producer reads nothing but the function's arguments and constants (a
layout change of an input): a producer reading a temporary — a convolution reading
another padded buffer — would keep both padded buffers alive at once, where today
the first is freed before the second is made.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _ints(op, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _padding_value(pad):
    """The value a static pad fills with when it comes from outside its body, else None."""
    if len(pad.operands) != 1:    # dynamic low/high
        return None
    inner = irutil.walk(pad)[1:]
    if len(inner) != 1 or inner[0].name != "tensor.yield":
        return None
    value = inner[0].operands[0]
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None    # an index argument of the body
    return value


def _dominates_before(value, op) -> bool:
    """Whether `value` is available just before `op` (same block, defined earlier, or
    defined in an enclosing block)."""
    producer = irutil.defining_op(value)
    if producer is None:
        return True
    if producer.block == op.block:
        return producer.is_before_in_block(op)
    return False


def _reads_only_inputs(producer, func_block) -> bool:
    """Whether every value `producer` (and its regions) reads from outside is an argument
    of the function or a constant."""
    inside = set()
    ops = irutil.walk(producer)
    for op in ops:
        for r in op.results:
            inside.add(r)
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    inside.add(a)
    for op in ops:
        for v in op.operands:
            if v in inside:
                continue
            owner = v.owner
            if isinstance(owner, ir.Block):
                if owner != func_block:
                    return False
                continue
            if irutil.as_operation(owner).name not in ("arith.constant", "tensor.empty", "ub.poison"):
                return False
    return True


def _fill(value, empty_type, location):
    with location:
        empty = ir.Operation.create("tensor.empty", results=[empty_type]).result
        fill = ir.Operation.create(
            "linalg.fill", results=[empty_type], operands=[value, empty],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])}, regions=1)
        element = ir.RankedTensorType(empty_type).element_type
        body = fill.regions[0].blocks.append(value.type, element)
        with ir.InsertionPoint(body):
            ir.Operation.create("linalg.yield", operands=[body.arguments[0]])
    return fill.result


def _rewrite(pad, value) -> None:
    source = pad.operands[0]
    padded = pad.results[0].type
    t = ir.RankedTensorType(source.type)
    if not t.has_static_shape or not ir.RankedTensorType(padded).has_static_shape:
        return
    low = _ints(pad, "static_low")
    if min(low + _ints(pad, "static_high")) < 0:
        return
    # The fill goes before the source's producer, so that the producer can write into
    # the fill's interior; if the padding value is defined after it, at the pad.
    producer = irutil.defining_op(source)
    if producer is None or producer.block != pad.block or not _dominates_before(value, producer):
        return
    function = irutil.as_operation(pad.block.owner) if pad.block.owner is not None else None
    if function is None or function.name != "func.func" or \
            not _reads_only_inputs(producer, function.regions[0].blocks[0]):
        return
    at = producer
    with ir.InsertionPoint(at):
        filled = _fill(value, padded, pad.location)
    with ir.InsertionPoint(pad), pad.location:
        inserted = ir.Operation.create(
            "tensor.insert_slice", results=[padded], operands=[source, filled],
            attributes={"static_offsets": ir.DenseI64ArrayAttr.get(low),
                        "static_sizes": ir.DenseI64ArrayAttr.get(list(t.shape)),
                        "static_strides": ir.DenseI64ArrayAttr.get([1] * t.rank),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0, 0])}).result
    pad.results[0].replace_all_uses_with(inserted)
    pad.erase()


def run(module) -> None:
    # Only the pads are held: erasing one frees its body.
    for pad in irutil.ops_named(module, "tensor.pad"):
        if "nofold" in pad.attributes:
            continue
        value = _padding_value(pad)
        if value is not None:
            _rewrite(pad, value)


PASS = PythonPass(
    argument="mlxc-pads-as-fills",
    summary="tensor.pad as a fill and an insert_slice, so the padded tensor's source is "
            "computed into its interior (no unpadded copy)",
    run=run,
)
