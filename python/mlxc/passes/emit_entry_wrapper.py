"""mlxc-emit-entry-wrapper: add `void mlxc_entry(void **buffers)` calling the entry.

After `convert-func-to-llvm{use-bare-ptr-memref-call-conv}` the entry takes one bare
pointer per input and per output buffer. The wrapper gives every program the same C
signature, so the JIT, AOT libraries and C callers share one calling convention:
`buffers[i]` is the i-th input, then the outputs, each a dense row-major array.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass


def run(module, symbol: str = "mlxc_entry") -> None:
    entry = irutil.string_attr(module, "mlxc.entry") or "main"
    func = irutil.find_function(module, entry)
    if func is None or func.name != "llvm.func":
        raise CompileError.at(module, f"mlxc-emit-entry-wrapper: no llvm.func @{entry}; run it "
                                      "after the module is lowered to the LLVM dialect")
    if irutil.find_function(module, symbol) is not None:
        raise CompileError.at(func, f"mlxc-emit-entry-wrapper: the module already defines @{symbol}")
    # The attribute's text, not its value: an LLVM type object would import the llvm
    # dialect's Python package (a tenth of a second) on the first compile.
    ftype = str(func.attributes["function_type"])
    # `!llvm.func<void (ptr, ptr)>`: every parameter must be a bare buffer pointer.
    params = ftype[ftype.index("(") + 1: ftype.rindex(")")].strip()
    params = [p.strip() for p in params.split(",")] if params else []
    if not ftype.startswith("!llvm.func<void ") or any(p != "ptr" for p in params):
        raise CompileError.at(func, f"mlxc-emit-entry-wrapper: @{entry} has type {ftype}; expected "
                                    "only buffer pointers and no results (bare-pointer convention)")
    n = len(params)
    lines = [f"llvm.func @{entry}({', '.join(['!llvm.ptr'] * n)})",
             f"llvm.func @{symbol}(%buffers: !llvm.ptr) {{"]
    for i in range(n):
        lines.append(f"  %a{i} = llvm.getelementptr %buffers[{i}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr")
        lines.append(f"  %p{i} = llvm.load %a{i} : !llvm.ptr -> !llvm.ptr")
    args = ", ".join(f"%p{i}" for i in range(n))
    lines.append(f"  llvm.call @{entry}({args}) : ({', '.join(['!llvm.ptr'] * n)}) -> ()")
    lines.append("  llvm.return")
    lines.append("}")
    with module.context, func.location:
        helper = ir.Module.parse("\n".join(lines))
        wrapper = list(irutil.top_level_ops(helper))[1]
        wrapper.operation.move_after(func)


PASS = PythonPass(
    argument="mlxc-emit-entry-wrapper",
    summary="Add `void mlxc_entry(void **buffers)` that calls the bare-pointer entry function",
    run=run,
    options={"symbol": "name of the wrapper (default mlxc_entry)"},
)
