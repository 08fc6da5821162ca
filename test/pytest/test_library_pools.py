"""f32 max and sum poolings call the runtime's kernel (runtime/mlxc_pool.c,
targets/cpu/library_pools.py), which skips the taps in the padding: results against
jax.lax.reduce_window with SAME/VALID/explicit padding, strides, dilations, odd sizes,
channels on and off the kernel's 16, NaN and signed zeros; no padded copy in
memory_stats(); 1 and 2 threads bit-equal; a saved artifact; and what keeps its
generated code."""

from __future__ import annotations

import ctypes

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import as_tuple, export_program
from mlxc.runtime import native

CALL = "call @mlxc_spool("


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _lowered(text, **settings) -> str:
    with mlxc.settings.override(cache=False, **settings):
        return mlxc.lower(text, stop_after="bufferize")


def _run(text, args, **settings):
    copies = [a.copy() for a in args]
    with mlxc.settings.override(cache=False, **settings):
        exe = mlxc.compile(text)
    out = as_tuple(exe(*args))
    for a, c in zip(args, copies):  # the caller's arrays are untouched
        np.testing.assert_array_equal(a, c)
    return exe, out


def _max_pool(window, strides, padding, dilation=None):
    return lambda x: lax.reduce_window(x, -jnp.inf, lax.max, window, strides, padding,
                                       window_dilation=dilation)


def _sum_pool(window, strides, padding, dilation=None):
    return lambda x: lax.reduce_window(x, 0.0, lax.add, window, strides, padding,
                                       window_dilation=dilation)


# (input, window, strides, padding, window dilation): NHWC unless the window says
# otherwise; channels on and off multiples of 16 (the kernel takes 16 and more),
# outputs with a window wholly in the padding.
CASES = {
    "same_3x3_s2": ((2, 9, 11, 32), (1, 3, 3, 1), (1, 2, 2, 1), "SAME", None),
    "same_2x2_s1": ((1, 7, 6, 16), (1, 2, 2, 1), (1, 1, 1, 1), "SAME", None),
    "valid_3x3_s1": ((3, 8, 7, 17), (1, 3, 3, 1), (1, 1, 1, 1), "VALID", None),
    "valid_2x2_s2": ((2, 10, 10, 16), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None),
    "explicit": ((1, 5, 9, 20), (1, 3, 2, 1), (1, 1, 2, 1),
                 ((0, 0), (2, 1), (0, 3), (0, 0)), None),
    "wide_padding": ((1, 2, 3, 40), (1, 3, 3, 1), (1, 1, 1, 1),
                     ((0, 0), (4, 4), (3, 5), (0, 0)), None),
    "dilated": ((2, 11, 9, 23), (1, 3, 2, 1), (1, 1, 2, 1), "SAME", (1, 2, 3, 1)),
    "rows_only": ((2, 9, 4, 33), (1, 3, 1, 1), (1, 2, 1, 1), "SAME", None),
    "batch_of_one": ((1, 12, 12, 48), (1, 3, 3, 1), (1, 2, 2, 1), "SAME", None),
    # 1-D (NWC), the init a generic that yields a constant from outside it.
    "nwc": ((2, 10, 16), (1, 3, 1), (1, 2, 1), "SAME", None),
    # Channels after the window's dims: 4 x 16 of them.
    "window_first": ((9, 7, 4, 16), (3, 2, 1, 1), (2, 1, 1, 1), "SAME", None),
}


