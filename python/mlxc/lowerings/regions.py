"""Moving the body of a StableHLO region into a block of another op.

The control-flow and sort lowerings keep the ops of the regions they replace as they
are (StableHLO, legalized later by `stablehlo-legalize-to-linalg`, which also converts
nested regions); only the block arguments and the terminator change.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .._mlir import ir


def move_body(region, block, arguments: Sequence, terminate: Callable[[list], None]) -> None:
    """Move the ops of `region`'s single block to the end of `block`.

    The region's block arguments are replaced by `arguments`; its terminator (a
    `stablehlo.return`) is replaced by what `terminate(operands)` builds at its place.
    """
    source = region.blocks[0]
    for old, new in zip(source.arguments, arguments):
        old.replace_all_uses_with(new)
    ops = [o.operation for o in source.operations]
    end = ir.InsertionPoint(block)
    for o in ops:
        o.detach_from_parent()
        end.insert(o)
    last = ops[-1]
    with ir.InsertionPoint(last), last.location:
        terminate(list(last.operands))
    last.erase()
