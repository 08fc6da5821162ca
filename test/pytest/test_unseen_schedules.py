"""CPU schedules on the op kinds that bench/unseen.py found without one: 1-D
convolutions (their own register tile), integer matmuls (the f32 contraction tile),
and large contractions with no schedule at all (tiled to single elements rather than
vectorized whole: an int8 matmul used to become one vector of millions of elements,
and the compile never finished). Numbers against JAX or
exact integer results from numpy, with the schedules on and off."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc


def _run(fn, *args, schedules_on=True):
    text = jax.export.export(jax.jit(fn))(*args).mlir_module()
    with mlxc.settings.override(cpu_schedules=schedules_on, cache=False):
        return mlxc.compile(text)(*args)


def _check_close(fn, *args, rtol=1e-5):
    want = np.asarray(jax.jit(fn)(*args), np.float64)
    for on in (True, False):
        got = _run(fn, *args, schedules_on=on)
        assert got.shape == want.shape
        err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
        assert err <= rtol, f"schedules={'on' if on else 'off'}: error {err:.2e}"


def _conv1d(x, w, stride=1, padding="SAME", dilation=1):
    return lax.conv_general_dilated(x, w, (stride,), padding, rhs_dilation=(dilation,),
                                    dimension_numbers=("NWC", "WIO", "NWC"))


@pytest.mark.parametrize("n,w,c,kw,f,stride,dilation", [
    (8, 256, 64, 5, 64, 1, 1),    # the bench program: full 8 x 32 register tiles
    (3, 37, 13, 3, 29, 1, 1),     # no dimension divides the register tile
    (2, 64, 16, 4, 48, 2, 1),     # strided
    (2, 50, 8, 3, 8, 1, 2),       # dilated
    (1, 7, 1, 7, 1, 1, 1),        # one channel, filter as wide as the input
])
def test_conv1d_matches_jax(n, w, c, kw, f, stride, dilation):
    rng = np.random.default_rng(n * 100 + w)
    x = rng.standard_normal((n, w, c)).astype(np.float32)
    k = rng.standard_normal((kw, c, f)).astype(np.float32)
    _check_close(lambda x, k: jax.nn.relu(_conv1d(x, k, stride, "SAME", dilation)), x, k)


def _int8_matmul(a, b):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)


@pytest.mark.parametrize("m,k,n", [(128, 256, 256), (37, 53, 29), (8, 8, 8), (1, 300, 70)])
def test_int8_matmul_exact(m, k, n):
    rng = np.random.default_rng(m + k + n)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    want = a.astype(np.int32) @ b.astype(np.int32)
    for on in (True, False):
        got = _run(_int8_matmul, a, b, schedules_on=on)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def test_int32_batched_matmul_exact():
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, (4, 40, 72)).astype(np.int32)
    b = rng.integers(-1000, 1000, (4, 72, 24)).astype(np.int32)
    got = _run(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), a, b)
    np.testing.assert_array_equal(got, np.einsum("bij,bjk->bik", a.astype(np.int64),
                                                 b.astype(np.int64)).astype(np.int32))


def test_integer_convolution_without_a_schedule_is_exact():
    # An int32 2-D convolution has no schedule of its own: a loop nest (the vectorizer
    # leaves 2-D convolutions alone).
    rng = np.random.default_rng(6)
    x = rng.integers(-50, 50, (8, 16, 16, 16)).astype(np.int32)
    w = rng.integers(-50, 50, (3, 3, 16, 16)).astype(np.int32)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    want = np.asarray(conv(x, w))
    np.testing.assert_array_equal(_run(conv, x, w), want)


def test_int64_matmul_without_a_schedule_is_exact():
    # No register tile for int64: tiled to single elements, not one vector of the whole
    # 128x256x256 iteration space (whose compile never finished).
    text = """
    func.func @main(%a: tensor<128x256xi64>, %b: tensor<256x256xi64>) -> tensor<128x256xi64> {
      %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
        : (tensor<128x256xi64>, tensor<256x256xi64>) -> tensor<128x256xi64>
      return %0 : tensor<128x256xi64>
    }"""
    rng = np.random.default_rng(8)
    a = rng.integers(-10**6, 10**6, (128, 256))
    b = rng.integers(-10**6, 10**6, (256, 256))
    with mlxc.settings.override(cache=False):
        got = mlxc.compile(text)(a, b)
    np.testing.assert_array_equal(got, a @ b)


def test_large_reversed_generic_without_a_schedule():
    # A reversal's map (d0, 255 - d1): numbers right, the caller's array untouched.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    keep = x.copy()
    got = _run(lambda x: jnp.flip(x, 1) * 2.0 + x, x)
    np.testing.assert_array_equal(got, np.flip(keep, 1) * np.float32(2) + keep)
    np.testing.assert_array_equal(x, keep)
