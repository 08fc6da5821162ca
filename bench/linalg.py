"""jnp.linalg on the CPU: mlxc (runtime/mlxc_lapack.c) against jax.jit (LAPACK), per op, size and dtype.

    python bench/linalg.py [--ops cholesky solve lu qr eigh svd] [--sizes 64 128 256 512]
                           [--dtypes f32 f64] [--batch 1] [--threads 1] [--rounds 3] [--batch-ms 100]

Each program is exported from JAX (`jax.export`, so mlxc compiles the LAPACK custom
calls jax.jit runs) and both are timed in alternating batches in this process, so that
other load hits both alike; the figure is the best batch mean. ratio = mlxc time / jax
time: below 1.5 is the target, below 1 means mlxc is faster. `err` is each result's
accuracy check (as LAPACK's own: residual and orthogonality, relative to eps * n), for
mlxc and for jax. Both run on `--threads` threads (default 1: the kernels use one, and
on a loaded machine OpenBLAS's spinning threads make its times erratic).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np


def _ops():
    import jax.numpy as jnp
    from jax import lax

    return {"cholesky": (jnp.linalg.cholesky, "spd"),
            "solve": (lambda a, b: jnp.linalg.solve(a, b), "general+rhs"),
            "lu": (lax.linalg.lu, "general"),
            "qr": (jnp.linalg.qr, "general"),
            "eigh": (jnp.linalg.eigh, "spd"),
            "svd": (lambda a: jnp.linalg.svd(a, full_matrices=False), "general")}


def _inputs(kind: str, shape, dtype, rng):
    a = rng.standard_normal(shape).astype(dtype)
    n = shape[-1]
    if kind == "spd":
        return [(a @ np.swapaxes(a, -1, -2) / n + np.eye(n)).astype(dtype)]
    if kind == "general+rhs":
        return [a, rng.standard_normal(shape).astype(dtype)]
    return [a]


def _error(op: str, args, out) -> float:
    """A backward error in units of eps * n: the factorization's residual plus, where
    the op returns orthonormal factors, their distance from orthonormality."""
    a = args[0].astype(np.float64)
    eps, n = np.finfo(args[0].dtype).eps, a.shape[-1]
    out = [np.asarray(o).astype(np.float64) if np.asarray(o).dtype.kind == "f" else np.asarray(o)
           for o in (out if isinstance(out, (tuple, list)) else (out,))]
    t = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    eye = np.eye(n)
    scale = np.abs(a).max()
    if op == "cholesky":
        err = np.abs(out[0] @ t(out[0]) - a).max() / scale
    elif op == "solve":
        err = np.abs(a @ out[0] - args[1]).max() / (scale * np.abs(out[0]).max())
    elif op == "lu":
        lu, perm = out[0], out[2]
        lower = np.tril(lu, -1) + eye
        rows = np.take_along_axis(a, perm[..., None].astype(np.int64), axis=-2)
        err = np.abs(lower @ np.triu(lu) - rows).max() / scale
    elif op == "qr":
        q, r = out
        err = max(np.abs(q @ r - a).max() / scale, np.abs(t(q) @ q - eye).max())
    elif op == "eigh":
        w, v = out
        err = max(np.abs(a @ v - v * w[..., None, :]).max() / scale, np.abs(t(v) @ v - eye).max())
    else:
        u, s, vt = out
        err = max(np.abs((u * s[..., None, :]) @ vt - a).max() / scale,
                  np.abs(t(u) @ u - eye).max(), np.abs(vt @ t(vt) - eye).max())
    return float(err / (eps * n))


def _time_alternating(calls, rounds: int, batch_s: float) -> list[float]:
    sizes = []
    for call in calls:
        call()
        t = time.perf_counter()
        call()
        sizes.append(max(1, int(batch_s / max(time.perf_counter() - t, 1e-6))))
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, (call, n) in enumerate(zip(calls, sizes)):
            t = time.perf_counter()
            for _ in range(n):
                call()
            best[i] = min(best[i], (time.perf_counter() - t) / n)
    return best


def measure(op: str, n: int, dtype: str, batch: int, rounds: int, batch_s: float) -> dict:
    import jax

    import mlxc

    fn, kind = _ops()[op]
    np_dtype = {"f32": np.float32, "f64": np.float64}[dtype]
    shape = (batch, n, n) if batch > 1 else (n, n)
    args = _inputs(kind, shape, np_dtype, np.random.default_rng(0))
    with jax.enable_x64(dtype == "f64"):
        jitted = jax.jit(fn)
        exported = jax.export.export(jitted)(*args)
        exe = mlxc.compile(exported.mlir_module())
        dev = [jax.device_put(x) for x in args]
        ours = exe(*args)
        theirs = jax.block_until_ready(jitted(*dev))
        t_mlxc, t_jax = _time_alternating(
            [lambda: exe(*args), lambda: jax.block_until_ready(jitted(*dev))], rounds, batch_s)
    return dict(op=op, n=n, dtype=dtype, mlxc_s=t_mlxc, jax_s=t_jax, ratio=t_mlxc / t_jax,
                mlxc_err=_error(op, args, ours), jax_err=_error(op, args, theirs))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1,
                   help="threads for both (OPENBLAS_NUM_THREADS, MLXC_THREADS); the kernels use one")
    p.add_argument("--ops", nargs="+", default=list(_ops()))
    p.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    p.add_argument("--dtypes", nargs="+", default=["f32", "f64"], choices=["f32", "f64"])
    p.add_argument("--batch", type=int, default=1, help="matrices per call (a leading batch dim)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-ms", type=float, default=100)
    a = p.parse_args(argv)
    want = str(a.threads)
    if os.environ.get("OPENBLAS_NUM_THREADS") != want or os.environ.get("MLXC_THREADS") != want:
        # OpenBLAS reads its thread count once, when it is loaded: a fresh process.
        env = dict(os.environ, OPENBLAS_NUM_THREADS=want, OMP_NUM_THREADS=want, MLXC_THREADS=want)
        return subprocess.run([sys.executable, os.path.abspath(__file__), *(argv or sys.argv[1:])],
                              env=env, check=False).returncode
    print(f"jnp.linalg, mlxc vs jax.jit, batch {a.batch}, {a.threads} thread(s), on {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; err in eps * n")
    head = f"{'op':>9} {'n':>5} {'dtype':>5} {'mlxc':>11} {'jax':>11} {'ratio':>6} {'err mlxc':>9} {'jax':>6}"
    print(head)
    print("-" * len(head))
    for op in a.ops:
        for dtype in a.dtypes:
            for n in a.sizes:
                r = measure(op, n, dtype, a.batch, a.rounds, a.batch_ms / 1e3)
                print(f"{op:>9} {n:>5} {dtype:>5} {r['mlxc_s'] * 1e3:>8.3f} ms {r['jax_s'] * 1e3:>8.3f} ms "
                      f"{r['ratio']:>6.2f} {r['mlxc_err']:>9.2f} {r['jax_err']:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
