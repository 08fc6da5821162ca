"""mlxc-gpu-copies-to-loops: every memref.copy becomes a parallel loop of loads and stores.

Bufferization leaves `memref.copy` between views (concatenate, dynamic_update_slice,
returned inputs). On the GPU the host never touches array data, so a copy must run
as a kernel like any other loop: one element per iteration, mapped to threads later.
"""

from __future__ import annotations

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass


def _rewrite(copy) -> None:
    src, dst = copy.operands[0], copy.operands[1]
    shape = ir.MemRefType(src.type).shape
    with ir.InsertionPoint(copy), copy.location:
        if shape:
            zero, one = loops.const_index(0), loops.const_index(1)
            upper = [loops.const_index(d) for d in shape]
            _, body = loops.parallel([zero] * len(shape), upper, [one] * len(shape))
            ivs = list(body.arguments)
            point = ir.InsertionPoint.at_block_begin(body)
        else:
            ivs, point = [], ir.InsertionPoint(copy)
        with point:
            elem = ir.MemRefType(src.type).element_type
            value = ir.Operation.create("memref.load", results=[elem], operands=[src, *ivs]).result
            ir.Operation.create("memref.store", operands=[value, dst, *ivs])
    copy.erase()


def run(module) -> None:
    copies = [op for op in irutil.walk(module) if op.name == "memref.copy"]
    for copy in copies:
        _rewrite(copy)


PASS = PythonPass(
    argument="mlxc-gpu-copies-to-loops",
    summary="Rewrite memref.copy as an scf.parallel of loads and stores (device-side copies)",
    run=run,
)
