"""dot_general in any rank and dimension numbers, against JAX: mlxc-canonical-dot-general
collapses them into products of one batch, free and contracting dimension, and
mlxc-contraction-reshape-barriers keeps the fusion from undoing that."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program

SIZES = (1, 2, 3, 5, 8)


def _random_dot(rng, least_free: int = 0, sizes=(SIZES, SIZES, (3, 4, 16), (3, 4, 16))):
    """Random shapes and dimension numbers: 0-2 batch, 0-2 contracting and
    `least_free`-2 free dimensions per operand, each operand's dimensions in a random
    order; sizes drawn from `sizes` (batch, contracting, lhs free, rhs free)."""
    nb, nc = rng.integers(0, 3), rng.integers(1, 3)
    nfl, nfr = rng.integers(least_free, 3), rng.integers(least_free, 3)
    b = [int(rng.choice(sizes[0])) for _ in range(nb)]
    c = [int(rng.choice(sizes[1])) for _ in range(nc)]
    fl = [int(rng.choice(sizes[2])) for _ in range(nfl)]
    fr = [int(rng.choice(sizes[3])) for _ in range(nfr)]
    # each operand: a permutation of its [batch..., contracting..., free...] dims
    lperm, rperm = rng.permutation(nb + nc + nfl), rng.permutation(nb + nc + nfr)
    lshape = [(b + c + fl)[i] for i in lperm]
    rshape = [(b + c + fr)[i] for i in rperm]
    lpos = {int(d): i for i, d in enumerate(lperm)}
    rpos = {int(d): i for i, d in enumerate(rperm)}
    # pairs listed in a random order: only the pairing matters
    border, corder = rng.permutation(nb), rng.permutation(nc)
    dims = (([lpos[nb + int(i)] for i in corder], [rpos[nb + int(i)] for i in corder]),
            ([lpos[int(i)] for i in border], [rpos[int(i)] for i in border]))
    return lshape, rshape, dims


def _dot_program(dims, epilogue: bool):
    def f(x, y, bias):
        d = lax.dot_general(jax.nn.relu(x) if epilogue else x, y, dims)
        return (jnp.tanh(d) if epilogue else d) + bias
    return f


@pytest.mark.parametrize("seed", range(24))
def test_random_dimension_numbers(seed):
    rng = np.random.default_rng(seed)
    lshape, rshape, dims = _random_dot(rng)
    dtype = [np.float32, np.float64, np.int32][seed % 3]
    x = (rng.standard_normal(lshape) * 3).astype(dtype)
    y = (rng.standard_normal(rshape) * 3).astype(dtype)
    epilogue = dtype != np.int32
    out_shape = jax.eval_shape(lambda a, b: lax.dot_general(a, b, dims), x, y).shape
    bias = rng.standard_normal(out_shape[-1:]).astype(dtype)
    f = _dot_program(dims, epilogue)
    with jax.enable_x64(dtype == np.float64):
        text, _, want = export_program(f, x, y, bias, x64=dtype == np.float64)
    assert_matches(mlxc.compile(text)(x, y, bias), want, 1e-12 if dtype == np.float64 else 2e-6)


def _fused(fn, *args) -> str:
    text, _, _ = export_program(fn, *args)
    return str(mlxc.lower(text, stop_after="fuse"))


@pytest.mark.parametrize("shape", [(2, 128, 64), (2, 3, 32, 64), (256, 64)])
def test_rank_n_products_stay_matmuls(shape, monkeypatch):
    """relu(x @ w1) @ w2 with x of any rank: two linalg.matmul ops (the relu between
    them, not fused into the second product's operand) whatever x's rank."""
    monkeypatch.setenv("MLXC_CPU_SCHEDULES", "0")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w1 = rng.standard_normal((64, 96)).astype(np.float32)
    w2 = rng.standard_normal((96, 32)).astype(np.float32)
    f = lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2
    ir_text = _fused(f, x, w1, w2)
    assert len(re.findall(r"= linalg\.matmul ", ir_text)) == 2, ir_text
    assert '"reduction"' not in ir_text, ir_text  # no generic contraction or fused operand
    text, _, want = export_program(f, x, w1, w2)
    assert_matches(mlxc.compile(text)(x, w1, w2), want, 2e-6)


def test_attention_with_heads_in_the_middle(monkeypatch):
    """flax's attention contracts [b, q, h, d] x [b, k, h, d] over d with batch (b, h):
    the batch dimensions are not adjacent, so the operands are transposed into
    [b, h, q, d] and the product is one batch_matmul over b*h."""
    monkeypatch.setenv("MLXC_CPU_SCHEDULES", "0")
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 16, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 12, 4, 8)).astype(np.float32)
    f = lambda q, k: jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), axis=-1)
    ir_text = _fused(f, q, k)
    assert re.search(r"linalg\.batch_matmul .*tensor<8x16x8xf32>", ir_text), ir_text
    text, _, want = export_program(f, q, k)
    assert_matches(mlxc.compile(text)(q, k), want, 2e-6)


def _transposes(text: str) -> list[list[int]]:
    return [[int(d) for d in m.split(",")]
            for m in re.findall(r"stablehlo\.transpose %\S+, dims = \[([0-9, ]+)\]", text)]


def test_attention_products_move_whole_rows():
    """flax's attention in [b, s, h, d]: of the transposes around q.k^T and p.v (whose
    result is transposed back to [b, s, h, d]), one moves the innermost dimension, k's
    into the [B, K, N] layout the kernel reads fastest; the others copy whole rows. p.v
    is computed with its operands swapped, as [b, h, s, d], where it was computed as
    [b, h, d, s] from a transposed v and p and transposed element by element (four
    shuffling transposes)."""
    rng = np.random.default_rng(3)
    b, s, h, d = 2, 64, 2, 64
    q, k, v = (rng.standard_normal((b, s, h, d)).astype(np.float32) for _ in range(3))

    def f(q, k, v):
        p = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0, axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", p, v)

    text, _, want = export_program(f, q, k, v)
    simplified = str(mlxc.lower(text, stop_after="simplify"))
    shuffles = [p for p in _transposes(simplified) if p[-1] != len(p) - 1]
    assert len(shuffles) <= 1, simplified
    assert_matches(mlxc.compile(text)(q, k, v), want, 2e-6)


@pytest.mark.parametrize("seed", range(10))
def test_products_with_transposed_results(seed):
    """Products large enough for the runtime's kernel, with several dimensions of each
    kind in random orders and the result transposed at random: whichever operand
    becomes the lhs and however the transposes fold, the values are JAX's."""
    rng = np.random.default_rng(100 + seed)
    lshape, rshape, dims = _random_dot(rng, 1, ((2, 3), (8, 16, 32), (8, 12, 24), (16, 24, 40)))
    out_rank = len(jax.eval_shape(lambda a, b: lax.dot_general(a, b, dims),
                                  np.zeros(lshape, np.float32),
                                  np.zeros(rshape, np.float32)).shape)
    out_perm = [int(i) for i in rng.permutation(out_rank)]
    x = rng.standard_normal(lshape).astype(np.float32)
    y = rng.standard_normal(rshape).astype(np.float32)
    f = lambda x, y: jnp.transpose(lax.dot_general(x, y, dims), out_perm) * 0.5
    text, _, want = export_program(f, x, y)
    assert_matches(mlxc.compile(text)(x, y), want, 2e-5)
