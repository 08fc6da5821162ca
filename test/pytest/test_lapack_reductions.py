"""The reductions to condensed form (mlxc.lowerings.lapack_reductions) against JAX.

`lapack_?gehrd_ffi` (Hessenberg) and `lapack_?sytrd_ffi`/`?hetrd` (tridiagonal) return
LAPACK's packed reflectors and taus, which callers turn into Q: they must agree with
JAX's (LAPACK's) outputs entry by entry, to rounding, not only reproduce A.
"""

from __future__ import annotations

import re

import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg.lapack as sla
from jax import lax

import mlxc
from helpers import (LINALG_DTYPES, LINALG_IDS, LINALG_RTOL, as_tuple, assert_matches,
                     export_program, lowered_op_counts, random_array,
                     single_call_program)

DTYPES, IDS = LINALG_DTYPES, LINALG_IDS
RTOL = LINALG_RTOL


def _hessenberg_q(a):
    return jsl.hessenberg(a, calc_q=True)


CASES = {
    "hessenberg": (lax.linalg.hessenberg, (5, 5)),
    "hessenberg_batched": (lax.linalg.hessenberg, (2, 3, 6, 6)),
    "hessenberg_q": (_hessenberg_q, (7, 7)),
    "hessenberg_2x2": (lax.linalg.hessenberg, (2, 2)),
    "hessenberg_1x1": (lax.linalg.hessenberg, (3, 1, 1)),
    "hessenberg_16": (lax.linalg.hessenberg, (16, 16)),
    "tridiagonal_lower": (lambda a: lax.linalg.tridiagonal(a, lower=True), (2, 5, 5)),
    "tridiagonal_upper": (lambda a: lax.linalg.tridiagonal(a, lower=False), (2, 5, 5)),
    "tridiagonal_upper_16": (lambda a: lax.linalg.tridiagonal(a, lower=False), (16, 16)),
    "tridiagonal_lower_batched": (lambda a: lax.linalg.tridiagonal(a, lower=True), (2, 3, 4, 4)),
    "tridiagonal_2x2": (lambda a: lax.linalg.tridiagonal(a, lower=True), (2, 2)),
    "tridiagonal_1x1": (lambda a: lax.linalg.tridiagonal(a, lower=False), (2, 1, 1)),
}


def _compare(fn, a, form="artifact"):
    x64 = a.dtype in (np.float64, np.complex128)
    text, artifact, expected = export_program(fn, a, x64=x64)
    assert re.search(r"@lapack_[sdcz](gehrd|sytrd|hetrd)_ffi", text)  # what this file is about
    copy = a.copy()
    outputs = mlxc.compile(text if form == "text" else artifact)(a)
    assert_matches(outputs, expected, RTOL[a.dtype.type])
    np.testing.assert_array_equal(a, copy)
    return as_tuple(outputs)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name, dtype):
    fn, shape = CASES[name]
    # Both triangles random: the tridiagonal reduction must read only the `uplo` one
    # and return the other as given.
    _compare(fn, random_array(np.random.default_rng(0), shape, dtype))


