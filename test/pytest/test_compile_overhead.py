"""A cold compile does not import the MLIR dialect packages mlxc does not use: their
Python op classes (linalg's op DSL above all) take about half a second to import."""

import subprocess
import sys

HEAVY = ["torch_mlir.dialects.linalg", "torch_mlir.dialects.transform",
         "torch_mlir.dialects.llvm"]

SCRIPT = """
import sys
import numpy as np
import mlxc
exe = mlxc.compile('''
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}''')
x = np.arange(64, dtype=np.float32).reshape(8, 8)
np.testing.assert_allclose(exe(x, x), x @ x, rtol=1e-6)
print(" ".join(m for m in HEAVY if m in sys.modules))
"""


def test_compile_imports_no_dialect_packages(tmp_path):
    # A matmul goes through the CPU schedules (transform interpreter, contraction
    # queries) and the LLVM translation: every native module the packages wrap.
    out = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + SCRIPT],
                         capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "MLXC_CACHE": "0"})
    assert out.stdout.strip() == "", f"imported: {out.stdout.strip()}"
