"""Artifacts: `exe.save` / `mlxc.load`, `mlxc compile` with its C header and the C
example, loading without the compiler (blocked imports, a fresh virtual environment),
and cross-compilation (machine type of the object; the llvmlite path run on this CPU)."""

from __future__ import annotations

import glob
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from corpus import PROGRAMS
from helpers import NO_COMPILER_LOADER, as_tuple, assert_matches, export_program

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BY_NAME = {p.name: p for p in PROGRAMS}
# A spread of what artifacts must carry: matmuls and math calls, several results,
# bf16/f16, integers, bools, rank-0 and zero-size arrays, -inf and decimal constants.
SAVED = ["mlp", "transformer_block", "maxpool", "bf16_matmul", "f16_elementwise", "integer_arith",
         "uint8_ops", "bool_logic", "scalar_rank0", "zero_size"]
ON_X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def _program(name):
    prog = BY_NAME[name]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, ref = export_program(prog.fn, *args, x64=prog.x64)
    return prog, args, text, ref


def _elf(path):
    """(e_type, e_machine) read from an ELF header."""
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF", f"{path} is not ELF"
    return struct.unpack("<HH", head[16:20])


@pytest.mark.parametrize("name", SAVED)
def test_saved_artifact_matches_jax_and_the_jit(name, tmp_path):
    prog, args, text, ref = _program(name)
    exe = mlxc.compile(text)
    path = tmp_path / f"{name}.so"
    exe.save(path)
    loaded = mlxc.load(path)
    assert str(loaded.signature) == str(exe.signature)
    out = loaded(*args)
    assert_matches(out, ref, prog.rtol)
    # The artifact links the very object code the JIT runs: bit-identical results.
    for a, b in zip(as_tuple(out), as_tuple(exe(*args))):
        np.testing.assert_array_equal(a, b)
    assert loaded.manifest["abi"] == mlxc.runtime.artifact.ABI_VERSION == 2
    assert loaded.memory_stats() == exe.memory_stats()


def test_artifact_exports_only_the_abi(tmp_path):
    _, _, text, _ = _program("mlp")
    mlxc.compile(text).save(tmp_path / "m.so")
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    out = subprocess.run([nm, "-D", "--defined-only", str(tmp_path / "m.so")],
                         capture_output=True, text=True, check=True).stdout
    assert sorted(line.split()[-1] for line in out.splitlines() if line.strip()) == \
        ["mlxc_abi_version", "mlxc_entry", "mlxc_manifest", "mlxc_signature_sha256"]
    needed = subprocess.run(["readelf", "-d", str(tmp_path / "m.so")], capture_output=True,
                            text=True).stdout if shutil.which("readelf") else ""
    assert "mlxc_runtime" not in needed  # the runtime is linked in, not a dependency


def test_loaded_artifact_keeps_the_calling_convention_and_errors(tmp_path):
    _, args, text, _ = _program("mlp")
    exe = mlxc.compile(text)
    exe.save(tmp_path / "m.so")
    loaded = mlxc.load(tmp_path / "m.so")
    for bad, kind in [((args[0],), TypeError), ((args[0].astype(np.float64),) + args[1:], TypeError),
                      ((args[0][:3],) + args[1:], ValueError)]:
        with pytest.raises(kind) as jit_error:
            exe(*bad)
        with pytest.raises(kind) as aot_error:
            loaded(*bad)
        assert str(aot_error.value) == str(jit_error.value)
    # Non-contiguous inputs are copied; the caller's arrays are never written.
    x = np.asfortranarray(args[0])
    before = x.copy()
    np.testing.assert_array_equal(loaded(x, *args[1:]), exe(*args))
    np.testing.assert_array_equal(x, before)


