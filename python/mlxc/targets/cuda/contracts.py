"""The contracts that end the cuda target's stages, registered with the others.

After `gpu` the host function may only manage buffers and launch kernels (the launch
plan the runtime executes); after `nvvm` the kernels are LLVM dialect only.
"""

from __future__ import annotations

from ... import irutil
from ...pipelines import contracts

HOST_OPS = ("memref.alloc", "memref.dealloc", "memref.get_global", "arith.constant",
            "gpu.launch_func", "func.return", "func.func")


def _host_ops(module) -> list:
    out = []
    for op in irutil.top_level_ops(module):
        if op.name == "func.func":
            out += irutil.walk(op)[1:]
    return out


def host_plan_only(module, stage: str) -> None:
    contracts.no_tensors(module, stage)
    bad = [o for o in _host_ops(module) if o.name not in HOST_OPS]
    if bad:
        contracts._fail(bad[0], f"after stage '{stage}': '{bad[0].name}' is left in host code; "
                                "the host may only allocate buffers and launch kernels", bad)


def kernels_llvm_only(module, stage: str) -> None:
    host_plan_only(module, stage)
    bad = []
    for op in irutil.top_level_ops(module):
        if op.name == "gpu.module":
            bad += [o for o in irutil.walk(op)[1:] if not o.name.startswith(("llvm.", "nvvm."))]
    if bad:
        contracts._fail(bad[0], f"after stage '{stage}': '{bad[0].name}' in a kernel was not "
                                "lowered to the LLVM dialect", bad)


contracts.CONTRACTS.setdefault("gpu", host_plan_only)
contracts.CONTRACTS.setdefault("nvvm", kernels_llvm_only)
