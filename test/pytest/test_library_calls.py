"""f32 products with nothing fused into them call the runtime's packed kernel
(runtime/mlxc_gemm.c, targets/cpu/library_calls.py): results against JAX on shapes
around the kernel's blockings (6-row and 64-column tiles, 256-deep and 512-wide
blocks), transposed and broadcast operands, batches, the JIT and a saved artifact;
which products take the call and which keep their generated code."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import as_tuple, export_program, normwise_error
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
    # Matrix-vector products (packing B for one row doubles the traffic) and tiny ones.
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


def test_only_products_of_many_rows_call_it():
    # The default policy: packing pays off over many rows.
    rng = np.random.default_rng(7)
    _check(lambda a, b: a @ b, _f(rng, 64, 256), _f(rng, 256, 512), calls=0)
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


def test_saved_artifact_calls_its_own_kernel(tmp_path, small_products_too):
    rng = np.random.default_rng(6)
    a, b = _f(rng, 200, 300), _f(rng, 300, 150)
    exe, out = _check(lambda a, b: a @ b, a, b, calls=1)
    path = str(tmp_path / "mm.so")
    exe.save(path)
    loaded = mlxc.load(path)
    np.testing.assert_array_equal(as_tuple(loaded(a, b))[0], out[0])
