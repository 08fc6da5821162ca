"""stablehlo.scatter and stablehlo.select_and_scatter against JAX (x.at[...], lax.scatter_*,
gradients of gather and max pooling) and, for what JAX cannot export (several operands
in one scatter), against the StableHLO interpreter."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import as_tuple, assert_matches, export_program
from mlxc.conformance.oracle import interpret

RNG = np.random.default_rng(0)


def _check(fn, *args, x64=False, rtol=1e-6):
    """Compile `fn`'s export, run it on `args` and compare with JAX; returns the IR text."""
    text, artifact, expected = export_program(fn, *args, x64=x64)
    exe = mlxc.compile(artifact)
    copies = [np.array(a, copy=True) for a in args]
    assert_matches(exe(*args), expected, rtol)
    for a, c in zip(args, copies):  # the caller's arrays are never written
        assert np.asarray(a).tobytes() == c.tobytes()
    return text


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _idx(high, *shape, low=0):
    return RNG.integers(low, high, size=shape).astype(np.int32)


# ------------------------------------------------------------------ x.at[...] updates

@pytest.mark.parametrize("method", ["add", "mul", "min", "max"])
def test_repeated_indices_combine(method):
    # Repeated indices: every update reaches the element, in the update computation.
    x, u, i = _f32(10, 3), _f32(40, 3), _idx(10, 40)
    text = _check(lambda x, i, u: getattr(x.at[i], method)(u), x, i, u, rtol=1e-5)
    assert "stablehlo.scatter" in text


def test_set_unique_indices():
    x, u = _f32(50, 4), _f32(20, 4)
    i = RNG.permutation(50)[:20].astype(np.int32)
    _check(lambda x, i, u: x.at[i].set(u, unique_indices=True), x, i, u)


def test_sorted_unique_indices_flags():
    x, u = _f32(30), _f32(12)
    i = np.sort(RNG.permutation(30)[:12]).astype(np.int32)
    _check(lambda x, i, u: x.at[i].add(u, indices_are_sorted=True, unique_indices=True), x, i, u)


def test_apply_runs_a_general_update_computation():
    # .apply's update computation ignores the update and calls sin: the general path.
    x, i = _f32(8, 5), np.array([1, 3, 3, 6], np.int32)
    _check(lambda x, i: x.at[i].apply(jnp.sin), x, i, rtol=1e-6)


@pytest.mark.parametrize("mode", ["clip", "drop", "promise_in_bounds", "fill"])
def test_out_of_bounds_modes(mode):
    # Indices past either end: "clip" clamps them, the others drop those updates.
    x, u = _f32(9, 4), _f32(7, 4)
    i = np.array([0, 8, 9, -10, 100, 3, -1], np.int32)
    if mode == "promise_in_bounds":
        i = np.array([0, 8, 2, 5, 4, 3, 1], np.int32)
    _check(lambda x, i, u: x.at[i].add(u, mode=mode), x, i, u)


def test_partly_out_of_bounds_window_is_skipped_whole():
    # Windows of 3 along a dimension of 5: starts 3 and 4 put part of the window outside,
    # -1 starts before it; XLA drops those windows entirely (no partial update).
    x, u = _f32(5, 2), _f32(4, 3, 2)
    i = np.array([[0], [3], [4], [-1]], np.int32)
    dims = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                       scatter_dims_to_operand_dims=(0,))
    _check(lambda x, i, u: lax.scatter_add(x, i, u, dims,
                                           mode=lax.GatherScatterMode.FILL_OR_DROP), x, i, u)


def test_multidimensional_windows_and_index_vectors():
    # x[i, :, j] += u with (i, j) pairs: two scattered dims, a window in the middle.
    x, u = _f32(6, 4, 7, 3), _f32(5, 4, 3)
    i, j = _idx(6, 5), _idx(7, 5)
    _check(lambda x, i, j, u: x.at[i, :, j].add(u), x, i, j, u, rtol=1e-5)


def test_window_dims_before_scatter_dims():
    # update_window_dims = (0, 2): the scatter dimension sits between window dimensions.
    x, u = _f32(3, 5, 4), _f32(3, 2, 4)
    i = np.array([[1], [3]], np.int32)
    dims = lax.ScatterDimensionNumbers(update_window_dims=(0, 2), inserted_window_dims=(1,),
                                       scatter_dims_to_operand_dims=(1,))
    _check(lambda x, i, u: lax.scatter_add(x, i, u, dims), x, i, u)


