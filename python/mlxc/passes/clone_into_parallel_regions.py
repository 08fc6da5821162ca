"""mlxc-clone-into-parallel-regions: recompute constants and memref descriptors inside
each OpenMP parallel region instead of passing them in.

LLVM outlines an `omp.parallel` region into a function and hands it every value the
region uses from outside: a pointer as it is, anything else through a stack slot
stored before the fork and loaded in the outlined function. A tile loop uses the
memref descriptors of its buffers (structs of pointers, offset, sizes and strides) and
the constants of its index arithmetic, all defined before the region: each became a
slot, the loop read its sizes and strides from memory, and LLVM could fold none of
them (in transformer_block a third of the LLVM instructions were this traffic, and
LLVM code generation took twice as long as with one thread). Cloning the pure ops
that build those values into the region leaves only pointers to pass in.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

# Ops with no operands to capture.
_LEAVES = frozenset({"llvm.mlir.constant", "llvm.mlir.poison", "llvm.mlir.undef",
                     "llvm.mlir.zero", "llvm.mlir.addressof"})
# Pure ops, cloned when each operand is cloned too or is a pointer (passed as it is).
_PURE = frozenset({"llvm.insertvalue", "llvm.extractvalue", "llvm.getelementptr",
                   "llvm.add", "llvm.sub", "llvm.mul", "llvm.shl", "llvm.and", "llvm.or",
                   "llvm.xor", "llvm.sext", "llvm.zext", "llvm.trunc", "llvm.icmp",
                   "llvm.select"})


class _Clonable:
    """Whether a value can be recomputed inside a region from constants and pointers."""

    def __init__(self, context):
        self._known: dict = {}
        # Types are uniqued: comparing with the pointer type is cheap, printing one is not.
        self._pointer = ir.Type.parse("!llvm.ptr", context=context)

    def op(self, value):
        return value.owner.operation if isinstance(value, ir.OpResult) else None

    def __call__(self, value) -> bool:
        known = self._known.get(value)
        if known is None:
            op = self.op(value)
            name = op.name if op is not None else None
            if name in _LEAVES:
                known = True
            elif name in _PURE:
                known = all(self(v) or v.type == self._pointer for v in op.operands)
            else:
                known = False
            self._known[value] = known
        return known


def _inside(region_op) -> list:
    """The ops nested in `region_op`, pre-order."""
    return irutil.walk(region_op)[1:]


def _localize(ops: list, outside: set, clonable: _Clonable) -> None:
    """Clone into the region the clonable values of `outside` its ops use."""
    if not ops:
        return
    # pre-order: the first op of the region's entry block; each clone goes before it,
    # after the clones made before it.
    at = ir.InsertionPoint(ops[0])
    clones: dict = {}

    def clone(value):
        if value in clones:
            return clones[value]
        op = value.owner.operation  # a pure op's result (clonable)
        operands = list(op.operands)
        for operand in operands:
            if clonable(operand):
                clone(operand)
        copy = op.clone(ip=at).operation
        for i, operand in enumerate(operands):
            if operand in clones:
                copy.operands[i] = clones[operand]
        # Pure and leaf ops have one result.
        clones[value] = copy.result
        return clones[value]

    for op in ops:
        # Operands are read once as a list: each read of `op.operands[i]` makes a
        # new Value.
        for i, value in enumerate(op.operands):
            if value in outside and clonable(value):
                op.operands[i] = clone(value)


def run(module) -> None:
    root = module.operation if hasattr(module, "operation") else module
    parallels: list = []
    pure: list = []  # the leaf and pure ops outside every parallel region
    clonable_names = _LEAVES | _PURE
    advance, skip = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP

    def visit(op):
        name = op.name
        if name in clonable_names:
            pure.append(op)
        elif name == "omp.parallel":
            parallels.append(op)
            return skip  # a region nested in it is part of its function
        return advance

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not parallels:
        return
    # Only the results of pure ops outside the regions may be cloned (each has one; a
    # Value hashes by identity): an operand is looked up there, and the many values
    # defined inside a region are never examined.
    clonable = _Clonable(root.context)
    outside = {op.result for op in pure}
    for parallel in parallels:
        _localize(_inside(parallel), outside, clonable)


PASS = PythonPass(
    argument="mlxc-clone-into-parallel-regions",
    summary="Clone the constants and pure ops an omp.parallel region uses into it, so that "
            "LLVM's outlining passes it only pointers",
    run=run,
)
