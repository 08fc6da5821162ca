"""stablehlo.triangular_solve (mlxc.lowerings.linalg_ops) against JAX on the CPU."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches


def export_program(fn, *args, x64: bool = False):
    """Like helpers.export_program, but exported for TPU: on the CPU, JAX exports most
    triangular solves as LAPACK custom calls, while the TPU export keeps
    stablehlo.triangular_solve. The reference outputs still come from JAX on the CPU."""
    with jax.enable_x64(x64):
        text = jax.export.export(jax.jit(fn), platforms=["tpu"])(*args).mlir_module()
        ref = jax.jit(fn)(*args)
    assert "stablehlo.triangular_solve" in text
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    return text, tuple(np.asarray(r) for r in refs)


def _system(rng, batch, n, k, dtype, left_side):
    # Well-conditioned: a dominant diagonal, so that the comparison measures the
    # lowering and not the conditioning of a random triangle.
    shape_a = batch + (n, n)
    a = rng.standard_normal(shape_a) + n * np.eye(n)
    b = rng.standard_normal(batch + ((n, k) if left_side else (k, n)))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape_a)
        b = b + 1j * rng.standard_normal(b.shape)
    return a.astype(dtype), b.astype(dtype)


def _solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    return lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                       transpose_a=transpose_a, conjugate_a=conjugate_a,
                                       unit_diagonal=unit_diagonal)


def _op_program(a, b, left_side, lower, transpose, unit_diagonal) -> str:
    # Written out rather than exported: JAX exports some 2-D cases as a LAPACK call.
    def t(x):
        elem = {"float32": "f32", "complex64": "complex<f32>"}[x.dtype.name]
        return "tensor<" + "x".join(map(str, x.shape)) + "x" + elem + ">"
    return f"""func.func @main(%a: {t(a)}, %b: {t(b)}) -> {t(b)} {{
  %x = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left_side).lower()},
      lower = {str(lower).lower()}, unit_diagonal = {str(unit_diagonal).lower()},
      transpose_a = #stablehlo<transpose {transpose}>}} : ({t(a)}, {t(b)}) -> {t(b)}
  return %x : {t(b)}
}}"""


@pytest.mark.parametrize("left_side,lower,unit_diagonal", list(itertools.product([True, False], repeat=3)))
@pytest.mark.parametrize("transpose", ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_every_mode_matches_jax(left_side, lower, unit_diagonal, transpose, batch):
    rng = np.random.default_rng(0)
    dtype = np.complex64 if transpose == "ADJOINT" else np.float32
    a, b = _system(rng, batch, 5, 3, dtype, left_side)
    expected = jax.jit(lambda a, b: _solve(a, b, left_side, lower, transpose != "NO_TRANSPOSE",
                                           transpose == "ADJOINT", unit_diagonal))(a, b)
    text = _op_program(a, b, left_side, lower, transpose, unit_diagonal)
    assert_matches(mlxc.compile(text)(a, b), (np.asarray(expected),), rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.complex128, 1e-12),
                                        (np.float32, 1e-5), (np.complex64, 1e-5)])
def test_batched_and_scipy(dtype, rtol):
    rng = np.random.default_rng(1)
    a, b = _system(rng, (3, 2), 7, 4, dtype, True)

    def f(a, b):
        return jax.scipy.linalg.solve_triangular(a, b, lower=False, trans="C")

    text, expected = export_program(f, a, b, x64=True)
    assert_matches(mlxc.compile(text)(a, b), expected, rtol=rtol)
    # And the system really is solved: A^H X = B.
    x = mlxc.compile(text)(a, b)
    np.testing.assert_allclose(np.conj(np.swapaxes(np.triu(a), -1, -2)) @ x, b,
                               rtol=rtol * 100, atol=rtol * 100)


def test_other_triangle_and_unit_diagonal_are_never_read():
    # NaN above the diagonal and on it: a lower, unit-diagonal solve must not see them.
    rng = np.random.default_rng(2)
    a, b = _system(rng, (), 4, 2, np.float32, True)
    a_in = np.where(np.tril(np.ones((4, 4)), -1) > 0, a, np.nan).astype(np.float32)
    saved = a_in.copy()

    text = _op_program(a_in, b, True, True, "NO_TRANSPOSE", True)
    got = mlxc.compile(text)(a_in, b)
    expected = np.linalg.solve(np.tril(a, -1) + np.eye(4), b)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.isnan(a_in), np.isnan(saved))  # input untouched


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_low_precision(dtype):
    rng = np.random.default_rng(3)
    a, b = _system(rng, (2,), 4, 3, np.float32, False)
    a, b = a.astype(dtype), b.astype(dtype)

    def f(a, b):
        return _solve(a, b, False, True, True, False, False)

    text, expected = export_program(f, a, b)
    got = mlxc.compile(text)(a, b)
    assert got.dtype == np.dtype(dtype)
    assert_matches(got, expected, rtol=2e-2)


@pytest.mark.parametrize("n,k", [(1, 3), (3, 0), (40, 2)])
def test_sizes(n, k):
    # A 1x1 system (a division in XLA), an empty right-hand side, and a long loop.
    rng = np.random.default_rng(4)
    a, b = _system(rng, (), n, k, np.float32, True)

    def f(a, b):
        return _solve(a, b, True, False, False, False, False)

    text, expected = export_program(f, a, b)
    assert_matches(mlxc.compile(text)(a, b), expected, rtol=1e-5)


def test_solve_inside_a_bigger_program():
    # cho_solve: two triangular solves around a Cholesky factor given as input.
    rng = np.random.default_rng(5)
    m = rng.standard_normal((6, 6)).astype(np.float32)
    spd = m @ m.T + 6 * np.eye(6, dtype=np.float32)
    chol = np.linalg.cholesky(spd).astype(np.float32)
    b = rng.standard_normal((6, 2)).astype(np.float32)

    def f(c, b):
        return jax.scipy.linalg.cho_solve((c, True), b) * 2.0 + jnp.sum(c)

    text, expected = export_program(f, chol, b)
    assert_matches(mlxc.compile(text)(chol, b), expected, rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float64, 1e-12),
                                        (np.complex64, 1e-5), (np.complex128, 1e-12)])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_matches_jax(dtype, rtol, lower):
    rng = np.random.default_rng(6)
    m = rng.standard_normal((3, 6, 6))
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal((3, 6, 6))
    a = (m @ np.conj(np.swapaxes(m, -1, -2)) + 6 * np.eye(6)).astype(dtype)

    if lower:
        def f(a):
            # symmetrize_input=False: one stablehlo.cholesky of the input, then tril.
            return lax.linalg.cholesky(a, symmetrize_input=False)

        x64 = np.dtype(dtype) in (np.float64, np.complex128)
        with jax.enable_x64(x64):
            text = jax.export.export(jax.jit(f), platforms=["tpu"])(a).mlir_module()
            expected = np.asarray(jax.jit(f)(a))
        assert "stablehlo.cholesky" in text
        assert_matches(mlxc.compile(text)(a), (expected,), rtol=rtol)
    else:
        # JAX never asks for the upper factor: A = U^H U, U = L^H.
        elem = {"float32": "f32", "float64": "f64", "complex64": "complex<f32>",
                "complex128": "complex<f64>"}[np.dtype(dtype).name]
        t = f"tensor<3x6x6x{elem}>"
        text = f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cholesky %a, lower = false : {t}
  return %0 : {t}
}}"""
        upper = np.conj(np.swapaxes(np.linalg.cholesky(a.astype(np.complex128)), -1, -2))
        got = mlxc.compile(text)(a)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, upper, rtol=rtol * 10, atol=rtol * 10)


def test_cholesky_of_an_indefinite_matrix_is_nan():
    text = """func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""
    got = mlxc.compile(text)(np.array([[1, 2], [2, 1]], np.float32))
    assert got[0, 0] == 1 and np.isnan(got[1, 1])


@pytest.mark.parametrize("a_shape,b_shape", [((2, 0, 0), (2, 0, 3)), ((0, 3, 3), (0, 3, 2))])
def test_triangular_solve_empty(a_shape, b_shape):
    a, b = np.zeros(a_shape, np.float32), np.zeros(b_shape, np.float32)
    got = mlxc.compile(_op_program(a, b, True, True, "NO_TRANSPOSE", False))(a, b)
    assert got.shape == b_shape and got.dtype == np.float32


@pytest.mark.parametrize("n", [0, 1])
def test_cholesky_tiny(n):
    text = f"""func.func @main(%a: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %0 = stablehlo.cholesky %a, lower = true : tensor<{n}x{n}xf32>
  return %0 : tensor<{n}x{n}xf32>
}}"""
    got = mlxc.compile(text)(np.full((n, n), 4, np.float32))
    np.testing.assert_array_equal(got, np.full((n, n), 2, np.float32))