def test_loaded_artifact_serves_threads(tmp_path):
    text, _, _ = export_program(lambda x, s: jnp.tanh(x * s).sum(0), np.ones((64, 32), np.float32),
                                np.float32(1))
    mlxc.compile(text).save(tmp_path / "t.so")
    exe = mlxc.load(tmp_path / "t.so")
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal((64, 32)).astype(np.float32), np.float32(i / 10)) for i in range(16)]
    barrier = threading.Barrier(4)

    def work(i):
        if i < 4:
            barrier.wait()
        return i, [exe(*inputs[i]) for _ in range(20)]

    with ThreadPoolExecutor(4) as pool:
        for i, results in pool.map(work, range(len(inputs))):
            for r in results:
                np.testing.assert_allclose(r, np.tanh(inputs[i][0] * inputs[i][1]).sum(0),
                                           rtol=1e-5, atol=1e-5)


def test_artifact_rewritten_in_place_loads_the_new_program(tmp_path):
    path = tmp_path / "p.so"
    one = np.ones(4, np.float32)
    for k in (2.0, 3.0):
        text, _, _ = export_program(lambda x, k=k: x * k, one)
        mlxc.compile(text).save(path)
        np.testing.assert_array_equal(mlxc.load(path)(one), one * k)


def test_load_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such artifact"):
        mlxc.load(tmp_path / "missing.so")
    (tmp_path / "text.so").write_text("hello")
    with pytest.raises(mlxc.ArtifactError, match="not an mlxc artifact"):
        mlxc.load(tmp_path / "text.so")
    runtime_lib = glob.glob(os.path.join(os.path.dirname(mlxc.runtime.native.__file__), "*.so"))
    if sys.platform.startswith("linux") and runtime_lib:
        with pytest.raises(mlxc.ArtifactError, match="not an mlxc artifact"):
            mlxc.load(runtime_lib[0])  # a shared library, but not an artifact


def test_cpu_check_refuses_missing_instruction_sets():
    from mlxc.runtime import artifact

    here = artifact.host_cpu()[1]
    if not here:
        pytest.skip("no CPU flags on this platform")
    foreign = "sve2" if "sve2" not in here else "avx512f"
    if foreign in here:
        pytest.skip("this CPU has every flag we could test")
    manifest = {"target": {"arch": artifact.host_arch(), "cpu_flags": sorted(here)[:3] + [foreign]}}
    with pytest.raises(artifact.ArtifactError, match=f"CPU with {foreign}, which this CPU"):
        artifact.check_cpu(manifest, "m.so")
    artifact.check_cpu({"target": {"arch": artifact.host_arch(),
                                   "cpu_flags": artifact.required_cpu_flags()}}, "m.so")


def test_dynamic_program_save_says_what_to_do(tmp_path):
    exe = mlxc.compile("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
                       "  %y = stablehlo.add %x, %x : tensor<?xf32>\n"
                       "  return %y : tensor<?xf32>\n}\n")
    with pytest.raises(TypeError, match=r"'\?' dimensions.*specialization\(\*args\)\.save"):
        exe.save(tmp_path / "d.so")
    exe.specialization(np.ones(3, np.float32)).save(tmp_path / "d3.so")
    np.testing.assert_array_equal(mlxc.load(tmp_path / "d3.so")(np.ones(3, np.float32)),
                                  np.full(3, 2, np.float32))


# Loading without the compiler (helpers.NO_COMPILER_LOADER).

def _save_with_inputs(tmp_path, name):
    prog, args, text, ref = _program(name)
    mlxc.compile(text).save(tmp_path / "model.so")
    np.savez(tmp_path / "inputs.npz", *args)
    (tmp_path / "loader.py").write_text(NO_COMPILER_LOADER)
    return prog, ref


def _check_outputs(tmp_path, prog, ref, proc):
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as out:
        assert_matches(tuple(out[f"arr_{i}"] for i in range(len(out.files))), ref, prog.rtol)
    modules = proc.stdout.split()
    assert not [m for m in modules if m.startswith(("torch_mlir", "jax"))], modules
    compiler = {"mlxc.compiler", "mlxc._mlir", "mlxc.errors", "mlxc.passes", "mlxc.pipelines",
                "mlxc.targets", "mlxc.frontend", "mlxc.cache"}
    assert not compiler & set(modules), sorted(compiler & set(modules))


