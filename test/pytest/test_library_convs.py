"""f32 NHWC convolutions call the runtime's kernel (runtime/mlxc_conv.c,
targets/cpu/library_convs.py), which reads the unpadded input: results against
jax.lax.conv_general_dilated around the kernel's blockings (12-pixel tiles, 24-pixel
blocks, 32- and 16-channel panels), with SAME/VALID/explicit padding, strides,
dilations, batches, few input channels, 1-D convolutions, epilogues and gradients; no
padded copy in memory_stats(); the JIT, threads and a saved artifact."""

from __future__ import annotations

import ctypes

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import as_tuple, export_program, normwise_error
from mlxc.runtime import native

NHWC = ("NHWC", "HWIO", "NHWC")


def _f(rng, *shape, scale: float = 1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _lowered(text, stop_after="bufferize", **settings) -> str:
    with mlxc.settings.override(cache=False, **settings):
        return mlxc.lower(text, stop_after=stop_after)


def _check(fn, *args, calls: int, rtol: float = 2e-6, x64: bool = False, **settings):
    text, _, ref = export_program(fn, *args, x64=x64)
    assert _lowered(text, **settings).count("call @mlxc_sconv(") == calls
    copies = [a.copy() for a in args]
    with mlxc.settings.override(cache=False, **settings):
        exe = mlxc.compile(text)
    out = as_tuple(exe(*args))
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype
        assert normwise_error(o, r) <= rtol, normwise_error(o, r)
    for a, c in zip(args, copies):  # the caller's arrays are untouched
        np.testing.assert_array_equal(a, c)
    return exe, out


def _conv(strides=(1, 1), padding="SAME", dilation=(1, 1)):
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilation,
                                                 dimension_numbers=NHWC)


# (input NHWC, filter HWIO, strides, padding, filter dilation): pixel counts on and
# off the 12/24 multiples, channels on and off the 16/32 panels.
CASES = {
    "same_3x3": ((2, 8, 9, 16), (3, 3, 16, 32), (1, 1), "SAME", (1, 1)),
    "valid_odd": ((3, 7, 11, 5), (3, 2, 5, 17), (1, 1), "VALID", (1, 1)),
    "one_channel": ((1, 13, 13, 1), (5, 5, 1, 8), (1, 1), "SAME", (1, 1)),
    "rgb_strided": ((2, 15, 17, 3), (3, 3, 3, 48), (2, 2), "SAME", (1, 1)),
    "strided_valid": ((1, 16, 16, 8), (2, 2, 8, 33), (2, 2), "VALID", (1, 1)),
    "dilated": ((2, 12, 10, 6), (3, 3, 6, 20), (1, 1), "SAME", (2, 3)),
    "explicit_padding": ((1, 9, 10, 4), (3, 4, 4, 64), (1, 2), ((2, 0), (1, 3)), (1, 1)),
    "wide_padding": ((1, 3, 3, 2), (5, 5, 2, 70), (1, 1), ((4, 4), (4, 4)), (1, 1)),
    "many_channels": ((1, 6, 6, 300), (3, 3, 300, 16), (1, 1), "SAME", (1, 1)),
    "one_pixel": ((1, 1, 1, 7), (1, 1, 7, 3), (1, 1), "VALID", (1, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_convolutions_match_jax(name):
    xs, ws, strides, padding, dilation = CASES[name]
    rng = np.random.default_rng(sum(xs) * 7 + sum(ws))
    _check(_conv(strides, padding, dilation), _f(rng, *xs), _f(rng, *ws, scale=0.3), calls=1)


# Depthwise (feature_group_count = C): channels on and off the 16-lane vectors, rows
# on and off the 8-pixel groups, taps in the padding on every side.
DEPTHWISE = {
    "same_3x3": ((2, 9, 21, 64), (3, 3), (1, 1), "SAME", (1, 1)),
    "odd_channels": ((1, 7, 12, 19), (3, 3), (1, 1), "SAME", (1, 1)),
    "strided": ((2, 16, 15, 32), (3, 3), (2, 2), "SAME", (1, 1)),
    "dilated_valid": ((1, 12, 30, 16), (3, 2), (1, 1), "VALID", (2, 3)),
    "wide_padding": ((1, 3, 4, 5), (5, 5), (1, 1), ((4, 3), (2, 4)), (1, 1)),
}


@pytest.mark.parametrize("name", sorted(DEPTHWISE))
def test_depthwise_convolutions_match_jax(name):
    xs, k, strides, padding, dilation = DEPTHWISE[name]
    rng = np.random.default_rng(sum(xs) * 3 + sum(k))
    x, w = _f(rng, *xs), _f(rng, *k, 1, xs[-1])
    conv = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, strides, padding, rhs_dilation=dilation, dimension_numbers=NHWC,
        feature_group_count=xs[-1])
    exe, _ = _check(conv, x, w, calls=0)  # not mlxc_sconv: its own kernel
    text = export_program(conv, x, w)[0]
    assert _lowered(text).count("call @mlxc_sconv_depthwise(") == 1
    if padding == "SAME":
        assert exe.memory_stats()["temp_bytes"] == 0  # no padded copy


def test_depthwise_one_dimensional():
    rng = np.random.default_rng(11)
    x, w = _f(rng, 2, 50, 24), _f(rng, 5, 1, 24)
    conv = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=24)
    _check(conv, x, w, calls=0)
    assert _lowered(export_program(conv, x, w)[0]).count("call @mlxc_sconv_depthwise(") == 1


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(2, 1)]])
def test_one_dimensional(padding):
    rng = np.random.default_rng(1)
    x, w = _f(rng, 3, 37, 20), _f(rng, 5, 20, 24, scale=0.3)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1,), padding,  # noqa: E731
                                                 dimension_numbers=("NWC", "WIO", "NWC"))
    _check(conv, x, w, calls=1)


