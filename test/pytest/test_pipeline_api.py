"""Printing, dumping and restarting the pipeline from Python."""

import os
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

import mlxc
from helpers import assert_matches, export_program


def _program():
    return export_program(lambda x, w: jax.nn.softmax(x @ w), np.random.default_rng(0)
                          .standard_normal((4, 8)).astype(np.float32),
                          np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32))


def test_pipeline_string_is_what_mlir_runs():
    p = mlxc.pipeline("cpu")
    assert p.stage_names == ["import", "simplify", "linalg", "fuse", "bufferize", "lower", "llvm"]
    assert str(p).startswith("builtin.module(") and str(p).endswith(")")
    assert all(p.why for p in p.passes), "every pass says why it is there"
    assert str(p) == mlxc.pipelines.render(mlxc.pipelines.parse_pipeline(str(p)))


def test_dump_dir_writes_every_stage(tmp_path):
    text, _, expected = _program()
    with mlxc.settings.override(dump_dir=str(tmp_path)):
        exe = mlxc.compile(text)
    names = sorted(os.listdir(tmp_path))
    assert names == ["00-input.mlir", "01-import.mlir", "02-simplify.mlir", "03-linalg.mlir",
                     "04-fuse.mlir", "05-bufferize.mlir", "06-lower.mlir", "07-llvm.mlir"]
    assert "stablehlo.dot_general" in (tmp_path / "01-import.mlir").read_text()
    assert "linalg." in (tmp_path / "03-linalg.mlir").read_text()
    assert "stablehlo." not in (tmp_path / "03-linalg.mlir").read_text()
    assert "memref<" in (tmp_path / "05-bufferize.mlir").read_text()
    assert "llvm.func @mlxc_entry" in (tmp_path / "07-llvm.mlir").read_text()
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    assert_matches(exe(x, w), expected, 1e-4)


def test_dump_dir_from_environment(tmp_path):
    text, _, _ = _program()
    env = dict(os.environ, MLXC_DUMP_DIR=str(tmp_path))
    code = "import sys, mlxc; mlxc.compile(sys.stdin.read())"
    subprocess.run([sys.executable, "-c", code], input=text, text=True, env=env, check=True)
    assert "07-llvm.mlir" in os.listdir(tmp_path)


@pytest.mark.parametrize("stage", ["import", "simplify", "linalg", "fuse", "bufferize", "lower", "llvm"])
def test_compile_restarts_from_any_dumped_stage(tmp_path, stage):
    text, _, expected = _program()
    with mlxc.settings.override(dump_dir=str(tmp_path)):
        mlxc.compile(text)
    index = mlxc.pipeline().stage_names.index(stage) + 1
    dumped = tmp_path / f"{index:02d}-{stage}.mlir"
    exe = mlxc.compile(str(dumped))  # resumes after the stage the file records
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    assert_matches(exe(x, w), expected, 1e-4)
    assert [s.name for s in exe.signature.inputs] == ["x", "w"]


def test_lower_stops_after_a_stage():
    text, _, _ = _program()
    linalg = mlxc.lower(text, stop_after="linalg")
    assert 'mlxc.stage = "linalg"' in linalg and "stablehlo." not in linalg
    bufferized = mlxc.lower(linalg, stop_after="bufferize")
    assert 'mlxc.stage = "bufferize"' in bufferized and "tensor<" not in bufferized.split("mlxc.signature")[1].split("}", 1)[1]


def test_a_hand_edited_dump_is_used(tmp_path):
    """Edit the linalg-stage IR (here: negate the result) and compile from it."""
    src = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.exponential %x : tensor<3xf32>
      return %0 : tensor<3xf32>
    }"""
    ir_text = mlxc.lower(src, stop_after="linalg")
    edited, n = re.subn(r"linalg.yield (%\w+) : f32",
                        r"%neg = arith.negf \1 : f32\n      linalg.yield %neg : f32", ir_text)
    assert n == 1
    path = tmp_path / "edited.mlir"
    path.write_text(edited)
    exe = mlxc.compile(str(path))
    x = np.array([0.0, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(exe(x), -np.exp(x), rtol=1e-6)


def test_contracts_can_be_switched_off():
    with mlxc.settings.override(check_contracts=False):
        assert "mlxc-verify-stage" not in str(mlxc.pipeline())
    assert "mlxc-verify-stage" in str(mlxc.pipeline())


def test_settings_are_validated(monkeypatch):
    monkeypatch.setenv("MLXC_OPT_LEVEL", "fast")
    with pytest.raises(ValueError, match=r"MLXC_OPT_LEVEL='fast': expected an integer from 0 to 3"):
        mlxc.settings.get("opt_level")
    with pytest.raises(KeyError, match="unknown mlxc setting"):
        with mlxc.settings.override(dump_dri="/tmp"):
            pass


def test_accepts_an_mlir_module_without_changing_it():
    from mlxc._mlir import ir, new_context

    text, _, expected = _program()
    with new_context():
        module = ir.Module.parse(text)
        before = str(module)
        exe = mlxc.compile(module)
        assert str(module) == before
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    assert_matches(exe(x, w), expected, 1e-4)


def test_bytecode_and_path_inputs(tmp_path):
    import io

    from mlxc._mlir import ir, new_context

    text, artifact, expected = _program()
    with new_context():
        buf = io.BytesIO()
        ir.Module.parse(text).operation.write_bytecode(buf)
    (tmp_path / "p.mlirbc").write_bytes(buf.getvalue())
    (tmp_path / "p.stablehlo").write_bytes(artifact)
    (tmp_path / "p.mlir").write_text(text)
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    for source in (buf.getvalue(), str(tmp_path / "p.mlirbc"), tmp_path / "p.stablehlo",
                   str(tmp_path / "p.mlir"), text.encode()):
        assert_matches(mlxc.compile(source)(x, w), expected, 1e-4)
