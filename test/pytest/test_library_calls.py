"""f32 products with nothing fused into them call the runtime's packed kernel
(runtime/mlxc_gemm.c, targets/cpu/library_calls.py): results against JAX on shapes
around the kernel's blockings (6-row and 64-column tiles, 256-deep and 512-wide
blocks), transposed and broadcast operands, batches, the JIT and a saved artifact;
which products take the call and which keep their generated code. The kernel itself,
called directly, against numpy: every edge tile (1-6 rows, 1-64 columns), A and B read
in place or packed, every layout, split K, threads, accumulation."""

from __future__ import annotations

import ctypes
import re


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import as_tuple, export_program, normwise_error
from mlxc.runtime import native
from mlxc.targets.cpu import library_calls


@pytest.fixture
def small_products_too(monkeypatch):
    """The kernel for products of any size (by default small ones keep generated code):
    edge cases of its blocking are cheap to reach on small shapes."""
    monkeypatch.setattr(library_calls, "MIN_M", 8)
    monkeypatch.setattr(library_calls, "MIN_WORK", 0)


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _lowered(text) -> str:
    with mlxc.settings.override(cache=False):
        return mlxc.lower(text, stop_after="lower")


def _check(fn, *args, calls: int, rtol: float = 2e-6):
    text, _, ref = export_program(fn, *args)
    assert _lowered(text).count("call @mlxc_sgemm") == calls
    copies = [a.copy() for a in args]
    with mlxc.settings.override(cache=False):  # the size limits are not in the cache key
        exe = mlxc.compile(text)
    out = as_tuple(exe(*args))
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype
        assert normwise_error(o, r) <= rtol
    for a, c in zip(args, copies):  # the caller's arrays are untouched
        np.testing.assert_array_equal(a, c)
    return exe, out


@pytest.mark.parametrize("m,n,k", [(8, 16, 8), (37, 70, 50), (12, 64, 256), (13, 65, 257),
                                   (100, 300, 513), (130, 1030, 40), (64, 512, 256)])
def test_plain_products(m, n, k, small_products_too):
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    _check(lambda a, b: a @ b, _f(rng, m, k), _f(rng, k, n), calls=1)


def test_transposed_operands_are_read_in_place(small_products_too):
    rng = np.random.default_rng(1)
    x, dy, w = _f(rng, 64, 256), _f(rng, 64, 128), _f(rng, 96, 256)
    _check(lambda x, dy: x.T @ dy, x, dy, calls=1)        # a weight gradient
    _check(lambda x, w: x @ w.T, x, w, calls=1)
    _check(lambda x, dy: (x.T @ dy).T, x, dy, calls=1)    # a transposed result


def test_batched_and_broadcast_products(small_products_too):
    rng = np.random.default_rng(2)
    q, k = _f(rng, 3, 40, 24), _f(rng, 3, 56, 24)
    _check(lambda q, k: jnp.einsum("bqd,bkd->bqk", q, k), q, k, calls=1)
    a, b = _f(rng, 4, 33, 20), _f(rng, 4, 20, 70)
    _check(lambda a, b: a @ b, a, b, calls=1)


def test_epilogue_runs_on_the_call_output(small_products_too):
    # relu(x @ w + b): the product calls the kernel; bias and relu stay generated code.
    rng = np.random.default_rng(3)
    x, w, b = _f(rng, 64, 256), _f(rng, 256, 512), _f(rng, 512)
    _check(lambda x, w, b: jax.nn.relu(x @ w + b), x, w, b, calls=1)


def test_what_keeps_generated_code(small_products_too):
    rng = np.random.default_rng(4)
    # Matrix-vector products (a 6-row tile, 1 row full) and tiny ones.
    _check(lambda v, w: v @ w, _f(rng, 1, 256), _f(rng, 256, 64), calls=0)
    _check(lambda a, b: a @ b, _f(rng, 4, 8), _f(rng, 8, 4), calls=0)
    # Other element types (f16 and bf16 products are computed in f32, so they call it).
    i = rng.integers(-9, 9, (32, 32)).astype(np.int32)
    _check(lambda a, b: a @ b, i, i, calls=0, rtol=0)
    h = rng.standard_normal((32, 48)).astype(np.float16)
    _check(lambda a, b: a @ b.T, h, h, calls=1, rtol=1e-3)
    # Off: the generated product, tiled and vectorized.
    a, b = _f(rng, 64, 96), _f(rng, 96, 80)
    text, _, ref = export_program(lambda a, b: a @ b, a, b)
    with mlxc.settings.override(library_calls=False, cache=False):
        lowered = mlxc.lower(text, stop_after="lower")
        assert "mlxc_sgemm" not in lowered and "vector.fma" in lowered
        assert normwise_error(mlxc.compile(text)(a, b), ref[0]) <= 2e-6


