"""The StableHLO layout rewrites (convolutions to NHWC, blocked transposes, dot_general
operand layouts) against JAX, on the layouts and windows they rewrite or leave alone."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program


def _check(fn, *args, rtol=2e-6):
    text, _, want = export_program(fn, *args)
    assert_matches(mlxc.compile(text)(*args), want, rtol)


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _simplified(fn, *args) -> str:
    text, _, _ = export_program(fn, *args)
    return str(mlxc.lower(text, stop_after="simplify"))


CONVS = {
    # name: (input shape, kernel shape, dimension numbers, keyword arguments)
    "nchw_same": ((2, 5, 11, 13), (7, 5, 3, 3), ("NCHW", "OIHW", "NCHW"),
                  dict(window_strides=(1, 1), padding="SAME")),
    "nchw_strided": ((2, 5, 11, 13), (7, 5, 3, 3), ("NCHW", "OIHW", "NCHW"),
                     dict(window_strides=(2, 3), padding="VALID")),
    "nchw_dilated": ((1, 4, 12, 10), (6, 4, 3, 2), ("NCHW", "OIHW", "NCHW"),
                     dict(window_strides=(1, 1), padding=((2, 1), (0, 3)), rhs_dilation=(2, 3))),
    "nchw_lhs_dilated": ((1, 3, 6, 5), (4, 3, 3, 3), ("NCHW", "OIHW", "NCHW"),
                         dict(window_strides=(1, 1), padding=((1, 1), (2, 0)), lhs_dilation=(2, 1))),
    "nchw_grouped": ((2, 6, 9, 9), (8, 3, 3, 3), ("NCHW", "OIHW", "NCHW"),
                     dict(window_strides=(1, 1), padding="SAME", feature_group_count=2)),
    "nchw_to_nhwc": ((2, 5, 8, 9), (3, 3, 5, 4), ("NCHW", "HWIO", "NHWC"),
                     dict(window_strides=(1, 1), padding="SAME")),
    "chwn_ihwo": ((3, 7, 6, 2), (3, 2, 2, 5), ("CHWN", "IHWO", "NCHW"),
                  dict(window_strides=(1, 2), padding="VALID")),
    "ncw_1d": ((2, 4, 17), (6, 4, 3), ("NCH", "OIH", "NCH"),
               dict(window_strides=(2,), padding="SAME")),
    "nhwc": ((2, 11, 13, 5), (3, 3, 5, 7), ("NHWC", "HWIO", "NHWC"),
             dict(window_strides=(1, 1), padding="SAME")),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution_layouts(name):
    xs, ws, dn, kw = CONVS[name]
    rng = np.random.default_rng(len(name))
    _check(lambda x, w: lax.conv_general_dilated(x, w, dimension_numbers=dn, **kw),
           _f(rng, *xs), _f(rng, *ws))


def test_nchw_convolution_becomes_nhwc():
    rng = np.random.default_rng(0)
    ir_text = _simplified(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
        _f(rng, 2, 5, 11, 13), _f(rng, 7, 5, 3, 3))
    assert "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" in ir_text
    assert "[b, f, 0, 1]" not in ir_text


def test_nchw_convolution_chain_and_gradient():
    # Two NCHW convolutions in a row (the transposes between them cancel) and the
    # gradient, whose convolutions have swapped feature and batch dimensions.
    rng = np.random.default_rng(1)
    dn = ("NCHW", "OIHW", "NCHW")

    def net(x, w1, w2):
        y = jax.nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn))
        return lax.conv_general_dilated(y, w2, (1, 1), "SAME", dimension_numbers=dn)

    x, w1, w2 = _f(rng, 2, 4, 10, 10), _f(rng, 6, 4, 3, 3), _f(rng, 5, 6, 3, 3)
    _check(net, x, w1, w2)
    _check(jax.grad(lambda x, w1, w2: net(x, w1, w2).sum(), argnums=(0, 1, 2)), x, w1, w2,
           rtol=1e-5)


@pytest.mark.parametrize("shape,perm", [
    ((512, 256), (1, 0)), ((64, 36), (1, 0)), ((8, 32, 32, 32), (0, 3, 1, 2)),
    ((4, 24, 5, 40), (3, 0, 2, 1)), ((3, 2, 16, 64), (0, 1, 3, 2)), ((64, 10), (1, 0)),
    ((2, 16, 32, 32), (0, 2, 3, 1)),
])
def test_transposes(shape, perm):
    rng = np.random.default_rng(len(shape))
    _check(lambda x: jnp.transpose(x, perm) * 2.0, _f(rng, *shape))
    for dtype in (np.int32, np.int8, np.float64):
        x = rng.integers(-100, 100, size=shape).astype(dtype)
        with jax.enable_x64(True):
            text, _, want = export_program(lambda x: jnp.transpose(x, perm), x, x64=True)
        assert_matches(mlxc.compile(text)(x), want, 0)


def test_transpose_is_blocked():
    with jax.enable_x64(True):
        text, _, _ = export_program(lambda x: x.T, np.zeros((512, 256), np.float64), x64=True)
    assert "tensor<512x256xf64> into tensor<512x32x8xf64>" in mlxc.lower(text, stop_after="fuse")


EINSUMS = ["bqd,bkd->bqk", "bqd,bdk->bqk", "mk,nk->mn", "km,kn->mn", "km,nk->mn", "km,kn->nm",
           "kbm,bnk->bmn", "bmk,kn->bmn", "abk,bkc->bac", "mk,k->m", "ijk,ikl->jl"]


@pytest.mark.parametrize("spec", EINSUMS)
def test_dot_general_layouts(spec):
    # Sizes large enough for the layout rewrite (a copy at most 1/64 of the product),
    # and different per dimension so that a mixed-up dimension fails.
    sizes = dict(b=3, q=72, k=80, d=64, m=96, n=88, a=2, c=70, i=2, j=66, l=68)
    rng = np.random.default_rng(len(spec))
    lhs, rhs = spec.split("->")[0].split(",")
    x, y = _f(rng, *[sizes[c] for c in lhs]), _f(rng, *[sizes[c] for c in rhs])
    _check(lambda x, y: jnp.einsum(spec, x, y), x, y, rtol=1e-5)


def test_attention_contracts_a_transposed_copy():
    # Generated code reads rows of the right-hand side: k is transposed first. The
    # runtime's product kernel reads it in place, so with it no copy is made.
    rng = np.random.default_rng(5)
    q, k = _f(rng, 4, 128, 64), _f(rng, 4, 128, 64)
    scores = lambda q, k: jnp.einsum("bqd,bkd->bqk", q, k)  # noqa: E731
    with mlxc.settings.override(library_calls=False):
        ir_text = _simplified(scores, q, k)
    assert "batching_dims = [0] x [0], contracting_dims = [2] x [1]" in ir_text
    assert "(tensor<4x128x64xf32>) -> tensor<4x64x128xf32>" in ir_text
    ir_text = _simplified(scores, q, k)
    assert "batching_dims = [0] x [0], contracting_dims = [2] x [2]" in ir_text
    assert "stablehlo.transpose" not in ir_text
    _check(scores, q, k, rtol=1e-5)


def test_gradients_of_transposed_products():
    # jax.grad of x @ w writes (x.T @ g).T; of x @ w.T, g @ w; with f64 and bf16 too.
    rng = np.random.default_rng(6)
    x, w, v = _f(rng, 128, 256), _f(rng, 256, 96), _f(rng, 96, 256)

    def loss(x, w, v):
        return jnp.sum(jnp.tanh(x @ w) @ v * x)

    _check(jax.grad(loss, argnums=(0, 1, 2)), x, w, v, rtol=1e-5)
    with jax.enable_x64(True):
        wide = [a.astype(np.float64) for a in (x, w, v)]
        text, _, want = export_program(jax.grad(loss, argnums=(0, 1, 2)), *wide, x64=True)
        assert_matches(mlxc.compile(text)(*wide), want, 1e-12)
    low = [a.astype(jnp.bfloat16) for a in (x, w, v)]
    text, _, want = export_program(lambda x, w: jnp.einsum("km,kn->nm", x, w), low[0], low[0])
    got = mlxc.compile(text)(low[0], low[0])
    exact = np.einsum("km,kn->nm", low[0].astype(np.float64), low[0].astype(np.float64))
    assert np.linalg.norm(got.astype(np.float64) - exact) / np.linalg.norm(exact) < 1e-2
    assert_matches(got, want, 1e-2)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(7)
    q, k = _f(rng, 2, 96, 64), _f(rng, 2, 96, 64)
    x, w = _f(rng, 2, 4, 20, 20), _f(rng, 8, 4, 3, 3)
    saved = [a.copy() for a in (q, k, x, w)]
    exe = mlxc.compile(export_program(lambda q, k, x, w: (
        jnp.einsum("bqd,bkd->bqk", q, k), lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")).T),
        q, k, x, w)[0])
    exe(q, k, x, w)
    for a, b in zip((q, k, x, w), saved):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("axis", [0, 1])
def test_gathers(axis):
    # Embedding lookups (fused with the mean over the looked-up rows), with indices out
    # of range (clamped, as XLA does) and negative (from the end, as jnp.take does).
    rng = np.random.default_rng(8 + axis)
    table = _f(rng, 300, 96) if axis == 0 else _f(rng, 40, 300)
    ids = rng.integers(-300, 340, size=(24, 5)).astype(np.int32)
    _check(lambda t, i: jnp.take(t, i, axis=axis, mode="clip").mean(1 + axis), table, ids)
    _check(lambda t, i: jnp.take(t, i, axis=axis, mode="fill", fill_value=-1.0), table, ids)
    ints = rng.integers(-9, 9, size=table.shape).astype(np.int8)
    _check(lambda t, i: jnp.take(t, i, axis=axis, mode="clip"), ints, ids)
    _check(lambda t, i: jnp.take(t, i, axis=axis, mode="clip").max(1 + axis), table, ids)
    _check(lambda t, i: jnp.take(t, i, axis=axis, mode="clip").sum(1 + axis), ints, ids)
    cube = _f(rng, 50, 6, 40)
    _check(lambda t, i: jnp.take(t, i % 50, axis=0).sum((1, 2)), cube, ids)


def test_row_gather_is_vectorized():
    rng = np.random.default_rng(10)
    text, _, _ = export_program(lambda t, i: jnp.take(t, i, axis=0).mean(1),
                                _f(rng, 1000, 128), rng.integers(0, 1000, (64, 8)).astype(np.int32))
    fused = mlxc.lower(text, stop_after="fuse")
    # rows read whole (mlxc-gather-loop-order), not one gathered element per lane
    assert "vector.gather" not in fused
    assert re.search(r"vector.transfer_read %arg0\[.*tensor<1000x128xf32>, vector<\d+xf32>", fused)


# x^T @ dy (a dense layer's weight gradient) in several sizes: tile-aligned, ragged, and
# the matmul's own cache tile; then a program where the transpose has a second user.
@pytest.mark.parametrize("m,k,n", [(256, 128, 512), (37, 19, 45), (64, 300, 33), (8, 1, 16)])
def test_transposed_left_operand_matches_jax_without_a_copy(m, k, n):
    rng = np.random.default_rng(m + k + n)
    x, dy = _f(rng, k, m), _f(rng, k, n)
    text, _, want = export_program(lambda a, b: a.T @ b, x, dy)
    exe = mlxc.compile(text)
    assert_matches(exe(x, dy), want, 2e-5)
    # No temporary: x is read in place (a transposed copy would be k*m*4 bytes).
    assert exe.memory_stats()["temp_bytes"] == 0


def test_transposed_left_operand_shared_with_another_result():
    rng = np.random.default_rng(7)
    x, dy = _f(rng, 32, 48), _f(rng, 32, 40)
    _check(lambda a, b: (a.T @ b, a.T * 2.0), x, dy, rtol=2e-5)


def test_weight_gradient_f64_matches_jax():
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal((50, 20)), rng.standard_normal((50, 30))
    text, _, want = export_program(lambda a, b: a.T @ b, x, dy, x64=True)
    assert_matches(mlxc.compile(text)(x, dy), want, 1e-12)
