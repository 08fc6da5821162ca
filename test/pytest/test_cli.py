"""The command-line tools: `mlxc run` and `mlxc-opt`, as a user runs them."""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from helpers import export_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*argv, input=None):
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, input=input)


@pytest.fixture(scope="module")
def mlp_file(tmp_path_factory):
    text, _, _ = export_program(lambda x, w: jax.nn.relu(x @ w), np.ones((2, 3), np.float32),
                                np.ones((3, 4), np.float32))
    path = tmp_path_factory.mktemp("cli") / "mlp.mlir"
    path.write_text(text)
    return path


def test_run_random(mlp_file):
    r = run("mlxc.tools.cli", "run", str(mlp_file), "--random")
    assert r.returncode == 0, r.stderr
    assert "# main(x: f32[2,3], w: f32[3,4]) -> (result: f32[2,4])" in r.stdout
    assert "result: f32[2,4]:" in r.stdout


def test_run_inputs_npz(mlp_file, tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.ones((3, 4), np.float32)
    np.savez(tmp_path / "in.npz", x=x, w=w)
    r = run("mlxc.tools.cli", "run", str(mlp_file), "--inputs", str(tmp_path / "in.npz"))
    assert r.returncode == 0, r.stderr
    assert "[[ 3.  3.  3.  3.]\n [12. 12. 12. 12.]]" in r.stdout
    np.savez(tmp_path / "bad.npz", y=x)
    r = run("mlxc.tools.cli", "run", str(mlp_file), "--inputs", str(tmp_path / "bad.npz"))
    assert r.returncode == 1 and "expected arrays named x, w" in r.stderr
    assert "Traceback" not in r.stderr


def test_run_bench(mlp_file):
    r = run("mlxc.tools.cli", "run", str(mlp_file), "--bench", "--bench-seconds", "0.1")
    assert r.returncode == 0, r.stderr
    assert "# compile:" in r.stdout and "# run: median" in r.stdout


def test_run_reports_compile_errors(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main() {\n  %0 = stablehlo.nope : tensor<f32>\n}\n")
    r = run("mlxc.tools.cli", "run", str(bad))
    assert r.returncode == 1
    assert f"{bad}:2:8: error:" in r.stderr and "Traceback" not in r.stderr


def test_opt_stdin_and_output_file(tmp_path, mlp_file):
    out = tmp_path / "out.mlir"
    r = run("mlxc.tools.opt", "-", "--mlxc-pipeline=cpu", "--mlxc-stop-after=linalg", "-o", str(out),
            input=mlp_file.read_text())
    assert r.returncode == 0, r.stderr
    assert 'mlxc.stage = "linalg"' in out.read_text()


def test_opt_print_ir_after_all_and_timing(mlp_file):
    r = run("mlxc.tools.opt", str(mlp_file), "--mlxc-pipeline=cpu", "--mlxc-stop-after=import",
            "--mlir-print-ir-after-all", "--mlir-timing")
    assert r.returncode == 0, r.stderr
    assert "IR Dump After" in r.stderr and "mlxc-select-entry" in r.stderr
    assert "Execution time report" in r.stderr


def test_opt_print_pipeline_and_list_passes():
    r = run("mlxc.tools.opt", "--mlxc-print-pipeline", "--mlxc-pipeline=cpu")
    assert r.returncode == 0 and "stage bufferize:" in r.stdout and "# never write" in r.stdout
    r = run("mlxc.tools.opt", "--mlxc-list-passes")
    assert r.returncode == 0 and "--mlxc-select-entry" in r.stdout


def test_settings_command():
    r = run("mlxc.tools.cli", "settings")
    assert r.returncode == 0 and "MLXC_DUMP_DIR" in r.stdout and "MLXC_OPT_LEVEL" in r.stdout


def test_example_in_readme_runs():
    r = run("mlxc.tools.cli", "run", os.path.join(ROOT, "examples", "mlp.mlir"), "--random")
    assert r.returncode == 0, r.stderr


def test_split_input_keeps_line_numbers_and_accepts_commented_markers():
    from mlxc.frontend.split import split_input
    text = "a\n// -----\nb\nc\n// // -----\nd\n"
    parts = split_input(text)
    assert [p.strip() for p in parts] == ["a", "b\nc", "d"]
    # Each part starts on its own line of the whole file.
    assert parts[1].split("\n")[2] == "b" and parts[2].split("\n")[5] == "d"


def test_fusion_report_command():
    r = run("mlxc.tools.cli", "fusion", os.path.join(ROOT, "examples", "mlp.mlir"))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.endswith("memory 15 GB/s)") and "fusion groups" in first
    assert "linalg.matmul" in r.stdout and "fused: addf, maximumf" in r.stdout  # bias + relu
