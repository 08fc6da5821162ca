"""JAX's float sorts through the runtime's radix sort (mlxc-library-sorts)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import export_program


def _bits(a) -> np.ndarray:
    return np.asarray(a).view(np.uint32)


def _special_rows(rows: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, n)).astype(np.float32)
    x[0, :8] = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0]
    x[1] = np.round(x[1])           # many ties: stability decides their order
    x[2, ::3] = -0.0
    return x


@pytest.mark.parametrize("fn", [
    lambda v: jnp.sort(v, axis=-1),
    lambda v: jnp.sort(v, axis=0),
    lambda v: jnp.sort(v.reshape(-1)),
    lambda v: jax.lax.sort(v, dimension=1),
], ids=["rows", "columns", "flat", "lax"])
@pytest.mark.parametrize("shape", [(7, 300), (3, 5000), (5, 1)])
def test_sorts_match_jax_bit_for_bit(fn, shape):
    x = _special_rows(*shape, seed=shape[1]) if shape[1] >= 8 else \
        np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    kept = x.copy()
    text, _, (want,) = export_program(fn, x)
    exe = mlxc.compile(text)
    if shape[1] > 1:
        assert "mlxc_sort_f32_rows" in mlxc.lower(text, stop_after="linalg")
    np.testing.assert_array_equal(_bits(exe(x)), _bits(want))
    np.testing.assert_array_equal(_bits(x), _bits(kept))


def test_subnormals_order_as_the_generated_merge_sort():
    # IEEE comparisons: +-1e-45 are not zero (XLA, flushing subnormals, ties them with it).
    x = _special_rows(4, 64, seed=3)
    x[0, 8:12] = [1e-45, -1e-45, 3e-45, -2e-45]
    text, _, _ = export_program(lambda v: jnp.sort(v, axis=-1), x)
    with mlxc.settings.override(library_calls=False):
        merge = mlxc.compile(text)(x)
    np.testing.assert_array_equal(_bits(mlxc.compile(text)(x)), _bits(merge))


def test_row_sort_keeps_no_permutation_buffer():
    # The generated merge sort keeps a permutation of 2n indices (8 KiB at n = 512).
    x = np.random.default_rng(4).permutation(64 * 512).reshape(64, 512).astype(np.float32)
    text, _, want = export_program(lambda v: (jnp.sort(v, axis=-1), jnp.sort(v, axis=-1)[:, 256]), x)
    exe = mlxc.compile(text)
    for got, ref in zip(exe(x), want):
        np.testing.assert_array_equal(got, ref)
    assert exe.memory_stats()["temp_bytes"] == 0
    with mlxc.settings.override(library_calls=False):
        assert mlxc.compile(text).memory_stats()["temp_bytes"] == 2 * 512 * 8


def test_other_sorts_keep_the_merge_sort():
    # Several operands (argsort), integers, a comparator other than JAX's: generated.
    x = np.random.default_rng(5).standard_normal((4, 50)).astype(np.float32)
    for fn, arg in ((lambda v: jnp.argsort(v, axis=-1), x),
                    (lambda v: jnp.sort(v, axis=-1), (x * 100).astype(np.int32)),
                    (lambda v: jax.lax.sort(v, dimension=1, is_stable=True)[::-1], x),
                    (lambda v: -jnp.sort(-v, axis=-1), x)):
        text, _, (want,) = export_program(fn, arg)
        np.testing.assert_array_equal(np.asarray(mlxc.compile(text)(arg)), want)
    text, _, _ = export_program(lambda v: jnp.argsort(v, axis=-1), x)
    assert "mlxc_sort_f32_rows" not in mlxc.lower(text, stop_after="linalg")
