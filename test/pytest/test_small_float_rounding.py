"""bf16/f16 arithmetic rounds after every op, as XLA's does (mlxc-keep-small-float-roundings).

A chain of f16 ops computed in f32 with one rounding at the end differs from XLA's
result by several f16 steps where an intermediate (a difference, an exp) rounds
coarsely; these programs are checked bit for bit against jax.jit.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import export_program


def _inputs(dtype):
    rng = np.random.default_rng(17)
    return (rng.standard_normal((8, 9)) * 3).astype(dtype), rng.standard_normal((8, 9)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("fn", [
    lambda x, y: jnp.logaddexp(x, y),
    lambda x, y: jax.lax.cumlogsumexp(x - y, axis=0),
    lambda x, y: (x - y) * (x + y) - jnp.exp(-jnp.abs(x - y)),
], ids=["logaddexp", "cumlogsumexp", "chain"])
def test_rounds_like_xla(fn, dtype):
    x, y = _inputs(dtype)
    text, _, (expected,) = export_program(fn, x, y)
    np.testing.assert_array_equal(mlxc.compile(text)(x, y), expected)


def test_one_rounding_at_the_end_would_differ():
    # The same f16 chain in f32, rounded once: it differs from XLA somewhere, so the
    # test above can tell the two apart.
    x, y = _inputs(np.float16)
    text, _, (expected,) = export_program(lambda a: jax.lax.cumlogsumexp(a, axis=0), x)
    np.testing.assert_array_equal(mlxc.compile(text)(x), expected)
    once = np.asarray(jax.lax.cumlogsumexp(x.astype(np.float32), axis=0)).astype(np.float16)
    assert np.any(once != expected)
