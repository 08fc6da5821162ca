"""stablehlo.sort (jnp.sort, argsort, lax.sort, top_k, median, quantile) against JAX."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program


def _check(fn, *args, x64=False):
    text, artifact, expected = export_program(fn, *args, x64=x64)
    exe = mlxc.compile(artifact)
    copies = [np.array(a, copy=True) for a in args]
    outputs = exe(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    # Sorting only moves values: every result must be bit-exact, NaN signs included.
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    for a, c in zip(args, copies):  # the caller's arrays are never written
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), c.view(np.uint8))
    return exe


def _special_floats(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0], dtype)
    where = rng.choice(flat.size, size=min(flat.size, 3 * len(specials)), replace=False)
    flat[where] = np.resize(specials, len(where))
    return x


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_sort_each_axis_with_nans(axis):
    # JAX's total order: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN.
    _check(lambda x: jnp.sort(x, axis=axis), _special_floats((4, 7, 5)))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_argsort_each_axis_is_stable(axis):
    x = np.random.default_rng(1).integers(0, 3, size=(6, 5, 9)).astype(np.float32)
    _check(lambda x: jnp.argsort(x, axis=axis, stable=True), x)


def test_descending():
    x = _special_floats((5, 33))
    _check(lambda x: (jnp.sort(x, descending=True), jnp.argsort(x, descending=True)), x)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.uint8,
                                   np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_])
def test_sort_dtypes(dtype):
    rng = np.random.default_rng(2)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, size=(3, 40), dtype=dt, endpoint=True)
    elif dt.kind == "b":
        x = rng.integers(0, 2, size=(3, 40)).astype(bool)
    else:
        x = _special_floats((3, 40), dt)
    _check(lambda x: (jnp.sort(x, axis=1), jnp.argsort(x, axis=0)), x, x64=dt.itemsize == 8)


def test_sort_several_arrays_one_key():
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 4, size=(2, 50)).astype(np.uint32)
    a = rng.standard_normal((2, 50)).astype(np.float32)
    b = rng.integers(-100, 100, size=(2, 50)).astype(np.int8)
    c = rng.integers(0, 2, size=(2, 50)).astype(bool)
    _check(lambda k, a, b, c: lax.sort((k, a, b, c), dimension=1, num_keys=1), keys, a, b, c)


def test_sort_two_keys():
    rng = np.random.default_rng(4)
    k1 = rng.integers(0, 3, size=60).astype(np.int32)
    k2 = rng.standard_normal(60).astype(np.float32).round(0)
    v = np.arange(60, dtype=np.int32)
    _check(lambda a, b, v: lax.sort((a, b, v), num_keys=2), k1, k2, v)


@pytest.mark.parametrize("n", [1, 2, 3, 37, 1000])
def test_row_lengths(n):
    x = np.random.default_rng(n).standard_normal((3, n)).astype(np.float32)
    _check(lambda x: (jnp.sort(x), jnp.argsort(x)), x)


def test_zero_size():
    _check(lambda x: jnp.sort(x, axis=0), np.zeros((0, 4), np.float32))
    _check(lambda x: jnp.sort(x, axis=1), np.zeros((3, 0), np.float32))


def test_top_k():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 5, size=(4, 30)).astype(np.float32)  # ties: lower index first
    _check(lambda x: lax.top_k(x, 7), x)
    _check(lambda x: lax.top_k(x, 1), _special_floats((2, 9)))


def test_median_and_quantile():
    x = np.random.default_rng(6).standard_normal((9, 8)).astype(np.float32)
    text, artifact, expected = export_program(
        lambda x: (jnp.median(x, axis=0), jnp.quantile(x, jnp.array([0.1, 0.5, 0.9]), axis=1)), x)
    assert_matches(mlxc.compile(artifact)(x), expected, 1e-6)


CUSTOM_COMPARATOR = """
func.func @main(%a: tensor<2x3xi64>, %b: tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %r:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%x0: tensor<i64>, %y0: tensor<i64>, %x1: tensor<i64>, %y1: tensor<i64>):
    %p = stablehlo.compare GT, %x0, %y0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>)
  return %r#0, %r#1 : tensor<2x3xi64>, tensor<2x3xi64>
}
"""


def test_comparator_over_the_first_operand_only():
    # The StableHLO interpreter's sort_stable case: descending on the first operand,
    # ties keep their order.
    exe = mlxc.compile(CUSTOM_COMPARATOR)
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int64)
    b = np.array([[3, 2, 1], [1, 2, 3]], np.int64)
    r0, r1 = exe(a, b)
    np.testing.assert_array_equal(r0, [[3, 2, 3], [1, 2, 1]])
    np.testing.assert_array_equal(r1, [[1, 2, 1], [3, 2, 3]])
