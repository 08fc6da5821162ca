"""mlxc-record-temp-memory: the peak bytes of temporary buffers, for memory_stats().

Run after bufferization and deallocation: walks the entry function in program order,
adding each memref.alloc and subtracting each memref.dealloc, and records the
largest total live at once as the module attribute `mlxc.temp_bytes` (i64). Results
are the caller's buffers and are not counted. An allocation inside a loop counts once:
the deallocation pipeline frees it in the same iteration. Stack buffers (memref.alloca:
the one row mlxc-fuse-row-loops keeps for all iterations of a row loop) are not
counted, as XLA does not count its stack. A call of a function defined in the module
(a layer mlxc-outline-layers made) adds that function's own peak while it runs.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _bytes(t: ir.MemRefType) -> int:
    if not t.has_static_shape:
        return 0
    count = 1
    for d in t.shape:
        count *= d
    et = t.element_type
    width = getattr(et, "width", None)
    if width is None and isinstance(et, ir.IndexType):
        width = 64
    if width is None and isinstance(et, ir.ComplexType):
        width = 2 * getattr(et.element_type, "width", 32)
    return count * max(1, -(-(width or 32) // 8))


def peak_bytes(func, callees: dict | None = None) -> int:
    """The peak of `func`'s temporaries; `callees` maps the names of the functions it
    calls to their own peaks (computed on demand from the module when given)."""
    live: dict = {}
    total = peak = 0
    for op in irutil.walk(func):
        if op.name == "memref.alloc":
            size = _bytes(ir.MemRefType(op.results[0].type))
            live[op.results[0]] = size
            total += size
            peak = max(peak, total)
        elif op.name == "memref.dealloc":
            total -= live.pop(op.operands[0], 0)
        elif op.name == "func.call" and callees is not None:
            peak = max(peak, total + callees.get(
                ir.FlatSymbolRefAttr(op.attributes["callee"]).value, 0))
    return peak


def run(module) -> None:
    entry = irutil.string_attr(module, "mlxc.entry")
    func = irutil.find_function(module, entry) if entry else None
    if func is None or func.name != "func.func":
        peak = 0
    else:
        # The defined functions' peaks, callees first (layers call no layer).
        callees: dict = {}
        for f in irutil.functions(module):
            if f.name == "func.func" and f.regions[0].blocks and f != func:
                callees[irutil.sym_name(f)] = peak_bytes(f)
        peak = peak_bytes(func, callees)
    module.attributes["mlxc.temp_bytes"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), peak)


PASS = PythonPass(
    argument="mlxc-record-temp-memory",
    summary="Record the peak bytes of temporary buffers as mlxc.temp_bytes",
    run=run,
)
