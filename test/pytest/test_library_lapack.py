"""mlxc-library-lapack: JAX's f32/f64 LAPACK custom calls as calls to the runtime's
kernels (runtime/mlxc_lapack.c), against JAX (which runs LAPACK), in the JIT and in a
saved artifact.

One program per element type and shape computes every routine's op (cholesky, solve,
lu, qr, eigh, svd), so each case compiles once. Factors LAPACK defines uniquely
(Cholesky, LU with its pivots, QR with LAPACK's reflector signs, eigenvalues, singular
values, solutions) are compared with JAX's; eigenvectors and singular vectors, unique
up to sign, by their residual and orthonormality.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import export_program, run_without_compiler


def _every_op(spd, a, b):
    lu, pivots, perm = lax.linalg.lu(a)
    q, r = jnp.linalg.qr(a)
    w, v = jnp.linalg.eigh(spd)
    u, s, vt = jnp.linalg.svd(a, full_matrices=False)
    return (jnp.linalg.cholesky(spd), jnp.linalg.solve(a, b), lu, pivots, perm, q, r, w, v,
            u, s, vt, jnp.linalg.svd(a, compute_uv=False), jnp.linalg.eigvalsh(spd))


_KERNELS = ("potrf", "getrf", "trsm", "geqrf", "orgqr", "syevd", "gesdd")


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    n = shape[-1]
    x = rng.standard_normal(shape)
    spd = x @ np.swapaxes(x, -1, -2) / max(n, 1) + np.eye(n)
    a = rng.standard_normal(shape) + 2 * np.eye(n)  # well conditioned: LU growth stays small
    b = rng.standard_normal(shape[:-1] + (3,))
    return [spd.astype(dtype), a.astype(dtype), b.astype(dtype)]


def _relative(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return float(np.abs(x - y).max() / max(np.abs(y).max(), 1.0)) if y.size else 0.0


def _check(outputs, expected, args, dtype):
    (chol, x, lu, piv, perm, q, r, w, v, u, s, vt, svals, wvals) = outputs
    eps = np.finfo(dtype).eps
    n = args[0].shape[-1]
    tol = 30 * max(n, 1) * eps
    for i in (0, 1, 2, 5, 6, 7, 10, 12, 13):  # unique up to rounding
        assert _relative(outputs[i], expected[i]) <= tol, (i, _relative(outputs[i], expected[i]))
    np.testing.assert_array_equal(piv, expected[3])
    np.testing.assert_array_equal(perm, expected[4])
    spd, a = (m.astype(np.float64) for m in args[:2])
    t = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    eye = np.eye(n)
    scale = max(np.abs(np.asarray(w)).max(initial=0), 1.0)
    assert np.abs(spd @ v - v * np.asarray(w)[..., None, :]).max(initial=0) <= tol * scale
    assert np.abs(t(v) @ v - eye).max(initial=0) <= tol
    assert (np.diff(w, axis=-1) >= 0).all()
    scale = max(np.abs(np.asarray(s)).max(initial=0), 1.0)
    assert np.abs((u * np.asarray(s)[..., None, :]) @ vt - a).max(initial=0) <= tol * scale
    assert np.abs(t(u) @ u - eye).max(initial=0) <= tol
    assert np.abs(vt @ t(vt) - eye).max(initial=0) <= tol
    assert (np.diff(s, axis=-1) <= 0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 7), (64, 64), (200, 200), (3, 2, 9, 9)], ids=str)
def test_kernels_match_jax(shape, dtype):
    args = _inputs(shape, dtype)
    text, _, expected = export_program(_every_op, *args, x64=dtype == np.float64)
    linalg = str(mlxc.lower(text, stop_after="linalg"))
    suffix = "f32" if dtype == np.float32 else "f64"
    for routine in _KERNELS:
        assert f"call @mlxc_{routine}_{suffix}(" in linalg, routine
    copies = [x.copy() for x in args]
    outputs = mlxc.compile(text)(*args)
    _check(outputs, expected, args, dtype)
    for x, c in zip(args, copies):
        np.testing.assert_array_equal(x, c)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 6, 4), (2, 4, 6)], ids=str)
@pytest.mark.parametrize("full", [True, False], ids=["full", "reduced"])
def test_rectangular_qr_and_svd(shape, full):
    a = np.random.default_rng(1).standard_normal(shape)
    fn = lambda a: (*jnp.linalg.qr(a, mode="complete" if full else "reduced"),  # noqa: E731
                    *jnp.linalg.svd(a, full_matrices=full), *lax.linalg.lu(a))
    text, _, expected = export_program(fn, a, x64=True)
    q, r, u, s, vt, lu, piv, perm = mlxc.compile(text)(a)
    for got, want in ((q, expected[0]), (r, expected[1]), (s, expected[3]), (lu, expected[5])):
        assert got.shape == want.shape and _relative(got, want) <= 1e-13
    np.testing.assert_array_equal(piv, expected[6])
    k = min(shape[-2:])
    t = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    assert np.abs((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :] - a).max() <= 1e-13
    assert np.abs(t(u) @ u - np.eye(u.shape[-1])).max() <= 1e-13
    assert np.abs(vt @ t(vt) - np.eye(vt.shape[-2])).max() <= 1e-13


def test_nan_and_singular_input_as_lapack():
    # No hang on NaN: eigh and svd report it in info (JAX then returns NaNs), Cholesky's
    # info names the failed column; a singular LU finishes with its first zero pivot.
    nan = np.full((2, 6, 6), np.nan, np.float32)
    nan[0] = np.eye(6)
    fns = [jnp.linalg.eigh, jnp.linalg.svd, jnp.linalg.cholesky, jnp.linalg.det]
    for fn in fns:
        text, _, expected = export_program(fn, nan)
        outputs = mlxc.compile(text)(nan)
        for got, want in zip(outputs if isinstance(outputs, tuple) else (outputs,), expected):
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    singular = np.array([[0, 0, 1], [0, 0, 2], [1, 2, 3], [2, 4, 1]], np.float64)
    text, _, expected = export_program(lax.linalg.lu, singular, x64=True)
    for got, want in zip(mlxc.compile(text)(singular), expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_empty_matrices():
    spd = np.zeros((3, 0, 0), np.float32)
    text, _, expected = export_program(lambda a: (jnp.linalg.cholesky(a), *jnp.linalg.eigh(a)), spd)
    outputs = mlxc.compile(text)(spd)
    for got, want in zip(outputs, expected):
        assert got.shape == want.shape and got.dtype == want.dtype


def test_library_calls_off_keeps_the_loop_lowering():
    args = _inputs((6, 6), np.float64)
    text, _, expected = export_program(_every_op, *args, x64=True)
    with mlxc.settings.override(library_calls=False, cache=False):
        assert "call @mlxc_" not in str(mlxc.lower(text, stop_after="linalg"))
        _check(mlxc.compile(text)(*args), expected, args, np.float64)


def test_saved_artifact_runs_the_kernels(tmp_path):
    # exe.save() compiles the runtime's sources, mlxc_lapack.c included, into the
    # artifact, which runs in a process that has no compiler.
    args = _inputs((2, 12, 12), np.float32, seed=3)
    text, _, expected = export_program(_every_op, *args)
    path = tmp_path / "linalg.so"
    mlxc.compile(text).save(path)
    _check(tuple(run_without_compiler(path, args, tmp_path)), expected, args, np.float32)
