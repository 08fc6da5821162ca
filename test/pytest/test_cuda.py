"""The cuda target, tested on any machine: PTX for every corpus program (checked by
ptxas), the loop mapping's numbers (run on the CPU), the LLVM IR hand-over between
MLIR's LLVM and llvmlite's, and the runtime's behaviour without a driver. On a
machine with a GPU the corpus also runs on it and is compared with JAX."""

import ctypes

import jax
import numpy as np
import pytest

import fake_cuda
import mlxc
from corpus import PROGRAMS
from helpers import assert_matches, export_program
from mlxc.runtime import cuda as cuda_runtime

llvmlite = pytest.importorskip("llvmlite", reason="the cuda target needs llvmlite (mlxc[cuda])")

from mlxc.targets.cuda import llvmir, ptx, toolkit  # noqa: E402

needs_ptxas = pytest.mark.skipif(toolkit.ptxas() is None or toolkit.libdevice() is None,
                                 reason="ptxas or libdevice not installed (nvidia-cuda-nvcc-cu12)")
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
    stages = common_stages() + [Stage("map", tuple(mapping_passes(threads, tiled=False))),
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


@needs_ptxas
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


def test_runtime_runs_a_launch_plan(monkeypatch):
    """Buffers, uploads, launches with their pointers, constants and downloads, against a
    driver stand-in whose kernels are numpy (the PTX itself needs a GPU)."""
    big = np.arange(1000, dtype=np.float32)
    src = export_program(lambda x: (x * big).sum() + x, np.ones(1000, np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    launches = [s for s in exe.plan["steps"] if s[0] == "launch"]
    kinds = [[a[0] for a in s[4]] for s in launches]
    assert ["const"] in [[k for k in ks if k == "const"] for ks in kinds]  # `big` is a constant
    assert any(s[0] == "alloc" for s in exe.plan["steps"])

    # Check the plumbing rather than the kernels: each pointer passed is a live buffer
    # of the size the plan says, the kernels run in order, and temporaries are freed.
    calls = []
    fake = fake_cuda.FakeDriver({})
    sizes = {}

    def kernel_for(step):
        def run(*pointers):
            for p, arg in zip(pointers, step[4]):
                assert p in fake.live, f"{step[1]}: argument {arg} is not a live device buffer"
                assert ctypes.sizeof(fake.live[p]) == sizes[arg], (step[1], arg)
            calls.append(step[1])
        return run, step[4]

    nbytes = [t.nbytes for t in exe.signature.inputs] + [t.nbytes for t in exe.signature.outputs]
    for i, n in enumerate(nbytes):
        sizes[("buffer", i)] = n
    for s in exe.plan["steps"]:
        if s[0] == "alloc":
            sizes[("buffer", s[1])] = s[2]
    for k, c in enumerate(exe.plan["constants"]):
        sizes[("const", k)] = c.nbytes
    fake.kernels = {s[1]: kernel_for(s) for s in launches}
    fake_cuda.install(monkeypatch, fake)
    x = np.ones(1000, np.float32)
    out = exe(x)
    assert calls == [s[1] for s in launches]
    assert fake.loaded == [exe.ptx]
    assert out.shape == (1000,) and out.dtype == np.float32
    assert len(fake.live) == len(exe.plan["constants"])  # only the constants stay resident
    np.testing.assert_array_equal(x, np.ones(1000, np.float32))


def test_runtime_moves_data_through_a_kernel(monkeypatch):
    src = export_program(lambda x: x + 1, np.ones((3, 4), np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    (_, kernel, grid, block, args), = [s for s in exe.plan["steps"] if s[0] == "launch"]
    assert args == [("buffer", 0), ("buffer", 1)]

    def add_one(x_ptr, y_ptr):
        fake_cuda.array_at(y_ptr, (3, 4))[...] = fake_cuda.array_at(x_ptr, (3, 4)) + 1

    fake = fake_cuda.FakeDriver({kernel: (add_one, args)})
    fake_cuda.install(monkeypatch, fake)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(exe(x), x + 1)
    assert fake.launches == [(kernel, grid, block)]
    assert not fake.live


def test_runtime_calls_exist_in_the_bindings():
    """Every driver function and attribute the runtime names exists in cuda-bindings."""
    import inspect
    import re

    driver = pytest.importorskip("cuda.bindings.driver")
    text = inspect.getsource(cuda_runtime)
    names = set(re.findall(r"\.(cu[A-Z]\w+)\(", text))
    assert {"cuInit", "cuLaunchKernel", "cuModuleLoadData", "cuMemAlloc"} <= names
    missing = sorted(n for n in names if not hasattr(driver, n))
    assert not missing, f"not in cuda.bindings.driver: {missing}"
    for attr in re.findall(r"attr\.(CU_DEVICE_ATTRIBUTE_\w+)", text):
        assert hasattr(driver.CUdevice_attribute, attr), attr


@pytest.mark.parametrize("loop,op", [
    # A loop counting to a constant is an scf.for; one on a data-dependent test stays scf.while.
    (lambda x: jax.lax.fori_loop(0, 5, lambda i, v: v * 2 + i, x), "scf.for"),
    (lambda x: jax.lax.while_loop(lambda v: v.sum() < 100, lambda v: v * 2, x), "scf.while"),
])
def test_control_flow_around_arrays_is_a_clear_error(loop, op):
    src = export_program(loop, np.ones(8, np.float32))[0]
    with pytest.raises(mlxc.CompileError, match=r"<string>:\d+:\d+: error: the cuda target cannot "
                                                rf"run '{op}' yet: control flow around array"):
        mlxc.compile(src, target="cuda")


def test_loop_carrying_nothing_runs_in_one_thread():
    # A scan that only fills its stacked output carries no buffer once bufferized: its
    # scf.for becomes a one-thread kernel (slow, but right), not an error.
    xs = np.linspace(-1, 1, 40, dtype=np.float32).reshape(5, 8)
    fn = lambda xs: jax.lax.scan(lambda c, x: (c, jax.numpy.sin(x) * 2), np.float32(0), xs)[1]  # noqa: E731
    text, _, expected = export_program(fn, xs)
    assert_matches(_mapped_on_cpu(text, threads=32)(xs), expected, 1e-6)


def test_cuda_pipeline_prints_and_parses_back():
    from mlxc._mlir import new_context
    from mlxc.pipelines import parse_pipeline, runner

    pipe = mlxc.pipeline("cuda")
    assert pipe.stage_names[-2:] == ["gpu", "nvvm"]
    assert parse_pipeline(str(pipe)) == pipe.passes
    runner.validate(pipe.passes, new_context())


@pytest.mark.parametrize("fn, shape", [
    (lambda x: x.sum(1), (2048, 1024)),          # many rows: split by a warp
    (lambda x: x.max(), (4096, 64)),             # one output: a tree of partials
    (lambda x: (x * x).sum(0), (1500, 3)),       # few outputs, fused square, 1500 = 30 x 50
    (lambda x: x.min(1), (3, 65536)),
    (lambda x: x.sum(0), (4096, 300)),           # columns: partials [s, column]
    (lambda x: x.mean((0, 2)), (512, 5, 96)),    # two reduced dims, the longest split
])
def test_split_reductions_match_numpy_on_cpu(fn, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    src, _, expected = export_program(fn, x)
    assert_matches(_mapped_on_cpu(src, threads=256)(x), expected, 1e-5)


def test_runtime_timing_reuses_temporaries(monkeypatch):
    src = export_program(lambda x: x.sum(), np.ones(1 << 16, np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    allocs = [s for s in exe.plan["steps"] if s[0] == "alloc"]
    assert allocs, "the split reduction needs partial-result buffers"
    launches = [s for s in exe.plan["steps"] if s[0] == "launch"]
    fake = fake_cuda.FakeDriver({s[1]: ((lambda *p: None), s[4]) for s in launches})
    counted = {"alloc": 0}
    real_alloc = fake.cuMemAlloc

    def counting_alloc(n):
        counted["alloc"] += 1
        return real_alloc(n)

    fake.cuMemAlloc = counting_alloc
    fake_cuda.install(monkeypatch, fake)
    assert exe.time(np.ones(1 << 16, np.float32), repeat=5) > 0
    # inputs and outputs, then the temporaries once: not once per run
    assert counted["alloc"] == 2 + len(allocs)
    assert not fake.live
    assert len(fake.launches) == 6 * len(launches)


def test_runtime_timing_replays_a_captured_graph(monkeypatch):
    """graph=True captures the plan's launches once (none runs while captured) and
    replays them; the pointers are those of the same buffers as in a plain run."""
    src = export_program(lambda x: jax.numpy.tanh(x).sum(), np.ones(1 << 16, np.float32))[0]
    exe = mlxc.compile(src, target="cuda")
    launches = [s for s in exe.plan["steps"] if s[0] == "launch"]
    seen = []
    fake = fake_cuda.FakeDriver({s[1]: ((lambda *p: seen.append(p)), s[4]) for s in launches})
    fake_cuda.install(monkeypatch, fake)
    assert exe.time(np.ones(1 << 16, np.float32), repeat=3, graph=True) > 0
    assert len(fake.launches) == 4 * len(launches)  # the warm-up run, then 3 replays
    n = len(launches)
    assert seen[n:2 * n] == seen[:n] == seen[-n:]   # replays pass the warm-up's buffers
    assert fake.capturing is None and not fake.live


def test_dumps_resume_after_the_gpu_stages(tmp_path):
    import jax.numpy as jnp

    src = export_program(lambda x, w: jnp.tanh(x @ w), np.ones((20, 30), np.float32),
                         np.ones((30, 40), np.float32))[0]
    with mlxc.settings.override(dump_dir=str(tmp_path)):
        exe = mlxc.compile(src, target="cuda")
    for name in ("06-gpu.mlir", "07-nvvm.mlir"):
        resumed = mlxc.compile(str(tmp_path / name), target="cuda")
        assert resumed.ptx == exe.ptx and resumed.plan["steps"] == exe.plan["steps"]


def test_gpu_scripts_run_end_to_end_on_a_stand_in_driver(tmp_path, monkeypatch):
    """bench/gpu_prepare.py's bundle through bench/gpu_run.py, with the stand-in driver:
    it runs no kernel, so the outputs are never written and the poisoned-output check
    must report the program wrong; timing and the table still work."""
    import json
    import os
    import sys

    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
    monkeypatch.syspath_prepend(bench)
    for name in ("_driver", "_contexts", "_driver_error"):  # restored after the test
        monkeypatch.setattr(cuda_runtime, name, getattr(cuda_runtime, name))
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import gpu_prepare
    import gpu_run

    bundle, out = str(tmp_path / "bundle"), str(tmp_path / "out")
    assert gpu_prepare.main([bundle, "-k", "tiny_add"]) == 0
    assert os.path.isfile(os.path.join(bundle, "python", "mlxc", "runtime", "cuda.py"))
    assert gpu_run.main(["--bundle", bundle, "--out", out, "--dry-run", "--repeat", "2"]) == 0
    with open(os.path.join(out, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    row = next(r for r in rows if r["name"] == "tiny_add" and r["status"] != "started")
    assert row["status"] == "wrong" and "poisoned outputs" in row["why"], row
    assert row["seconds"] > 0 and row["graph_seconds"] > 0 and row["xla_seconds"] > 0
    with open(os.path.join(out, "table.txt")) as f:
        assert "tiny_add" in f.read()
    assert sys.modules["gpu_programs"].checksum([np.zeros(2)]) != \
        sys.modules["gpu_programs"].checksum([np.ones(2)])
