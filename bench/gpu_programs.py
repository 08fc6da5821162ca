"""The GPU runs' programs beyond the test corpus: bandwidth and FLOP-rate
microbenchmarks sized for a large GPU, and whole models (a GPT decoder's forward pass,
an MLP, a CNN). Only JAX and numpy: the device machine imports this without mlxc's
compiler.

Each program has the bytes it must move through device memory at least (each input
read once, each output written once) and the floating-point operations it must do,
so that a time gives achieved bandwidth and FLOP/s.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

BF16 = ml_dtypes.bfloat16


@dataclass
class GpuProgram:
    name: str
    kind: str          # "elementwise", "reduction", "matmul", "model"
    fn: Callable
    make_inputs: Callable[[np.random.Generator], tuple]
    flops: float = 0.0
    rtol: float = 1e-4  # normwise, against XLA at the highest precision
    # Tensor-core dtype of the matmuls (bf16/f16), so the FLOP rate is compared with
    # the right peak; None for f32 work (no tensor cores).
    tensor_dtype: str | None = None

    def nbytes(self, args) -> int:
        outs = jax.eval_shape(self.fn, *args)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return sum(a.nbytes for a in args) + sum(
            int(np.prod(o.shape)) * np.dtype(o.dtype).itemsize for o in outs)


def normal(*shape, dtype=np.float32, scale: float = 1.0):
    return lambda rng: (scale * rng.standard_normal(shape, dtype=np.float32)).astype(dtype)


def inputs(*makers):
    return lambda rng: tuple(m(rng) for m in makers)


def checksum(arrays) -> str:
    """Of the inputs' bytes: the device regenerates them from the seed and checks this."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


N = 1 << 25  # 32M elements: 128 MiB per f32 array, several times the H200's 50 MB L2
ROWS, COLS = 8192, 4096


def _gelu(x):
    return 0.5 * x * (1 + jnp.tanh(0.79788456 * (x + 0.044715 * x * x * x)))


def _layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


MICRO: list[GpuProgram] = [
    GpuProgram("scale_f32", "elementwise", lambda x: x * 2.0, inputs(normal(N)), N),
    GpuProgram("axpy_f32", "elementwise", lambda a, b, c: a * b + c,
               inputs(normal(N), normal(N), normal(N)), 2 * N),
    GpuProgram("gelu_f32", "elementwise", _gelu, inputs(normal(N)), 8 * N),
    GpuProgram("axpy_bf16", "elementwise", lambda a, b, c: a * b + c,
               inputs(normal(N, dtype=BF16), normal(N, dtype=BF16), normal(N, dtype=BF16)),
               2 * N, rtol=1e-2),
    GpuProgram("sum_all_f32", "reduction", lambda x: x.sum(), inputs(normal(N)), N, rtol=1e-5),
    GpuProgram("sum_rows_f32", "reduction", lambda x: x.sum(1), inputs(normal(ROWS, COLS)),
               ROWS * COLS, rtol=1e-5),
    GpuProgram("sum_cols_f32", "reduction", lambda x: x.sum(0), inputs(normal(ROWS, COLS)),
               ROWS * COLS, rtol=1e-5),
    GpuProgram("max_rows_f32", "reduction", lambda x: x.max(1), inputs(normal(ROWS, COLS)),
               ROWS * COLS, rtol=0),
    GpuProgram("softmax_rows_f32", "reduction", lambda x: jax.nn.softmax(x, axis=-1),
               inputs(normal(ROWS, COLS)), 5 * ROWS * COLS),
    GpuProgram("layernorm_rows_f32", "reduction", _layernorm,
               inputs(normal(ROWS, COLS), normal(COLS), normal(COLS)), 8 * ROWS * COLS),
    GpuProgram("transpose_f32", "elementwise", lambda x: x.T, inputs(normal(ROWS, COLS)), 0, rtol=0),
    GpuProgram("matmul_f32_4096", "matmul", lambda a, b: a @ b,
               inputs(normal(4096, 4096), normal(4096, 4096)), 2 * 4096 ** 3),
    GpuProgram("matmul_bf16_4096", "matmul", lambda a, b: a @ b,
               inputs(normal(4096, 4096, dtype=BF16), normal(4096, 4096, dtype=BF16)),
               2 * 4096 ** 3, rtol=1e-2, tensor_dtype="bf16"),
    GpuProgram("matmul_f16_4096", "matmul", lambda a, b: a @ b,
               inputs(normal(4096, 4096, dtype=np.float16), normal(4096, 4096, dtype=np.float16)),
               2 * 4096 ** 3, rtol=1e-2, tensor_dtype="f16"),
    GpuProgram("matmul_f32_odd", "matmul", lambda a, b: a @ b,
               inputs(normal(1000, 999), normal(999, 1001)), 2 * 1000 * 999 * 1001),
    GpuProgram("matmul_f32_tn", "matmul", lambda a, b: a.T @ b,
               inputs(normal(2048, 2048), normal(2048, 2048)), 2 * 2048 ** 3),
    GpuProgram("dense_3dx2d_f32", "matmul", lambda x, w: x @ w,
               inputs(normal(8, 512, 1024), normal(1024, 1024)), 2 * 8 * 512 * 1024 * 1024),
    GpuProgram("bmm_f32_attention", "matmul", lambda q, k: jnp.einsum("bqd,bkd->bqk", q, k),
               inputs(normal(64, 512, 64), normal(64, 512, 64)), 2 * 64 * 512 * 512 * 64),
]


