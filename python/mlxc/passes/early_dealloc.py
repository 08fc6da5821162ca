"""mlxc-early-dealloc: free each temporary right after its last use.

The ownership-based `buffer-deallocation-pipeline` frees buffers at the end of the block
that allocated them, so in a straight-line program every temporary lives until the
function returns and the peak is the sum of them all. XLA's buffer assignment reuses a
dead buffer for a later one. Moving each `memref.dealloc` up to just after the last op
of its block that touches the buffer (directly, through a view of it, or inside the
regions of that op) gives the same effect through malloc: a later allocation of the
same size gets the freed, still cache-warm, memory, and the peak counted by
mlxc-record-temp-memory is what is live at once.

Runs after convert-bufferization-to-memref, on plain memref.dealloc ops whose buffer
comes from a memref.alloc in the same block; others stay where they are.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _top(op, block):
    """The ancestor of `op` that sits directly in `block`, or None."""
    while op is not None:
        if op.block == block:
            return op
        parent = op.parent
        op = irutil.as_operation(parent) if parent is not None else None
        if op is not None and op.name == "builtin.module":
            return None
    return None


def _last_use(buffer, dealloc, block):
    """The last op of `block` (other than `dealloc`) that touches `buffer`, or None if
    a use escapes the block or the buffer is captured by an op we cannot see through."""
    last = None
    work = [buffer]
    seen: set = {buffer}
    while work:
        value = work.pop()
        for use in value.uses:
            user = irutil.as_operation(use.owner)
            if user == dealloc:
                continue
            top = _top(user, block)
            if top is None:
                return None
            # Whatever may alias the buffer afterwards: views of it, and the memref
            # results of the user and of the ops around it (a loop that carries it).
            op = user
            while op is not None:
                work.extend(r for r in op.results if isinstance(r.type, ir.MemRefType)
                            and r not in seen)
                seen.update(op.results)
                op = None if op == top else irutil.as_operation(op.parent)
            if last is None or last.is_before_in_block(top):
                last = top
    return last


def run(module) -> None:
    # One walk for the deallocs, as plain Operations: `block.operations` would wrap every
    # op of every block in its OpView class (and import that dialect's package). Within a
    # block they come in order, so two moved after the same op keep the order they had
    # when handled block by block; moves in different blocks are independent.
    for dealloc in irutil.ops_named(module, "memref.dealloc"):
        block = dealloc.block
        buffer = dealloc.operands[0]
        alloc = irutil.defining_op(buffer)
        if alloc is None or alloc.name != "memref.alloc" or alloc.block != block:
            continue
        last = _last_use(buffer, dealloc, block)
        if last is not None and last.is_before_in_block(dealloc):
            dealloc.move_after(last)


PASS = PythonPass(
    argument="mlxc-early-dealloc",
    summary="Move each memref.dealloc to just after the last use of its buffer",
    run=run,
)
