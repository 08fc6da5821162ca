"""How a pass makes a runtime kernel call out of an op on tensors (convolutions, poolings,
sorts, FFTs, LAPACK calls: mlxc-library-convs, -pools, -sorts, -ffts, -lapack).

The inputs are handed over as buffers through `bufferization.to_buffer` (read-only) and
the output as a fresh `memref.alloc` that `bufferization.to_tensor` makes the result,
which bufferization then treats like any other value: an entry result is written in
place, a temporary is freed after its last use. Each buffer goes to the call as a
rank-0 view of its first element (`memref<f32>`, `memref<complex<f64>>`, ...), which
the bare-pointer calling convention passes as a pointer (a dynamic shape it would
refuse, and static ones would each need their own declaration); being a memref use,
the call keeps the buffer alive for mlxc-early-dealloc. Sizes follow as `index`
values, flags as `i32`. A result with no elements gets no call: there is nothing to
read or write (with several results, only when none has elements).
"""

from __future__ import annotations

from ... import irutil
from ..._mlir import ir


def scalar_memref(element=None):
    return ir.MemRefType.get([], element or ir.F32Type.get())


def index_const(value: int):
    index = ir.IndexType.get()
    return ir.Operation.create("arith.constant", results=[index],
                               attributes={"value": ir.IntegerAttr.get(index, value)}).result


def i32_const(value: int):
    i32 = ir.IntegerType.get_signless(32)
    return ir.Operation.create("arith.constant", results=[i32],
                               attributes={"value": ir.IntegerAttr.get(i32, value)}).result


def first_element(buffer):
    """`buffer` (a dense memref) as a rank-0 memref of its first element."""
    element = ir.MemRefType(buffer.type).element_type
    return ir.Operation.create(
        "memref.reinterpret_cast", results=[scalar_memref(element)], operands=[buffer],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get([0]),
                    "static_sizes": ir.DenseI64ArrayAttr.get([]),
                    "static_strides": ir.DenseI64ArrayAttr.get([])}).result


def _read_only_buffer(tensor):
    t = ir.RankedTensorType(tensor.type)
    return ir.Operation.create(
        "bufferization.to_buffer", results=[ir.MemRefType.get(t.shape, t.element_type)],
        operands=[tensor], attributes={"read_only": ir.UnitAttr.get()}).result


def declare(module, callee: str, buffers: int, sizes: int, flags: int,
            elements: list = None) -> None:
    """`callee(buffers x memref<E>, sizes x index, flags x i32)`, declared once; E is
    f32, or each buffer's element type from `elements`."""
    elements = elements or [None] * buffers
    irutil.declare_function(module, callee, [scalar_memref(e) for e in elements] +
                            [ir.IndexType.get()] * sizes +
                            [ir.IntegerType.get_signless(32)] * flags)


def call(callee: str, inputs: list, result_type, sizes: list, flags: list):
    """At the current insertion point, `callee(inputs..., result, sizes..., flags...)` on
    the tensors `inputs`; returns the result, a tensor of `result_type`. Equal sizes
    share one constant."""
    return call_results(callee, inputs, [result_type], sizes, flags)[0]


def call_results(callee: str, inputs: list, result_types: list, sizes: list, flags: list) -> list:
    """`call` with several results (`callee(inputs..., results..., sizes..., flags...)`),
    the tensors returned in order; made unless every result is empty."""
    types = [ir.RankedTensorType(t) for t in result_types]
    empty = all(0 in t.shape for t in types)
    buffers = [] if empty else [_read_only_buffer(v) for v in inputs]
    outs = [ir.Operation.create(
        "memref.alloc", results=[ir.MemRefType.get(t.shape, t.element_type)],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
                    "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)}
    ).result for t in types]
    if empty:
        return [_as_result(out, t) for out, t in zip(outs, types)]
    consts: dict[int, ir.Value] = {}
    for size in sizes:
        if size not in consts:
            consts[size] = index_const(size)
    flag_values = [i32_const(f) for f in flags]
    ir.Operation.create("func.call", operands=[first_element(b) for b in buffers + outs] +
                        [consts[s] for s in sizes] + flag_values,
                        attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
    return [_as_result(out, t) for out, t in zip(outs, types)]


def _as_result(buffer, t):
    return ir.Operation.create(
        "bufferization.to_tensor", results=[t], operands=[buffer],
        attributes={"restrict": ir.UnitAttr.get(), "writable": ir.UnitAttr.get()}).result
