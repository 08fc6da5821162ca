"""stablehlo.batch_norm_* (mlxc.lowerings.batch_norm) against numpy (the StableHLO
interpreter aborts on these ops) and, for the gradient, against JAX's derivative of
batch normalization."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlxc


def _t(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _program(kind: str, shape, feature: int, elem: str, epsilon: float = 1e-3) -> str:
    x, v = _t(shape, elem), _t([shape[feature]], elem)
    attrs = f"{{epsilon = {epsilon} : f32, feature_index = {feature} : i64}}"
    if kind == "inference":
        return f"""func.func @main(%x: {x}, %s: {v}, %o: {v}, %m: {v}, %var: {v}) -> {x} {{
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %var) {attrs} : ({x}, {v}, {v}, {v}, {v}) -> {x}
  return %0 : {x}
}}"""
    if kind == "training":
        return f"""func.func @main(%x: {x}, %s: {v}, %o: {v}) -> ({x}, {v}, {v}) {{
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {attrs} : ({x}, {v}, {v}) -> ({x}, {v}, {v})
  return %0#0, %0#1, %0#2 : {x}, {v}, {v}
}}"""
    return f"""func.func @main(%x: {x}, %s: {v}, %m: {v}, %var: {v}, %dy: {x}) -> ({x}, {v}, {v}) {{
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %var, %dy) {attrs} : ({x}, {v}, {v}, {v}, {x}) -> ({x}, {v}, {v})
  return %0#0, %0#1, %0#2 : {x}, {v}, {v}
}}"""


def _inputs(kind, shape, feature, rng, dtype=np.float32):
    c = shape[feature]
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    vec = lambda: rng.standard_normal(c).astype(dtype)  # noqa: E731
    var = (rng.random(c) + 0.5).astype(dtype)
    if kind == "inference":
        return [x, vec(), vec(), vec(), var]
    if kind == "training":
        return [x, vec(), vec()]
    return [x, vec(), vec(), var, rng.standard_normal(shape).astype(dtype)]


def _reference(kind, inputs, feature, epsilon=1e-3):
    # The spec's definitions, in f64.
    wide = [a.astype(np.float64) for a in inputs]
    x = wide[0]
    axes = tuple(d for d in range(x.ndim) if d != feature)

    def full(v):
        return np.expand_dims(v, axes)

    if kind == "inference":
        _, scale, offset, mean, var = wide
        return [(x - full(mean)) / np.sqrt(full(var) + epsilon) * full(scale) + full(offset)]
    if kind == "training":
        _, scale, offset = wide
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        y = (x - full(mean)) / np.sqrt(full(var) + epsilon) * full(scale) + full(offset)
        return [y, mean, var]
    _, scale, mean, var, dy = wide
    n = x.size // x.shape[feature]
    centered, stddev = x - full(mean), np.sqrt(full(var) + epsilon)
    grad_offset = dy.sum(axis=axes)
    grad_scale = (dy * centered / stddev).sum(axis=axes)
    inner = n * dy - full(grad_offset) - centered * full((dy * centered).sum(axis=axes)) / (
        full(var) + epsilon)
    return [full(scale) / stddev / n * inner, grad_scale, grad_offset]


@pytest.mark.parametrize("kind", ["inference", "training", "grad"])
@pytest.mark.parametrize("shape,feature", [((4, 3), 1), ((2, 5, 3, 4), 1), ((6, 2, 2), 2), ((7,), 0)])
def test_matches_numpy(kind, shape, feature):
    rng = np.random.default_rng(0)
    text = _program(kind, shape, feature, "f32")
    inputs = _inputs(kind, shape, feature, rng)
    expected = _reference(kind, inputs, feature)
    saved = [a.copy() for a in inputs]
    got = mlxc.compile(text)(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == np.float32 and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    for a, b in zip(inputs, saved):
        np.testing.assert_array_equal(a, b)


def test_grad_is_the_derivative_of_training():
    # batch_norm_grad with the batch's own mean and variance is the vector-Jacobian
    # product of batch normalization in training mode.
    rng = np.random.default_rng(1)
    shape, feature, eps = (8, 3, 5), 1, 1e-3
    x, scale, offset = _inputs("training", shape, feature, rng)
    dy = rng.standard_normal(shape).astype(np.float32)

    def bn(x, scale, offset):
        axes = (0, 2)
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=axes, keepdims=True)
        return (x - mean) / jnp.sqrt(var + eps) * scale[None, :, None] + offset[None, :, None]

    _, vjp = jax.vjp(bn, x, scale, offset)
    dx, dscale, doffset = vjp(dy)
    mean = x.mean(axis=(0, 2))
    var = ((x - mean[None, :, None]) ** 2).mean(axis=(0, 2))
    got = mlxc.compile(_program("grad", shape, feature, "f32", eps))(
        x, scale, mean.astype(np.float32), var.astype(np.float32), dy)
    for g, e in zip(got, (dx, dscale, doffset)):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype,elem", [(ml_dtypes.bfloat16, "bf16"), (np.float16, "f16")])
def test_low_precision_is_computed_in_f32(dtype, elem):
    rng = np.random.default_rng(2)
    shape, feature = (64, 4), 1
    inputs = _inputs("training", shape, feature, rng, dtype)
    y, mean, var = mlxc.compile(_program("training", shape, feature, elem))(*inputs)
    assert y.dtype == np.dtype(dtype)
    wide = [a.astype(np.float32) for a in inputs]
    y32, mean32, var32 = mlxc.compile(_program("training", shape, feature, "f32"))(*wide)
    # One rounding of the f32 result, nothing more.
    np.testing.assert_array_equal(mean, mean32.astype(dtype))
    np.testing.assert_array_equal(var, var32.astype(dtype))
    np.testing.assert_array_equal(y, y32.astype(dtype))


def test_empty_batch():
    # No elements per feature: the statistics are zero (a sum over nothing).
    text = _program("training", (0, 3), 1, "f32")
    y, mean, var = mlxc.compile(text)(np.zeros((0, 3), np.float32), np.ones(3, np.float32),
                                      np.ones(3, np.float32))
    assert y.shape == (0, 3)
    np.testing.assert_array_equal(mean, np.zeros(3, np.float32))
    np.testing.assert_array_equal(var, np.zeros(3, np.float32))
