"""JAX's CPU linear algebra (LAPACK custom calls, mlxc.lowerings.lapack) against JAX.

On the CPU, jax.export turns jnp.linalg into `stablehlo.custom_call @lapack_*_ffi`
carrying Shardy `sdy.sharding_rule` attributes; both the text and the portable
artifact must compile, and agree with JAX (which runs LAPACK itself).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import LINALG_RTOL, assert_matches, export_program, random_array

RTOL = LINALG_RTOL


def _spd(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)


def _square(rng, shape, dtype):
    # Dominant diagonal: the comparison measures the lowering, not the conditioning.
    return (random_array(rng, shape, dtype) + shape[-1] * np.eye(shape[-1])).astype(dtype)


CASES = {
    "cholesky": (jnp.linalg.cholesky, lambda r, d: [_spd(r, (5, 5), d)]),
    "cholesky_batched": (jnp.linalg.cholesky, lambda r, d: [_spd(r, (2, 3, 4, 4), d)]),
    "cholesky_upper": (lambda a: jsl.cholesky(a, lower=False), lambda r, d: [_spd(r, (2, 5, 5), d)]),
    "cho_solve": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
                  lambda r, d: [_spd(r, (6, 6), d), random_array(r, (6, 2), d)]),
    "solve": (jnp.linalg.solve, lambda r, d: [random_array(r, (6, 6), d), random_array(r, (6, 3), d)]),
    "solve_batched": (jnp.linalg.solve, lambda r, d: [random_array(r, (3, 5, 5), d), random_array(r, (3, 5, 2), d)]),
    "inv": (jnp.linalg.inv, lambda r, d: [random_array(r, (7, 7), d)]),
    "det": (jnp.linalg.det, lambda r, d: [random_array(r, (3, 5, 5), d)]),
    "slogdet": (jnp.linalg.slogdet, lambda r, d: [random_array(r, (2, 6, 6), d)]),
    "solve_triangular": (lambda a, b: jsl.solve_triangular(a, b, lower=True),
                         lambda r, d: [_square(r, (5, 5), d), random_array(r, (5, 3), d)]),
    "solve_triangular_upper_trans_unit": (
        lambda a, b: jsl.solve_triangular(a, b, lower=False, trans=1, unit_diagonal=True),
        lambda r, d: [_square(r, (2, 5, 5), d), random_array(r, (2, 5, 3), d)]),
    "solve_triangular_right": (
        lambda a, b: lax.linalg.triangular_solve(a, b, left_side=False, lower=True, transpose_a=True),
        lambda r, d: [_square(r, (4, 4), d), random_array(r, (3, 4), d)]),
    "lu": (lax.linalg.lu, lambda r, d: [random_array(r, (6, 6), d)]),
    "lu_batched_tall": (lax.linalg.lu, lambda r, d: [random_array(r, (2, 3, 6, 4), d)]),
    "lu_wide": (lax.linalg.lu, lambda r, d: [random_array(r, (4, 6), d)]),
    "scipy_lu": (jsl.lu, lambda r, d: [random_array(r, (5, 5), d)]),
    "qr": (jnp.linalg.qr, lambda r, d: [random_array(r, (5, 5), d)]),
    "qr_batched_tall": (jnp.linalg.qr, lambda r, d: [random_array(r, (2, 6, 4), d)]),
    "qr_wide": (jnp.linalg.qr, lambda r, d: [random_array(r, (4, 6), d)]),
    "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), lambda r, d: [random_array(r, (6, 4), d)]),
    "qr_r": (lambda a: jnp.linalg.qr(a, mode="r"), lambda r, d: [random_array(r, (3, 7, 5), d)]),
    "lstsq_by_qr": (lambda a, b: jsl.solve_triangular(*(lambda q, r: (r, q.T @ b))(*jnp.linalg.qr(a))),
                    lambda r, d: [random_array(r, (8, 5), d), random_array(r, (8, 2), d)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("form", ["text", "artifact"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name, form, dtype):
    fn, make = CASES[name]
    args = make(np.random.default_rng(0), dtype)
    text, artifact, expected = export_program(fn, *args, x64=dtype == np.float64)
    assert "@lapack_" in text and "sdy.sharding_rule" in text  # what this file is about
    copies = [a.copy() for a in args]
    outputs = mlxc.compile(text if form == "text" else artifact)(*args)
    assert_matches(outputs, expected, RTOL[dtype])
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", ["cholesky_batched", "solve_batched", "inv", "slogdet", "lu",
                                  "solve_triangular_upper_trans_unit", "qr", "qr_batched_tall",
                                  "qr_wide", "qr_complete"])
def test_complex(name, dtype):
    fn, make = CASES[name]
    args = make(np.random.default_rng(1), dtype)
    text, artifact, expected = export_program(fn, *args, x64=dtype == np.complex128)
    assert "@lapack_" in text
    assert_matches(mlxc.compile(artifact)(*args), expected, RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=["f32", "f64", "c64", "c128"])
@pytest.mark.parametrize("form", ["text", "artifact"])
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 6, 6), (1, 1), (16, 16)], ids=str)
def test_eigh(shape, form, dtype):
    # Eigenvectors are unique up to sign only (LAPACK's and Jacobi's signs differ):
    # compare eigenvalues with JAX, and check the vectors by A V = V diag(w), V^T V = I.
    a = random_array(np.random.default_rng(3), shape, dtype)
    x64 = dtype in (np.float64, np.complex128)
    text, artifact, (w_jax, _) = export_program(jnp.linalg.eigh, a, x64=x64)
    assert "@lapack_" in text and ("syevd" in text or "heevd" in text)
    w, v = mlxc.compile(text if form == "text" else artifact)(a)
    assert w.dtype == w_jax.dtype and v.dtype == dtype and v.shape == shape
    eps = np.finfo(dtype).eps
    n = shape[-1]
    adjoint = lambda m: np.conj(np.swapaxes(m, -1, -2))  # noqa: E731
    sym = (a + adjoint(a)) / 2
    scale = max(np.abs(w_jax).max(), 1.0)
    assert np.abs(w - w_jax).max() <= 20 * n * eps * scale
    assert np.abs(sym @ v - v * w[..., None, :]).max() <= 20 * n * eps * scale
    assert np.abs(adjoint(v) @ v - np.eye(n)).max() <= 20 * n * eps
    assert (np.diff(w, axis=-1) >= 0).all()


def test_cholesky_not_positive_definite():
    # potrf's info is non-zero for the second matrix: JAX turns that factor into NaN.
    a = np.stack([np.eye(4), np.diag([1.0, 2.0, -1.0, 4.0])]).astype(np.float32)
    text, artifact, expected = export_program(jnp.linalg.cholesky, a)
    assert np.isnan(np.diagonal(expected[0][1])).all() and not np.isnan(expected[0][0]).any()
    assert_matches(mlxc.compile(artifact)(a), expected, 1e-6)


def test_lu_singular():
    # A zero pivot: getrf reports it in info but finishes the factorization, so the
    # pivots and the remaining rows still match LAPACK's.
    a = np.array([[0, 0, 1], [0, 0, 2], [1, 2, 3], [2, 4, 1]], np.float64)
    text, _, expected = export_program(lax.linalg.lu, a, x64=True)
    assert_matches(mlxc.compile(text)(a), expected, 1e-15)
    text, _, expected = export_program(jnp.linalg.det, a[1:], x64=True)
    assert_matches(mlxc.compile(text)(a[1:]), expected, 1e-15)


def test_lu_pivots_on_ties():
    # Equal magnitudes in the pivot column: LAPACK takes the first (i?amax).
    a = np.array([[1, 2, 0], [-3, 1, 1], [3, 0, 2]], np.float32)
    text, _, expected = export_program(lax.linalg.lu, a)
    outputs = mlxc.compile(text)(a)
    np.testing.assert_array_equal(outputs[1], expected[1])
    assert_matches(outputs, expected, 1e-6)


def test_sharded_text_program():
    # An explicit mesh adds `sdy.mesh` and `sdy.sharding` on arguments and results.
    mesh = jax.make_mesh((1,), ("x",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    fn = jax.jit(lambda a: jnp.linalg.inv(a) * 2, in_shardings=sharding, out_shardings=sharding)
    a = _square(np.random.default_rng(2), (4, 4), np.float32)
    text = jax.export.export(fn)(a).mlir_module()
    assert "sdy.mesh" in text and "sdy.sharding =" in text
    assert_matches(mlxc.compile(text)(a), (np.asarray(fn(a)),), 2e-5)
    # In the artifact the mesh is an op in Shardy's binary form: refused, saying why.
    with pytest.raises(mlxc.CompileError) as err:
        mlxc.compile(jax.export.export(fn)(a).mlir_module_serialized)
    assert "Shardy (sdy) ops, which mlxc reads only from text" in str(err.value), str(err.value)


def test_positions_survive_sharding_removal():
    # Removing the sharding rule must not move the text: an error further along the
    # same line still points at its own column.
    call = ("  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, "
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, j=3, k=3, l=3}, custom>}"
            " : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i33x>)")
    text = ("func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {\n" + call + "\n"
            "  return %0#0 : tensor<3x3xf32>\n}\n")
    with pytest.raises(mlxc.CompileError) as err:
        mlxc.compile(text)
    column = call.index("i33x>") + 1
    assert f"<string>:2:{column}" in str(err.value), str(err.value)


def test_unsupported_lapack_routine():
    d, b = np.ones(4, dtype=np.float32), np.ones((4, 1), dtype=np.float32)
    text, artifact, _ = export_program(lambda d, b: lax.linalg.tridiagonal_solve(d, d, d, b), d, b)
    target = "lapack_sgtsv_ffi"
    assert f"@{target}" in text
    for source in (text, artifact):
        with pytest.raises(mlxc.CompileError) as err:
            mlxc.compile(source)
        assert f"mlxc cannot lower custom_call @{target} (LAPACK routines mlxc lowers:" in str(err.value)
    # The text form names the line of the call.
    line = next(i for i, l in enumerate(text.splitlines(), 1) if f"@{target}" in l)
    with pytest.raises(mlxc.CompileError) as err:
        mlxc.compile(text)
    assert f"<string>:{line}:" in str(err.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=["f32", "f64", "c64", "c128"])
@pytest.mark.parametrize("full", [True, False], ids=["full", "reduced"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (12, 12), "rank1"], ids=str)
def test_svd(shape, full, dtype):
    # Singular vectors are unique up to sign (and to a basis where values repeat or
    # vanish): compare the values with JAX, and check U S V^T = A and orthonormality.
    if shape == "rank1":
        a = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(dtype)
    else:
        a = random_array(np.random.default_rng(6), shape, dtype)
    text, artifact, (u_jax, s_jax, vt_jax) = export_program(
        lambda a: jnp.linalg.svd(a, full_matrices=full), a, x64=dtype in (np.float64, np.complex128))
    assert "@lapack_" in text and "gesdd" in text
    u, s, vt = mlxc.compile(artifact)(a)
    assert (u.shape, s.shape, vt.shape) == (u_jax.shape, s_jax.shape, vt_jax.shape)
    assert (u.dtype, s.dtype, vt.dtype) == (u_jax.dtype, s_jax.dtype, vt_jax.dtype)
    eps, k = np.finfo(dtype).eps, min(a.shape[-2:])
    tol = 20 * max(a.shape[-2:]) * eps
    scale = max(np.abs(s_jax).max(), 1.0)
    assert np.abs(s - s_jax).max() <= tol * scale
    assert np.abs((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :] - a).max() <= tol * scale
    adjoint = lambda m: np.conj(np.swapaxes(m, -1, -2))  # noqa: E731
    assert np.abs(adjoint(u) @ u - np.eye(u.shape[-1])).max() <= tol
    assert np.abs(vt @ adjoint(vt) - np.eye(vt.shape[-2])).max() <= tol


def test_pinv_and_lstsq():
    rng = np.random.default_rng(7)
    a, b = random_array(rng, (7, 4), np.float64), random_array(rng, (7, 2), np.float64)
    for fn, args in ((jnp.linalg.pinv, (a,)), (lambda a, b: jnp.linalg.lstsq(a, b)[0], (a, b))):
        text, _, expected = export_program(fn, *args, x64=True)
        assert_matches(mlxc.compile(text)(*args), expected, 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (12, 12)], ids=str)
def test_singular_values(shape, dtype):
    a = random_array(np.random.default_rng(5), shape, dtype)
    fns = [lambda a: jnp.linalg.svd(a, compute_uv=False),
           lambda a: jnp.linalg.norm(a, ord=2, axis=(-2, -1)), jnp.linalg.matrix_rank]
    for fn in fns:
        text, artifact, expected = export_program(fn, a, x64=dtype == np.float64)
        assert "@lapack_" in text
        assert_matches(mlxc.compile(artifact)(a), expected, 5 * RTOL[dtype])
    rank_deficient = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(dtype)
    text, _, expected = export_program(jnp.linalg.matrix_rank, rank_deficient, x64=dtype == np.float64)
    assert_matches(mlxc.compile(text)(rank_deficient), expected, 0)


# Every ?trsm option (side, uplo, trans, diag) in one program per element type, against
# scipy.linalg.solve_triangular; A holds garbage outside its triangle (and on its
# diagonal when unit), which must not be read.
_TRSM = [(side, lower, trans, unit) for side in "LR" for lower in (True, False)
         for trans in (0, 1, 2) for unit in (False, True)]


def _trsm_all(a, b_left, b_right):
    out = []
    for side, lower, trans, unit in _TRSM:
        b = b_left if side == "L" else b_right
        out.append(lax.linalg.triangular_solve(
            a, b, left_side=side == "L", lower=lower, transpose_a=trans > 0,
            conjugate_a=trans == 2, unit_diagonal=unit))
    return tuple(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64], ids=["f32", "f64", "c64"])
def test_trsm_every_option_against_scipy(dtype):
    import scipy.linalg as sl
    rng = np.random.default_rng(7)
    a = _square(rng, (5, 5), dtype)
    b_left, b_right = random_array(rng, (5, 3), dtype), random_array(rng, (2, 5), dtype)
    text, _, _ = export_program(_trsm_all, a, b_left, b_right, x64=dtype == np.float64)
    assert text.count("@lapack_") == len(_TRSM) and "side = 82" in text  # 'R'
    assert ("trans_x = 67" in text) == np.iscomplexobj(a)                 # 'C'

    got = mlxc.compile(text)(a, b_left, b_right)
    for (side, lower, trans, unit), x in zip(_TRSM, got):
        if side == "L":    # op(A) X = B
            want = sl.solve_triangular(a, b_left, trans=trans, lower=lower, unit_diagonal=unit)
        else:              # X op(A) = B  <=>  op(A)^T X^T = B^T
            t = {0: 1, 1: 0, 2: 0}[trans]
            aa = np.conj(a) if trans == 2 else a
            want = sl.solve_triangular(aa, b_right.T, trans=t, lower=lower,
                                       unit_diagonal=unit).T
        assert_matches(x, (want.astype(dtype),), RTOL[dtype])


# jax.grad of a Cholesky: its two ?trsm calls (side L trans T, side R trans N) get the
# cotangent of `L @ v`, an outer product that fuses into the product after it
# (mlxc-inits-as-inputs: the fused outer product added to its zero-filled
# destination once per pass of the product's loops; off by 3.0 on 4x4).
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_cholesky_gradient(dtype):
    rng = np.random.default_rng(0)
    m, v = random_array(rng, (4, 4), dtype), random_array(rng, (4,), dtype)

    def loss(m, v):
        return jnp.sum(jnp.linalg.cholesky(m @ m.T + 4 * jnp.eye(4, dtype=m.dtype)) @ v)

    grads = jax.grad(loss, argnums=(0, 1))
    text, artifact, expected = export_program(grads, m, v, x64=dtype == np.float64)
    assert text.count("lapack_") >= 3
    assert_matches(mlxc.compile(artifact)(m, v), expected, 10 * RTOL[dtype])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_solve_gradient_reuses_no_factor_buffer(n):
    # The gradient solves with the LU factor four times; cse had merged the calls'
    # read-only views of it into one, made before a constant was written in place over
    # the factor's buffer, so the last two solves read the constant (fuzz case
    # linalg/11444: 1.0147 for 0.4697 on a 1x1 matrix).
    def loss(m, r):
        a = m @ m.T + n * jnp.eye(n, dtype=m.dtype)
        y = jnp.linalg.solve(a, r)
        return jnp.sum(y * jnp.cos(jnp.arange(y.size, dtype=y.dtype)).reshape(y.shape))

    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n)).astype(np.float32)
    r = rng.standard_normal((n, 1)).astype(np.float32)
    if n == 1:
        m, r = np.array([[1.0771581]], np.float32), np.array([[-1.0174735]], np.float32)
    grad = jax.grad(loss)
    exe = mlxc.compile(jax.export.export(jax.jit(grad))(m, r).mlir_module())
    np.testing.assert_allclose(exe(m, r), grad(m, r), rtol=1e-4, atol=1e-6)
