"""mlxc-gpu-map-loops: each top-level scf.parallel becomes a grid of blocks of threads.

Every iteration space is flattened to one dimension, in row-major order, and split
into blocks of `threads` threads: thread `t` of block `b` runs iteration
`b * threads + t` (guarded by `< total`). Consecutive threads thus touch consecutive
elements of the innermost dimension, so loads and stores coalesce, and any rank and
any extent map without the three-dimension limit of grids. The loops get the
`mapping` attributes that `convert-parallel-loops-to-gpu` turns into a gpu.launch.
A loop with no iterations (a zero-size array) is deleted.
"""

from __future__ import annotations

import math

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....errors import CompileError
from ....passes import PythonPass


def _mapping(processor: str) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.Attribute.parse(
        f"#gpu.loop_dim_map<processor = {processor}, map = (d0) -> (d0), bound = (d0) -> (d0)>")])


def _bounds(loop) -> list[tuple[int, int, int]]:
    n = len(loop.regions[0].blocks[0].arguments)
    ops = list(loop.operands)
    out = []
    for i in range(n):
        lo, hi, st = (loops.constant_int(ops[i]), loops.constant_int(ops[n + i]),
                      loops.constant_int(ops[2 * n + i]))
        if lo is None or hi is None or st is None:
            raise CompileError.at(loop, "the cuda target needs loop bounds known at compile time")
        out.append((lo, hi, st))
    return out


def _map(loop, threads: int) -> None:
    if len(loop.results):
        raise CompileError.at(loop, "the cuda target cannot map an scf.parallel with reductions")
    bounds = _bounds(loop)
    extents = [max(0, -(-(hi - lo) // st)) for lo, hi, st in bounds]
    total = math.prod(extents)
    if total == 0:
        loop.erase()
        return
    block_size = min(threads, -(-total // 32) * 32)
    grid = -(-total // block_size)
    old_body = loop.regions[0].blocks[0]
    with ir.InsertionPoint(loop), loop.location:
        zero, one = loops.const_index(0), loops.const_index(1)
        _, blocks = loops.parallel([zero], [loops.const_index(grid)], [one], _mapping("block_x"))
        with ir.InsertionPoint.at_block_begin(blocks):
            _, thread_body = loops.parallel([zero], [loops.const_index(block_size)], [one],
                                            _mapping("thread_x"))
        with ir.InsertionPoint.at_block_begin(thread_body):
            b, t = blocks.arguments[0], thread_body.arguments[0]
            linear = loops.binary("arith.addi",
                                  loops.binary("arith.muli", b, loops.const_index(block_size)), t)
            if grid * block_size != total:
                inside = ir.Operation.create(
                    "arith.cmpi", results=[ir.IntegerType.get_signless(1)],
                    operands=[linear, loops.const_index(total)],
                    attributes={"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 2)}
                ).result  # slt
                _, target = loops.if_then(inside)
            else:
                target = thread_body
        with ir.InsertionPoint(loops.terminator(target)):
            ivs = _delinearize(linear, bounds, extents)
    for old, new in zip(old_body.arguments, ivs):
        old.replace_all_uses_with(new)
    end = loops.terminator(target)
    for op in list(old_body.operations)[:-1]:  # all but scf.reduce
        op.operation.move_before(end)
    loop.erase()


def _delinearize(linear, bounds, extents) -> list:
    """The loop's induction variables for row-major position `linear` (< total)."""
    ivs = []
    stride = math.prod(extents)
    for k, ((lo, _, st), extent) in enumerate(zip(bounds, extents)):
        stride //= extent
        if extent == 1:
            v = loops.const_index(0)
        else:
            v = linear
            if stride != 1:
                v = loops.binary("arith.divui", v, loops.const_index(stride))
            if k > 0:  # the outermost index needs no wrap: linear < total
                v = loops.binary("arith.remui", v, loops.const_index(extent))
        if st != 1:
            v = loops.binary("arith.muli", v, loops.const_index(st))
        if lo != 0:
            v = loops.binary("arith.addi", v, loops.const_index(lo))
        ivs.append(v)
    return ivs


def run(module, threads: str = "256") -> None:
    count = int(threads)
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in list(loops.entry_body(func).operations):
            if op.operation.name == "scf.parallel" and "mapping" not in op.operation.attributes:
                _map(op.operation, count)


PASS = PythonPass(
    argument="mlxc-gpu-map-loops",
    summary="Flatten each top-level scf.parallel into blocks x threads with gpu mapping attributes",
    run=run,
    options={"threads": "threads per block (default 256)"},
    defaults={"threads": "256"},
)
