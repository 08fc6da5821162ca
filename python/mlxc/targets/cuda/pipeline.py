"""CUDA lowering stages: bufferized linalg -> kernels on a grid -> the NVVM dialect.

After the common stages, `gpu` turns every linalg op into a parallel loop nest,
maps each nest onto blocks and threads and outlines it as a kernel, leaving the
entry function as host code that only allocates buffers and launches kernels;
`nvvm` lowers the kernels to the LLVM dialect with NVVM intrinsics and libdevice
calls. `target.build` translates the kernels to LLVM IR and PTX and turns the host
code into a launch plan for the runtime.
"""

from __future__ import annotations

from ...pipelines.model import Pass, Pipeline, mlir_pass, nested
from ...pipelines.stages import common_stages, stage
from . import contracts  # noqa: F401  (registers the gpu and nvvm contracts)

THREADS_PER_BLOCK = 256


def mapping_passes(threads: int = THREADS_PER_BLOCK, tiled: bool = True) -> list[Pass]:
    """Bufferized linalg to scf.parallel loops mapped to blocks and threads, with the
    contractions as tiled kernels (gpu.launch) unless `tiled` is false.

    Without the tiled kernels the result still runs on the CPU (scf.parallel lowers to
    plain loops there), which is how test_cuda.py checks the mapping's numbers on
    machines without a GPU."""
    tile = [Pass("mlxc-gpu-tile-matmul", (), (),
                 "float contractions as kernels tiled through shared memory (a gpu.launch)")]
    return [
        Pass("mlxc-gpu-contraction-operands", (), (),
             "producers fused into a contraction run once, into temporaries"),
        *(tile if tiled else []),
        Pass("mlxc-gpu-split-reductions", (), (),
             "reductions to few outputs become trees of partial reductions: many threads"),
        Pass("mlxc-gpu-copies-to-loops", (), (),
             "buffer copies run on the device, as loops like any other"),
        mlir_pass("convert-linalg-to-parallel-loops",
                  "parallel dimensions become scf.parallel, reductions stay sequential inside",
                  anchor="func.func"),
        Pass("mlxc-gpu-wrap-sequential", (), (),
             "whole-array reductions and scalar code run as one-thread kernels, never on the host"),
        Pass("mlxc-gpu-sink-into-loops", (), (),
             "views and index math travel into the kernels; kernels take whole buffers only"),
        Pass("mlxc-gpu-map-loops", (("threads", str(threads)),), (),
             "flattened iteration space split into blocks of threads; coalesced accesses"),
    ]


def gpu_stage(threads: int = THREADS_PER_BLOCK):
    return stage("gpu", "kernels outlined into a gpu.module; host code allocates and launches", [
        *mapping_passes(threads),
        mlir_pass("convert-parallel-loops-to-gpu", "mapped loops become gpu.launch regions"),
        mlir_pass("canonicalize", "fold the index arithmetic of the mapping"),
        mlir_pass("gpu-launch-sink-index-computations",
                  "constants used by a kernel are rematerialised inside it"),
        mlir_pass("gpu-kernel-outlining", "each launch becomes a gpu.func in a gpu.module"),
    ])


def nvvm_stage():
    return stage("nvvm", "kernels in the LLVM dialect with NVVM intrinsics", nested("gpu.module",
        mlir_pass("lower-affine", "affine.apply left by the mapping becomes arith"),
        mlir_pass("convert-scf-to-cf", "kernel-side loops as branches"),
        mlir_pass("expand-strided-metadata", "views inside kernels as plain offset arithmetic"),
        mlir_pass("lower-affine", "expand-strided-metadata emits affine.apply"),
        mlir_pass("math-extend-to-supported-types",
                  "libdevice has no f16/bf16 math: compute it in f32", target_type="f32"),
        mlir_pass("arith-emulate-unsupported-floats",
                  "bf16/f16 arithmetic in f32, rounded after each op: the CPU target's results",
                  source_types="bf16,f16", target_type="f32"),
        mlir_pass("arith-expand", "bf16 conversions as integer ops", include_bf16=True),
        mlir_pass("convert-gpu-to-nvvm",
                  "thread/block ids to NVVM, math to libdevice, memrefs to bare pointers",
                  use_bare_ptr_memref_call_conv=True, index_bitwidth=64),
        mlir_pass("convert-math-to-llvm",
                  "what libdevice does not cover (ctlz, ctpop) as LLVM intrinsics"),
        mlir_pass("reconcile-unrealized-casts", "remove the casts between the conversions"),
    ))


def cuda_pipeline(entry: str = "main") -> Pipeline:
    return Pipeline("cuda", tuple(common_stages(entry) + [gpu_stage(), nvvm_stage()]))