def test_other_layouts_run_through_the_kernel():
    # mlxc-conv-nhwc-layout makes NCHW/OIHW an NHWC/HWIO convolution between transposes;
    # the filter's transpose is not made: the kernel reads the OIHW filter in place.
    rng = np.random.default_rng(2)
    x, w = _f(rng, 2, 16, 10, 10), _f(rng, 24, 16, 3, 3, scale=0.2)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",  # noqa: E731
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    exe, _ = _check(conv, x, w, calls=1)
    buffers = _lowered(export_program(conv, x, w)[0])
    assert "memref<3x3x16x24xf32>" not in buffers  # no HWIO copy of the filter
    assert "memref<2x12x12x16xf32>" not in buffers  # no padded input
    generated, _ = _check(conv, x, w, calls=0, library_calls=False)
    assert exe.memory_stats()["temp_bytes"] <= generated.memory_stats()["temp_bytes"]


def test_epilogue_runs_on_the_call_output():
    # relu(conv(x, w) + b): the convolution calls the kernel; bias and relu are
    # generated code writing over the call's output, so nothing is added to memory.
    rng = np.random.default_rng(3)
    x, w, b = _f(rng, 2, 10, 10, 16), _f(rng, 3, 3, 16, 32, scale=0.2), _f(rng, 32)
    exe, _ = _check(lambda x, w, b: jax.nn.relu(_conv()(x, w) + b), x, w, b, calls=1)
    assert exe.memory_stats()["temp_bytes"] == 0


def test_input_computed_by_the_program():
    # The input is an elementwise result and a slice of an argument (a view, not the
    # start of a buffer): the call gets a buffer it can read densely.
    rng = np.random.default_rng(4)
    x, w = _f(rng, 2, 12, 12, 8), _f(rng, 3, 3, 8, 16, scale=0.3)
    _check(lambda x, w: _conv()(jnp.tanh(x), w), x, w, calls=1)
    _check(lambda x, w: _conv()(x[:, 1:-2, 2:, :], w), x, w, calls=1)


@pytest.mark.parametrize("groups", [1, 6])
def test_infinite_weights_meet_the_padding(groups):
    # A padded tap multiplies its weight by zero: an infinite weight makes NaN at the
    # edges (and inf inside), as XLA's padded input does; the kernels skip no such tap.
    rng = np.random.default_rng(14)
    x, w = _f(rng, 1, 9, 10, 6), _f(rng, 3, 3, 6 // groups, 6)
    w[0, 0] = np.inf
    conv = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (1, 1), "SAME", dimension_numbers=NHWC, feature_group_count=groups)
    text, _, ref = export_program(conv, x, w)
    lowered = _lowered(text)
    assert "call @mlxc_sconv" in lowered
    with mlxc.settings.override(cache=False):
        out = mlxc.compile(text)(x, w)
    assert np.isnan(ref[0]).any()
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref[0]))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref[0]))


