"""mlxc-shape-assumptions: `shape.assuming` regions inlined, their constraints dropped.

torch-mlir guards each broadcast of a dynamic program with
`shape.cstr_broadcastable` and runs it under `shape.assuming`. mlxc compiles such
a program once per call's shapes, where every shape is a constant: a broadcast
whose shapes do not fit fails to verify when the shapes are refined (a compile
error naming the op), so the run-time witnesses say nothing. Without them,
`shape-legalize-to-stablehlo` turns the remaining shape arithmetic (shape_of,
broadcast, tensor.dim, from_elements) into StableHLO that the refinement folds.
"""

from __future__ import annotations

from .. import irutil
from . import PythonPass

_WITNESSES = ("shape.cstr_broadcastable", "shape.cstr_eq", "shape.cstr_require",
              "shape.assuming_all", "shape.const_witness")


def run(module) -> None:
    for op in reversed(irutil.ops_named(module, "shape.assuming")):
        block = op.regions[0].blocks[0]
        body = list(block.operations)
        yielded = list(body[-1].operands)
        for inner in body[:-1]:
            inner.operation.move_before(op)
        for result, value in zip(op.results, yielded):
            result.replace_all_uses_with(value)
        body[-1].erase()
        op.erase()
    # Witnesses are used only by assumings (now gone) and by each other.
    irutil.erase_unused(irutil.ops_named(module, *_WITNESSES))


PASS = PythonPass(
    argument="mlxc-shape-assumptions",
    summary="shape.assuming regions inlined and their broadcast constraints dropped "
            "(shapes are constants once the call's shapes are known)",
    run=run,
)
