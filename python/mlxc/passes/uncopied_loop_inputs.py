"""mlxc-uncopied-loop-inputs: a loop that only reads its initial state reads the input.

One-shot bufferization counts every `scf.for` iter_arg as written, so a loop whose
state starts from a read-only input (lax.scan's initial carry, `h0`) gets a copy of
that input, kept alive until the loop ends:

    %a = memref.alloc() : memref<16x128xf32>
    memref.copy %arg0, %a
    scf.for ... iter_args(%h = %a) { reads %h; yields a new buffer }

When the loop body only reads its iteration argument (through views, loads, transfer
reads, copies from it and linalg inputs) and never yields it, no step writes the
initial buffer, so the loop may start from `%arg0` itself: the copy and its buffer go.
The loop must run at least once (constant bounds), or its result would be `%arg0`,
which later ops may write in place. Runs after one-shot-bufferize, before the
deallocation pipeline, which then sees `%arg0` as a buffer the function does not own.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_VIEWS = {"memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape",
          "memref.reinterpret_cast"}
_READS = {"memref.load", "vector.load", "vector.transfer_read"}


def _only_read(value) -> bool:
    """Whether every use of `value`, and of the views of it, only reads memory."""
    for use in value.uses:
        user = irutil.as_operation(use.owner)
        if user.name in _VIEWS:
            if not all(_only_read(r) for r in user.results):
                return False
        elif user.name in _READS or (user.name == "memref.copy" and use.operand_number == 0):
            continue
        elif user.name.startswith("linalg.") and "operandSegmentSizes" in user.attributes:
            n_inputs = ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"])[0]
            if use.operand_number >= n_inputs:
                return False
        else:
            return False  # yielded, returned, written, or an op we do not know
    return True


def _runs(loop) -> bool:
    lower, upper = (irutil.constant_int(v) for v in list(loop.operands)[:2])
    return lower is not None and upper is not None and lower < upper


def _forward(copy, inputs, forwarded: list) -> bool:
    source, target = copy.operands
    if source not in inputs or isinstance(target.owner, ir.Block):
        return False
    alloc = irutil.as_operation(target.owner)
    users = [(irutil.as_operation(u.owner), u.operand_number) for u in target.uses]
    loops = [(op, n) for op, n in users if op.name == "scf.for"]
    if alloc.name != "memref.alloc" or len(users) != 2 or len(loops) != 1:
        return False
    loop, operand = loops[0]
    if operand < 3 or loop.block != copy.block or not copy.is_before_in_block(loop):
        return False
    iter_arg = loop.regions[0].blocks[0].arguments[operand - 2]  # after the induction variable
    if source.type != target.type or not _runs(loop) or not _only_read(iter_arg):
        return False
    # Arguments may alias one another: a loop starting from two of them has results
    # that may alias, and freeing those takes a run-time check (a dealloc helper) that
    # the bare-pointer LLVM lowering cannot compile. One argument per loop.
    if any(loop == other for other in forwarded):
        return False
    forwarded.append(loop)
    loop.operands[operand] = source
    copy.erase()
    alloc.erase()
    return True


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not irutil.is_public(func) or not func.regions[0].blocks:
            continue
        inputs = list(func.regions[0].blocks[0].arguments)
        copies = [op for op in irutil.walk(func) if op.name == "memref.copy"]
        forwarded: list = []
        for copy in copies:
            _forward(copy, inputs, forwarded)


PASS = PythonPass(
    argument="mlxc-uncopied-loop-inputs",
    summary="A loop that only reads its initial state starts from the read-only input "
            "itself, not from a copy of it",
    run=run,
)
