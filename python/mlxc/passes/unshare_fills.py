"""mlxc-unshare-fills: a fill that several ops start from is computed once for each.

`cse` merges identical fills, so the zero-filled accumulators of the q, k and v matmuls
of an attention block become one tensor that all three start from. Bufferization must
then keep that filled buffer alive until the last of them has copied it: a buffer for
the whole program plus one copy per matmul. Filling each op's own buffer costs the same
writes as the copy, and nothing stays alive.

Runs at the start of the bufferize stage, after the last `cse`. A fill here is a
`linalg.fill`, or a loop of tiles (scf.for / scf.forall, as the CPU schedules leave
fills) that reads no tensor data: its only tensor operands are `tensor.empty`, and its
body only slices and writes. Each user gets its own copy, placed just before it. (The
tensor.empty ops stay shared: one-shot-bufferize then lets ops whose results are not
alive at once write the same buffer.)
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

# What a tiled fill is made of: index math, slicing, writes, and the loop scaffolding.
_FILL_BODY = {"arith.constant", "arith.addi", "arith.subi", "arith.muli", "arith.divui",
              "arith.divsi", "arith.remui", "arith.remsi", "arith.minsi", "arith.minui",
              "arith.maxsi", "arith.maxui", "arith.index_cast", "affine.apply", "affine.min",
              "affine.max", "ub.poison", "vector.broadcast", "vector.transfer_write",
              "tensor.extract_slice", "tensor.insert_slice", "tensor.parallel_insert_slice",
              "scf.forall.in_parallel", "scf.yield", "scf.for", "scf.forall", "linalg.fill",
              "linalg.yield", "tensor.empty"}


def _is_fill(op) -> bool:
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    for value in op.operands:
        if isinstance(value.type, ir.RankedTensorType):
            producer = irutil.defining_op(value)
            if producer is None or producer.name != "tensor.empty":
                return False
    if op.name == "linalg.fill":
        return True
    if op.name not in ("scf.for", "scf.forall"):
        return False
    ok = True

    def visit(inner):
        nonlocal ok
        if inner.name not in _FILL_BODY and inner != op:
            ok = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ok


def _fills(root) -> list:
    """The fills, outermost only (a fill loop's own inner fills are left to it)."""
    return irutil.outermost(
        root, lambda op: op.name in ("linalg.fill", "scf.for", "scf.forall") and _is_fill(op))


def _copy_per_user(op) -> None:
    uses = [(irutil.as_operation(u.owner), u.operand_number) for u in op.results[0].uses]
    # A use inside a loop keeps the op before the loop: filling once is cheaper.
    for user, index in [(u, i) for u, i in uses if u.block == op.block]:
        copy = op.clone(ip=ir.InsertionPoint(user))
        user.operands[index] = copy.results[0]
    if not list(op.results[0].uses):
        op.erase()


def run(module) -> None:
    root = irutil.as_operation(module)
    for op in _fills(root):
        _copy_per_user(op)


PASS = PythonPass(
    argument="mlxc-unshare-fills",
    summary="Give each op that starts from a shared fill its own copy of the fill",
    run=run,
)
