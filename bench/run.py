"""mlxc against jax.jit (XLA CPU) on the programs of bench/programs.py.

    python bench/run.py                     # every program
    python bench/run.py -k conv -k mlp      # programs whose name contains one of these
    python bench/run.py --json out.json     # also write the rows as JSON
    python bench/run.py --set unseen        # the programs of bench/unseen.py (--set all: both)
    python bench/run.py --blas              # only 1024^3 f32 matmul vs numpy's OpenBLAS, 1 and 2 threads

For each program, in one process: cold compile time of both, a check that the results
agree, then run time with the two calls interleaved batch by batch, and temporary
memory; bench/timing.py says how each is measured. Whole models: bench/models.py;
single ops over random shapes: bench/sweep.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from programs import BENCHES  # noqa: E402
from timing import compare, error_text, fmt_bytes, fmt_time, geomean, warm_up  # noqa: E402
from unseen import UNSEEN  # noqa: E402

SETS = {"default": BENCHES, "unseen": UNSEEN, "all": BENCHES + UNSEEN}


def run_one(b, rounds: int, budget_s: float) -> dict:
    args = b.make_inputs(np.random.default_rng(0))
    row = dict(name=b.name, kind=b.kind, **compare(b.fn, args, rounds, budget_s))
    if b.flops:
        row["mlxc_gflops"] = b.flops / row["mlxc_s"] / 1e9
        row["xla_gflops"] = b.flops / row["xla_s"] / 1e9
    return row


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
        print(f"{r['name']:<18} {fmt_time(r['mlxc_s']):>10} {fmt_time(r['xla_s']):>10} "
              f"{r['ratio']:6.2f}  {gf:>13}  {fmt_time(r['mlxc_compile_s']):>12} "
              f"{fmt_time(r['xla_compile_s']):>9}  {fmt_bytes(r['mlxc_temp_bytes']):>10} "
              f"{fmt_bytes(r['xla_temp_bytes']):>10}  {r['rel_err']:7.1e}")
    ok = [r for r in rows if "error" not in r]
    if ok:
        print("-" * len(head))
        print(f"geomean run-time ratio mlxc/XLA: {geomean([r['ratio'] for r in ok]):.2f}   "
              f"worst: {max(r['ratio'] for r in ok):.2f} ({max(ok, key=lambda r: r['ratio'])['name']})")
        print(f"geomean cold compile: mlxc {fmt_time(geomean([r['mlxc_compile_s'] for r in ok]))}, "
              f"XLA {fmt_time(geomean([r['xla_compile_s'] for r in ok]))}, ratio "
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
            rows.append(dict(name=b.name, error=error_text(e)))
        print(f"  done {b.name}", file=sys.stderr, flush=True)
    print_table(rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
