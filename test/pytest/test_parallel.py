"""Threads: the outer tiles of large ops run on the native runtime's pool
(runtime/mlxc_parallel.c); small work runs inline, MLXC_THREADS=1 emits no parallel code,
and results do not depend on the number of threads, in the JIT and in artifacts."""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import as_tuple, export_program
from mlxc.runtime import native


def _pool_stats() -> tuple[int, int]:
    """(loops run on the pool, blocks of iterations run by its workers)."""
    counts = (ctypes.c_int64 * 2)()
    native.load().mlxc_parallel_stats(counts)
    return counts[0], counts[1]


def _pool_runs() -> int:
    return _pool_stats()[0]


def _matmul_epilogue(a, b, c):
    return jnp.tanh(a @ b) + c


def _mlp(x, w1, w2):
    return jnp.maximum(x @ w1, 0) @ w2


def _elementwise(x, y):
    return jnp.tanh(x) * y + jnp.sqrt(jnp.abs(y))


def _reductions(x):
    return x.sum(0), x.max(1), jnp.mean(x * x), jax.nn.softmax(x, axis=-1)


def _conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _large_programs():
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {
        "matmul_epilogue": (_matmul_epilogue, (f32(256, 512), f32(512, 256), f32(256, 256))),
        "mlp": (_mlp, (f32(128, 512), f32(512, 1024) / 20, f32(1024, 256) / 30)),
        # Not contractions: their outer row (or column, or image) tiles are the threads'.
        "elementwise": (_elementwise, (f32(512, 300), f32(512, 300))),
        "reductions": (_reductions, (f32(1000, 520),)),
        "conv": (_conv, (f32(4, 20, 20, 16), f32(3, 3, 16, 24))),
    }


def _compile(text, threads, dump_dir=None, library_calls=False):
    """Generated code by default: the products these programs start with would
    otherwise call the runtime's kernel (test_library_matmul_threads covers that)."""
    with mlxc.settings.override(threads=threads, dump_dir=dump_dir, library_calls=library_calls):
        return mlxc.compile(text)


def _llvm_dump(folder) -> str:
    (path,) = glob.glob(os.path.join(folder, "*-llvm.mlir"))
    with open(path) as f:
        return f.read()


# 3 threads: more than this machine's cores (and the pool grows from 2 to 3).
@pytest.mark.parametrize("name,threads", [("matmul_epilogue", 2), ("mlp", 2), ("mlp", 3),
                                          ("elementwise", 2), ("reductions", 2), ("conv", 3)])
def test_threads_on_and_off_give_equal_results(name, threads, tmp_path):
    fn, args = _large_programs()[name]
    text, _, ref = export_program(fn, *args)
    threaded = _compile(text, threads, str(tmp_path / "on"))
    single = _compile(text, 1, str(tmp_path / "off"))
    assert "omp.parallel" in _llvm_dump(tmp_path / "on")
    assert "omp." not in _llvm_dump(tmp_path / "off")

    before = _pool_runs()
    out_threaded = as_tuple(threaded(*args))
    assert _pool_runs() > before, "the large op did not run on the pool"
    out_single = as_tuple(single(*args))
    # Each tile is computed the same way whichever thread runs it: equal to the bit.
    for t, s, r in zip(out_threaded, out_single, as_tuple(ref)):
        np.testing.assert_array_equal(t, s)
        np.testing.assert_allclose(t, r, rtol=2e-4, atol=2e-4)


def test_workers_take_blocks():
    """The pool's workers, not only the caller, run iterations. The machine may be
    busy enough that a worker wakes after the caller has taken every block, so call
    until one has (a few calls on an idle machine)."""
    fn, args = _large_programs()["matmul_epilogue"]
    text, _, _ = export_program(fn, *args)
    exe = _compile(text, 2)
    expected = as_tuple(exe(*args))[0].copy()
    runs, blocks = _pool_stats()
    for _ in range(500):
        np.testing.assert_array_equal(as_tuple(exe(*args))[0], expected)
        if _pool_stats()[1] > blocks:
            break
    assert _pool_stats()[1] > blocks, "no worker ever ran a block"
    assert _pool_stats()[0] > runs


