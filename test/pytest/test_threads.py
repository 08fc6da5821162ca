"""One executable called from several threads at once; compiles in parallel too."""

import threading
from concurrent.futures import ThreadPoolExecutor

import jax.numpy as jnp
import numpy as np

import mlxc
from helpers import export_program


def test_concurrent_calls_are_independent():
    text, _, _ = export_program(lambda x, s: jnp.tanh(x * s).sum(0), np.ones((64, 32), np.float32),
                                np.float32(1))
    exe = mlxc.compile(text)
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal((64, 32)).astype(np.float32), np.float32(i / 10)) for i in range(32)]
    expected = [np.tanh(x * s).sum(0) for x, s in inputs]
    barrier = threading.Barrier(4)

    def work(i):
        if i < 4:
            barrier.wait()
        results = [exe(*inputs[i]) for _ in range(20)]
        return i, results

    with ThreadPoolExecutor(4) as pool:
        for i, results in pool.map(work, range(len(inputs))):
            for r in results:
                np.testing.assert_allclose(r, expected[i], rtol=1e-5, atol=1e-5)


def test_parallel_compiles():
    sources = [export_program(lambda x, k=k: x * k + k, np.ones(8, np.float32))[0] for k in range(6)]
    with ThreadPoolExecutor(3) as pool:
        exes = list(pool.map(mlxc.compile, sources))
    for k, exe in enumerate(exes):
        np.testing.assert_array_equal(exe(np.ones(8, np.float32)), np.full(8, 2 * k, np.float32))
