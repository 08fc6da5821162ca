"""Code generation for NVIDIA GPUs: kernels to PTX (llvmlite), host code to a launch plan.

    exe = mlxc.compile(src, target="cuda", chip="sm_90")
    exe.ptx       # the kernels, ptxas-clean for the chip
    y = exe(x)    # on a machine with a GPU and the CUDA driver

Compiling needs no GPU; calling raises `CudaUnavailable` ("no CUDA driver found")
where there is none.
"""

from __future__ import annotations

from ... import irutil, settings
from ...runtime.cuda import CudaExecutable
from . import llvmir, plan, ptx
from .pipeline import cuda_pipeline

DEFAULT_CHIP = "sm_90"


class CudaTarget:
    name = "cuda"
    options = frozenset({"chip", "opt_level", "device"})  # what build() reads

    def pipeline(self, entry: str = "main"):
        return cuda_pipeline(entry)

    def build(self, module, signature, **options) -> CudaExecutable:
        chip = ptx.check_chip(options.get("chip", DEFAULT_CHIP))
        opt_level = options.get("opt_level", settings.get("opt_level"))
        entry = irutil.string_attr(module, "mlxc.entry") or signature.entry
        launch_plan = plan.read_plan(module, entry)
        has_kernels = any(s[0] == "launch" for s in launch_plan["steps"])
        code = ptx.to_ptx(llvmir.translate(module), chip, opt_level) if has_kernels else ""
        return CudaExecutable(signature, code, launch_plan, chip=chip,
                              device=options.get("device", 0))


TARGET = CudaTarget()