def test_index_vector_dim_not_last():
    x, u = _f32(6, 8), _f32(4)
    i = np.stack([_idx(6, 4), _idx(8, 4)], axis=0)  # index vectors along dimension 0
    dims = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1),
                                       scatter_dims_to_operand_dims=(0, 1))

    def f(x, i, u):
        return lax.scatter_mul(x, i.T, u, dims)  # JAX puts the vector last; transpose makes
                                                 # StableHLO read it along dimension 0 or 1
    _check(f, x, i, u, rtol=1e-5)


def test_scalar_index_rank0_update():
    x = _f32(7)
    _check(lambda x: x.at[3].set(5.0), x)


def test_batching_dims_from_vmap():
    x, u, i = _f32(4, 10, 3), _f32(4, 6, 3), _idx(10, 4, 6)
    text = _check(jax.vmap(lambda x, i, u: x.at[i].add(u)), x, i, u, rtol=1e-5)
    assert "input_batching_dims" in text


def test_nested_vmap_batching_dims():
    x, u, i = _f32(2, 3, 8), _f32(2, 3, 5), _idx(8, 2, 3, 5)
    f = jax.vmap(jax.vmap(lambda x, i, u: x.at[i].max(u)))
    _check(f, x, i, u)


ZERO_UPDATES = """
func.func @main(%x: tensor<5x2xf32>, %i: tensor<0x1xi32>, %u: tensor<0x2xf32>) -> tensor<5x2xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers =
      #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x2xf32>, tensor<0x1xi32>, tensor<0x2xf32>) -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}
"""


def test_zero_updates():
    # (JAX folds such a scatter away before export, so the program is written here.)
    x = _f32(5, 2)
    got = mlxc.compile(ZERO_UPDATES)(x, np.zeros((0, 1), np.int32), _f32(0, 2))
    np.testing.assert_array_equal(got, x)


def test_operand_still_used_after_the_scatter():
    # The scatter must not update its operand in place while the operand is still live.
    x, u, i = _f32(6), _f32(3), np.array([0, 2, 4], np.int32)
    _check(lambda x, i, u: (x.at[i].set(u), x * 2.0, x.at[i].add(u).at[i].mul(u)), x, i, u)


def test_set_with_repeated_indices_keeps_the_last():
    # JAX leaves the winner unspecified; XLA applies updates in order, and so does mlxc.
    x, u, i = _f32(10, 3), _f32(40, 3), _idx(10, 40)
    _check(lambda x, i, u: x.at[i].set(u), x, i, u)


def test_scatter_inside_loops_and_conditionals():
    x, u, i = _f32(10, 3), _f32(12, 3), _idx(10, 12)

    def f(x, i, u, p):
        x = lax.fori_loop(0, 4, lambda k, acc: acc.at[i].add(u * k), x)
        return lax.cond(p > 0, lambda: x.at[i].max(u), lambda: x.at[i].min(u))
    _check(f, x, i, u, np.float32(1), rtol=1e-5)
    _check(f, x, i, u, np.float32(-1), rtol=1e-5)


# ------------------------------------------------------------------ element types

@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64, np.int8,
                                   np.uint8, np.int16, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("method", ["set", "add", "min", "max"])
def test_element_types(dtype, method):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        # Large values: unsigned max/min must compare without sign (ui8 200 > 100).
        x = RNG.integers(info.min, info.max, size=(12, 2), dtype=dt, endpoint=True)
        u = RNG.integers(info.min, info.max, size=(9, 2), dtype=dt, endpoint=True)
    else:
        x, u = _f32(12, 2).astype(dt), _f32(9, 2).astype(dt)
    i = RNG.permutation(12)[:9].astype(np.int32) if method == "set" else _idx(12, 9)
    rtol = {np.dtype(np.float16): 1e-3, np.dtype(ml_dtypes.bfloat16): 1e-2}.get(dt, 1e-6)
    _check(lambda x, i, u: getattr(x.at[i], method)(u), x, i, u, x64=dt.itemsize == 8,
           rtol=rtol)


@pytest.mark.parametrize("method", ["set", "add", "mul"])
def test_complex(method):
    # Complex updates go through the general path (StableHLO ops on rank-0 tensors).
    x = (_f32(10, 2) + 1j * _f32(10, 2)).astype(np.complex64)
    u = (_f32(15, 2) + 1j * _f32(15, 2)).astype(np.complex64)
    i = RNG.permutation(10)[:9].astype(np.int32) if method == "set" else _idx(10, 9)
    _check(lambda x, i, u: getattr(x.at[i], method)(u[:9]), x, i, u, rtol=1e-5)


