"""Code generation for the CPU: the LLVM dialect JIT-compiled by MLIR's ExecutionEngine,
or, with `target_triple=`, an object file for another CPU (see objects.py)."""

from __future__ import annotations

import os
import re

from ... import compile_timing, settings
from ..._mlir import execution_engine, ir, translate_module_to_llvmir
from ...errors import CompileError, Diagnostic
from ...runtime import native
from ...runtime.executable import Executable
from . import link, objects, parallel_jit
from .pipeline import cpu_pipeline


class ObjectCode:
    """A program compiled for another CPU: an object file to save and link there.

    The object defines the artifact ABI's three functions (runtime/mlxc_artifact.h);
    link it with mlxc's runtime sources (runtime/*.c) by the target's C compiler.
    """

    def __init__(self, signature, data: bytes, manifest: dict):
        self.signature = signature
        self.object = data
        self.manifest = manifest

    @property
    def triple(self) -> str:
        return self.manifest["target"]["triple"]

    def save(self, path) -> None:
        path = os.fspath(path)
        if path.endswith((".so", ".dylib", ".dll")):
            raise ValueError(f"{path}: a program compiled for {self.triple} is saved as an object "
                             "file (.o); link it into a library with that target's C compiler")
        with open(path, "wb") as f:
            f.write(self.object)

    def c_header(self, library: str) -> str:
        return link.c_header(self.manifest, library)

    def __call__(self, *args):
        raise TypeError(f"this program was compiled for {self.triple} and cannot run here; "
                        "save() the object file and link it on that machine")

    def __repr__(self) -> str:
        return f"<mlxc.ObjectCode {self.triple} {self.signature}>"


# LLVM builds a constant array's elements in one SmallVector, whose size is 32-bit: a
# larger constant (a splat result of 2^32 elements, say) aborts the process.
_MAX_CONSTANT_ELEMENTS = (1 << 32) - 1
_ARRAY_LENGTH = re.compile(r"array<(\d+) x ")


def _check_constant_sizes(module) -> None:
    for op in module.body.operations:
        if op.operation.name != "llvm.mlir.global" or "value" not in op.operation.attributes:
            continue
        elements = 1
        for n in _ARRAY_LENGTH.findall(str(op.operation.attributes["global_type"])):
            elements *= int(n)
        if elements > _MAX_CONSTANT_ELEMENTS:
            raise CompileError.at(op, f"a constant of {elements} elements: LLVM holds at most "
                                      f"{_MAX_CONSTANT_ELEMENTS} in one constant")


class CpuTarget:
    name = "cpu"
    options = frozenset({"opt_level", "target_triple"})  # what build() reads

    def pipeline(self, entry: str = "main"):
        return cpu_pipeline(entry)

    def build(self, module, signature, **options):
        opt_level = options.get("opt_level", settings.get("opt_level"))
        stats = {"argument_bytes": sum(t.nbytes for t in signature.inputs),
                 "result_bytes": sum(t.nbytes for t in signature.outputs)}
        if "mlxc.temp_bytes" in module.operation.attributes:  # mlxc-record-temp-memory
            stats["temp_bytes"] = ir.IntegerAttr(
                module.operation.attributes["mlxc.temp_bytes"]).value
        _check_constant_sizes(module)
        link.add_signature_symbol(module, signature)
        triple = options.get("target_triple")
        if triple:
            parallel_jit.internalize_kernels(module)
            return self._cross(module, signature, triple, opt_level, stats)
        runtime_lib = native.library_path()
        native.load()  # fail early, with the install hint, if the library is missing
        if settings.get("compile_threads") > 1:
            split = parallel_jit.build_split(module, opt_level, [runtime_lib])
            if split is not None:
                return self._split_executable(signature, stats, *split)
        parallel_jit.internalize_kernels(module)
        try:
            # PIC and a kept object file: `save()` links the very code the JIT runs.
            with compile_timing.section("codegen", "translate to LLVM IR, make the JIT"):
                engine = execution_engine.ExecutionEngine(module, opt_level=opt_level,
                                                          shared_libs=[runtime_lib],
                                                          enable_object_dump=True,
                                                          enable_pic=True)
            # raw_lookup finds the JIT's packed wrapper `_mlir_mlxc_entry`; it also
            # forces code generation now rather than at the first call.
            with compile_timing.section("codegen", "optimize, generate code, link"):
                address = engine.raw_lookup("mlxc_entry")
        except RuntimeError as e:
            raise CompileError("LLVM code generation failed",
                               [Diagnostic("error", "<llvm>", str(e))]) from None
        parallel_jit.mark_llvm_ready()
        if not address:
            raise CompileError("LLVM code generation failed",
                               [Diagnostic("error", "<llvm>", "no mlxc_entry symbol after JIT")])

        def save(path: str) -> None:
            man = link.manifest(signature, stats, link.host_target())
            link.write_shared_library(path, objects.engine_object(engine), man)

        return Executable(signature, address, packed=True, keepalive=engine, stats=stats,
                          saver=save)

    def _split_executable(self, signature, stats: dict, address: int, program) -> Executable:
        def save(path: str) -> None:
            man = link.manifest(signature, stats, link.host_target())
            link.write_shared_library(path, program.objects(), man,
                                      link.kernel_table_c(parallel_jit.TABLE, program.kernels))

        return Executable(signature, address, packed=True, keepalive=program, stats=stats,
                          saver=save)

    def _cross(self, module, signature, triple: str, opt_level: int, stats: dict) -> ObjectCode:
        arch = objects.check_triple(triple)
        man = link.manifest(signature, stats, {"arch": arch, "triple": triple, "cpu": "generic",
                                               "cpu_flags": []})
        llvm_ir = str(translate_module_to_llvmir(module.operation)) + link.manifest_llvm_ir(man)
        return ObjectCode(signature, objects.cross_object(llvm_ir, triple, opt_level), man)


TARGET = CpuTarget()