def test_default_policy():
    # From 8 rows and 2^19 multiply-adds the kernel is as fast as generated code; thinner
    # products (matrix-vector) and tiny ones (an RNN step) keep the generated code.
    rng = np.random.default_rng(7)
    _check(lambda a, b: a @ b, _f(rng, 4, 256), _f(rng, 256, 512), calls=0)
    _check(lambda a, b: a @ b, _f(rng, 16, 128), _f(rng, 128, 128), calls=0)
    _check(lambda a, b: a @ b, _f(rng, 64, 256), _f(rng, 256, 512), calls=1)
    _check(lambda a, b: a @ b, _f(rng, 256, 256), _f(rng, 256, 512), calls=1)


def test_schedules_leave_the_product_whole(small_products_too):
    # mlxc-apply-cpu-schedules sets the product aside and puts it back untouched: one
    # linalg.matmul after the fuse stage, no vector code for it, no leftovers.
    rng = np.random.default_rng(5)
    text, _, _ = export_program(lambda a, b: jnp.tanh(a) @ b, _f(rng, 64, 128), _f(rng, 128, 96))
    with mlxc.settings.override(cache=False):
        fused = mlxc.lower(text, stop_after="fuse")
    assert fused.count("linalg.matmul") == 1 and "linalg.fill" in fused
    assert "mlxc_set_aside" not in fused and "math.tanh" in fused



def test_products_sharing_a_zero_fill_overwrite(small_products_too):
    # q, k and v of one input: cse shares one zero fill among the three products. Each
    # call writes its C (accumulate 0) and no fill loop is left before it (the shared
    # fill stayed behind as a loop nest and every call added to it).
    rng = np.random.default_rng(6)
    x, wq, wk, wv = _f(rng, 64, 96), _f(rng, 96, 96), _f(rng, 96, 96), _f(rng, 96, 96)

    def fn(x, a, b, c):
        return x @ a, jnp.tanh(x @ b), (x @ c) * 2.0

    text, _, _ = export_program(fn, x, wq, wk, wv)
    calls = re.findall(r"call @mlxc_sgemm\(([^)]*)\)", _lowered(text))
    assert len(calls) == 3 and all(c.endswith(", %c0_i32") for c in calls), calls
    _check(fn, x, wq, wk, wv, calls=3)


def test_saved_artifact_calls_its_own_kernel(tmp_path, small_products_too):
    rng = np.random.default_rng(6)
    a, b = _f(rng, 200, 300), _f(rng, 300, 150)
    exe, out = _check(lambda a, b: a @ b, a, b, calls=1)
    path = str(tmp_path / "mm.so")
    exe.save(path)
    loaded = mlxc.load(path)
    np.testing.assert_array_equal(as_tuple(loaded(a, b))[0], out[0])


# ---- the kernel called directly ----

def _sgemm():
    f = native.load().mlxc_sgemm
    f.argtypes = [ctypes.c_int64] * 4 + ([ctypes.c_void_p] + [ctypes.c_int64] * 3) * 3 + \
        [ctypes.c_int32] * 2
    f.restype = None
    return f


def _pool_runs() -> int:
    counts = (ctypes.c_int64 * 2)()
    native.load().mlxc_parallel_stats(counts)
    return counts[0]


def _call(a, b, c, threads: int, accumulate: bool) -> None:
    """C (+)= A @ B on 3-D views (batch, rows, columns) of any element strides."""
    def arg(x):
        return [x.ctypes.data] + [s // 4 for s in x.strides]
    batch, m, k = a.shape
    _sgemm()(batch, m, b.shape[2], k, *arg(a), *arg(b), *arg(c), threads, int(accumulate))


def _operand(rng, batch, rows, cols, transposed: bool, broadcast: bool = False):
    """A (batch, rows, cols) view: row-major, or the transpose of a row-major array, or
    one matrix broadcast over the batch (stride 0)."""
    n = 1 if broadcast else batch
    x = _f(rng, n, cols, rows).transpose(0, 2, 1) if transposed else _f(rng, n, rows, cols)
    return np.broadcast_to(x, (batch, rows, cols)) if broadcast else x


def _product(a, b):
    return np.einsum("bik,bkj->bij", a.astype(np.float64), b.astype(np.float64))


def _close(out, ref, k):
    tol = 1e-6 * max(1, k) ** 0.5
    assert np.abs(out - ref).max() <= tol * max(1.0, np.abs(ref).max()), np.abs(out - ref).max()


# Rows 1-7 and 13 reach every tile height (6 and the 1-5 row edges); columns reach every
# width of 1-4 vectors with and without a masked tail, and a second 512-column block;
# depths split into one, two and three equal K blocks.
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7, 13])
@pytest.mark.parametrize("n,k", [(1, 9), (15, 300), (16, 1), (33, 64), (64, 257), (65, 40),
                                 (130, 513), (577, 20)])