@pytest.mark.parametrize("method", ["set", "min", "max"])
def test_bool(method):
    x, u = RNG.random((10, 3)) < 0.5, RNG.random((6, 3)) < 0.5
    i = RNG.permutation(10)[:6].astype(np.int32)
    _check(lambda x, i, u: getattr(x.at[i], method)(u), x, i, u)


@pytest.mark.parametrize("index_dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64,
                                         np.uint64])
def test_index_types(index_dtype):
    # Unsigned indices keep their value (ui8 250 is out of bounds, not -6).
    x, u = _f32(300), _f32(6)
    i = np.array([1, 5, 250, 99, 7, 0], dtype=np.int64)
    i = i[i <= np.iinfo(index_dtype).max].astype(index_dtype)
    u = u[:len(i)]
    dims = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    _check(lambda x, i, u: lax.scatter_add(x, i[:, None], u, dims,
                                           mode=lax.GatherScatterMode.FILL_OR_DROP),
           x, i, u, x64=np.dtype(index_dtype).itemsize == 8)


# ------------------------------------------------------------------ several operands

VARIADIC = """
func.func @main(%a: tensor<5x3xf32>, %b: tensor<5x3xi32>, %i: tensor<4x1xi32>,
                %ua: tensor<4x3xf32>, %ub: tensor<4x3xi32>) -> (tensor<5x3xf32>, tensor<5x3xi32>) {
  %r:2 = "stablehlo.scatter"(%a, %b, %i, %ua, %ub) <{scatter_dimension_numbers =
      #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<i32>, %ux: tensor<f32>, %uy: tensor<i32>):
    %s = stablehlo.add %x, %ux : tensor<f32>
    %m = stablehlo.multiply %y, %uy : tensor<i32>
    %t = stablehlo.subtract %m, %y : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }) : (tensor<5x3xf32>, tensor<5x3xi32>, tensor<4x1xi32>, tensor<4x3xf32>, tensor<4x3xi32>)
       -> (tensor<5x3xf32>, tensor<5x3xi32>)
  return %r#0, %r#1 : tensor<5x3xf32>, tensor<5x3xi32>
}
"""


def test_several_operands_against_interpreter():
    inputs = [_f32(5, 3), RNG.integers(-3, 4, (5, 3)).astype(np.int32),
              np.array([[4], [0], [4], [7]], np.int32), _f32(4, 3),
              RNG.integers(-3, 4, (4, 3)).astype(np.int32)]
    expected = interpret(VARIADIC, inputs)
    # The interpreter leaves out-of-bounds updates implementation-defined: [7] is dropped
    # by both, which the first result checks below as well.
    got = as_tuple(mlxc.compile(VARIADIC)(*inputs))
    assert_matches(got, tuple(expected), 1e-6)
    np.testing.assert_array_equal(got[0][[1, 2, 3]], inputs[0][[1, 2, 3]])


# ------------------------------------------------------------------ gradients

def test_gather_gradient_is_a_scatter_add():
    x, w, i = _f32(20, 6), _f32(15, 6), _idx(20, 15)
    text = _check(jax.grad(lambda x, w, i: jnp.sum(jnp.sin(x[i]) * w)), x, w, i, rtol=1e-5)
    assert "stablehlo.scatter" in text


def test_embedding_gradient_2d_gather():
    # The vjp of an embedding lookup: (4, 7) ids into a (50, 8) table, repeats included.
    ids, g = _idx(50, 4, 7), _f32(4, 7, 8)
    table = jnp.zeros((50, 8), jnp.float32)
    _check(lambda ids, g: jax.vjp(lambda t: jnp.take(t, ids, axis=0), table)[1](g)[0],
           ids, g, rtol=1e-5)


@pytest.mark.parametrize("window,strides,padding", [
    ((2, 2), (2, 2), "VALID"),
    ((3, 3), (1, 1), "SAME"),
    ((3, 2), (2, 1), ((1, 1), (0, 1))),
])
def test_max_pool_gradient_is_select_and_scatter(window, strides, padding):
    x = _f32(2, 9, 8, 3)

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1,) + window + (1,),
                                 (1,) + strides + (1,), padding if isinstance(padding, str)
                                 else ((0, 0),) + padding + ((0, 0),))

    def grad(x):
        y, vjp = jax.vjp(pool, x)
        return vjp(jnp.cos(y))[0]

    text = _check(grad, x, rtol=1e-6)
    assert "stablehlo.select_and_scatter" in text


