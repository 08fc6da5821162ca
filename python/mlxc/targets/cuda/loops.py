"""Building blocks for the GPU passes: scf.parallel / scf.if / index arithmetic.

The passes build IR with the generic `Operation.create`, so they depend only on op
names and operand layouts, not on the generated Python op classes.
"""

from __future__ import annotations

from ..._mlir import ir

# Ops that only compute a value (no writes, no regions): safe to clone into every
# kernel that uses them, so views and scalar index math travel with the loop.
SINKABLE_PREFIXES = ("arith.", "index.", "math.", "affine.apply")
VIEW_OPS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
            "memref.reinterpret_cast", "memref.cast", "memref.extract_strided_metadata",
            "memref.dim", "memref.transpose", "memref.view")
# Buffers stay on the host side: the runtime allocates and frees them.
BUFFER_OPS = ("memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global")


def is_sinkable(op) -> bool:
    if op.regions and len(op.regions):
        return False
    name = op.name
    return (name.startswith(SINKABLE_PREFIXES) or name in VIEW_OPS or name == "memref.load")


def index_type() -> ir.Type:
    return ir.IndexType.get()


def const_index(value: int) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[index_type()],
                               attributes={"value": ir.IntegerAttr.get(index_type(), value)}).result


def binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).result


def constant_int(value: ir.Value):
    """The integer a value holds when an arith.constant defines it, else None."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return ir.IntegerAttr(attr).value
    return None


def parallel(lower: list, upper: list, step: list, mapping=None):
    """An scf.parallel with an empty body (block arguments, then scf.reduce)."""
    n = len(lower)
    attrs = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([n, n, n, 0])}
    if mapping is not None:
        attrs["mapping"] = mapping
    op = ir.Operation.create("scf.parallel", operands=[*lower, *upper, *step],
                             attributes=attrs, regions=1)
    block = ir.Block.create_at_start(op.regions[0], [index_type()] * n)
    with ir.InsertionPoint(block):
        ir.Operation.create("scf.reduce", operands=[],
                            attributes={})
    return op, block


def if_then(cond: ir.Value):
    """An scf.if without results or else branch; returns (op, then block)."""
    op = ir.Operation.create("scf.if", operands=[cond], regions=2)
    block = ir.Block.create_at_start(op.regions[0], [])
    with ir.InsertionPoint(block):
        ir.Operation.create("scf.yield", operands=[])
    return op, block


def terminator(block):
    ops = list(block.operations)
    return ops[-1].operation if ops else None


def is_inside(op, ancestor) -> bool:
    """Whether `op` is nested (at any depth) inside `ancestor`."""
    cur = op.parent
    while cur is not None:
        if cur == ancestor:
            return True
        cur = cur.parent
    return False


def entry_body(func):
    return func.regions[0].blocks[0]
