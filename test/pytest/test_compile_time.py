"""Compile time: repeated layers compiled once (mlxc-dedup-kernels) and the timing
report (MLXC_TIMING, exe.compile_stats())."""

import re

import jax
import jax.numpy as jnp
import numpy as np

import mlxc
import mlxc.compile_context
from mlxc import irutil, settings
from mlxc._mlir import ir
from mlxc.targets.cpu import parallel_jit

from helpers import assert_matches, export_program

LAYERS = 4


def _layers(x, ws, bs):
    for w, b in zip(ws, bs):
        h = jax.nn.gelu(x @ w + b)
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean((h - mean) ** 2, axis=-1, keepdims=True)
        x = x + (h - mean) * jax.lax.rsqrt(var + 1e-5)
    return x


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    ws = [(rng.standard_normal((32, 32)) / 6).astype(np.float32) for _ in range(LAYERS)]
    bs = [rng.standard_normal(32).astype(np.float32) for _ in range(LAYERS)]
    return x, ws, bs


def test_repeated_layers_compile_once(tmp_path):
    x, ws, bs = _inputs()
    text, _, ref = export_program(_layers, x, ws, bs)
    with settings.override(cache=False):
        exe = mlxc.compile(text)
        llvm = mlxc.lower(text)
    args = [x, *ws, *bs]
    assert_matches(exe(*args), ref, 1e-5)
    # The layers' loop nests are functions, each called for several layers, and kept
    # out of line (no_inline), so that LLVM compiles each once.
    shared = re.findall(r"llvm\.func @(\w+)\(.*mlxc\.shared_kernel", llvm)
    assert shared, "no shared kernel"
    calls = [llvm.count(f"llvm.call @{name}(") for name in shared]
    assert min(calls) >= 2 and max(calls) >= LAYERS - 1, calls
    with mlxc.compile_context.compile_context() as ctx:
        module = ir.Module.parse(llvm, ctx)
        parallel_jit.internalize_kernels(module)
        for f in irutil.functions(module):
            if irutil.sym_name(f) in shared:
                assert "no_inline" in f.attributes and "internal" in str(f.attributes["linkage"])
    path = tmp_path / "layers.so"
    exe.save(path)
    assert_matches(mlxc.load(path)(*args), ref, 1e-5)
    # MLXC_DEDUP_KERNELS=0: each nest compiled where it is, the same results.
    with settings.override(cache=False, dedup_kernels=False):
        assert "mlxc.shared_kernel" not in mlxc.lower(text)
        assert_matches(mlxc.compile(text)(*args), ref, 1e-5)


def test_compile_stats_and_timing_table(capsys):
    x, ws, bs = _inputs()
    text, _, ref = export_program(_layers, x, ws, bs)
    stages = [s.name for s in mlxc.pipeline().stages]
    with settings.override(cache=False):
        exe = mlxc.compile(text)
    stats = exe.compile_stats()
    assert list(stats["groups"]) == ["frontend", *stages, "codegen", "cache"]
    assert 0 < sum(stats["groups"].values()) <= stats["total_s"]
    assert capsys.readouterr().err == ""  # the table only with MLXC_TIMING=1
    with settings.override(cache=False, timing=True):
        exe = mlxc.compile(text)
    assert_matches(exe(x, *ws, *bs), ref, 1e-5)
    err = capsys.readouterr().err
    assert err.startswith("mlxc compile time:")
    rows = exe.compile_stats()["rows"]
    # One row per pass that ran, under its stage, and the LLVM steps.
    ran = {(r["group"], r["name"]) for r in rows}
    assert ("bufferize", "one-shot-bufferize") in ran
    assert ("lower", "mlxc-dedup-kernels") in ran
    assert ("codegen", "optimize, generate code, link") in ran
    assert "one-shot-bufferize" in err and "optimize, generate code, link" in err
