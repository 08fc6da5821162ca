"""Nonsymmetric eigenproblems (mlxc.lowerings.lapack_eigen) against JAX.

`lapack_?gees_ffi` (jax.scipy.linalg.schur) and `lapack_?geev_ffi` (jnp.linalg.eig)
have no unique answer (the order of the eigenvalues, the Schur vectors' signs and
phases), so the tests check what a user relies on: A = Z T Z^H with Z unitary and T
(quasi-)triangular in LAPACK's standard form; A v = lambda v with unit-norm vectors whose
largest component is real; eigenvalues equal to JAX's as a multiset; conjugate pairs of
a real matrix exactly conjugate, positive imaginary part first, real ones exactly real.
"""

from __future__ import annotations

import re

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax
from scipy.optimize import linear_sum_assignment

import mlxc
from helpers import (LINALG_DTYPES, LINALG_IDS, export_program, lowered_op_counts,
                     single_call_program)

DTYPES, IDS = LINALG_DTYPES, LINALG_IDS


MATRICES = {
    "random": lambda r: r.standard_normal((6, 6)),
    "batched": lambda r: r.standard_normal((2, 3, 5, 5)),
    "one": lambda r: np.array([[3.0]]),
    "two": lambda r: np.array([[1.0, 2.0], [-3.0, 4.0]]),
    "rotation": lambda r: np.array([[0.0, -1.0], [1.0, 0.0]]),
    "sixteen": lambda r: r.standard_normal((16, 16)),
    # A cycle: the standard shifts stall on it, the exceptional ones break it.
    "permutation": lambda r: np.roll(np.eye(5), 1, axis=0),
    "zero": lambda r: np.zeros((4, 4)),
    "triangular": lambda r: np.triu(np.arange(1.0, 17.0).reshape(4, 4)),
    "companion": lambda r: np.c_[np.r_[np.zeros((1, 5)), np.eye(5)], np.arange(1.0, 7.0)],
    "symmetric": lambda r: (lambda m: m + m.T)(r.standard_normal((6, 6))),
}


def _make(name, dtype):
    rng = np.random.default_rng(7)
    a = MATRICES[name](rng)
    if np.dtype(dtype).kind == "c" and name in ("random", "batched", "sixteen"):
        a = a + 1j * rng.standard_normal(a.shape)
    return a.astype(dtype)


def _tol(a):
    n = a.shape[-1]
    return 50 * n * np.finfo(a.dtype).eps * max(1.0, np.abs(a).max())


def _same_multiset(w, w_ref, tol):
    for x, y in zip(w.reshape(-1, w.shape[-1]), w_ref.reshape(-1, w_ref.shape[-1])):
        dist = np.abs(x[:, None] - y[None, :])
        rows, cols = linear_sum_assignment(dist)
        assert dist[rows, cols].max() <= tol, (x, y)


def _compile(fn, a, form="artifact"):
    x64 = a.dtype in (np.float64, np.complex128)
    text, artifact, expected = export_program(fn, a, x64=x64)
    assert re.search(r"@lapack_[sdcz](gees|geev)_ffi", text)  # what this file is about
    copy = a.copy()
    outputs = mlxc.compile(text if form == "text" else artifact)(a)
    np.testing.assert_array_equal(a, copy)
    return outputs, expected


def _adjoint(m):
    return np.conj(np.swapaxes(m, -1, -2))


