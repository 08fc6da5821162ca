"""mlxc-rolled-loops: LLVM keeps the loops the schedules chose as loops.

The CPU schedules already unroll what pays: register tiles and vector transfers are
unrolled in MLIR, and what remains an scf.for is meant to run as a loop. LLVM's -O1
unroller disagrees for every loop of constant trip count: cumsum's ten shifted steps,
sixteen 64-lane vectors each, became 160 straight-line blocks, and instruction selection
and scheduling of that code was most of the program's 250 ms compile. Unrolling a loop
whose body is already four 512-bit vectors wide saves a compare and a branch per
iteration.

Only loops around vector code are kept rolled: a scalar loop nest (what the schedules
leave to LLVM: grouped convolutions, pooling windows) relies on LLVM's unrolling, and a
depthwise convolution's ran 7x slower without it. Loops that carry values (iter_args:
a row's running max or sum) are left to LLVM too:
unrolled, the independent exponentials of successive iterations overlap, and softmax
ran 12% slower without that. Each other scf.for gets `llvm.loop_annotation` with
unrolling disabled; convert-scf-to-cf puts
it on the loop's back edge, and mlxc-loop-annotations renames it there, so that it
becomes the LLVM branch's own `loop_annotation`, which the translation to LLVM IR
turns into `llvm.loop` metadata.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

ATTR = "llvm.loop_annotation"


def _vector_loops(module) -> list:
    """The scf.for ops with a vector op somewhere in their body, outermost first."""
    found, seen = [], set()
    for op in irutil.walk(module):
        if not op.name.startswith("vector."):
            continue
        parent = op.parent
        while parent is not None and parent.name != "func.func":
            if parent.name == "scf.for":
                key = parent.operation
                if key in seen:
                    break   # its ancestors are marked already
                seen.add(key)
                found.append(parent)
            parent = parent.parent
    return found


def run(module) -> None:
    loops = _vector_loops(module)
    if not loops:
        return
    with irutil.as_operation(module).context:
        keep = ir.Attribute.parse("#llvm.loop_annotation<unroll = <disable = true>>")
        for loop in loops:
            if len(loop.results) == 0 and ATTR not in loop.attributes:
                loop.attributes[ATTR] = keep


PASS = PythonPass(
    argument="mlxc-rolled-loops",
    summary="every scf.for asks LLVM not to unroll it (llvm.loop_annotation): the schedules "
            "have unrolled what pays, and LLVM's unrolling of the rest cost compile time",
    run=run,
)
