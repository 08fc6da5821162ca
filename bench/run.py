"""mlxc against jax.jit (XLA CPU) on the programs of bench/programs.py.

    python bench/run.py                     # every program
    python bench/run.py -k conv -k mlp      # programs whose name contains one of these
    python bench/run.py --json out.json     # also write the rows as JSON
    python bench/run.py --set unseen        # the programs of bench/unseen.py (--set all: both)
    python bench/run.py --blas              # only 1024^3 f32 matmul vs numpy's OpenBLAS, 1 and 2 threads

For each program, in one process: cold compile time of both (mlxc from the
jax.export text, XLA from the lowered module: tracing excluded for both), a check
that the results agree, then run time with the two calls interleaved batch by
batch so that load from other processes hits both alike. Run time is the best
batch mean (the least disturbed); ratio = mlxc / XLA, below 1 means mlxc is faster.
Temporary memory: XLA's compiled.memory_analysis().temp_size_in_bytes and mlxc's
exe.memory_stats()["temp_bytes"] (peak bytes of temporaries live at once).

XLA gets device arrays (no host-to-device copy per call) and mlxc numpy arrays,
as users call each.

Cold compile is that of the program, not of the process: before the first program,
both compilers compile a tiny unrelated program (`warm_up`), so the first program is
not charged with what any first compile pays once per process (for mlxc: importing
the compiler and its passes, making the thread's MLIR context; for XLA: initialising
its CPU compiler). Neither compiler has seen the timed program: the compile cache is
off for mlxc, and XLA compiles each program once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mlxc  # noqa: E402
from programs import BENCHES  # noqa: E402
from unseen import UNSEEN  # noqa: E402

# Before each timed batch: XLA's Eigen pool (and OpenBLAS's) keeps its threads spinning
# for a while after a call, and on two cores they would take a core from the next
# batch of the other compiler's threads.
PAUSE_S = 0.05

SETS = {"default": BENCHES, "unseen": UNSEEN, "all": BENCHES + UNSEEN}


def _flat(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _max_rel_err(got, want) -> float:
    got = got if isinstance(got, tuple) else (got,)
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        den = max(np.linalg.norm(w), 1e-30)
        worst = max(worst, float(np.linalg.norm(g - w) / den))
    return worst


def _batch_size(call, budget_s: float) -> int:
    call()
    t = time.perf_counter()
    call()
    one = max(time.perf_counter() - t, 1e-7)
    return max(1, min(100000, int(budget_s / one)))


def _time_interleaved(calls, rounds: int, budget_s: float) -> list[float]:
    sizes = [_batch_size(c, budget_s) for c in calls]
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for i, (call, n) in enumerate(zip(calls, sizes)):
            time.sleep(PAUSE_S)
            t = time.perf_counter()
            for _ in range(n):
                call()
            best[i] = min(best[i], (time.perf_counter() - t) / n)
    return best


def _fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def _fmt_bytes(n) -> str:
    if n is None:
        return "?"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _no_cache() -> dict:
    return {"cache": False} if "cache" in mlxc.settings.SETTINGS else {}


def warm_up() -> None:
    """One compile of a tiny program by each compiler (see the module docstring)."""
    x = np.zeros(8, np.float32)

    def fn(v):
        return v * 2.0 + 1.0

    jax.jit(fn).lower(x).compile()
    with mlxc.settings.override(**_no_cache()):
        mlxc.compile(jax.export.export(jax.jit(fn))(x).mlir_module())


def run_one(b, rounds: int, budget_s: float) -> dict:
    rng = np.random.default_rng(0)
    args = b.make_inputs(rng)
    jitted = jax.jit(b.fn)
    lowered = jitted.lower(*args)
    t = time.perf_counter()
    compiled = lowered.compile()
    xla_compile = time.perf_counter() - t
    mem = compiled.memory_analysis()
    xla_temp = getattr(mem, "temp_size_in_bytes", None) if mem is not None else None

    text = jax.export.export(jax.jit(b.fn))(*args).mlir_module()
    # Cold compile: no reuse of a program compiled by an earlier run.
    with mlxc.settings.override(**_no_cache()):
        t = time.perf_counter()
        exe = mlxc.compile(text)
        mlxc_compile = time.perf_counter() - t
    mlxc_temp = exe.memory_stats().get("temp_bytes")

    dev_args = [jax.device_put(a) for a in args]
    want = _flat(compiled(*dev_args))
    err = _max_rel_err(exe(*args), want)

    def run_xla():
        jax.block_until_ready(compiled(*dev_args))

    def run_mlxc():
        exe(*args)

    t_mlxc, t_xla = _time_interleaved([run_mlxc, run_xla], rounds, budget_s)
    row = dict(name=b.name, kind=b.kind, mlxc_s=t_mlxc, xla_s=t_xla, ratio=t_mlxc / t_xla,
               mlxc_compile_s=mlxc_compile, xla_compile_s=xla_compile,
               mlxc_temp_bytes=mlxc_temp, xla_temp_bytes=xla_temp, rel_err=err)
    if b.flops:
        row["mlxc_gflops"] = b.flops / t_mlxc / 1e9
        row["xla_gflops"] = b.flops / t_xla / 1e9
    return row


def geomean(values) -> float:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def print_table(rows: list[dict]) -> None:
    head = (f"{'program':<18} {'mlxc':>10} {'XLA':>10} {'ratio':>6}  {'GFLOP/s m/x':>13}  "
            f"{'compile mlxc':>12} {'XLA':>9}  {'temp mlxc':>10} {'XLA':>10}  {'err':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<18} FAILED: {r['error']}")
            continue
        gf = (f"{r['mlxc_gflops']:5.1f}/{r['xla_gflops']:5.1f}" if "mlxc_gflops" in r else "")
        print(f"{r['name']:<18} {_fmt_time(r['mlxc_s']):>10} {_fmt_time(r['xla_s']):>10} "
              f"{r['ratio']:6.2f}  {gf:>13}  {_fmt_time(r['mlxc_compile_s']):>12} "
              f"{_fmt_time(r['xla_compile_s']):>9}  {_fmt_bytes(r['mlxc_temp_bytes']):>10} "
              f"{_fmt_bytes(r['xla_temp_bytes']):>10}  {r['rel_err']:7.1e}")
    ok = [r for r in rows if "error" not in r]
    if ok:
        print("-" * len(head))
        print(f"geomean run-time ratio mlxc/XLA: {geomean([r['ratio'] for r in ok]):.2f}   "
              f"worst: {max(r['ratio'] for r in ok):.2f} ({max(ok, key=lambda r: r['ratio'])['name']})")
        print(f"geomean cold compile: mlxc {_fmt_time(geomean([r['mlxc_compile_s'] for r in ok]))}, "
              f"XLA {_fmt_time(geomean([r['xla_compile_s'] for r in ok]))}, ratio "
              f"{geomean([r['mlxc_compile_s'] / r['xla_compile_s'] for r in ok]):.2f}")
        # XLA's 0 B is a real figure (conv_nhwc needs no temporary there), not a missing one.
        mem = [r for r in ok if r["mlxc_temp_bytes"] is not None and r["xla_temp_bytes"] is not None]
        worse = [r["name"] for r in mem if r["mlxc_temp_bytes"] > r["xla_temp_bytes"]]
        print(f"temp memory above XLA's: {', '.join(worse) if worse else 'none'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-k", action="append", default=[], help="run programs whose name contains this")
    p.add_argument("--rounds", type=int, default=7, help="interleaved batches per program")
    p.add_argument("--batch-ms", type=float, default=30.0, help="wall time of one batch")
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--set", choices=sorted(SETS), default="default",
                   help="program set: default (bench/programs.py), unseen (bench/unseen.py), all")
    p.add_argument("--blas", action="store_true",
                   help="only compare 1024^3 f32 matmul with numpy's OpenBLAS on 1 and 2 threads")
    a = p.parse_args(argv)
    if a.blas:
        import blas
        return blas.main(rounds=a.rounds, batch_s=a.batch_ms / 1e3)
    known = SETS[a.set]
    benches = [b for b in known if not a.k or any(k in b.name for k in a.k)]
    if not benches:
        p.error(f"no program matches {a.k}; known: {', '.join(b.name for b in known)}")
    print(f"mlxc vs jax.jit {jax.__version__} on {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}\n")
    warm_up()
    rows = []
    for b in benches:
        try:
            rows.append(run_one(b, a.rounds, a.batch_ms / 1e3))
        except Exception as e:  # a failing program is reported in the table, not fatal
            rows.append(dict(name=b.name, error=f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"))
        print(f"  done {b.name}", file=sys.stderr, flush=True)
    print_table(rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
