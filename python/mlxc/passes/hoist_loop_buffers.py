"""mlxc-hoist-loop-buffers: small buffers a loop step allocates are allocated once.

One-shot bufferization gives each rank-0 or tiny tensor op in a loop body a fresh
buffer, so every step of a lax.fori_loop computing its index (`i < 0 ? i + n : i`, a
clamp, a comparison) calls malloc and free for four bytes. A buffer that lives within
one step (only read, written, copied or viewed there, never yielded, returned or
passed on) holds nothing from one step to the next, so it may be the same buffer in
every step: the alloc moves before the loop, and the deallocation pipeline frees it
after the loop instead of once per step.

Only out of sequential loops (scf.for, scf.while): the steps of an scf.forall run on
several threads at once and each needs its own buffer. Only small static buffers (up
to 1 KiB), where the allocation costs more than the work on it; a large one would stay
alive across the loop for nothing.
"""

from __future__ import annotations

import math

from .. import irutil
from .._mlir import ir
from . import PythonPass

_MAX_BYTES = 1024
_SEQUENTIAL = ("scf.for", "scf.while")
_VIEWS = {"memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape",
          "memref.reinterpret_cast"}
_ACCESSES = {"memref.load", "memref.store", "vector.load", "vector.store",
             "vector.transfer_read", "vector.transfer_write", "memref.copy"}


def _bits(t) -> int | None:
    if isinstance(t, ir.IntegerType):
        return t.width
    if isinstance(t, ir.FloatType):
        return t.width
    if isinstance(t, ir.IndexType):
        return 64
    if isinstance(t, ir.ComplexType):
        inner = _bits(t.element_type)
        return None if inner is None else 2 * inner
    return None


def _small(alloc) -> bool:
    t = ir.MemRefType(alloc.result.type)
    bits = _bits(t.element_type)
    return (not list(alloc.operands) and t.has_static_shape and bits is not None
            and math.prod(t.shape) * max(bits, 8) // 8 <= _MAX_BYTES)


def _within_step(value) -> bool:
    """Whether every use of `value` and of its views only accesses memory in place."""
    for use in value.uses:
        user = irutil.as_operation(use.owner)
        if user.name in _VIEWS:
            if not all(_within_step(r) for r in user.results):
                return False
        elif user.name in _ACCESSES:
            continue
        elif not (user.name.startswith("linalg.") and "operandSegmentSizes" in user.attributes):
            return False  # yielded, returned, passed to a call, or an op we do not know
    return True


def _outermost_loop(alloc):
    """The outermost of the sequential loops directly around `alloc`, or None."""
    loop = None
    parent = alloc.parent
    while parent is not None and parent.name in _SEQUENTIAL:
        loop = parent
        parent = parent.parent
    return loop


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func":
            continue
        for op in irutil.walk(func):
            if op.name != "memref.alloc" or not _small(op):
                continue
            loop = _outermost_loop(op)
            if loop is not None and _within_step(op.result):
                op.move_before(loop)


PASS = PythonPass(
    argument="mlxc-hoist-loop-buffers",
    summary="Allocate the small buffers a sequential loop's step uses once, before the loop",
    run=run,
)
