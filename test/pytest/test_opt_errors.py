"""mlxc-opt on bad paths, binary input and bytecode: an error line and status 1, or the
program; never a traceback."""

from __future__ import annotations

import io
import sys

import pytest

from mlxc.tools import opt
from helpers import export_program

PROGRAM = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _opt(capsys, *argv, stdin: bytes = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    status = opt.main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out, out.err


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    return path


def test_output_into_a_missing_folder_or_a_directory(capsys, tmp_path, program):
    missing = tmp_path / "no" / "out.mlir"
    assert _opt(capsys, str(program), "-o", str(missing)) == (
        1, "", f"mlxc-opt: error: cannot write {missing}: No such file or directory\n")
    assert _opt(capsys, str(program), "-o", str(tmp_path)) == (
        1, "", f"mlxc-opt: error: cannot write {tmp_path}: Is a directory\n")


def test_input_that_is_not_a_file(capsys, tmp_path):
    assert _opt(capsys, str(tmp_path)) == (1, "", f"mlxc-opt: error: cannot read {tmp_path}: "
                                                  "a directory\n")
    assert _opt(capsys, str(tmp_path / "none.mlir")) == (
        1, "", f"mlxc-opt: error: cannot read {tmp_path / 'none.mlir'}: No such file or directory\n")


def test_binary_stdin(capsys, monkeypatch):
    status, out, err = _opt(capsys, "-", stdin=b"func.func\n @main\xff\xfe", monkeypatch=monkeypatch)
    assert (status, out) == (1, "")
    assert err == "<stdin>:2:7: error: byte 0xFF is not UTF-8 (the input is neither MLIR text " \
                  "nor MLIR bytecode)\n"


def test_bytecode_and_portable_artifact_inputs(capsys, tmp_path, monkeypatch):
    import numpy as np

    text, artifact, _ = export_program(lambda x: x * 2, np.ones(4, np.float32))
    vhlo = tmp_path / "p.vhlo"
    vhlo.write_bytes(artifact)
    status, out, err = _opt(capsys, str(vhlo), "--mlxc-pipeline=cpu", "--mlxc-stop-after=import")
    assert status == 0, err
    assert "stablehlo.multiply" in out and 'mlxc.stage = "import"' in out
    from mlxc._mlir import ir, new_context

    with new_context():
        buf = io.BytesIO()
        ir.Module.parse(PROGRAM).operation.write_bytecode(buf)
    status, out, err = _opt(capsys, "-", stdin=buf.getvalue(), monkeypatch=monkeypatch)
    assert status == 0, err
    assert "stablehlo.add %arg0, %arg0 : tensor<4xf32>" in out
    damaged = bytearray(buf.getvalue())
    del damaged[len(damaged) // 2:]
    mlirbc = tmp_path / "p.mlirbc"
    mlirbc.write_bytes(bytes(damaged))
    status, out, err = _opt(capsys, str(mlirbc))
    assert (status, out) == (1, "")
    assert err.startswith(f"{mlirbc}:0:0: error: ") or err.startswith(f"{mlirbc}: error: "), err


def test_declared_entry(capsys, tmp_path):
    path = tmp_path / "decl.mlir"
    path.write_text("func.func private @main(%a: tensor<4xf32>) -> tensor<4xf32>\n")
    status, out, err = _opt(capsys, str(path), "--mlxc-pipeline=cpu")
    assert (status, out) == (1, "")
    assert err.startswith(f"{path}:1:1: error: entry @main is only declared: it has no body "
                          "to compile\n"), err
