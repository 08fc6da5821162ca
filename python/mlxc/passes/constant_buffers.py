"""mlxc-constant-buffers: a buffer that only ever holds one constant is not allocated.

An argmax over rows, tiled into a parallel loop, tracks each row's running maximum next
to its index. Only the index is a result, so bufferization gives the maxima a buffer of
their own (256 floats for 256 rows): each iteration stores -inf into its element and
copies that element into a private one-float accumulator. Nothing else reads the
buffer. Such a buffer holds nothing but the stored constant, so each copy out of it
becomes a fill of that constant and the buffer goes (XLA keeps no such buffer either).

A buffer qualifies when it is a memref.alloc whose users are only its dealloc, stores
of one and the same constant, and subviews whose only users are memref.copy ops that
read them. Reading an element no store wrote would be undefined, so the constant is a
valid answer there too.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _constant(value):
    op = irutil.defining_op(value)
    return op if op is not None and op.name == "arith.constant" else None


def _plan(alloc):
    """(stores, copies, deallocs, subviews, the constant) when `alloc` qualifies."""
    stores, copies, deallocs, subviews = [], [], [], []
    constant = None
    for use in alloc.results[0].uses:
        user = irutil.as_operation(use.owner)
        if user.name == "memref.dealloc":
            deallocs.append(user)
        elif user.name == "memref.store" and use.operand_number == 1:
            c = _constant(user.operands[0])
            if c is None or (constant is not None and
                             str(c.attributes["value"]) != str(constant.attributes["value"])):
                return None
            constant = constant or c
            stores.append(user)
        elif user.name == "memref.subview" and use.operand_number == 0:
            for sub_use in user.results[0].uses:
                reader = irutil.as_operation(sub_use.owner)
                if reader.name != "memref.copy" or sub_use.operand_number != 0:
                    return None
                copies.append(reader)
            subviews.append(user)
        else:
            return None
    if constant is None or not copies:
        return None
    return stores, copies, deallocs, subviews, constant


def _fill(value, target) -> None:
    element = ir.MemRefType(target.type).element_type
    fill = ir.Operation.create("linalg.fill", operands=[value, target], regions=1,
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
    block = fill.regions[0].blocks.append(value.type, element)
    with ir.InsertionPoint(block):
        ir.Operation.create("linalg.yield", operands=[block.arguments[0]])


def run(module) -> None:
    for alloc in irutil.ops_named(module, "memref.alloc"):
        plan = _plan(alloc)
        if plan is None:
            continue
        stores, copies, deallocs, subviews, constant = plan
        for copy in copies:
            with ir.InsertionPoint(copy), copy.location:
                value = constant.clone()
                _fill(value.results[0], copy.operands[1])
            copy.erase()
        for op in stores + subviews + deallocs + [alloc]:
            op.erase()


PASS = PythonPass(
    argument="mlxc-constant-buffers",
    summary="a buffer only ever written with one constant and read by copies is not "
            "allocated: each copy becomes a fill of the constant",
    run=run,
)
