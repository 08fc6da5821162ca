"""LLVM IR to PTX with llvmlite (whose LLVM has the NVPTX backend), libdevice linked in,
and the PTX checked by ptxas.

The bundled MLIR has no NVPTX backend and libNVVM rejects its IR, so llvmlite does
code generation: parse, link libdevice (math such as `__nv_expf`), internalise all
but the kernels so unused libdevice functions disappear, optimise, emit PTX.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from typing import Optional

from ...errors import CompileError, Diagnostic
from . import llvmir, toolkit

_init_lock = threading.Lock()
_initialised = False
_libdevice_cache: dict[str, bytes] = {}

# PTX ISA version per chip: the oldest that knows the chip (ptxas accepts newer ones).
PTX_FEATURES = {"sm_70": "+ptx60", "sm_75": "+ptx63", "sm_80": "+ptx70", "sm_86": "+ptx71",
                "sm_89": "+ptx78", "sm_90": "+ptx78", "sm_90a": "+ptx80"}


def _llvm():
    global _initialised
    try:
        import llvmlite.binding as llvm
    except ImportError:
        raise CompileError("the cuda target needs llvmlite: pip install 'mlxc[cuda]'") from None
    with _init_lock:
        if not _initialised:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialised = True
    return llvm


def _fail(what: str, detail: str) -> CompileError:
    return CompileError(what, [Diagnostic("error", "<ptx>", detail)])


def _libdevice(llvm, triple: str, layout: str):
    path = toolkit.libdevice()
    if path is None:
        raise CompileError("libdevice not found: pip install 'mlxc[cuda]' "
                           "(nvidia-cuda-nvcc-cu12), or set CUDA_HOME")
    if path not in _libdevice_cache:
        with open(path, "rb") as f:
            _libdevice_cache[path] = f.read()
    lib = llvm.parse_bitcode(_libdevice_cache[path])
    lib.triple = triple
    lib.data_layout = layout
    return lib


def check_chip(chip: str) -> str:
    if chip not in PTX_FEATURES:
        raise ValueError(f"unknown CUDA chip '{chip}'; known: {', '.join(PTX_FEATURES)}")
    return chip


def to_ptx(llvm_ir: str, chip: str = "sm_90", opt_level: int = 3) -> str:
    """PTX for the kernels in `llvm_ir` (MLIR's LLVM IR text), for `chip`."""
    llvm = _llvm()
    check_chip(chip)
    target = llvm.Target.from_triple(llvmir.TRIPLE)
    tm = target.create_target_machine(cpu=chip, features=PTX_FEATURES[chip], opt=opt_level)
    try:
        mod = llvm.parse_assembly(llvmir.for_llvmlite(llvm_ir))
        mod.verify()
    except RuntimeError as e:
        raise _fail("llvmlite could not read the kernels' LLVM IR "
                    "(see mlxc.targets.cuda.llvmir.for_llvmlite)", str(e)) from None
    mod.triple = llvmir.TRIPLE
    mod.data_layout = str(tm.target_data)
    kernels = {f.name for f in mod.functions if not f.is_declaration}
    if any(f.is_declaration and f.name.startswith("__nv_") for f in mod.functions):
        mod.link_in(_libdevice(llvm, mod.triple, mod.data_layout))
    for f in mod.functions:
        if not f.is_declaration and f.name not in kernels:
            f.linkage = "internal"  # unused libdevice code is then dropped
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    try:
        return tm.emit_assembly(mod)
    except RuntimeError as e:
        raise _fail("PTX code generation failed", str(e)) from None


def ptxas_check(ptx: str, chip: str = "sm_90", ptxas: Optional[str] = None) -> str:
    """Assemble `ptx` with ptxas for `chip`; returns ptxas's report, raises CompileError."""
    tool = ptxas or toolkit.ptxas()
    if tool is None:
        raise FileNotFoundError("ptxas not found: pip install 'mlxc[cuda]' (nvidia-cuda-nvcc-cu12)")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "kernels.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([tool, f"-arch={chip}", "-v", src, "-o", os.path.join(tmp, "k.cubin")],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise _fail(f"ptxas rejected the PTX for {chip}", proc.stderr.strip())
    return proc.stderr + proc.stdout
