"""mlxc-buffers-at-calls: each runtime kernel call reads its tensors through its own
`bufferization.to_buffer`, placed just before it.

The library passes (kernel_calls.py) hand a call its input tensors as
`to_buffer read_only` views, one per call, right before it. One-shot bufferization
sees a `to_buffer` as a read of the tensor at that point only, not at the later uses of
the memref it returns. `cse` merges the `to_buffer`s (and the rank-0 views) that
several calls make of one tensor, so the later calls read a memref made before ops
that bufferization then lets write in place over that tensor's buffer: a gradient of
`jnp.linalg.solve` on a 1x1 matrix wrote a constant over the LU factor that two
further triangular solves read (fuzz case linalg/11444).

Runs at the start of the bufferize stage, after the last `cse`: every call whose
operand comes from a `to_buffer` (through views) gets fresh copies of that chain
just before it; the shared ones go when nothing uses them.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_VIEWS = ("memref.reinterpret_cast", "memref.collapse_shape", "memref.expand_shape",
          "memref.cast", "memref.subview")


def _chain(value) -> list:
    """The ops from a to_buffer to `value` through views (outermost first), or []."""
    ops = []
    while True:
        owner = value.owner
        if not hasattr(owner, "name"):
            return []  # a block argument
        name = owner.name
        if name == "bufferization.to_buffer":
            return [owner] + ops[::-1]
        if name not in _VIEWS:
            return []
        ops.append(owner)
        value = owner.operands[0]


def run(module) -> None:
    stale = []
    for call in irutil.ops_named(module, "func.call"):
        for i, operand in enumerate(list(call.operands)):
            chain = _chain(operand)
            if not chain:
                continue
            mapping: dict = {}
            with ir.InsertionPoint(call):
                clones = irutil.clone_ops(chain, mapping)
            call.operands[i] = clones[-1].results[0]
            stale.extend(op for op in chain if not any(op == s for s in stale))
    # Erase what no op reads any more, views before the buffers they view.
    irutil.erase_unused(stale)


PASS = PythonPass(
    argument="mlxc-buffers-at-calls",
    summary="each kernel call reads its tensors through its own to_buffer, just before it "
            "(cse merges them, and bufferization sees only the first read)",
    run=run,
)
