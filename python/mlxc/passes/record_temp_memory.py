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


def peak_bytes(func, callee_peak=None) -> int:
    """The peak of `func`'s temporaries; `callee_peak(name)`, when given, is the peak
    of a function it calls, added while the call runs."""
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
        elif op.name == "func.call" and callee_peak is not None:
            peak = max(peak, total + callee_peak(
                ir.FlatSymbolRefAttr(op.attributes["callee"]).value))
    return peak


def run(module) -> None:
    entry = irutil.string_attr(module, "mlxc.entry")
    func = irutil.find_function(module, entry) if entry else None
    peak = 0
    if func is not None and func.name == "func.func":
        defined = {irutil.sym_name(f): f for f in irutil.functions(module)
                   if f.name == "func.func" and f.regions[0].blocks}
        peaks: dict = {}

        def callee_peak(name: str) -> int:
            # Each function's peak once, with its own callees' (a layer may call another).
            if name not in peaks:
                peaks[name] = 0  # a recursive call adds nothing more
                if name in defined:
                    peaks[name] = peak_bytes(defined[name], callee_peak)
            return peaks[name]

        peak = peak_bytes(func, callee_peak)
    module.attributes["mlxc.temp_bytes"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), peak)


PASS = PythonPass(
    argument="mlxc-record-temp-memory",
    summary="Record the peak bytes of temporary buffers as mlxc.temp_bytes",
    run=run,
)