@pytest.mark.parametrize("kind", ["max", "sum"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_pools_match_jax(name, kind):
    shape, window, strides, padding, dilation = CASES[name]
    fn = (_max_pool if kind == "max" else _sum_pool)(window, strides, padding, dilation)
    x = _f(np.random.default_rng(sum(shape)), *shape)
    text, _, (ref,) = export_program(fn, x)
    assert _lowered(text).count(CALL) == 1
    _, (out,) = _run(text, [x])
    assert out.shape == ref.shape and out.dtype == ref.dtype
    if kind == "max":
        np.testing.assert_array_equal(out, ref)
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    # The taps are added in the generated code's order: the same sums to the bit.
    _, (generated,) = _run(text, [x], library_calls=False)
    np.testing.assert_array_equal(out, generated)


def test_short_cumsum_is_a_sum_pool():
    # JAX exports cumsum as a reduce_window over the row padded by n - 1 zeros; a short
    # float one keeps that form (mlxc-reduce-window-scans), in the interpreter's order.
    fn = lambda x: jnp.cumsum(x, axis=0)
    x = _f(np.random.default_rng(7), 9, 20)
    text, _, (ref,) = export_program(fn, x)
    assert _lowered(text).count(CALL) == 1
    _, (out,) = _run(text, [x])
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    _, (generated,) = _run(text, [x], library_calls=False)
    np.testing.assert_array_equal(out, generated)


def test_average_pool_divides_the_kernels_sum():
    fn = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9.0
    x = _f(np.random.default_rng(3), 2, 9, 9, 24)
    text, _, (ref,) = export_program(fn, x)
    assert _lowered(text).count(CALL) == 1
    _, (out,) = _run(text, [x])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_nan_propagates_and_signed_zeros_are_ordered():
    rng = np.random.default_rng(5)
    x = _f(rng, 2, 7, 8, 21)
    x[0, 3, 4, :] = np.nan           # one tap of several windows, every channel
    x[1, 0, 0, 2] = np.nan           # a corner, next to the padding
    x[1, 4:, :, 5:9] = 0.0           # +0 and -0 side by side: max is +0
    x[1, 4:, ::2, 5:9] = -0.0
    x[1, :3, :, 19:] = -0.0          # only -0: max is -0
    fn = _max_pool((1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    text, _, (ref,) = export_program(fn, x)
    _, (out,) = _run(text, [x])
    np.testing.assert_array_equal(out, ref)  # NaN where JAX has NaN
    assert np.isnan(out).any()
    np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))
    _, (generated,) = _run(text, [x], library_calls=False)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(generated))


def _pool_runs() -> int:
    counts = (ctypes.c_int64 * 2)()
    native.load().mlxc_parallel_stats(counts)
    return counts[0]


def test_threads_give_the_same_result():
    # Large enough (2^20 taps x channels) to run on mlxc's pool with 2 threads; the sums
    # are the same whichever thread computes a row.
    fn = _sum_pool((1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    x = _f(np.random.default_rng(9), 4, 32, 32, 64)
    text, _, (ref,) = export_program(fn, x)
    outs = []
    for threads in (1, 2):
        with mlxc.settings.override(cache=False, threads=threads):
            exe = mlxc.compile(text)
        before = _pool_runs()
        outs.append(exe(x))
        assert (_pool_runs() > before) == (threads > 1)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def test_saved_artifact_calls_its_own_kernel(tmp_path):
    fn = _max_pool((1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    x = _f(np.random.default_rng(21), 2, 9, 11, 24)
    text, _, (ref,) = export_program(fn, x)
    exe, (out,) = _run(text, [x])
    path = str(tmp_path / "pool.so")
    exe.save(path)
    np.testing.assert_array_equal(as_tuple(mlxc.load(path)(x))[0], ref)


def test_same_max_pool_makes_no_padded_copy():
    fn = _max_pool((1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    x = _f(np.random.default_rng(11), 8, 32, 32, 32)
    text, _, (ref,) = export_program(fn, x)
    exe, (out,) = _run(text, [x])
    np.testing.assert_array_equal(out, ref)
    assert exe.memory_stats()["temp_bytes"] == 0
    generated, _ = _run(text, [x], library_calls=False)
    assert generated.memory_stats()["temp_bytes"] >= 8 * 33 * 33 * 32 * 4  # a padded copy


def test_conv_relu_max_pool_needs_only_the_conv_output():
    # bench/unseen.py's conv_s2_maxpool: XLA's temporaries are the conv's output alone.
    def fn(x, w):
        y = lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax.reduce_window(jnp.maximum(y, 0.0), -jnp.inf, lax.max, (1, 3, 3, 1),
                                 (1, 2, 2, 1), "SAME")
    rng = np.random.default_rng(13)
    x, w = _f(rng, 8, 64, 64, 16), _f(rng, 3, 3, 16, 32)
    text, _, (ref,) = export_program(fn, x, w)
    exe, (out,) = _run(text, [x, w])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    assert exe.memory_stats()["temp_bytes"] == 8 * 32 * 32 * 32 * 4


# What keeps generated code: each reduces something the kernel does not.
KEPT = {
    # Starting from 1, not -inf.
    "max_from_one": (lambda x: lax.reduce_window(x, 1.0, lax.max, (1, 3, 3, 1),
                                                 (1, 2, 2, 1), "SAME"), np.float32),
    # (VALID: with padding, the spec pads with the init, which XLA counts only once.)
    "sum_from_one": (lambda x: lax.reduce_window(x, 1.0, lax.add, (1, 2, 2, 1),
                                                 (1, 1, 1, 1), "VALID"), np.float32),
    "min": (lambda x: lax.reduce_window(x, jnp.inf, lax.min, (1, 3, 3, 1), (1, 2, 2, 1),
                                        "SAME"), np.float32),
    "f16": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                        "SAME"), np.float16),
    # Under 16 channels after the window's dims (one at a time, slower than generated).
    "few_channels": (lambda x: lax.reduce_window(x[..., :15], -jnp.inf, lax.max,
                                                 (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                     np.float32),
    "nchw": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                                         "SAME"), np.float32),
    # A window along the batch and channels too.
    "window_over_channels": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 2),
                                                         (1, 1, 1, 1), "SAME"), np.float32),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_what_keeps_generated_code(name):
    fn, dtype = KEPT[name]
    x = _f(np.random.default_rng(17), 2, 7, 7, 16).astype(dtype)
    text, _, (ref,) = export_program(fn, x)
    assert CALL not in _lowered(text)
    _, (out,) = _run(text, [x])
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=1e-3,
                               atol=1e-3)


def test_library_calls_off_keeps_generated_code():
    text, _, _ = export_program(_max_pool((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                _f(np.random.default_rng(1), 1, 8, 8, 16))
    assert CALL in _lowered(text)
    assert CALL not in _lowered(text, library_calls=False)


def test_a_padding_of_zeros_is_no_padding_of_a_max():
    # Zeros are not max's identity: the padded input is made and the kernel reads it
    # whole (its taps in the padding count, as in JAX).
    fn = lambda x: lax.reduce_window(jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))), -jnp.inf,
                                     lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "VALID")
    x = -np.abs(_f(np.random.default_rng(19), 2, 7, 7, 16))  # the zeros are the maxima
    text, _, (ref,) = export_program(fn, x)
    exe, (out,) = _run(text, [x])
    np.testing.assert_array_equal(out, ref)
    assert (out[:, 0] == 0).all() and (out[:, 1:-1, 1:-1] < 0).all()
    assert exe.memory_stats()["temp_bytes"] == 2 * 9 * 9 * 16 * 4


def _cnn(pool):
    """Two convolutions, each followed by a 2x2 pooling, and a dense layer: the shape of
    a flax CNN (nn.Conv, nn.max_pool / nn.avg_pool, nn.Dense)."""
    def window(x):
        if pool == "max":
            return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4

    def forward(w1, w2, w3, x):
        dn = ("NHWC", "HWIO", "NHWC")
        x = window(jnp.maximum(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn), 0))
        x = window(jnp.maximum(lax.conv_general_dilated(x, w2, (1, 1), "SAME", dimension_numbers=dn), 0))
        return x.reshape(x.shape[0], -1) @ w3

    return forward


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_cnn_with_two_poolings_and_its_gradient(pool):
    # Several products and poolings set aside in one module: each pooling was told
    # apart by comparing it with ops already moved and erased ("the operation has been
    # invalidated").
    import jax
    rng = np.random.default_rng(0)
    args = (_f(rng, 3, 3, 4, 16), _f(rng, 3, 3, 16, 16), _f(rng, 3 * 3 * 16, 10), _f(rng, 2, 12, 12, 4))
    forward = _cnn(pool)
    loss = lambda w1, w2, w3, x: jnp.mean(forward(w1, w2, w3, x) ** 2)
    for fn in (forward, jax.grad(loss, argnums=(0, 1, 2))):
        text, _, expected = export_program(fn, *args)
        if pool == "max":
            assert text.count("stablehlo.reduce_window") >= 2
        got = as_tuple(mlxc.compile(text)(*args))
        for g, w in zip(got, expected):
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5 * np.abs(w).max())
