"""mlxc-distinct-result-buffers: give every returned buffer of a function its own.

A program may return one value twice (`return %0, %0`, as JAX does for `(round(x),
round(x))` after CSE), and so may a layer mlxc-outline-layers made a function (two of
its results folded into one value by the fuse stage). Each result becomes its own output buffer, but
`buffer-results-to-out-params{hoist-static-allocs}` would replace the one allocation by
two output arguments, which crashes it. Before that pass we return a fresh copy for
every repeat, so each returned memref is distinct.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _dedupe(ret) -> None:
    seen = set()
    for i, value in enumerate(list(ret.operands)):
        if not isinstance(value.type, ir.MemRefType):
            continue
        if value in seen:
            with ir.InsertionPoint(ret), ret.location:
                fresh = ir.Operation.create("memref.alloc", results=[value.type],
                                            attributes={"operandSegmentSizes":
                                                        ir.DenseI32ArrayAttr.get([0, 0])}).result
                ir.Operation.create("memref.copy", operands=[value, fresh])
            ret.operands[i] = fresh
        else:
            seen.add(value)


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for block in func.regions[0].blocks:
            ops = block.operations  # only the last is wrapped in its Python class
            terminator = ops[len(ops) - 1].operation
            if terminator.name == "func.return":
                _dedupe(terminator)


PASS = PythonPass(
    argument="mlxc-distinct-result-buffers",
    summary="Return a copy for each repeated result buffer of a function",
    run=run,
)
