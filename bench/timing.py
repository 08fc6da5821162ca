"""Timing and comparison helpers shared by the benchmarks (run.py, models.py, sweep.py).

`compare(fn, args)` is one benchmark row: cold compile time of both compilers (mlxc
from the jax.export text, XLA from the lowered module: tracing excluded for both), the
largest relative error of mlxc's results against XLA's and a verdict (`check`), then
run time with the two calls interleaved batch by batch so that load from other
processes hits both alike.
Run time is the best batch mean (the least disturbed); ratio = mlxc / XLA, below 1
means mlxc is faster. Temporary memory: XLA's compiled.memory_analysis().temp_size_in_bytes
and mlxc's exe.memory_stats()["temp_bytes"] (peak bytes of temporaries live at once).

`args` may hold pytrees (a parameter dict, an optimizer state): XLA is called with them
as jax.jit is, mlxc with their leaves in `jax.tree.leaves` order, as the exported
program takes them. XLA gets device arrays (no host-to-device copy per call) and mlxc
numpy arrays, as users call each.

Cold compile is that of the program, not of the process: before the first program,
both compilers compile a tiny unrelated program (`warm_up`), so the first program is
not charged with what any first compile pays once per process (for mlxc: importing
the compiler and its passes, making the thread's MLIR context; for XLA: initialising
its CPU compiler). Neither compiler has seen the timed program: the compile cache is
off for mlxc, and XLA compiles each program once.
"""

from __future__ import annotations

import json
import math
import time

import jax
import numpy as np

import mlxc

# Before each timed batch: XLA's Eigen pool (and OpenBLAS's) keeps its threads spinning
# for a while after a call, and on two cores they would take a core from the next
# batch of the other compiler's threads.
PAUSE_S = 0.05


def flat(tree) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


# mlxc's results agree with XLA's below this norm-wise relative error (per result).
TOLERANCE = 1e-4


def rel_errs(got, want) -> list[float]:
    """Norm-wise relative error of each result; NaN where they disagree on NaNs or
    shapes, so that a wrong answer can never read as a small one."""
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != len(want):
        return [math.nan]
    errs = []
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape or not np.array_equal(np.isnan(g), np.isnan(w)):
            errs.append(math.nan)
            continue
        ok = ~np.isnan(w)
        den = max(np.linalg.norm(w[ok]), 1e-30)
        errs.append(float(np.linalg.norm(g[ok] - w[ok]) / den))
    return errs


def max_rel_err(got, want) -> float:
    errs = rel_errs(got, want)
    return math.nan if any(map(math.isnan, errs)) else max(errs, default=0.0)


def check(fn, args, got, want) -> str:
    """'ok' when mlxc's results are within TOLERANCE of XLA's. Otherwise both are compared
    with fn run in float64 (float32 arguments widened): 'noisy' when XLA is about as far
    from it on every result where mlxc is (an ill-conditioned result, such as the Adam
    update of a gradient that is only rounding noise: the key bias of attention), else
    'WRONG'."""
    errs = rel_errs(got, want)
    if not any(math.isnan(e) or e > TOLERANCE for e in errs):
        return "ok"
    if any(map(math.isnan, errs)):
        return "WRONG"
    wide = jax.tree.map(lambda a: np.asarray(a, np.float64) if np.asarray(a).dtype == np.float32
                        else a, args)
    try:
        with jax.enable_x64(True):
            exact = flat(jax.jit(fn)(*wide))
    except Exception:  # fn cannot run in float64 (a scan carry typed float32): unverified
        return "WRONG?"
    if len(exact) != len(want):
        return "WRONG?"
    pairs = zip(rel_errs(got, exact), rel_errs(tuple(want), exact))
    far = [m > 4 * x + TOLERANCE for m, x in pairs]
    return "WRONG" if any(far) else "noisy"


def batch_size(call, budget_s: float) -> int:
    call()
    t = time.perf_counter()
    call()
    one = max(time.perf_counter() - t, 1e-7)
    return max(1, min(100000, int(budget_s / one)))


def time_interleaved(calls, rounds: int, budget_s: float) -> list[float]:
    sizes = [batch_size(c, budget_s) for c in calls]
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for i, (call, n) in enumerate(zip(calls, sizes)):
            time.sleep(PAUSE_S)
            t = time.perf_counter()
            for _ in range(n):
                call()
            best[i] = min(best[i], (time.perf_counter() - t) / n)
    return best


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def fmt_bytes(n) -> str:
    if n is None:
        return "?"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def no_cache() -> dict:
    return {"cache": False} if "cache" in mlxc.settings.SETTINGS else {}


def warm_up() -> None:
    """One compile of a tiny program by each compiler (see the module docstring)."""
    x = np.zeros(8, np.float32)

    def fn(v):
        return v * 2.0 + 1.0

    jax.jit(fn).lower(x).compile()
    with mlxc.settings.override(**no_cache()):
        mlxc.compile(jax.export.export(jax.jit(fn))(x).mlir_module())


def compare(fn, args, rounds: int, budget_s: float) -> dict:
    """One row: compile times, temporaries, error and run times of mlxc and XLA on fn(*args)."""
    jitted = jax.jit(fn, keep_unused=True)
    lowered = jitted.lower(*args)
    t = time.perf_counter()
    compiled = lowered.compile()
    xla_compile = time.perf_counter() - t
    mem = compiled.memory_analysis()
    xla_temp = getattr(mem, "temp_size_in_bytes", None) if mem is not None else None

    text = jax.export.export(jitted)(*args).mlir_module()
    # Cold compile: no reuse of a program compiled by an earlier run.
    with mlxc.settings.override(**no_cache()):
        t = time.perf_counter()
        exe = mlxc.compile(text)
        mlxc_compile = time.perf_counter() - t
    mlxc_temp = exe.memory_stats().get("temp_bytes")

    leaves = flat(args)
    dev_args = jax.device_put(args)
    want = flat(compiled(*dev_args))
    got = exe(*leaves)
    err, verdict = max_rel_err(got, want), check(fn, args, got, want)

    def run_xla():
        jax.block_until_ready(compiled(*dev_args))

    def run_mlxc():
        exe(*leaves)

    t_mlxc, t_xla = time_interleaved([run_mlxc, run_xla], rounds, budget_s)
    return dict(mlxc_s=t_mlxc, xla_s=t_xla, ratio=t_mlxc / t_xla,
                mlxc_compile_s=mlxc_compile, xla_compile_s=xla_compile,
                compile_ratio=mlxc_compile / xla_compile,
                mlxc_temp_bytes=mlxc_temp, xla_temp_bytes=xla_temp, rel_err=err,
                check=verdict)


def geomean(values) -> float:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def error_text(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:150] if lines else ''}"


def finish(rows: list[dict], json_path=None) -> int:
    """Write the rows as JSON when asked; the exit status: 1 if a row failed or is WRONG."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all("error" not in r and not r["check"].startswith("WRONG") for r in rows) else 1