def test_small_work_runs_inline(tmp_path):
    x = np.ones((8, 8), np.float32)
    text, _, _ = export_program(lambda a, b: a @ b + 1, x, x)
    exe = _compile(text, 2, str(tmp_path))
    assert "omp." not in _llvm_dump(tmp_path)
    before = _pool_runs()
    np.testing.assert_array_equal(exe(x, x), np.full((8, 8), 9, np.float32))
    assert _pool_runs() == before


def test_threads_setting_is_checked(monkeypatch):
    monkeypatch.setenv("MLXC_THREADS", "0")
    with pytest.raises(ValueError, match=r"MLXC_THREADS='0': expected an integer from 1 to 256"):
        mlxc.settings.get("threads")
    monkeypatch.setenv("MLXC_THREADS", "3")
    assert mlxc.settings.get("threads") == 3


@pytest.mark.parametrize("library_calls", [False, True])
def test_concurrent_callers_share_the_pool(library_calls):
    """Several Python threads call one threaded executable at once: one owns the pool
    for each parallel loop, the others run theirs inline; every result is right."""
    fn, (a, b, c) = _large_programs()["matmul_epilogue"]
    text, _, _ = export_program(fn, a, b, c)
    exe = _compile(text, 2, library_calls=library_calls)
    rng = np.random.default_rng(1)
    inputs = [(rng.standard_normal(a.shape).astype(np.float32), b,
               rng.standard_normal(c.shape).astype(np.float32)) for _ in range(8)]
    expected = [as_tuple(exe(*args))[0].copy() for args in inputs]
    for args, e in zip(inputs, expected):
        np.testing.assert_allclose(e, np.tanh(args[0] @ args[1]) + args[2], rtol=2e-4, atol=2e-4)
    barrier = threading.Barrier(4)
    snapshots = [tuple(x.copy() for x in args) for args in inputs]

    def work(i):
        barrier.wait()
        return [as_tuple(exe(*inputs[j % len(inputs)]))[0] for j in range(i, i + 12)]

    with ThreadPoolExecutor(4) as pool:
        for i, results in enumerate(pool.map(work, range(4))):
            for j, r in zip(range(i, i + 12), results):
                np.testing.assert_array_equal(r, expected[j % len(inputs)])
    for args, snap in zip(inputs, snapshots):  # the caller's arrays are untouched
        for x, s in zip(args, snap):
            np.testing.assert_array_equal(x, s)


def test_saved_artifact_runs_parallel_code(tmp_path):
    fn, args = _large_programs()["mlp"]
    text, _, ref = export_program(fn, *args)
    exe = _compile(text, 2, str(tmp_path / "dump"))
    assert "omp.parallel" in _llvm_dump(tmp_path / "dump")
    path = str(tmp_path / "mlp.so")
    exe.save(path)
    loaded = mlxc.load(path)
    expected = as_tuple(exe(*args))[0]
    with ThreadPoolExecutor(3) as pool:
        for out in pool.map(lambda _: as_tuple(loaded(*args))[0], range(6)):
            np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(expected, as_tuple(ref)[0], rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", ["matmul_epilogue", "mlp"])
def test_library_matmul_threads(name, tmp_path, monkeypatch):
    """The runtime's kernel (mlxc_sgemm) runs a large product on the pool, and gives
    the same bits on one thread and on two (each tile of C is one task's)."""
    from mlxc.targets.cpu import library_calls
    monkeypatch.setattr(library_calls, "MIN_M", 8)  # mlp's 128 rows too
    fn, args = _large_programs()[name]
    text, _, ref = export_program(fn, *args)
    threaded = _compile(text, 2, str(tmp_path / "on"), library_calls=True)
    single = _compile(text, 1, str(tmp_path / "off"), library_calls=True)
    assert "@mlxc_sgemm" in _llvm_dump(tmp_path / "on")
    before = _pool_runs()
    out_threaded = as_tuple(threaded(*args))
    assert _pool_runs() > before, "the product did not run on the pool"
    before = _pool_runs()
    out_single = as_tuple(single(*args))
    assert _pool_runs() == before
    for t, s, r in zip(out_threaded, out_single, as_tuple(ref)):
        np.testing.assert_array_equal(t, s)
        np.testing.assert_allclose(t, r, rtol=2e-4, atol=2e-4)
