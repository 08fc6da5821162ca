"""Code generation for the CPU: the LLVM dialect JIT-compiled by MLIR's ExecutionEngine."""

from __future__ import annotations

from ... import settings
from ..._mlir import execution_engine
from ...errors import CompileError, Diagnostic
from ...runtime import native
from ...runtime.executable import Executable
from .pipeline import cpu_pipeline


class CpuTarget:
    name = "cpu"

    def pipeline(self, entry: str = "main"):
        return cpu_pipeline(entry)

    def build(self, module, signature, **options) -> Executable:
        opt_level = options.get("opt_level", settings.get("opt_level"))
        runtime_lib = native.library_path()
        native.load()  # fail early, with the install hint, if the library is missing
        try:
            engine = execution_engine.ExecutionEngine(module, opt_level=opt_level,
                                                      shared_libs=[runtime_lib])
            # raw_lookup finds the JIT's packed wrapper `_mlir_mlxc_entry`; it also
            # forces code generation now rather than at the first call.
            address = engine.raw_lookup("mlxc_entry")
        except RuntimeError as e:
            raise CompileError("LLVM code generation failed",
                               [Diagnostic("error", "<llvm>", str(e))]) from None
        if not address:
            raise CompileError("LLVM code generation failed",
                               [Diagnostic("error", "<llvm>", "no mlxc_entry symbol after JIT")])
        stats = {"argument_bytes": sum(t.nbytes for t in signature.inputs),
                 "result_bytes": sum(t.nbytes for t in signature.outputs)}
        return Executable(signature, address, packed=True, keepalive=engine, stats=stats)


TARGET = CpuTarget()
