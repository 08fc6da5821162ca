"""The CPU schedules (tiling + vectorization) against numpy/JAX, on shapes chosen to hit
their edge cases: dimensions with no good divisor, smaller than a register tile,
one-element, batched, strided and transposed operands, booleans, and the same
programs with the schedules off (MLXC_CPU_SCHEDULES=0) as a second opinion. Products
run both ways: through the runtime's kernel and generated (MLXC_LIBRARY_CALLS=0)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from mlxc.targets.cpu import schedules


def _compile(fn, *args, schedules_on=True, library_calls=True):
    text = jax.export.export(jax.jit(fn))(*args).mlir_module()
    with mlxc.settings.override(cpu_schedules=schedules_on, library_calls=library_calls):
        return mlxc.compile(text)


def _check(fn, *args, rtol=1e-5):
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(fn)(*args))]
    for on, library in ((True, True), (True, False), (False, False)):
        got = _compile(fn, *args, schedules_on=on, library_calls=library)(*args)
        got = got if isinstance(got, tuple) else (got,)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            if w.dtype == bool or np.issubdtype(w.dtype, np.integer):
                np.testing.assert_array_equal(g, w)
            else:
                err = np.linalg.norm(g.astype(np.float64) - w) / max(np.linalg.norm(w), 1e-30)
                assert err <= rtol, f"schedules={on} library={library}: error {err:.2e}"


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("m,k,n", [(64, 512, 96), (37, 53, 29), (1, 300, 1), (8, 1, 32),
                                   (130, 257, 70), (256, 256, 256)])
def test_matmul_shapes(m, k, n):
    rng = np.random.default_rng(m * 1000 + n)
    _check(lambda a, b: a @ b, _f(rng, m, k), _f(rng, k, n))


def test_matmul_epilogue_and_transposed_operands():
    rng = np.random.default_rng(1)
    _check(lambda a, b, c: jax.nn.relu(a @ b.T + c), _f(rng, 48, 80), _f(rng, 64, 80), _f(rng, 64))


def test_batched_and_einsum_contractions():
    rng = np.random.default_rng(2)
    q, k, v = _f(rng, 3, 40, 24), _f(rng, 3, 56, 24), _f(rng, 3, 56, 24)
    _check(lambda q, k, v: jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(
        jnp.einsum("bqd,bkd->bqk", q, k), axis=-1), v), q, k, v)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_convolutions(layout):
    rng = np.random.default_rng(3)
    if layout == "NHWC":
        x, w, dn = _f(rng, 2, 11, 13, 5), _f(rng, 3, 3, 5, 7), ("NHWC", "HWIO", "NHWC")
    else:
        x, w, dn = _f(rng, 2, 5, 11, 13), _f(rng, 7, 5, 3, 3), ("NCHW", "OIHW", "NCHW")
    _check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn), x, w)
    _check(lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "VALID", dimension_numbers=dn), x, w)


def test_reductions_elementwise_and_booleans():
    rng = np.random.default_rng(4)
    x = _f(rng, 33, 1009)  # a prime innermost dimension
    _check(lambda x: (x.sum(1), x.max(0), jnp.exp(x) * 2, x > 0.5, jnp.where(x > 0, x, 0.0)), x)
    y = _f(rng, 8, 1000)
    _check(lambda y: jax.nn.softmax(y, axis=-1), y)


def test_gather_and_broadcasts():
    rng = np.random.default_rng(5)
    table, ids = _f(rng, 100, 96), rng.integers(0, 100, (7, 5)).astype(np.int32)
    _check(lambda t, i: jnp.take(t, i, axis=0).mean(1) + t[:1], table, ids)


def _cross_entropy(logits, labels):
    # optax.softmax_cross_entropy_with_integer_labels, spelled as optax computes it.
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jax.nn.logsumexp(logits, axis=-1) - picked


# A gather from a slice reads a strided view of its operand's buffer (a subview): its
# vectorized offsets must follow the view's strides (mlxc-strided-gathers).
_SLICED_GATHERS = {
    "rows_cut": lambda l, t: jnp.take_along_axis(l[:, :-1], t[:, 1:, None], axis=-1),
    "rows_and_columns_cut": lambda l, t: jnp.take_along_axis(l[:, 1:, 2:7], t[:, 1:, None] % 5,
                                                             axis=-1),
    "strided_columns": lambda l, t: jnp.take_along_axis(l[:, :-1, ::2], t[:, 1:, None] % 4,
                                                        axis=-1),
    "batch_cut": lambda l, t: jnp.take_along_axis(l[1:], t[1:, :, None], axis=-1),
    "rank_4": lambda l, t: jnp.take_along_axis(l.reshape(2, 2, 2, 8)[:, :, 1:],
                                               t.reshape(2, 2, 2)[:, :, 1:, None], axis=-1),
    "rows_of_a_slice": lambda l, t: jnp.take(l[:, 1:3].reshape(4, 8), t[0, :3] % 4, axis=0),
    "cross_entropy": lambda l, t: _cross_entropy(
        l[:, :-1], t[:, 1:]).mean(),
}


@pytest.mark.parametrize("name", sorted(_SLICED_GATHERS))
def test_gathers_from_slices(name):
    l = np.arange(64, dtype=np.float32).reshape(2, 4, 8) / 7.0
    t = np.array([[1, 6, 7, 0], [3, 6, 7, 2]], np.int32)
    _check(_SLICED_GATHERS[name], l, t)


def test_gather_from_a_slice_of_a_language_model_batch():
    rng = np.random.default_rng(6)
    logits, tok = _f(rng, 4, 33, 50), rng.integers(0, 50, (4, 33)).astype(np.int32)
    _check(lambda l, t: _cross_entropy(
        l[:, :-1], t[:, 1:]).mean(), logits, tok)


def test_fit_picks_the_largest_divisor():
    assert schedules.fit(1024, 64) == 64
    assert schedules.fit(1000, 64) == 50
    assert schedules.fit(1009, 64) == 1
    assert schedules.fit(5, 64) == 5


def test_vector_lanes_fill_whole_registers():
    assert schedules.vector_lanes(1024) == 64
    assert schedules.vector_lanes(768) == 64
    assert schedules.vector_lanes(1000) == 40   # not 50: 2.5 registers, not 3 + 2 lanes
    assert schedules.vector_lanes(24) == 24
    assert schedules.vector_lanes(1009) == 1    # a prime: left to the caller
    assert schedules.vector_lanes(5) == 5


def test_contraction_register_columns_fill_registers():
    # A product's register tile is whole or half AVX-512 registers where the columns
    # allow: 1000 columns (cache tile 200) take 8 lanes, not 25 or 40, which ran 16x slower.
    assert schedules._register_columns(96) == 32
    assert schedules._register_columns(200) == 8
    assert schedules._register_columns(48) == 16
    assert schedules._register_columns(250) == 25   # no multiple of 8 divides it
    sched = schedules._contraction([1152, 1000, 6], [0], [1], [2], [])
    assert sched.levels[-1] == [8, 8, 1], sched


def test_matmul_is_tiled_and_vectorized():
    # The generated product: with MLXC_LIBRARY_CALLS=0, or when something is fused into
    # it (test_library_calls.py covers the runtime's kernel).
    rng = np.random.default_rng(6)
    text = jax.export.export(jax.jit(lambda a, b: a @ b))(_f(rng, 64, 512), _f(rng, 512, 96)).mlir_module()
    with mlxc.settings.override(library_calls=False):
        fused = mlxc.lower(text, stop_after="fuse")
    assert "linalg.matmul" not in fused and "vector.fma" in fused
    assert "iter_args" in fused and "-> (vector<8x32xf32>)" in fused  # accumulator in registers
    with mlxc.settings.override(cpu_schedules=False):
        assert "linalg.matmul" in mlxc.lower(text, stop_after="fuse")


def test_rank0_ops_that_gather_stay_scalar():
    # jnp.quantile of a vector reads its two neighbours with tensor.extract inside a
    # rank-0 linalg op, which the vectorizer crashed on (the whole process).
    rng = np.random.default_rng(7)
    _check(lambda x: (jnp.quantile(x, 0.3), jnp.median(x)), _f(rng, 15))


@pytest.mark.parametrize("shape", [(64, 512), (33, 1000), (5, 768), (7, 24), (3, 4, 320)])
def test_row_reductions_with_a_vector_accumulator(shape):
    # Rows reduced lane-wise into a vector accumulator, then a halving tree: sums,
    # products, extrema, full reductions, and lengths with no power-of-two divisor
    # (1000 -> 40 lanes, a tree down to 5 lanes).
    rng = np.random.default_rng(8)
    x = _f(rng, *shape)
    _check(lambda x: (x.sum(-1), x.max(-1), x.min(-1), jnp.mean(x * x), jnp.abs(x).max(),
                      jnp.prod(1.0 + 0.001 * x, axis=-1), x.sum(tuple(range(1, x.ndim)))), x)


def test_row_reductions_of_integers_and_halves():
    rng = np.random.default_rng(9)
    i = rng.integers(-1000, 1000, (9, 512)).astype(np.int32)
    _check(lambda i: (i.sum(1), i.max(1), i.min(1), jnp.bitwise_xor.reduce(i, axis=1)), i)
    h = _f(rng, 9, 512)
    for dtype in (jnp.bfloat16, jnp.float16):
        _check(lambda h: (h.astype(dtype).max(1), h.astype(dtype).sum(1)), h, rtol=1e-2)


@pytest.mark.parametrize("n", [256, 1009, 40])
def test_row_extrema_propagate_nan(n):
    # 1009 (prime: one odd vector) and 40 (halved to 5): NaN in the odd last lane too.
    # (-0.0 against 0.0 is left out: XLA's max does not order signed zeros.)
    x = np.full((6, n), -0.0, np.float32)
    x[0, 3], x[1, n - 1], x[2, n // 2] = np.nan, np.nan, 0.0
    x[3] = np.arange(n, dtype=np.float32)
    x[4, 7] = -np.inf
    x[5, n - 1] = 5.0
    # numpy as the reference: XLA's own min/max drop a NaN in some lanes, which the
    # spec (IEEE minimum/maximum) does not allow.
    exe = _compile(lambda x: (x.max(1), x.min(1), jnp.argmax(x, 1)), x)
    got = exe(x)
    want = [np.max(x, 1), np.min(x, 1), np.argmax(x, 1).astype(np.int32)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_row_reduction_schedule_keeps_the_accumulator_in_registers():
    rng = np.random.default_rng(10)
    text = jax.export.export(jax.jit(lambda x: x.max(1)))(_f(rng, 16, 512)).mlir_module()
    fused = mlxc.lower(text, stop_after="fuse")
    assert "-> (vector<64xf32>)" in fused  # carried across the reduction loop
    assert "vector<512xf32>" not in fused and "vector<1x512xf32>" not in fused
    # Rows of 1000 (no chunk of whole registers): chunks of one 8-lane register, not
    # of 40 lanes (2.5 registers, 1.6x slower).
    text = jax.export.export(jax.jit(lambda x: x.sum(1)))(_f(rng, 16, 1000)).mlir_module()
    fused = mlxc.lower(text, stop_after="fuse")
    assert "-> (vector<8xf32>)" in fused and "vector<40xf32>" not in fused


@pytest.mark.parametrize("shape,perm", [((64, 48), (1, 0)), ((3, 32, 80), (0, 2, 1)),
                                        ((16, 4, 32), (2, 1, 0)), ((40, 24), (1, 0)),
                                        ((17, 32), (1, 0)), ((4, 64, 31), (2, 0, 1)),
                                        ((100, 96), (1, 0)), ((3, 31, 24, 32), (0, 2, 3, 1)),
                                        ((36, 4), (1, 0)), ((52, 12), (1, 0))])
def test_transposes(shape, perm):
    # Tiles transposed in registers (f32, i32): 8x8 where both loops divide by 8; a
    # side of 31 or 12 whole, of 100 by 4, next to a side of 8; other shapes (4x36,
    # 17x32) and element types keep the one-vector schedule.
    rng = np.random.default_rng(11)
    x = _f(rng, *shape)
    i = rng.integers(-99, 99, shape).astype(np.int32)
    _check(lambda x, i: (jnp.transpose(x, perm) * 2.0 + 1.0, jnp.transpose(i, perm) - 3,
                         jnp.transpose(x.astype(jnp.bfloat16), perm)), x, i)



@pytest.mark.parametrize("shape,perm,tile", [((64, 48), (1, 0), "8x8"), ((4, 64, 31), (2, 0, 1), "8x31"),
                                             ((100, 96), (1, 0), "8x4"), ((36, 4), (1, 0), None)])
def test_transpose_tiles(shape, perm, tile):
    # Which register tile a transpose gets (the speed of transposes whose sides do not
    # divide by 8 rests on it: [8,1024,31] -> (2,0,1) ran 4.4x XLA's time as one
    # vector, 0.8x in 8x31 tiles).
    text = jax.export.export(jax.jit(lambda x: jnp.transpose(x, perm)))(
        np.zeros(shape, np.float32)).mlir_module()
    fused = mlxc.lower(text, stop_after="fuse")
    tiles = set(re.findall(r"vector<(\d+x\d+)xf32>", fused))
    if tile is None:
        assert not any(t.split("x")[0] != "1" and t.split("x")[1] != "1" for t in tiles), tiles
    else:
        assert tile in tiles, tiles

@pytest.mark.parametrize("shape,perm", [((64, 128), (1, 0)), ((4, 128, 64), (0, 2, 1)),
                                        ((6, 40, 24), (1, 2, 0)), ((16, 100), (1, 0))])
def test_elementwise_with_a_transposed_operand(shape, perm):
    """`x + y.T` (an MLP-mixer's token mixing, a residual around a transposed branch)
    reads y along another loop than x and the result: 8x8 register tiles transposed in
    registers, as a transpose gets, where a vector along x's rows read y one element at
    a time (64 scalar loads for each 64-lane vector), and the values match JAX."""
    rng = np.random.default_rng(16)
    y = _f(rng, *shape)
    x = _f(rng, *[shape[p] for p in perm])
    fn = lambda x, y: x * 2.0 + jnp.transpose(y, perm)  # noqa: E731
    _check(fn, x, y)
    fused = mlxc.lower(jax.export.export(jax.jit(fn))(x, y).mlir_module(), stop_after="fuse")
    tiles = {t for t in re.findall(r"vector<(\d+)x(\d+)xf32>", fused)}
    assert any(int(a) > 1 and int(b) > 1 for a, b in tiles), tiles


@pytest.mark.parametrize("shape", [(300, 512), (7, 768), (50, 3, 1000)])
def test_column_reductions(shape):
    # Vectors of up to 256 lanes along the contiguous (parallel) dimension, carried
    # across the rows.
    rng = np.random.default_rng(13)
    x = _f(rng, *shape)
    i = rng.integers(-99, 99, shape).astype(np.int32)
    _check(lambda x, i: (x.sum(0), x.max(0), jnp.prod(1.0 + 0.001 * x, axis=0), i.sum(0),
                         i.min(0)), x, i)


def test_reductions_of_bodies_that_read_their_indices():
    # An iota fused into the reduction (linalg.index in its body): each lane of the
    # accumulator must see its own column.
    rng = np.random.default_rng(14)
    x = _f(rng, 64, 512)
    cols = lambda: jnp.arange(512, dtype=jnp.float32)  # noqa: E731
    _check(lambda x: (jnp.sum(jnp.where(jnp.arange(512) < 300, x, 0.0), axis=1),
                      jnp.sum(x * cols(), axis=1),
                      jnp.max(x + jnp.arange(64, dtype=jnp.float32)[:, None] * cols(), axis=1),
                      jnp.sum(x * jnp.arange(64 * 512, dtype=jnp.float32).reshape(64, 512))), x)


def test_boolean_masks_read_once_per_vector():
    # A bool operand whose indexing map skips the vectorized loop is one element per
    # vector (broadcast), so the op is vectorized; along that loop it stays scalar.
    rng = np.random.default_rng(15)
    x, rows, cols = _f(rng, 40, 512), rng.random(40) > 0.5, rng.random(512) > 0.5
    fn = lambda x, r, c: (jnp.where(r[:, None], x, -1.0), jnp.where(c[None, :], x, 2.0),  # noqa: E731
                          jnp.where(r[:, None], x, 0.0).sum(0))
    _check(fn, x, rows, cols)
    fused = mlxc.lower(jax.export.export(jax.jit(lambda x, r: jnp.where(r[:, None], x, -1.0)))(
        x, rows).mlir_module(), stop_after="fuse")
    assert "vector<64xf32>" in fused


def test_rolled_loops_reach_llvm_ir_as_loop_metadata():
    """mlxc-rolled-loops marks the loops around vector code `unroll.disable`; that hint
    must survive to LLVM IR's llvm.loop metadata (renamed on the cf.br by
    mlxc-loop-annotations, it becomes llvm.br's own attribute), or LLVM unrolls them
    again and compiles several times the code."""
    from mlxc._mlir import ir, new_context, translate_module_to_llvmir

    rng = np.random.default_rng(17)
    x = _f(rng, 64, 1000)
    text = jax.export.export(jax.jit(lambda x: jnp.tanh(x) * 2.0 + 1.0))(x).mlir_module()
    lowered = mlxc.lower(text)
    with new_context():
        llvm_ir = translate_module_to_llvmir(ir.Module.parse(lowered).operation)
    assert "llvm.loop.unroll.disable" in llvm_ir
    assert "{llvm.loop_annotation = " not in lowered
