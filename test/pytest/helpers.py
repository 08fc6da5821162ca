"""Shared test helpers: export JAX programs and compare results."""

from __future__ import annotations

import jax
import numpy as np
from jax import export


def export_program(fn, *args, x64: bool = False):
    """(text, portable artifact bytes, JAX's outputs as a tuple of numpy arrays)."""
    with jax.enable_x64(x64):
        exp = export.export(jax.jit(fn))(*args)
        ref = jax.jit(fn)(*args)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    return exp.mlir_module(), exp.mlir_module_serialized, tuple(np.asarray(r) for r in refs)


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def normwise_error(actual, expected) -> float:
    a = np.asarray(actual).astype(np.complex128 if np.iscomplexobj(expected) else np.float64)
    b = np.asarray(expected).astype(a.dtype)
    if b.size == 0:
        return 0.0
    diff = np.linalg.norm((a - b).ravel())
    scale = np.linalg.norm(b.ravel())
    return float(diff / scale) if scale else float(diff)


def assert_matches(outputs, expected, rtol: float) -> None:
    outputs = as_tuple(outputs)
    assert len(outputs) == len(expected), f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (o, e) in enumerate(zip(outputs, expected)):
        assert isinstance(o, np.ndarray), f"output {i} is {type(o)}"
        assert o.dtype == e.dtype, f"output {i}: dtype {o.dtype}, expected {e.dtype}"
        assert o.shape == e.shape, f"output {i}: shape {o.shape}, expected {e.shape}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(o, e, err_msg=f"output {i}")
        else:
            wide_o, wide_e = o.astype(np.complex128), e.astype(np.complex128)
            special = ~np.isfinite(wide_e)
            np.testing.assert_array_equal(np.isnan(wide_o), np.isnan(wide_e),
                                          err_msg=f"output {i}: NaN positions differ")
            np.testing.assert_array_equal(wide_o[special & ~np.isnan(wide_e)],
                                          wide_e[special & ~np.isnan(wide_e)],
                                          err_msg=f"output {i}: infinities differ")
            err = normwise_error(np.where(special, 0, wide_o), np.where(special, 0, wide_e))
            assert err <= rtol, f"output {i}: normwise error {err:.3e} > {rtol:.1e}"


# LAPACK-style tests run over the four element types, with these normwise tolerances.
LINALG_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
LINALG_IDS = ["f32", "f64", "c64", "c128"]
LINALG_RTOL = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}


def random_array(rng, shape, dtype) -> np.ndarray:
    """Standard normal values of `dtype` (complex: independent real and imaginary parts)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def lowered_op_counts(fn, sizes, tmp_path, capsys, loop_op: str) -> list[int]:
    """How many ops `mlxc-lower-extra-ops` makes of `fn` on n x n f32 zeros, per n in
    `sizes`: a lowering that loops (over `loop_op`) rather than unrolling per column
    makes as many for every n."""
    import re

    from mlxc.tools import opt

    counts = []
    for n in sizes:
        text, _, _ = export_program(fn, np.zeros((n, n), np.float32))
        path = tmp_path / f"n{n}.mlir"
        path.write_text(text)
        capsys.readouterr()
        assert opt.main([str(path), "--pass-pipeline=builtin.module(mlxc-lower-extra-ops)"]) == 0
        out = capsys.readouterr().out
        assert "custom_call" not in out and loop_op in out
        counts.append(len(re.findall(r"^\s*(?:%\S+ = )?\"?[a-z_]+\.[a-z_.]+", out, re.M)))
    return counts


def single_call_program(body: str) -> str:
    """A @main around one `%0:N = stablehlo.custom_call ... : (arg) -> (results)` line:
    its argument `%a`, its N results returned."""
    import re

    arg = re.search(r"\((tensor<[^)]*?>)\) ->", body).group(1)
    results = re.search(r"-> \((.*)\)$", body).group(1)
    count = results.count("tensor<")
    return (f"func.func @main(%a: {arg}) -> ({results}) {{\n  {body}\n"
            f"  return {', '.join(f'%0#{i}' for i in range(count))} : {results}\n}}\n")


# A script that runs a saved artifact in a process where the compiler cannot be
# imported: `python loader.py ARTIFACT INPUTS.npz OUT.npz` writes the outputs as
# arr_0, arr_1, ... and prints the mlxc/torch_mlir/jax modules it loaded.
NO_COMPILER_LOADER = r"""
import sys, numpy as np
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch_mlir", "jax", "jaxlib"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
import mlxc
exe = mlxc.load(sys.argv[1])
data = np.load(sys.argv[2])
out = exe(*[data[f"arr_{i}"] for i in range(len(data.files))])
out = out if isinstance(out, tuple) else (out,)
np.savez(sys.argv[3], *out)
loaded = sorted(m for m in sys.modules if m.startswith(("mlxc", "torch_mlir", "jax")))
print(" ".join(loaded))
"""


def run_without_compiler(path, arrays, folder) -> list:
    """The outputs of the saved artifact `path` on `arrays`, run by NO_COMPILER_LOADER in
    a fresh process (files in `folder`)."""
    import subprocess
    import sys

    np.savez(folder / "inputs.npz", *arrays)
    (folder / "loader.py").write_text(NO_COMPILER_LOADER)
    proc = subprocess.run([sys.executable, str(folder / "loader.py"), str(path),
                           str(folder / "inputs.npz"), str(folder / "outputs.npz")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with np.load(folder / "outputs.npz") as out:
        return [out[f"arr_{i}"] for i in range(len(out.files))]