def test_inside_loops_and_branches():
    # The call and its output buffer inside an scf.for (lax.fori_loop) and scf.if arms.
    rng = np.random.default_rng(12)
    x, w = _f(rng, 2, 10, 10, 8), _f(rng, 3, 3, 8, 8, scale=0.2)
    _check(lambda x, w: lax.fori_loop(0, 3, lambda i, y: jnp.tanh(_conv()(y, w)), x), x, w,
           calls=1)
    branches = lambda x, w, p: lax.cond(p > 0, lambda: _conv()(x, w),  # noqa: E731
                                        lambda: _conv()(2 * x, w) + 1)
    _check(branches, x, w, np.float32(1), calls=2)
    _check(branches, x, w, np.float32(-1), calls=2)


def test_residual_block_shares_nothing_padded():
    # Two convolutions (cse shares their zero fill) and a relu between them: one
    # temporary (the first output, which the relu overwrites), no padded copies.
    rng = np.random.default_rng(5)
    x = _f(rng, 4, 16, 16, 32)
    w1, w2 = _f(rng, 3, 3, 32, 32, scale=0.1), _f(rng, 3, 3, 32, 32, scale=0.1)

    def block(x, w1, w2):
        y = jax.nn.relu(_conv()(x, w1))
        return jax.nn.relu(x + _conv()(y, w2))

    exe, _ = _check(block, x, w1, w2, calls=2)
    assert exe.memory_stats()["temp_bytes"] == x.nbytes
    generated, _ = _check(block, x, w1, w2, calls=0, library_calls=False)
    assert generated.memory_stats()["temp_bytes"] > x.nbytes  # with a padded copy


def test_same_convolution_needs_no_temporary():
    rng = np.random.default_rng(6)
    x, w = _f(rng, 8, 32, 32, 16), _f(rng, 3, 3, 16, 32, scale=0.2)
    exe, _ = _check(_conv(), x, w, calls=1)
    assert exe.memory_stats()["temp_bytes"] == 0
    generated, _ = _check(_conv(), x, w, calls=0, library_calls=False)
    assert generated.memory_stats()["temp_bytes"] >= 8 * 34 * 34 * 16 * 4  # a padded copy
    text = export_program(_conv(), x, w)[0]
    # Nothing of the convolution is tiled or vectorized, or compiled through LLVM.
    assert "vector." not in _lowered(text, stop_after="lower")
    # A batch of one, whose unit dimension mlxc-fold-unit-extent-dims folds around the
    # padding (collapse, pad, expand): still read in place.
    exe, _ = _check(_conv(), x[:1], w, calls=1)
    assert exe.memory_stats()["temp_bytes"] == 0


def test_gradients():
    # jax.grad of a convolution: the input gradient and the weight gradient are
    # convolutions too (the latter over the batch, with a 16x16 "filter").
    rng = np.random.default_rng(7)
    x, w = _f(rng, 4, 16, 16, 16), _f(rng, 3, 3, 16, 16, scale=1 / 12)

    def loss(w, x):
        return jnp.sum(jnp.tanh(_conv()(x, w)) ** 2)

    _check(lambda w, x: jax.grad(loss, argnums=(0, 1))(w, x), w, x, calls=3, rtol=1e-5)


def test_what_keeps_generated_code():
    rng = np.random.default_rng(8)
    x, w = _f(rng, 2, 8, 8, 4), _f(rng, 3, 3, 4, 8)
    # Other element types.
    _check(_conv(), x.astype(np.float64), w.astype(np.float64), calls=0, rtol=1e-12,
           x64=True)
    # Groups of several channels (neither dense nor depthwise).
    grouped = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (1, 1), "SAME", dimension_numbers=NHWC, feature_group_count=2)
    _check(grouped, x, _f(rng, 3, 3, 2, 8), calls=0)
    # Off: the generated convolution, tiled and vectorized.
    text = export_program(_conv(), x, w)[0]
    assert "mlxc_sconv" not in _lowered(text, stop_after="lower", library_calls=False)
    _check(_conv(), x, w, calls=0, library_calls=False)


def _pool_runs() -> int:
    counts = (ctypes.c_int64 * 2)()
    native.load().mlxc_parallel_stats(counts)
    return counts[0]


