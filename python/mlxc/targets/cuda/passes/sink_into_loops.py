"""mlxc-gpu-sink-into-loops: clone the scalar code and views a parallel loop uses into it.

Each top-level `scf.parallel` becomes a kernel, and a kernel may only take whole
buffers from the host: a subview, a reshaped view or an index loaded from a device
array (dynamic_slice's start) must be computed on the device. So every pure op or
view defined outside a loop and used inside it is cloned into the loop body, with
the values it depends on. A `memref.load` is cloned too, which moves the read later:
that is refused when a loop in between may write the buffer it reads.
"""

from __future__ import annotations

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....errors import CompileError
from ....passes import PythonPass


def _op(value):
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") and not isinstance(owner, ir.Block) else owner


def _root(value):
    """The buffer a view is a view of (an argument, alloc or global)."""
    while True:
        owner = _op(value)
        if isinstance(owner, ir.Operation) and owner.name in loops.VIEW_OPS:
            value = owner.operands[0]
            continue
        return value


def _needed(loop, top_block) -> list:
    """Top-level sinkable ops the loop depends on, in program order."""
    found: dict = {}
    work = [o for o in irutil.walk(loop)[1:]]
    while work:
        op = work.pop()
        for v in op.operands:
            owner = _op(v)
            if not isinstance(owner, ir.Operation) or owner.block != top_block:
                continue
            if not loops.is_sinkable(owner):
                continue
            key = owner
            if key not in found:
                found[key] = owner
                work.append(owner)
    return sorted(found.values(), key=_position(top_block))


def _position(block):
    index = {op.operation: i for i, op in enumerate(block.operations)}
    return lambda op: index[op]


def _check_read_order(load, loop, top_block) -> None:
    root = _root(load.operands[0])
    between = False
    for op in top_block.operations:
        op = op.operation
        if op == load:
            between = True
            continue
        if op == loop:
            return
        if between and op.name == "scf.parallel":
            for inner in irutil.walk(op):
                if inner.name == "memref.store" and _root(inner.operands[1]) == root:
                    raise CompileError.at(load, "the cuda target cannot move this read into the "
                                                "kernel that uses it: a kernel in between writes "
                                                "the same buffer")


def _sink(loop, top_block) -> None:
    needed = _needed(loop, top_block)
    if not needed:
        return
    body = loop.regions[0].blocks[0]
    first = list(body.operations)[0].operation
    mapping: dict = {}
    for op in needed:
        if op.name == "memref.load":
            _check_read_order(op, loop, top_block)
        clone = op.clone(ir.InsertionPoint(first))
        for i, v in enumerate(clone.operands):
            if v in mapping:
                clone.operands[i] = mapping[v]
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    for old, new in mapping.items():
        for use in list(old.uses):
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if loops.is_inside(owner, loop):
                owner.operands[use.operand_number] = new


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        top = loops.entry_body(func)
        for op in list(top.operations):
            if op.operation.name == "scf.parallel":
                _sink(op.operation, top)


PASS = PythonPass(
    argument="mlxc-gpu-sink-into-loops",
    summary="Clone the pure ops and views each top-level scf.parallel uses into its body",
    run=run,
)
