"""mlxc-parallelize-tile-loops: run the outer tile loops of large ops on the thread pool.

The CPU schedules tile each large op into an outermost `scf.forall` whose iterations
write disjoint tiles. This pass turns such a loop into `scf.parallel` when its work is
worth waking the pool for; `convert-scf-to-openmp` then makes it an OpenMP region, which
LLVM outlines into a call to the runtime's `__kmpc_fork_call` (runtime/mlxc_parallel.c).
Every other `scf.forall` stays for `scf-forall-to-for`: a loop nested in another loop
(the outer one already uses every thread), and small work. The threshold, 2^20 elements
touched (some 10 to 50 us on one thread), weighs both costs of a region: waking the
workers and the barrier take a few microseconds per call, and each region costs LLVM
5 to 8 ms of compile time (an outlined function around a loop with run-time bounds).
Below it, the second thread saves a few microseconds at most (softmax on 128x1000 with
three such regions ran 118 us on one thread, 106 us on two).

Work is estimated statically, shapes being static: the loop's trip count times the
elements each iteration touches, counting each op by the elements of its widest vector
and multiplying by the trip counts of the `scf.for` loops around it. Loops whose body
allocates on the stack (`memref.alloca`) are left alone: an OpenMP worksharing loop has
no per-iteration stack scope, so the stack would grow with every iteration.
"""

from __future__ import annotations

from typing import Optional

from .. import irutil
from .._mlir import arith, ir, scf
from . import PythonPass

_LOOPS = ("scf.for", "scf.forall", "scf.parallel", "scf.while", "omp.parallel",
          "omp.wsloop", "affine.for", "affine.parallel")
_DYNAMIC = -(2 ** 63)  # ShapedType::kDynamic in static bound attributes
_UNKNOWN_TRIPS = 16    # an scf.for whose bounds are not constants
MIN_WORK = 1 << 20     # see the module docstring