def _check_pairs(w, real_input):
    # LAPACK's ordering of a real matrix's eigenvalues: a complex pair is adjacent,
    # exactly conjugate, the positive imaginary part first; the others exactly real.
    if not real_input:
        return
    for x in w.reshape(-1, w.shape[-1]):
        i = 0
        while i < len(x):
            if x[i].imag == 0:
                i += 1
                continue
            assert x[i].imag > 0 and i + 1 < len(x) and x[i + 1] == np.conj(x[i]), x
            i += 2


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_schur(name, dtype):
    a = _make(name, dtype)
    (t, z), (t_ref, _) = _compile(jsl.schur, a)
    assert t.dtype == z.dtype == dtype and t.shape == z.shape == a.shape
    tol = _tol(a)
    n = a.shape[-1]
    assert np.abs(z @ t @ _adjoint(z) - a).max() <= tol
    assert np.abs(_adjoint(z) @ z - np.eye(n)).max() <= 50 * n * np.finfo(dtype).eps
    if np.dtype(dtype).kind == "c":
        assert not np.tril(t, -1).any()
        w = np.diagonal(t, axis1=-2, axis2=-1)
    else:
        assert not np.tril(t, -2).any()
        sub = np.diagonal(t, -1, axis1=-2, axis2=-1)
        assert not (sub[..., 1:] != 0)[sub[..., :-1] != 0].any()  # 2x2 blocks never overlap
        w = np.linalg.eigvals(t)
        for i in zip(*np.nonzero(sub)):  # the standard form of a 2x2 block
            *b, k = i
            blk = t[tuple(b)][k:k + 2, k:k + 2]
            assert blk[0, 0] == blk[1, 1] and blk[0, 1] * blk[1, 0] < 0, blk
    _same_multiset(w, np.linalg.eigvals(t_ref), tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_eig(name, dtype):
    a = _make(name, dtype)
    (w, v), (w_ref, _) = _compile(jnp.linalg.eig, a)
    complex_t = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == complex_t and v.shape == a.shape and w.shape == a.shape[:-1]
    tol = _tol(a)
    _same_multiset(w, w_ref, tol)
    _check_pairs(w, np.dtype(dtype).kind == "f")
    assert np.abs(a @ v - v * w[..., None, :]).max() <= tol
    norms = np.linalg.norm(v, axis=-2)
    assert np.abs(norms - 1).max() <= 10 * np.finfo(dtype).eps * a.shape[-1]
    # The largest component of each vector real and positive, as LAPACK normalises it
    # (of components equal in size up to rounding, any).
    flat = np.swapaxes(v, -1, -2).reshape(-1, a.shape[-1])
    for vec in flat:
        real = vec.real[(vec.imag == 0) & (vec.real > 0)]
        assert real.size and real.max() >= np.abs(vec).max() * (1 - 10 * np.finfo(dtype).eps), vec


@pytest.mark.parametrize("fn", [jsl.schur, jnp.linalg.eig], ids=["gees", "geev"])
def test_text_form(fn):
    a = _make("random", np.float32)
    outputs, _ = _compile(fn, a, form="text")
    assert all(np.isfinite(o).all() for o in outputs)


def test_eigenvalues_only():
    # jnp.linalg.eigvals: geev without vectors.
    a = _make("batched", np.float64)
    w, (w_ref,) = _compile(jnp.linalg.eigvals, a)
    _same_multiset(w, w_ref, _tol(a))
    _check_pairs(w, True)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", ["batched", "companion", "permutation"])
def test_left_eigenvectors(name, dtype):
    # u^H A = lambda u^H for the left vectors, in the order of the eigenvalues, and the
    # right ones as eig gives them.
    a = _make(name, dtype)
    fn = lambda m: lax.linalg.eig(m, compute_left_eigenvectors=True)  # noqa: E731
    (w, vl, vr), (w_ref, _, _) = _compile(fn, a)
    tol = _tol(a)
    _same_multiset(w, w_ref, tol)
    assert np.abs(_adjoint(vl) @ a - w[..., :, None] * _adjoint(vl)).max() <= tol
    assert np.abs(a @ vr - vr * w[..., None, :]).max() <= tol
    assert np.abs(np.linalg.norm(vl, axis=-2) - 1).max() <= 10 * np.finfo(dtype).eps * a.shape[-1]


@pytest.mark.parametrize("fn", [jsl.schur, jnp.linalg.eig], ids=["gees", "geev"])
def test_nan_input(fn):
    # Nothing converges: the iteration stops after its step budget (no hang) and, as in
    # JAX, every output is NaN.
    a = np.random.default_rng(8).standard_normal((4, 4))
    a[1, 2] = np.nan
    outputs, expected = _compile(fn, a)
    for o, x in zip(outputs, expected):
        assert np.isnan(x).all() and np.isnan(o).all()


@pytest.mark.parametrize("fn", [jsl.schur, jnp.linalg.eig], ids=["gees", "geev"])
def test_loop_not_unrolled(fn, tmp_path, capsys):
    # The QR iteration is loops, not code per column: as many ops for n = 64 as for 4.
    counts = lowered_op_counts(fn, (4, 64), tmp_path, capsys, "scf.while")
    assert counts[0] == counts[1] > 100, counts


@pytest.mark.parametrize("body,message", [
    ("%0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 83 : ui8}}"
     " : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_sgees_ffi: sorted Schur forms \(sort = 'S'\) are not supported"),
    ("%0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 88 : ui8, "
     "compute_right = 86 : ui8}} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, "
     "tensor<3x3xcomplex<f32>>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_sgeev_ffi: compute_left = 'X' is not one of N, V"),
    ("%0:5 = stablehlo.custom_call @lapack_cgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}}"
     " : (tensor<3x2xcomplex<f32>>) -> (tensor<3x2xcomplex<f32>>, tensor<3x2xcomplex<f32>>, tensor<2xcomplex<f32>>, "
     "tensor<i32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_cgees_ffi: expected a square matrix"),
    ("%0:4 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, "
     "compute_right = 86 : ui8}} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<i32>)",
     r"<string>:2:10: error: custom_call @lapack_sgeev_ffi: expected the results \(tensor<3xf32>, tensor<3xf32>, "
     r"tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>\), got \(tensor<3xf32>, tensor<3x3xf32>"),
])
def test_errors(body, message):
    with pytest.raises(mlxc.CompileError, match=message):
        mlxc.compile(single_call_program(body))
