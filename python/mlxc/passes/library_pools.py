"""mlxc-library-pools: f32 max and sum poolings (on tensors) as calls to `mlxc_spool`.

Which poolings: targets/cpu/library_pools.py (and why). Like mlxc-library-convs, whose
helpers it uses, the rewrite runs on tensors, before bufferization, so that the
padding of -inf (or zeros) in front of a pooling never becomes a buffer: the call reads
the unpadded input and skips the taps in the padding, and the padding op goes when
nothing else reads it. So does the init's fill, since the kernel starts from the
identity and overwrites its output. The input goes over as a read-only buffer and the
output is a fresh `memref.alloc` made the result by `bufferization.to_tensor`, each
passed as a pointer (a `memref<f32>` view of its first element).
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import ir
from ..targets.cpu import library_pools
from . import PythonPass
from .library_convs import _first_element, _index_const, _read_only_buffer, _scalar_memref

CALLEE = "mlxc_spool"
_SIZES = 14  # n, h, w, c, kh, kw, oh, ow, strides, dilations, low padding


def _declare(module) -> None:
    i32 = ir.IntegerType.get_signless(32)
    irutil.declare_function(module, CALLEE, [_scalar_memref()] * 2 +
                            [ir.IndexType.get()] * _SIZES + [i32, i32])


def _rewrite(op, pool: library_pools.Pool, threads: int) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    fill = library_pools.init_fill(op)[0]
    window = irutil.defining_op(op.operands[1])
    with ir.InsertionPoint(op), op.location:
        source = _read_only_buffer(pool.source)
        out = ir.Operation.create(
            "memref.alloc", results=[ir.MemRefType.get(result_type.shape, ir.F32Type.get())],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
                        "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)}
        ).result
        sizes = [pool.n, pool.h, pool.w, pool.c, pool.kh, pool.kw, pool.oh, pool.ow,
                 *pool.strides, *pool.dilations, *pool.low]
        consts: dict[int, ir.Value] = {}
        for size in sizes:
            if size not in consts:
                consts[size] = _index_const(size)
        i32 = ir.IntegerType.get_signless(32)
        flags = [ir.Operation.create("arith.constant", results=[i32], attributes={
            "value": ir.IntegerAttr.get(i32, v)}).result for v in (pool.kind, threads)]
        ir.Operation.create("func.call", operands=[
            _first_element(source), _first_element(out), *[consts[s] for s in sizes], *flags],
            attributes={"callee": ir.FlatSymbolRefAttr.get(CALLEE)})
        result = ir.Operation.create(
            "bufferization.to_tensor", results=[result_type], operands=[out],
            attributes={"restrict": ir.UnitAttr.get(), "writable": ir.UnitAttr.get()}).result
    op.results[0].replace_all_uses_with(result)
    op.erase()
    for dead in (pool.pad, fill, window):
        if dead is not None and not list(dead.results[0].uses):
            dead.erase()


def run(module) -> None:
    found = [(op, p) for op in irutil.ops_named(module, *library_pools.POOLS)
             if (p := library_pools.pool(op)) is not None]
    if not found:
        return
    with irutil.as_operation(module).context:
        _declare(module)
        threads = settings.get("threads")
        for op, pool in found:
            _rewrite(op, pool, threads)


PASS = PythonPass(
    argument="mlxc-library-pools",
    summary="f32 max and sum poolings call the runtime's kernel (mlxc_spool), which skips "
            "the taps in the padding: no padded copy",
    run=run,
)
