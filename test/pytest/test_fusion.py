"""Fusion and temporary memory: results equal JAX's, and the temporaries are what the
fusion promises (exe.memory_stats() reads the peak recorded at bufferization)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program

F32 = 4


def _compile(fn, *args):
    text, _, expected = export_program(fn, *args)
    exe = mlxc.compile(text)
    assert_matches(exe(*args), expected, 2e-6)
    return exe.memory_stats()["temp_bytes"]


def _rng():
    return np.random.default_rng(0)


def test_softmax_keeps_only_row_vectors():
    # exp(x - max) is recomputed in the sum and in the divide: no 64x300 temporary.
    x = _rng().standard_normal((64, 300)).astype(np.float32)
    temp = _compile(lambda x: jax.nn.softmax(x, axis=-1), x)
    assert temp <= 2 * 64 * F32


def test_layernorm_keeps_only_row_vectors():
    def layernorm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * lax.rsqrt(var + 1e-5) * g + b

    rng = _rng()
    x = rng.standard_normal((32, 96)).astype(np.float32)
    g, b = rng.standard_normal(96).astype(np.float32), rng.standard_normal(96).astype(np.float32)
    temp = _compile(layernorm, x, g, b)
    assert temp <= 2 * 32 * F32


def test_matmul_epilogue_runs_on_the_matmul_output():
    # relu(x @ w1 + b1) @ w2: the bias and relu write over the first product.
    rng = _rng()
    x = rng.standard_normal((16, 32)).astype(np.float32)
    w1 = rng.standard_normal((32, 64)).astype(np.float32)
    b1 = rng.standard_normal(64).astype(np.float32)
    w2 = rng.standard_normal((64, 8)).astype(np.float32)
    temp = _compile(lambda x, w1, b1, w2: jax.nn.relu(x @ w1 + b1) @ w2, x, w1, b1, w2)
    assert temp == 16 * 64 * F32


def test_sum_of_products_accumulates_in_one_buffer():
    # tanh(h @ wh + x @ wx): the second product starts from the first.
    rng = _rng()
    h, x = rng.standard_normal((8, 32)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    wh = rng.standard_normal((32, 32)).astype(np.float32)
    wx = rng.standard_normal((16, 32)).astype(np.float32)
    temp = _compile(lambda h, x, wh, wx: jnp.tanh(h @ wh + x @ wx).sum(0), h, x, wh, wx)
    assert temp <= 8 * 32 * F32 + 64


def test_shared_zero_accumulators_are_not_copied():
    # q, k and v start from one (cse-merged) zero fill; each gets its own, and the
    # temporaries are the three products, never a kept fill plus copies of it.
    rng = _rng()
    x = rng.standard_normal((16, 32)).astype(np.float32)
    wq, wk, wv = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(3))

    def qkv(x, wq, wk, wv):
        q, k, v = x @ wq, x @ wk, x @ wv
        return jax.nn.softmax(q @ k.T, axis=-1) @ v

    temp = _compile(qkv, x, wq, wk, wv)
    assert temp <= 3 * 16 * 32 * F32 + 16 * 16 * F32 + 2 * 16 * F32


def test_temporaries_are_freed_after_their_last_use():
    # A chain of matmuls: each product is dead once the next is computed, so at most
    # two are alive at once, not all of them.
    rng = _rng()
    x = rng.standard_normal((32, 32)).astype(np.float32)
    ws = [rng.standard_normal((32, 32)).astype(np.float32) / 6 for _ in range(5)]

    def chain(x, *ws):
        for w in ws:
            x = jnp.sin(x @ w)
        return x

    temp = _compile(chain, x, *ws)
    assert temp <= 2 * 32 * 32 * F32


@pytest.mark.parametrize("shape", [(3, 5), (1, 7), (128, 1)])
def test_recomputed_producers_match_jax(shape):
    # A producer read by a reduction, a broadcast consumer and a second reduction.
    x = _rng().standard_normal(shape).astype(np.float32)

    def f(x):
        e = jnp.exp(x - x.max(-1, keepdims=True))
        s = e.sum(-1, keepdims=True)
        return e / s, (e * e).sum(-1), jnp.abs(e).max()

    _compile(f, x)


def test_caller_arrays_are_not_written():
    # The in-place epilogue and the accumulation never write into an input.
    rng = _rng()
    a = rng.standard_normal((8, 8)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    keep_a, keep_b = a.copy(), b.copy()
    _compile(lambda a, b: jnp.tanh(a @ b + a) + b, a, b)
    np.testing.assert_array_equal(a, keep_a)
    np.testing.assert_array_equal(b, keep_b)


@pytest.mark.parametrize("n", [4, 33])
def test_outer_product_fused_into_a_product(n):
    # An outer product (dot_general without contraction) reads its zero-filled
    # destination; fused into the product after it, that destination was added to on
    # every pass of the product's extra loop (mlxc-inits-as-inputs).
    rng = _rng()
    v, d = rng.standard_normal(n).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)

    def f(v, d):
        outer = lax.dot_general(jnp.ones(n, np.float32), v, (((), ()), ((), ())))
        return lax.dot_general(jnp.tril(outer), jnp.tril(d @ d.T), (((0,), (0,)), ((), ())),
                               precision="highest")

    _compile(f, v, d)