@pytest.mark.parametrize("name", ["hessenberg_batched", "tridiagonal_upper"])
def test_text_form(name):
    fn, shape = CASES[name]
    _compare(fn, random_array(np.random.default_rng(1), shape, np.float32), form="text")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_already_reduced(dtype):
    # Columns with nothing to zero: ?larfg makes no reflection (tau = 0) when the rest
    # of the column is zero and alpha real, but a complex alpha still gets one (to
    # make the subdiagonal real).
    rng = np.random.default_rng(2)
    a = np.triu(random_array(rng, (6, 6), dtype), -1)
    a[3, 2] = 0
    _compare(lax.linalg.hessenberg, a)
    t = np.diag(random_array(rng, (5,), dtype).real) + np.diag(random_array(rng, (4,), dtype), -1)
    t = (t + np.conj(t.T) - np.diag(t.diagonal())).astype(dtype)
    outputs = _compare(lambda m: lax.linalg.tridiagonal(m, lower=True), t)
    taus = outputs[3]
    if np.dtype(dtype).kind == "f":
        assert not taus.any()
    else:
        assert taus.all()
    _compare(lambda m: lax.linalg.tridiagonal(m, lower=False), np.diag(np.arange(1.0, 5.0)).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_tridiagonal_reconstructs(lower, dtype):
    # Q^H A Q = T with Q the product of the packed reflectors, as a user builds it.
    n = 7
    a = random_array(np.random.default_rng(4), (n, n), dtype)
    herm = np.tril(a) + np.conj(np.tril(a, -1)).T if lower else np.triu(a) + np.conj(np.triu(a, 1)).T
    herm = herm - 1j * np.diag(herm.diagonal().imag) if np.dtype(dtype).kind == "c" else herm
    x64 = dtype in (np.float64, np.complex128)
    text, artifact, _ = export_program(lambda m: lax.linalg.tridiagonal(m, lower=lower), a, x64=x64)
    packed, d, e, taus = mlxc.compile(artifact)(a)
    q = np.eye(n, dtype=np.complex128)
    for k in range(n - 1):
        v = np.zeros(n, np.complex128)
        if lower:
            v[k + 1], v[k + 2:] = 1, packed[k + 2:, k]
        else:
            v[k], v[:k] = 1, packed[:k, k + 1]
        h = np.eye(n) - taus[k] * np.outer(v, np.conj(v))
        q = q @ h if lower else h @ q  # Q = H_0 ... H_(n-2), upper: H_(n-2) ... H_0
    t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
    eps = np.finfo(dtype).eps
    assert np.abs(np.conj(q.T) @ herm @ q - t).max() <= 50 * n * eps * np.abs(herm).max()
    assert np.abs(np.conj(q.T) @ q - np.eye(n)).max() <= 50 * n * eps


_GEHRD = """func.func @main(%a: tensor<{n}x{n}x{t}>) -> (tensor<{n}x{n}x{t}>, tensor<{m}x{t}>, tensor<i32>) {{
  %0:3 = stablehlo.custom_call @lapack_{r}gehrd_ffi(%a) {{mhlo.backend_config = {{high = {high} : i32, low = {low} : i32}}}} : (tensor<{n}x{n}x{t}>) -> (tensor<{n}x{n}x{t}>, tensor<{m}x{t}>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<{n}x{n}x{t}>, tensor<{m}x{t}>, tensor<i32>
}}
"""


@pytest.mark.parametrize("low,high", [(1, 8), (3, 8), (2, 6), (4, 4), (1, 1), (3, 7)])
def test_gehrd_bounds(low, high):
    # jax always passes ilo = 1, ihi = n; other bounds (a balanced matrix, upper
    # triangular outside rows and columns ilo..ihi) against scipy's LAPACK.
    n = 8
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, n))
    rows, cols = np.indices((n, n))
    a[(rows > cols) & ((cols < low - 1) | (rows >= high))] = 0
    h, tau, info = mlxc.compile(_GEHRD.format(n=n, m=n - 1, t="f64", r="d", low=low, high=high))(a)
    ref_h, ref_tau, ref_info = sla.dgehrd(a, lo=low - 1, hi=high - 1)
    assert info == ref_info == 0
    np.testing.assert_allclose(h, ref_h, rtol=0, atol=1e-13 * np.abs(a).max())
    np.testing.assert_allclose(tau, ref_tau[:n - 1], rtol=0, atol=1e-13)
    # And the reduction itself: Q^T A Q = H with H upper Hessenberg.
    q = sla.dorghr(h, tau, lo=low - 1, hi=high - 1)[0]
    np.testing.assert_allclose(q.T @ a @ q, np.triu(h, -1), atol=1e-12 * np.abs(a).max())


def test_hessenberg_matches_scipy_complex():
    # A second LAPACK build, for the complex conventions (tau's conjugation, ?larfg's
    # reflector of a complex alpha).
    a = random_array(np.random.default_rng(6), (6, 6), np.complex128)
    h, tau, _ = mlxc.compile(_GEHRD.format(n=6, m=5, t="complex<f64>", r="z", low=1, high=6))(a)
    ref_h, ref_tau, _ = sla.zgehrd(a)
    np.testing.assert_allclose(h, ref_h, atol=1e-13 * np.abs(a).max())
    np.testing.assert_allclose(tau, ref_tau[:5], atol=1e-13)


@pytest.mark.parametrize("fn", [lax.linalg.hessenberg, lambda a: lax.linalg.tridiagonal(a, lower=False)],
                         ids=["gehrd", "sytrd"])
def test_loop_not_unrolled(fn, tmp_path, capsys):
    # One loop step per column, not one copy of the step per column: the lowered IR
    # has as many ops for n = 64 as for n = 4.
    counts = lowered_op_counts(fn, (4, 64), tmp_path, capsys, "scf.for")
    assert counts[0] == counts[1] > 50, counts


@pytest.mark.parametrize("body,message", [
    ("%0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 4 : i32, low = 3 : i32}}"
     " : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_sgehrd_ffi: expected a square matrix \(or a batch of them\), "
     r"got tensor<3x4xf32>"),
    ("%0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 2 : i32, low = 3 : i32}}"
     " : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_sgehrd_ffi: low = 3, high = 2 must satisfy 1 <= low <= high <= 4"),
    ("%0:5 = stablehlo.custom_call @lapack_ssytrd_ffi(%a) {mhlo.backend_config = {uplo = 88 : ui8}}"
     " : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_ssytrd_ffi: uplo = 'X' is not one of L, U"),
    ("%0:3 = stablehlo.custom_call @lapack_dgehrd_ffi(%a) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}}"
     " : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_dgehrd_ffi: expected the results \(tensor<4x4xf64>, "
     r"tensor<3xf64>, tensor<i32>\), got \(tensor<4x4xf64>, tensor<4xf64>, tensor<i32>\)"),
])
def test_errors(body, message):
    with pytest.raises(mlxc.CompileError, match=message):
        mlxc.compile(single_call_program(body))
