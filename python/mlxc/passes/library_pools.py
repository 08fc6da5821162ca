"""mlxc-library-pools: f32 max and sum poolings (on tensors) as calls to `mlxc_spool`.

Which poolings: targets/cpu/library_pools.py (and why). Like mlxc-library-convs, the rewrite runs on tensors, before bufferization, so that the
padding of -inf (or zeros) in front of a pooling never becomes a buffer: the call reads
the unpadded input and skips the taps in the padding, and the padding op goes when
nothing else reads it. So does the init's fill, since the kernel starts from the
identity and overwrites its output. How the call takes its operands and makes its
result: targets/cpu/kernel_calls.py.
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import ir
from ..targets.cpu import kernel_calls, library_pools
from . import PythonPass

CALLEE = "mlxc_spool"
_SIZES = 14  # n, h, w, c, kh, kw, oh, ow, strides, dilations, low padding


def _rewrite(op, pool: library_pools.Pool, threads: int) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    fill = library_pools.init_fill(op)[0]
    window = irutil.defining_op(op.operands[1])
    with ir.InsertionPoint(op), op.location:
        sizes = [pool.n, pool.h, pool.w, pool.c, pool.kh, pool.kw, pool.oh, pool.ow,
                 *pool.strides, *pool.dilations, *pool.low]
        result = kernel_calls.call(CALLEE, [pool.source], result_type, sizes,
                                   [pool.kind, threads])
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
        kernel_calls.declare(module, CALLEE, 2, _SIZES, 2)
        threads = settings.get("threads")
        for op, pool in found:
            _rewrite(op, pool, threads)


PASS = PythonPass(
    argument="mlxc-library-pools",
    summary="f32 max and sum poolings call the runtime's kernel (mlxc_spool), which skips "
            "the taps in the padding: no padded copy",
    run=run,
)
