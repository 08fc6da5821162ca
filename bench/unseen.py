"""A second benchmark set: programs of kinds the compiler was not tuned on.

The performance targets must hold on programs nobody looked at while writing the
schedules, so these kinds differ from bench/programs.py on purpose: recurrent
cells, depthwise / strided / 1-D convolutions with pooling, logsumexp losses,
normalization by a norm, exact (erf) GELU, scans, argmax and top-k, bf16, int8
quantization, sorting, the gradient of a convolution and a three-operand einsum.
Sizes keep each call between about 50 us and 5 ms on one core.

    python bench/run.py --set unseen
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from programs import Bench, f32, inputs, ints


def _sigmoid(x):
    return jax.nn.sigmoid(x)


def _gru_cell(x, h, wx, wh, b):
    gx, gh = x @ wx + b, h @ wh
    xr, xz, xn = jnp.split(gx, 3, axis=-1)
    hr, hz, hn = jnp.split(gh, 3, axis=-1)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return (1 - z) * n + z * h


def _lstm_cell(x, h, c, w, b):
    g = jnp.concatenate([x, h], axis=-1) @ w + b
    i, f, o, u = jnp.split(g, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * jnp.tanh(u)
    return _sigmoid(o) * jnp.tanh(c), c


def _depthwise_conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=x.shape[-1])


def _strided_conv_pool(x, w):
    y = lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    return lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


def _conv1d(x, w, b):
    y = lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"))
    return jax.nn.relu(y + b)


def _cross_entropy(logits, labels):
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return jnp.mean(lse - picked)


def _l2_normalize(x):
    return x * lax.rsqrt(jnp.maximum(jnp.sum(x * x, axis=-1, keepdims=True), 1e-12))


def _bmm_bias_gelu(a, b, bias):
    return jax.nn.gelu(jnp.einsum("bij,bjk->bik", a, b) + bias, approximate=False)


def _argmax_topk(x):
    values, idx = lax.top_k(x, 5)
    return jnp.argmax(x, axis=-1), values, idx


def _mlp_bf16(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return (h @ w2).astype(jnp.float32)


def _quant_dequant(x, w):
    # Symmetric per-row int8 quantization of activations, int8 weights, int32
    # accumulation, then back to f32: the round trip of an int8 inference layer.
    xs = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / 127.0 + 1e-12
    xq = jnp.clip(jnp.round(x / xs), -127, 127).astype(jnp.int8)
    acc = lax.dot_general(xq, w, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * xs * np.float32(1 / 64)


def _sort_median(x):
    s = jnp.sort(x, axis=-1)
    return s, s[:, x.shape[-1] // 2]


def _conv_loss(w, x):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.sum(jnp.tanh(y) ** 2)


def _conv_grad(w, x):
    return jax.grad(_conv_loss, argnums=(0, 1))(w, x)


def _einsum3(a, b, c):
    return jnp.einsum("ij,jk,kl->il", a, b, c)


def _bf16(*shape, scale: float = 1.0):
    return lambda rng: (scale * rng.standard_normal(shape)).astype(ml_dtypes.bfloat16)


def _int8(*shape):
    return lambda rng: rng.integers(-127, 128, size=shape).astype(np.int8)


def _distinct(*shape):
    # Distinct values: ties would let sort/top-k indices differ legitimately.
    return lambda rng: rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)


UNSEEN: list[Bench] = [
    Bench("gru_cell", "recurrent cell", _gru_cell,
          inputs(f32(64, 256), f32(64, 256), f32(256, 768, scale=1 / 16),
                 f32(256, 768, scale=1 / 16), f32(768)),
          flops=2 * 2 * 64 * 256 * 768),
    Bench("lstm_cell", "recurrent cell", _lstm_cell,
          inputs(f32(64, 256), f32(64, 256), f32(64, 256), f32(512, 1024, scale=1 / 22),
                 f32(1024)),
          flops=2 * 64 * 512 * 1024),
    Bench("depthwise_conv", "grouped convolution", _depthwise_conv,
          inputs(f32(8, 32, 32, 64), f32(3, 3, 1, 64)), flops=2 * 8 * 32 * 32 * 64 * 9),
    Bench("conv_s2_maxpool", "strided conv+reduce_window", _strided_conv_pool,
          inputs(f32(8, 64, 64, 16), f32(3, 3, 16, 32)), flops=2 * 8 * 32 * 32 * 32 * 9 * 16),
    Bench("conv1d_seq", "1-D convolution", _conv1d,
          inputs(f32(8, 256, 64), f32(5, 64, 64, scale=0.1), f32(64)),
          flops=2 * 8 * 256 * 64 * 5 * 64),
    Bench("cross_entropy", "logsumexp+gather", _cross_entropy,
          inputs(f32(256, 1000), ints((256,), 0, 1000))),
    Bench("l2_normalize", "norm", _l2_normalize, inputs(f32(512, 512))),
    Bench("bmm_gelu_erf", "batched matmul+erf", _bmm_bias_gelu,
          inputs(f32(8, 128, 128), f32(8, 128, 256, scale=1 / 11), f32(256)),
          flops=2 * 8 * 128 * 128 * 256),
    Bench("cumsum", "scan", lambda x: jnp.cumsum(x, axis=-1), inputs(f32(256, 1024))),
    Bench("argmax_topk", "arg-reduction+top-k", _argmax_topk, inputs(_distinct(256, 1000))),
    Bench("mlp_bf16", "bf16 matmul", _mlp_bf16,
          inputs(_bf16(128, 256), _bf16(256, 512, scale=1 / 16), _bf16(512, 128, scale=1 / 22)),
          flops=2 * 128 * (256 * 512 + 512 * 128)),
    Bench("int8_quant_matmul", "int8 quantize/dequantize", _quant_dequant,
          inputs(f32(128, 256), _int8(256, 256)), flops=2 * 128 * 256 * 256),
    Bench("sort_median", "sort", _sort_median, inputs(_distinct(128, 512))),
    Bench("conv_grad", "gradient of a convolution", _conv_grad,
          inputs(f32(3, 3, 16, 16, scale=1 / 12), f32(4, 16, 16, 16)),
          flops=3 * 2 * 4 * 16 * 16 * 16 * 9 * 16),
    Bench("einsum3", "three-operand einsum", _einsum3,
          inputs(f32(256, 512), f32(512, 64), f32(64, 512)),
          flops=2 * 256 * 512 * 64 + 2 * 256 * 64 * 512),
]
