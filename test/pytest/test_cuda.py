"""The cuda target, tested on any machine: PTX for every corpus program (checked by
ptxas), the loop mapping's numbers (run on the CPU), the LLVM IR hand-over between
MLIR's LLVM and llvmlite's, and the runtime's behaviour without a driver. On a
machine with a GPU the corpus also runs on it and is compared with JAX."""

import numpy as np
import pytest

import mlxc
from corpus import PROGRAMS
from helpers import assert_matches, export_program
from mlxc.runtime import cuda as cuda_runtime

llvmlite = pytest.importorskip("llvmlite", reason="the cuda target needs llvmlite (mlxc[cuda])")

from mlxc.targets.cuda import llvmir, ptx, toolkit  # noqa: E402

needs_ptxas = pytest.mark.skipif(toolkit.ptxas() is None, reason="ptxas not installed")
needs_gpu = pytest.mark.skipif(not cuda_runtime.is_available(), reason="no CUDA driver or GPU")


@pytest.fixture(scope="module", params=PROGRAMS, ids=lambda p: p.name)
def program(request):
    p = request.param
    args = p.make_inputs(np.random.default_rng(0))
    text, _, expected = export_program(p.fn, *args, x64=p.x64)
    return p, args, text, expected


@needs_ptxas
def test_corpus_compiles_to_ptxas_clean_ptx(program):
    p, args, text, expected = program
    exe = mlxc.compile(text, target="cuda", chip="sm_90")
    if not any(step[0] == "launch" for step in exe.plan["steps"]):
        assert all(o.size == 0 for o in expected), "only empty results may need no kernel"
        return
    assert ".target sm_90" in exe.ptx
    report = ptx.ptxas_check(exe.ptx, "sm_90")
    for step in exe.plan["steps"]:
        if step[0] == "launch":
            assert f".entry {step[1]}(" in exe.ptx
            assert f"Compiling entry function '{step[1]}'" in report


# A plain CPU lowering of the mapped loops (scf.parallel runs as ordinary loops), kept
# here rather than borrowed from the cpu target so that its tuning cannot change it.
_CPU_LOWERING = [
    ("expand-strided-metadata", {}, ()), ("lower-affine", {}, ()), ("convert-scf-to-cf", {}, ()),
    ("math-extend-to-supported-types", {"target_type": "f32"}, "func.func"),
    ("arith-emulate-unsupported-floats", {"source_types": "bf16,f16", "target_type": "f32"},
     "func.func"),
    ("arith-expand", {"include_bf16": True}, "func.func"),
    ("finalize-memref-to-llvm", {}, ()), ("convert-math-to-llvm", {}, ()),
    ("convert-math-to-libm", {}, ()), ("convert-arith-to-llvm", {}, ()),
    ("convert-cf-to-llvm", {}, ()),
    ("convert-func-to-llvm", {"use_bare_ptr_memref_call_conv": True}, ()),
    ("convert-index-to-llvm", {}, ()), ("reconcile-unrealized-casts", {}, ()),
]


def _mapped_on_cpu(text: str, threads: int):
    """The program through the gpu mapping passes, then lowered and run on the CPU."""
    from mlxc._mlir import execution_engine, ir, new_context
    from mlxc.frontend import source
    from mlxc.passes import record_signature
    from mlxc.pipelines import runner
    from mlxc.pipelines.model import Pass, Stage, mlir_pass
    from mlxc.pipelines.stages import common_stages
    from mlxc.runtime import native
    from mlxc.runtime.executable import Executable
    from mlxc.targets.cuda.pipeline import mapping_passes

    lowering = [mlir_pass(name, "", anchor=anchor, **opts) for name, opts, anchor in _CPU_LOWERING]
    lowering.append(Pass("mlxc-emit-entry-wrapper"))
    stages = common_stages() + [Stage("map", tuple(mapping_passes(threads))),
                                Stage("cpu", tuple(lowering))]
    with new_context(), ir.Location.unknown():
        module = source.load(text).module
        runner.run_stages(module, stages)
        signature = record_signature.read_signature(module)
        engine = execution_engine.ExecutionEngine(module, opt_level=1,
                                                  shared_libs=[native.library_path()])
        return Executable(signature, engine.raw_lookup("mlxc_entry"), packed=True, keepalive=engine)


def test_corpus_mapping_matches_jax_on_cpu(program):
    """Blocks, threads, guards, delinearisation and sunk views give JAX's numbers.

    32 threads per block so that most programs span several blocks and a partial one."""
    p, args, text, expected = program
    assert_matches(_mapped_on_cpu(text, threads=32)(*args), expected, p.rtol)