def _for_trips(op) -> int:
    operands = op.operands
    lo, hi, step = (irutil.constant_int(operands[i]) for i in range(3))
    if None in (lo, hi, step) or step <= 0:
        return _UNKNOWN_TRIPS
    return max(0, -(-(hi - lo) // step))


# Ops whose widest vector is their result: elementwise ops (each operand has the
# result's shape, or is a scalar) and ops that build a vector from smaller values.
_RESULT_IS_WIDEST = ("arith.", "math.")
_RESULT_IS_WIDEST_OPS = frozenset({
    "vector.broadcast", "vector.fma", "vector.from_elements", "vector.insert",
    "vector.insert_strided_slice", "vector.load", "vector.splat", "vector.transfer_read"})
# ... and ops whose widest vector is their first operand, the vector they store or
# take apart.
_OPERAND_IS_WIDEST = frozenset({
    "vector.extract", "vector.extract_strided_slice", "vector.multi_reduction",
    "vector.reduction", "vector.store", "vector.transfer_write"})


def _size(t, sizes: dict) -> int:
    """Elements of a vector type, 1 for any other; `sizes` remembers each type's."""
    n = sizes.get(t)
    if n is None:
        n = 1
        if isinstance(t, ir.VectorType):
            for d in t.shape:
                n *= d
        sizes[t] = n
    return n


def _elements(op, sizes: dict) -> int:
    """The elements of the widest vector `op` reads or writes (1 if none). Reading a
    type costs about half a microsecond: where the op's definition says which value is
    widest, only that one is read."""
    name = op.name
    count = len(op.results)
    if count == 1 and (name in _RESULT_IS_WIDEST_OPS or name.startswith(_RESULT_IS_WIDEST)):
        return _size(op.result.type, sizes)
    if name in _OPERAND_IS_WIDEST:
        return _size(op.operands[0].type, sizes)
    types = [op.result.type] if count == 1 else list(op.results.types) if count else []
    widest = 1
    for t in types + [v.type for v in op.operands]:
        widest = max(widest, _size(t, sizes))
    return widest


def _linalg_trips(op) -> int:
    """Iterations of a linalg op that no schedule vectorized (a two-result reduction such
    as argmax): it becomes a scalar loop nest running its body once per element of its
    largest operand, at least. Counted as one iteration, argmax over 256x1000 looked
    like 2,560 elements of work and ran 2 ms on one thread."""
    trips = 1
    for v in op.operands:
        t = v.type
        if isinstance(t, ir.MemRefType) and ir.MemRefType(t).has_static_shape:
            n = 1
            for d in ir.MemRefType(t).shape:
                n *= d
            trips = max(trips, n)
    return trips


def work(op, cap: int, sizes: Optional[dict] = None) -> int:
    """Elements touched by one execution of `op`, nested ops included, counted up to
    `cap`: min(work, cap). Reading an op's types costs microseconds, so a large loop
    stops being counted once it is known to be worth a parallel region. `sizes`: the
    vector types seen so far, with their elements."""
    if sizes is None:
        sizes = {}
    if not len(op.regions):
        return min(_elements(op, sizes), cap)
    name = op.name
    trips = _for_trips(op) if name == "scf.for" else _linalg_trips(op) if \
        name.startswith("linalg.") else 1
    if trips == 0:
        return 0
    need = -(-cap // trips)  # inner >= need  <=>  trips * inner >= cap
    inner = 0
    for o in irutil.top_level_ops(op):
        inner += work(o, need - inner, sizes)
        if inner >= need:
            return cap
    return trips * inner


def forall_trips(op) -> int | None:
    """The trip count of an `scf.forall` with static bounds, else None."""
    lbs, ubs, steps = (ir.DenseI64ArrayAttr(op.attributes[k]) for k in
                       ("staticLowerBound", "staticUpperBound", "staticStep"))
    trips = 1
    for lo, hi, st in zip(lbs, ubs, steps):
        if _DYNAMIC in (lo, hi, st) or st <= 0:
            return None
        trips *= max(0, -(-(hi - lo) // st))
    return trips


def _outermost_foralls(func) -> list:
    """The scf.forall ops of `func` inside no other loop: one walk that skips the body
    of every loop it meets."""
    found: list = []

    def visit(op):
        name = op.name
        if name in _LOOPS:
            if name == "scf.forall":
                found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _allocates(op) -> bool:
    found: list = []

    def visit(o):
        if o.name == "memref.alloca":
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def _candidates(module, min_work: int) -> list:
    chosen = []
    sizes: dict = {}  # types are uniqued: a few dozen for the whole module
    for func in irutil.functions(module):
        for op in _outermost_foralls(func):
            if len(op.results):
                continue
            trips = forall_trips(op)
            if trips is None or trips < 2:
                continue
            if _allocates(op):
                continue
            need = -(-min_work // trips)  # trips * work >= min_work
            if work(op, need, sizes) >= need:
                chosen.append(op)
    return chosen


def _to_parallel(op) -> None:
    """Replace `op` (an scf.forall on memrefs) by the equivalent scf.parallel."""
    index = ir.IndexType.get()
    bounds = [ir.DenseI64ArrayAttr(op.attributes[k]) for k in
              ("staticLowerBound", "staticUpperBound", "staticStep")]
    with op.location, ir.InsertionPoint(op):
        lbs, ubs, steps = ([arith.ConstantOp(index, v).result for v in vals] for vals in bounds)
        par = scf.ParallelOp([], lbs, ubs, steps, [])
    body = par.regions[0].blocks.append(*([index] * len(lbs)))
    old = op.regions[0].blocks[0]
    for old_iv, new_iv in zip(old.arguments, body.arguments):
        old_iv.replace_all_uses_with(new_iv)
    with op.location, ir.InsertionPoint(body):
        terminator = scf.ReduceOp([], 0)
    ops = list(old.operations)
    for o in ops[:-1]:  # the last is the empty scf.forall.in_parallel terminator
        o.operation.move_before(terminator.operation)
    op.erase()


def run(module, min_work: str = str(MIN_WORK)) -> None:
    try:
        threshold = int(min_work)
    except ValueError:
        raise ValueError(f"mlxc-parallelize-tile-loops: min-work={min_work!r} is not an integer") \
            from None
    for op in _candidates(module, threshold):
        _to_parallel(op)


PASS = PythonPass(
    argument="mlxc-parallelize-tile-loops",
    summary="Turn the outermost scf.forall tile loops of large ops into scf.parallel",
    run=run,
    options={"min-work": "elements touched (trip count x per-iteration work) below which a "
                         "loop runs on its caller (default 1048576)"},
)