@pytest.mark.parametrize("shape,window,strides,padding", [
    ((1, 6, 6, 2), (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
    ((2, 9, 9, 3), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),   # ResNet's stem pooling
    ((2, 3, 8, 8), (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),   # NCHW
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
])
def test_max_pool_gradient_with_ties(shape, window, strides, padding):
    # After a ReLU whole windows are equal (0): the first element in row-major window
    # order receives the gradient, as in XLA. Distinct cotangents show where each went.
    x = np.maximum(np.round(np.random.default_rng(3).standard_normal(shape)), 0)
    x = x.astype(np.float32)

    def grad(x):
        y, vjp = jax.vjp(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, window, strides,
                                                     padding), x)
        return vjp(jnp.arange(y.size, dtype=jnp.float32).reshape(y.shape))[0]
    _check(grad, x, rtol=0)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64])
def test_max_pool_gradient_types(dtype):
    x, g = _f32(1, 8, 8, 2).astype(dtype), _f32(1, 4, 4, 2).astype(dtype)

    def grad(x, g):
        return jax.vjp(lambda x: lax.reduce_window(
            x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), x)[1](g)[0]
    _check(grad, x, g, x64=np.dtype(dtype).itemsize == 8)


@pytest.mark.parametrize("select,scatter,init", [
    (lax.le, lax.mul, 0.5),   # picks the minimum; multiplies into an init that is no identity
    (lax.ge, lax.add, -2.0),
    (lax.gt, lax.max, 0.0),
    # Regions of several ops, applied by moving them into the loops:
    (lambda a, b: jnp.abs(a) >= jnp.abs(b), lambda a, b: a - 2 * b, 1.0),
])
def test_general_select_and_scatter(select, scatter, init):
    # JAX exports these only through its internal primitive (what max pooling's gradient
    # uses with ge/add/0); XLA initializes the result with init once, then combines each
    # source value into it. Windows hang over the padding on both sides.
    from jax._src.lax.windowed_reductions import _select_and_scatter

    # Distinct values: which of several equal elements XLA selects depends on how it
    # rewrites the op (see test_max_pool_gradient_with_ties_picks_the_first).
    x = _f32(5, 7)
    src = _f32(3, 4)

    def f(x, src):
        return _select_and_scatter(x, select, (3, 2), (2, 2), ((1, 1), (0, 1)), src,
                                   np.float32(init), scatter)
    text = _check(f, x, src)
    assert "stablehlo.select_and_scatter" in text


UNSIGNED_SELECT_AND_SCATTER = """
func.func @main(%x: tensor<6x2xui8>, %s: tensor<2x2xui8>) -> (tensor<6x2xui8>, tensor<6x2xui8>) {
  %zero = stablehlo.constant dense<0> : tensor<ui8>
  %general = "stablehlo.select_and_scatter"(%x, %s, %zero) ({
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %na = stablehlo.not %a : tensor<ui8>
    %nb = stablehlo.not %b : tensor<ui8>
    %c = stablehlo.compare LT, %na, %nb, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %t = stablehlo.add %a, %b : tensor<ui8>
    stablehlo.return %t : tensor<ui8>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 3, 1>,
      padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>}
     : (tensor<6x2xui8>, tensor<2x2xui8>, tensor<ui8>) -> tensor<6x2xui8>
  %simple = "stablehlo.select_and_scatter"(%x, %s, %zero) ({
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %c = stablehlo.compare GT, %a, %b, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %t = stablehlo.add %a, %b : tensor<ui8>
    stablehlo.return %t : tensor<ui8>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 3, 1>,
      padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>}
     : (tensor<6x2xui8>, tensor<2x2xui8>, tensor<ui8>) -> tensor<6x2xui8>
  return %general, %simple : tensor<6x2xui8>, tensor<6x2xui8>
}
"""


@pytest.mark.parametrize("seed", range(3))
def test_unsigned_select_and_scatter_against_interpreter(seed):
    # Values above 127 must compare as unsigned, in moved regions and as arith alike;
    # both selects (~a < ~b and a > b) pick the last of equal maxima.
    rng = np.random.default_rng(seed)
    inputs = [rng.choice(np.array([3, 100, 200, 255], np.uint8), size=(6, 2)),
              rng.integers(0, 256, (2, 2)).astype(np.uint8)]
    expected = interpret(UNSIGNED_SELECT_AND_SCATTER, inputs)
    assert_matches(mlxc.compile(UNSIGNED_SELECT_AND_SCATTER)(*inputs), tuple(expected), 0)
