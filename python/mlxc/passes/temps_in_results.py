"""mlxc-temps-in-results: a temporary that dies before a result is written lives in it.

After bufferization the entry writes its results into caller-provided buffers (its
last arguments), often only at the very end: attention's output is written by its
last matmul, long after the transposed copy of k that its first matmul reads has been
freed. Until its first use a result buffer is free memory of known size, so a
temporary whose whole life (its memref.alloc to its memref.dealloc, both in the
entry's body, as mlxc-early-dealloc leaves them) ends before that first use is placed
in it instead of a fresh allocation: attention's temporaries drop from 384 to 256 KiB,
XLA's figure (k^T, then the softmax's two row vectors side by side).

Only statically shaped, identity-layout temporaries qualify; temporaries alive at the same
time get disjoint byte ranges (64-byte aligned). One of the result's element type sees
the result buffer with its own shape (memref.reinterpret_cast): at offset 0 that is the
temporary's own type, so its users are unchanged; further in, the type carries the
offset, so only temporaries whose users read any layout move there. One of another
element type (int8 activations in an f32 result) is a memref.view of the buffer retyped
as bytes, at any offset with its own type; XLA's buffer sharing ignores types too.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass
from .record_temp_memory import _bytes


def _top_level(op, block):
    """The ancestor of `op` in `block`, or None."""
    while op is not None:
        if op.block == block:
            return op
        parent = op.parent
        op = irutil.as_operation(parent) if parent is not None and parent.name != "builtin.module" else None
    return None


def _plain(t) -> bool:
    if not isinstance(t, ir.MemRefType) or not ir.MemRefType(t).has_static_shape:
        return False
    t = ir.MemRefType(t)
    return (isinstance(t.layout, ir.AffineMapAttr)
            and ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank))


def _view(buffer, t: ir.MemRefType, offset: int):
    """`buffer` seen as `t` from element `offset` on: `t` itself at offset 0, else `t`
    with a strided layout carrying the offset."""
    shape = list(t.shape)
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step *= d
    if offset:
        layout = ir.StridedLayoutAttr.get(offset, strides)
        t = ir.MemRefType.get(shape, t.element_type, layout, t.memory_space)
    return ir.Operation.create(
        "memref.reinterpret_cast", results=[t], operands=[buffer],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get([offset]),
                    "static_sizes": ir.DenseI64ArrayAttr.get(shape),
                    "static_strides": ir.DenseI64ArrayAttr.get(strides)}).result


# Users that read any layout, their result types not derived from it (linalg ops on
# memrefs have no results: the products left whole for mlxc-library-matmuls).
_LAYOUT_FREE = {"vector.transfer_read", "vector.transfer_write", "vector.load", "vector.store",
                "memref.load", "memref.store", "memref.dealloc", "linalg.fill", "linalg.matmul",
                "linalg.batch_matmul", "linalg.generic"}


def _offset_ok(value) -> bool:
    """Whether `value` can take a layout with an offset: a subview's type then changes
    unless its own offset is already dynamic."""
    for use in value.uses:
        user = irutil.as_operation(use.owner)
        if user.name in _LAYOUT_FREE:
            continue
        if user.name == "memref.subview" and \
                "offset: ?" in str(user.results[0].type):
            continue
        return False
    return True


# Byte alignment of a temporary placed after others in a result buffer.
ALIGN = 64


def _slot(placed, start: int, end: int, size: int, room: int):
    """The lowest byte offset free during [start, end] for `size` bytes, or None."""
    busy = sorted((o, o + n) for (s, e, o, n) in placed if s <= end and start <= e)
    offset = 0
    for lo, hi in busy:
        if offset + size <= lo:
            break
        offset = max(offset, -(-hi // ALIGN) * ALIGN)
    return offset if offset + size <= room else None


def _byte_view(source, t: ir.MemRefType, byte_offset: int):
    """memref.view of the byte buffer `source` as `t` from `byte_offset` on."""
    index = ir.IndexType.get()
    shift = ir.Operation.create("arith.constant", results=[index],
                                attributes={"value": ir.IntegerAttr.get(index, byte_offset)})
    return ir.Operation.create("memref.view", results=[t], operands=[source, shift.result]).result


class _Bytes:
    """A result argument retyped as bytes on first need: a temporary of another element
    type (a quantized matmul's int8 activations in its f32 result) can only be a
    memref.view of a byte buffer. The function's own uses read a view with the
    argument's original type; the calling convention passes a bare pointer either way."""

    def __init__(self, func, index: int, element):
        self.func, self.index, self.element, self.bytes = func, index, element, None

    def get(self, original):
        if self.bytes is None:
            func = self.func
            block = func.regions[0].blocks[0]
            arg = block.arguments[self.index]
            t = ir.MemRefType(original.type)
            flat = ir.MemRefType.get([_bytes(t)], ir.IntegerType.get_signless(8),
                                     memory_space=t.memory_space)
            with ir.InsertionPoint(block.operations[0]), func.location:
                whole = _byte_view(arg, t, 0)
            arg.replace_all_uses_with(whole)
            irutil.defining_op(whole).operands[0] = arg
            arg.set_type(flat)
            ftype = irutil.function_type(func)
            inputs = list(ftype.inputs)
            inputs[self.index] = flat
            func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(inputs, list(ftype.results)))
            self.bytes = arg
            self.whole = whole
        return self.bytes