def test_threads_give_the_same_result():
    # A large convolution runs on the pool; small ones, and MLXC_THREADS=1, inline.
    # The sums are the same whichever thread computes a pixel.
    rng = np.random.default_rng(9)
    x, w = _f(rng, 4, 32, 32, 16), _f(rng, 3, 3, 16, 32, scale=0.2)
    text = export_program(_conv(), x, w)[0]
    outs = []
    for threads in (1, 2):
        with mlxc.settings.override(cache=False, threads=threads):
            exe = mlxc.compile(text)
        before = _pool_runs()
        outs.append(exe(x, w))
        assert (_pool_runs() > before) == (threads > 1)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_saved_artifact_calls_its_own_kernel(tmp_path):
    rng = np.random.default_rng(10)
    x, w = _f(rng, 2, 9, 11, 3), _f(rng, 3, 3, 3, 40, scale=0.3)
    exe, out = _check(_conv((1, 1), "SAME"), x, w, calls=1)
    path = str(tmp_path / "conv.so")
    exe.save(path)
    loaded = mlxc.load(path)
    np.testing.assert_array_equal(as_tuple(loaded(x, w))[0], out[0])


# ---- the kernels called directly: random shapes, against a numpy reference ----

def _reference(x, w, strides, dilations, low, out_hw, depthwise):
    """The convolution in float64 through an explicitly padded input."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    oh, ow = out_hw
    high = [max(0, (o - 1) * s + (k - 1) * d + 1 - lo - size) for o, s, k, d, lo, size in
            zip(out_hw, strides, (kh, kw), dilations, low, (h, wd))]
    padded = np.pad(x.astype(np.float64), ((0, 0), (low[0], high[0]), (low[1], high[1]), (0, 0)))
    out = np.zeros((n, oh, ow, c if depthwise else w.shape[-1]))
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dilations[0], j * dilations[1]
            patch = padded[:, y0:y0 + (oh - 1) * strides[0] + 1:strides[0],
                           x0:x0 + (ow - 1) * strides[1] + 1:strides[1], :]
            out += patch * w[i, j] if depthwise else patch @ w[i, j].astype(np.float64)
    return out


@pytest.mark.parametrize("depthwise", [False, True])
def test_kernels_on_random_shapes(depthwise):
    lib = native.load()
    fn = lib.mlxc_sconv_depthwise if depthwise else lib.mlxc_sconv
    ptr, i64 = ctypes.c_void_p, ctypes.c_int64
    fn.argtypes = [ptr] * 3 + [i64] * (14 if depthwise else 19) + [ctypes.c_int32]
    fn.restype = None
    rng = np.random.default_rng(13 + depthwise)
    for _ in range(60):
        n, h, w_, c = (int(v) for v in rng.integers(1, [4, 12, 12, 40]))
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        f = int(rng.integers(1, 80))
        strides = [int(v) for v in rng.integers(1, 4, 2)]
        dilations = [int(v) for v in rng.integers(1, 4, 2)]
        low = [int(v) for v in rng.integers(0, 5, 2)]
        reach = [(k - 1) * d + 1 for k, d in zip((kh, kw), dilations)]
        out_hw = [max(1, (size + lo + int(rng.integers(0, 5)) - r) // s + 1)
                  for size, lo, r, s in zip((h, w_), low, reach, strides)]
        x = _f(rng, n, h, w_, c)
        w = _f(rng, kh, kw, c) if depthwise else _f(rng, kh, kw, c, f)
        out = np.full((n, *out_hw, c if depthwise else f), np.nan, np.float32)
        sizes = [n, h, w_, c, kh, kw] + ([] if depthwise else [f]) + out_hw + strides + \
            dilations + low
        stored = w
        if not depthwise:
            # The filter as stored in some other order (OIHW, IOWH, ...), read through
            # its strides.
            order = [int(d) for d in rng.permutation(4)]
            stored = np.ascontiguousarray(w.transpose(order))
            in_stored = [order.index(d) for d in range(4)]
            sizes += [stored.strides[in_stored[d]] // 4 for d in range(4)]
        want = _reference(x, w, strides, dilations, low, out_hw, depthwise)
        for threads in (1, 2):
            out[...] = np.nan
            fn(x.ctypes.data, stored.ctypes.data, out.ctypes.data, *sizes, threads)
            assert normwise_error(out, want) <= 1e-6, (sizes, threads)
