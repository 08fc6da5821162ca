"""lax.top_k with small k (mlxc-small-top-k + lowerings/top_k.py) against JAX, bit for bit.

Both forms JAX produces reach the selection: `chlo.top_k` (jit(...).lower().as_text())
and `stablehlo.composite "chlo.top_k"` (jax.export). Ties, NaNs of both signs, -0.0
against 0.0 and infinities must come out in JAX's order: values in total order,
descending, equal values by increasing index.
"""

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import export_program


def _check(k, x, *, x64=False, selection=True):
    fn = lambda x: lax.top_k(x, k)  # noqa: E731
    text, artifact, expected = export_program(fn, x, x64=x64)
    with jax.enable_x64(x64):
        jit_text = jax.jit(fn).lower(x).as_text()
    assert ("chlo.top_k" in jit_text) and ('composite "chlo.top_k"' in text)
    for source in (jit_text, artifact):
        imported = mlxc.lower(source, stop_after="import")
        # The selection, not a sort, where k is small; the sort elsewhere.
        assert ("@mlxc.top_k" in imported) == selection
        assert ("stablehlo.sort" in imported) == (not selection)
        copy = np.array(x, copy=True)
        got = mlxc.compile(source)(x)
        assert len(got) == 2
        for g, w in zip(got, expected):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
        np.testing.assert_array_equal(x.view(np.uint8), copy.view(np.uint8))


def _ties(shape, dtype=np.float32, seed=0):
    # Few distinct values: most elements tie with the k-th best.
    return np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)


def _specials(shape, dtype=np.float32, seed=0):
    x = _ties(shape, dtype, seed)
    flat = x.reshape(-1)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.0, -0.0], dtype)
    where = np.random.default_rng(seed + 1).choice(flat.size, size=flat.size // 3, replace=False)
    flat[where] = np.resize(specials, len(where))
    return x


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_ties(k):
    _check(k, _ties((7, 64)))


@pytest.mark.parametrize("k", [1, 3, 8])
def test_nans_infinities_and_signed_zeros(k):
    _check(k, _specials((9, 40), seed=k))


def test_all_negative_zero_but_one():
    x = np.full((3, 20), -0.0, np.float32)
    x[1, 13] = 0.0
    x[2, 19] = -np.nan
    _check(4, x)


@pytest.mark.parametrize("shape", [(50,), (2, 3, 24), (1, 1, 4)])
def test_batch_dimensions(shape):
    _check(1 if shape[-1] == 4 else 6, _specials(shape, seed=len(shape)))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision(dtype):
    _check(5, _specials((6, 30), dtype))


def test_f64_and_i64():
    _check(4, _specials((5, 33), np.float64), x64=True)
    x = _ties((5, 33), np.int64) * (2**40)
    x[0, :3] = np.iinfo(np.int64).min
    x[1, 7] = np.iinfo(np.int64).max
    _check(4, x, x64=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_signed_integers(dtype):
    x = _ties((4, 50), dtype)
    x[0, :] = np.iinfo(dtype).min
    x[1, 49] = np.iinfo(dtype).max
    _check(3, x)


@pytest.mark.parametrize("k,n", [(10, 10), (17, 100), (5, 12)])
def test_large_k_keeps_the_sort(k, n):
    # k == n, k > 16 and n < 4k: the decomposition's sort, still JAX's answer.
    _check(k, _specials((3, n)), selection=False)


def test_unsigned_keeps_the_sort():
    _check(3, _ties((4, 40), np.int32).astype(np.uint8), selection=False)


def test_malformed_call_is_an_error():
    text = """func.func @main(%x: tensor<4x10xf32>) -> (tensor<4x12xf32>, tensor<4x12xi32>) {
  %0:2 = stablehlo.custom_call @mlxc.top_k(%x) : (tensor<4x10xf32>) -> (tensor<4x12xf32>, tensor<4x12xi32>)
  return %0#0, %0#1 : tensor<4x12xf32>, tensor<4x12xi32>
}
"""
    with pytest.raises(mlxc.CompileError, match=r":2:\d+: error: custom_call @mlxc.top_k takes one"):
        mlxc.compile(text)