def test_load_imports_nothing_of_the_compiler(tmp_path):
    prog, ref = _save_with_inputs(tmp_path, "transformer_block")
    proc = subprocess.run([sys.executable, str(tmp_path / "loader.py"), str(tmp_path / "model.so"),
                           str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")],
                          capture_output=True, text=True)
    _check_outputs(tmp_path, prog, ref, proc)


@pytest.mark.slow
def test_artifact_runs_in_a_fresh_venv_without_the_compiler(tmp_path):
    """`pip install --no-deps` of this source tree beside numpy and ml_dtypes only."""
    prog, ref = _save_with_inputs(tmp_path, "mlp")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    deps = subprocess.run(pip + ["numpy", "ml_dtypes"], capture_output=True, text=True)
    if deps.returncode != 0:
        pytest.skip(f"cannot install numpy and ml_dtypes here: {deps.stderr[-300:]}")
    subprocess.run(pip + ["--no-deps", REPO], check=True, capture_output=True, timeout=600)
    listed = subprocess.run([py, "-m", "pip", "list", "--format=json"], capture_output=True,
                            text=True, check=True).stdout
    names = {p["name"].lower().replace("_", "-") for p in json.loads(listed)}
    assert {"mlxc", "numpy", "ml-dtypes"} <= names and not names & {"torch-mlir", "jax", "jaxlib"}
    proc = subprocess.run([py, str(tmp_path / "loader.py"), str(tmp_path / "model.so"),
                           str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")],
                          capture_output=True, text=True, cwd=tmp_path)
    _check_outputs(tmp_path, prog, ref, proc)


# `mlxc compile` and the C example.

def _cli(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "mlxc.tools.cli", *argv], capture_output=True,
                          text=True, cwd=cwd)


def test_c_example_runs_the_artifact(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    prog, args, text, ref = _program("transformer_block")
    (tmp_path / "model.mlir").write_text(text)
    proc = _cli("compile", "model.mlir", "-o", "model.so", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "wrote model.so" in proc.stdout and (tmp_path / "model.h").is_file()
    build = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(tmp_path),
                            os.path.join(REPO, "examples", "c", "run_model.c"), str(tmp_path / "model.so"),
                            "-Wl,-rpath," + str(tmp_path), "-o", str(tmp_path / "run_model")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    files = []
    for i, a in enumerate(args):
        a.tofile(tmp_path / f"in{i}.bin")
        files.append(f"in{i}.bin")
    run = subprocess.run([str(tmp_path / "run_model"), *files, "out.bin"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "result: f32[1,8,16], 512 bytes -> out.bin" in run.stdout
    out = np.fromfile(tmp_path / "out.bin", np.float32).reshape(ref[0].shape)
    assert_matches((out,), ref, prog.rtol)
    usage = subprocess.run([str(tmp_path / "run_model")], capture_output=True, text=True)
    assert usage.returncode == 2 and "x.bin wq.bin" in usage.stderr


def test_cli_compile_errors(tmp_path):
    (tmp_path / "bad.mlir").write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                                       "  %y = stablehlo.add %x : tensor<2xf32>\n  return %y : tensor<2xf32>\n}\n")
    proc = _cli("compile", "bad.mlir", "-o", "bad.so", cwd=tmp_path)
    assert proc.returncode == 1 and "bad.mlir:2:" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "bad.so").exists()
    (tmp_path / "ok.mlir").write_text(export_program(lambda x: x + 1, np.ones(2, np.float32))[0])
    proc = _cli("compile", "ok.mlir", "-o", "ok.so", "--target-triple", "aarch64-linux-gnu", cwd=tmp_path)
    assert proc.returncode == 1 and "writes an object file; name it NAME.o" in proc.stderr
    proc = _cli("compile", "ok.mlir", "-o", "ok.o", "--target-triple", "sparc-sun-solaris", cwd=tmp_path)
    assert proc.returncode == 1 and "target triple 'sparc-sun-solaris': not supported" in proc.stderr


# Cross-compilation.

def test_cross_compiled_object_has_the_target_machine_type(tmp_path):
    pytest.importorskip("llvmlite")
    _, _, text, _ = _program("transformer_block")
    (tmp_path / "model.mlir").write_text(text)
    proc = _cli("compile", "model.mlir", "-o", "model.o", "--target-triple", "aarch64-linux-gnu",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _elf(tmp_path / "model.o") == (1, 183)  # ET_REL, EM_AARCH64
    data = (tmp_path / "model.o").read_bytes()
    assert b"mlxc_entry" in data and b"mlxc_manifest" in data
    assert "#define MLXC_NUM_INPUTS 7" in (tmp_path / "model.h").read_text()
    code = mlxc.compile(text, target="aarch64-linux-gnu")
    assert code.manifest["target"]["arch"] == "aarch64"
    assert code.object == mlxc.compile(text, target_triple="aarch64-linux-gnu").object
    with pytest.raises(TypeError, match="compiled for aarch64-linux-gnu and cannot run here"):
        code(np.ones(1))
    with pytest.raises(ValueError, match="saved as an object file"):
        code.save(tmp_path / "model.so")
    with pytest.raises(mlxc.ArtifactError, match="compiled for aarch64"):
        mlxc.load(tmp_path / "model.o")


@pytest.mark.skipif(not ON_X86_64, reason="links the object for this CPU")
@pytest.mark.parametrize("name", ["transformer_block", "maxpool", "bf16_matmul", "f16_elementwise",
                                  "clamp_round_sign"])
def test_cross_compiled_object_computes_the_same(name, tmp_path):
    """The llvmlite path (translation, IR downgrade, generic CPU), linked and run here."""
    pytest.importorskip("llvmlite")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    prog, args, text, ref = _program(name)
    code = mlxc.compile(text, target_triple="x86_64-unknown-linux-gnu")
    code.save(tmp_path / "model.o")
    assert _elf(tmp_path / "model.o") == (1, 62)
    # Linked the way the header tells a user to: the object and mlxc's runtime sources.
    src = os.path.join(REPO, "runtime")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", src, "-o", str(tmp_path / "model.so"),
                    str(tmp_path / "model.o"), *glob.glob(os.path.join(src, "*.c")), "-lm", "-pthread"],
                   check=True, capture_output=True)
    loaded = mlxc.load(tmp_path / "model.so")
    assert loaded.manifest["target"]["triple"] == "x86_64-unknown-linux-gnu"
    assert_matches(loaded(*args), ref, prog.rtol)


def test_llvm_ir_downgrade_of_new_float_syntax():
    from mlxc.targets.cpu.objects import downgrade_llvm_ir

    new = ("  store float -inf, ptr %1\n  %2 = fmul fast float %1, 4.471500e-02\n"
           "  %3 = fcmp olt float %2, f0x3F4C422A\n  %4 = select i1 %3, double +inf, double 1.5e-01\n"
           "  %5 = fadd half %4, f0x3C00\n  %6 = fadd bfloat %5, f0x3F80\n  store float +qnan, ptr %7\n")
    old = downgrade_llvm_ir(new)
    assert "store float 0xFFF0000000000000" in old
    assert f"fmul fast float %1, 0x{struct.unpack('<Q', struct.pack('<d', np.float32(4.4715e-02)))[0]:016X}" in old
    assert f"float %2, 0x{struct.unpack('<Q', struct.pack('<d', np.float32(0.79788456)))[0]:016X}" in old
    assert "double 0x7FF0000000000000, double 1.5e-01" in old  # doubles are exact as written
    assert "fadd half %4, 0xH3C00" in old and "fadd bfloat %5, 0xR3F80" in old
    assert "store float 0x7FF8000000000000" in old
