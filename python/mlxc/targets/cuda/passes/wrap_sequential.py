"""mlxc-gpu-wrap-sequential: code outside any parallel loop goes into a one-thread loop.

After `convert-linalg-to-parallel-loops`, a reduction over every dimension is a plain
`scf.for` nest, a rank-0 linalg op is its bare body, and scalar stores sit directly in
the entry function. The host never touches array data, so each such op becomes a
one-iteration `scf.parallel` that later turns into a one-thread kernel. Buffer
management (alloc, dealloc, globals) stays on the host; pure scalar ops and views stay
where they are and are cloned into the kernels that use them (mlxc-gpu-sink-into-loops).
"""

from __future__ import annotations

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass

_HOST = loops.BUFFER_OPS + ("func.return", "scf.parallel", "gpu.launch")


def _wrap(op) -> None:
    with ir.InsertionPoint(op), op.location:
        zero, one = loops.const_index(0), loops.const_index(1)
        _, body = loops.parallel([zero], [one], [one])
    op.move_before(loops.terminator(body))


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in list(loops.entry_body(func).operations):
            op = op.operation
            if op.name in _HOST or loops.is_sinkable(op):
                continue
            if op.results and len(op.results):
                raise_unsupported(op)
            _wrap(op)


def raise_unsupported(op) -> None:
    from ....errors import CompileError

    raise CompileError.at(op, f"the cuda target cannot run '{op.name}' yet: control flow around "
                              "array operations (while loops, cond, sort) would need the host to "
                              "branch on device values, and cuda launch plans are straight-line")


PASS = PythonPass(
    argument="mlxc-gpu-wrap-sequential",
    summary="Wrap host-level code that touches array data in a one-iteration scf.parallel",
    run=run,
)
