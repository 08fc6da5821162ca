"""A corpus of JAX programs, exported with jax.export at test time.

Each entry is a function, a way to make its inputs and a tolerance. The tests
compile each program from its `jax.export` text and from its portable artifact and
compare mlxc's outputs with JAX's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

BF16 = ml_dtypes.bfloat16


@dataclass
class Program:
    name: str
    fn: Callable
    make_inputs: Callable[[np.random.Generator], tuple]
    rtol: float = 1e-4  # normwise: ||mlxc - jax|| <= rtol * ||jax||
    x64: bool = False


def f32(*shape):
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def inputs(*makers):
    return lambda rng: tuple(m(rng) for m in makers)


def ints(shape, lo, hi, dtype=np.int32):
    return lambda rng: rng.integers(lo, hi, size=shape).astype(dtype)


def _mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


def _layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def _attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1]).astype(np.float32)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def _conv_nhwc(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_nchw(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), ((1, 1), (1, 1)),
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def _maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _avgpool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0


def _loss(w, x, y):
    logits = x @ w
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def _one_hot_labels(rng):
    return np.eye(5, dtype=np.float32)[rng.integers(0, 5, size=8)]


def _residual_block(x, w1, w2):
    y = jax.nn.relu(_conv_nhwc(x, w1))
    return jax.nn.relu(x + _conv_nhwc(y, w2))


def _transformer_block(x, wq, wk, wv, wo, w1, w2):
    h = _layernorm(x, 1.0, 0.0)
    a = _attention(h @ wq, h @ wk, h @ wv) @ wo
    x = x + a
    h = _layernorm(x, 1.0, 0.0)
    return x + jax.nn.gelu(h @ w1) @ w2


PROGRAMS: list[Program] = [
    Program("mlp", _mlp, inputs(f32(16, 32), f32(32, 64), f32(64), f32(64, 10), f32(10))),
    Program("softmax", lambda x: jax.nn.softmax(x, axis=-1), inputs(f32(8, 100))),
    Program("log_softmax", lambda x: jax.nn.log_softmax(x, axis=0), inputs(f32(30, 7))),
    Program("layernorm", _layernorm, inputs(f32(8, 64), f32(64), f32(64))),
    Program("attention", _attention, inputs(f32(2, 16, 32), f32(2, 24, 32), f32(2, 24, 32))),
    Program("transformer_block", _transformer_block,
            inputs(f32(1, 8, 16), *(f32(16, 16) for _ in range(4)), f32(16, 32), f32(32, 16))),
    Program("conv_nhwc", _conv_nhwc, inputs(f32(2, 8, 8, 3), f32(3, 3, 3, 4))),
    Program("conv_nchw", _conv_nchw, inputs(f32(2, 3, 9, 9), f32(5, 3, 3, 3))),
    Program("residual_block", _residual_block, inputs(f32(1, 6, 6, 4), f32(3, 3, 4, 4), f32(3, 3, 4, 4))),
    Program("maxpool", _maxpool, inputs(f32(2, 8, 8, 3))),
    Program("avgpool", _avgpool, inputs(f32(1, 7, 7, 2))),
    Program("reduce_sum_axes", lambda x: (x.sum(), x.sum(0), x.sum((1, 2))), inputs(f32(3, 4, 5))),
    Program("reduce_max_min_mean", lambda x: (x.max(1), x.min(0), x.mean(-1)), inputs(f32(6, 9))),
    Program("argmax", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), inputs(f32(5, 11))),
    Program("gather_take", lambda x, i: jnp.take(x, i, axis=0), inputs(f32(10, 4), ints((6,), 0, 10))),
    Program("embedding", lambda t, i: t[i].sum(1), inputs(f32(50, 8), ints((4, 3), 0, 50))),
    Program("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 2), (3, 4)),
            inputs(f32(8, 8), lambda rng: np.int32(rng.integers(0, 8)))),
    Program("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
            inputs(f32(6, 6), f32(2, 3), lambda rng: np.int32(4))),
    Program("concat_pad_slice",
            lambda a, b: jnp.pad(jnp.concatenate([a, b], 0), ((1, 2), (0, 3)))[1:-1:2, ::2],
            inputs(f32(3, 4), f32(5, 4))),
    Program("iota_compare_select",
            lambda x: jnp.where(jnp.arange(12).reshape(3, 4) % 3 == 0, x, -x), inputs(f32(3, 4))),
    Program("transpose_reshape_broadcast",
            lambda x, y: jnp.transpose(x.reshape(2, 3, 4), (2, 0, 1)) + y[:, None, None],
            inputs(f32(6, 4), f32(4))),
    Program("integer_arith", lambda a, b: (a + b * 3, a // b, a % b, -a, jnp.abs(a)),
            inputs(ints((4, 5), -50, 50), ints((4, 5), 1, 9))),
    Program("bitwise", lambda a, b: (a & b, a | b, a ^ b, ~a, a << 2, a >> 1,
                                     lax.shift_right_logical(a, 3)),
            inputs(ints((8,), -1000, 1000), ints((8,), 0, 255))),
    Program("uint8_ops", lambda a, b: (a + b, a * b, jnp.maximum(a, b), a > b),
            inputs(ints((3, 3), 0, 255, np.uint8), ints((3, 3), 0, 255, np.uint8))),
    Program("int8_to_float", lambda a: a.astype(jnp.float32) * 0.5, inputs(ints((7,), -128, 127, np.int8))),
    Program("f16_elementwise", lambda x, y: jnp.tanh(x) * y + jnp.exp(-x * x),
            inputs(lambda r: r.standard_normal((4, 6)).astype(np.float16),
                   lambda r: r.standard_normal((4, 6)).astype(np.float16)), rtol=2e-3),
    Program("f16_matmul", lambda x, y: x @ y,
            inputs(lambda r: r.standard_normal((8, 64)).astype(np.float16),
                   lambda r: r.standard_normal((64, 8)).astype(np.float16)), rtol=2e-3),
    Program("bf16_matmul", lambda x, y: x @ y,
            inputs(lambda r: r.standard_normal((16, 256)).astype(BF16),
                   lambda r: r.standard_normal((256, 16)).astype(BF16)), rtol=1e-2),
    Program("bf16_mlp", lambda x, w: jax.nn.relu(x @ w).sum(-1),
            inputs(lambda r: r.standard_normal((4, 128)).astype(BF16),
                   lambda r: r.standard_normal((128, 32)).astype(BF16)), rtol=2e-2),
    Program("gelu_erf", lambda x: jax.nn.gelu(x, approximate=False), inputs(f32(5, 7))),
    Program("logsumexp", lambda x: jax.nn.logsumexp(x, axis=-1), inputs(f32(4, 33))),
    Program("cumsum", lambda x: jnp.cumsum(x, axis=1), inputs(f32(3, 9))),
    Program("elementwise_chain",
            lambda x: jnp.sin(x) * jnp.cos(x) + jnp.log1p(jnp.abs(x)) - jnp.sqrt(jnp.abs(x)) + jax.nn.sigmoid(x),
            inputs(f32(64,))),
    Program("clamp_round_sign", lambda x: (jnp.clip(x, -0.5, 0.5), jnp.round(x), jnp.floor(x),
                                           jnp.ceil(x), jnp.sign(x)), inputs(f32(10,))),
    Program("batched_matmul", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), inputs(f32(3, 5, 7), f32(3, 7, 2))),
    Program("grad_loss", jax.grad(_loss), inputs(f32(6, 5), f32(8, 6), _one_hot_labels)),
    Program("grad_mlp", jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), inputs(f32(4, 3), f32(5, 4))),
    Program("one_hot", lambda i: jax.nn.one_hot(i, 6), inputs(ints((5,), 0, 6))),
    Program("scalar_rank0", lambda x, y: x * y + 1.0, inputs(lambda r: np.float32(r.standard_normal()),
                                                             lambda r: np.float32(2.5))),
    Program("zero_size", lambda x: (x * 2, x.sum(0)), inputs(f32(0, 3))),
    Program("bool_logic", lambda a, b: (a & ~b, a | b, jnp.logical_xor(a, b)),
            inputs(lambda r: r.random(7) < 0.5, lambda r: r.random(7) < 0.5)),
    Program("f64_math", lambda x: jnp.exp(x) / (1 + x * x), inputs(lambda r: r.standard_normal(9)), x64=True),
    Program("int64_uint64", lambda a, b: (a * 3 - 7, b // 3, b >> 2),
            inputs(ints((5,), -10**12, 10**12, np.int64), ints((5,), 0, 2**40, np.uint64)), x64=True),
    Program("int16_uint16_uint32", lambda a, b, c: (a * 2, b + 1, c * 3),
            inputs(ints((4,), -1000, 1000, np.int16), ints((4,), 0, 60000, np.uint16),
                   ints((4,), 0, 2**31, np.uint32))),
    Program("return_input_and_constant", lambda x: (x, jnp.ones((2,), jnp.float32), x + 1), inputs(f32(3,))),
]


# Beyond the listed kinds: the breadth of what jax.numpy and lax emit.
def _f(*shape):
    return f32(*shape)


# Closed-over weights become a large dense constant in the exported program.
_WEIGHTS = np.random.default_rng(42).standard_normal((300, 200)).astype(np.float32)


PROGRAMS += [
    Program("var_std", lambda x: (x.var(0), x.std(1)), inputs(_f(5, 6))),
    Program("activations", lambda x: (jax.nn.softplus(x), jax.nn.silu(x), jax.nn.elu(x), jax.nn.relu6(x),
                                      jax.nn.hard_swish(x), jax.nn.leaky_relu(x)), inputs(_f(20))),
    Program("tile_repeat_flip_roll", lambda x: (jnp.tile(x, (2, 3)), jnp.repeat(x, 2, axis=0),
                                                jnp.flip(x, 1), jnp.roll(x, 2, axis=1)), inputs(_f(2, 3))),
    Program("depthwise_conv",
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                  feature_group_count=4), inputs(_f(1, 6, 6, 4), _f(3, 3, 1, 4))),
    Program("dilated_conv",
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", rhs_dilation=(2, 2),
                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")),
            inputs(_f(1, 9, 9, 2), _f(3, 3, 2, 3))),
    Program("conv_transpose",
            lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            inputs(_f(1, 4, 4, 2), _f(3, 3, 2, 3))),
    Program("conv1d", lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
            inputs(_f(2, 10, 3), _f(3, 3, 5))),
    Program("outer_kron", lambda a, b: (jnp.outer(a, b), jnp.kron(a[:3], b[:2])), inputs(_f(4), _f(5))),
    Program("maxpool_same", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
            inputs(_f(1, 7, 7, 2))),
    Program("nan_inf", lambda x: (jnp.isnan(x / x), jnp.isinf(1 / x), jnp.nan_to_num(x / 0.0), x / 0.0),
            inputs(lambda r: np.array([0.0, 1.0, -2.0], np.float32))),
    Program("minmax_nan", lambda x, y: (jnp.maximum(x, y), jnp.minimum(x, y)),
            inputs(lambda r: np.array([np.nan, 1, 2], np.float32), lambda r: np.array([0, np.nan, 3], np.float32))),
    Program("pow", lambda x, y: (x ** 3, jnp.abs(x) ** y, lax.integer_pow(x, -2)), inputs(_f(6), _f(6))),
    Program("int_pow", lambda a: a ** 3, inputs(ints((5,), -5, 5))),
    Program("transcendental", lambda x, y: (jnp.expm1(x), jnp.arctan2(x, y), jnp.arcsin(jnp.tanh(x)),
                                            jnp.arccos(jnp.tanh(y)), jnp.arctan(x), jnp.sinh(x), jnp.cosh(x),
                                            jnp.arcsinh(x), jnp.tan(x * 0.5)), inputs(_f(8), _f(8))),
    Program("special_functions", lambda x: (lax.erf_inv(jnp.tanh(x) * 0.9), lax.lgamma(jnp.abs(x) + 0.5),
                                            lax.digamma(jnp.abs(x) + 0.5), lax.erfc(x)), inputs(_f(8))),
    Program("clz_popcnt", lambda a: (lax.clz(a), lax.population_count(a)), inputs(ints((6,), 0, 2 ** 30))),
    Program("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), inputs(_f(3, 5), ints((3, 2), 0, 5))),
    Program("bitcast_convert", lambda x: (lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(x, jnp.uint8)),
            inputs(_f(4))),
    Program("convert_saturates", lambda x: (x.astype(jnp.bfloat16), x.astype(jnp.float16), x.astype(jnp.int32),
                                            x.astype(jnp.uint8), x.astype(jnp.int8), x.astype(bool)),
            inputs(lambda r: np.concatenate([r.standard_normal(8) * 300, [np.nan, np.inf, -np.inf, 3e9]])
                   .astype(np.float32)), rtol=1e-2),
    Program("rounding", lambda x: (jnp.round(x), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), lax.round(x)),
            inputs(lambda r: np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.7], np.float32))),
    Program("int_div_rem_signs", lambda a, b: (lax.div(a, b), lax.rem(a, b), a // b, a % b),
            inputs(ints((8,), -20, 20), lambda r: np.array([3, -3, 5, -7, 2, -2, 9, 1], np.int32))),
    Program("shift_out_of_range", lambda a, s: (lax.shift_left(a, s), lax.shift_right_arithmetic(a, s),
                                                lax.shift_right_logical(a, s)),
            inputs(ints((5,), -100, 100), lambda r: np.array([0, 1, 31, 32, 40], np.int32))),
    Program("select_n", lambda p, x: lax.select_n(p, x, -x, x * 2), inputs(ints((4,), 0, 3), _f(4))),
    Program("constants_only", lambda: (lax.broadcasted_iota(jnp.int32, (3, 4), 1), jnp.eye(3), jnp.tri(4)),
            inputs()),
    Program("prod_any_all", lambda x: (jnp.prod(x, 0), jnp.any(x > 1), jnp.all(x > -3)), inputs(_f(4, 3))),
    Program("cumprod_cummax", lambda x: (jnp.cumprod(x, 0), lax.cummax(x, axis=1)), inputs(_f(4, 5))),
    Program("gather_2d", lambda x, i, j: x[i, j], inputs(_f(6, 7), ints((4,), 0, 6), ints((4,), 0, 7))),
    Program("negative_strides", lambda x: x[::-1, 1::3], inputs(_f(6, 8))),
    Program("expand_squeeze", lambda x: jnp.squeeze(x[None, :, None], axis=(0, 2)).T, inputs(_f(3, 4))),
    Program("trace_diag", lambda x: (jnp.trace(x), jnp.einsum("ii->i", x), jnp.diag(x)), inputs(_f(4, 4))),
    Program("matvec", lambda m, v: (m @ v, v[:3] @ m, v @ v), inputs(_f(3, 5), _f(5))),
    Program("large_reduce", lambda x: (x.sum(), x.max()), inputs(_f(1000, 100))),
    Program("dynamic_indices_clamped",
            lambda x, u, i, j, k: (lax.dynamic_update_slice(x, u, (i, j)), lax.dynamic_slice(x[0], (k,), (3,))),
            inputs(_f(5, 5), _f(2, 2), lambda r: np.int32(-1), lambda r: np.int32(10), lambda r: np.int32(4))),
    Program("pad_negative_interior", lambda x: lax.pad(x, 0.0, ((1, -1, 1), (-1, 2, 0))), inputs(_f(3, 4))),
    Program("concat_many", lambda a, b, c: jnp.concatenate([a, b, c, a], axis=1), inputs(_f(2, 1), _f(2, 3), _f(2, 2))),
    Program("reduce_window_strided", lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (3,), "VALID"), inputs(_f(10))),
    Program("argmax_f16", lambda x: jnp.argmax(x, axis=0), inputs(lambda r: r.standard_normal((7, 3)).astype(np.float16))),
    Program("bf16_sum", lambda x: x.sum(0), inputs(lambda r: r.standard_normal((64, 4)).astype(BF16)), rtol=2e-2),
    Program("dot_general_batched", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
            inputs(_f(2, 3, 4), _f(2, 4, 5))),
    Program("dot_general_two_contractions", lambda a, b: lax.dot_general(a, b, (((1, 2), (0, 1)), ((), ()))),
            inputs(_f(3, 4, 5), _f(4, 5, 2))),
    Program("grad_softmax_xent", jax.grad(lambda w, x, y: -(jax.nn.log_softmax(x @ w) * y).sum()),
            inputs(_f(4, 3), _f(5, 4), lambda r: np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1]])),
    Program("grad_layernorm", jax.grad(lambda x: (_layernorm(x, 1.0, 0.0) ** 2 * jnp.arange(8.0)).sum()),
            inputs(_f(3, 8))),
    Program("adam_update", lambda p, g, m, v: (
        (m2 := 0.9 * m + 0.1 * g), (v2 := 0.999 * v + 0.001 * g * g),
        p - 1e-3 * (m2 / 0.1) / (jnp.sqrt(v2 / 0.001) + 1e-8)), inputs(_f(10, 4), _f(10, 4), _f(10, 4),
                                                                     lambda r: np.abs(r.standard_normal((10, 4))).astype(np.float32))),
]
PROGRAMS += [
    Program("optimization_barrier", lambda x: lax.optimization_barrier((x * 2, x + 1))[0], inputs(_f(4))),
    Program("grad_checkpoint", jax.grad(lambda x: jax.checkpoint(lambda y: jnp.sin(y) ** 2)(x).sum()),
            inputs(_f(6))),
    Program("cbrt_fmod_remainder", lambda x, y: (jnp.cbrt(x), jnp.fmod(x, y), jnp.remainder(x, y)),
            inputs(_f(6), lambda r: (r.standard_normal(6) + 3).astype(np.float32))),
    Program("variadic_reduce", lambda x, y: lax.reduce((x, y), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,)),
            inputs(_f(4, 3), _f(4, 3))),
    Program("vmap_matmul", jax.vmap(lambda a, b: a @ b), inputs(_f(3, 2, 4), _f(3, 4, 5))),
    Program("softmax_f16", lambda x: jax.nn.softmax(x), inputs(lambda r: r.standard_normal((4, 10)).astype(np.float16)),
            rtol=2e-3),
    Program("large_constant", lambda x: x @ _WEIGHTS, inputs(_f(2, 300))),
]
