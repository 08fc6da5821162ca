"""Every error path: a clear message naming what is wrong and where, never a crash."""

import os

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import export_program

GOOD = """func.func @main(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x16xf32> loc("w")) -> tensor<4x16xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
"""


@pytest.fixture(scope="module")
def exe():
    return mlxc.compile(GOOD)


# --- malformed IR raises CompileError with file:line:col -------------------------

def test_parse_error_has_position(tmp_path):
    path = tmp_path / "broken.mlir"
    path.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  %0 = stablehlo.bogus %a : tensor<4xf32>\n"
                    "  return %0 : tensor<4xf32>\n}\n")
    with pytest.raises(mlxc.CompileError) as info:
        mlxc.compile(str(path))
    msg = str(info.value)
    assert f"{path}:2:8: error: custom op 'stablehlo.bogus' is unknown" in msg
    assert info.value.diagnostics[0].location == f"{path}:2:8"


def test_verifier_error_points_into_the_text_of_a_jax_export():
    text, _, _ = export_program(lambda x: jnp.sin(x) * 2, np.ones(4, np.float32))
    lines = text.splitlines()
    i = next(n for n, l in enumerate(lines) if "stablehlo.sine" in l)
    lines[i] = lines[i].replace("tensor<4xf32> loc", "tensor<5xf32> loc", 1)
    broken = "\n".join(lines)
    with pytest.raises(mlxc.CompileError) as info:
        mlxc.compile(broken, name="model.mlir")
    msg = str(info.value)
    # The text position, although JAX wrote loc(...) annotations on every op.
    assert f"model.mlir:{i + 1}:" in msg, msg


def test_error_in_a_pass_names_jax_origin():
    """Errors after parsing carry both the text position and JAX's source line."""
    # lax.linalg.tridiagonal_solve exports as a LAPACK call (gtsv) that mlxc does not lower.
    d, b = np.ones(3, dtype=np.float32), np.ones((3, 1), dtype=np.float32)
    text, _, _ = export_program(lambda x, y: lax.linalg.tridiagonal_solve(x, x, x, y), d, b)
    with pytest.raises(mlxc.CompileError) as info:
        mlxc.compile(text, name="gtsv.mlir")
    msg = str(info.value)
    assert "mlxc cannot lower custom_call @lapack_sgtsv_ffi" in msg
    assert "gtsv.mlir:" in msg
    assert "the op comes from jit(<lambda>)/tridiagonal_solve at " in msg, msg
    assert "test_errors.py" in msg, msg


def test_unsupported_op_is_named():
    with pytest.raises(mlxc.CompileError, match=r"<string>:2:8: error: mlxc cannot lower "
                                                r"'stablehlo.custom_call' yet"):
        mlxc.compile("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.custom_call @foo(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n}")


@pytest.mark.parametrize("source, message", [
    ("", "the source is empty"),
    ("   \n", "the source is empty"),
    (b"\xff\xfe\x00garbage", "not MLIR text, MLIR bytecode or a StableHLO artifact"),
    (b"ML\xefR\x00garbage", "cannot parse MLIR bytecode"),
    ("/no/such/file.mlir", "no such file"),
    ("func.func @main(", "cannot parse MLIR text"),
])
def test_bad_sources(source, message):
    with pytest.raises(mlxc.CompileError, match=message):
        mlxc.compile(source)


def test_truncated_artifact():
    _, artifact, _ = export_program(lambda x: x + 1, np.ones(3, np.float32))
    with pytest.raises(mlxc.CompileError):
        mlxc.compile(artifact[: len(artifact) // 2])


def test_wrong_source_type():
    with pytest.raises(TypeError, match="source must be MLIR text"):
        mlxc.compile(12345)


def test_missing_entry():
    with pytest.raises(mlxc.CompileError, match=r"no function named @forward in the module "
                                                r"\(public functions: @main\)"):
        mlxc.compile(GOOD, entry="forward")


def test_unknown_target_and_stage():
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        mlxc.compile(GOOD, target="tpu")
    with pytest.raises(KeyError, match="no stage 'bogus'"):
        mlxc.lower(GOOD, stop_after="bogus")


# --- bad calls raise TypeError / ValueError naming the argument -------------------

def test_signature(exe):
    assert str(exe.signature) == "main(x: f32[4,8], w: f32[8,16]) -> (result: f32[4,16])"
    assert exe.signature.inputs[1].name == "w"
    assert exe.signature.outputs[0].shape == (4, 16)


def test_wrong_argument_count(exe):
    with pytest.raises(TypeError, match=r"main\(\) takes 2 arguments \(x: f32\[4,8\], "
                                        r"w: f32\[8,16\]\), got 1"):
        exe(np.zeros((4, 8), np.float32))


def test_wrong_dtype(exe):
    with pytest.raises(TypeError, match=r"argument 1 \('w'\): expected f32\[8,16\], got f64\[8,16\]"):
        exe(np.zeros((4, 8), np.float32), np.zeros((8, 16)))


def test_wrong_shape(exe):
    with pytest.raises(ValueError, match=r"argument 0 \('x'\): expected shape \(4, 8\) "
                                         r"\(f32\[4,8\]\), got \(8, 4\)"):
        exe(np.zeros((8, 4), np.float32), np.zeros((8, 16), np.float32))


def test_python_values(exe):
    with pytest.raises(TypeError, match=r"argument 0 \('x'\)"):
        exe("hello", np.zeros((8, 16), np.float32))
    rows = [[0.5] * 8] * 4  # nested lists are weakly typed, like Python scalars
    out = exe(rows, np.ones((8, 16), np.float32))
    np.testing.assert_allclose(out, np.full((4, 16), 4.0))
    with pytest.raises(ValueError, match="expected shape"):
        exe([[1.0, 2.0]], np.ones((8, 16), np.float32))


def test_float_into_int_argument_is_rejected():
    exe = mlxc.compile("func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
                       "  return %a : tensor<i32>\n}")
    assert exe(5) == 5
    with pytest.raises(TypeError, match="does not fit int32"):
        exe(5.5)


# --- a failing pass leaves a reproducer -----------------------------------------

def test_failing_pass_saves_reproducer(tmp_path):
    # A dump that claims to have finished 'fuse' but still holds StableHLO: the
    # bufferize stage fails, and the saved input reproduces it in mlxc-opt.
    dumped = ('module attributes {mlxc.stage = "fuse", mlxc.entry = "main"} {\n' + GOOD + "}\n")
    with mlxc.settings.override(repro_dir=str(tmp_path)):
        with pytest.raises(mlxc.CompileError) as info:
            mlxc.compile(dumped)
    err = info.value
    assert err.reproducer and err.reproducer.startswith("mlxc-opt ")
    assert "reproduce with: mlxc-opt" in str(err)
    saved = [p for p in os.listdir(tmp_path) if p.endswith(".mlir")]
    assert saved, "no reproducer file written"
    import shlex
    import subprocess
    import sys
    argv = shlex.split(err.reproducer)
    result = subprocess.run([sys.executable, "-m", "mlxc.tools.opt"] + argv[1:],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert err.diagnostics[0].message.split(";")[0] in result.stderr
