"""The benchmark programs: JAX functions of different kinds, with their inputs.

Sizes follow the figures in the performance issue (mlp 64x256->512->10, softmax
128x1000, layernorm 256x768, conv 8x32x32x16 3x3->32, a transformer block with
seq 128 and d 256) so that the XLA times can be compared with the issue's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@dataclass
class Bench:
    name: str
    kind: str
    fn: Callable
    make_inputs: Callable[[np.random.Generator], tuple]
    flops: float = 0.0  # for a GFLOP/s column, when meaningful


def f32(*shape, scale: float = 1.0):
    return lambda rng: (scale * rng.standard_normal(shape)).astype(np.float32)


def ints(shape, lo, hi):
    return lambda rng: rng.integers(lo, hi, size=shape).astype(np.int32)


def inputs(*makers):
    return lambda rng: tuple(m(rng) for m in makers)


def _mlp(x, w1, b1, w2, b2):
    return jax.nn.relu(x @ w1 + b1) @ w2 + b2


def _layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def _attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def _conv_nhwc(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_nchw(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def _residual_block(x, w1, w2):
    y = jax.nn.relu(_conv_nhwc(x, w1))
    return jax.nn.relu(x + _conv_nhwc(y, w2))


def _transformer_block(x, wq, wk, wv, wo, w1, w2):
    h = _layernorm(x, 1.0, 0.0)
    q, k, v = (h @ wq)[None], (h @ wk)[None], (h @ wv)[None]
    x = x + _attention(q, k, v)[0] @ wo
    h = _layernorm(x, 1.0, 0.0)
    return x + jax.nn.gelu(h @ w1) @ w2


def _elementwise_chain(x, y):
    z = jnp.tanh(x) * y + jnp.exp(-x * x)
    z = jnp.sqrt(jnp.abs(z) + 1.0) - 0.5 * z
    return jax.nn.sigmoid(z * y) + jnp.maximum(z, 0.0)


def _reductions(x):
    return x.sum(0), x.max(1), jnp.mean(x * x)


def _rnn(h0, xs, wh, wx):
    def step(h, x):
        h = jnp.tanh(h @ wh + x @ wx)
        return h, h.sum()

    return lax.scan(step, h0, xs)


def _mlp_loss(params, x, y):
    w1, w2 = params
    logits = jnp.tanh(x @ w1) @ w2
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def _grad_mlp(w1, w2, x, y):
    return jax.grad(_mlp_loss)((w1, w2), x, y)


def _adam(p, g, m, v):
    b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return p - lr * (m / (1 - b1)) / (jnp.sqrt(v / (1 - b2)) + eps), m, v


def _embedding(table, ids, w):
    return jnp.take(table, ids, axis=0).mean(1) @ w


def _one_hot_labels(n, k):
    return lambda rng: np.eye(k, dtype=np.float32)[rng.integers(0, k, size=n)]


BENCHES: list[Bench] = [
    Bench("matmul_1024", "matmul", lambda a, b: a @ b, inputs(f32(1024, 1024), f32(1024, 1024)),
          flops=2 * 1024 ** 3),
    Bench("mlp", "matmul+epilogue", _mlp,
          inputs(f32(64, 256), f32(256, 512), f32(512), f32(512, 10), f32(10)),
          flops=2 * 64 * (256 * 512 + 512 * 10)),
    Bench("attention", "batched matmul+softmax", _attention,
          inputs(f32(4, 128, 64), f32(4, 128, 64), f32(4, 128, 64)), flops=4 * 4 * 128 * 128 * 64),
    Bench("layernorm", "reduction+elementwise", _layernorm,
          inputs(f32(256, 768), f32(768), f32(768))),
    Bench("softmax", "reduction+elementwise", lambda x: jax.nn.softmax(x, axis=-1),
          inputs(f32(128, 1000))),
    Bench("conv_nhwc", "convolution", _conv_nhwc, inputs(f32(8, 32, 32, 16), f32(3, 3, 16, 32)),
          flops=2 * 8 * 32 * 32 * 32 * 9 * 16),
    Bench("conv_nchw", "convolution", _conv_nchw, inputs(f32(8, 16, 32, 32), f32(32, 16, 3, 3)),
          flops=2 * 8 * 32 * 32 * 32 * 9 * 16),
    Bench("residual_block", "conv+elementwise", _residual_block,
          inputs(f32(4, 16, 16, 32), f32(3, 3, 32, 32), f32(3, 3, 32, 32)),
          flops=2 * 2 * 4 * 16 * 16 * 32 * 9 * 32),
    Bench("transformer_block", "mixed", _transformer_block,
          inputs(f32(128, 256), f32(256, 256), f32(256, 256), f32(256, 256), f32(256, 256),
                 f32(256, 1024), f32(1024, 256))),
    Bench("elementwise_chain", "elementwise", _elementwise_chain,
          inputs(f32(1024, 1024), f32(1024, 1024))),
    Bench("reductions", "reduction", _reductions, inputs(f32(2048, 512))),
    # Weights scaled as an RNN is initialised (1/sqrt(fan-in)): with unit weights the
    # recurrence is chaotic, and any two summation orders (XLA's and float64's too)
    # part ways after a few steps.
    Bench("rnn_scan", "loop", _rnn, inputs(f32(16, 128), f32(32, 16, 64),
                                           f32(128, 128, scale=128 ** -0.5),
                                           f32(64, 128, scale=64 ** -0.5))),
    Bench("grad_mlp", "gradient", _grad_mlp,
          inputs(f32(256, 512), f32(512, 10), f32(128, 256), _one_hot_labels(128, 10))),
    Bench("adam_update", "optimizer", _adam,
          inputs(f32(512, 1024), f32(512, 1024), f32(512, 1024),
                 lambda rng: np.abs(rng.standard_normal((512, 1024))).astype(np.float32))),
    Bench("embedding", "gather", _embedding,
          inputs(f32(10000, 128), ints((256, 16), 0, 10000), f32(128, 64))),
    Bench("tiny_add", "call overhead", lambda x, y: x + y, inputs(f32(4), f32(4))),
]
