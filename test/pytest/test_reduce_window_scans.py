"""Prefix scans (jnp.cumsum, cumprod, cummax, cummin; forward and reverse; any axis)
compiled through mlxc-reduce-window-scans, against JAX: lengths that are and are not
powers of two, one-element scans, integers (exact), and a moving-window sum that is
not a scan (left to the pooling lowering)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc


def _run(fn, *args):
    text = jax.export.export(jax.jit(fn))(*args).mlir_module()
    with mlxc.settings.override(cache=False):
        return mlxc.compile(text)(*args)


SCANS = {
    "cumsum": lambda x, axis, reverse: lax.cumsum(x, axis, reverse),
    "cumprod": lambda x, axis, reverse: lax.cumprod(x, axis, reverse),
    "cummax": lambda x, axis, reverse: lax.cummax(x, axis, reverse),
    "cummin": lambda x, axis, reverse: lax.cummin(x, axis, reverse),
}


@pytest.mark.parametrize("name", sorted(SCANS))
@pytest.mark.parametrize("shape,axis,reverse", [((256, 1024), 1, False), ((37, 1000), 1, True),
                                                ((7, 5, 3), 0, False), ((6, 129), 1, False),
                                                ((4, 2), 1, True), ((3, 1), 1, False)])
def test_float_scans_match_jax(name, shape, axis, reverse):
    rng = np.random.default_rng(sum(shape) + axis)
    # Products of values near 1 stay finite over a 1024-long row.
    x = (1 + 0.01 * rng.standard_normal(shape) if name == "cumprod"
         else rng.standard_normal(shape)).astype(np.float32)
    keep = x.copy()
    fn = lambda x: SCANS[name](x, axis, reverse)  # noqa: E731
    want = np.asarray(jax.jit(fn)(x), np.float64)
    got = _run(fn, x)
    assert got.shape == want.shape and got.dtype == np.float32
    if name in ("cummax", "cummin"):
        np.testing.assert_array_equal(got, want)
    else:
        err = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert err <= 1e-6, f"relative error {err:.2e}"
    np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("name", ["cumsum", "cummax", "cummin"])
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
def test_integer_scans_exact(name, dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -50), min(info.max, 50), (9, 77)).astype(dtype)
    fn = lambda x: SCANS[name](x, 1, False)  # noqa: E731
    np.testing.assert_array_equal(_run(fn, x), np.asarray(jax.jit(fn)(x)))


def test_bool_cumsum_as_jnp_exports_it():
    x = np.random.default_rng(4).random((16, 100)) > 0.5
    fn = lambda x: jnp.cumsum(x, axis=1)  # noqa: E731
    np.testing.assert_array_equal(_run(fn, x), np.asarray(jax.jit(fn)(x)))


def test_moving_window_sum_is_not_a_scan():
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    fn = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 4), (1, 1), ((0, 0), (3, 0)))  # noqa: E731
    np.testing.assert_allclose(_run(fn, x), np.asarray(jax.jit(fn)(x)), rtol=1e-5, atol=1e-6)


def test_short_float_cumsum_keeps_left_to_right_order():
    # Below MIN_FLOAT_TREE the sums are numpy's (sequential float32) to the last bit.
    x = np.random.default_rng(6).standard_normal((8, 9)).astype(np.float32)
    np.testing.assert_array_equal(_run(lambda x: jnp.cumsum(x, axis=1), x),
                                  np.cumsum(x, axis=1, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float16, np.complex64])
def test_scans_of_types_the_bindings_cannot_read_compile(dtype):
    # Their init constants (f16, complex) cannot be read from Python: left as they are.
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 200)) + (1j * rng.standard_normal((4, 200))
                                          if dtype == np.complex64 else 0)).astype(dtype)
    fn = lambda x: jnp.cumsum(x, axis=1)  # noqa: E731
    want = np.asarray(jax.jit(fn)(x))
    np.testing.assert_allclose(_run(fn, x), want, rtol=2e-2 if dtype == np.float16 else 1e-5,
                               atol=0.1 if dtype == np.float16 else 1e-4)
