"""mlxc-fold-unit-extent-dims: upstream linalg-fold-unit-extent-dims, kept only where
its result verifies.

Dropping size-1 dimensions lets a broadcast of a keepdims (n, 1) tensor read one scalar
per row instead of a gather, so the CPU schedules need it. But upstream builds invalid
IR for some strided, dilated convolutions whose output has a size-1 spatial dimension
(the folded input operand gets a shape that contradicts its indexing map). Each function
is therefore folded on a copy; a copy that does not verify is dropped and the function
keeps its unit dimensions: correct, only slower.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, passmanager
from . import PythonPass

_PIPELINE = "builtin.module(func.func(linalg-fold-unit-extent-dims))"


def run(module) -> None:
    fold = None
    for func in irutil.functions(module):
        if func.name != "func.func":
            continue
        scratch = ir.Module.create(loc=func.location)
        func.clone(ir.InsertionPoint(scratch.body))
        fold = fold or passmanager.PassManager.parse(_PIPELINE)
        try:
            fold.run(scratch.operation)
            folded = scratch.operation.verify()
        except ir.MLIRError:  # the pass failed, or its result does not verify
            folded = False
        if folded:  # else the function keeps its unit dimensions
            scratch.body.operations[0].move_before(func)
            func.erase()


PASS = PythonPass(
    argument="mlxc-fold-unit-extent-dims",
    summary="linalg-fold-unit-extent-dims on each function, skipped where its result "
            "would not verify",
    run=run,
)
