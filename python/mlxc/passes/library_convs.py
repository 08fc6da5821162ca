"""mlxc-library-convs: f32 convolutions (on tensors) as calls to `mlxc_sconv` (or
`mlxc_sconv_depthwise`).

Which convolutions: targets/cpu/library_convs.py (and why). The rewrite runs on
tensors, before bufferization, so that the zero padding in front of a convolution
never becomes a buffer: the call reads the unpadded input (taps in the padding count
as zeros) and the padding op goes when nothing else reads it. The convolution's zero
fill goes too, since the kernel overwrites its output, and so does a transpose that
made the filter HWIO (an OIHW filter): the kernel reads the filter through strides
when it packs it, so the transposed copy is never made.

Operands are handed over as buffers through `bufferization.to_buffer` (read-only) and
a fresh `memref.alloc` that `bufferization.to_tensor` makes the result, which
bufferization treats like any other: an entry result is written in place, a
temporary is freed after its last use. Each goes to the call as a `memref<f32>` view
of its first element, which the bare-pointer calling convention passes as a pointer
(a dynamic shape it would refuse, and static ones would each need their own
declaration); being a memref use, the call keeps the buffer alive for
mlxc-early-dealloc.
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import ir
from ..targets.cpu import library_convs
from . import PythonPass

CALLEE = "mlxc_sconv"
DEPTHWISE_CALLEE = "mlxc_sconv_depthwise"


def _scalar_memref():
    return ir.MemRefType.get([], ir.F32Type.get())


def _index_const(value: int):
    index = ir.IndexType.get()
    return ir.Operation.create("arith.constant", results=[index],
                               attributes={"value": ir.IntegerAttr.get(index, value)}).result


def _first_element(buffer):
    """`buffer` (a dense memref) as a memref<f32> of its first element."""
    return ir.Operation.create(
        "memref.reinterpret_cast", results=[_scalar_memref()], operands=[buffer],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get([0]),
                    "static_sizes": ir.DenseI64ArrayAttr.get([]),
                    "static_strides": ir.DenseI64ArrayAttr.get([])}).result


def _read_only_buffer(tensor):
    t = ir.RankedTensorType(tensor.type)
    return ir.Operation.create(
        "bufferization.to_buffer", results=[ir.MemRefType.get(t.shape, t.element_type)],
        operands=[tensor], attributes={"read_only": ir.UnitAttr.get()}).result


def _declare(module, callee: str, sizes: int) -> None:
    irutil.declare_function(module, callee, [_scalar_memref()] * 3 + [ir.IndexType.get()] * sizes
                            + [ir.IntegerType.get_signless(32)])


def _rewrite(op, conv: library_convs.Conv, threads: int) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    fill = library_convs.zero_fill(op.operands[2])
    with ir.InsertionPoint(op), op.location:
        source = _read_only_buffer(conv.source)
        filter_ = _read_only_buffer(conv.filter)
        out = ir.Operation.create(
            "memref.alloc", results=[ir.MemRefType.get(result_type.shape, ir.F32Type.get())],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
                        "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)}
        ).result
        sizes = [conv.n, conv.h, conv.w, conv.c, conv.kh, conv.kw,
                 *([] if conv.depthwise else [conv.f]), conv.oh, conv.ow,
                 *conv.strides, *conv.dilations, *conv.low,
                 *([] if conv.depthwise else conv.filter_strides)]
        i32 = ir.IntegerType.get_signless(32)
        count = ir.Operation.create("arith.constant", results=[i32],
                                    attributes={"value": ir.IntegerAttr.get(i32, threads)})
        consts: dict[int, ir.Value] = {}
        for size in sizes:
            if size not in consts:
                consts[size] = _index_const(size)
        args = [_first_element(source), _first_element(filter_), _first_element(out)] + \
            [consts[size] for size in sizes]
        callee = DEPTHWISE_CALLEE if conv.depthwise else CALLEE
        ir.Operation.create("func.call", operands=args + [count.result],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
        result = ir.Operation.create(
            "bufferization.to_tensor", results=[result_type], operands=[out],
            attributes={"restrict": ir.UnitAttr.get(), "writable": ir.UnitAttr.get()}).result
    op.results[0].replace_all_uses_with(result)
    op.erase()
    for dead in (*conv.padding, conv.transpose, fill):
        if dead is not None and not list(dead.results[0].uses):
            dead.erase()


def run(module) -> None:
    found = []
    for op in irutil.ops_named(module, *library_convs.CONVS):
        conv = library_convs.conv(op)
        if conv is not None:
            found.append((op, conv))
    if not found:
        return
    with irutil.as_operation(module).context:
        if any(not conv.depthwise for _, conv in found):
            _declare(module, CALLEE, 19)
        if any(conv.depthwise for _, conv in found):
            _declare(module, DEPTHWISE_CALLEE, 14)
        threads = settings.get("threads")
        for op, conv in found:
            _rewrite(op, conv, threads)


PASS = PythonPass(
    argument="mlxc-library-convs",
    summary="f32 NHWC convolutions call the runtime's kernel (mlxc_sconv), which reads the "
            "unpadded input: no padded copy",
    run=run,
)