# test_cuda.py's split-reduction shapes (run on the CPU there), at their sizes there.
REDUCTIONS: list[GpuProgram] = [
    GpuProgram("rows_sum_2048x1024", "reduction", lambda x: x.sum(1), inputs(normal(2048, 1024)),
               rtol=1e-5),
    GpuProgram("all_max_4096x64", "reduction", lambda x: x.max(), inputs(normal(4096, 64)), rtol=0),
    GpuProgram("cols_sumsq_1500x3", "reduction", lambda x: (x * x).sum(0), inputs(normal(1500, 3)),
               rtol=1e-5),
    GpuProgram("rows_min_3x65536", "reduction", lambda x: x.min(1), inputs(normal(3, 65536)), rtol=0),
]

# A GPT decoder's forward pass: token and position embeddings, pre-norm blocks of causal
# multi-head attention and a GELU MLP, a final norm and tied output projection.
GPT = dict(vocab=512, d=256, heads=4, layers=2, seq=256, batch=8)


def _gpt(tokens, wte, wpe, *params):
    b, t = tokens.shape
    d, h = GPT["d"], GPT["heads"]
    x = wte[tokens] + wpe[None, :t]
    mask = jnp.tril(jnp.ones((t, t), bool))
    *blocks, lnf_g, lnf_b = params
    for i in range(0, len(blocks), 8):
        g1, b1, wqkv, wo, g2, b2, w1, w2 = blocks[i:i + 8]
        y = _layernorm(x, g1, b1)
        q, k, v = jnp.split(y @ wqkv, 3, axis=-1)
        q, k, v = (z.reshape(b, t, h, d // h).transpose(0, 2, 1, 3) for z in (q, k, v))
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.float32(np.sqrt(d // h))
        s = jnp.where(mask, s, np.float32(-1e9))
        a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)
        x = x + a.transpose(0, 2, 1, 3).reshape(b, t, d) @ wo
        y = _layernorm(x, g2, b2)
        x = x + _gelu(y @ w1) @ w2
    return _layernorm(x, lnf_g, lnf_b) @ wte.T


def _gpt_inputs(rng):
    v, d, t, b = GPT["vocab"], GPT["d"], GPT["seq"], GPT["batch"]
    w = lambda *s: (rng.standard_normal(s, dtype=np.float32) * 0.02).astype(np.float32)  # noqa: E731
    ones, zeros = np.ones(d, np.float32), np.zeros(d, np.float32)
    params = [rng.integers(0, v, size=(b, t)).astype(np.int32), w(v, d), w(t, d)]
    for _ in range(GPT["layers"]):
        params += [ones, zeros, w(d, 3 * d), w(d, d), ones, zeros, w(d, 4 * d), w(4 * d, d)]
    return tuple(params + [ones, zeros])


def _gpt_flops() -> float:
    v, d, t, b, n = GPT["vocab"], GPT["d"], GPT["seq"], GPT["batch"], GPT["layers"]
    per_layer = 2 * b * t * (3 * d * d + d * d + 8 * d * d) + 2 * 2 * b * t * t * d
    return n * per_layer + 2 * b * t * d * v


def _mlp(x, w1, b1, w2, b2):
    return jax.nn.relu(x @ w1 + b1) @ w2 + b2


def _cnn(x, k1, k2, w):
    conv = lambda x, k: lax.conv_general_dilated(  # noqa: E731
        x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    pool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # noqa: E731
    x = pool(jax.nn.relu(conv(x, k1)))
    x = pool(jax.nn.relu(conv(x, k2)))
    return jax.nn.log_softmax(x.mean((1, 2)) @ w)


MODELS: list[GpuProgram] = [
    GpuProgram("gpt_decoder", "model", _gpt, _gpt_inputs, _gpt_flops(), rtol=1e-3),
    GpuProgram("mlp_1024x4096", "model", _mlp,
               inputs(normal(1024, 1024), normal(1024, 4096, scale=1 / 32), normal(4096),
                      normal(4096, 1024, scale=1 / 64), normal(1024)),
               2 * 1024 * 1024 * 4096 * 2),
    GpuProgram("cnn", "model", _cnn,
               inputs(normal(32, 32, 32, 3), normal(3, 3, 3, 32, scale=0.2),
                      normal(3, 3, 32, 64, scale=0.06), normal(64, 10, scale=0.1)),
               2 * 32 * (32 * 32 * 27 * 32 + 16 * 16 * 288 * 64) + 2 * 32 * 640, rtol=1e-3),
]