def test_kernel_edge_tiles(m, n, k):
    rng = np.random.default_rng(m * 1000 + n * 7 + k)
    a, b = _operand(rng, 1, m, k, False), _operand(rng, 1, k, n, False)
    # C inside a wider buffer: the columns past n (and the rows' padding) stay untouched.
    buf = np.full((1, m, n + 21), 7.0, np.float32)
    c = buf[:, :, 3:n + 3]
    _call(a, b, c, threads=1, accumulate=False)
    _close(c, _product(a, b), k)
    assert (buf[:, :, :3] == 7).all() and (buf[:, :, n + 3:] == 7).all()


@pytest.mark.parametrize("ta,tb,tc", [(False, False, False), (True, False, False),
                                      (False, True, False), (True, True, True),
                                      (False, False, True)])
def test_kernel_layouts(ta, tb, tc):
    # A read in place (rows contiguous) or packed (transposed), B packed from either
    # layout, C written through a local tile when its rows are not contiguous.
    rng = np.random.default_rng(11)
    # Few rows (B read in place by panels), blocks of 192 rows over a B block that fits
    # in L2, and a B block too large for that (packed once, shared by all rows).
    for batch, m, n, k in [(3, 37, 70, 50), (2, 128, 64, 128), (1, 10, 512, 128),
                           (1, 64, 256, 512), (1, 400, 130, 100), (1, 200, 530, 256)]:
        a, b = _operand(rng, batch, m, k, ta), _operand(rng, batch, k, n, tb)
        c = np.zeros((batch, n, m), np.float32).transpose(0, 2, 1) if tc else \
            np.zeros((batch, m, n), np.float32)
        copies = a.copy(), b.copy()
        _call(a, b, c, threads=2, accumulate=False)
        _close(c, _product(a, b), k)
        np.testing.assert_array_equal(a, copies[0])
        np.testing.assert_array_equal(b, copies[1])


@pytest.mark.parametrize("batch,m,n,k", [(2, 37, 70, 50), (1, 400, 130, 100), (1, 200, 530, 256)])
def test_kernel_strided_operands(batch, m, n, k):
    # Neither stride 1 (every other row, every third column): A is packed (once per K
    # block, or a micro-panel at a time), B gathered into packed panels.
    rng = np.random.default_rng(k)
    a = _f(rng, batch, 2 * m, 3 * k)[:, ::2, ::3]
    b = _f(rng, batch, 3 * k, 2 * n)[:, ::3, ::2]
    one, two = (np.zeros((batch, m, n), np.float32) for _ in range(2))
    _call(a, b, one, threads=1, accumulate=False)  # the largest: B packed in one block
    _call(a, b, two, threads=2, accumulate=False)  # narrower tasks: blocks of rows
    _close(one, _product(a, b), k)
    np.testing.assert_array_equal(one, two)


def test_kernel_accumulates_and_broadcasts():
    rng = np.random.default_rng(12)
    a, b = _operand(rng, 4, 50, 300, False), _operand(rng, 4, 300, 90, True, broadcast=True)
    start = _f(rng, 4, 50, 90)
    c = start.copy()
    _call(a, b, c, threads=2, accumulate=True)
    _close(c, start + _product(a, b), 300)


@pytest.mark.parametrize("batch,m,n,k,ta", [(1, 64, 512, 256, False), (4, 128, 64, 128, False),
                                            (1, 1030, 130, 70, False), (2, 256, 512, 128, True),
                                            (1, 13, 1100, 600, True), (1, 197, 577, 256, False),
                                            (1, 250, 600, 256, True)])
def test_kernel_threads_give_the_same_bits(batch, m, n, k, ta):
    # Two threads split columns (or rows, for narrow products) into tasks, which may
    # take another path than one thread does (a narrower B block is read in place where
    # the whole one is packed); each element of C gets the same sums in the same order.
    rng = np.random.default_rng(m + n + k)
    a, b = _operand(rng, batch, m, k, ta), _operand(rng, batch, k, n, False)
    one, two = (np.empty((batch, m, n), np.float32) for _ in range(2))
    _call(a, b, one, threads=1, accumulate=False)
    before = _pool_runs()
    _call(a, b, two, threads=2, accumulate=False)
    assert _pool_runs() > before, "the product did not run on the pool"
    np.testing.assert_array_equal(one, two)
    _close(one, _product(a, b), k)


def test_kernel_empty_and_zero_depth():
    c = np.full((2, 3, 5), 4.0, np.float32)
    a, b = np.zeros((2, 3, 0), np.float32), np.zeros((2, 0, 5), np.float32)
    _call(a, b, c, threads=2, accumulate=True)   # adding nothing
    assert (c == 4).all()
    _call(a, b, c, threads=2, accumulate=False)  # overwriting with empty sums
    assert (c == 0).all()
