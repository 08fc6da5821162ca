"""mlxc-kernel-segments: the straight-line code of a large entry function, grouped into
closed segments that mlxc-dedup-kernels and mlxc-outline-kernels outline like loop nests.

Those two passes outline the loops directly in the entry that yield nothing. What the
schedules leave between such loops is not one: a column reduction whose accumulator
was hoisted out of its loop (the loop yields it, a division and a store follow), a
whole small tensor vectorized without a loop (an optimizer's update of each bias and
each 3x3 kernel). That code stayed in the entry, which LLVM compiles on one thread: in
a ResNet training step it was 12,000 lines and half of the compile's LLVM time, and
twenty updates of same-shaped leaves were compiled twenty times.

A segment is a run of consecutive compute ops (loops, linalg, vector, arith, math,
loads and stores) that ends where every value its ops define has had its last use:
nothing it computes is read after it, so it can become a function of the buffers it
touches. It is wrapped in an `scf.execute_region` with no results, which the two
passes treat as a nest (and inline again inside the kernel they make). Constants and
views between its ops stay outside (the outlining clones them in); allocations,
deallocations, calls and the terminator end a run, and a run still open there (its
values read by a call, say) is left as it was. A lone loop that yields nothing is a
nest already and is not wrapped.

With `unwrap=true` the pass does the reverse, inlining every segment left (one the
outlining did not take): the pipeline runs it after mlxc-outline-kernels.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass
from . import outline_kernels

SEGMENT = outline_kernels.SEGMENT
_COMPUTE_DIALECTS = ("scf.", "vector.", "arith.", "math.", "linalg.", "affine.", "complex.")
_COMPUTE_OPS = frozenset({"memref.load", "memref.store", "memref.copy"})
# Left in place (and cloned into a kernel that reads them): see outline_kernels.
_FREE = outline_kernels._CONSTANTS | outline_kernels._VIEWS
_TERMINATORS = frozenset({"scf.yield", "scf.condition"})


def _compute(name: str) -> bool:
    return (name.startswith(_COMPUTE_DIALECTS) and name not in _TERMINATORS) or name in _COMPUTE_OPS


def _last_uses(ops: list) -> dict:
    """For each result of `ops` (a function body), the index of the last op of `ops`
    that reads it (or holds its reader), from one walk of the body."""
    index = {}
    for i, op in enumerate(ops):
        for r in op.results:
            index[r] = i
    last = dict(index)
    for i, op in enumerate(ops):
        def visit(inner, i=i):
            for v in inner.operands:
                if v in last and last[v] < i:
                    last[v] = i
            return ir.WalkResult.ADVANCE
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return last


def _spillable(t: ir.Type) -> bool:
    return isinstance(t, (ir.VectorType, ir.FloatType, ir.IntegerType, ir.IndexType))


def segments(func) -> list[tuple[list, list]]:
    """The segments of `func`'s body worth wrapping: each its ops and the values it
    defines that are read after it (each a vector or a scalar, which `wrap` passes
    through memory)."""
    ops = list(irutil.top_level_ops(func))
    last = _last_uses(ops)
    found, run, defined = [], [], {}  # defined: a dict, as an ordered set
    reach = -1  # the last op reading a value the run defines

    def close(end: int) -> None:
        # A lone linalg op or copy becomes loops later; other lone ops are too small.
        if len(run) > 1 or run and run[0].name.startswith(("linalg.", "memref.copy")):
            live = [v for v in defined if last[v] > end]
            if all(_spillable(v.type) for v in live):
                found.append((list(run), live))
        run.clear()
        defined.clear()
        nonlocal reach
        reach = -1

    for i, op in enumerate(ops):
        name = op.name
        if name in _FREE and not (defined and any(v in defined for v in op.operands)):
            continue  # stays where it is, before the segment
        if not _compute(name) or (name in outline_kernels.LOOPS and not op.results):
            # A loop that yields nothing is a nest of its own: merged with its
            # neighbours, the twelve same nests of twelve layers would not be the same.
            close(i - 1)
            continue
        run.append(op)
        for v in op.results:
            defined[v] = None
            reach = max(reach, last[v])
        if reach <= i:
            close(i)  # closed: nothing it computed is read after it
    close(len(ops))
    return found


def wrap(func) -> None:
    """Wrap each segment of `func` in an scf.execute_region. A
    value a segment defines and later ops read is stored at its end into a buffer of
    the function (on the stack) and loaded again before each op that reads it: in an
    outlined kernel it could not be returned."""
    first = next(iter(irutil.top_level_ops(func)))
    for ops, live in segments(func):
        last = ops[-1]
        # Where its last op is: after every free op between its ops, which it may read.
        with func.context, last.location, ir.InsertionPoint(last):
            region_op = ir.Operation.create(SEGMENT, results=[], regions=1)
            block = region_op.regions[0].blocks.append()
            with ir.InsertionPoint(block):
                yield_op = ir.Operation.create("scf.yield", results=[], operands=[])
        for op in ops:
            op.move_before(yield_op)
        for value in live:
            _spill(func, first, region_op, yield_op, value)


def _spill(func, first, region_op, yield_op, value) -> None:
    outside: dict = {}  # the ops of the body after the segment that read it
    for use in list(value.uses):
        top = irutil.top_level_ancestor(use.owner)
        if top != region_op:
            outside.setdefault(top, []).append((irutil.as_operation(use.owner), use.operand_number))
    with func.context, region_op.location:
        buffer_t = ir.MemRefType.get([], value.type)
        with ir.InsertionPoint(first):
            buffer = ir.Operation.create("memref.alloca", results=[buffer_t], operands=[],
                                         attributes={"operandSegmentSizes":
                                                     ir.DenseI32ArrayAttr.get([0, 0])}).result
        with ir.InsertionPoint(yield_op):
            ir.Operation.create("memref.store", results=[], operands=[value, buffer])
        for top, uses in outside.items():
            with ir.InsertionPoint(top):
                loaded = ir.Operation.create("memref.load", results=[value.type],
                                             operands=[buffer]).result
            for owner, index in uses:
                owner.operands[index] = loaded


def unwrap_all(func) -> None:
    for op in [op for op in irutil.top_level_ops(func) if op.name == SEGMENT]:
        outline_kernels.unwrap(op)


def run(module, min_ops: str = str(outline_kernels.MIN_OPS), unwrap: str = "false") -> None:
    reverse = unwrap.lower() in ("1", "true")
    for func in outline_kernels.outlined_functions(module, int(min_ops)):
        if reverse:
            unwrap_all(func)
        else:
            wrap(func)


PASS = PythonPass(
    argument="mlxc-kernel-segments",
    summary="Group a large entry's straight-line code into closed segments the kernel "
            "outlining takes like loop nests",
    run=run,
    options={"min-ops": "only in functions of at least this many ops "
                        f"(default {outline_kernels.MIN_OPS})",
             "unwrap": "inline the segments left instead (default false)"},
    defaults={"min-ops": str(outline_kernels.MIN_OPS), "unwrap": "false"},
)