def test_ptx_names_kernels_and_links_libdevice():
    import jax.numpy as jnp

    src = export_program(lambda x: jnp.exp(x) + 1, np.ones(1000, np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    assert [s[0] for s in exe.plan["steps"]] == ["launch"]
    _, kernel, grid, block, args = exe.plan["steps"][0]
    assert grid == (4, 1, 1) and block == (256, 1, 1)  # 1000 elements, 256 per block
    assert args == [("buffer", 0), ("buffer", 1)]
    assert f".visible .entry {kernel}(" in exe.ptx
    assert "__nv_expf" not in exe.ptx  # libdevice linked in and inlined: no external call
    assert "ex2.approx" in exe.ptx     # the body of libdevice's expf


def test_unknown_chip_is_an_error():
    src = export_program(lambda x: x + 1, np.ones(3, np.float32))[0]
    with pytest.raises(ValueError, match="unknown CUDA chip 'sm_1'"):
        mlxc.compile(src, target="cuda", chip="sm_1")


# The hand-over: MLIR's LLVM (a development snapshot) prints, llvmlite's LLVM 22 parses.

@pytest.mark.parametrize("new, old", [
    ("store float f0x3F800000, ptr %1", "store float 0x3FF0000000000000, ptr %1"),
    ("%2 = select i1 %c, float %a, float +qnan", "%2 = select i1 %c, float %a, float 0x7FF8000000000000"),
    ("%2 = fcmp oeq double %1, -inf", "%2 = fcmp oeq double %1, 0xFFF0000000000000"),
    ("%2 = fmul float %1, 4.471500e-02", "%2 = fmul float %1, 0x3FA6E4E260000000"),
    ("%2 = fmul double %1, 4.471500e-02", "%2 = fmul double %1, 4.471500e-02"),
    ("%2 = fadd half %1, f0x3C00", "%2 = fadd half %1, 0xH3C00"),
    ("%2 = fadd bfloat %1, -inf", "%2 = fadd bfloat %1, 0xRFF80"),
    ("%2 = fadd float %1, f0x00000001", "%2 = fadd float %1, 0x36A0000000000000"),  # subnormal
    ("%3 = getelementptr inbounds nuw float, ptr %15, i64 %14", "%3 = getelementptr inbounds nuw float, ptr %15, i64 %14"),
])
def test_hand_over_rewrites_float_spellings(new, old):
    assert llvmir.for_llvmlite(new) == old


def test_hand_over_keeps_float_values():
    import llvmlite.binding as llvm

    values = np.array([1.0, -0.0, 1e-45, 3.4e38, np.inf, -np.inf, 0.1, 4.4715e-2], np.float32)
    body = "\n".join(f"  store volatile float f0x{v.view(np.uint32):08X}, ptr %p" for v in values)
    text = f"define void @f(ptr %p) {{\n{body}\n  ret void\n}}\n"
    parsed = str(llvm.parse_assembly(llvmir.for_llvmlite(text)))
    import struct

    for v in values:
        as_double = struct.unpack("<Q", struct.pack("<d", float(v)))[0]
        assert f"0x{as_double:016X}" in parsed or (v == 1.0 and "1.000000e+00" in parsed) or \
            f"{float(v):e}" in parsed


def test_hand_over_reads_every_corpus_kernel(program):
    """MLIR's LLVM IR for every corpus program parses and verifies in llvmlite."""
    import llvmlite.binding as llvm
    from mlxc._mlir import ir, new_context
    from mlxc.frontend import source
    from mlxc.pipelines import runner
    from mlxc.targets.cuda.pipeline import cuda_pipeline

    text = program[2]
    with new_context(), ir.Location.unknown():
        module = source.load(text).module
        runner.run_stages(module, cuda_pipeline().stages)
        llvm_ir = llvmir.translate(module)
    llvm.parse_assembly(llvmir.for_llvmlite(llvm_ir)).verify()


# Runtime.

def test_devices_lists_the_cpu_first():
    devices = mlxc.devices()
    assert devices[0].kind == "cpu"
    assert all(d.kind == "cuda" for d in devices[1:])


@pytest.mark.skipif(cuda_runtime.is_available(), reason="a CUDA driver is present")
def test_calling_without_a_driver_says_so():
    src = export_program(lambda x: x + 1, np.ones(3, np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    with pytest.raises(cuda_runtime.CudaUnavailable, match="^no CUDA driver found"):
        exe(np.ones(3, np.float32))


@needs_gpu
def test_corpus_runs_on_the_gpu(program):
    p, args, text, expected = program
    exe = mlxc.compile(text, target="cuda", chip=cuda_runtime.cuda_devices()[0].chip
                       if cuda_runtime.cuda_devices()[0].chip in ptx.PTX_FEATURES else "sm_90")
    snapshot = [np.array(a, copy=True) for a in args]
    assert_matches(exe(*args), expected, p.rtol)
    for before, after in zip(snapshot, args):
        np.testing.assert_array_equal(before, after)
