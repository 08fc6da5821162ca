"""Temporaries placed in result buffers (mlxc-temps-in-results): same numbers, less memory."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program

F32 = 4


def _attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def test_transposed_operand_lives_in_the_result():
    # k^T (2x32x64, copied into place for the first matmul) is freed before the second
    # matmul writes the result, so it lives there, and so do the softmax's row vectors
    # (after it, at an offset): only the scores remain a temporary, as in XLA.
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 64, 32)).astype(np.float32) for _ in range(3))
    kept = [a.copy() for a in (q, k, v)]
    text, _, expected = export_program(_attention, q, k, v)
    exe = mlxc.compile(text)
    for _ in range(2):   # the result buffer is scratch first, then the answer, each call
        assert_matches(exe(q, k, v), expected, 2e-6)
    for a, b in zip((q, k, v), kept):
        np.testing.assert_array_equal(a, b)
    assert exe.memory_stats()["temp_bytes"] == 2 * 64 * 64 * F32


def test_result_written_early_takes_no_temporary():
    # y = x @ w is written first and read by the rest: the temporaries after it cannot
    # live there; the answer must not change.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 48)).astype(np.float32)
    w = rng.standard_normal((48, 48)).astype(np.float32)

    def f(x, w):
        y = x @ w
        return y, jnp.tanh(y @ w.T) @ w

    text, _, expected = export_program(f, x, w)
    exe = mlxc.compile(text)
    assert_matches(exe(x, w), expected, 2e-5)


@pytest.mark.parametrize("kernel, padding, init", [
    ((3, 3), "SAME", False),
    ((3, 3), "SAME", True),                     # accumulated onto x (residual)
    ((5, 3), ((2, 1), (0, 2)), False),          # uneven, one side unpadded
    ((2, 2), "SAME", False),                    # even kernel: padding on one side
])
def test_unpadded_convolutions_match_jax(kernel, padding, init):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 9, 7, 8)).astype(np.float32)
    w = rng.standard_normal((*kernel, 8, 8)).astype(np.float32)

    def conv(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), padding,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.nn.relu(x + y) if init and y.shape == x.shape else y

    text, _, expected = export_program(conv, x, w)
    with mlxc.settings.override(unpadded_convs=True, cache=False):
        exe = mlxc.compile(text)
    assert_matches(exe(x, w), expected, 2e-5)
    if not init:
        assert exe.memory_stats()["temp_bytes"] == 0


def test_unpadded_residual_block_keeps_one_activation():
    # Two convolutions whose zero fills cse merges into one: each still fills its own
    # buffer region by region, so only the first activation is a temporary (as in XLA).
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 8, 16)).astype(np.float32)
    w1, w2 = (rng.standard_normal((3, 3, 16, 16)).astype(np.float32) for _ in range(2))

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def block(x, w1, w2):
        return jax.nn.relu(x + conv(jax.nn.relu(conv(x, w1)), w2))

    text, _, expected = export_program(block, x, w1, w2)
    with mlxc.settings.override(unpadded_convs=True, cache=False):
        exe = mlxc.compile(text)
    assert_matches(exe(x, w1, w2), expected, 2e-5)
    assert exe.memory_stats()["temp_bytes"] == x.nbytes


@pytest.mark.parametrize("x_shape,w_shape", [((8, 16, 32, 32), (32, 16, 3, 3)),
                                             ((2, 8, 16, 16), (16, 8, 3, 3))])
def test_padded_nchw_input_is_transposed_into_its_padded_buffer(x_shape, w_shape):
    # NCHW convolutions run as NHWC between transposes: the transposed input is written
    # straight into the interior of its padded copy (mlxc-pads-as-fills), which then
    # lives in the result buffer; only the NHWC result is a temporary, as in XLA.
    rng = np.random.default_rng(5)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)

    def conv(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    text, _, expected = export_program(conv, x, w)
    exe = mlxc.compile(text)
    assert_matches(exe(x, w), expected, 2e-5)
    xla = jax.jit(conv).lower(x, w).compile().memory_analysis().temp_size_in_bytes
    assert exe.memory_stats()["temp_bytes"] <= max(xla, expected[0].size * F32)


def _cross_entropy(logits, labels):
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return jnp.mean(lse - picked)


def test_gathered_labels_fuse_with_their_wrap():
    # take_along_axis wraps negative labels before reading logits[i, label[i]]; the gather
    # reads the wrapped label at its own row index, so the wrap fuses into it
    # (mlxc-extracts-as-inputs) and only the max and the sum of each row stay, as in XLA.
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((64, 100)).astype(np.float32)
    labels = rng.integers(-100, 100, size=64).astype(np.int32)   # negative ones wrap
    text, _, expected = export_program(_cross_entropy, logits, labels)
    exe = mlxc.compile(text)
    assert_matches(exe(logits, labels), expected, 2e-6)
    assert exe.memory_stats()["temp_bytes"] == 2 * 64 * F32


@pytest.mark.parametrize("threads", [1, 2])
def test_argmax_keeps_no_buffer_of_row_maxima(threads):
    # The running maximum of each row is not a result: bufferized, each row stored -inf
    # into a buffer of all rows' maxima only to copy it into its own accumulator
    # (mlxc-constant-buffers fills the accumulator instead). One float per row in flight
    # is left, as XLA's 80 bytes for argmax with top_k.
    x = np.random.default_rng(2).permutation(256 * 100).reshape(256, 100).astype(np.float32)
    text, _, expected = export_program(lambda v: jnp.argmax(v, axis=-1), x)
    with mlxc.settings.override(threads=threads):
        exe = mlxc.compile(text)
    assert_matches(exe(x), expected, 0)
    assert exe.memory_stats()["temp_bytes"] <= 2 * F32


def _int8_layer(x, w):
    xs = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / 127.0 + 1e-12
    xq = jnp.clip(jnp.round(x / xs), -127, 127).astype(jnp.int8)
    acc = lax.dot_general(xq, w, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * xs


def test_temporary_of_another_element_type_lives_in_the_result():
    # The int8 activations die in the product, before the f32 result is first written:
    # they live in the result buffer, seen as bytes (memref.view). Left are the int32
    # accumulator and the row scales, XLA's figure for this program.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = rng.integers(-127, 128, size=(64, 48)).astype(np.int8)
    kept = [x.copy(), w.copy()]
    text, _, expected = export_program(_int8_layer, x, w)
    exe = mlxc.compile(text)
    for _ in range(2):
        assert_matches(exe(x, w), expected, 1e-6)
    np.testing.assert_array_equal(x, kept[0])
    np.testing.assert_array_equal(w, kept[1])
    assert exe.memory_stats()["temp_bytes"] == 32 * 48 * 4 + 32 * F32