def _place(func, n_results: int) -> None:
    block = func.regions[0].blocks[0]
    ops = [irutil.as_operation(o) for o in block.operations]
    position = {op: i for i, op in enumerate(ops)}
    n_args = len(block.arguments)
    results = list(block.arguments)[n_args - n_results:]
    hosts = []   # (buffer, bytes, first use, [(start, end, byte offset, bytes) placed], _Bytes)
    for i, arg in enumerate(results):
        if not _plain(arg.type):
            continue
        first = len(ops)
        for use in arg.uses:
            top = _top_level(irutil.as_operation(use.owner), block)
            first = min(first, position[top] if top is not None else -1)
        hosts.append((arg, _bytes(ir.MemRefType(arg.type)), first, [],
                      _Bytes(func, n_args - n_results + i, ir.MemRefType(arg.type).element_type)))
    if not hosts:
        return
    # Erased only after the walk: `ops` holds other handles to the same operations, and a
    # handle to an erased operation is dangling memory, not an error.
    dead = []
    for i, op in enumerate(ops):
        if op.name != "memref.alloc" or not _plain(op.results[0].type):
            continue
        t = ir.MemRefType(op.results[0].type)
        frees = [irutil.as_operation(u.owner) for u in op.results[0].uses if irutil.as_operation(u.owner).name == "memref.dealloc"]
        if len(frees) != 1 or frees[0].block != block:
            continue
        end = position[frees[0]]
        size = _bytes(t)
        count = 1
        for d in t.shape:
            count *= d
        element = size // max(1, count)
        for buffer, room, first, placed, as_bytes in hosts:
            if end >= first:
                continue
            same = as_bytes.element == t.element_type
            offset = _slot(placed, i, end, size, room)
            if offset is None or (same and offset and not _offset_ok(op.results[0])):
                continue
            with ir.InsertionPoint(op), op.location:
                if same:
                    view = _view(buffer if as_bytes.bytes is None else as_bytes.whole, t,
                                 offset // element)
                else:
                    view = _byte_view(as_bytes.get(buffer), t, offset)
            op.results[0].replace_all_uses_with(view)
            dead += [frees[0], op]
            placed.append((i, end, offset, size))
            break
    for op in dead:
        op.erase()


def run(module) -> None:
    entry = irutil.string_attr(module, "mlxc.entry")
    func = irutil.find_function(module, entry) if entry else None
    signature = irutil.module_attr(module, "mlxc.signature")
    if func is None or func.name != "func.func" or signature is None:
        return
    outputs = ir.DictAttr(signature)["outputs"]
    _place(irutil.as_operation(func), len(ir.ArrayAttr(outputs)))


PASS = PythonPass(
    argument="mlxc-temps-in-results",
    summary="Place temporaries that die before a result buffer is first used in that buffer",
    run=run,
)
