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
