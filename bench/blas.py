"""1024^3 f32 matmul: mlxc against numpy's bundled OpenBLAS, on 1 and on 2 threads.

    python bench/run.py --blas
    python bench/blas.py [--threads 1 2]

OpenBLAS reads OPENBLAS_NUM_THREADS once, when numpy loads it, so each thread
count runs in its own process with OPENBLAS_NUM_THREADS and MLXC_THREADS set
before anything is imported. In that process the two calls are timed in alternating
batches so that other load hits both alike, with a pause before each batch: OpenBLAS's
threads keep spinning for a while after a call (and so may a pool's), and on two cores
the spinning threads of one library would slow the other's batch. The figure is the
best batch mean. ratio = mlxc GFLOP/s / OpenBLAS GFLOP/s, above 1
means mlxc is faster. Both write a fresh result array per call (numpy's `a @ b`,
mlxc's returned array), neither is given an output buffer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

N = 1024
FLOPS = 2 * N ** 3


def _matmul_text(n: int) -> str:
    return (f"func.func @main(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) "
            f"-> tensor<{n}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] "
            f": (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>\n"
            f"  return %0 : tensor<{n}x{n}xf32>\n}}\n")


def _worker(threads: int, rounds: int, batch_s: float) -> dict:
    # Imported here: the environment of this process already holds the thread counts.
    import numpy as np

    import mlxc

    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype(np.float32)
    b = rng.standard_normal((N, N)).astype(np.float32)
    overrides = {"threads": threads}
    if "cache" in mlxc.settings.SETTINGS:
        overrides["cache"] = False
    with mlxc.settings.override(**overrides):
        exe = mlxc.compile(_matmul_text(N))
    want = a.astype(np.float64) @ b.astype(np.float64)
    err = {name: float(np.linalg.norm(got - want) / np.linalg.norm(want))
           for name, got in (("mlxc", exe(a, b)), ("blas", a @ b))}
    t_mlxc, t_blas = _time_alternating([lambda: exe(a, b), lambda: a @ b], rounds, batch_s)
    return dict(threads=threads, mlxc_s=t_mlxc, blas_s=t_blas,
                mlxc_gflops=FLOPS / t_mlxc / 1e9, blas_gflops=FLOPS / t_blas / 1e9,
                ratio=t_blas / t_mlxc, mlxc_err=err["mlxc"], blas_err=err["blas"],
                blas_config=_blas_name(np), blas_threads=_blas_threads(np))


def _time_alternating(calls, rounds: int, batch_s: float, pause_s: float = 0.3) -> list[float]:
    import time

    from timing import batch_size

    sizes = [batch_size(c, batch_s) for c in calls]
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, (call, n) in enumerate(zip(calls, sizes)):
            time.sleep(pause_s)  # let the other library's threads go idle
            call()
            t = time.perf_counter()
            for _ in range(n):
                call()
            best[i] = min(best[i], (time.perf_counter() - t) / n)
    return best


def _blas_threads(np) -> int:
    """The thread count numpy's OpenBLAS really uses (0 when it cannot be asked), so
    that the table shows OPENBLAS_NUM_THREADS took effect."""
    import ctypes
    import glob

    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                                  "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                     "openblas_get_num_threads"):
            if hasattr(lib, name):
                return int(getattr(lib, name)())
    return 0


def _blas_name(np) -> str:
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{cfg.get('name')} {cfg.get('version')}"
    except Exception:  # older numpy: no dict mode; the name is only informative
        return "numpy's BLAS"


def run_threads(threads: int, rounds: int, batch_s: float) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), MLXC_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(threads),
           "--rounds", str(rounds), "--batch-ms", str(batch_s * 1e3)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{threads}-thread run failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_rows(rows: list[dict]) -> None:
    print(f"{N}x{N}x{N} f32 matmul, mlxc vs numpy ({rows[0]['blas_config']}) on "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    head = (f"{'threads':>7} {'mlxc':>10} {'OpenBLAS':>10} {'GFLOP/s mlxc':>13} "
            f"{'OpenBLAS':>9} {'mlxc/BLAS':>10} {'err mlxc':>9} {'BLAS':>8}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['threads']:>7} {r['mlxc_s'] * 1e3:>7.2f} ms {r['blas_s'] * 1e3:>7.2f} ms "
              f"{r['mlxc_gflops']:>13.1f} {r['blas_gflops']:>9.1f} {r['ratio']:>9.0%} "
              f"{r['mlxc_err']:>9.1e} {r['blas_err']:>8.1e}")
        if r["blas_threads"] and r["blas_threads"] != r["threads"]:
            print(f"        (OpenBLAS ran {r['blas_threads']} threads, not {r['threads']})")


def main(argv=None, rounds: int = 7, batch_s: float = 0.3, threads=(1, 2)) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=list(threads))
    p.add_argument("--rounds", type=int, default=rounds)
    p.add_argument("--batch-ms", type=float, default=batch_s * 1e3)
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    a = p.parse_args([] if argv is None and __name__ != "__main__" else argv)
    if a.worker:
        print(json.dumps(_worker(a.worker, a.rounds, a.batch_ms / 1e3)))
        return 0
    print_rows([run_threads(t, a.rounds, a.batch_ms / 1e3) for t in a.threads])
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
